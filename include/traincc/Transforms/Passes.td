//===- Passes.td - training-step construction passes -------*- tablegen -*-===//
//
// These passes turn an imported forward graph (`func.func @forward` plus
// `train.param` declarations) into the functions a trainer runs:
//
//   @micro_step(inputs..., target, grad_scale: f32, seed: i64) -> loss
//   @apply_step(lr: f32, step: i64)
//   @eval_step(inputs..., target) -> (outputs..., per-sample losses)
//
// in this order: freeze-params, append-loss, explicit-training-mode,
// (pool-before-relu; fold-bn-into-conv on @eval_step; both off under
// --no-fuse), insert-casts, loss-scaling, autodiff,
// build-optimizer, (synchronize-batch-norm under --sync-bn),
// (recompute-activations under --recompute)
// (traincc-training-pipeline runs them).
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_TRANSFORMS_PASSES_TD
#define TRAINCC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Training-step construction
//===----------------------------------------------------------------------===//

def FreezeParamsPass : Pass<"traincc-freeze-params", "mlir::ModuleOp"> {
  let summary = "Marks trainable parameters whose name matches a regex frozen";
  let description = [{
    `--freeze REGEX` of traincc: a frozen parameter gets no gradient and no
    optimizer update, and is exported unchanged. The regex is matched
    against the whole ONNX initializer name (POSIX extended syntax).
  }];
  let options = [
    Option<"pattern", "pattern", "std::string", /*default=*/"\"\"",
           "Regex of parameter names to freeze (empty: none)">
  ];
}

def AppendLossPass : Pass<"traincc-append-loss", "mlir::ModuleOp"> {
  let summary = "Builds the loss function and the evaluation step from @forward";
  let description = [{
    Replaces `@forward` by two functions:
    `@loss(inputs..., target) -> tensor<f32>`, the mean loss of a
    micro-batch (the function autodiff differentiates), and
    `@eval_step(inputs..., target) -> (outputs..., tensor<Nxf32>)`, the
    model's outputs and each sample's loss. The loss applies to the first
    output. `auto` picks `output` for a scalar output, `cross-entropy` for
    a [N, C] float output, and `mse` otherwise. Cross-entropy takes int64
    class labels [N]; mse takes a float target of the output's type;
    `output` uses the model's own scalar output and takes no target.
  }];
  let options = [
    Option<"loss", "loss", "::traincc::LossKind",
           /*default=*/"::traincc::LossKind::Auto",
           "auto, cross-entropy, mse or output",
           "::traincc::EnumClValues<::traincc::LossKind>()">
  ];
  let dependentDialects = ["::traincc::train::TrainDialect",
                           "::mlir::func::FuncDialect"];
}

