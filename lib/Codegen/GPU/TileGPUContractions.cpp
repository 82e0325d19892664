//===- TileGPUContractions.cpp - implicit-GEMM kernels for contractions ---===//
//
// Convolutions, their gradients and matmuls are contractions: two inputs
// multiplied and summed into one output. One thread per output re-reads
// every input element from global memory once per output that uses it; a
// tiled kernel reads each element once per tile and reuses it from shared
// memory and registers. The kernel is built straight from the linalg op, so
// any contraction the lowering produces (strided, padded, grouped, flipped
// for the data gradient) gets one, with the op's own scalar body.
// Mixed-precision contractions (f16/bf16 operands, f32 accumulation) get a
// tensor-core kernel instead, whose warps multiply with mma.sync m16n8k16.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/Common/ChannelSums.h"
#include "traincc/Codegen/GPU/Passes.h"

#include "GPUKernelBuilder.h"
#include "GemmView.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

namespace traincc {
#define GEN_PASS_DEF_TILEGPUCONTRACTIONSPASS
#include "traincc/Codegen/GPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;
using namespace traincc::gpu_kernels;

namespace {

/// Threads per block, as a square of kThreadsPerSide x kThreadsPerSide:
/// threadM walks M, threadN walks N.
constexpr int64_t kThreadsPerSide = 16;
constexpr int64_t kThreads = kThreadsPerSide * kThreadsPerSide;
/// Reduction terms staged in shared memory per step.
constexpr int64_t kTileK = 16;
/// The most outputs along M or N a block computes.
constexpr int64_t kMaxTile = kMaxGemmTile;
/// Threads that hold outputs of one column (channel) of a block's tile:
/// the values of threadM (of the warps along M and their groups in the
/// tensor-core kernel).
constexpr int64_t kPartialRows = kThreadsPerSide;
/// Grid limits of CUDA (x is 2^31 - 1).
constexpr int64_t kMaxGridX = (int64_t(1) << 31) - 1;
constexpr int64_t kMaxGridYZ = 65535;

/// Tile sizes of one kernel: the block computes tileM x tileN outputs, each
/// thread a (tileM / 16) x (tileN / 16) sub-tile strided by 16.
struct Tiling {
  int64_t tileM, tileN, perThreadM, perThreadN;
  std::array<int64_t, 3> grid;
};

std::optional<Tiling> chooseTiling(const GemmView &view) {
  auto tile = [](int64_t size) {
    return std::clamp<int64_t>(llvm::PowerOf2Ceil(size), kThreadsPerSide,
                               kMaxTile);
  };
  Tiling t;
  t.tileM = tile(view.size(view.m));
  t.tileN = tile(view.size(view.n));
  t.perThreadM = t.tileM / kThreadsPerSide;
  t.perThreadN = t.tileN / kThreadsPerSide;
  t.grid = {int64_t(llvm::divideCeil(view.size(view.m), t.tileM)),
            int64_t(llvm::divideCeil(view.size(view.n), t.tileN)),
            view.size(view.batch)};
  if (t.grid[0] > kMaxGridX || t.grid[1] > kMaxGridYZ ||
      t.grid[2] > kMaxGridYZ)
    return std::nullopt;
  return t;
}

/// What a tiled kernel does with its finished outputs besides storing
/// them.
struct OutputPlan {
  /// Where the sums per (M tile, channel) of the outputs' terms go (the
  /// outputs themselves, or the epilogue's terms); empty if none.
  SmallVector<Value> partials;
  /// With kChannelMomentsAttrName (else null): where the counts and
  /// squares around the means of partials[0] go.
  Value counts, m2;
  /// The epilogue (kEpilogueAttrName) applied to each output, which is
  /// then not stored; null if none. Its loops are the contraction's
  /// `epilogueLoops`, and its outputs with `isPartial` set are `partials`,
  /// in order.
  linalg::GenericOp epilogue;
  SmallVector<unsigned> epilogueLoops;
  SmallVector<bool> isPartial;
};

/// What the scalar and the tensor-core kernels share: the op, its GEMM
/// view, this block's origin, and the iterations at tile positions.
class ContractionKernelBase {
protected:
  ContractionKernelBase(linalg::LinalgOp op, const GemmView &view,
                        std::optional<Value> initFill, const OutputPlan &plan)
      : op(op), view(view), loc(op.getLoc()), initFill(initFill),
        plan(plan) {}

  /// An output a thread holds: its position and the terms of each of the
  /// plan's partials.
  struct HeldOutput {
    Value m, n;
    SmallVector<Value, 2> terms;
  };

  Value c(OpBuilder &b, int64_t value) { return indexConstant(b, loc, value); }

  static Type elementType(OpOperand *operand) {
    return cast<MemRefType>(operand->get().getType()).getElementType();
  }

  Value offset(OpBuilder &b, Value base, int64_t delta) {
    return delta ? arith::AddIOp::create(b, loc, base, c(b, delta)).getResult()
                 : base;
  }

  Value clamp(OpBuilder &b, Value position, int64_t size) {
    return arith::MinUIOp::create(b, loc, position, c(b, size - 1));
  }
  Value clampM(OpBuilder &b, Value m) {
    return clamp(b, m, view.size(view.m));
  }
  Value clampN(OpBuilder &b, Value n) {
    return clamp(b, n, view.size(view.n));
  }

  /// The loop induction values of the iteration at flattened positions m,
  /// n, k of their groups, in this block's batch.
  SmallVector<Value> ivs(OpBuilder &b, Value m, Value n, Value k) {
    SmallVector<Value> values(view.ranges.size());
    auto place = [&](ArrayRef<unsigned> group, ArrayRef<Value> positions) {
      for (auto [dim, position] : llvm::zip(group, positions))
        values[dim] = position;
    };
    place(view.m, delinearize(b, loc, m, view.sizes(view.m)));
    place(view.n, delinearize(b, loc, n, view.sizes(view.n)));
    place(view.k, delinearize(b, loc, k, view.sizes(view.k)));
    place(view.batch, batchPos);
    return values;
  }

  /// Whether consecutive elements of `operand` in memory run along its
  /// group (M or N) rather than along K: then consecutive threads stage
  /// consecutive group positions, so their loads coalesce.
  bool groupIsContiguous(OpOperand &operand, ArrayRef<unsigned> group) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (map.getNumResults() == 0)
      return true;
    AffineExpr last = map.getResults().back();
    return llvm::any_of(group, [&](unsigned dim) {
      return last.isFunctionOfDim(dim);
    });
  }

  /// Sets m0, n0 and batchPos from the block ids of `launch`.
  void placeBlock(OpBuilder &b, gpu::LaunchOp launch, int64_t tileM,
                  int64_t tileN) {
    m0 = arith::MulIOp::create(b, loc, launch.getBlockIds().x, c(b, tileM));
    n0 = arith::MulIOp::create(b, loc, launch.getBlockIds().y, c(b, tileN));
    batchPos = delinearize(b, loc, launch.getBlockIds().z,
                           view.sizes(view.batch));
  }

