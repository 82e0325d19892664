//===- FuseSumsIntoProducers.cpp - per-channel sums in their producer -----===//
//
// BatchNorm's backward pass sums dy and dy * (x - mean) per channel: a
// pass that reads back the dy an elementwise op has just written, and x.
// traincc-fuse-elementwise cannot take that op in (dy has other readers,
// and a sum takes in no arithmetic on the CPU: LLVM would split a
// vectorized sum across lanes by what the body costs, so the rounding
// would depend on what fused). This pass makes the producer compute the
// sums too, into partial sums per image row lane, added row by row in
// order: each partial is one lane, whatever the body, and a second small
// op with a fixed body adds each channel's partials. The rounding is then
// a function of the shapes alone. Not in traincc's pipelines: measured
// slower (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/CPU/Passes.h"
#include "traincc/Codegen/Common/OpPlacement.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"

namespace traincc {
#define GEN_PASS_DEF_FUSESUMSINTOPRODUCERSPASS
#include "traincc/Codegen/CPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using traincc::codegen::hoistBefore;
using traincc::codegen::isHoistableBefore;

namespace {

/// Whether every output of `sum` accumulates `out + term`, where no term
/// reads an output: the sum may then run in any grouping of its points.
bool accumulatesPureSums(linalg::GenericOp sum) {
  Block *body = sum.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  for (auto [k, out] : llvm::enumerate(sum.getRegionOutputArgs())) {
    if (!out.getType().isF32() || !out.hasOneUse())
      return false;
    auto add = dyn_cast<arith::AddFOp>(*out.getUsers().begin());
    if (!add || !add->hasOneUse() || yield.getOperand(k) != add.getResult())
      return false;
  }
  // No term reads an output: the outputs' only uses are the adds above,
  // whose results only the yield reads.
  return true;
}

/// Whether `map` reads only `sum`'s parallel loops, in increasing order.
bool readsParallelLoopsInOrder(linalg::GenericOp sum, AffineMap map) {
  auto iterators = sum.getIteratorTypesArray();
  int64_t last = -1;
  for (AffineExpr result : map.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(result);
    if (!dim || !linalg::isParallelIterator(iterators[dim.getPosition()]) ||
        static_cast<int64_t>(dim.getPosition()) <= last)
      return false;
    last = dim.getPosition();
  }
  return true;
}

/// A sum and the elementwise generic whose result it sums.
struct SumOfProducer {
  linalg::GenericOp sum;
  OpOperand *summed = nullptr;
  /// Null when the sum reads the producer's result directly.
  tensor::CollapseShapeOp collapse;
  linalg::GenericOp producer;
  /// How the producer indexes its result: a permutation of its loops.
  AffineMap resultMap;
  /// For each loop of the sum, the dimensions of the producer's result it
  /// stands for, and the producer's loops that index them.
  SmallVector<ReassociationIndices> resultGroups, groups;
};

/// The producer `sum` may move into: an all-parallel generic with one
/// result, indexed by a permutation of its loops, that the sum reads
/// through the identity map (its loops are the summed tensor's
/// dimensions), directly or through a collapse_shape of static shape.
std::optional<SumOfProducer> findProducer(linalg::GenericOp sum) {
  for (OpOperand *input : sum.getDpsInputOperands()) {
    if (!sum.getMatchingIndexingMap(input).isIdentity())
      continue;
    SumOfProducer found;
    found.sum = sum;
    found.summed = input;
    Value value = input->get();
    found.collapse = value.getDefiningOp<tensor::CollapseShapeOp>();
    if (found.collapse) {
      if (!found.collapse.getSrcType().hasStaticShape())
        continue;
      value = found.collapse.getSrc();
      found.resultGroups = found.collapse.getReassociationIndices();
    } else {
      for (unsigned i = 0; i < sum.getNumLoops(); ++i)
        found.resultGroups.push_back({static_cast<int64_t>(i)});
    }
    auto producer = value.getDefiningOp<linalg::GenericOp>();
    if (!producer || producer->getNumResults() != 1 ||
        !producer.hasPureTensorSemantics() ||
        producer.getNumLoops() != producer.getNumParallelLoops())
      continue;
    AffineMap resultMap =
        producer.getIndexingMapMatchingResult(producer->getResult(0));
    if (!resultMap.isPermutation())
      continue;
    for (const ReassociationIndices &group : found.resultGroups) {
      ReassociationIndices loops;
      for (int64_t dim : group)
        loops.push_back(resultMap.getDimPosition(dim));
      found.groups.push_back(loops);
    }
    // The sum reads the producer's result once.
    if (llvm::count_if(sum.getDpsInputs(), [&](Value other) {
          return other == input->get();
        }) != 1)
      continue;
    found.producer = producer;
    found.resultMap = resultMap;
    return found;
  }
  return std::nullopt;
}

/// `map` (over the sum's loops) over the producer's loops, or null: a map
/// that reads the summed tensor like the sum does reads it (expanded) like
/// the producer writes its result; any other may only read loops that are
/// one producer loop each.
AffineMap mapIntoProducer(SumOfProducer &op, AffineMap map) {
  MLIRContext *context = map.getContext();
  unsigned producerLoops = op.producer.getNumLoops();
  if (map == op.sum.getMatchingIndexingMap(op.summed))
    return op.resultMap;
  SmallVector<AffineExpr> results;
  for (AffineExpr result : map.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(result);
    if (!dim || op.groups[dim.getPosition()].size() != 1)
      return AffineMap();
    results.push_back(
        getAffineDimExpr(op.groups[dim.getPosition()].front(), context));
  }
  return AffineMap::get(producerLoops, 0, results, context);
}

/// Rewrites `op.sum` into its producer (see Passes.td); fails, changing
/// nothing, where the shapes or the order of the ops do not allow it.
LogicalResult fuseSum(RewriterBase &rewriter, SumOfProducer &op,
                      DominanceInfo &dominance) {
  linalg::GenericOp sum = op.sum, producer = op.producer;
  auto sumIterators = sum.getIteratorTypesArray();
  // The sum's loops: the batch (reductions), the channels (parallel),
  // the image (at least two reductions: rows, then a row's elements).
  // Kept, as the merged op's reductions: the image's rows. The batch and
  // a row's elements index the partials.
  unsigned numLoops = sum.getNumLoops();
  unsigned firstParallel = 0;
  while (firstParallel < numLoops &&
         linalg::isReductionIterator(sumIterators[firstParallel]))
    ++firstParallel;
  unsigned imageBegin = firstParallel;
  while (imageBegin < numLoops &&
         linalg::isParallelIterator(sumIterators[imageBegin]))
    ++imageBegin;
  if (firstParallel == 0 || imageBegin == firstParallel ||
      numLoops - imageBegin < 2)
    return failure();
  for (unsigned loop = imageBegin; loop < numLoops; ++loop)
    if (!linalg::isReductionIterator(sumIterators[loop]))
      return failure();

  // The producer's loops: reductions where they stand for a kept loop.
  unsigned producerLoops = producer.getNumLoops();
  SmallVector<utils::IteratorType> iterators(producerLoops,
                                             utils::IteratorType::parallel);
  SmallVector<bool> kept(producerLoops, false);
  for (unsigned loop = imageBegin; loop + 1 < numLoops; ++loop)
    for (int64_t dim : op.groups[loop]) {
      iterators[dim] = utils::IteratorType::reduction;
      kept[dim] = true;
    }
  // The sum's parallel loops (the channels) index its outputs and stay
  // parallel in the second stage: one producer loop each.
  SmallVector<bool> channel(producerLoops, false);
  for (unsigned loop = firstParallel; loop < imageBegin; ++loop) {
    if (op.groups[loop].size() != 1)
      return failure();
    channel[op.groups[loop].front()] = true;
  }

  // The sum's other inputs, over the producer's loops.
  SmallVector<OpOperand *> others;
  SmallVector<AffineMap> otherMaps;
  for (OpOperand *input : sum.getDpsInputOperands()) {
    if (input == op.summed)
      continue;
    AffineMap map = mapIntoProducer(op, sum.getMatchingIndexingMap(input));
    if (!map)
      return failure();
    others.push_back(input);
    otherMaps.push_back(map);
  }
  for (OpOperand &init : sum.getDpsInitsMutable())
    if (!readsParallelLoopsInOrder(sum, sum.getMatchingIndexingMap(&init)))
      return failure();
  // Only a sum that also reads another tensor like the summed one
  // (BatchNorm's x) joins the producer: that pass over x goes, with the
  // read of dy. A sum of the producer's result alone (a bias gradient)
  // reads it from cache right after it was written: 0.07 ms apart against
  // 0.39 ms added to the producer on the example CNN (one thread).
  AffineMap summedMap = sum.getMatchingIndexingMap(op.summed);
  if (llvm::none_of(others, [&](OpOperand *input) {
        return sum.getMatchingIndexingMap(input) == summedMap;
      }))
    return failure();

  // The merged op goes where the producer is: the sum's other inputs must
  // be available there, or move up to it (a fill).
  Operation *point = producer;
  for (OpOperand *input : others)
    if (!isHoistableBefore(input->get(), point, dominance))
      return failure();
  for (OpOperand *input : others)
    hoistBefore(input->get(), point, dominance);

  Location loc = sum.getLoc();
  rewriter.setInsertionPoint(point);
  SmallVector<Value> inputs(producer.getDpsInputs());
  SmallVector<AffineMap> maps;
  for (OpOperand *input : producer.getDpsInputOperands())
    maps.push_back(producer.getMatchingIndexingMap(input));
  for (auto [input, map] : llvm::zip(others, otherMaps)) {
    Value value = input->get();
    // Read like the summed tensor: expanded like it.
    if (op.collapse && sum.getMatchingIndexingMap(input) == summedMap)
      value = tensor::ExpandShapeOp::create(
          rewriter, loc, op.collapse.getSrcType(), value,
          op.collapse.getReassociationIndices());
    inputs.push_back(value);
    maps.push_back(map);
  }

  // The partials: laid out like the producer's result without the kept
  // loops, zero-filled.
  AffineMap resultMap = op.resultMap;
  SmallVector<int64_t> partialDims;
  SmallVector<AffineExpr> partialExprs;
  SmallVector<int64_t> producerRanges = producer.getStaticLoopRanges();
  SmallVector<int64_t> partialShape;
  for (unsigned resultDim = 0; resultDim < producerLoops; ++resultDim) {
    unsigned dim = resultMap.getDimPosition(resultDim);
    if (kept[dim])
      continue;
    partialDims.push_back(dim);
    partialExprs.push_back(rewriter.getAffineDimExpr(dim));
    partialShape.push_back(producerRanges[dim]);
  }
  SmallVector<Value> inits = {producer.getDpsInitOperand(0)->get()};
  maps.push_back(resultMap);
  Value zero = arith::ConstantOp::create(rewriter, loc,
                                         rewriter.getF32FloatAttr(0.0f));
  AffineMap partialMap =
      AffineMap::get(producerLoops, 0, partialExprs, rewriter.getContext());
  for (unsigned k = 0; k < sum.getNumDpsInits(); ++k) {
    Value empty = tensor::EmptyOp::create(rewriter, loc, partialShape,
                                          rewriter.getF32Type());
    inits.push_back(
        linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0));
    maps.push_back(partialMap);
  }

