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
    if (!splitDim || outputs >= maxOutputs || terms < minReduction ||
        terms == ranges[*splitDim])
      return;

    MLIRContext *ctx = op.getContext();
    Location loc = op.getLoc();
    IRRewriter rewriter(op);
    auto outType = cast<MemRefType>(init->get().getType());
    Type element = outType.getElementType();
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