  /// The first value of the accumulator of output (m, n): the constant the
  /// output was filled with, or the output (linalg's init); positions out
  /// of range are clamped (their sums are dropped).
  Value initialValue(OpBuilder &b, Value m, Value n) {
    if (initFill)
      return *initFill;
    return loadOperand(b, loc, op, *op.getDpsInitOperand(0),
                       ivs(b, clampM(b, m), clampN(b, n), c(b, 0)));
  }

  /// A builder inside `if (m, n) is in range`, built at `b`.
  OpBuilder ifInRange(OpBuilder &b, Value m, Value n) {
    Value sizeM = c(b, view.size(view.m)), sizeN = c(b, view.size(view.n));
    Value inRange = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, m, sizeM),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, n, sizeN));
    return scf::IfOp::create(b, loc, inRange, false).getThenBodyBuilder();
  }

  /// Stores `value` into output (m, n) if that is in range.
  void storeOutput(OpBuilder &b, Value value, Value m, Value n) {
    OpBuilder then = ifInRange(b, m, n);
    OpOperand *out = op.getDpsInitOperand(0);
    memref::StoreOp::create(
        then, loc, value, out->get(),
        operandIndices(then, loc, op, *out, ivs(then, m, n, c(then, 0))));
  }

  /// Finishes the output (m, n) of final value `value`: stores it, or
  /// applies the epilogue to it and stores the epilogue's outputs (those in
  /// range). Returns its terms of the plan's partials.
  SmallVector<Value, 2> finishOutput(OpBuilder &b, Value value, Value m,
                                     Value n) {
    linalg::GenericOp epilogue = plan.epilogue;
    if (!epilogue) {
      storeOutput(b, value, m, n);
      return {value};
    }
    // Out of range, the epilogue reads clamped positions; its outputs
    // there are not stored and its terms not summed.
    SmallVector<Value> loops = ivs(b, clampM(b, m), clampN(b, n), c(b, 0));
    SmallVector<Value> at = llvm::map_to_vector(
        plan.epilogueLoops, [&](unsigned loop) { return loops[loop]; });
    SmallVector<Value> args = {value};
    SmallVector<OpOperand *> inputs = epilogue.getDpsInputOperands();
    for (OpOperand *input : ArrayRef(inputs).drop_front())
      args.push_back(isa<MemRefType>(input->get().getType())
                         ? loadOperand(b, loc, epilogue, *input, at)
                         : input->get());
    for (auto [index, init] : llvm::enumerate(epilogue.getDpsInitsMutable())) {
      BlockArgument arg = epilogue.getRegionOutputArgs()[index];
      // A partial's argument is 0: the body yields 0 + term.
      if (plan.isPartial[index] || arg.use_empty())
        args.push_back(arith::ConstantOp::create(
            b, loc, cast<TypedAttr>(b.getZeroAttr(arg.getType()))));
      else
        args.push_back(loadOperand(b, loc, epilogue, init, at));
    }
    SmallVector<Value> results = inlineBody(b, epilogue, args);
    OpBuilder then = ifInRange(b, m, n);
    SmallVector<Value, 2> terms;
    for (auto [index, init] : llvm::enumerate(epilogue.getDpsInitsMutable())) {
      if (plan.isPartial[index]) {
        terms.push_back(results[index]);
        continue;
      }
      memref::StoreOp::create(
          then, loc, results[index], init.get(),
          operandIndices(then, loc, epilogue, init, at));
    }
    return terms;
  }

  /// The epilogue of a marked convolution (kChannelPartialsAttrName) or of
  /// an epilogue with partials: partials[i][blockIdx.x, channel] = the sum
  /// of the terms i of this block's outputs of that channel, from
  /// `columns` (this thread's outputs, one list per channel it holds, in a
  /// fixed order). Each thread adds its outputs in
  /// range and stores the sum at [owner, channel in tile] of a shared
  /// buffer (`owner` < kPartialRows tells apart the threads holding one
  /// channel); after a barrier, thread t < tileN adds the kPartialRows sums
  /// of channel t in order. No atomics: the same result on every run.
  /// With moments (counts), each thread also stores its count and its
  /// squares around its own mean, and thread t merges the rows' moments
  /// with Chan et al.'s formula in the same order.
  void storeChannelPartials(OpBuilder &b, gpu::LaunchOp launch, Value thread,
                            int64_t tileN, Value owner,
                            ArrayRef<SmallVector<HeldOutput>> columns) {
    Type f32 = b.getF32Type();
    Value counts = plan.counts, m2 = plan.m2;
    size_t sums = plan.partials.size();
    SmallVector<Value> shared;
    for (size_t i = 0; i < sums; ++i)
      shared.push_back(addSharedBuffer(launch, {kPartialRows, tileN}, f32));
    Value sharedCounts, sharedM2;
    if (counts) {
      sharedCounts = addSharedBuffer(launch, {kPartialRows, tileN}, f32);
      sharedM2 = addSharedBuffer(launch, {kPartialRows, tileN}, f32);
    }
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
    Value sizeM = c(b, view.size(view.m));
    for (ArrayRef<HeldOutput> column : columns) {
      // Rows past M hold sums of clamped inputs: dropped, not added.
      SmallVector<Value> inRanges;
      for (const HeldOutput &output : column)
        inRanges.push_back(arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::ult, output.m, sizeM));
      Value inTile = arith::SubIOp::create(b, loc, column.front().n, n0);
      SmallVector<Value> totals;
      for (size_t i = 0; i < sums; ++i) {
        Value sum = zero;
        for (auto [output, inRange] : llvm::zip(column, inRanges))
          sum = arith::AddFOp::create(
              b, loc, sum,
              arith::SelectOp::create(b, loc, inRange, output.terms[i], zero));
        memref::StoreOp::create(b, loc, sum, shared[i],
                                ValueRange{owner, inTile});
        totals.push_back(sum);
      }
      if (!counts)
        continue;
      Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0));
      Value count = zero;
      for (Value inRange : inRanges)
        count = arith::AddFOp::create(
            b, loc, count, arith::SelectOp::create(b, loc, inRange, one, zero));
      Value mean = arith::DivFOp::create(
          b, loc, totals[0], arith::MaximumFOp::create(b, loc, count, one));
      Value squares = zero;
      for (auto [output, inRange] : llvm::zip(column, inRanges)) {
        Value centred = arith::SelectOp::create(
            b, loc, inRange,
            arith::SubFOp::create(b, loc, output.terms[0], mean), zero);
        squares = arith::AddFOp::create(
            b, loc, squares, arith::MulFOp::create(b, loc, centred, centred));
      }
      memref::StoreOp::create(b, loc, count, sharedCounts,
                              ValueRange{owner, inTile});
      memref::StoreOp::create(b, loc, squares, sharedM2,
                              ValueRange{owner, inTile});
    }
    gpu::BarrierOp::create(b, loc);
    Value channel = arith::AddIOp::create(b, loc, n0, thread);
    Value active = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, thread,
                              c(b, tileN)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, channel,
                              c(b, view.size(view.n))));
    auto guard = scf::IfOp::create(b, loc, active, false);
    OpBuilder then = guard.getThenBodyBuilder();
    SmallVector<Value> buffers = shared;
    if (counts)
      buffers.append({sharedCounts, sharedM2});
    SmallVector<Value> first;
    for (Value buffer : buffers)
      first.push_back(memref::LoadOp::create(
          then, loc, buffer, ValueRange{c(then, 0), thread}));
    auto rows = scf::ForOp::create(then, loc, c(then, 1), c(then, kPartialRows),
                                   c(then, 1), first);
    {
      OpBuilder in = OpBuilder::atBlockBegin(rows.getBody());
      SmallVector<Value> row;
      for (Value buffer : buffers)
        row.push_back(memref::LoadOp::create(
            in, loc, buffer, ValueRange{rows.getInductionVar(), thread}));
      ValueRange carried = rows.getRegionIterArgs();
      SmallVector<Value> next;
      for (size_t i = 0; i < sums; ++i)
        next.push_back(arith::AddFOp::create(in, loc, carried[i], row[i]));
      if (counts)
        llvm::append_range(
            next,
            mergeMoments(in, {carried[0], carried[sums], carried[sums + 1]},
                         {row[0], row[sums], row[sums + 1]}));
      scf::YieldOp::create(in, loc, next);
    }
    Value block = launch.getBlockIds().x;
    SmallVector<Value> destinations = plan.partials;
    if (counts)
      destinations.append({counts, m2});
    for (auto [result, destination] :
         llvm::zip(rows.getResults(), destinations))
      memref::StoreOp::create(then, loc, result, destination,
                              ValueRange{block, channel});
  }

  /// The count and m2 of the moments (sum, count, m2) `a` and `b` merged
  /// (Chan et al.): both m2s plus the means' squared distance weighted by
  /// na * nb / (na + nb), zero while either side is empty.
  SmallVector<Value> mergeMoments(OpBuilder &b, ValueRange a, ValueRange o) {
    Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0));
    auto meanOf = [&](ValueRange m) -> Value {
      return arith::DivFOp::create(
          b, loc, m[0], arith::MaximumFOp::create(b, loc, m[1], one));
    };
    Value meanA = meanOf(a);
    Value meanO = meanOf(o);
    Value delta = arith::SubFOp::create(b, loc, meanO, meanA);
    Value count = arith::AddFOp::create(b, loc, a[1], o[1]);
    Value product = arith::MulFOp::create(b, loc, a[1], o[1]);
    Value weight = arith::DivFOp::create(
        b, loc, product, arith::MaximumFOp::create(b, loc, count, one));
    Value both = arith::AddFOp::create(b, loc, a[2], o[2]);
    Value spread = arith::MulFOp::create(
        b, loc, arith::MulFOp::create(b, loc, delta, delta), weight);
    return {count, arith::AddFOp::create(b, loc, both, spread)};
  }

  linalg::LinalgOp op;
  const GemmView &view;
  Location loc;
  std::optional<Value> initFill;
  const OutputPlan &plan;
  Value m0, n0;
  SmallVector<Value> batchPos;
};

