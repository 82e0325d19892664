//===- SplitGPUReductions.cpp - sums with few outputs in two stages -------===//

#include "traincc/Codegen/Common/BufferUtils.h"
#include "traincc/Codegen/GPU/Passes.h"

#include "GemmView.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

namespace traincc {
#define GEN_PASS_DEF_SPLITGPUREDUCTIONSPASS
#include "traincc/Codegen/GPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;
using namespace traincc::gpu_kernels;

namespace {

/// Whether the body is `yield addf(out, x)` with `out` used nowhere else.
bool isSumIntoOutput(linalg::LinalgOp op) {
  Block &body = *op.getBlock();
  BlockArgument out = body.getArguments().back();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues().front().getDefiningOp<arith::AddFOp>();
  if (!add || !out.hasOneUse())
    return false;
  return add.getLhs() == out || add.getRhs() == out;
}

/// Outputs of the largest tile of traincc-tile-gpu-contractions.
constexpr int64_t kTileOutputs = 64 * 64;
/// Fewer tiles than this leave an H200 (132 SMs) mostly idle.
constexpr int64_t kFewTiles = 2 * 132;
/// The fewest terms that make a tile's K loop long enough to split: 64
/// steps of 16.
constexpr int64_t kMinSplitKTerms = 1024;
/// The fewest terms per part when a contraction's single reduction loop
/// is split: four 16-deep steps of a tile.
constexpr int64_t kSplitKTerms = 64;
/// The most bytes of partial sums a split contraction may add.
constexpr int64_t kMaxPartialBytes = int64_t(64) << 20;

/// Whether a contraction is worth splitting along its outermost
/// reduction loop (split-K): its tiled kernel would have too few tiles
/// for the GPU and long serial loops in each (a convolution's filter
/// gradient: few weights, N*H*W terms each). Split per sample, the
/// partial sums are a batch of GEMMs, one grid layer each.
bool worthSplitK(int64_t outputs, int64_t terms, int64_t parts,
                 Type element) {
  int64_t partialBytes = parts * outputs * codegen::elementBytes(element);
  return llvm::divideCeil(outputs, kTileOutputs) < kFewTiles &&
         terms >= kMinSplitKTerms && partialBytes <= kMaxPartialBytes;
}

/// The parts a single reduction loop of `terms` iterations is strip-mined
/// into: the largest divisor that leaves at least kSplitKTerms per part.
int64_t stripParts(int64_t terms) {
  int64_t parts = 1;
  for (int64_t p = 2; terms / p >= kSplitKTerms; ++p)
    if (terms % p == 0)
      parts = p;
  return parts;
}

/// The fewest parts, a divisor of `range` from 2 up, into which splitting a
/// contraction of `outputs` outputs gives its tiled kernel kFewTiles blocks;
/// `range` itself where none below it does.
int64_t partsToFillGPU(int64_t outputs, int64_t range) {
  int64_t tiles = llvm::divideCeil(outputs, kTileOutputs);
  for (int64_t parts = 2; parts < range; ++parts)
    if (range % parts == 0 && tiles * parts >= kFewTiles)
      return parts;
  return range;
}

/// The limits under which a sum that is not a contraction is split: the
/// pass's options.
struct SumSplitLimits {
  int64_t maxOutputs, minReduction, blockSize;
};

/// A split of a sum along its loop `dim` into `parts`: in two stages
/// (partials per position of `dim`, then their sum), or, where `dim` is
/// the only reduction loop, first strip-mined into `parts` x R / parts.
struct ReductionSplit {
  unsigned dim;
  int64_t parts;
  bool stripMine;
  /// Strip-mined only because partials per position would take too much
  /// memory: it gives the GPU just enough tiles, and a convolution whose
  /// epilogue can sum its outputs for BatchNorm keeps that fusion instead
  /// (splitsAlongK says no).
  bool fewerParts = false;
};

/// The split the pass makes of the sum `op`, from its shapes alone; none if
/// it leaves `op` whole. Sums that are not contractions are split under
/// `sumLimits`, or never when it is null. One decision for the pass and
/// for splitsAlongK, so that the channel-sum fusion cannot disagree with
/// what is later split.
std::optional<ReductionSplit> planSplit(linalg::LinalgOp op,
                                        const SumSplitLimits *sumLimits) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  OpOperand *init = op.getDpsInitOperand(0);
  if (!op.getMatchingIndexingMap(init).isProjectedPermutation())
    return std::nullopt;
  // Sums with contractions' reuse are sized as the GEMM they are.
  GemmView view = groupLoops(op);
  int64_t outputs = view.outputs(), terms = view.terms();
  const unsigned *splitDim =
      llvm::find_if(view.k, [&](unsigned dim) { return ranges[dim] > 1; });
  if (splitDim == view.k.end())
    return std::nullopt;
  Type element = cast<MemRefType>(init->get().getType()).getElementType();
  bool contraction = reusesInputs(op);
  if (terms == ranges[*splitDim]) {
    // One reduction loop (a flattened classifier's K): a contraction is
    // split along it in parts of kSplitKTerms or more terms.
    if (!contraction)
      return std::nullopt;
    int64_t parts = stripParts(terms);
    if (parts == 1 || !worthSplitK(outputs, terms, parts, element))
      return std::nullopt;
    return ReductionSplit{*splitDim, parts, /*stripMine=*/true};
  }
  int64_t parts = ranges[*splitDim];
  if (contraction) {
    if (worthSplitK(outputs, terms, parts, element))
      return ReductionSplit{*splitDim, parts, /*stripMine=*/false};
    // Partials per position of the loop (per sample) would take more than
    // kMaxPartialBytes: a filter gradient of many weights (ResNet-18's
    // 128- and 256-channel 3x3 ones at batch 128: 75 and 302 MB, 36 and 144
    // tiles). The loop is strip-mined into the fewest parts that fill the
    // GPU with tiles instead.
    int64_t fewer = partsToFillGPU(outputs, parts);
    if (fewer == parts || !worthSplitK(outputs, terms, fewer, element))
      return std::nullopt;
    return ReductionSplit{*splitDim, fewer, /*stripMine=*/true,
                          /*fewerParts=*/true};
  }
  if (!sumLimits || outputs >= sumLimits->maxOutputs ||
      terms < sumLimits->minReduction)
    return std::nullopt;
  // Whole, the sum gets a block per output. Split, its partials get a
  // block each if they are long enough, else a thread each: worth it only
  // if that is more threads.
  if (terms / parts < sumLimits->blockSize &&
      parts < 2 * sumLimits->blockSize)
    return std::nullopt;
  return ReductionSplit{*splitDim, parts, /*stripMine=*/false};
}

struct SplitGPUReductionsPass
    : public traincc::impl::SplitGPUReductionsPassBase<SplitGPUReductionsPass> {
  using SplitGPUReductionsPassBase::SplitGPUReductionsPassBase;

  void runOnOperation() override {
    // Named ops too: the matmuls of linear layers are sums.
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && op.getNumDpsInits() == 1 &&
          op.getNumReductionLoops() > 0 && isSumIntoOutput(op))
        candidates.push_back(op);
    });
    for (linalg::LinalgOp op : candidates)
      split(op);
  }

  /// `op` as a linalg.generic, which the rewrites below build on (null if
  /// a named op cannot be generalized).
  static linalg::GenericOp generic(linalg::LinalgOp op) {
    if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
      return generic;
    IRRewriter rewriter(op);
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, op);
    return succeeded(generalized) ? *generalized : nullptr;
  }

  /// `op` with its loop `dim` of range R strip-mined into a new outermost
  /// reduction loop q of range `parts` and `dim` of range R / parts. Each
  /// input indexed by `dim` alone is viewed with that axis expanded to
  /// [parts, R / parts], so every loop still indexes some axis by itself
  /// (linalg infers loop ranges from them). Null if an input indexes `dim`
  /// in a compound expression or cannot be expanded.
  linalg::GenericOp stripMine(linalg::GenericOp op, unsigned dim,
                              int64_t parts) {
    MLIRContext *ctx = op.getContext();
    int64_t chunk = op.getStaticLoopRanges()[dim] / parts;
    unsigned numDims = op.getNumLoops() + 1;
    SmallVector<AffineExpr> shifted;
    for (unsigned d = 0; d < op.getNumLoops(); ++d)
      shifted.push_back(getAffineDimExpr(d + 1, ctx));
    AffineExpr outer = getAffineDimExpr(0, ctx);
    AffineExpr inner = shifted[dim];

    struct Operand {
      Value value;
      AffineMap map;
      std::optional<unsigned> expandAxis;
      SmallVector<int64_t> shape;
    };
    SmallVector<Operand> operands;
    for (OpOperand &operand : op->getOpOperands()) {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      Operand out{operand.get(), {}, std::nullopt, {}};
      SmallVector<AffineExpr> results;
      for (auto [axis, expr] : llvm::enumerate(map.getResults())) {
        if (!expr.isFunctionOfDim(dim)) {
          results.push_back(expr.replaceDims(shifted));
          continue;
        }
        auto pure = dyn_cast<AffineDimExpr>(expr);
        if (!pure || out.expandAxis)
          return nullptr;
        out.expandAxis = axis;
        results.push_back(outer);
        results.push_back(inner);
      }
      out.map = AffineMap::get(numDims, 0, results, ctx);
      if (out.expandAxis) {
        auto type = cast<MemRefType>(out.value.getType());
        out.shape = llvm::to_vector(type.getShape());
        out.shape[*out.expandAxis] = chunk;
        out.shape.insert(out.shape.begin() + *out.expandAxis, parts);
        if (failed(memref::ExpandShapeOp::computeExpandedType(
                type, out.shape, reassociation(type.getRank(),
                                               *out.expandAxis))))
          return nullptr;
      }
      operands.push_back(out);
    }

    IRRewriter rewriter(op);
    SmallVector<Value> values;
    SmallVector<AffineMap> maps;
    for (Operand &operand : operands) {
      Value value = operand.value;
      if (operand.expandAxis)
        value = memref::ExpandShapeOp::create(
            rewriter, op.getLoc(), operand.shape, value,
            reassociation(cast<MemRefType>(value.getType()).getRank(),
                          *operand.expandAxis));
      values.push_back(value);
      maps.push_back(operand.map);
    }
    SmallVector<utils::IteratorType> iterators = {
        utils::IteratorType::reduction};
    llvm::append_range(iterators, op.getIteratorTypesArray());
    unsigned numInputs = op.getNumDpsInputs();
    auto mined = linalg::GenericOp::create(
        rewriter, op.getLoc(), TypeRange{},
        ArrayRef<Value>(values).take_front(numInputs),
        ArrayRef<Value>(values).drop_front(numInputs), maps, iterators);
    rewriter.inlineRegionBefore(op.getRegion(), mined.getRegion(),
                                mined.getRegion().end());
    rewriter.eraseOp(op);
    return mined;
  }

  /// Reassociation of a rank-`rank` memref with axis `axis` expanded in two.
  static SmallVector<ReassociationIndices> reassociation(int64_t rank,
                                                         unsigned axis) {
    SmallVector<ReassociationIndices> groups;
    for (int64_t i = 0, next = 0; i < rank; ++i) {
      ReassociationIndices group = {next++};
      if (i == axis)
        group.push_back(next++);
      groups.push_back(group);
    }
    return groups;
  }

  void split(linalg::LinalgOp op) {
    SumSplitLimits limits{maxOutputs, minReduction, blockSize};
    std::optional<ReductionSplit> plan = planSplit(op, &limits);
    if (!plan)
      return;
    linalg::GenericOp whole = generic(op);
    if (!whole)
      return;
    if (!plan->stripMine) {
      splitInTwoStages(whole, plan->dim);
      return;
    }
    if (linalg::GenericOp mined = stripMine(whole, plan->dim, plan->parts))
      split(mined);
  }

  /// Replaces `whole` by two sums: stage 1 sums into a partial result per
  /// position of loop `splitDim`, which becomes parallel; stage 2 adds the
  /// partials into the output.
  void splitInTwoStages(linalg::GenericOp whole, unsigned splitDim) {
    SmallVector<int64_t> ranges = whole.getStaticLoopRanges();
    auto iterators = whole.getIteratorTypesArray();
    OpOperand *init = whole.getDpsInitOperand(0);
    AffineMap outMap = whole.getMatchingIndexingMap(init);
    MLIRContext *ctx = whole.getContext();
    Location loc = whole.getLoc();
    IRRewriter rewriter(whole);
    auto outType = cast<MemRefType>(init->get().getType());
    Type element = outType.getElementType();
    SmallVector<int64_t> partialShape = {ranges[splitDim]};
    llvm::append_range(partialShape, outType.getShape());
    Value partial = memref::AllocOp::create(
        rewriter, loc, MemRefType::get(partialShape, element));
    Value zero = arith::ConstantOp::create(rewriter, loc, element,
                                           rewriter.getZeroAttr(element));
    linalg::FillOp::create(rewriter, loc, zero, partial);

    // Stage 1: the split loop becomes parallel and indexes the partials.
    SmallVector<AffineExpr> partialResults = {getAffineDimExpr(splitDim, ctx)};
    llvm::append_range(partialResults, outMap.getResults());
    SmallVector<AffineMap> maps = whole.getIndexingMapsArray();
    maps.back() = AffineMap::get(ranges.size(), 0, partialResults, ctx);
    SmallVector<utils::IteratorType> stageOne(iterators);
    stageOne[splitDim] = utils::IteratorType::parallel;
    auto first = linalg::GenericOp::create(rewriter, loc, TypeRange{},
                                           whole.getDpsInputs(),
                                           ValueRange{partial}, maps, stageOne);
    rewriter.cloneRegionBefore(whole.getRegion(), first.getRegion(),
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
    rewriter.eraseOp(whole);
  }
};

} // namespace

bool traincc::gpu_kernels::splitsAlongK(linalg::LinalgOp op) {
  return op.hasPureBufferSemantics() && op.getNumDpsInits() == 1 &&
         op.getNumReductionLoops() > 0 && isSumIntoOutput(op) &&
         [&] {
           std::optional<ReductionSplit> plan =
               planSplit(op, /*sumLimits=*/nullptr);
           return plan && !plan->fewerParts;
         }();
}
