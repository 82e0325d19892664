//===- Passes.td - code generation passes ------------------*- tablegen -*-===//

#ifndef TRAINCC_CODEGEN_PASSES_TD
#define TRAINCC_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Train -> linalg on tensors
//===----------------------------------------------------------------------===//

def ConvertTrainToLinalgPass
    : Pass<"traincc-convert-train-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lowers Train compute ops (forward, losses, gradients) to "
                "linalg on tensors";
  let description = [{
    The first codegen stage: every forward compute op becomes linalg (named
    ops where one fits, `linalg.generic` otherwise) plus `tensor` ops for data
    movement and padding, still on tensors, so that tiling, fusion and
    bufferization come later.

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
      maximum first.
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
    - Ops on persistent state (`accumulate`, `assign`, `zero`,
      `bn_running_update`, optimizer updates) are left for state lowering.

    Compute happens in the element type (f32, f16, bf16, f64), except that
    convolutions, matrix products and the sums of average pooling and
    softmax accumulate f16/bf16 in f32 and round once at the end.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def LowerStatePass : Pass<"traincc-lower-state", "mlir::ModuleOp"> {
  let summary = "Turns parameter reads and state updates into function "
                "arguments and results";
  let description = [{
    Runs after the compute ops are linalg. Every function that touches
    `train.param` state gets one leading tensor argument per parameter it
    uses (argument attribute `train.state` names it), in first-use order.
    `train.read_param` becomes that argument (or the value last written to
    it); each update (`accumulate`, `assign`, `zero`, `bn_running_update`,
    `sgd_update`, `adam_update`) becomes a `linalg` op whose destination is
    the parameter's current value, and the final value of every written
    parameter is returned (result attribute `train.state`). One-shot
    bufferization with function-boundary bufferization then updates the
    argument buffers in place, and `drop-equivalent-buffer-results` removes
    those results: the step functions read and write the trainer's state
    arena directly.

    Optimizer arithmetic follows PyTorch: SGD's momentum buffer starts as
    the first step's gradient; Adam's bias corrections are computed in
    double precision from the step count, like PyTorch's Python floats.
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

def OrderLoopsForVectorizationPass
    : Pass<"traincc-order-loops-for-vectorization", "mlir::ModuleOp"> {
  let summary = "Orders each linalg.generic's loops so the innermost one "
                "walks memory contiguously";
  let description = [{
    The CPU kernels are loop nests that LLVM's loop vectorizer turns into
    SIMD code, which it only does for the innermost loop, and only well when
    that loop reads and writes consecutive elements. This pass interchanges
    the loops of each `linalg.generic` so that the innermost loop is the one
    along which the most operands are contiguous (the output counts double:
    it is stored), among loops long enough to fill a vector. The other loops
    keep their order. A reduction may become innermost; its `arith.addf`
    then gets the `reassoc` flag so that LLVM may split the sum across
    vector lanes (this changes rounding at the last bits only, as any
    blocked summation does).

    Run it after `linalg-generalize-named-ops`; named ops are left alone.
  }];
  let options = [
    Option<"minVectorTrip", "min-vector-trip", "int64_t", /*default=*/"8",
           "Loops shorter than this are not made innermost when a longer "
           "contiguous loop exists">,
  ];
}

def OutlineParallelLoopsPass
    : Pass<"traincc-outline-parallel-loops", "mlir::ModuleOp"> {
  let summary = "Outlines large linalg ops on buffers into functions over a "
                "range of one parallel loop";
  let description = [{
    Each linalg op (on memrefs, after bufferization) in a function with at
    least `min-work` iterations and a parallel loop is replaced by a call to
    a new private function `@<function>_par<N>(operands..., begin, end)` that
    runs the op on the slice [begin, end) of its outermost parallel loop.
    The call covers the whole range, so the result is correct as it stands;
    `traincc-lower-parallel-calls` later turns these calls into
    `traincc_parallel_for` dispatches over the trainer's threads. Splitting
    along a parallel loop changes no arithmetic, so results do not depend on
    the number of threads.

    Ops whose operands have non-identity layouts (subviews) stay inline: the
    outlined functions take bare pointers.
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"65536",
           "Smallest iteration count worth dispatching to threads">,
  ];
  let dependentDialects = [
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def LowerParallelCallsPass
    : Pass<"traincc-lower-parallel-calls", "mlir::ModuleOp"> {
  let summary = "Turns calls of outlined parallel bodies into "
                "traincc_parallel_for dispatches";
  let description = [{
    Runs on the LLVM dialect. Each `llvm.call` of a function marked
    `traincc.parallel_body` (from `traincc-outline-parallel-loops`) with the
    full range [0, count) becomes: the call's other operands stored into a
    stack context, and `traincc_parallel_for(count, context, @<body>_thunk)`,
    where the generated thunk loads them back and calls the body on the
    range the runtime hands it (ModelABI.h).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def PrepareGPUStepsPass : Pass<"traincc-prepare-gpu-steps", "mlir::ModuleOp"> {
  let summary = "Gives bufferized step functions the buffers of a GPU "
                "launch plan";
  let description = [{
    A GPU step is a fixed sequence of kernel launches whose pointers all
    point into a few device buffers (ModelABI.h, traincc_gpu_program). This
    pass makes that true of each step function on memrefs:

    * every `memref.alloc` becomes a `memref.view` into a new `workspace`
      argument (`train.gpu_buffer = "workspace"`), at an offset of a static
      plan: each temporary gets its own 256-byte aligned range;
    * the scalar arguments (lr, step, grad_scale, seed) are read from a new
      `params` argument at the offsets TRAINCC_GPU_PARAM_* fix, so a
      captured CUDA graph stays valid when their values change;
    * `memref.copy` becomes `linalg.copy`, which is lowered into a kernel
      like every other linalg op.

    The function's original scalar arguments stay (unused) so that its
    signature still matches the CPU version's; the plan size is recorded
    in the function attribute `train.workspace_bytes`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def TileGPUContractionsPass
    : Pass<"traincc-tile-gpu-contractions", "mlir::ModuleOp"> {
  let summary = "Maps convolutions and matmuls of GPU steps to kernels tiled "
                "through shared memory";
  let description = [{
    Runs after `traincc-prepare-gpu-steps`, on linalg ops on buffers. A
    contraction (two inputs, one output, at least one reduction loop; every
    convolution and its two gradients, every matmul) is an implicit GEMM:
    its parallel loops that only the first input uses form M, those only the
    second uses form N, those both use are batches, its reduction loops form
    K. It becomes one `gpu.launch` of 256-thread blocks, each computing a
    TM x TN tile of the output for one batch (TM, TN = 16, 32 or 64, the
    smallest that covers M and N), each thread a (TM/16) x (TN/16) tile of
    accumulators in registers. Each step of the K loop stages a TM x 16
    slice of the first input and a 16 x TN slice of the second in shared
    memory, coalesced along whichever of M/N or K is contiguous in memory;
    the next slices are loaded into registers while the threads work on
    the current ones. Positions past M, N or K are clamped into range
    (their values are never used), and the last step applies only the
    terms that exist, with the op's own scalar body. Every output
    accumulates its terms in the loop order of the op, so the result equals
    the one-thread-per-output kernel's bit for bit. Contractions with M or
    N under 8, K under 4, or less than `min-work` multiply-adds are left to
    `traincc-map-to-gpu`.
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"4096",
           "Smallest M*N*K (times batches) worth a tiled kernel">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def MapGPUReductionsPass
    : Pass<"traincc-map-gpu-reductions", "mlir::ModuleOp"> {
  let summary = "Maps long reductions with few outputs of GPU steps to "
                "block-wide tree reductions";
  let description = [{
    Runs after `traincc-tile-gpu-contractions`, on the top-level linalg ops
    on buffers of public functions (GPU steps). One thread per output, as
    `traincc-map-to-gpu` maps ops, leaves the GPU idle on a long reduction
    with few outputs (BatchNorm statistics and their gradients, bias
    gradients, row maxima). A `linalg.generic` with static shapes, one
    output read through a projected permutation, a body
    `yield combine(out, f(ins))` where `combine` is `arith.addf`,
    `maximumf`, `maxnumf`, `minimumf` or `minnumf` and `out` has no other
    use, at most `max-outputs` outputs and at least `min-reduction` terms
    per output becomes one `gpu.launch` with a block per output:

      acc = identity of combine            (0, -inf or +inf)
      for t = tid; t < terms; t += threads: acc = body(ins at term t, acc)
      shared[tid] = acc; gpu.barrier
      for s = threads/2 .. 2:  if tid < s: shared[tid] = combine(shared[tid],
                                                   shared[tid + s])
                               gpu.barrier
      if tid == 0: out = combine(out, combine(shared[0], shared[1]))

    with `block-size` threads (fewer when there are fewer terms) and a
    workgroup buffer of one element per thread. Consecutive threads read
    consecutive terms (the last term loop fastest); inputs that do not vary
    along the terms are read once. The order of combination is fixed, so
    results are deterministic; for sums it differs from the serial order as
    in any parallel reduction. Bodies that read `linalg.index` are left to
    `traincc-map-to-gpu`.
  }];
  let options = [
    Option<"minReduction", "min-reduction", "int64_t", /*default=*/"256",
           "Map only reductions of at least this many terms per output">,
    Option<"maxOutputs", "max-outputs", "int64_t", /*default=*/"65536",
           "Map only reductions with at most this many outputs (more fill "
           "the GPU with one thread each)">,
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block (a power of two from 2 to 1024)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def MapToGPUPass : Pass<"traincc-map-to-gpu", "mlir::ModuleOp"> {
  let summary = "Turns the loop nests of GPU step functions into gpu.launch "
                "kernels";
  let description = [{
    Runs after `convert-linalg-to-parallel-loops` on functions prepared by
    `traincc-prepare-gpu-steps`. Each top-level `scf.parallel` is collapsed
    to one dimension and becomes a `gpu.launch` of `block-size` threads per
    block, one thread per iteration (reduction loops stay serial inside the
    thread); a top-level `scf.for` (a loop nest without parallel loops)
    becomes a launch of a single thread. A `gpu.launch` already there (a
    tiled kernel) is kept as it is. The values a kernel uses from the
    function (constants, views, parameter loads, scalar arithmetic) are
    cloned into it, so kernels take only the function's buffer arguments and
    every launch argument is a (buffer, offset) pair of the launch plan.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def PackGPUWorkspacePass
    : Pass<"traincc-pack-gpu-workspace", "mlir::ModuleOp"> {
  let summary = "Lets temporaries whose lives do not overlap share the GPU "
                "workspace";
  let description = [{
    Runs after `traincc-map-to-gpu`, when a step function is a sequence of
    launches that run one after another on one stream.
    `traincc-prepare-gpu-steps` gave each temporary its own range of the
    workspace; here a temporary (identified by that planned offset) lives
    from the first launch that views it to the last, and each one, in
    order of first use, takes the lowest 256-byte aligned offset where it
    overlaps no temporary alive at the same time (first fit). Every view
    of the workspace, in the function and in the kernels, is rewritten to
    the new offset, and the workspace argument and `train.workspace_bytes`
    shrink to the packed size.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def MergeKernelModulesPass
    : Pass<"traincc-merge-kernel-modules", "mlir::ModuleOp"> {
  let summary = "Moves every outlined kernel into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` makes one `gpu.module` per kernel. A trainer
    loads one module (one PTX text, one cubin), so this pass moves every
    kernel into `@traincc_kernels`, each renamed after its old module (which
    is unique), and points the `gpu.launch_func` ops at them. Globals the
    kernels share (constants outlining copied into each module) are kept
    once.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def GPUKernelsToCPUPass : Pass<"traincc-gpu-kernels-to-cpu", "mlir::ModuleOp"> {
  let summary = "Turns the kernels of @traincc_kernels into CPU functions "
                "that emulate one GPU thread (for testing without a GPU)";
  let description = [{
    CI has no GPU, yet the GPU path (MapToGPU, the workspace plan, launch
    plans, the runtime's CUDA backend) must be checked numerically. This
    pass replaces the module's contents by the kernels of
    `@traincc_kernels`, each as a `func.func` with the kernel's arguments
    followed by twelve `index` arguments: block id, thread id, grid size and
    block size (x, y, z), which stand for the `gpu` id and dimension ops.
    A kernel with workgroup (shared) buffers or `gpu.barrier` is marked
    `traincc.cooperative_kernel` (the byte size of each workgroup buffer):
    its workgroup buffers become arguments (plain memrefs of static shape)
    between its own arguments and the indices, its private buffers
    `memref.alloca`, and each barrier a call of `@traincc_emu.barrier`.
    Other `gpu` ops (shuffles, ...) are refused. After lowering to LLVM,
    `traincc-emulation-entry-points` adds the loop over all threads of a
    launch.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def EmulationEntryPointsPass
    : Pass<"traincc-emulation-entry-points", "mlir::ModuleOp"> {
  let summary = "Adds cuLaunchKernel-like entry points to emulated kernels";
  let description = [{
    Runs on the LLVM dialect after `traincc-gpu-kernels-to-cpu` and the CPU
    lowering. For each emulated kernel `@k` it adds
    `void @traincc_emu_k(void **params, const uint32_t grid[3],
    const uint32_t block[3])`, which runs `@k` for every block and thread of
    the launch in order, each kernel argument read from `params` as
    cuLaunchKernel reads it. The fake CUDA driver of the runtime tests calls
    these in place of PTX. A cooperative kernel's threads must wait for each
    other at barriers: its entry point gives each block one shared area
    (0xff-filled) and calls the exported function pointer
    `int32_t (*traincc_emu_run_block_hook)(void (*thread)(void *, uint64_t),
    void *context, uint64_t threads)`, which runs the block's threads as
    fibers; `@traincc_emu.barrier` calls `void (*traincc_emu_barrier_hook)()`.
    The driver sets both after loading the library.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def SplitGPUReductionsPass
    : Pass<"traincc-split-gpu-reductions", "mlir::ModuleOp"> {
  let summary = "Splits sums with very few outputs into a partial and a "
                "final sum, so that more GPU blocks share the work";
  let description = [{
    Runs on bufferized step functions before `traincc-prepare-gpu-steps`
    (which plans the temporary it allocates). `traincc-map-gpu-reductions`
    gives a long sum one block per output; with fewer outputs than blocks
    fill the GPU and many terms per thread (BatchNorm statistics of a large
    batch: one per channel over N*H*W values) that still leaves most of it
    idle. A `linalg.generic` with one output, an `out + f(inputs)` body,
    fewer than `max-outputs` output elements and at least `min-reduction`
    terms per output is split on its outermost reduction loop R:

      partial[R, outs...] = sum over the other reduction loops  (a new
                            temporary, zero-filled; R is parallel there)
      out[outs...]       += sum over R of partial[R, outs...]

    Both are ordinary linalg ops, mapped to kernels as any other. Whole, the
    sum runs on `block-size` threads per output; split, the partial sums
    get a block each if they have at least `block-size` terms, else a
    thread each, so a sum is split only if its partials are that long or
    there are at least twice `block-size` of them per output. Summation
    order changes as in any parallel reduction.

    Contractions (an input read along a reduction loop but not along some
    output loop: matmuls, convolutions and their gradients) get tiled
    kernels from `traincc-tile-gpu-contractions`, which need no split
    unless they would have fewer than two 64 x 64 tiles per H200 SM with
    at least 1024 terms each: a convolution's filter gradient (few weights,
    N*H*W terms), a classifier over many flattened features. Those are
    split the same way (split-K; the partial sums are a batch of GEMMs)
    when the partials take at most 64 MiB. A single reduction loop is
    first strip-mined into parts of at least 64 terms, the inputs it
    indexes viewed with that axis expanded (`memref.expand_shape`).
  }];
  let options = [
    Option<"maxOutputs", "max-outputs", "int64_t", /*default=*/"1024",
           "Split only sums with fewer output elements than this">,
    Option<"minReduction", "min-reduction", "int64_t", /*default=*/"4096",
           "Split only sums of at least this many terms per output">,
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per output of traincc-map-gpu-reductions, which maps "
           "only sums of at least as many terms">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // TRAINCC_CODEGEN_PASSES_TD