/// Builds the scalar kernel of one contraction.
class KernelBuilder : ContractionKernelBase {
public:
  KernelBuilder(linalg::LinalgOp op, const GemmView &view, const Tiling &tiling,
                std::optional<Value> initFill, const OutputPlan &plan)
      : ContractionKernelBase(op, view, initFill, plan), t(tiling) {}

  void build(OpBuilder &outer) {
    gpu::LaunchOp launch = createLaunch(outer, loc, t.grid, kThreads);
    OpBuilder b(launch.getBody().front().getTerminator());
    Type typeA = elementType(op.getDpsInputOperand(0));
    Type typeB = elementType(op.getDpsInputOperand(1));
    // +1 column: staging along K writes a column, which would otherwise
    // hit one shared-memory bank 16 times.
    sharedA = addSharedBuffer(launch, {kTileK, t.tileM + 1}, typeA);
    sharedB = addSharedBuffer(launch, {kTileK, t.tileN + 1}, typeB);

    thread = launch.getThreadIds().x;
    Value side = c(b, kThreadsPerSide);
    Value low = arith::RemUIOp::create(b, loc, thread, side);
    Value high = arith::DivUIOp::create(b, loc, thread, side);
    // Neighbouring threads hold neighbouring outputs in memory: along M
    // where the output is contiguous along M (a convolution's pixels in
    // NCHW), along N otherwise (a matmul's rows), so that the stores, and
    // an epilogue's loads and stores, coalesce. Each output's terms and
    // each partial's order are the same either way.
    bool alongM = groupIsContiguous(*op.getDpsInitOperand(0), view.m);
    threadM = alongM ? low : high;
    threadN = alongM ? high : low;
    placeBlock(b, launch, t.tileM, t.tileN);

    // Accumulators start from the output (linalg's init), or from the
    // constant it was just filled with; outputs out of range are computed
    // on clamped inputs and dropped.
    SmallVector<Value> acc;
    forEachOutput(b, [&](OpBuilder &at, Value m, Value n, int64_t) {
      acc.push_back(initialValue(at, m, n));
    });

    scf::ForOp steps = buildSteps(b, acc);
    // Column j of this thread's sub-tile is channel n0 + threadN + 16 j;
    // the 16 values of threadM share it.
    SmallVector<SmallVector<HeldOutput>> columns(t.perThreadN);
    forEachOutput(b, [&](OpBuilder &at, Value m, Value n, int64_t index) {
      columns[index % t.perThreadN].push_back(
          {m, n, finishOutput(at, steps.getResult(index), m, n)});
    });
    if (!plan.partials.empty())
      storeChannelPartials(b, launch, thread, t.tileN, threadM, columns);
  }

private:
  /// The loop over K in steps of kTileK, carrying the accumulators `acc`
  /// (its first results) and the registers of the next slices.
  scf::ForOp buildSteps(OpBuilder &b, ArrayRef<Value> acc) {
    // Software pipelining: each step stores the slice it loaded into
    // registers during the previous step's arithmetic, then loads the next
    // one, so global memory latency hides behind the multiply-adds.
    OpOperand &inA = *op.getDpsInputOperand(0);
    OpOperand &inB = *op.getDpsInputOperand(1);
    int64_t sizeK = view.size(view.k);
    int64_t numAcc = acc.size();
    SmallVector<Value> carried(acc.begin(), acc.end());
    llvm::append_range(carried, loadSlice(b, inA, t.tileM, c(b, 0), true));
    int64_t numA = carried.size() - numAcc;
    llvm::append_range(carried, loadSlice(b, inB, t.tileN, c(b, 0), false));
    auto steps = scf::ForOp::create(b, loc, c(b, 0),
                                    c(b, llvm::divideCeil(sizeK, kTileK)),
                                    c(b, 1), carried);
    {
      OpBuilder s = OpBuilder::atBlockBegin(steps.getBody());
      ValueRange args = steps.getRegionIterArgs();
      Value k0 = arith::MulIOp::create(s, loc, steps.getInductionVar(),
                                       c(s, kTileK));
      storeSlice(s, args.slice(numAcc, numA), inA, sharedA, t.tileM, true);
      storeSlice(s, args.drop_front(numAcc + numA), inB, sharedB, t.tileN,
                 false);
      gpu::BarrierOp::create(s, loc);
      // Past the last step the loads are clamped into range and unused.
      Value nextK0 = arith::AddIOp::create(s, loc, k0, c(s, kTileK));
      SmallVector<Value> next = loadSlice(s, inA, t.tileM, nextK0, true);
      llvm::append_range(next, loadSlice(s, inB, t.tileN, nextK0, false));
      // The last step may be short; terms past K must not be applied, as
      // the body need not ignore zeros.
      Value count = c(s, kTileK);
      if (sizeK % kTileK)
        count = arith::MinUIOp::create(
            s, loc, count, arith::SubIOp::create(s, loc, c(s, sizeK), k0));
      auto terms = scf::ForOp::create(s, loc, c(s, 0), count, c(s, 1),
                                      args.take_front(numAcc));
      {
        OpBuilder in = OpBuilder::atBlockBegin(terms.getBody());
        Value k = terms.getInductionVar();
        SmallVector<Value> a, bv;
        for (int64_t i = 0; i < t.perThreadM; ++i)
          a.push_back(memref::LoadOp::create(
              in, loc, sharedA,
              ValueRange{k, offset(in, threadM, i * kThreadsPerSide)}));
        for (int64_t j = 0; j < t.perThreadN; ++j)
          bv.push_back(memref::LoadOp::create(
              in, loc, sharedB,
              ValueRange{k, offset(in, threadN, j * kThreadsPerSide)}));
        SmallVector<Value> updated;
        for (int64_t i = 0; i < t.perThreadM; ++i)
          for (int64_t j = 0; j < t.perThreadN; ++j) {
            Value current = terms.getRegionIterArgs()[i * t.perThreadN + j];
            updated.push_back(
                inlineBody(in, op, ValueRange{a[i], bv[j], current}).front());
          }
        scf::YieldOp::create(in, loc, updated);
      }
      // The next step overwrites the tiles every thread is reading.
      gpu::BarrierOp::create(s, loc);
      SmallVector<Value> yielded(terms.getResults());
      llvm::append_range(yielded, next);
      scf::YieldOp::create(s, loc, yielded);
    }

    return steps;
  }

