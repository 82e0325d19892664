//===- Passes.td - state, step signatures, fusion ----------*- tablegen -*-===//

#ifndef TRAINCC_CODEGEN_COMMON_PASSES_TD
#define TRAINCC_CODEGEN_COMMON_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowerStatePass : Pass<"traincc-lower-state", "mlir::ModuleOp"> {
  let summary = "Turns parameter reads and state updates into function "
                "arguments and results";
  let description = [{
    Runs after the compute ops are linalg. Every function that touches
    `train.param` state gets one leading tensor argument per parameter it
    uses (argument attribute `train.state` names it), in first-use order.
    `train.read_param` becomes that argument (or the value last written to
    it); each update (`accumulate`, `assign`, `zero`, `bn_running_update`,
    `sgd_update`, `adam_update`, `unscale_check_finite`,
    `update_loss_scale`) becomes a `linalg` op whose destination is
    the parameter's current value, and the final value of every written
    parameter is returned (result attribute `train.state`). One-shot
    bufferization with function-boundary bufferization then updates the
    argument buffers in place, and `drop-equivalent-buffer-results` removes
    those results: the step functions read and write the trainer's state
    arena directly.

    Optimizer arithmetic follows PyTorch: SGD's momentum buffer starts as
    the first step's gradient; Adam's bias corrections are computed in
    double precision from the step count, like PyTorch's Python floats.

    Loss scaling, as GradScaler: `unscale_check_finite` multiplies every
    `gradient` parameter by `1 / scale` (the reciprocal in f64, rounded to
    f32), one generic each, and sums non-finite indicators of all of them
    into `found_inf`, clamped to 1; `update_loss_scale` is one 0-d generic.
    A `skip_if` flag (`sgd_update`, `adam_update`, `bn_running_update`) or
    `only_if` flag (`assign`) is a 0-d operand of the update's generic that
    selects the old values per element: skipping is data, not control flow,
    so a GPU step stays one fixed launch sequence. A `weight_copy` is one
    more output of the optimizer's generic, the new parameter rounded to
    the copy's type.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def DropStateResultsPass : Pass<"traincc-drop-state-results", "mlir::ModuleOp"> {
  let summary = "Removes the state results that bufferization updated in place";
  let description = [{
    After one-shot bufferization, a step function returns the buffer of each
    parameter it wrote (result attribute `train.state`). When the update
    happened in place, that result is the parameter's own argument: it is
    dropped, leaving functions that update the state arena through their
    arguments. A state result that is not its argument means bufferization
    had to copy; that is reported as an error naming the parameter rather
    than silently losing the update.
  }];
}

def FuseElementwisePass
    : Pass<"traincc-fuse-elementwise", "mlir::ModuleOp"> {
  let summary = "Fuses chains of elementwise linalg ops into their consumers";
  let description = [{
    Runs on the step functions in linalg on tensors (after the state
    lowering, before bufferization), so the CPU loop nests and the GPU
    kernels both see the fused ops. A `linalg.generic` whose loops are all
    parallel is fused into the `linalg.generic` that consumes it (an
    elementwise op, a broadcast, or a reduction such as a BatchNorm
    statistic) when the consumer is its only user: the producer's body is
    inlined into the consumer's, reading the producer's operands through the
    composed indexing maps, so the intermediate tensor is neither written
    nor read back. Unequal but compatible iteration spaces fuse too (a
    per-channel producer into a per-element consumer: the maps compose)
    when the producer's body is cheap to repeat at every point that reads
    it (additions, multiplications, comparisons, selections, conversions);
    a per-channel division or square root keeps its own small kernel
    rather than being recomputed per element.

    A producer with several users is left alone: fusing it would recompute
    it once per user, and its result must be materialised anyway. Named
    contractions (convolutions, matmuls) are not elementwise and keep their
    own kernels. The arithmetic of every element is unchanged; only where it
    happens moves (LLVM may then contract a multiply and an add across the
    old kernel boundary into one fused multiply-add).

    Example: `%y = linalg.generic {x * s + b}` used only by
    `%z = linalg.generic {max(y, 0)}` becomes one
    `linalg.generic {max(x * s + b, 0)}`.

    An elementwise consumer that reads such a producer through a
    `tensor.collapse_shape` (its only use) first takes on the producer's
    expanded loops (upstream's fold-reshape-by-expansion; its other
    operands are read through `tensor.expand_shape`, its result collapsed
    back), and then fuses like any other: max pooling's gradient, computed
    per position of each 2x2 window, and the ReLU mask applied to it are
    one pass. Reductions are not expanded.

    The fusion patterns give an output that the body never reads a
    `tensor.empty` destination; where that output is a parameter the
    function returns (a weight copy, written but not read), its argument
    is put back as the destination, so that bufferization still updates
    the parameter in place.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def SplitEmptyTensorsPass
    : Pass<"traincc-split-empty-tensors", "mlir::ModuleOp"> {
  let summary = "Gives each use of a tensor.empty its own";
  let description = [{
    Runs right before one-shot bufferization. CSE merges the `tensor.empty`
    destinations of equally shaped ops across a whole step; bufferization
    then gives the merged empty one buffer and writes every op that can
    into it, so a forward activation's buffer is reused by a backward
    gradient and stays allocated in between, hiding both lives from the
    static memory plan (traincc-plan-step-memory, which reuses memory by
    liveness itself). With one `tensor.empty` per use, each destination is
    its own allocation with its own life. Nothing is computed differently.

    Only in functions with recomputed ops (`train.recomputed`, see
    traincc-recompute-activations): there a forward value dies early and
    its buffer must not live on as a backward one. Elsewhere the forward
    values live into the backward pass anyway, and bufferization's reuse
    packs the CNN example's step 2% tighter than the plan does alone.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

#endif // TRAINCC_CODEGEN_COMMON_PASSES_TD
