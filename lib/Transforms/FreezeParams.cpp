//===- FreezeParams.cpp - --freeze REGEX ----------------------------------===//

#include "traincc/Dialect/Train/IR/TrainOps.h"
#include "traincc/Transforms/Passes.h"

#include "llvm/Support/Regex.h"

namespace traincc {
#define GEN_PASS_DEF_FREEZEPARAMSPASS
#include "traincc/Transforms/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

struct FreezeParamsPass
    : public traincc::impl::FreezeParamsPassBase<FreezeParamsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (pattern.empty())
      return;
    // Anchored: the pattern must match the whole name.
    llvm::Regex regex("^(" + pattern + ")$");
    std::string error;
    if (!regex.isValid(error)) {
      getOperation().emitError()
          << "invalid --freeze regex '" << pattern << "': " << error;
      return signalPassFailure();
    }
    unsigned frozen = 0;
    for (auto param : getOperation().getOps<train::ParamOp>()) {
      if (param.getKind() != train::ParamKind::Trainable ||
          !regex.match(param.getSymName()))
        continue;
      param.setKind(train::ParamKind::Frozen);
      ++frozen;
    }
    if (frozen == 0)
      getOperation().emitWarning()
          << "--freeze '" << pattern << "' matches no trainable parameter";
  }
};

} // namespace