def ExplicitTrainingModePass
    : Pass<"traincc-explicit-training-mode", "mlir::ModuleOp"> {
  let summary = "Makes BatchNorm and dropout explicit in training and evaluation";
  let description = [{
    In `@loss`: each `train.batch_norm` becomes `train.bn_stats` (batch
    statistics), `train.bn_apply` with them, and a running-statistics
    update; each `train.dropout` becomes a multiplication by a
    `train.dropout_mask` keyed by a new trailing `seed: i64` argument (one
    stream per dropout). In `@eval_step`: BatchNorm normalises with the
    running statistics and dropout disappears.

    `bn-stats=micro` (PyTorch) updates the running statistics once per
    micro-batch, in `@loss`. `bn-stats=step` instead accumulates each
    micro-batch's mean and mean of squares into `bn_accumulator` buffers
    and updates the running statistics once per optimizer step, in
    `@apply_step(lr: f32, step: i64)`, from the pooled statistics of all
    micro-batches: the statistics of the whole effective batch.

    The running variance takes the unbiased batch variance (PyTorch), or
    the biased one when the module has `train.bn_running_variance =
    "biased"` (set by the importer for Keras and Flax models: their
    BatchNorm, like the ONNX specification's, updates with the biased
    variance): the variance is scaled by (n - 1) / n before the update.
  }];
  let options = [
    Option<"bnStats", "bn-stats", "::traincc::BNStatsMode",
           /*default=*/"::traincc::BNStatsMode::Micro", "micro or step",
           "::traincc::EnumClValues<::traincc::BNStatsMode>()">
  ];
  // bn-stats=step scales its accumulations with an arith.constant.
  let dependentDialects = ["::traincc::train::TrainDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
}

//===----------------------------------------------------------------------===//
// Mixed precision
//===----------------------------------------------------------------------===//

def InsertCastsPass : Pass<"traincc-insert-casts", "mlir::ModuleOp"> {
  let summary = "Mixed precision: contractions in f16/bf16, BatchNorm and "
                "the loss in f32";
  let description = [{
    Runs on `@loss` and `@eval_step` before autodiff (whose cast gradients
    then put the backward pass in the same types). With
    `precision=bf16|fp16`, `L` the low type:
    - `train.conv`, `train.gemm`, `train.matmul` take `L` operands (their
      kernels accumulate in f32 and round once): so do their gradients;
    - `train.bn_stats` and `train.bn_apply` read an `L` input as it is and
      compute in f32 with f32 statistics, scale and bias; `bn_apply`'s
      result has the input's type (so do the gradients); softmax,
      log-softmax, `train.reduce_sum` and the losses compute in f32;
    - every other op (ReLU and the other activations, pooling, additions,
      data movement, dropout) computes in the type of its operands; where
      an `L` activation meets an f32 one, the f32 value is used unless the
      other is a parameter or constant, which is read in `L`;
    - a function's results keep their declared types.
    A parameter read in `L` becomes a read of its `weight_copy`
    (`<name>.bf16` or `<name>.f16`, declared here with the rounded initial
    value): the optimizer rewrites the copy once per step, so the f32
    master weight is not rounded on every micro-batch. Any other value gets
    a `train.cast`. The activations the backward pass keeps are then `L`
    tensors. `precision=fp32` changes nothing.
  }];
  let options = [
    Option<"precision", "precision", "::traincc::Precision",
           /*default=*/"::traincc::Precision::FP32", "fp32, fp16 or bf16",
           "::traincc::EnumClValues<::traincc::Precision>()">
  ];
  let dependentDialects = ["::traincc::train::TrainDialect"];
}

def LossScalingPass : Pass<"traincc-loss-scaling", "mlir::ModuleOp"> {
  let summary = "Dynamic loss scaling with skipped steps (PyTorch GradScaler)";
  let description = [{
    Runs on `@loss` before autodiff, and on `@apply_step` before the
    optimizer is built. Declares the scaler's state (`loss_scaler.scale`,
    `.growth_tracker`, `.found_inf`), returns the loss times the scale
    (`train.scale_loss`, so that autodiff's gradients come out scaled and
    the accumulators hold scaled sums), and begins `@apply_step` with
    `train.unscale_check_finite` (every gradient divided by the scale,
    found_inf set on inf/NaN), which build-optimizer's updates then obey
    (`skip_if`): a skipped step leaves parameters and optimizer state
    untouched. BatchNorm running statistics that `@loss` updates every
    micro-batch get a `step_backup`, restored on a skipped step; pooled
    (`bn-stats=step`) updates in `@apply_step` are skipped instead.
    `@apply_step` ends with `train.update_loss_scale`. The options are
    traincc's: `loss-scale=dynamic`, or a number for a fixed scale
    (growth and backoff 1: steps are still skipped), or `none`; unset, it
    is dynamic for `precision=fp16` and none otherwise. Loss scaling with
    `precision=fp32` is an error.
  }];
  let options = [
    Option<"precision", "precision", "::traincc::Precision",
           /*default=*/"::traincc::Precision::FP32", "fp32, fp16 or bf16",
           "::traincc::EnumClValues<::traincc::Precision>()">,
    Option<"lossScale", "loss-scale", "std::string", /*default=*/"\"\"",
           "dynamic, none or a fixed scale (default: by precision)">,
    Option<"initScale", "init-scale", "double", /*default=*/"65536.0",
           "Initial dynamic scale">,
    Option<"growth", "growth", "double", /*default=*/"2.0",
           "Growth factor after `interval` finite steps">,
    Option<"backoff", "backoff", "double", /*default=*/"0.5",
           "Backoff factor after a step with inf/NaN">,
    Option<"interval", "interval", "int64_t", /*default=*/"2000",
           "Finite steps between growths">
  ];
  let dependentDialects = ["::traincc::train::TrainDialect",
                           "::mlir::func::FuncDialect"];
}

