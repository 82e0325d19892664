//===- TileGPUContractions.cpp - implicit-GEMM kernels for contractions ---===//
//
// Convolutions, their gradients and matmuls are contractions: two inputs
// multiplied and summed into one output. One thread per output re-reads
// every input element from global memory once per output that uses it; a
// tiled kernel reads each element once per tile and reuses it from shared
// memory and registers. The kernel is built straight from the linalg op, so
// any contraction the lowering produces (strided, padded, grouped, flipped
// for the data gradient) gets one, with the op's own scalar body.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/GPU/Passes.h"

#include "GPUKernelBuilder.h"
#include "GemmView.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
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

/// Threads per block, as a square of kThreadsPerSide x kThreadsPerSide: ty
/// walks M, tx walks N.
constexpr int64_t kThreadsPerSide = 16;
constexpr int64_t kThreads = kThreadsPerSide * kThreadsPerSide;
/// Reduction terms staged in shared memory per step.
constexpr int64_t kTileK = 16;
/// The most outputs along M or N a block computes.
constexpr int64_t kMaxTile = 64;
/// The smallest M and N, and K, worth a tile.
constexpr int64_t kMinSide = 8;
constexpr int64_t kMinK = 4;
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
  t.grid = {llvm::divideCeil(view.size(view.m), t.tileM),
            llvm::divideCeil(view.size(view.n), t.tileN),
            view.size(view.batch)};
  if (t.grid[0] > kMaxGridX || t.grid[1] > kMaxGridYZ ||
      t.grid[2] > kMaxGridYZ)
    return std::nullopt;
  return t;
}

/// Builds the kernel of one contraction.
class KernelBuilder {
public:
  KernelBuilder(linalg::LinalgOp op, const GemmView &view, const Tiling &tiling,
                std::optional<Value> initFill)
      : op(op), view(view), t(tiling), loc(op.getLoc()), initFill(initFill) {}

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
    tx = arith::RemUIOp::create(b, loc, thread, side);
    ty = arith::DivUIOp::create(b, loc, thread, side);
    m0 = arith::MulIOp::create(b, loc, launch.getBlockIds().x, c(b, t.tileM));
    n0 = arith::MulIOp::create(b, loc, launch.getBlockIds().y, c(b, t.tileN));
    batchPos = delinearize(b, loc, launch.getBlockIds().z,
                           view.sizes(view.batch));

    // Accumulators start from the output (linalg's init), or from the
    // constant it was just filled with; outputs out of range are computed
    // on clamped inputs and dropped.
    OpOperand *out = op.getDpsInitOperand(0);
    SmallVector<Value> acc;
    forEachOutput(b, [&](OpBuilder &at, Value m, Value n, int64_t) {
      acc.push_back(initFill ? *initFill
                             : loadOperand(at, loc, op, *out,
                                           ivs(at, clampM(at, m),
                                               clampN(at, n), c(at, 0))));
    });

    scf::ForOp steps = buildSteps(b, acc);
    storeOutputs(b, steps, out);
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
              ValueRange{k, offset(in, ty, i * kThreadsPerSide)}));
        for (int64_t j = 0; j < t.perThreadN; ++j)
          bv.push_back(memref::LoadOp::create(
              in, loc, sharedB,
              ValueRange{k, offset(in, tx, j * kThreadsPerSide)}));
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

  /// Stores the accumulators (the first results of `steps`) into the
  /// outputs in range.
  void storeOutputs(OpBuilder &b, scf::ForOp steps, OpOperand *out) {
    Value sizeM = c(b, view.size(view.m)), sizeN = c(b, view.size(view.n));
    forEachOutput(b, [&](OpBuilder &at, Value m, Value n, int64_t index) {
      Value inRange = arith::AndIOp::create(
          at, loc,
          arith::CmpIOp::create(at, loc, arith::CmpIPredicate::ult, m, sizeM),
          arith::CmpIOp::create(at, loc, arith::CmpIPredicate::ult, n, sizeN));
      auto guard = scf::IfOp::create(at, loc, inRange, false);
      OpBuilder then = guard.getThenBodyBuilder();
      memref::StoreOp::create(
          then, loc, steps.getResult(index), out->get(),
          operandIndices(then, loc, op, *out, ivs(then, m, n, c(then, 0))));
    });
  }

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

  /// Calls `fn(b, m, n, index)` for each output of this thread's sub-tile.
  void forEachOutput(OpBuilder &b,
                     llvm::function_ref<void(OpBuilder &, Value, Value,
                                             int64_t)> fn) {
    for (int64_t i = 0; i < t.perThreadM; ++i)
      for (int64_t j = 0; j < t.perThreadN; ++j)
        fn(b, offset(b, arith::AddIOp::create(b, loc, m0, ty), i * kThreadsPerSide),
           offset(b, arith::AddIOp::create(b, loc, n0, tx), j * kThreadsPerSide),
           i * t.perThreadN + j);
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

  linalg::LinalgOp op;
  const GemmView &view;
  const Tiling &t;
  Location loc;
  std::optional<Value> initFill;
  Value sharedA, sharedB, thread, tx, ty, m0, n0;
  SmallVector<Value> batchPos;
};

struct TileGPUContractionsPass
    : public traincc::impl::TileGPUContractionsPassBase<
          TileGPUContractionsPass> {
  using TileGPUContractionsPassBase::TileGPUContractionsPassBase;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && !func.isPrivate())
        func.walk([&](linalg::LinalgOp op) {
          // Not fills: building a kernel may erase the fill before it.
          if (op.getNumDpsInputs() == 2 && op.getNumReductionLoops() > 0)
            candidates.push_back(op);
        });
    for (linalg::LinalgOp op : candidates) {
      std::optional<GemmView> view = analyzeContraction(op);
      if (!view)
        continue;
      int64_t sizeM = view->size(view->m), sizeN = view->size(view->n),
              sizeK = view->size(view->k);
      // A thin side (a matrix-vector product, a depthwise convolution)
      // would leave most threads of a tile idle, and a short K reuses
      // little: one thread per output does as well.
      if (sizeM < kMinSide || sizeN < kMinSide || sizeK < kMinK ||
          sizeM * sizeN * sizeK * view->size(view->batch) < minWork)
        continue;
      std::optional<Tiling> tiling = chooseTiling(*view);
      if (!tiling)
        continue;
      IRRewriter rewriter(op);
      // Named ops (matmul) carry their body implicitly.
      if (!isa<linalg::GenericOp>(op)) {
        FailureOr<linalg::GenericOp> generic =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(generic))
          continue;
        op = *generic;
      }
      KernelBuilder(op, *view, *tiling, takeInitFill(op)).build(rewriter);
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
