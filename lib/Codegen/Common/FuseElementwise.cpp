//===- FuseElementwise.cpp - elementwise producers into consumers ---------===//
//
// Upstream's elementwise fusion patterns do the rewriting; this pass decides
// which producers may fuse (mayFuse: the cost model of Passes.td) and
// applies the patterns to a fixed point, so a chain fuses step by step into
// its last consumer. A consumer that reads its producer through a
// collapse_shape is expanded to the producer's loops first
// (mayExpandConsumer), so that the two fuse. For CPU loop nests, sibling
// reductions that read one tensor then merge (mergeSiblingReductions):
// upstream has no such pattern, and on the GPU they stay apart. A max
// pooling is one of them once generalized: its gradient's winner search
// reads the same windows, and merged the backward step need not read the
// pooling's input again.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/Common/OpPlacement.h"
#include "traincc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace traincc {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "traincc/Codegen/Common/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using traincc::codegen::hoistBefore;
using traincc::codegen::isHoistableBefore;

namespace {

/// Whether every op of `producer`'s body is cheap enough to repeat for each
/// point of a larger consumer: additions, multiplications, comparisons,
/// selections and conversions, not divisions or transcendental functions.
bool isCheapToRepeat(linalg::GenericOp producer) {
  return llvm::all_of(producer.getBody()->without_terminator(),
                      [](Operation &op) {
                        return isa<arith::AddFOp, arith::SubFOp,
                                   arith::MulFOp, arith::NegFOp,
                                   arith::MaximumFOp, arith::MinimumFOp,
                                   arith::CmpFOp, arith::SelectOp,
                                   arith::ExtFOp, arith::TruncFOp,
                                   arith::ConstantOp>(op);
                      });
}

/// Whether `producer`'s body computes nothing: it copies, broadcasts or
/// converts its inputs.
bool computesNothing(linalg::GenericOp producer) {
  return llvm::all_of(producer.getBody()->without_terminator(),
                      [](Operation &op) {
                        return isa<arith::ExtFOp, arith::TruncFOp>(op);
                      });
}

/// Whether every op of `op`'s body that reads an output's running value
/// selects or compares (a maximum, a minimum, a winner search), so that
/// the reduction's result does not depend on how its loops are split.
bool combinesWithoutRounding(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  for (BlockArgument out : body->getArguments().drop_front(
           op.getNumDpsInputs()))
    for (Operation *user : out.getUsers())
      if (!isa<arith::MaximumFOp, arith::MinimumFOp, arith::CmpFOp,
               arith::CmpIOp, arith::SelectOp, linalg::YieldOp>(user))
        return false;
  return true;
}

/// How many points of `consumer`'s loops read each element of `operand`:
/// the product of the loops its map leaves out (4 for a 2x2 window's
/// offsets, N x H x W for a per-channel vector); 0 if a loop is dynamic.
int64_t repeatsPerElement(linalg::LinalgOp consumer, OpOperand *operand) {
  AffineMap map = consumer.getMatchingIndexingMap(operand);
  int64_t repeats = 1;
  for (auto [dim, range] : llvm::enumerate(consumer.getStaticLoopRanges())) {
    if (map.isFunctionOfDim(dim))
      continue;
    if (ShapedType::isDynamic(range))
      return 0;
    repeats *= range;
  }
  return repeats;
}

/// On the CPU a cheap producer is computed again at each point that reads
/// it when that is at most this many times per element: a pooling window's
/// offsets (the ReLU mask inside max pooling's gradient saves writing and
/// reading the masked gradient), not a per-channel vector's N x H x W.
constexpr int64_t kMaxCPURepeats = 16;

/// Whether the producer of `operand` may be inlined into its consumer: the
/// consumer is the producer's only user, so nothing is materialised for
/// someone else, and each producer element is computed once (the consumer
/// reads it through a permutation) or is cheap to compute again at every
/// point that reads it (a broadcast of a per-channel scale: repeating a
/// square root per element would cost more than the small tensor saves).
/// For CPU loop nests only a producer that computes nothing, or a cheap one
/// read at most kMaxCPURepeats times per element, is repeated, and a
/// reduction takes in no arithmetic: LLVM splits a vectorized sum
/// across lanes as the loop body suggests, so a sum whose body depended on
/// what fused would round differently with --recompute than without.
/// A reduction whose combination does not round (a maximum or a winner
/// search) is the exception: its result is the same however the loop is
/// split, so it takes in cheap arithmetic (BatchNorm computed inside the
/// max pooling's window pass).
bool mayFuse(OpOperand *operand, bool cpuKernels) {
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  if (!producer || !producer->hasOneUse())
    return false;
  auto consumer = cast<linalg::LinalgOp>(operand->getOwner());
  if (cpuKernels && consumer.getNumReductionLoops() != 0)
    return computesNothing(producer) ||
           (combinesWithoutRounding(consumer) && isCheapToRepeat(producer));
  if (consumer.getMatchingIndexingMap(operand).isPermutation())
    return true;
  if (!cpuKernels)
    return isCheapToRepeat(producer);
  return computesNothing(producer) ||
         (isCheapToRepeat(producer) &&
          repeatsPerElement(consumer, operand) <= kMaxCPURepeats);
}

/// Innermost trip counts shorter than this leave LLVM's vectorizer
/// nothing to do on the CPU.
constexpr int64_t kMinVectorTrip = 8;

/// Whether an elementwise consumer of `operand`, a collapse_shape of what a
/// generic computes for it alone, may take on the expanded iteration space,
/// so that it fuses with that generic: the mask of max pooling's gradient
/// (computed per 2x2 window position) and ReLU's mask (per pixel) become
/// one pass. Reductions keep their shape: the GPU mapping picks their
/// kernels by the loops they have.
/// For CPU loop nests the expanded innermost loop must stay long enough to
/// vectorize, or be the window offset of an interleaved row (2 to 4 long,
/// collapsed with the output position before it: 2x2 pooling windows),
/// whose operands traincc-vectorize-interleaved-windows loads as whole
/// rows split into phases by shuffles.
bool mayExpandConsumer(OpOperand *operand, bool cpuKernels) {
  constexpr int64_t kMinWindow = 2, kMaxWindow = 4;
  auto collapse = operand->get().getDefiningOp<tensor::CollapseShapeOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  if (!collapse || !consumer || !collapse->hasOneUse() ||
      consumer.getNumReductionLoops() != 0)
    return false;
  int64_t innermost = collapse.getSrcType().getShape().back();
  bool interleavedRow = innermost >= kMinWindow && innermost <= kMaxWindow &&
                        collapse.getReassociationIndices().back().size() == 2;
  if (cpuKernels && innermost < kMinVectorTrip && !interleavedRow)
    return false;
  auto producer = collapse.getSrc().getDefiningOp<linalg::GenericOp>();
  return producer && producer->hasOneUse() &&
         producer.getNumReductionLoops() == 0;
}

/// Whether `a` and `b` run the same loops and read some tensor (not a
/// scalar) through the same map, so that one pass over it can serve both.
bool areSiblings(linalg::GenericOp a, linalg::GenericOp b) {
  if (a == b || a->getBlock() != b->getBlock() ||
      a.getIteratorTypesArray() != b.getIteratorTypesArray() ||
      a.getStaticLoopRanges() != b.getStaticLoopRanges() ||
      (a.getNumReductionLoops() == 0 && b.getNumReductionLoops() == 0))
    return false;
  // One writing in place what the other reads would need a copy.
  for (auto [x, y] : {std::make_pair(a, b), std::make_pair(b, a)})
    for (Value init : x.getDpsInits())
      if (llvm::is_contained(y.getDpsInputs(), init))
        return false;
  for (OpOperand *inA : a.getDpsInputOperands())
    for (OpOperand *inB : b.getDpsInputOperands())
      if (inA->get() == inB->get() &&
          isa<RankedTensorType>(inA->get().getType()) &&
          a.getMatchingIndexingMap(inA) == b.getMatchingIndexingMap(inB))
        return true;
  return false;
}

/// Whether every operand of `op` is available at `point`.
bool operandsDefinedBefore(Operation *op, Operation *point,
                           DominanceInfo &dominance) {
  return llvm::all_of(op->getOperands(), [&](Value value) {
    return dominance.properlyDominates(value, point);
  });
}

/// Whether every operand of `op` is available at `point` or may move up to
/// it (a winner search's initial values: isHoistableBefore).
bool operandsHoistableBefore(Operation *op, Operation *point,
                             DominanceInfo &dominance) {
  return llvm::all_of(op->getOperands(), [&](Value value) {
    return isHoistableBefore(value, point, dominance);
  });
}

/// Whether no user of `op`'s results comes before `point` in its block.
bool resultsUnusedBefore(Operation *op, Operation *point) {
  for (Operation *user : op->getUsers()) {
    Operation *ancestor = point->getBlock()->findAncestorOpInBlock(*user);
    if (!ancestor || !point->isBeforeInBlock(ancestor))
      return false;
  }
  return true;
}

/// One generic computing `first` and then `second` at every point, their
/// inputs and outputs concatenated, created before `point`; replaces both.
void mergeSiblings(RewriterBase &rewriter, linalg::GenericOp first,
                   linalg::GenericOp second, Operation *point) {
  // An input both read through the same map is read once: the producer
  // of a tensor with one reader may then fuse into the merged pass.
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<SmallVector<unsigned>> inputIndex(2);
  linalg::GenericOp ops[] = {first, second};
  for (unsigned k = 0; k < 2; ++k)
    for (OpOperand *input : ops[k].getDpsInputOperands()) {
      AffineMap map = ops[k].getMatchingIndexingMap(input);
      unsigned j = 0;
      while (j < inputs.size() &&
             (inputs[j] != input->get() || maps[j] != map))
        ++j;
      if (j == inputs.size()) {
        inputs.push_back(input->get());
        maps.push_back(map);
      }
      inputIndex[k].push_back(j);
    }
  SmallVector<Value> inits(first.getDpsInits());
  llvm::append_range(inits, second.getDpsInits());
  for (linalg::GenericOp op : {first, second})
    for (OpOperand &init : op.getDpsInitsMutable())
      maps.push_back(op.getMatchingIndexingMap(&init));
  SmallVector<Type> resultTypes(first->getResultTypes());
  llvm::append_range(resultTypes, second->getResultTypes());

  rewriter.setInsertionPoint(point);
  auto merged = linalg::GenericOp::create(
      rewriter, first.getLoc(), resultTypes, inputs, inits, maps,
      first.getIteratorTypesArray());
  // Block arguments in operand order: the inputs of both, then the outputs
  // of both.
  SmallVector<Type> argTypes;
  SmallVector<Location> argLocs;
  for (Value value : llvm::concat<Value>(inputs, inits)) {
    argTypes.push_back(getElementTypeOrSelf(value.getType()));
    argLocs.push_back(value.getLoc());
  }
  Block *body = rewriter.createBlock(&merged.getRegion(), {}, argTypes,
                                     argLocs);
  unsigned initOffset = inputs.size();
  SmallVector<Value> yields;
  for (unsigned k = 0; k < 2; ++k) {
    linalg::GenericOp op = ops[k];
    IRMapping mapping;
    Block *old = op.getBody();
    unsigned opInputs = op.getNumDpsInputs();
    for (auto [i, arg] : llvm::enumerate(old->getArguments()))
      mapping.map(arg, body->getArgument(i < opInputs
                                             ? inputIndex[k][i]
                                             : initOffset + i - opInputs));
    for (Operation &nested : old->without_terminator())
      rewriter.clone(nested, mapping);
    for (Value value : old->getTerminator()->getOperands())
      yields.push_back(mapping.lookupOrDefault(value));
    initOffset += op.getNumDpsInits();
  }
  linalg::YieldOp::create(rewriter, first.getLoc(), yields);
  unsigned numFirst = first->getNumResults();
  rewriter.replaceOp(first, merged->getResults().take_front(numFirst));
  rewriter.replaceOp(second, merged->getResults().drop_front(numFirst));
}

/// Merges sibling generics (areSiblings) of `func` pairwise until none is
/// left: at the earlier one's place when the later one's operands are all
/// defined by then, else at the later one's when nothing uses the earlier
/// one's results before it.
void mergeSiblingReductions(func::FuncOp func) {
  IRRewriter rewriter(func.getContext());
  DominanceInfo dominance(func);
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<linalg::GenericOp> generics;
    llvm::DenseMap<Operation *, size_t> position;
    func.walk([&](linalg::GenericOp op) {
      position[op] = generics.size();
      generics.push_back(op);
    });
    for (auto [i, first] : llvm::enumerate(generics)) {
      // Siblings read a tensor in common: the later generics among the
      // users of `first`'s inputs, in walk order (comparing every pair
      // made this pass cubic in the step's size: 7 s for a ResNet-50).
      SmallVector<linalg::GenericOp> candidates;
      for (Value input : first.getDpsInputs()) {
        if (!isa<RankedTensorType>(input.getType()))
          continue;
        for (Operation *user : input.getUsers()) {
          auto generic = dyn_cast<linalg::GenericOp>(user);
          auto at = generic ? position.find(generic) : position.end();
          if (at != position.end() && at->second > i &&
              !llvm::is_contained(candidates, generic))
            candidates.push_back(generic);
        }
      }
      llvm::sort(candidates, [&](linalg::GenericOp x, linalg::GenericOp y) {
        return position[x] < position[y];
      });
      for (linalg::GenericOp second : candidates) {
        if (!areSiblings(first, second) ||
            !first->isBeforeInBlock(second))
          continue;
        Operation *point = nullptr;
        if (operandsDefinedBefore(second, first, dominance)) {
          point = first;
        } else if (operandsHoistableBefore(second, first, dominance)) {
          for (Value operand : second->getOperands())
            hoistBefore(operand, first, dominance);
          point = first;
        } else if (resultsUnusedBefore(first, second)) {
          point = second;
        }
        if (!point)
          continue;
        mergeSiblings(rewriter, first, second, point);
        changed = true;
        break;
      }
      if (changed)
        break;
    }
  }
}

