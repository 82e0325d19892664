//===- SplitGPUReductions.cpp - sums with few outputs in two stages -------===//

#include "traincc/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

namespace traincc {
#define GEN_PASS_DEF_SPLITGPUREDUCTIONSPASS
#include "traincc/Codegen/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

/// Whether the body is `yield addf(out, x)` with `out` used nowhere else.
bool isSumIntoOutput(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  BlockArgument out = body.getArguments().back();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues().front().getDefiningOp<arith::AddFOp>();
  if (!add || !out.hasOneUse())
    return false;
  return add.getLhs() == out || add.getRhs() == out;
}

/// Whether `op` reuses input elements across outputs: some input read along
/// a reduction loop does not vary along some parallel loop (a matmul's A
/// along N, a convolution's input along output channels). Such contractions
/// get tiled kernels of their own (traincc-tile-gpu-contractions); a plain
/// sum reads each element for one output only.
bool isContraction(linalg::GenericOp op) {
  SmallVector<unsigned> parallel, reduction;
  op.getParallelDims(parallel);
  op.getReductionDims(reduction);
  return llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) {
    AffineMap map = op.getMatchingIndexingMap(input);
    bool readsTerms = llvm::any_of(
        reduction, [&](unsigned dim) { return map.isFunctionOfDim(dim); });
    bool missesOutputs = llvm::any_of(
        parallel, [&](unsigned dim) { return !map.isFunctionOfDim(dim); });
    return readsTerms && missesOutputs;
  });
}

/// Outputs of the largest tile of traincc-tile-gpu-contractions.
constexpr int64_t kTileOutputs = 64 * 64;
/// Fewer tiles than this leave an H200 (132 SMs) mostly idle.
constexpr int64_t kFewTiles = 2 * 132;
/// The most bytes of partial sums a split contraction may add.
constexpr int64_t kMaxPartialBytes = int64_t(64) << 20;

struct SplitGPUReductionsPass
    : public traincc::impl::SplitGPUReductionsPassBase<SplitGPUReductionsPass> {
  using SplitGPUReductionsPassBase::SplitGPUReductionsPassBase;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> candidates;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.hasPureBufferSemantics() && op.getNumDpsInits() == 1 &&
          isSumIntoOutput(op))
        candidates.push_back(op);
    });
    for (linalg::GenericOp op : candidates)
      split(op);
  }

  /// Whether a contraction is worth splitting along its outermost
  /// reduction loop (split-K): its tiled kernel would have too few tiles
  /// for the GPU and long serial loops in each (a convolution's filter
  /// gradient: few weights, N*H*W terms each). Split per sample, the
  /// partial sums are a batch of GEMMs, one grid layer each.
  bool worthSplitK(int64_t outputs, int64_t terms, int64_t parts,
                   Type element) {
    int64_t partialBytes =
        parts * outputs * llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
    return llvm::divideCeil(outputs, kTileOutputs) < kFewTiles &&
           terms >= minReduction && partialBytes <= kMaxPartialBytes;
  }

  void split(linalg::GenericOp op) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return;
    auto iterators = op.getIteratorTypesArray();
    OpOperand *init = op.getDpsInitOperand(0);
    AffineMap outMap = op.getMatchingIndexingMap(init);
    if (!outMap.isProjectedPermutation())
      return;
    int64_t outputs = 1, terms = 1;
    std::optional<unsigned> splitDim;
    for (auto [dim, range] : llvm::enumerate(ranges)) {
      if (linalg::isParallelIterator(iterators[dim])) {
        outputs *= range;
        continue;
      }
      terms *= range;
      if (!splitDim && range > 1)
        splitDim = dim;
    }
    if (!splitDim || terms == ranges[*splitDim])
      return;
    int64_t parts = ranges[*splitDim];
    Type element = cast<MemRefType>(init->get().getType()).getElementType();
    if (isContraction(op)) {
      if (!worthSplitK(outputs, terms, parts, element))
        return;
    } else {
      if (outputs >= maxOutputs || terms < minReduction)
        return;
      // Whole, the sum gets a block per output. Split, its partials get a
      // block each if they are long enough, else a thread each: worth it
      // only if that is more threads.
      if (terms / parts < blockSize && parts < 2 * blockSize)
        return;
    }

    MLIRContext *ctx = op.getContext();
    Location loc = op.getLoc();
    IRRewriter rewriter(op);
    auto outType = cast<MemRefType>(init->get().getType());
    SmallVector<int64_t> partialShape = {ranges[*splitDim]};
    llvm::append_range(partialShape, outType.getShape());
    Value partial = memref::AllocOp::create(
        rewriter, loc, MemRefType::get(partialShape, element));
    Value zero = arith::ConstantOp::create(rewriter, loc, element,
                                           rewriter.getZeroAttr(element));
    linalg::FillOp::create(rewriter, loc, zero, partial);

    // Stage 1: the split loop becomes parallel and indexes the partials.
    SmallVector<AffineExpr> partialResults = {
        getAffineDimExpr(*splitDim, ctx)};
    llvm::append_range(partialResults, outMap.getResults());
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    maps.back() = AffineMap::get(ranges.size(), 0, partialResults, ctx);
    SmallVector<utils::IteratorType> stageOne(iterators);
    stageOne[*splitDim] = utils::IteratorType::parallel;
    auto first = linalg::GenericOp::create(
        rewriter, loc, TypeRange{}, op.getDpsInputs(), ValueRange{partial},
        maps, stageOne);
    rewriter.cloneRegionBefore(op.getRegion(), first.getRegion(),
                               first.getRegion().end());

    // Stage 2: out += sum over the split loop of the partials.
    unsigned rank = outType.getRank();
    SmallVector<AffineExpr> outDims;
    for (unsigned i = 0; i < rank; ++i)
      outDims.push_back(getAffineDimExpr(i + 1, ctx));
    SmallVector<utils::IteratorType> stageTwo = {
        utils::IteratorType::reduction};
    stageTwo.append(rank, utils::IteratorType::parallel);
    linalg::GenericOp::create(
        rewriter, loc, TypeRange{}, ValueRange{partial},
        ValueRange{init->get()},
        ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank + 1, ctx),
                            AffineMap::get(rank + 1, 0, outDims, ctx)},
        stageTwo, [&](OpBuilder &b, Location at, ValueRange args) {
          Value sum = arith::AddFOp::create(b, at, args[1], args[0]);
          linalg::YieldOp::create(b, at, sum);
        });
    rewriter.eraseOp(op);
  }
};

} // namespace