  /// Calls `fn(b, m, n, index)` for each output of this thread's sub-tile.
  void forEachOutput(OpBuilder &b,
                     llvm::function_ref<void(OpBuilder &, Value, Value,
                                             int64_t)> fn) {
    for (int64_t i = 0; i < t.perThreadM; ++i)
      for (int64_t j = 0; j < t.perThreadN; ++j)
        fn(b,
           offset(b, arith::AddIOp::create(b, loc, m0, threadM),
                  i * kThreadsPerSide),
           offset(b, arith::AddIOp::create(b, loc, n0, threadN),
                  j * kThreadsPerSide),
           i * t.perThreadN + j);
  }

  /// Where this thread's `round`-th element of a tile x kTileK slice
  /// goes: (position in the tile, k).
  std::pair<Value, Value> slot(OpBuilder &b, OpOperand &operand,
                               int64_t tile, int64_t round, bool isA) {
    bool groupFast = groupIsContiguous(operand, isA ? view.m : view.n);
    Value element = offset(b, thread, round * kThreads);
    if (groupFast)
      return {arith::RemUIOp::create(b, loc, element, c(b, tile)),
              arith::DivUIOp::create(b, loc, element, c(b, tile))};
    return {arith::DivUIOp::create(b, loc, element, c(b, kTileK)),
            arith::RemUIOp::create(b, loc, element, c(b, kTileK))};
  }

  int64_t rounds(int64_t tile) const { return tile * kTileK / kThreads; }

  /// Loads this thread's elements of the tile x kTileK slice of `operand`
  /// at (group origin, k0). Positions past the iteration space are clamped
  /// to its last element: they feed only outputs or terms never used.
  SmallVector<Value> loadSlice(OpBuilder &b, OpOperand &operand,
                               int64_t tile, Value k0, bool isA) {
    Value origin = isA ? m0 : n0;
    int64_t sizeK = view.size(view.k);
    SmallVector<Value> values;
    for (int64_t round = 0; round < rounds(tile); ++round) {
      auto [position, k] = slot(b, operand, tile, round, isA);
      Value globalPos = arith::AddIOp::create(b, loc, origin, position);
      Value globalK = clamp(b, arith::AddIOp::create(b, loc, k0, k), sizeK);
      Value zero = c(b, 0);
      SmallVector<Value> at =
          isA ? ivs(b, clampM(b, globalPos), zero, globalK)
              : ivs(b, zero, clampN(b, globalPos), globalK);
      values.push_back(loadOperand(b, loc, op, operand, at));
    }
    return values;
  }

  /// Stores what loadSlice loaded into `shared`[k][position].
  void storeSlice(OpBuilder &b, ValueRange values, OpOperand &operand,
                  Value shared, int64_t tile, bool isA) {
    for (int64_t round = 0; round < rounds(tile); ++round) {
      auto [position, k] = slot(b, operand, tile, round, isA);
      memref::StoreOp::create(b, loc, values[round], shared,
                              ValueRange{k, position});
    }
  }

  const Tiling &t;
  Value sharedA, sharedB, thread, threadM, threadN;
};

//===----------------------------------------------------------------------===//
// Tensor-core kernels
//===----------------------------------------------------------------------===//

/// f16/bf16 contractions that accumulate in f32 (the mixed-precision
/// convolutions, their gradients and matmuls) run on the tensor cores: each
/// warp issues warp-collective mma.sync.m16n8k16 on fragments it reads from
/// the shared-memory tiles.
namespace mma {
constexpr int64_t kWarpSize = 32;
/// Warps per block, as kWarpsM x kWarpsN over the block's tile.
constexpr int64_t kWarpsM = 2, kWarpsN = 2;
constexpr int64_t kThreads = kWarpsM * kWarpsN * kWarpSize;
/// The shape of one mma.sync.
constexpr int64_t kM = 16, kN = 8, kK = 16;
/// Reduction terms staged in shared memory per step: two mma.sync deep.
constexpr int64_t kTileK = 2 * kK;
/// Halves of padding after each row of a tile (16 bytes): the 8 rows a
/// fragment load touches fall into distinct banks.
constexpr int64_t kPadK = 8;
constexpr int64_t kMaxTile = kMaxGemmTile;
/// Each fragment column is held by the 8 groups of each warp along M.
static_assert(kWarpsM * 8 == kPartialRows);
} // namespace mma

