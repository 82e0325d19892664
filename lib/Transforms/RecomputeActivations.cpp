//===- RecomputeActivations.cpp - cheap saved values computed twice -------===//
//
// A value the forward pass computes and the backward pass reads stays
// alive from its producer to its last backward use: across the whole
// forward/backward boundary, where the step's memory peaks. For the output
// of an elementwise op (BN apply, ReLU, an addition) whose inputs are kept
// anyway, that memory buys little: computing the op again next to its
// backward use costs one pass over the data. Here such values are cloned
// into the backward pass, so the forward value dies with its last forward
// use and the clone lives only around its backward uses.
//
// Which values: walking the forward ops in order, an elementwise result is
// recomputable when each operand is available in the backward pass (a step
// argument, a parameter or constant, a value the backward pass keeps
// anyway, or itself recomputable) and the chain of ops its recomputation
// needs stays within `max-chain`. A longer chain (a residual stream that
// would be rebuilt from the first block) keeps the value instead, which
// makes it available to the values after it.
//
// The clones carry `train.recomputed`; the Train to linalg conversion
// carries that mark to the linalg ops, where CSE would otherwise merge
// each clone back into its forward original.
//
//===----------------------------------------------------------------------===//

#include "traincc/Dialect/Train/IR/TrainOps.h"
#include "traincc/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

#include <functional>

namespace traincc {
#define GEN_PASS_DEF_RECOMPUTEACTIVATIONSPASS
#include "traincc/Transforms/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

/// Ops whose recomputation is one pass over their output.
bool isCheap(Operation *op) {
  if (op->getNumResults() != 1 ||
      !isa<RankedTensorType>(op->getResult(0).getType()) || !isPure(op))
    return false;
  return isa<train::BNApplyOp, train::AddOp, train::SubOp, train::MulOp,
             train::DivOp, train::MaximumOp, train::MinimumOp>(op) ||
         op->hasTrait<OpTrait::Elementwise>();
}

struct RecomputeActivationsPass
    : public traincc::impl::RecomputeActivationsPassBase<
          RecomputeActivationsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (maxChain < 1) {
      module.emitError() << "traincc-recompute-activations: max-chain must be "
                            "at least 1, got "
                         << static_cast<int64_t>(maxChain);
      return signalPassFailure();
    }
    auto step = module.lookupSymbol<func::FuncOp>("micro_step");
    if (!step || step.isExternal())
      return;
    recompute(step);
  }

  void recompute(func::FuncOp step) {
    Block &body = step.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    if (ret.getNumOperands() == 0)
      return;
    Operation *lossOp = ret.getOperand(0).getDefiningOp();
    if (!lossOp)
      return;
    DenseMap<Operation *, unsigned> position;
    for (Operation &op : body)
      position[&op] = position.size();
    unsigned boundary = position.lookup(lossOp);

    // The forward pass: what the loss depends on.
    DenseSet<Operation *> forward;
    SmallVector<Operation *> worklist{lossOp};
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      if (!forward.insert(op).second)
        continue;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (def->getBlock() == &body)
            worklist.push_back(def);
    }
    // A forward value the backward pass reads (after the loss).
    auto backwardUses = [&](Value value) {
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : value.getUses()) {
        Operation *top = body.findAncestorOpInBlock(*use.getOwner());
        if (top && position.lookup(top) > boundary)
          uses.push_back(&use);
      }
      return uses;
    };

    // In forward order: the ops each recomputable value needs (itself
    // included), or none when it is kept or not available at all.
    DenseMap<Value, unsigned> chain;
    DenseSet<Value> kept;
    // Parameter reads and constants name state, not step memory.
    auto isAvailable = [&](Value value) {
      Operation *def = value.getDefiningOp();
      return !def || !forward.contains(def) ||
             isa<train::ReadParamOp, train::ConstantOp>(def) ||
             kept.contains(value) || chain.contains(value);
    };
    SmallVector<Value> saved;
    for (Operation &op : body) {
      if (!forward.contains(&op) || &op == lossOp)
        continue;
      for (Value result : op.getResults()) {
        bool isSaved = !backwardUses(result).empty();
        if (isCheap(&op) && llvm::all_of(op.getOperands(), isAvailable)) {
          unsigned length = 1;
          for (Value operand : op.getOperands())
            length += chain.lookup(operand);
          if (length <= unsigned(maxChain)) {
            chain[result] = length;
            if (isSaved)
              saved.push_back(result);
            continue;
          }
        }
        if (isSaved)
          kept.insert(result);
      }
    }

    // Each saved recomputable value is cloned, with what its clone needs,
    // before its first backward use; later uses share the clone.
    llvm::sort(saved, [&](Value a, Value b) {
      return firstUse(backwardUses(a), body, position) <
             firstUse(backwardUses(b), body, position);
    });
    IRMapping clones;
    OpBuilder builder(step.getContext());
    StringAttr mark = builder.getStringAttr(train::kRecomputedAttrName);
    std::function<Value(Value)> cloneOf = [&](Value value) -> Value {
      if (!chain.contains(value))
        return value;
      if (Value clone = clones.lookupOrNull(value))
        return clone;
      Operation *op = value.getDefiningOp();
      IRMapping operands;
      for (Value operand : op->getOperands())
        operands.map(operand, cloneOf(operand));
      Operation *clone = builder.clone(*op, operands);
      clone->setAttr(mark, builder.getUnitAttr());
      clones.map(value, clone->getResult(0));
      return clone->getResult(0);
    };
    for (Value value : saved) {
      SmallVector<OpOperand *> uses = backwardUses(value);
      builder.setInsertionPoint(
          body.findAncestorOpInBlock(*firstUseOwner(uses, body, position)));
      Value clone = cloneOf(value);
      for (OpOperand *use : uses)
        use->set(clone);
    }
  }

  static Operation *firstUseOwner(ArrayRef<OpOperand *> uses, Block &body,
                                  const DenseMap<Operation *, unsigned> &at) {
    Operation *first = nullptr;
    for (OpOperand *use : uses) {
      Operation *top = body.findAncestorOpInBlock(*use->getOwner());
      if (!first || at.lookup(top) < at.lookup(first))
        first = top;
    }
    return first;
  }

  static unsigned firstUse(ArrayRef<OpOperand *> uses, Block &body,
                           const DenseMap<Operation *, unsigned> &at) {
    return at.lookup(firstUseOwner(uses, body, at));
  }
};

} // namespace
