//===- TrainStepOps.td - training-step structure -----------*- tablegen -*-===//
//
// The ops that make a training step explicit: BatchNorm split into batch
// statistics, normalisation and running-statistics updates; gradient
// accumulation into persistent buffers; optimizer updates; dropout masks.
// Ops that change persistent state name their `train.param` buffers by
// symbol and carry memory effects, so no pass reorders or removes them.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_DIALECT_TRAIN_IR_TRAINSTEPOPS_TD
#define TRAINCC_DIALECT_TRAIN_IR_TRAINSTEPOPS_TD

// An op that reads and writes the `train.param` buffers it names.
class Train_StateOp<string mnemonic, list<Trait> traits = []>
    : Train_Op<mnemonic, !listconcat(traits, [
          DeclareOpInterfaceMethods<SymbolUserOpInterface>,
          MemoryEffects<[MemRead, MemWrite]>])>;

// A 0-d f32 flag: non-zero means "yes" (loss scaling's found_inf).
def Train_Flag : 0DTensorOf<[F32]>,
    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getF32Type())">;

//===----------------------------------------------------------------------===//
// Explicit BatchNorm
//===----------------------------------------------------------------------===//

def Train_BNStatsOp : Train_ComputeOp<"bn_stats", [Train_Differentiable]> {
  let summary = "per-channel mean and biased variance of a micro-batch";
  let description = [{
    Statistics over every axis but the channel axis (1), as BatchNorm uses
    them to normalise in training mode; f32 for an f16 or bf16 input.

    ```mlir
    %mean, %var = train.bn_stats %x : (tensor<8x16x4x4xf32>) -> (tensor<16xf32>, tensor<16xf32>)
    %mean, %var = train.bn_stats %x synchronized : (tensor<8x16x4x4xf32>) -> (tensor<16xf32>, tensor<16xf32>)
    ```

    `synchronized` (SyncBatchNorm, traincc-synchronize-batch-norm): the
    statistics of the global batch of all data-parallel replicas, each
    holding an equal slice: the mean is the replicas' mean of their slice
    means, the variance the replicas' mean of their slices' mean squared
    deviation from that global mean. Its lowering calls the trainer
    runtime between the two passes, so it is no single reduction and must
    not be fused into a producer's epilogue.
  }];
  let arguments = (ins Train_FloatTensor:$input, UnitAttr:$synchronized);
  let results = (outs Train_FloatTensor:$mean, Train_FloatTensor:$variance);
  let assemblyFormat = [{
    $input (`synchronized` $synchronized^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def Train_BNApplyOp : Train_Op<"bn_apply", [Train_Differentiable, Pure,
    AllTypesMatch<["input", "result"]>,
    AllTypesMatch<["mean", "variance", "scale", "bias"]>]> {
  let summary = "normalises with given statistics, then scales and shifts";
  let description = [{
    `scale * (x - mean) / sqrt(variance + epsilon) + bias` per channel: batch
    statistics in training, running statistics in evaluation. An f16 or
    bf16 input may take f32 statistics, scale and bias (mixed precision).

    ```mlir
    %y = train.bn_apply %x, %mean, %var, %scale, %bias epsilon 1.0e-05
        : tensor<8x16x4x4xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_FloatTensor:$mean,
                       Train_FloatTensor:$variance, Train_FloatTensor:$scale,
                       Train_FloatTensor:$bias, F32Attr:$epsilon);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $mean `,` $variance `,` $scale `,` $bias `epsilon` $epsilon
    attr-dict `:` type($input) `,` type($mean)
  }];
  let hasVerifier = 1;
}

def Train_BNRunningUpdateOp : Train_StateOp<"bn_running_update",
    [AllTypesMatch<["mean", "variance"]>, AttrSizedOperandSegments]> {
  let summary = "moves running statistics towards batch statistics";
  let description = [{
    `r = (1 - momentum) * r + momentum * stat`, PyTorch's convention; the
    running variance takes the unbiased variance, `variance * n / (n - 1)`,
    where n is the number of values per channel the statistics came from:
    `count`, times the 0-d `batches` operand when present (statistics pooled
    over that many micro-batches of `count` values each).

    ```mlir
    train.bn_running_update @"bn.running_mean", @"bn.running_var", %mean, %var
        momentum 1.0e-01 count 128 : tensor<16xf32>
    train.bn_running_update @"bn.running_mean", @"bn.running_var", %mean, %var
        momentum 1.0e-01 count 128 batches %k : tensor<16xf32>, tensor<f32>
    ```

    With `skip_if %found_inf` (loss scaling), nothing changes when the flag
    is non-zero.
  }];
  let arguments = (ins FlatSymbolRefAttr:$running_mean,
                       FlatSymbolRefAttr:$running_var,
                       Train_FloatTensor:$mean, Train_FloatTensor:$variance,
                       Optional<0DTensorOf<[F16, BF16, F32, F64]>>:$batches,
                       Optional<Train_Flag>:$skip_if,
                       F32Attr:$momentum, I64Attr:$count);
  let assemblyFormat = [{
    $running_mean `,` $running_var `,` $mean `,` $variance `momentum` $momentum
    `count` $count (`batches` $batches^)? (`skip_if` $skip_if^)? attr-dict
    `:` type($mean) (`,` type($batches)^)?
  }];
  let hasVerifier = 1;
}

def Train_ReplicaCountOp : Train_Op<"replica_count", [
    MemoryEffects<[MemRead]>]> {
  let summary = "how many data-parallel replicas synchronise BatchNorm";
  let description = [{
    The number of replicas whose statistics a `synchronized` `bn_stats`
    pools, known only when the trainer runs (1 when it runs alone or
    without `--sync-bn`): the running-variance update's count of values is
    the local count times this (traincc-synchronize-batch-norm).

    ```mlir
    %n = train.replica_count : tensor<f32>
    ```
  }];
  let results = (outs 0DTensorOf<[F32]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Persistent buffers
//===----------------------------------------------------------------------===//

def Train_AccumulateOp : Train_StateOp<"accumulate"> {
  let summary = "buffer += scale * value";
  let description = [{
    Gradient accumulation: each micro-batch adds its gradient, scaled by
    1/K for K micro-batches per optimizer step.

    ```mlir
    train.accumulate @"fc.weight.grad", %dw scale %s : tensor<10x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$buffer, Train_FloatTensor:$value,
                       F32:$scale);
  let assemblyFormat =
      "$buffer `,` $value `scale` $scale attr-dict `:` type($value)";
}

def Train_AssignOp : Train_StateOp<"assign"> {
  let summary = "buffer = value";
  let description = [{
    With `only_if %flag`, the buffer changes only when the flag is non-zero
    (loss scaling restores a backup this way on a skipped step).

    ```mlir
    train.assign @"bn.mean_sum", %zero : tensor<16xf32>
    train.assign @"bn.running_mean", %saved only_if %found_inf : tensor<16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$buffer, Train_Tensor:$value,
                       Optional<Train_Flag>:$only_if);
  let assemblyFormat =
      "$buffer `,` $value (`only_if` $only_if^)? attr-dict `:` type($value)";
}

def Train_ZeroOp : Train_StateOp<"zero"> {
  let summary = "buffer = 0";
  let description = [{
    ```mlir
    train.zero @"fc.weight.grad"
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$buffer);
  let assemblyFormat = "$buffer attr-dict";
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

def Train_SGDUpdateOp : Train_StateOp<"sgd_update"> {
  let summary = "torch.optim.SGD step for one parameter";
  let description = [{
    `g = grad + weight_decay * p`; with momentum, `buf = g` on step 1 and
    `buf = momentum * buf + (1 - dampening) * g` after, then `g = buf`
    (or `g + momentum * buf` with nesterov); `p -= lr * g`. Reads the
    accumulated gradient; does not clear it. With `weight_copy @c`, also
    writes the new p rounded to c's element type into c (mixed precision:
    the forward reads that copy). With `skip_if %found_inf`, nothing
    changes when the flag is non-zero (a step skipped by loss scaling).

    ```mlir
    train.sgd_update @w, @"w.grad", @"w.momentum" lr %lr step %step
        {momentum = 9.0e-01 : f32}
    train.sgd_update @w, @"w.grad" weight_copy @"w.bf16" lr %lr step %step
        skip_if %found_inf
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, FlatSymbolRefAttr:$grad,
                       OptionalAttr<FlatSymbolRefAttr>:$momentum_buffer,
                       OptionalAttr<FlatSymbolRefAttr>:$weight_copy,
                       F32:$lr, I64:$step, Optional<Train_Flag>:$skip_if,
                       DefaultValuedAttr<F32Attr, "0.0f">:$momentum,
                       DefaultValuedAttr<F32Attr, "0.0f">:$dampening,
                       DefaultValuedAttr<BoolAttr, "false">:$nesterov,
                       DefaultValuedAttr<F32Attr, "0.0f">:$weight_decay);
  let assemblyFormat = [{
    $param `,` $grad (`,` $momentum_buffer^)? (`weight_copy` $weight_copy^)?
    `lr` $lr `step` $step (`skip_if` $skip_if^)? attr-dict
  }];
  let hasVerifier = 1;
}

def Train_AdamUpdateOp : Train_StateOp<"adam_update"> {
  let summary = "torch.optim.Adam / AdamW step for one parameter";
  let description = [{
    Adam adds `weight_decay * p` to the gradient g; AdamW (`decoupled`)
    first multiplies p by `1 - lr * weight_decay` instead. Then, with
    t = `step` (from 1), `m = beta1 * m + (1 - beta1) * g`,
    `v = beta2 * v + (1 - beta2) * g * g` and
    `p -= lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + epsilon)`:
    as in PyTorch, epsilon is added to the bias-corrected square root.
    `weight_copy` and `skip_if` act as in `train.sgd_update`.

    ```mlir
    train.adam_update @w, @"w.grad", @"w.exp_avg", @"w.exp_avg_sq" lr %lr
        step %step {beta1 = 9.0e-01 : f32, beta2 = 9.99e-01 : f32,
        epsilon = 1.0e-08 : f32}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, FlatSymbolRefAttr:$grad,
                       FlatSymbolRefAttr:$exp_avg,
                       FlatSymbolRefAttr:$exp_avg_sq,
                       OptionalAttr<FlatSymbolRefAttr>:$weight_copy,
                       F32:$lr, I64:$step, Optional<Train_Flag>:$skip_if,
                       DefaultValuedAttr<F32Attr, "0.9f">:$beta1,
                       DefaultValuedAttr<F32Attr, "0.999f">:$beta2,
                       DefaultValuedAttr<F32Attr, "1e-8f">:$epsilon,
                       DefaultValuedAttr<F32Attr, "0.0f">:$weight_decay,
                       DefaultValuedAttr<BoolAttr, "false">:$decoupled);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq
    (`weight_copy` $weight_copy^)? `lr` $lr `step` $step
    (`skip_if` $skip_if^)? attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Loss scaling (PyTorch GradScaler)
//===----------------------------------------------------------------------===//

def Train_ScaleLossOp : Train_Op<"scale_loss", [Train_Differentiable, Pure]> {
  let summary = "the loss times the loss scale (and a factor)";
  let description = [{
    `loss * scale * factor`: the value the backward pass starts from under
    loss scaling. Gradients come out multiplied by `scale`, so that small
    ones survive f16. When `@loss` returns a `scale_loss`, autodiff seeds
    the backward pass at it, sets `factor` to micro_step's `grad_scale`
    (1/K: PyTorch's `scaler.scale(loss / K)`, so that the low-precision
    gradients are those of PyTorch's accumulation and overflow alike) and
    `@micro_step` reports the unscaled loss.

    ```mlir
    %scaled = train.scale_loss %loss, %scale : tensor<f32>
    %seed = train.scale_loss %one, %scale by %grad_scale : tensor<f32>
    ```
  }];
  let arguments = (ins Train_Flag:$loss, Train_Flag:$scale,
                       Optional<F32>:$factor);
  let results = (outs Train_Flag:$result);
  let assemblyFormat =
      "$loss `,` $scale (`by` $factor^)? attr-dict `:` type($loss)";
}

def Train_UnscaleCheckFiniteOp : Train_StateOp<"unscale_check_finite"> {
  let summary = "divides every gradient by the loss scale, flags inf/NaN";
  let description = [{
    Multiplies every `gradient` buffer of the module by `1 / scale` (the
    reciprocal taken in double and rounded to f32, as GradScaler does) and
    sets `found_inf` to 1 if any result is infinite or NaN, else to 0.

    ```mlir
    train.unscale_check_finite @"loss_scaler.scale", @"loss_scaler.found_inf"
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$scale, FlatSymbolRefAttr:$found_inf);
  let assemblyFormat = "$scale `,` $found_inf attr-dict";
}

def Train_UpdateLossScaleOp : Train_StateOp<"update_loss_scale"> {
  let summary = "GradScaler's scale update after an optimizer step";
  let description = [{
    If `found_inf` is set: `scale *= backoff`, `growth_tracker = 0`.
    Otherwise `growth_tracker += 1`, and when it reaches `interval`,
    `scale *= growth` (kept only if finite) and `growth_tracker = 0`.
    PyTorch's defaults are growth 2, backoff 0.5, interval 2000. A static
    loss scale is growth 1 and backoff 1: steps are still skipped.

    ```mlir
    train.update_loss_scale @"loss_scaler.scale", @"loss_scaler.growth_tracker",
        @"loss_scaler.found_inf" growth 2.0 backoff 5.0e-01 interval 2000
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$scale,
                       FlatSymbolRefAttr:$growth_tracker,
                       FlatSymbolRefAttr:$found_inf, F32Attr:$growth,
                       F32Attr:$backoff, I64Attr:$interval);
  let assemblyFormat = [{
    $scale `,` $growth_tracker `,` $found_inf `growth` $growth `backoff`
    $backoff `interval` $interval attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Randomness
//===----------------------------------------------------------------------===//

def Train_DropoutMaskOp : Train_Op<"dropout_mask", [Pure]> {
  let summary = "a counter-based random dropout mask";
  let description = [{
    Each element is 0 with probability `ratio`, else 1 / (1 - ratio). Bits
    come from a counter-based generator keyed by (`seed`, `stream`, element
    index), so the mask is a pure function of its operands: the backward
    pass uses the same value, and a run is reproducible from its seed.
    Each dropout of a model has its own `stream`.

    ```mlir
    %mask = train.dropout_mask %seed ratio 5.0e-01 stream 0 : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins I64:$seed, F32Attr:$ratio, I64Attr:$stream);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat =
      "$seed `ratio` $ratio `stream` $stream attr-dict `:` type($result)";
  let hasVerifier = 1;
}

#endif // TRAINCC_DIALECT_TRAIN_IR_TRAINSTEPOPS_TD
