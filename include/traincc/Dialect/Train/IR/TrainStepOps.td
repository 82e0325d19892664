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

//===----------------------------------------------------------------------===//
// Explicit BatchNorm
//===----------------------------------------------------------------------===//

def Train_BNStatsOp : Train_ComputeOp<"bn_stats", [Train_Differentiable]> {
  let summary = "per-channel mean and biased variance of a micro-batch";
  let description = [{
    Statistics over every axis but the channel axis (1), as BatchNorm uses
    them to normalise in training mode.

    ```mlir
    %mean, %var = train.bn_stats %x : (tensor<8x16x4x4xf32>) -> (tensor<16xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let results = (outs Train_FloatTensor:$mean, Train_FloatTensor:$variance);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Train_BNApplyOp : Train_Op<"bn_apply", [Train_Differentiable, Pure,
    AllTypesMatch<["input", "result"]>,
    AllTypesMatch<["mean", "variance", "scale", "bias"]>]> {
  let summary = "normalises with given statistics, then scales and shifts";
  let description = [{
    `scale * (x - mean) / sqrt(variance + epsilon) + bias` per channel: batch
    statistics in training, running statistics in evaluation.

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
    [AllTypesMatch<["mean", "variance"]>]> {
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
  }];
  let arguments = (ins FlatSymbolRefAttr:$running_mean,
                       FlatSymbolRefAttr:$running_var,
                       Train_FloatTensor:$mean, Train_FloatTensor:$variance,
                       Optional<0DTensorOf<[F16, BF16, F32, F64]>>:$batches,
                       F32Attr:$momentum, I64Attr:$count);
  let assemblyFormat = [{
    $running_mean `,` $running_var `,` $mean `,` $variance `momentum` $momentum
    `count` $count (`batches` $batches^)? attr-dict `:` type($mean)
    (`,` type($batches)^)?
  }];
  let hasVerifier = 1;
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
    ```mlir
    train.assign @"bn.mean_sum", %zero : tensor<16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$buffer, Train_Tensor:$value);
  let assemblyFormat = "$buffer `,` $value attr-dict `:` type($value)";
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
    accumulated gradient; does not clear it.

    ```mlir
    train.sgd_update @w, @"w.grad", @"w.momentum" lr %lr step %step
        {momentum = 9.0e-01 : f32}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, FlatSymbolRefAttr:$grad,
                       OptionalAttr<FlatSymbolRefAttr>:$momentum_buffer,
                       F32:$lr, I64:$step,
                       DefaultValuedAttr<F32Attr, "0.0f">:$momentum,
                       DefaultValuedAttr<F32Attr, "0.0f">:$dampening,
                       DefaultValuedAttr<BoolAttr, "false">:$nesterov,
                       DefaultValuedAttr<F32Attr, "0.0f">:$weight_decay);
  let assemblyFormat = [{
    $param `,` $grad (`,` $momentum_buffer^)? `lr` $lr `step` $step attr-dict
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

    ```mlir
    train.adam_update @w, @"w.grad", @"w.exp_avg", @"w.exp_avg_sq" lr %lr
        step %step {beta1 = 9.0e-01 : f32, beta2 = 9.99e-01 : f32,
        epsilon = 1.0e-08 : f32}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, FlatSymbolRefAttr:$grad,
                       FlatSymbolRefAttr:$exp_avg,
                       FlatSymbolRefAttr:$exp_avg_sq, F32:$lr, I64:$step,
                       DefaultValuedAttr<F32Attr, "0.9f">:$beta1,
                       DefaultValuedAttr<F32Attr, "0.999f">:$beta2,
                       DefaultValuedAttr<F32Attr, "1e-8f">:$epsilon,
                       DefaultValuedAttr<F32Attr, "0.0f">:$weight_decay,
                       DefaultValuedAttr<BoolAttr, "false">:$decoupled);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `lr` $lr `step` $step
    attr-dict
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