/// The operand type (f16 or bf16) of a contraction that the tensor cores
/// compute: its body is `out + extf(a) * extf(b)` with a and b of that type
/// and out f32 (the products are exact in f32).
std::optional<Type> tensorCoreOperandType(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (body->getNumArguments() != 3 || body->getOperations().size() != 5)
    return std::nullopt;
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return std::nullopt;
  Value a = body->getArgument(0), b = body->getArgument(1),
        out = body->getArgument(2);
  Type low = a.getType();
  if (!(low.isF16() || low.isBF16()) || b.getType() != low ||
      !out.getType().isF32())
    return std::nullopt;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return std::nullopt;
  Value product = add.getLhs() == out   ? add.getRhs()
                  : add.getRhs() == out ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return std::nullopt;
  auto widened = [](Value value) -> Value {
    auto ext = value.getDefiningOp<arith::ExtFOp>();
    return ext && ext.getType().isF32() ? ext.getIn() : Value();
  };
  Value x = widened(mul.getLhs()), y = widened(mul.getRhs());
  if (!((x == a && y == b) || (x == b && y == a)))
    return std::nullopt;
  return low;
}

/// Tile sizes of a tensor-core kernel: the block computes tileM x tileN
/// outputs, each of its 2 x 2 warps (tileM / 2) x (tileN / 2) of them as
/// fragsM x fragsN mma.sync tiles of 16 x 8.
struct MmaTiling {
  int64_t tileM, tileN, fragsM, fragsN;
  std::array<int64_t, 3> grid;
};

std::optional<MmaTiling> chooseMmaTiling(const GemmView &view) {
  auto tile = [](int64_t size, int64_t smallest) {
    return std::clamp<int64_t>(llvm::PowerOf2Ceil(size), smallest,
                               mma::kMaxTile);
  };
  MmaTiling t;
  t.tileM = tile(view.size(view.m), mma::kWarpsM * mma::kM);
  t.tileN = tile(view.size(view.n), mma::kWarpsN * mma::kN);
  t.fragsM = t.tileM / (mma::kWarpsM * mma::kM);
  t.fragsN = t.tileN / (mma::kWarpsN * mma::kN);
  t.grid = {int64_t(llvm::divideCeil(view.size(view.m), t.tileM)),
            int64_t(llvm::divideCeil(view.size(view.n), t.tileN)),
            view.size(view.batch)};
  if (t.grid[0] > kMaxGridX || t.grid[1] > kMaxGridYZ ||
      t.grid[2] > kMaxGridYZ)
    return std::nullopt;
  return t;
}

/// Builds the tensor-core kernel of one contraction. The shared tiles hold
/// the first input as tileM rows of kTileK terms and the second as tileN
/// rows of kTileK terms (both K-contiguous, as mma.sync's row-major A and
/// column-major B fragments read them). Terms past K are staged as zeros in
/// both tiles, so every mma.sync adds exact zeros for them; rows past M or
/// N are clamped into range and their outputs dropped. Every thread of the
/// block executes every mma.sync (no divergence).
class MmaKernelBuilder : ContractionKernelBase {
public:
  MmaKernelBuilder(linalg::LinalgOp op, const GemmView &view,
                   const MmaTiling &tiling, Type low,
                   std::optional<Value> initFill, const OutputPlan &plan)
      : ContractionKernelBase(op, view, initFill, plan), t(tiling), low(low) {}

  void build(OpBuilder &outer) {
    gpu::LaunchOp launch = createLaunch(outer, loc, t.grid, mma::kThreads);
    OpBuilder b(launch.getBody().front().getTerminator());
    sharedA =
        addSharedBuffer(launch, {t.tileM, mma::kTileK + mma::kPadK}, low);
    sharedB =
        addSharedBuffer(launch, {t.tileN, mma::kTileK + mma::kPadK}, low);

    thread = launch.getThreadIds().x;
    warp = arith::DivUIOp::create(b, loc, thread, c(b, mma::kWarpSize));
    Value lane = arith::RemUIOp::create(b, loc, thread, c(b, mma::kWarpSize));
    // PTX's groupID and threadID_in_group of the fragment layouts.
    groupId = arith::DivUIOp::create(b, loc, lane, c(b, 4));
    Value inGroup = arith::RemUIOp::create(b, loc, lane, c(b, 4));
    pairK = arith::MulIOp::create(b, loc, inGroup, c(b, 2));
    warpM = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, warp, c(b, mma::kWarpsN)),
        c(b, t.tileM / mma::kWarpsM));
    warpN = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, warp, c(b, mma::kWarpsN)),
        c(b, t.tileN / mma::kWarpsN));
    placeBlock(b, launch, t.tileM, t.tileN);

    SmallVector<Value> acc;
    forEachOutput(b, [&](OpBuilder &at, Value m, Value n, int64_t) {
      acc.push_back(initialValue(at, m, n));
    });
    scf::ForOp steps = buildSteps(b, acc);
    // Fragment column j holds channels 2t and 2t + 1 (registers r & 1);
    // the rows of both warps along M and their 8 groups share them.
    SmallVector<SmallVector<HeldOutput>> columns(2 * t.fragsN);
    forEachOutput(b, [&](OpBuilder &at, Value m, Value n, int64_t index) {
      int64_t fragment = index / 4, reg = index % 4;
      columns[(fragment % t.fragsN) * 2 + reg % 2].push_back(
          {m, n, finishOutput(at, steps.getResult(index), m, n)});
    });
    if (plan.partials.empty())
      return;
    Value owner = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(
            b, loc, arith::DivUIOp::create(b, loc, warp, c(b, mma::kWarpsN)),
            c(b, 8)),
        groupId);
    storeChannelPartials(b, launch, thread, t.tileN, owner, columns);
  }

