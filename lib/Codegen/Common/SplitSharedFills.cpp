//===- SplitSharedFills.cpp - one linalg.fill per destination -------------===//

#include "traincc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace traincc {
#define GEN_PASS_DEF_SPLITSHAREDFILLSPASS
#include "traincc/Codegen/Common/Passes.h.inc"
} // namespace traincc

using namespace mlir;

namespace {

/// Whether `use` is the destination (init) of a destination-style op that
/// writes its result there.
bool isDestination(OpOperand &use) {
  auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
  return dps && dps.isDpsInit(&use);
}

struct SplitSharedFillsPass
    : public traincc::impl::SplitSharedFillsPassBase<SplitSharedFillsPass> {
  void runOnOperation() override {
    SmallVector<linalg::FillOp> shared;
    getOperation().walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics() &&
          llvm::count_if(fill->getResult(0).getUses(), isDestination) > 1)
        shared.push_back(fill);
    });
    OpBuilder builder(&getContext());
    for (linalg::FillOp fill : shared) {
      Value result = fill->getResult(0);
      auto empty = fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
      // Each destination gets a copy (of the fill and of its empty tensor)
      // placed right before its user; readers keep the original.
      for (OpOperand &use : llvm::make_early_inc_range(result.getUses())) {
        if (!isDestination(use))
          continue;
        Operation *user = use.getOwner();
        Operation *anchor = fill->getBlock()->findAncestorOpInBlock(*user);
        builder.setInsertionPoint(anchor ? anchor : user);
        IRMapping mapping;
        if (empty)
          mapping.map(empty.getResult(), builder.clone(*empty)->getResult(0));
        use.set(builder.clone(*fill, mapping)->getResult(0));
      }
      if (result.use_empty()) {
        fill.erase();
        if (empty && empty->use_empty())
          empty.erase();
      }
    }
  }
};

} // namespace