  SmallVector<Type> resultTypes;
  for (Value init : inits)
    resultTypes.push_back(init.getType());
  auto merged = linalg::GenericOp::create(rewriter, loc, resultTypes, inputs,
                                          inits, maps, iterators);
  merged->setDiscardableAttrs(producer->getDiscardableAttrDictionary());
  SmallVector<Type> argTypes;
  SmallVector<Location> argLocs;
  for (Value value : llvm::concat<Value>(inputs, inits)) {
    argTypes.push_back(getElementTypeOrSelf(value.getType()));
    argLocs.push_back(value.getLoc());
  }
  Block *body =
      rewriter.createBlock(&merged.getRegion(), {}, argTypes, argLocs);
  unsigned producerInputs = producer.getNumDpsInputs();
  IRMapping mapping;
  for (auto [i, arg] : llvm::enumerate(producer.getBody()->getArguments()))
    mapping.map(arg, body->getArgument(i < producerInputs
                                           ? i
                                           : inputs.size() + i -
                                                 producerInputs));
  for (Operation &nested : producer.getBody()->without_terminator())
    rewriter.clone(nested, mapping);
  Value produced = mapping.lookupOrDefault(
      producer.getBody()->getTerminator()->getOperand(0));
  IRMapping sumMapping;
  unsigned next = producerInputs;
  for (OpOperand *input : sum.getDpsInputOperands())
    sumMapping.map(sum.getMatchingBlockArgument(input),
                   input == op.summed ? produced : body->getArgument(next++));
  for (auto [k, out] : llvm::enumerate(sum.getRegionOutputArgs()))
    sumMapping.map(out, body->getArgument(inputs.size() + 1 + k));
  for (Operation &nested : sum.getBody()->without_terminator())
    rewriter.clone(nested, sumMapping);
  SmallVector<Value> yields = {produced};
  for (Value value : sum.getBody()->getTerminator()->getOperands())
    yields.push_back(sumMapping.lookupOrDefault(value));
  linalg::YieldOp::create(rewriter, loc, yields);