private:
  /// As the scalar kernel's loop: each step stores the slices it carries,
  /// loads the next ones, then runs two mma.sync deep on every fragment.
  scf::ForOp buildSteps(OpBuilder &b, ArrayRef<Value> acc) {
    OpOperand &inA = *op.getDpsInputOperand(0);
    OpOperand &inB = *op.getDpsInputOperand(1);
    int64_t sizeK = view.size(view.k);
    int64_t numAcc = acc.size();
    SmallVector<Value> carried(acc.begin(), acc.end());
    llvm::append_range(carried, loadSlice(b, inA, t.tileM, c(b, 0), true));
    int64_t numA = carried.size() - numAcc;
    llvm::append_range(carried, loadSlice(b, inB, t.tileN, c(b, 0), false));
    auto steps = scf::ForOp::create(
        b, loc, c(b, 0), c(b, llvm::divideCeil(sizeK, mma::kTileK)), c(b, 1),
        carried);
    OpBuilder s = OpBuilder::atBlockBegin(steps.getBody());
    ValueRange args = steps.getRegionIterArgs();
    Value k0 = arith::MulIOp::create(s, loc, steps.getInductionVar(),
                                     c(s, mma::kTileK));
    storeSlice(s, args.slice(numAcc, numA), inA, sharedA, t.tileM, true);
    storeSlice(s, args.drop_front(numAcc + numA), inB, sharedB, t.tileN,
               false);
    gpu::BarrierOp::create(s, loc);
    Value nextK0 = arith::AddIOp::create(s, loc, k0, c(s, mma::kTileK));
    SmallVector<Value> next = loadSlice(s, inA, t.tileM, nextK0, true);
    llvm::append_range(next, loadSlice(s, inB, t.tileN, nextK0, false));
    SmallVector<Value> sums(args.take_front(numAcc));
    for (int64_t kk = 0; kk < mma::kTileK; kk += mma::kK)
      sums = multiplyAccumulate(s, kk, sums);
    // The next step overwrites the tiles every warp is reading.
    gpu::BarrierOp::create(s, loc);
    llvm::append_range(sums, next);
    scf::YieldOp::create(s, loc, sums);
    return steps;
  }

  /// Two elements of a shared tile, at (row, k) and (row, k + 1), packed
  /// into one 32-bit register as mma.sync takes them (the first in the low
  /// half): an i32 for bf16, a vector<2xf16> for f16.
  Value pack(OpBuilder &b, Value shared, Value row, Value k) {
    auto i16 = b.getIntegerType(16), i32 = b.getI32Type();
    auto half = [&](Value at) -> Value {
      Value value = memref::LoadOp::create(b, loc, shared, ValueRange{row, at});
      return arith::ExtUIOp::create(
          b, loc, i32, arith::BitcastOp::create(b, loc, i16, value));
    };
    Value packed = arith::OrIOp::create(
        b, loc, half(k),
        arith::ShLIOp::create(
            b, loc, half(offset(b, k, 1)),
            arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(16))));
    if (low.isBF16())
      return packed;
    return LLVM::BitcastOp::create(b, loc, VectorType::get({2}, low), packed);
  }

  /// One mma.sync deep (terms kk..kk+15 of the tiles) on every fragment of
  /// this warp; returns the updated accumulators.
  SmallVector<Value> multiplyAccumulate(OpBuilder &b, int64_t kk,
                                        ArrayRef<Value> acc) {
    Value k = offset(b, pairK, kk);
    Value k8 = offset(b, k, 8);
    // A (16 x 16, row-major): registers (g, k), (g + 8, k), (g, k + 8),
    // (g + 8, k + 8), each with its right neighbour.
    SmallVector<SmallVector<Value, 4>> fragsA;
    for (int64_t i = 0; i < t.fragsM; ++i) {
      Value row = arith::AddIOp::create(b, loc, warpM,
                                        offset(b, groupId, i * mma::kM));
      Value row8 = offset(b, row, 8);
      fragsA.push_back({pack(b, sharedA, row, k), pack(b, sharedA, row8, k),
                        pack(b, sharedA, row, k8),
                        pack(b, sharedA, row8, k8)});
    }
    // B (16 x 8, column-major): column g, terms k and k + 8 with their
    // next ones.
    SmallVector<SmallVector<Value, 2>> fragsB;
    for (int64_t j = 0; j < t.fragsN; ++j) {
      Value col = arith::AddIOp::create(b, loc, warpN,
                                        offset(b, groupId, j * mma::kN));
      fragsB.push_back({pack(b, sharedB, col, k), pack(b, sharedB, col, k8)});
    }
    MLIRContext *ctx = b.getContext();
    Type f32 = b.getF32Type();
    auto resultType =
        LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
    NVVM::MMATypes ptxType =
        low.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
    SmallVector<Value> updated;
    for (int64_t i = 0; i < t.fragsM; ++i)
      for (int64_t j = 0; j < t.fragsN; ++j) {
        ArrayRef<Value> sums = acc.slice((i * t.fragsN + j) * 4, 4);
        auto mmaOp = NVVM::MmaOp::create(
            b, loc, resultType, fragsA[i], fragsB[j], sums,
            {mma::kM, mma::kN, mma::kK}, std::nullopt, std::nullopt,
            std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                           NVVM::MMALayout::col});
        for (int64_t r = 0; r < 4; ++r)
          updated.push_back(LLVM::ExtractValueOp::create(
              b, loc, mmaOp.getResult(), ArrayRef<int64_t>{r}));
      }
    return updated;
  }

  /// Calls `fn(b, m, n, index)` for each output this thread holds: the
  /// C/D fragments of its warp's tiles, (g, 2t), (g, 2t + 1), (g + 8, 2t),
  /// (g + 8, 2t + 1) each.
  void forEachOutput(OpBuilder &b,
                     llvm::function_ref<void(OpBuilder &, Value, Value,
                                             int64_t)> fn) {
    Value rowBase = arith::AddIOp::create(
        b, loc, m0, arith::AddIOp::create(b, loc, warpM, groupId));
    Value colBase = arith::AddIOp::create(
        b, loc, n0, arith::AddIOp::create(b, loc, warpN, pairK));
    for (int64_t i = 0; i < t.fragsM; ++i)
      for (int64_t j = 0; j < t.fragsN; ++j)
        for (int64_t r = 0; r < 4; ++r)
          fn(b, offset(b, rowBase, i * mma::kM + (r >= 2 ? 8 : 0)),
             offset(b, colBase, j * mma::kN + (r & 1)),
             (i * t.fragsN + j) * 4 + r);
  }

  /// Where this thread's `round`-th element of a tile x kTileK slice goes:
  /// (row of the tile, k).
  std::pair<Value, Value> slot(OpBuilder &b, OpOperand &operand, int64_t tile,
                               int64_t round, bool isA) {
    bool groupFast = groupIsContiguous(operand, isA ? view.m : view.n);
    Value element = offset(b, thread, round * mma::kThreads);
    if (groupFast)
      return {arith::RemUIOp::create(b, loc, element, c(b, tile)),
              arith::DivUIOp::create(b, loc, element, c(b, tile))};
    return {arith::DivUIOp::create(b, loc, element, c(b, mma::kTileK)),
            arith::RemUIOp::create(b, loc, element, c(b, mma::kTileK))};
  }

  int64_t rounds(int64_t tile) const {
    return tile * mma::kTileK / mma::kThreads;
  }

  /// Loads this thread's elements of the tile x kTileK slice of `operand`
  /// at (group origin, k0): terms past K as zeros, rows past M or N clamped.
  SmallVector<Value> loadSlice(OpBuilder &b, OpOperand &operand, int64_t tile,
                               Value k0, bool isA) {
    Value origin = isA ? m0 : n0;
    int64_t sizeK = view.size(view.k);
    SmallVector<Value> values;
    for (int64_t round = 0; round < rounds(tile); ++round) {
      auto [position, k] = slot(b, operand, tile, round, isA);
      Value globalPos = arith::AddIOp::create(b, loc, origin, position);
      Value rawK = arith::AddIOp::create(b, loc, k0, k);
      Value globalK = clamp(b, rawK, sizeK);
      Value zero = c(b, 0);
      SmallVector<Value> at = isA ? ivs(b, clampM(b, globalPos), zero, globalK)
                                  : ivs(b, zero, clampN(b, globalPos), globalK);
      Value value = loadOperand(b, loc, op, operand, at);
      // Terms past K are zeros in both tiles, so the mma.sync adds exact
      // zeros for them (the clamped element may be an Inf: 0 * Inf = NaN).
      Value inK = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        rawK, c(b, sizeK));
      value = arith::SelectOp::create(
          b, loc, inK, value,
          arith::ConstantOp::create(b, loc, b.getFloatAttr(low, 0.0)));
      values.push_back(value);
    }
    return values;
  }

  /// Stores what loadSlice loaded into `shared`[row][k].
  void storeSlice(OpBuilder &b, ValueRange values, OpOperand &operand,
                  Value shared, int64_t tile, bool isA) {
    for (int64_t round = 0; round < rounds(tile); ++round) {
      auto [position, k] = slot(b, operand, tile, round, isA);
      memref::StoreOp::create(b, loc, values[round], shared,
                              ValueRange{position, k});
    }
  }

  const MmaTiling &t;
  Type low;
  Value sharedA, sharedB, thread, warp, groupId, pairK, warpM, warpN;
};

