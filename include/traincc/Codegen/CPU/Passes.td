//===- Passes.td - CPU kernels -----------------------------*- tablegen -*-===//

#ifndef TRAINCC_CODEGEN_CPU_PASSES_TD
#define TRAINCC_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

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
    blocked summation does). Not in an op that also writes an output at
    every point (`traincc-fuse-sums-into-producers`' partial sums): there
    the best parallel loop becomes innermost, however short, and each lane
    adds in loop order, whatever the body.

    Run it after `linalg-generalize-named-ops`; named ops are left alone,
    and so are ops marked `traincc.keep_loop_order` (the Winograd
    transforms, whose short position loops innermost are unrolled later).
  }];
  let options = [
    Option<"minVectorTrip", "min-vector-trip", "int64_t", /*default=*/"8",
           "Loops shorter than this are not made innermost when a longer "
           "contiguous loop exists">,
  ];
}

def TimeKernelsPass : Pass<"traincc-time-kernels", "mlir::ModuleOp"> {
  let summary = "Surrounds each kernel of the bufferized step functions "
                "with calls to the runtime's kernel timers";
  let description = [{
    `traincc --profile-kernels`: in `micro_step`, `apply_step` and
    `eval_step` on buffers, every kernel that `traincc --report` lists (a
    linalg op or a `memref.copy`, numbered in the same order) gets a call to
    `traincc_kernel_timer_start()` before it and one to
    `traincc_kernel_timer_stop(step, index, class, flops, bytes)` after it.
    The class says what the kernel is for (a convolution's forward, data or
    filter gradient, a matmul, pooling, a reduction, elementwise arithmetic,
    copies and fills: ModelABI.h's traincc_kernel_class), and FLOPs and
    bytes are the report's, so that the trainer can print the GFLOP/s and
    GB/s each class reaches.

    The calls are opaque to the passes that follow, so each kernel stays a
    loop nest of its own between them: an instrumented trainer runs the
    kernels of the uninstrumented one, plus two calls per kernel.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect"];
}

def PackConvolutionWindowsPass
    : Pass<"traincc-pack-convolution-windows", "mlir::ModuleOp"> {
  let summary = "Copies the input windows of convolutions with short or "
                "strided rows into a buffer laid out like the output (im2col)";
  let description = [{
    A convolution-like `linalg.generic` on buffers (body `out + a * b`, the
    contraction `traincc-vectorize-contractions` handles) reads one input
    through window indices `s * o + k`. Where the rows it would vectorize
    are short (the innermost output position's loop at most half of
    `vector-width` long: a 4x4 ResNet stage) or read with a stride
    (`s > 1`: downsampling convolutions, whose inner loads would otherwise
    be strided and stay scalar), the windows are first copied into a new
    buffer indexed [plain indices..., kernel offsets..., output
    positions...], and the contraction reads that buffer with a plain
    (projected permutation) map. Its output positions are then contiguous
    like the output's, so `traincc-collapse-contiguous-loops` can merge
    them into one long loop. The arithmetic is unchanged; the buffer is
    allocated before the op and freed after it.

    A filter gradient's packed buffer has its input channels and kernel
    offsets innermost, like dw. Where they number a multiple of 4 vectors
    (K of them), it is packed in panels of 4 vectors instead,
    [K / panel, ..., panel], and the contraction gains an outermost
    parallel loop over the panels (dw viewed as [.., K / panel, panel]):
    `traincc-vectorize-contractions` then blocks many images per panel in
    the cache, where the plain layout let one image's whole K fill it.

    Convolutions with dynamic loop ranges, and copies larger than
    `max-bytes`, are left alone. Run it after
    `linalg-generalize-named-ops`, before
    `traincc-collapse-contiguous-loops`.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes per vector (16: AVX-512)">,
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"268435456",
           "Largest packed buffer, in bytes">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def UnrollTilePositionsPass
    : Pass<"traincc-unroll-tile-positions", "mlir::ModuleOp"> {
  let summary = "Lowers the Winograd transforms to loops and unrolls their "
                "short innermost position loops";
  let description = [{
    Each `linalg.generic` on buffers marked `traincc.keep_loop_order`
    (traincc-winograd-convolutions' transforms) becomes an `scf.for` nest
    whose `position-loops` innermost loops (a tile's 4x4, 2x2 or 3x3
    positions), of at most `max-trips` iterations each, are unrolled
    whole, and the run of such short loops over tiles outside them too if
    the whole run copies the body at most `max-copies` times: LLVM
    vectorizes what is left, a row of 8 tiles with interleaved loads, or
    the loop over images when each image's 2x2 tiles are unrolled (with
    4x4 tiles unrolled it spills, and half of them unrolled is slower than
    none). The body
    picks each position's formula with selects on those loops' indices,
    which become constants: LLVM folds the selects and shares the tile's
    loads among its positions. Left to LLVM, the loops stay and every
    position recomputes every formula. Run it after outlining (the
    transforms are split across threads as linalg ops) and before
    `convert-linalg-to-loops`.
  }];
  let options = [
    Option<"maxTrips", "max-trips", "int64_t", /*default=*/"4",
           "Longest position loop unrolled">,
    Option<"positionLoops", "position-loops", "int64_t", /*default=*/"2",
           "How many of the innermost loops are a tile's positions">,
    Option<"maxCopies", "max-copies", "int64_t", /*default=*/"64",
           "The short loops outside the positions are unrolled if the "
           "body is then copied at most this many times">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def CollapseContiguousLoopsPass
    : Pass<"traincc-collapse-contiguous-loops", "mlir::ModuleOp"> {
  let summary = "Merges neighbouring loops of a linalg.generic that walk "
                "every operand contiguously into one loop";
  let description = [{
    LLVM unrolls short innermost loops (a 28-wide row) into scalar code
    rather than vectorizing them. Two neighbouring loops of a
    `linalg.generic` on buffers become one when they have the same iterator
    type and every operand either reads neither or reads both as
    neighbouring dimensions, in the same order, whose rows follow each
    other without a gap (`stride[outer] == stride[inner] * size[inner]`).
    The operands are reshaped with `memref.collapse_shape`; the arithmetic,
    and the order in which each output's terms are added, stay the same.

    Ops that read their loop indices (`linalg.index`) and ops whose
    indexing maps are not projected permutations (convolutions) are left
    alone. Run it after `linalg-generalize-named-ops`, before
    `traincc-order-loops-for-vectorization`.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def FuseConvChannelSumsPass
    : Pass<"traincc-fuse-conv-channel-sums", "mlir::ModuleOp"> {
  let summary = "Moves the per-channel sum of a convolution's output (a "
                "BatchNorm mean), and the variance's squares after it, into "
                "the convolution's epilogue";
  let description = [{
    Finds, on buffers, a multiply-add `linalg.generic` (the convolutions
    `traincc-vectorize-contractions` rewrites; innermost loop parallel,
    static output of rank 3 or more indexed [batch, channel, ...] by two
    outer parallel loops) and the first later op of its block that adds
    its whole output into a per-channel f32 vector (`init[c] += x[n, c,
    ...]`, read directly or through `memref.collapse_shape`s that keep the
    first two dimensions), with no op in between that may write the
    output. The convolution gets a second output `sums`, a new zero-filled
    `memref<N x C x f32>` indexed by the output's first two indices, which
    its body passes through, and the unit attribute `traincc.channel_sums`:
    `traincc-vectorize-contractions` then adds each vector of outputs it
    stores into `sums[n, c]` (ops it does not vectorize get a loop nest
    that does). The sum becomes `init[c] += sums[n, c]` over n in order,
    and `sums` is freed after it.

    When the sum is followed by BatchNorm's variance, `init[c] += (x[n, c,
    ...] - mean[c])^2` with `mean` the sum divided by the count (and no op
    in between that may write the output, the sum or the mean: a
    synchronized BatchNorm's replica mean keeps it apart), the convolution
    also gets `counts` and `m2` (zero-filled `memref<N x C x f32>`) and the
    mark `traincc.channel_moments`: the vectorizer merges each tile's
    count, mean and squares around that mean into them (Chan et al.'s
    parallel formula, so no large sums cancel when |mean| >> std), and the
    variance becomes `init[c] += m2[n, c] + counts[n, c] * (sums[n, c] /
    counts[n, c] - mean[c])^2` over n in order. Only for a convolution of
    at least `min-variance-terms` multiply-adds per output (the product of
    its reduction loops): the merge costs a horizontal sum and three
    divisions per tile and channel, which a first layer's 9 (1 input
    channel, 3x3) cost more than the pass they save (0.77 against 0.54 +
    0.09 ms on the example CNN, Zen 4, 1 thread); its variance stays a
    separate pass.

    Each [n, c] is summed by the thread that computes image n, in the
    order of the static register tile, so results do not depend on the
    number of threads; they differ from the separate sums' only in where
    rounding happens. Sums of other shapes (not over every index but the
    second, or a variance without the mean's sum before it), and outputs
    written again before the sum, are left alone. Run it after
    `traincc-order-loops-for-vectorization`, before
    `traincc-plan-step-memory` (which places `sums`) and
    `traincc-outline-parallel-loops`.
  }];
  let options = [
    Option<"minVarianceTerms", "min-variance-terms", "int64_t",
           /*default=*/"16",
           "Multiply-adds per output below which the variance stays a "
           "separate pass">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def PlanStepMemoryPass
    : Pass<"traincc-plan-step-memory", "mlir::ModuleOp"> {
  let summary = "Places every temporary of a step function in one workspace "
                "argument, sharing memory between temporaries whose lives "
                "do not overlap";
  let description = [{
    Runs on buffers, before the deallocation passes. In each public
    function, every `memref.alloc` (static shape, identity layout, or an
    error) becomes a `memref.view` of a new last argument
    `memref<Bxi8> {train.workspace}` at a constant, 64-byte aligned
    offset, and its `memref.dealloc`s go. A temporary lives from the
    top-level op that allocates it to the last top-level op that uses it or
    any value derived from it (views, reshapes, results of ops that take
    it); nested regions count as their top-level op, so a loop nest later
    split across threads keeps its buffers for the whole call. Offsets are
    first fit, by first use or largest first, whichever needs less
    (codegen::planArena, shared with `traincc-pack-gpu-workspace`).

    The function gets `train.workspace_bytes` (B), and a training step
    (one that writes a gradient accumulator) gets
    `train.saved_activation_bytes`: the temporaries alive across the op
    that starts computing the loss (written to the `loss` out-parameter),
    i.e. the forward values the backward pass reads. Functions without
    allocations are left as they are. The runtime allocates the workspace
    once, so a step allocates nothing.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def AbsorbZeroFillsPass
    : Pass<"traincc-absorb-zero-fills", "mlir::ModuleOp"> {
  let summary = "Drops the zero fill in front of a contraction and marks the "
                "contraction to start its sums from zero";
  let description = [{
    Each convolution and matmul accumulates into a buffer that a
    `linalg.fill` of +0.0 (or the `linalg.generic` that
    `linalg-generalize-named-ops` makes of it) zeroes first: the fill
    writes the whole output and the contraction reads it back. Where such a
    fill's buffer is, with no
    access to it in between, the output of a multiply-add `linalg.generic`
    (the ops `traincc-vectorize-contractions` rewrites, BatchNorm's channel
    sums as a second output included) that writes every
    element of it (projected-permutation output map) and does not read it
    as an input, the fill is erased and the generic gets the unit attribute
    `traincc.zero_init`. `traincc-vectorize-contractions` then starts the
    first reduction block's accumulators from +0.0 instead of loading the
    output, and re-creates the fill for any marked op it does not rewrite;
    the sums are bit-identical to the fill's.

    Calls without memref operands in between (the kernel timers of
    `traincc --profile-kernels`) do not count as accesses. Run it on
    buffers before `traincc-outline-parallel-loops`, which moves the fill
    and the contraction into separate functions.
  }];
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

    The outlined functions take bare pointers. An operand viewed with a
    static offset and strides (a padded buffer's interior) is passed as the
    identity-layout buffer it views and rebuilt in the body with
    `memref.reinterpret_cast`; ops on views of dynamic offset or strides stay
    inline. A `memref.copy` between views that are not both contiguous (the
    runtime's element-by-element `memrefCopy`) first becomes a `linalg.copy`,
    so that it is split and vectorized like the other ops.

    With `outline-serial`, ops too small to split, or without a loop that
    splits them, move into `@<function>_seq<N>(operands...)` functions
    (marked `traincc.serial_body`) called directly: a step function becomes
    a sequence of calls, which LLVM optimises in time linear in its length,
    and `traincc-share-identical-kernels` keeps one copy of each repeated
    small kernel as it does of the large ones.
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"65536",
           "Smallest iteration count worth dispatching to threads">,
    Option<"outlineSerial", "outline-serial", "bool", /*default=*/"true",
           "Also outline the other ops (static shapes, identity layouts) "
           "into `@<function>_seq<N>(operands...)`, called directly">,
  ];
  let dependentDialects = [
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def ExpandBF16ConversionsPass
    : Pass<"traincc-expand-bf16-conversions", "mlir::ModuleOp"> {
  let summary = "Rewrites bf16 <-> f32 conversions as integer arithmetic";
  let description = [{
    `arith.extf` from bf16 becomes a shift of the bits, `arith.truncf` to
    bf16 the round-to-nearest-even integer sequence (NaN stays NaN), with
    upstream's `arith` bf16 expansion patterns. LLVM would otherwise call
    libgcc's `__truncsfbf2`, which GCC 12 (Debian 12) lacks, or use
    AVX512-BF16's `vcvtneps2bf16`, which flushes denormals to zero: the
    integer form rounds alike on every CPU, as the GPU's `cvt.rn.bf16.f32`
    does. Other arithmetic on bf16 must already be widened to f32
    (`arith-emulate-unsupported-floats`); only the conversions are left.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def ShareIdenticalKernelsPass
    : Pass<"traincc-share-identical-kernels", "mlir::ModuleOp"> {
  let summary = "Keeps one copy of structurally identical outlined kernels";
  let description = [{
    Repeated blocks of a network (every ResNet bottleneck of a stage, the
    forward ops that micro_step and eval_step share) outline into kernels
    that differ only in their name: the same loop nest on the same shapes,
    called with different buffers. This pass keeps the first of each such
    group, points every call at it and erases the rest, so each kernel is
    vectorized, lowered, optimized and emitted once.

    Both kinds of outlined kernels (`traincc.parallel_body` and
    `traincc.serial_body`) are shared. Kernels are compared as printed IR (generic form, without names and
    argument attributes). An argument of the kept kernel stays
    `llvm.noalias` only where it is in every merged copy, since a caller
    may pass overlapping buffers where another does not.
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect",
  ];
}

def VectorizeContractionsPass
    : Pass<"traincc-vectorize-contractions", "mlir::ModuleOp"> {
  let summary = "Lowers convolutions and matmuls (f32, or bf16/f16 with f32 "
                "accumulation) to register-tiled loops over vectors";
  let description = [{
    Each `linalg.generic` on buffers whose body is `out + a * b` (f32
    inputs) or `out + extf(a) * extf(b)` (bf16 or f16 inputs), with an f32
    output, and whose innermost loop walks every moving operand
    contiguously becomes an `scf.for` nest over 1-D vectors of
    `vector-width` f32 lanes along that loop, masked at the end of each row,
    with `vector.fma` multiply-adds (one rounding per product):

    * innermost loop parallel: a vector of outputs is loaded, accumulates
      over all the reduction loops and is stored; inputs that do not move
      with the innermost loop are broadcast. Each output adds its products
      in the order of the scalar loop nest.
    * innermost loop a reduction along which both inputs are contiguous: a
      vector of partial sums accumulates over all the reduction loops, and
      its lanes' sum is added to the output (a blocked sum). With
      `avx512bf16`, bf16 inputs go through `x86vector.avx512.dot`
      (`vdpbf16ps`: pairs of products added before accumulating, denormals
      treated as zero), twice `vector-width` bf16 per step.

    A register tile of outputs accumulates side by side, each in its own
    vector: where one outer parallel loop leaves the first input in place
    and another the second, the tile is their outer product (`fa x fb`
    outputs for `fa + fb` loads per step, the factors divisors of the
    loops' static lengths, at most 16 accumulators with 16 lanes, 8 with
    8), chosen for the fewest loads per multiply-add; otherwise up to 8
    neighbours along one such loop, or along the last outer parallel loop.

    When the inputs that the reduction reads exceed `cache-bytes`, the
    outermost reduction loop runs in blocks around the whole nest, each
    block's inputs small enough to stay cached while every output tile
    walks them; the outputs (or the lanes' sums) are added to memory once
    per block. An op marked `traincc.cache_blocked` (the Winograd
    products, whose inputs come in blocks that stay cached while the outer
    parallel loops hold still) is not blocked. Vectors of outputs still
    add their products in the scalar order; a reduction's lanes are summed
    once per block.

    An op marked `traincc.zero_init` (by `traincc-absorb-zero-fills`: its
    output was not filled) starts the first reduction block's accumulators
    at +0.0 instead of loading the outputs; a marked op left alone gets its
    +0.0 fill back.

    Other linalg ops, and f16 ops when the CPU lacks F16C (`f16c=false`:
    each lane would widen through a libgcc call), are left alone. Run it
    after `traincc-order-loops-for-vectorization` (and the outlining),
    before `convert-linalg-to-loops`; `convert-vector-to-llvm` with
    `enable-x86vector` lowers the result.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes per vector (16: AVX-512)">,
    Option<"avx512bf16", "avx512bf16", "bool", /*default=*/"false",
           "The target CPU has AVX512-BF16: bf16 reductions use vdpbf16ps">,
    Option<"f16c", "f16c", "bool", /*default=*/"true",
           "The target CPU has F16C (vector f16 conversions); without it "
           "f16 contractions stay scalar">,
    Option<"cacheBytes", "cache-bytes", "int64_t", /*default=*/"524288",
           "Bytes of input that one block of the outermost reduction loop "
           "may read (half of a 1 MiB L2); larger reductions run in blocks">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::x86vector::X86VectorDialect",
  ];
}

def VectorizeInterleavedWindowsPass
    : Pass<"traincc-vectorize-interleaved-windows", "mlir::ModuleOp"> {
  let summary = "Vectorizes window ops whose rows interleave their window "
                "offsets (2x2 stride-2 pooling) with loads and shuffles";
  let description = [{
    A `linalg.generic` on buffers whose body is lane-by-lane arithmetic
    (`arith`, `math`, `linalg.index`) and that has a parallel loop `v` and a
    short loop `k` (2 to 4 long) such that some operand walks memory as one
    row `len(k) * v + k` (max pooling's input with 2x2 windows and stride 2,
    its gradient's output, the winners' search), every other operand being
    contiguous along `v` only, along `k` only, or along neither, becomes a
    loop nest over the other loops and over chunks of `vector-width` (or,
    for short rows, fewer) lanes of `v`: each row operand is one contiguous
    masked load of `len(k) * lanes` elements split into its `len(k)` phases
    by `vector.shuffle`, the body runs once per phase on vectors (in the
    order of `k`, which must come after every other reduction loop), and a
    row output is interleaved back by shuffles and stored contiguously; an
    output along `v` only (a reduction over `k`) is stored once per chunk.
    Short static reduction loops outside `k` (the window's height; 16
    iterations at most) are unrolled inside each chunk when every output
    is such a sum, so that it is loaded and stored once per window. The
    other loops run around the chunks outermost first by how far a step of
    each moves the operands in memory (reductions keeping their order), and
    when a sum's chunks of one step of the innermost of them reach the next
    step's output (7-wide rows in vectors of 8), that loop runs its even
    steps, then its odd ones: a masked load right after an overlapping
    masked store waits for it.
    Elements are read and written through flat views of the buffers
    (`memref.extract_strided_metadata`, `memref.reinterpret_cast`).

    Run it after `traincc-outline-parallel-loops`, before
    `convert-linalg-to-loops`.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes per vector (16: AVX-512)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
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
    range the runtime hands it (ModelABI.h). The body, now called by its
    thunk alone, becomes internal, so LLVM inlines it there.

    Functions marked `traincc.serial_body` (small ops outlined so that
    identical ones are shared) stay direct calls, marked `no_inline`: a
    step function stays a short sequence of calls for LLVM.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // TRAINCC_CODEGEN_CPU_PASSES_TD