/// Named max poolings of `func` whose input a linalg.generic with the same
/// loops also reads (the winner search of the pooling's gradient) become
/// linalg.generic, so that mergeSiblingReductions can make them one pass.
void generalizePoolingsWithSiblings(func::FuncOp func) {
  IRRewriter rewriter(func.getContext());
  SmallVector<linalg::LinalgOp> poolings;
  func.walk([&](linalg::PoolingNchwMaxOp op) { poolings.push_back(op); });
  for (linalg::LinalgOp pooling : poolings) {
    Value input = pooling.getDpsInputOperand(0)->get();
    bool hasSibling = llvm::any_of(input.getUsers(), [&](Operation *user) {
      auto generic = dyn_cast<linalg::GenericOp>(user);
      return generic && generic->getBlock() == pooling->getBlock() &&
             generic.getStaticLoopRanges() ==
                 pooling.getStaticLoopRanges() &&
             generic.getIteratorTypesArray() ==
                 pooling.getIteratorTypesArray();
    });
    if (!hasSibling)
      continue;
    rewriter.setInsertionPoint(pooling);
    (void)linalg::generalizeNamedOp(rewriter, pooling);
  }
}

/// Gives each state result of `func` that a generic computes into a
/// `tensor.empty` (RemoveOutsDependency's work) its parameter's argument
/// back as destination.
void restoreStateDestinations(func::FuncOp func) {
  llvm::DenseMap<Attribute, BlockArgument> arguments;
  for (BlockArgument arg : func.getArguments())
    if (Attribute state = func.getArgAttr(arg.getArgNumber(), "train.state"))
      arguments[state] = arg;
  func.walk([&](func::ReturnOp ret) {
    for (OpOperand &operand : ret->getOpOperands()) {
      Attribute state =
          func.getResultAttr(operand.getOperandNumber(), "train.state");
      auto result = dyn_cast<OpResult>(operand.get());
      auto generic =
          result ? dyn_cast<linalg::GenericOp>(result.getOwner()) : nullptr;
      BlockArgument arg = state ? arguments.lookup(state) : BlockArgument();
      if (!generic || !arg)
        continue;
      OpOperand *init = generic.getDpsInitOperand(result.getResultNumber());
      auto empty = init->get().getDefiningOp<tensor::EmptyOp>();
      if (!empty || empty.getType() != arg.getType())
        continue;
      init->set(arg);
      if (empty->use_empty())
        empty->erase();
    }
  });
}