  rewriter.replaceAllUsesWith(producer->getResult(0), merged->getResult(0));
  ValueRange partials = merged->getResults().drop_front();

  // Second stage: each channel's partials added, with a body of adds alone.
  rewriter.setInsertionPoint(sum);
  SmallVector<utils::IteratorType> stageIterators;
  SmallVector<AffineExpr> outExprs;
  for (auto [position, dim] : llvm::enumerate(partialDims)) {
    stageIterators.push_back(channel[dim] ? utils::IteratorType::parallel
                                          : utils::IteratorType::reduction);
    if (channel[dim])
      outExprs.push_back(rewriter.getAffineDimExpr(position));
  }
  unsigned stageLoops = partialDims.size();
  SmallVector<AffineMap> stageMaps(
      partials.size(),
      AffineMap::getMultiDimIdentityMap(stageLoops, rewriter.getContext()));
  AffineMap outMap =
      AffineMap::get(stageLoops, 0, outExprs, rewriter.getContext());
  stageMaps.append(sum.getNumDpsInits(), outMap);
  auto stage = linalg::GenericOp::create(
      rewriter, loc, sum->getResultTypes(), partials, sum.getDpsInits(),
      stageMaps, stageIterators,
      [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
        SmallVector<Value> sums;
        unsigned count = partials.size();
        for (unsigned k = 0; k < count; ++k)
          sums.push_back(
              arith::AddFOp::create(b, bodyLoc, args[count + k], args[k]));
        linalg::YieldOp::create(b, bodyLoc, sums);
      });
  rewriter.replaceOp(sum, stage->getResults());
  rewriter.eraseOp(producer);
  return success();
}

struct FuseSumsIntoProducersPass
    : public traincc::impl::FuseSumsIntoProducersPassBase<
          FuseSumsIntoProducersPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      SmallVector<linalg::GenericOp> sums;
      func.walk([&](linalg::GenericOp op) {
        if (op.hasPureTensorSemantics() && op.getNumReductionLoops() != 0 &&
            !op.hasIndexSemantics() && accumulatesPureSums(op))
          sums.push_back(op);
      });
      for (linalg::GenericOp sum : sums) {
        std::optional<SumOfProducer> found = findProducer(sum);
        if (!found)
          continue;
        // Each rewrite moves ops: the dominance of the ones before it may
        // have changed.
        DominanceInfo dominance(func);
        (void)fuseSum(rewriter, *found, dominance);
      }
    }
  }
};

} // namespace
