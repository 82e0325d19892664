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

    With `cpu-kernels` (the CPU steps, where each kernel is a loop nest and
    a launch costs nothing) the cost model changes in three ways:
    - A producer read through a broadcast (a per-channel factor) fuses only
      when it computes nothing (a copy or a conversion): LLVM would hoist
      the repeated arithmetic out of the innermost loop at best, and the
      32-element kernel it saves is negligible on the CPU. Nor does a
      reduction take in a producer's arithmetic: LLVM splits a vectorized
      sum across lanes as the loop body suggests, so its rounding would
      depend on what fused (`--recompute` fuses more into a sum than a
      saved activation does, and must not change the trajectory).
    - A consumer is not expanded through a `collapse_shape` whose
      innermost source dimension is shorter than a vector (8), unless that
      dimension is a window offset (2 to 4 long) collapsed with the output
      position before it: an interleaved row `2 * o + k`, which
      `traincc-vectorize-interleaved-windows` loads whole and splits by
      shuffles. Max pooling's gradient (per 2x2 window position) and the
      ReLU mask are then one pass.
    - Sibling reductions are merged: two `linalg.generic`s with the same
      loops and iterator types, at least one reduction, that read one
      tensor through the same map and do not depend on each other become
      one generic with both bodies and both outputs, placed at the earlier
      one (whose operands the later one's initial values, a
      `tensor.empty`, a constant or a fill, move up to) or at the later
      one. BatchNorm's backward sums (sum of dy, sum of dy * (x - mean))
      then read dy in one pass, and a named max pooling whose input a
      generic with the same loops also reads is generalized first, so that
      the pooling and its gradient's winner search (which reads the same
      windows again) become one forward pass yielding the maximum and the
      winners. The GPU steps keep them apart: their reduction kernels are
      mapped by the shape of one output.
    - An elementwise generic whose destination is a `tensor.empty` and
      whose innermost loop is at least a vector (8) long takes as
      destination an input of the same type, read through the same map,
      that a linalg op of the step computed (or a reshape of one) and that
      nothing reads after it: bufferization then writes the result over
      it, and the store needs no fresh cache lines (BatchNorm's input
      gradient over the masked output gradient).
  }];
  let options = [
    Option<"cpuKernels", "cpu-kernels", "bool", /*default=*/"false",
           "Use the CPU cost model (traincc's CPU steps): no repeated "
           "broadcast arithmetic, sibling reductions (and max pooling with "
           "its winner search) merged">,
  ];
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

