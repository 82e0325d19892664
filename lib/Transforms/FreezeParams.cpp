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
    // Checked as written: anchoring could balance a stray parenthesis
    // ("a)|(b" would become "^(a)|(b)$") and change what matches.
    std::string error;
    if (!llvm::Regex(pattern).isValid(error)) {
      getOperation().emitError()
          << "invalid --freeze regex '" << pattern << "': " << error;
      return signalPassFailure();
    }
    // Anchored: the pattern must match the whole name.
    llvm::Regex regex("^(" + pattern + ")$");
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
