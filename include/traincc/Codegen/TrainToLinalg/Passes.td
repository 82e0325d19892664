//===- Passes.td - Train -> linalg on tensors --------------*- tablegen -*-===//

#ifndef TRAINCC_CODEGEN_TRAINTOLINALG_PASSES_TD
#define TRAINCC_CODEGEN_TRAINTOLINALG_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTrainToLinalgPass
    : Pass<"traincc-convert-train-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lowers Train compute ops (forward, losses, gradients) to "
                "linalg on tensors";
  let description = [{
    The first codegen stage: every forward compute op becomes linalg (named
    ops where one fits, `linalg.generic` otherwise) plus `tensor` ops for data
    movement and padding, still on tensors, so that tiling, fusion and
    bufferization come later. The lowering of an op marked
    `train.recomputed` (traincc-recompute-activations) carries the mark on
    its linalg ops and `tensor.empty`, so that CSE keeps the recomputation.

    - `train.conv`: padding is a `tensor.pad` with zeros; a 2-D convolution
      with one group becomes `linalg.conv_2d_nchw_fchw`, every other one
      (grouped, depthwise, 1-D, 3-D) a `linalg.generic` over an NGC... view
      of the input. The bias initialises the accumulator.
    - `train.batch_norm` is lowered in *inference form*: it normalises with
      its running-statistics operands. Training-mode BatchNorm is not this
      op's lowering: training-step construction makes it explicit
      (`bn_stats` -> `bn_apply`, `bn_running_update`) before codegen.
    - `train.gemm` and `train.matmul` become `linalg.matmul` /
      `linalg.batch_matmul` (transposes as indexing maps), or a
      `linalg.generic` when batch axes broadcast.
    - Elementwise ops are `linalg.generic`s with numpy broadcasting in their
      indexing maps. `train.softmax` / `train.log_softmax` subtract the row
      maximum first. `train.cast` is a `truncf`/`extf` (round to nearest
      even; f16 <-> bf16 through f32); `train.scale_loss` a 0-d product.
    - `train.max_pool` pads with -inf (padding never wins); `train.avg_pool`
      pads with zeros and divides by a per-position count (real elements,
      or the window clipped to the padded input with `count_include_pad`);
      ceil-mode windows that run past the end are padded further but not
      counted.
    - Reshapes (and flatten) become `tensor.collapse_shape` of the blocks of
      axes both shapes share, then `tensor.expand_shape` (views that
      bufferization keeps free); `tensor.reshape` only for zero-size axes.
      Slices are
      `tensor.extract_slice` (a `linalg.generic` for negative steps);
      concat is a chain of `tensor.insert_slice`.
    - `train.dropout` is lowered in inference form (the identity); training
      dropout needs the RNG and is built by training-step construction.
    - `train.constant` becomes `arith.constant`; `train.read_param` is left
      alone (a later pass decides where parameters live).
    - Losses and gradient ops (ConvertTrainToLinalgGradients.cpp,
      ConvertTrainToLinalgWindowGradients.cpp): cross-entropy as a stable
      logsumexp; `bn_stats` in two passes (mean, then biased variance),
      `bn_apply`, `batch_norm_backward` with the statistics paths.
      Convolution and pooling gradients by their input spread the output
      gradient into zeros (zero insertion, padding, cropping: one strided
      `tensor.insert_slice`) and gather it with a flipped kernel, so every
      map stays affine; `max_pool_backward` routes each window's gradient to
      its first maximum in row-major order, never to padding (PyTorch).
    - `train.dropout_mask` hashes (seed, stream, row-major element index)
      with SplitMix64 (the exact formula is in
      ConvertTrainToLinalgGradients.cpp): a pure function, reproducible by
      the runtime and tests, identical on CPU and GPU.
    - `synchronized` `bn_stats` and `batch_norm_backward` (traincc
      --sync-bn) average their per-channel vectors over the data-parallel
      replicas between passes: a copy into a buffer, a call to the trainer
      runtime's `traincc_replica_mean` and `bufferization.to_tensor` of the
      buffer (ConvertTrainToLinalgCollectives.cpp); `train.replica_count`
      calls `traincc_replica_count` (the GPU steps turn both into launch-plan
      entries: traincc-prepare-gpu-steps). With `replica-collectives=false`
      they compute this replica's statistics and the count is 1.
    - Ops on persistent state (`accumulate`, `assign`, `zero`,
      `bn_running_update`, optimizer updates) are left for state lowering.

    Compute happens in the element type (f32, f16, bf16, f64), except that
    convolutions, matrix products and the sums of average pooling and
    softmax accumulate f16/bf16 in f32 and round once at the end. (The
    backends then compute each f16/bf16 operation in f32 and round it,
    which gives the same result for +, -, *, / and max.)
  }];
  let options = [
    Option<"replicaCollectives", "replica-collectives", "bool",
           /*default=*/"true",
           "Synchronized BatchNorm calls the trainer runtime; "
           "false: per-replica statistics">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def WinogradConvolutionsPass
    : Pass<"traincc-winograd-convolutions", "mlir::ModuleOp"> {
  let summary = "Lowers wide 3x3 stride-1 convolutions and their gradients "
                "to Winograd F(2x2,3x3) and F(3x3,2x2) on linalg tensors";
  let description = [{
    Runs before `traincc-convert-train-to-linalg`, for the CPU kernels. A
    `train.conv`, `train.conv_backward_data` or `train.conv_backward_filter`
    (f32, 2-D, one group, a 3x3 kernel, stride and dilation 1, static
    shapes, an even number of output rows and columns, at least
    `min-channels` input and output channels, not marked
    `train.recomputed`) becomes transforms (`linalg.generic`s marked
    `traincc.keep_loop_order`, whose innermost loops are a tile's 4x4 or
    2x2 positions) around one contraction over the 16 tile positions:

    - forward, F(2x2, 3x3): the filter transform `U = G g G^T`
      (`[4, 4, out, in]`), the input transform `V = B^T d B` of every 4x4
      tile of the zero-padded input at a stride of 2, in blocks of images
      (`[4, 4, blocks, in, images, rows / 2, columns / 2]`), the products
      `M[x, block, o, t] = sum_i U[x, o, i] V[x, block, i, t]` (a conv
      forward kernel marked `traincc.cache_blocked`: a block's tiles stay
      cached while every output channel walks them) and the output
      transform `Y = A^T M A` (+ bias) written as 2x2 blocks.
    - data gradient: the same on the output gradient padded by 2 - pad,
      the weight read flipped with its channel axes swapped.
    - filter gradient, F(3x3, 2x2): per 2x2 block of output gradients
      `g` and 4x4 input tile `d`, a 3x3 correlation
      `A'^T [(G' g G'^T) . (B'^T d B')] A'`; summed over the tiles first,
      the products are `M[x, o, i] = sum_{block, t} U'[x, block, o, t]
      V'[x, block, i, t]` (a conv filter gradient kernel) and the output
      transform gives the 3x3 filters.

    That is 16 multiply-adds per channel pair and tile instead of 36,
    computed in a different order: results differ from the direct
    convolution by rounding. Other convolutions are left to
    `traincc-convert-train-to-linalg`; `min-channels=0` leaves them all.
  }];
  let options = [
    Option<"minChannels", "min-channels", "int64_t", /*default=*/"128",
           "Fewest input and output channels a convolution needs to be "
           "rewritten (0: none is)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // TRAINCC_CODEGEN_TRAINTOLINALG_PASSES_TD