def AutodiffPass : Pass<"traincc-autodiff", "mlir::ModuleOp"> {
  let summary = "Reverse-mode differentiation of @loss into @micro_step";
  let description = [{
    Differentiates the mean loss of `@loss` by every trainable parameter
    and emits `@micro_step(args of @loss..., grad_scale: f32) -> loss`
    (the `grad_scale` argument is placed before `seed` when there is one):
    the forward computation, then one gradient rule per op in reverse
    order, then `train.accumulate @"<param>.grad", grad scale grad_scale`
    for each parameter, declaring the `gradient` buffers. Only values that
    depend on a trainable parameter get gradients, so the first layer
    computes no input gradient. An op without a gradient rule on that path
    is an error naming it. A read of a `weight_copy` counts as a read of
    its master weight (its gradient is cast to the weight's type). When
    `@loss` returns a `train.scale_loss`, the backward pass starts there,
    scaled by `grad_scale` instead of the accumulation (PyTorch's
    `scaler.scale(loss / K)`), and `@micro_step` returns the unscaled loss.
  }];
  let dependentDialects = ["::traincc::train::TrainDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
}

def BuildOptimizerPass : Pass<"traincc-build-optimizer", "mlir::ModuleOp"> {
  let summary = "Emits @apply_step: one optimizer update per parameter";
  let description = [{
    For each trainable parameter with a gradient buffer: declares the
    optimizer state (SGD momentum buffer; Adam moments), emits
    `train.sgd_update` or `train.adam_update` (decoupled for adamw) into
    `@apply_step(lr: f32, step: i64)` (created unless an earlier pass made
    it), then clears the gradient. Weight decay applies to every parameter
    unless its name matches `no-decay`.
  }];
  let options = [
    Option<"optimizer", "optimizer", "::traincc::OptimizerKind",
           /*default=*/"::traincc::OptimizerKind::SGD", "sgd, adam or adamw",
           "::traincc::EnumClValues<::traincc::OptimizerKind>()">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0",
           "SGD momentum">,
    Option<"dampening", "dampening", "double", /*default=*/"0.0",
           "SGD dampening">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "SGD Nesterov momentum">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "Weight decay (L2 for sgd/adam, decoupled for adamw)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "Adam epsilon">,
    Option<"noDecay", "no-decay", "std::string", /*default=*/"\"\"",
           "Regex of parameter names exempt from weight decay">
  ];
  let dependentDialects = ["::traincc::train::TrainDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
}

//===----------------------------------------------------------------------===//
// Data parallelism
//===----------------------------------------------------------------------===//

def SynchronizeBatchNormPass
    : Pass<"traincc-synchronize-batch-norm", "mlir::ModuleOp"> {
  let summary = "Marks training-mode BatchNorm as synchronised over the "
                "data-parallel replicas (SyncBatchNorm)";
  let description = [{
    `traincc --sync-bn`: every `train.bn_stats` and
    `train.batch_norm_backward` of `@micro_step` becomes `synchronized`:
    the statistics are those of the global batch of all replicas, and the
    input gradient's per-channel sums are pooled likewise, as PyTorch's
    SyncBatchNorm computes them. Every `train.bn_running_update` counts
    the values of all replicas for its unbiased variance: its `batches`
    operand is multiplied by (or becomes) `train.replica_count`.

    Runs after autodiff, which creates the backward ops. The marker is an
    attribute so that later passes can see it: a synchronized reduction
    calls the trainer runtime halfway (ConvertTrainToLinalg), so it must
    not be fused into a convolution's epilogue. The replica count is only
    known when the trainer runs: alone, or without the trainer's
    `--sync-bn`, the runtime's answers make this the per-replica
    BatchNorm (DDP's).

    Refused for models whose running variance follows the biased
    convention (ExplicitTrainingMode cancels a correction whose count
    would then depend on the replicas).
  }];
  let dependentDialects = ["::traincc::train::TrainDialect"];
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

def RecomputeActivationsPass
    : Pass<"traincc-recompute-activations", "mlir::ModuleOp"> {
  let summary = "Recomputes cheap saved forward values in the backward pass";
  let description = [{
    In `@micro_step`: a forward value (one the returned loss depends on)
    that the backward pass reads is normally alive from the forward op
    that makes it to its last backward use, across the forward/backward
    boundary where the step's memory peaks. When it is the result of a
    cheap elementwise op (`train.bn_apply`, `relu` and the other unary
    ops, `add`/`sub`/`mul`/`div`/`maximum`/`minimum`, `cast`) whose
    operands the backward pass has anyway (step arguments, parameters,
    values it keeps, other recomputed values), the op is cloned right
    before the value's first backward use and the backward uses read the
    clone: the forward value dies with its last forward use.

      %y = train.bn_apply %x, ...     // %x is kept for batch_norm_backward
      %r = train.relu %y
      ...
      %g = train.relu_backward %d, %y

    becomes, with `%y2 = train.bn_apply %x, ... {train.recomputed}` placed
    just before the relu_backward, `train.relu_backward %d, %y2`.

    Values are chosen in forward order; a value whose recomputation would
    need more than `max-chain` ops (a residual stream rebuilt from far
    back) is kept instead, which makes it available to the values after
    it. Clones are marked `train.recomputed`, which the Train to linalg
    conversion keeps on the linalg ops so that CSE does not merge them
    back into the forward originals.
    traincc runs this pass with `--recompute`, and `--memory-budget` turns
    it on when it lets a larger micro-batch fit.
  }];
  let options = [
    Option<"maxChain", "max-chain", "int64_t", /*default=*/"4",
           "Most ops the recomputation of one value may need">
  ];
  let dependentDialects = ["::traincc::train::TrainDialect"];
}

//===----------------------------------------------------------------------===//
// Graph rewrites that move fewer bytes
//===----------------------------------------------------------------------===//

def PoolBeforeReluPass : Pass<"traincc-pool-before-relu", "mlir::ModuleOp"> {
  let summary = "Max-pools before the ReLU: relu(max_pool(x)) for "
                "max_pool(relu(x))";
  let description = [{
    In every function: a `train.max_pool` whose input is a `train.relu`
    that nothing else reads becomes the pooling of the ReLU's input
    followed by the ReLU, which then runs on the pooled tensor (a quarter
    of the elements for 2x2 windows). ReLU is monotonic, so every window's
    maximum is the same value either way (padding never wins in both). The
    gradients are the same too, and autodiff derives them from the new
    order: where the window's maximum is positive, the first position
    holding it wins in both orders (ReLU leaves positive values unchanged)
    and its mask is 1; where it is not, the original routes the gradient
    to a position whose ReLU mask is 0, and the new order masks it before
    routing. No value changes, not even by rounding.

    What it saves: BatchNorm (or any elementwise producer) then feeds the
    pooling directly, and the CPU fusion computes it inside the pooling's
    window pass instead of writing the normalised activation and reading
    it back; the backward pass masks the pooled gradient (read with the
    pooled output) instead of reading the full-size activation for the
    mask. Runs before autodiff, on the forward graph; `--no-fuse` leaves
    the order as the model wrote it. Other activations are left alone:
    sigmoid, tanh or a leaky ReLU can round two different inputs to one
    value and so change which position wins.

    ```mlir
    %r = train.relu %x : tensor<8x16x28x28xf32>
    %p = train.max_pool %r kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0]
        dilations [1, 1] : (tensor<8x16x28x28xf32>) -> tensor<8x16x14x14xf32>
    ```
    becomes
    ```mlir
    %m = train.max_pool %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0]
        dilations [1, 1] : (tensor<8x16x28x28xf32>) -> tensor<8x16x14x14xf32>
    %p = train.relu %m : tensor<8x16x14x14xf32>
    ```
  }];
  let dependentDialects = ["::traincc::train::TrainDialect"];
}

//===----------------------------------------------------------------------===//
// Inference folding
//===----------------------------------------------------------------------===//

def FoldBatchNormIntoConvPass
    : Pass<"traincc-fold-bn-into-conv", "mlir::ModuleOp"> {
  let summary = "Folds evaluation BatchNorm into the preceding convolution";
  let description = [{
    In `@eval_step` only: a `train.bn_apply` with the running statistics
    (mean m, variance v, scale g, bias beta, epsilon eps) whose input is a
    `train.conv` result used by nothing else becomes one convolution with
    per-output-channel folded weights and bias:

      W'[o, ...] = W[o, ...] * g[o] / sqrt(v[o] + eps)
      b'[o]      = (b[o] - m[o]) * g[o] / sqrt(v[o] + eps) + beta[o]

    (b = 0 for a convolution without bias). Output channel o of a grouped
    convolution reads only W[o], so groups fold alike. W' and b' are
    computed on the parameter tensors on every call (they change with
    training), with `train.bn_apply` itself on [1, M, ...] views: the
    dialect has no square root, and the result is the same rounding as the
    unfolded normalisation's per-channel factor. The folded output equals
    the unfolded one up to float rounding. `@micro_step` and `@loss` are
    untouched: training normalises with batch statistics. A BatchNorm
    whose element type differs from the convolution's stays.
  }];
  let dependentDialects = ["::traincc::train::TrainDialect"];
}

#endif // TRAINCC_TRANSFORMS_PASSES_TD
