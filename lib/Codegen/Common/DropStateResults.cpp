//===- DropStateResults.cpp - in-place state updates as side effects ------===//

#include "traincc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/BitVector.h"

namespace traincc {
#define GEN_PASS_DEF_DROPSTATERESULTSPASS
#include "traincc/Codegen/Common/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

struct DropStateResultsPass
    : public traincc::impl::DropStateResultsPassBase<DropStateResultsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
      llvm::BitVector drop(func.getNumResults());
      for (unsigned i = 0; i < func.getNumResults(); ++i) {
        auto state = func.getResultAttrOfType<FlatSymbolRefAttr>(i,
                                                                 "train.state");
        if (!state)
          continue;
        auto arg = dyn_cast<BlockArgument>(ret.getOperand(i));
        auto argState =
            arg ? func.getArgAttrOfType<FlatSymbolRefAttr>(arg.getArgNumber(),
                                                           "train.state")
                : nullptr;
        if (argState != state) {
          func.emitError("the update of ")
              << state << " was not done in place by bufferization";
          return signalPassFailure();
        }
        drop.set(i);
      }
      ret->eraseOperands(drop);
      if (failed(func.eraseResults(drop)))
        return signalPassFailure();
    }
  }
};

} // namespace