struct TileGPUContractionsPass
    : public traincc::impl::TileGPUContractionsPassBase<
          TileGPUContractionsPass> {
  using TileGPUContractionsPassBase::TileGPUContractionsPassBase;

  void runOnOperation() override {
    for (linalg::LinalgOp op : stepContractionCandidates(getOperation())) {
      if (op->hasAttr(kEpilogueAttrName)) {
        op->removeAttr(kEpilogueAttrName);
        tile(op, {}, findEpilogue(op));
        continue;
      }
      if (!op->hasAttr(kChannelPartialsAttrName)) {
        tile(op, {});
        continue;
      }
      auto marked = dyn_cast<linalg::GenericOp>(op.getOperation());
      std::optional<Partials> partials;
      if (marked)
        partials = unmark(marked);
      if (!partials) {
        op->emitOpError("is not a convolution with channel partials (")
            << kChannelPartialsAttrName << ")";
        return signalPassFailure();
      }
      tile(partials->op, partials);
    }
  }

private:
  /// A marked convolution, split: the contraction alone (`op`) and the
  /// partials it must compute, with their map over op's loops.
  struct Partials {
    linalg::GenericOp op;
    Value buffer;
    AffineMap map;
    // With kChannelMomentsAttrName (else null): indexed like `buffer`.
    Value counts, m2;
  };

  /// Replaces `marked` by the contraction alone; nullopt (and `marked`
  /// kept) if it is not a marked op as traincc-fuse-gpu-conv-channel-sums
  /// makes them.
  static std::optional<Partials> unmark(linalg::GenericOp marked) {
    unsigned extra = marked->hasAttr(kChannelMomentsAttrName) ? 3 : 1;
    if (marked.getNumDpsInits() != 1 + extra ||
        !marked.hasPureBufferSemantics())
      return std::nullopt;
    Block &body = marked.getRegion().front();
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    OpOperand *output = marked.getDpsInitOperand(0);
    OpOperand *sums = marked.getDpsInitOperand(1);
    auto sumsType = dyn_cast<MemRefType>(sums->get().getType());
    AffineMap map = marked.getMatchingIndexingMap(sums);
    if (!sumsType || sumsType.getRank() != 2 ||
        !sumsType.getElementType().isF32() ||
        !marked.getMatchingIndexingMap(output).isProjectedPermutation() ||
        !isa<AffineDimExpr>(map.getResult(1)))
      return std::nullopt;
    unsigned first = body.getNumArguments() - extra;
    for (unsigned i = 0; i < extra; ++i) {
      OpOperand *init = marked.getDpsInitOperand(1 + i);
      if (yield.getOperand(1 + i) != body.getArgument(first + i) ||
          init->get().getType() != sumsType ||
          marked.getMatchingIndexingMap(init) != map)
        return std::nullopt;
    }
    Partials partials{nullptr, sums->get(), map, nullptr, nullptr};
    if (extra == 3) {
      partials.counts = marked.getDpsInitOperand(2)->get();
      partials.m2 = marked.getDpsInitOperand(3)->get();
    }
    partials.op = traincc::codegen::dropChannelSumsOutput(
        marked, {kChannelPartialsAttrName, kChannelMomentsAttrName});
    return partials;
  }

  /// The epilogue of `op` (kEpilogueAttrName): the next op with memory
  /// effects, if it is a linalg.generic over op's parallel loops that
  /// reads op's output first, at op's indices; null otherwise (the two
  /// then stay apart, which computes the same).
  static linalg::GenericOp findEpilogue(linalg::LinalgOp op) {
    Operation *next = op->getNextNode();
    while (next && isMemoryEffectFree(next))
      next = next->getNextNode();
    auto epilogue = dyn_cast_or_null<linalg::GenericOp>(next);
    if (!epilogue || !epilogue.hasPureBufferSemantics() ||
        epilogue.hasIndexSemantics() || epilogue.getNumDpsInputs() == 0 ||
        epilogue.getNumLoops() != op.getNumParallelLoops() ||
        epilogue.getDpsInputOperand(0)->get() !=
            op.getDpsInitOperand(0)->get())
      return nullptr;
    if (overParallelLoops(op, op.getMatchingIndexingMap(
                                  op.getDpsInitOperand(0))) !=
        epilogue.getMatchingIndexingMap(epilogue.getDpsInputOperand(0)))
      return nullptr;
    return epilogue;
  }

  /// The plan of the kernel of `op` that applies `epilogue` to its outputs,
  /// or nullopt where the kernel cannot: its outputs must each be indexed
  /// by a permutation of its loops, or be channel partials whose tiles are
  /// the kernel's blocks (`tileM` rows, `blocksM` of them along M).
  static std::optional<OutputPlan> planEpilogue(const GemmView &view,
                                                linalg::LinalgOp op,
                                                linalg::GenericOp epilogue,
                                                int64_t tileM,
                                                int64_t blocksM) {
    OutputPlan plan;
    plan.epilogue = epilogue;
    for (auto [dim, iterator] : llvm::enumerate(op.getIteratorTypesArray()))
      if (linalg::isParallelIterator(iterator))
        plan.epilogueLoops.push_back(dim);
    // Outputs the body adds a term into, indexed by the channel partials'
    // map, are partials; the others are stored.
    std::optional<AffineMap> partialsMap;
    if (view.n.size() == 1)
      partialsMap = simplifyAffineMap(overParallelLoops(
          op, channelPartialsMap(view, view.n.front(), op.getContext())));
    SmallVector<int64_t> ranges = epilogue.getStaticLoopRanges();
    for (OpOperand &init : epilogue.getDpsInitsMutable()) {
      AffineMap map = epilogue.getMatchingIndexingMap(&init);
      unsigned index = init.getOperandNumber() - epilogue.getNumDpsInputs();
      bool partial = partialsMap && simplifyAffineMap(map) == *partialsMap &&
                     traincc::codegen::addsIntoOutput(epilogue, index);
      plan.isPartial.push_back(partial);
      // Each thread stores its own outputs: a loop the output does not
      // follow must have one iteration, and an output read before it is
      // written (an update in place) must be indexed by its loops alone.
      if (!partial) {
        for (auto [loop, range] : llvm::enumerate(ranges))
          if (range != 1 && !map.isFunctionOfDim(loop))
            return std::nullopt;
        if (!epilogue.getRegionOutputArgs()[index].use_empty() &&
            !map.isProjectedPermutation())
          return std::nullopt;
        continue;
      }
      auto type = dyn_cast<MemRefType>(init.get().getType());
      if (view.size(view.batch) != 1 ||
          (blocksM != 1 && tileM != kMaxGemmTile) || !type ||
          type.getShape() !=
              ArrayRef<int64_t>{blocksM, view.size(view.n)})
        return std::nullopt;
      plan.partials.push_back(init.get());
    }
    return plan;
  }

  /// Whether the blocks of a tiled kernel of `tileM` rows, `blocksM` of
  /// them along M, compute one partial each of `partials`.
  static bool blocksArePartials(const GemmView &view, const Partials &partials,
                                int64_t tileM, int64_t blocksM) {
    unsigned channel =
        cast<AffineDimExpr>(partials.map.getResult(1)).getPosition();
    auto type = cast<MemRefType>(partials.buffer.getType());
    return view.n.size() == 1 && view.n.front() == channel &&
           view.batch.empty() &&
           simplifyAffineMap(partials.map) ==
               simplifyAffineMap(channelPartialsMap(
                   view, channel, partials.map.getContext())) &&
           (blocksM == 1 || tileM == kMaxGemmTile) &&
           type.getShape() == ArrayRef<int64_t>{blocksM, view.size(view.n)};
  }

  /// The partials of a marked convolution the kernel does not compute: a
  /// zero fill and a loop nest after `op` that sums its output into them.
  static void sumPartialsAfter(linalg::LinalgOp op, const Partials &partials) {
    MLIRContext *ctx = op.getContext();
    Location loc = op.getLoc();
    OpBuilder b(ctx);
    b.setInsertionPointAfter(op);
    Value output = op.getDpsInitOperand(0)->get();
    AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    unsigned rank = outMap.getNumResults();
    // The partials' map over the output's dimensions: each parallel loop
    // indexes the output once (reduction loops do not occur in it).
    SmallVector<AffineExpr> asOutput(op.getNumLoops(),
                                     getAffineConstantExpr(0, ctx));
    for (auto [position, expr] : llvm::enumerate(outMap.getResults()))
      asOutput[cast<AffineDimExpr>(expr).getPosition()] =
          getAffineDimExpr(position, ctx);
    AffineMap toPartials =
        partials.map.replaceDimsAndSymbols(asOutput, {}, rank, 0);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::reduction);
    iterators[cast<AffineDimExpr>(toPartials.getResult(1)).getPosition()] =
        utils::IteratorType::parallel;
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    linalg::FillOp::create(b, loc, zero, partials.buffer);
    linalg::GenericOp::create(
        b, loc, TypeRange{}, ValueRange{output}, ValueRange{partials.buffer},
        {identity, toPartials}, iterators,
        [](OpBuilder &nb, Location nloc, ValueRange args) {
          linalg::YieldOp::create(
              nb, nloc,
              arith::AddFOp::create(nb, nloc, args[1], args[0]).getResult());
        });
    if (!partials.counts)
      return;
    // The moments: the count (the output only bounds the loops), then the
    // squares around the finished partial over its count.
    traincc::codegen::addChannelMomentsNests(
        b, loc, output, partials.buffer, partials.counts, partials.m2, identity,
        toPartials, iterators, zero);
  }

  /// Builds the tiled kernel of `op` if it is worth one. With `partials`
  /// the kernel computes them in its epilogue when its blocks are their M
  /// tiles; otherwise a sum after `op` does.
  void tile(linalg::LinalgOp op, std::optional<Partials> partials,
            linalg::GenericOp epilogue = nullptr) {
    std::optional<GemmView> view = analyzeContraction(op);
    std::optional<Tiling> tiling;
    if (view && worthTiling(*view, minWork))
      tiling = chooseTiling(*view);
    if (!tiling) {
      if (partials)
        sumPartialsAfter(op, *partials);
      return;
    }
    IRRewriter rewriter(op);
    // Named ops (matmul) carry their body implicitly.
    if (!isa<linalg::GenericOp>(op)) {
      FailureOr<linalg::GenericOp> generic =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generic))
        return;
      op = *generic;
    }
    std::optional<Type> low =
        tensorCores ? tensorCoreOperandType(op) : std::nullopt;
    std::optional<MmaTiling> mmaTiling =
        low ? chooseMmaTiling(*view) : std::nullopt;
    int64_t tileM = mmaTiling ? mmaTiling->tileM : tiling->tileM;
    int64_t blocksM = mmaTiling ? mmaTiling->grid[0] : tiling->grid[0];
    OutputPlan plan;
    if (partials) {
      if (blocksArePartials(*view, *partials, tileM, blocksM)) {
        plan.partials = {partials->buffer};
        plan.counts = partials->counts;
        plan.m2 = partials->m2;
      } else {
        sumPartialsAfter(op, *partials);
      }
    }
    if (epilogue)
      if (std::optional<OutputPlan> fused =
              planEpilogue(*view, op, epilogue, tileM, blocksM))
        plan = std::move(*fused);
    std::optional<Value> initFill = takeInitFill(op);
    if (mmaTiling)
      MmaKernelBuilder(op, *view, *mmaTiling, *low, initFill, plan)
          .build(rewriter);
    else
      KernelBuilder(op, *view, *tiling, initFill, plan).build(rewriter);
    if (plan.epilogue)
      eraseEpilogue(op, plan);
    rewriter.eraseOp(op);
  }

  /// Erases the epilogue the kernel of `op` computed, and the zero fills of
  /// its partials before `op` (the kernel stores every partial).
  static void eraseEpilogue(linalg::LinalgOp op, const OutputPlan &plan) {
    for (Operation *at = op->getPrevNode(); at;) {
      Operation *previous = at->getPrevNode();
      if (auto fill = dyn_cast<linalg::FillOp>(at))
        if (llvm::is_contained(plan.partials, fill.getOutputs().front()))
          fill->erase();
      at = previous;
    }
    plan.epilogue->erase();
  }
};

} // namespace