/// The tensor that `value` views through reshapes, if a linalg op of the
/// step computes it (bufferization then gives it a buffer that may be
/// written).
Value computedRoot(Value value) {
  while (isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
      value.getDefiningOp()))
    value = value.getDefiningOp()->getOperand(0);
  auto producer = value.getDefiningOp<linalg::LinalgOp>();
  if (!producer)
    return Value();
  // Not a parameter the producer updated in place.
  Value destination =
      producer.getDpsInitOperand(cast<OpResult>(value).getResultNumber())
          ->get();
  return isa<BlockArgument>(destination) ? Value() : value;
}

/// Whether nothing but `op` reads `root`, or a reshape of it, after `op`.
bool unreadAfter(Value root, Operation *op) {
  SmallVector<Value> views = {root};
  while (!views.empty()) {
    Value view = views.pop_back_val();
    for (Operation *user : view.getUsers()) {
      if (user == op)
        continue;
      if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(user)) {
        views.push_back(user->getResult(0));
        continue;
      }
      Operation *ancestor = op->getBlock()->findAncestorOpInBlock(*user);
      if (!ancestor || !ancestor->isBeforeInBlock(op))
        return false;
    }
  }
  return true;
}

/// Gives each elementwise generic of `func` that computes into a
/// `tensor.empty` an input as destination: one of the same type, read
/// through the same map, computed by the step and read by nothing after
/// it. Bufferization then writes the result over that input, and the
/// store needs no fresh cache lines (a write-allocate pass over memory)
/// nor a buffer of its own. Unfused, BatchNorm's input gradient came to
/// write over the masked output gradient through a `tensor.empty` it
/// shared with the mask; fused, that gradient is a collapse of the pooling
/// gradient's expanded loops, and the kernel took twice as long.
/// Not for an innermost loop shorter than a vector (a window offset):
/// traincc-vectorize-interleaved-windows reads and writes such rows with
/// masked vectors wider than a row, and a row read right after the masked
/// store of the row before it in the same buffer waits for that store (the
/// pooling gradients with the ReLU mask took 30-50% longer in place).
void writeOverDyingInputs(func::FuncOp func) {
  func.walk([](linalg::GenericOp op) {
    if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0 ||
        !op.hasPureTensorSemantics() || op.getNumLoops() == 0 ||
        op.getStaticLoopRanges().back() < kMinVectorTrip)
      return;
    OpOperand *init = op.getDpsInitOperand(0);
    if (!init->get().getDefiningOp<tensor::EmptyOp>() ||
        op.payloadUsesValueFromOperand(init))
      return;
    AffineMap map = op.getMatchingIndexingMap(init);
    for (OpOperand *input : op.getDpsInputOperands()) {
      Value value = input->get();
      if (value.getType() != init->get().getType() ||
          op.getMatchingIndexingMap(input) != map)
        continue;
      Value root = computedRoot(value);
      if (!root || !unreadAfter(root, op))
        continue;
      init->set(value);
      return;
    }
  });
}

struct FuseElementwisePass
    : public traincc::impl::FuseElementwisePassBase<FuseElementwisePass> {
  using FuseElementwisePassBase::FuseElementwisePassBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    bool cpu = cpuKernels;
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [cpu](OpOperand *operand) { return mayFuse(operand, cpu); });
    linalg::populateFoldReshapeOpsByExpansionPatterns(
        patterns, [cpu](OpOperand *operand) {
          return mayExpandConsumer(operand, cpu);
        });
    FrozenRewritePatternSet frozen(std::move(patterns));
    if (failed(applyPatternsGreedily(getOperation(), frozen)))
      return signalPassFailure();
    // After producer-consumer fusion, which needs the single users that a
    // merge would share; then again, for the producers whose readers the
    // merges made one (BatchNorm read by a max pooling and its winner
    // search).
    if (cpuKernels) {
      for (auto func : getOperation().getOps<func::FuncOp>()) {
        generalizePoolingsWithSiblings(func);
        mergeSiblingReductions(func);
      }
      if (failed(applyPatternsGreedily(getOperation(), frozen)))
        return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      restoreStateDestinations(func);
      if (cpuKernels)
        writeOverDyingInputs(func);
    }
  }
};

} // namespace