def PadInProducerPass : Pass<"traincc-pad-in-producer", "mlir::ModuleOp"> {
  let summary = "Lets the producer of a padded tensor write into the padded "
                "tensor's interior";
  let description = [{
    Runs before one-shot bufferization. A convolution reads its input
    padded (`tensor.pad` by a constant, or, for a data gradient, an
    `insert_slice` with unit strides into a constant `linalg.fill`);
    bufferized, the padding is a new buffer filled with the constant, into
    whose interior the unpadded value is copied: a read and a write of each
    activation (and each gradient that a data-gradient convolution reads
    padded) per step. When the value is the result of an elementwise op or
    a pooling (named or generic, one result of several too), that op writes
    it into the interior (`tensor.extract_slice`) of the filled padded
    tensor instead, and an `insert_slice` of the same slice, which
    bufferizes to nothing, stands for the padding. What the op's
    destination held must be there in the interior too: nothing, when the
    op writes every element without reading it (an empty tensor, or an
    input it overwrote in place), or a fill's constant (a pooling's -inf),
    with which the interior is filled. The value's other users read the
    interior, with the padded tensor's row stride; read directly, through a
    reshape, the value would look to bufferization as if the insert could
    overwrite it, and the insert would become a copy. Convolutions and
    matmuls keep whole outputs. Nothing is computed differently.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def SplitSharedFillsPass
    : Pass<"traincc-split-shared-fills", "mlir::ModuleOp"> {
  let summary = "Gives each destination of a linalg.fill its own fill";
  let description = [{
    Runs right before one-shot bufferization. CSE merges equal fills (the
    zeros every convolution of one shape accumulates into) across a whole
    step; bufferization then fills one buffer and copies it into each
    destination that it writes in place: a read and a write of the whole
    tensor per convolution (two thirds of a ResNet step's copied bytes).
    With one fill (and one `tensor.empty` under it) per destination, each
    is filled where it is used. Uses that only read the fill keep the
    original. Nothing is computed differently.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def FuseSumsIntoProducersPass
    : Pass<"traincc-fuse-sums-into-producers", "mlir::ModuleOp"> {
  let summary = "Computes per-channel sums in the elementwise op that "
                "produces what they sum, as partial sums per image row";
  let description = [{
    Runs on tensors after `traincc-fuse-elementwise`. A sum
    `init[c] += term(dy[n, c, h, w], x[n, c, h, w], ...)` (batch loops,
    then channel loops, then at least two image loops, all reductions but
    the channels; every output an f32 accumulation `out + term` whose term
    reads no output: BatchNorm's backward sums of dy and dy * (x - mean))
    whose `dy` an all-parallel `linalg.generic` computes, directly or
    through a `tensor.collapse_shape` (max pooling's gradient in its window
    space), is computed by that generic. One op computes `dy` at each
    point, still writes it for its other readers, and adds the sum's terms
    into zero-filled partial sums `partial[n, c, w]`: the image's rows `h`
    become its reduction loops, added in order. A second small op adds
    each channel's partials into `init`. The sum no longer reads `dy` back,
    and reads `x` in the producer's pass.

    Every such sum of one producer's result joins it in the same rewrite,
    each with its own partials and second stage: for the GPU kernels
    BatchNorm's sum of dy and its sum of dy * (x - mean) are two ops
    (`traincc-fuse-elementwise` merges sibling sums only for the CPU), and
    in a residual block a second BatchNorm (the shortcut's) sums the same
    dy.

    Each partial is one lane of a row, added row by row in order, whatever
    the body computes: `traincc-order-loops-for-vectorization` never makes
    a reduction loop innermost in an op that writes an output at every
    point, and such an op's sums are not reassociated;
    `traincc-order-gpu-loops` gives each [n, c, w] a GPU thread that adds
    its rows in order. The second stage's body is a plain sum. So the
    result does not depend on what fused into the producer (`--recompute`
    fuses recomputed activations into it and must not change the
    trajectory), nor on the thread count (the merged op splits along the
    batch, the partials are per image).

    The sum's other inputs must be available where the producer is (or be
    fills that may move up to it), read either like `dy` (expanded through
    the reshape) or along loops the reshape keeps whole (a per-channel
    mean). Left alone:
    sums whose summed input a convolution computes
    (`traincc-fuse-conv-channel-sums` adds those in the convolution's
    epilogue), sums of a tensor no generic of the step computes, sums of
    other shapes, and a producer's result summed alone (a bias gradient,
    with no other sum that reads a tensor like it), which on the CPU reads
    the result back from cache right after it was written.

    In the pipeline of the GPU kernels (and their emulation), not the
    CPU's: on the CUDA path it saves a launch and a pass over dy per
    BatchNorm (the example CNN's micro_step: 34 -> 32 launches, 225.4 ->
    213.0 MB; ResNet-18 at batch 128: 235 -> 216, 8.7 -> 8.3 GB). Measured
    on the Zen 4 test machine, the CPU's merged ops cost more than the
    passes they replace (bench/RESULTS.md, eighteenth session). The
    partials' row dimension keeps a row's loop from joining the rows below
    it into one long loop, so LLVM vectorizes a 28-wide row 4 lanes at a
    time; in a pooling gradient's window space each partial row is loaded
    with a masked vector right after the masked store of the row before,
    and waits for it. The sums they replace read `dy` again from the L3
    cache, nearly free.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // TRAINCC_CODEGEN_COMMON_PASSES_TD
