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
// a function of the shapes alone. The GPU kernels' pipeline runs it (a
// launch and a pass over dy fewer per BatchNorm); the CPU's does not, where
// it measured slower (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/Common/Passes.h"
#include "traincc/Codegen/Common/OpPlacement.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"

namespace traincc {
#define GEN_PASS_DEF_FUSESUMSINTOPRODUCERSPASS
#include "traincc/Codegen/Common/Passes.h.inc"
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

/// How a sum's loops become the merged op's: the producer's loops that
/// stay reductions (the image's rows), and those that index the sum's
/// outputs (the channels).
struct LoopRoles {
  SmallVector<utils::IteratorType> iterators;
  SmallVector<bool> kept, channel;

  bool operator==(const LoopRoles &other) const {
    return iterators == other.iterators && kept == other.kept &&
           channel == other.channel;
  }
};

/// The roles of the producer's loops for `op.sum`, or failure where the
/// sum's loops are not batch, channels, then image (see Passes.td).
FailureOr<LoopRoles> loopRoles(SumOfProducer &op) {
  linalg::GenericOp sum = op.sum;
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
  unsigned producerLoops = op.producer.getNumLoops();
  LoopRoles roles;
  roles.iterators.assign(producerLoops, utils::IteratorType::parallel);
  roles.kept.assign(producerLoops, false);
  for (unsigned loop = imageBegin; loop + 1 < numLoops; ++loop)
    for (int64_t dim : op.groups[loop]) {
      roles.iterators[dim] = utils::IteratorType::reduction;
      roles.kept[dim] = true;
    }
  // The sum's parallel loops (the channels) index its outputs and stay
  // parallel in the second stage: one producer loop each.
  roles.channel.assign(producerLoops, false);
  for (unsigned loop = firstParallel; loop < imageBegin; ++loop) {
    if (op.groups[loop].size() != 1)
      return failure();
    roles.channel[op.groups[loop].front()] = true;
  }
  return roles;
}

/// A sum that may join its producer: its inputs other than the summed
/// one, read over the producer's loops.
struct PlannedSum {
  SumOfProducer op;
  SmallVector<OpOperand *> others;
  SmallVector<AffineMap> otherMaps;
  /// Whether it also reads a tensor like the summed one (BatchNorm's x).
  bool readsLikeSummed = false;
};

/// `op.sum`'s other inputs over the producer's loops, or failure where
/// they or its outputs are read along other loops.
FailureOr<PlannedSum> planSum(SumOfProducer &op) {
  PlannedSum plan;
  plan.op = op;
  linalg::GenericOp sum = op.sum;
  AffineMap summedMap = sum.getMatchingIndexingMap(op.summed);
  for (OpOperand *input : sum.getDpsInputOperands()) {
    if (input == op.summed)
      continue;
    AffineMap map = mapIntoProducer(op, sum.getMatchingIndexingMap(input));
    if (!map)
      return failure();
    plan.others.push_back(input);
    plan.otherMaps.push_back(map);
    plan.readsLikeSummed |= sum.getMatchingIndexingMap(input) == summedMap;
  }
  for (OpOperand &init : sum.getDpsInitsMutable())
    if (!readsParallelLoopsInOrder(sum, sum.getMatchingIndexingMap(&init)))
      return failure();
  return plan;
}

/// Rewrites the sums of `plans` (all of one producer's result, with the
/// loop roles `roles`) into that producer (see Passes.td); fails, changing
/// nothing, where the order of the ops does not allow it.
LogicalResult fuseSums(RewriterBase &rewriter, MutableArrayRef<PlannedSum> plans,
                       const LoopRoles &roles, DominanceInfo &dominance) {
  SumOfProducer &first = plans.front().op;
  linalg::GenericOp producer = first.producer;
  // Only sums that also read another tensor like the summed one
  // (BatchNorm's x) make the producer take them: that pass over x goes,
  // with the read of dy. A sum of the producer's result alone (a bias
  // gradient) reads it from cache right after it was written: 0.07 ms
  // apart against 0.39 ms added to the producer on the example CNN (one
  // thread). It joins when another sum brings the producer in anyway
  // (BatchNorm's sum of dy on the GPU, where the two sums are two ops).
  if (llvm::none_of(plans,
                    [](const PlannedSum &plan) { return plan.readsLikeSummed; }))
    return failure();

  // The merged op goes where the producer is: the sums' other inputs must
  // be available there, or move up to it (a fill).
  Operation *point = producer;
  for (PlannedSum &plan : plans)
    for (OpOperand *input : plan.others)
      if (!isHoistableBefore(input->get(), point, dominance))
        return failure();
  for (PlannedSum &plan : plans)
    for (OpOperand *input : plan.others)
      hoistBefore(input->get(), point, dominance);

  Location loc = first.sum.getLoc();
  rewriter.setInsertionPoint(point);
  SmallVector<Value> inputs(producer.getDpsInputs());
  SmallVector<AffineMap> maps;
  for (OpOperand *input : producer.getDpsInputOperands())
    maps.push_back(producer.getMatchingIndexingMap(input));
  for (PlannedSum &plan : plans) {
    AffineMap summedMap = plan.op.sum.getMatchingIndexingMap(plan.op.summed);
    for (auto [input, map] : llvm::zip(plan.others, plan.otherMaps)) {
      Value value = input->get();
      // Read like the summed tensor: expanded like it.
      if (first.collapse &&
          plan.op.sum.getMatchingIndexingMap(input) == summedMap)
        value = tensor::ExpandShapeOp::create(
            rewriter, loc, first.collapse.getSrcType(), value,
            first.collapse.getReassociationIndices());
      inputs.push_back(value);
      maps.push_back(map);
    }
  }

  // The partials: laid out like the producer's result without the kept
  // loops, zero-filled.
  AffineMap resultMap = first.resultMap;
  unsigned producerLoops = producer.getNumLoops();
  SmallVector<int64_t> partialDims;
  SmallVector<AffineExpr> partialExprs;
  SmallVector<int64_t> producerRanges = producer.getStaticLoopRanges();
  SmallVector<int64_t> partialShape;
  for (unsigned resultDim = 0; resultDim < producerLoops; ++resultDim) {
    unsigned dim = resultMap.getDimPosition(resultDim);
    if (roles.kept[dim])
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
  for (PlannedSum &plan : plans)
    for (unsigned k = 0; k < plan.op.sum.getNumDpsInits(); ++k) {
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
                                          inits, maps, roles.iterators);
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
  SmallVector<Value> yields = {produced};
  unsigned nextInput = producerInputs, nextOutput = inputs.size() + 1;
  for (PlannedSum &plan : plans) {
    linalg::GenericOp sum = plan.op.sum;
    IRMapping sumMapping;
    for (OpOperand *input : sum.getDpsInputOperands())
      sumMapping.map(sum.getMatchingBlockArgument(input),
                     input == plan.op.summed ? produced
                                             : body->getArgument(nextInput++));
    for (BlockArgument out : sum.getRegionOutputArgs())
      sumMapping.map(out, body->getArgument(nextOutput++));
    for (Operation &nested : sum.getBody()->without_terminator())
      rewriter.clone(nested, sumMapping);
    for (Value value : sum.getBody()->getTerminator()->getOperands())
      yields.push_back(sumMapping.lookupOrDefault(value));
  }
  linalg::YieldOp::create(rewriter, loc, yields);

  rewriter.replaceAllUsesWith(producer->getResult(0), merged->getResult(0));

  // Second stages: each channel's partials added, with a body of adds
  // alone; one per sum, where the sum was.
  SmallVector<utils::IteratorType> stageIterators;
  SmallVector<AffineExpr> outExprs;
  for (auto [position, dim] : llvm::enumerate(partialDims)) {
    stageIterators.push_back(roles.channel[dim]
                                 ? utils::IteratorType::parallel
                                 : utils::IteratorType::reduction);
    if (roles.channel[dim])
      outExprs.push_back(rewriter.getAffineDimExpr(position));
  }
  unsigned stageLoops = partialDims.size();
  AffineMap outMap =
      AffineMap::get(stageLoops, 0, outExprs, rewriter.getContext());
  ValueRange remaining = merged->getResults().drop_front();
  for (PlannedSum &plan : plans) {
    linalg::GenericOp sum = plan.op.sum;
    ValueRange partials = remaining.take_front(sum.getNumDpsInits());
    remaining = remaining.drop_front(sum.getNumDpsInits());
    rewriter.setInsertionPoint(sum);
    SmallVector<AffineMap> stageMaps(
        partials.size(),
        AffineMap::getMultiDimIdentityMap(stageLoops, rewriter.getContext()));
    stageMaps.append(sum.getNumDpsInits(), outMap);
    auto stage = linalg::GenericOp::create(
        rewriter, sum.getLoc(), sum->getResultTypes(), partials,
        sum.getDpsInits(), stageMaps, stageIterators,
        [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
          SmallVector<Value> sums;
          unsigned count = partials.size();
          for (unsigned k = 0; k < count; ++k)
            sums.push_back(
                arith::AddFOp::create(b, bodyLoc, args[count + k], args[k]));
          linalg::YieldOp::create(b, bodyLoc, sums);
        });
    rewriter.replaceOp(sum, stage->getResults());
  }
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
      // The sums of each producer's result, in order: all of them join it
      // in one rewrite (BatchNorm's two sums are two ops where
      // traincc-fuse-elementwise leaves siblings apart).
      llvm::MapVector<Operation *, SmallVector<PlannedSum, 2>> byProducer;
      for (linalg::GenericOp sum : sums) {
        std::optional<SumOfProducer> found = findProducer(sum);
        if (!found)
          continue;
        FailureOr<PlannedSum> plan = planSum(*found);
        if (succeeded(plan))
          byProducer[found->producer].push_back(*plan);
      }
      for (auto &[producer, plans] : byProducer) {
        // Those that read the result as the first one does and whose loops
        // play the same roles.
        SumOfProducer &first = plans.front().op;
        FailureOr<LoopRoles> roles = loopRoles(plans.front().op);
        if (failed(roles))
          continue;
        SmallVector<PlannedSum, 2> joining;
        for (PlannedSum &plan : plans) {
          FailureOr<LoopRoles> own = loopRoles(plan.op);
          if (plan.op.collapse == first.collapse && succeeded(own) &&
              *own == *roles)
            joining.push_back(plan);
        }
        // Each rewrite moves ops: the dominance of the ones before it may
        // have changed.
        DominanceInfo dominance(func);
        (void)fuseSums(rewriter, joining, *roles, dominance);
      }
    }
  }
};

} // namespace
