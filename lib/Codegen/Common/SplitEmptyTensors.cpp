//===- SplitEmptyTensors.cpp - one tensor.empty per use -------------------===//

#include "traincc/Codegen/Common/Passes.h"

#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace traincc {
#define GEN_PASS_DEF_SPLITEMPTYTENSORSPASS
#include "traincc/Codegen/Common/Passes.h.inc"
} // namespace traincc

using namespace mlir;

namespace {

struct SplitEmptyTensorsPass
    : public traincc::impl::SplitEmptyTensorsPassBase<SplitEmptyTensorsPass> {
  void runOnOperation() override {
    SmallVector<tensor::EmptyOp> shared;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      bool recomputes = false;
      func.walk([&](Operation *op) {
        recomputes |= op->hasAttr(traincc::train::kRecomputedAttrName);
      });
      if (!recomputes)
        continue;
      func.walk([&](tensor::EmptyOp empty) {
        if (!empty->hasOneUse() && !empty->use_empty())
          shared.push_back(empty);
      });
    }
    OpBuilder builder(&getContext());
    for (tensor::EmptyOp empty : shared) {
      // Each use gets a copy placed right before it (or before the op
      // around it).
      for (OpOperand &use : llvm::make_early_inc_range(empty->getUses())) {
        Operation *user = use.getOwner();
        Operation *anchor = empty->getBlock()->findAncestorOpInBlock(*user);
        builder.setInsertionPoint(anchor ? anchor : user);
        use.set(builder.clone(*empty)->getResult(0));
      }
      empty.erase();
    }
  }
};

} // namespace
