//===- Passes.td - GPU kernels -----------------------------*- tablegen -*-===//

#ifndef TRAINCC_CODEGEN_GPU_PASSES_TD
#define TRAINCC_CODEGEN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuseGPUConvEpiloguesPass
    : Pass<"traincc-fuse-gpu-conv-epilogues", "mlir::ModuleOp"> {
  let summary = "Makes the elementwise op that reads a tiled convolution's "
                "output (a ReLU mask and BatchNorm's backward sums) the "
                "convolution kernel's epilogue";
  let description = [{
    Runs first in the GPU kernel pipeline, on bufferized step functions
    (public functions), before `traincc-split-gpu-reductions` and
    `traincc-prepare-gpu-steps`. Finds a contraction that
    `traincc-tile-gpu-contractions` will tile and not split (its `min-work`
    is this pass's) whose output, a temporary, is next read by a
    `linalg.generic` C that is its last reader, reads it through a
    permutation (directly or through reshapes that add or drop unit
    dimensions) and has no index semantics. No op in between may touch the
    output or write the contraction's inputs; no output of C may be an
    input of the contraction or, but for an update in place at the same
    indices, of C. C's outputs are either indexed by permutations of all
    its loops, or sums: `out + t` in the body (no term reading the
    output), into a temporary filled with zeros before C and read once
    after it, by a per-channel sum (`init[c] += x[n, c, ...]`), whose
    channel is the contraction's one N loop and that has no batch loops of
    more than one iteration: the partial sums per image row of
    `traincc-fuse-sums-into-producers`.

    The contraction, with the fill of its output before it, moves down to
    C. C becomes a `linalg.generic` over the contraction's parallel loops,
    in their order, whose first input is the contraction's output at the
    contraction's indices; each sum output becomes a new `memref<P x C x
    f32>` of partials per 64-position M tile and channel, zero-filled
    before the contraction and indexed by the channel-partials map of
    `traincc-fuse-gpu-conv-channel-sums`, and its second stage adds those
    partials over the tiles. Every loop but the channel's is then a
    reduction of the partials. The contraction gets the unit attribute
    `traincc.epilogue`: `traincc-tile-gpu-contractions` applies C to each
    finished accumulator in the tiled kernel, stores C's outputs and sums
    its terms into the partials in the block's epilogue, and stores
    nothing into the contraction's output. Where its tiling does not match
    the partials, the two stay separate kernels, with the same results.
    `--no-fuse` leaves this pass out.
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"4096",
           "traincc-tile-gpu-contractions' min-work: the contractions it "
           "tiles">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
}

def FuseGPUConvChannelSumsPass
    : Pass<"traincc-fuse-gpu-conv-channel-sums", "mlir::ModuleOp"> {
  let summary = "Moves the per-channel sum of a convolution's output (a "
                "BatchNorm mean) into the tiled convolution kernel's "
                "epilogue";
  let description = [{
    Runs first in the GPU kernel pipeline, on bufferized step functions
    (public functions), before `traincc-split-gpu-reductions` would split
    the sum and `traincc-prepare-gpu-steps` places its temporaries. Finds a
    contraction that `traincc-tile-gpu-contractions` will tile (its
    `min-work` is this pass's) whose output [n, c, ...] is f32 and whose
    channel index c is the GEMM view's only N loop, with no batch loops
    (every convolution with groups = 1: M is (n, pixels), K the window),
    followed in its block by the per-channel sum of its output (the sum
    `traincc-fuse-conv-channel-sums` takes on the CPU, found by the same
    code: `init[c] += x[n, c, ...]`, nothing writing the output in
    between). The contraction becomes a `linalg.generic` with a second
    output `partials`, a new `memref<P x C x f32>` with P the number of
    64-position tiles along M (1 if M fits one), indexed by
    `(flattened M position floordiv 64, c)`, which its body passes
    through, and the unit attribute `traincc.channel_partials`. The sum
    becomes `init[c] += partials[p, c]` over p in order.

    `traincc-tile-gpu-contractions` then computes each partial in the
    epilogue of the block that owns that M tile and those channels: every
    thread adds its outputs of each channel in registers, the threads of a
    column add theirs through shared memory in a fixed order, and one
    thread per channel stores the partial. No float atomics, so results
    are the same on every run; they differ from the separate sum's only in
    where rounding happens. The output is then no longer read for the mean.

    When BatchNorm's variance follows the sum (found by the same code as
    on the CPU: `init[c] += (x - mean[c])^2` around the sum divided by
    the count, nothing writing the output, the sum or the mean in between,
    so never a synchronized BatchNorm's), the contraction also gets
    `counts` and `m2`, indexed like `partials`, and the mark
    `traincc.channel_moments`: each tile's count and squares around its
    own mean, so no large sums cancel. The variance becomes `init[c] +=
    m2[p, c] + counts[p, c] * (partials[p, c] / counts[p, c] - mean[c])^2`
    over p in order, and the output is not read again for statistics.
    Grouped convolutions (batch loops), convolutions that
    `traincc-split-gpu-reductions` splits along K (their partial GEMMs
    give the GPU more blocks), outputs written again before the sum and
    sums of other shapes are left alone. `--no-fuse` leaves this
    pass out.
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"4096",
           "traincc-tile-gpu-contractions' min-work: the contractions it "
           "tiles">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
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
    when the partials take at most 64 MiB. Where they would take more (a
    filter gradient of many weights: ResNet-18's 128-channel 3x3 ones at
    batch 128, 36 tiles, would need 75 MB), the outermost reduction loop is
    first strip-mined into the fewest parts (a divisor of its range) that
    give two tiles per SM, and those are split; a convolution whose
    BatchNorm sums `traincc-fuse-gpu-conv-channel-sums` moved into its
    epilogue (which it does only where no other split applies) is left
    whole instead. A single reduction loop is
    first strip-mined into parts of at least 64 terms. Strip-mined inputs
    are viewed with that axis expanded (`memref.expand_shape`).
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
      like every other linalg op;
    * the replica collectives of synchronized BatchNorm (traincc --sync-bn,
      ConvertTrainToLinalgCollectives.cpp): `traincc_replica_count()` is
      read from the parameter block (TRAINCC_GPU_PARAM_REPLICAS), and
      `traincc_replica_mean(pointer, count)` on a temporary becomes
      `func.call @traincc_gpu_replica_mean(%view)` on its workspace view
      (cast to `memref<?xf32>`): host code between the kernels, which the
      launch plan turns into a collective entry. A call on any other
      pointer is an error.

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
    accumulators in registers, strided by 16; neighbouring threads take
    neighbouring outputs along whichever of M and N the output is
    contiguous in (a convolution's pixels in NCHW, a matmul's columns), so
    that stores coalesce. Each step of the K loop stages a TM x 16
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

    A convolution marked `traincc.channel_partials`
    (`traincc-fuse-gpu-conv-channel-sums`) also writes partials[p, c], the
    sum of its outputs of channel c in M tile p, from its epilogue: each
    thread adds its outputs in range of each channel, stores the sums in a
    16 x TN shared buffer (one row per thread holding that channel), and
    after a barrier one thread per channel adds the 16 rows in order and
    stores the block's partial (blocks along M are the tiles). With
    `traincc.channel_moments`, each thread also stores the count of its
    outputs and their squares around their mean, and the thread per
    channel merges the 16 rows with Chan et al.'s formula in the same
    order into the block's count and m2. A marked op this pass does not
    tile that way (too small, or tiles that are not the partials') becomes
    the contraction alone followed by zero fills and loop nests that sum
    its output into the partials (and count it and sum its squares around
    the partials' means).

    A contraction marked `traincc.epilogue`
    (`traincc-fuse-gpu-conv-epilogues`) computes the op after it in the
    same kernel, when that op is a `linalg.generic` over the contraction's
    parallel loops whose first input is the contraction's output at the
    contraction's indices: each thread loads the op's other inputs at its
    outputs' positions, applies the op's body to its finished accumulators
    and stores the op's outputs (those in range), never the contraction's.
    The op's outputs that are not indexed by projected permutations are
    channel partials (f32, indexed by the channel-partials map restricted
    to the op's loops, the body adding a term into each): the kernel sums
    each channel's terms into its block's partials as it sums a marked
    convolution's outputs above, and the partials' zero fills before the
    contraction go. Every other output must be indexed by every loop of
    more than one iteration. Where the kernel's blocks are not the
    partials' tiles, the op stays after the kernel, which then stores the
    contraction's output.

    Tensor cores (`tensor-cores`, on by default): a contraction whose body
    is `out + extf(a) * extf(b)` with f16 or bf16 inputs and an f32 output
    (mixed precision) gets a kernel of 128-thread blocks instead: 2 x 2
    warps over a TM x TN output tile (TM = 32 or 64, TN = 16, 32 or 64),
    each warp computing its quarter as 16 x 8 tiles with warp-collective
    `nvvm.mma.sync` m16n8k16 (row-major A, column-major B, f32 C/D, fp32
    accumulation). Each step of the K loop stages 32 terms of both inputs
    in shared memory as rows of K (TM x 32 and TN x 32, padded by 8 halves
    against bank conflicts), terms past K as zeros, and every warp reads
    its A and B fragments from there (PTX ISA fragment layouts; lane =
    4 * groupID + threadID_in_group). Every thread runs every `mma.sync`.
    The terms of each output are summed in the tensor cores' order, not the
    op's loop order.
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"4096",
           "Smallest M*N*K (times batches) worth a tiled kernel">,
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"true",
           "Compute f16/bf16 contractions into f32 with mma.sync">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
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

def OrderGPULoopsPass : Pass<"traincc-order-gpu-loops", "mlir::ModuleOp"> {
  let summary = "Moves the reduction loops of the linalg.generic ops that "
                "get one GPU thread per output inside all their parallel "
                "loops";
  let description = [{
    Runs after `traincc-map-gpu-reductions`, before
    `convert-linalg-to-parallel-loops`, on the `linalg.generic` ops still
    on buffers (the ones `traincc-map-to-gpu` gives one thread per output;
    tiled contractions and block-wide reductions are launches by then).
    The conversion makes a generic's leading parallel loops one
    `scf.parallel` and nests every loop from the first reduction on inside
    it; `traincc-map-to-gpu` gives each iteration of that `scf.parallel` a
    thread, and a nest that starts with a reduction loop one thread in all.
    Such nests are common:
    - the second stage of a split sum (`traincc-split-gpu-reductions`:
      `out[outs...] += partial[R, outs...]`, R first), which is how every
      split filter gradient ends. ResNet-18's at batch 128 ran as single
      threads of up to 16.8 million serial steps each;
    - `traincc-fuse-sums-into-producers`' merged op, loops [n, c, h, w]
      with the rows h summed into partials [n, c, w]: one thread per
      [n, c], each walking a whole image, neighbouring threads an image
      apart in memory.
    Here the loops are interchanged: the parallel loops first, then the
    reduction loops, each group in its order. The split stage then runs
    one thread per output, the merged op one per [n, c, w] with
    neighbouring threads on neighbouring elements.

    Every output point gets the same terms in the same order (the
    reduction loops keep their order), so results do not change. Ops whose
    reduction loops are already innermost, and ops with no parallel loop,
    are left as they are.
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::linalg::LinalgDialect"];
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
    every launch argument is a (buffer, offset) pair of the launch plan. A
    replica collective (`func.call @traincc_gpu_replica_mean`, --sync-bn)
    stays host code between the kernels before and after it.
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

def FuseGPULaunchesPass
    : Pass<"traincc-fuse-gpu-launches", "mlir::ModuleOp"> {
  let summary = "Merges the launches of GPU steps into fewer kernels";
  let description = [{
    Runs after `traincc-map-to-gpu`, when each public function is a
    sequence of `gpu.launch` ops that use only the function's arguments,
    and before `traincc-pack-gpu-workspace`, while every temporary still
    has its own workspace range. What a launch reads and writes is traced
    to byte ranges of the arguments (a workspace view at a constant offset
    is its own range); two launches conflict when one writes what the
    other reads or writes. Each launch with a 1-D grid and 1-D blocks of
    constant size moves up past the launches it does not conflict with and
    joins the latest earlier launch it may:

    * as a new range of blocks, if it conflicts with nothing there:

        if blockIdx.x in [offset, offset + grid):  body (blockIdx.x - offset)

    * after one part in the same threads, with no barrier, if each of its
      threads reads only the element the same thread of that part stored
      (both one thread per output, `traincc-map-to-gpu`'s form: the same
      grid, blocks and guard, loads and stores at equivalent indices of a
      buffer with one element per thread, and it writes nothing that part
      touches): a copy of a max pooling's output into the next
      convolution's padded input, of a gradient into its padded frame;
    * after one part, behind a `gpu.barrier`, if both are single blocks
      and that part is the only one it conflicts with: a chain of small
      per-channel kernels becomes one block.

    A launch that could follow a part but also conflicts with one other
    part, a single launch that is not the merged launch's first (a fill
    that joined there only because nothing stopped it earlier), moves that
    one to an earlier launch that takes it, if any; so does a launch that
    could join side by side but for such a part.

    The merged launch has the largest block of its parts; a part with
    fewer threads runs under `threadIdx.x < its block size`, which a part
    with barriers may not (it keeps its block size, or does not merge).
    Workgroup buffers are concatenated. No launch passes one it conflicts
    with, so every dependency keeps its order; `max-lanes` bounds the
    parts side by side. `--no-fuse` leaves this pass out.
  }];
  let options = [
    Option<"maxLanes", "max-lanes", "int64_t", /*default=*/"16",
           "Most launches merged side by side into one">,
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
    from the first launch that views it to the last, and each one takes
    the lowest 256-byte aligned offset where it overlaps no temporary alive
    at the same time: first fit, in order of first use or largest first,
    whichever needs less (codegen::planArena, shared with the CPU's
    `traincc-plan-step-memory`). Every view of the workspace, in the
    function and in the kernels, is rewritten to the new offset, and the
    workspace argument and `train.workspace_bytes` shrink to the packed
    size. A training step (one with a gradient accumulator) also gets
    `train.saved_activation_bytes`: the temporaries alive across the launch
    where the loss starts (the first launch of the temporary copied into
    the `loss` out-parameter), as on the CPU. A replica collective
    (--sync-bn) uses the temporary it averages where it stands, so that
    no kernel between its producer and the collective reuses the memory.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def HoistWorkspaceViewsPass
    : Pass<"traincc-hoist-workspace-views", "mlir::ModuleOp"> {
  let summary = "Makes a launch's workspace views before it, so that the "
                "offsets are launch-plan arguments and not kernel code";
  let description = [{
    Runs after `traincc-pack-gpu-workspace` (the offsets are final) and
    before `gpu-kernel-outlining`. In each `gpu.launch` of a step function,
    every `memref.view` of the workspace argument is replaced by one view
    made before the launch (one per offset and type), so that outlining
    passes it as a kernel argument and the launch plan as (workspace,
    offset): kernels that differed only in where their temporaries lie
    (every repeated block of a network) become equal, and
    `traincc-merge-kernel-modules` compiles them once.

    A launch is left as it is when any of its uses of the workspace is not
    a view at a constant offset that is a multiple of 16 with a static
    shape, or when two of its views at different offsets or types overlap:
    its kernel arguments must stay distinct, aligned buffers
    (`traincc-annotate-kernel-pointers`).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
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
    once, and so are kernels equal up to their names (the same loop nest
    on the same shapes, as in every repeated block of a network): their
    launches share the first. Each kernel's workgroup buffers get
    `llvm.align = 16`: the tiled
    kernels read them with vector loads up to 16 bytes wide, and the NVVM
    lowering otherwise aligns them to their element size only.

    Launches whose constant sizes break CUDA's limits on every device (grid
    x over 2^31-1, grid y or z over 65535, a block over 1024 x 1024 x 64 or
    1024 threads, dynamic shared memory over 227 KiB) are errors naming the
    kernel: they would fail at run time on any GPU.

    With `parts=N` (N > 1) the kernels are spread over up to N modules
    (fewer if a part would have under `min-kernels-per-part` kernels),
    `@traincc_kernels_0` ... `_N-1`, of about equal size (the largest kernel
    first onto the lightest part), each with copies of the globals its
    kernels use: NVVM, LLVM and ptxas then compile the parts in parallel,
    and the trainer loads one module per part.
  }];
  let options = [
    Option<"parts", "parts", "unsigned", /*default=*/"1",
           "Number of gpu.modules to spread the kernels over">,
    // Each part links libdevice and runs ptxas once: small programs stay
    // whole.
    Option<"minKernelsPerPart", "min-kernels-per-part", "unsigned",
           /*default=*/"32", "Fewest kernels a part may have">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def AnnotateKernelPointersPass
    : Pass<"traincc-annotate-kernel-pointers", "mlir::ModuleOp"> {
  let summary = "Declares the kernels' buffer arguments 16-byte aligned and "
                "not aliasing each other, so that their global accesses "
                "become vector and read-only-cache loads";
  let description = [{
    Runs on the outlined kernels, before the NVVM lowering. Kernels take
    bare pointers, of which LLVM must assume only the element's alignment
    and that any two may overlap: its load/store vectorizer (part of the
    NVPTX backend at -O3) then leaves adjacent accesses as scalar
    `ld.global.b32`, and a sum kept in an output buffer is stored and
    reloaded on every term, since a store to it might change an input.

    The launch plan says more. Each pointer is a device allocation
    (`cuMemAlloc`: 256-byte aligned) plus a planned offset: a state
    tensor's (64-byte aligned; state tensors are disjoint), a workspace
    temporary's, or 0, and the workspace, the state arena, the data and the
    parameter block are separate allocations. The plan builder rejects an
    offset that is not a multiple of `kGPUKernelPointerAlignment` (16) and
    two pointers of one launch that are equal. So each memref argument of a
    `gpu.func` kernel that every `gpu.launch_func` of it fills with a step
    function argument, or with a view of one at a constant offset that is
    a multiple of 16 (`traincc-hoist-workspace-views`, whose views of one
    launch are disjoint), gets `llvm.align = 16`, and `llvm.noalias` unless
    a launch passes that value in another position too. LLVM
    then merges accesses it proves adjacent and aligned into
    `ld.global.v4`/`v2` (`st.global` likewise), keeps sums in registers,
    and reads buffers a kernel never writes through the read-only cache
    (`ld.global.nc`). An argument some launch fills with anything else (a
    value computed in the step, which the plan would not accept anyway) is
    left alone. The emulated kernels (CPU) do not need this.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def SerializeGPUModulesPass
    : Pass<"traincc-serialize-gpu-modules", "mlir::ModuleOp"> {
  let summary = "Translates each gpu.module to PTX, the modules in parallel";
  let description = [{
    Upstream's `gpu-module-to-binary` for traincc's kernel parts: every
    `gpu.module` with an NVVM target is translated to LLVM IR, linked with
    libdevice, optimised and compiled to PTX by its target attribute, on
    the context's threads (each module in its own LLVMContext), then
    replaced by a `gpu.binary` holding the PTX, in the order of the
    modules. The result is the same as upstream's pass, which does one
    module after the other.
  }];
  let options = [
    Option<"toolkit", "toolkit", "std::string", /*default=*/"\"\"",
           "CUDA toolkit folder (libdevice)">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // TRAINCC_CODEGEN_GPU_PASSES_TD
