//===- BuildOptimizer.cpp - @apply_step -----------------------------------===//

#include "traincc/Dialect/Train/IR/TrainOps.h"
#include "traincc/Transforms/Passes.h"

#include "StepFunctions.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Regex.h"

namespace traincc {
#define GEN_PASS_DEF_BUILDOPTIMIZERPASS
#include "traincc/Transforms/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

/// Declares a zero-initialised optimizer-state buffer shaped like `param`.
FlatSymbolRefAttr declareState(train::ParamOp param, StringRef suffix) {
  return declareBuffer(param, (param.getSymName() + suffix).str(),
                       param.getTensorType(), train::ParamKind::OptimizerState);
}

struct BuildOptimizerPass
    : public traincc::impl::BuildOptimizerPassBase<BuildOptimizerPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::Regex noDecayRegex("^(" + noDecay + ")$");
    std::string error;
    // Checked as written, like --freeze: anchoring could balance it.
    if (!noDecay.empty() && !llvm::Regex(noDecay).isValid(error)) {
      module.emitError("invalid --no-decay regex '")
          << noDecay << "': " << error;
      return signalPassFailure();
    }

    OpBuilder builder(module.getBodyRegion());
    FailureOr<func::FuncOp> apply = getOrCreateApplyStep(module);
    if (failed(apply))
      return signalPassFailure();
    Block &body = apply->getBody().front();
    Value lr = body.getArgument(0), step = body.getArgument(1);
    // Optimizer updates run before anything an earlier pass put there (the
    // pooled BatchNorm update), which does not depend on them; but after
    // loss scaling's unscaling, and then only when it found no inf/NaN.
    builder.setInsertionPointToStart(&body);
    Value skipIf;
    auto checks = body.getOps<train::UnscaleCheckFiniteOp>();
    if (!checks.empty()) {
      train::UnscaleCheckFiniteOp check = *checks.begin();
      builder.setInsertionPointAfter(check);
      skipIf = train::ReadParamOp::create(
          builder, check.getLoc(),
          RankedTensorType::get({}, builder.getF32Type()),
          check.getFoundInfAttr());
    }

    // Mixed precision: the low-precision copy of each weight, which the
    // update rewrites.
    DenseMap<StringAttr, FlatSymbolRefAttr> weightCopies;
    for (auto copy : module.getOps<train::ParamOp>())
      if (copy.getKind() == train::ParamKind::WeightCopy)
        weightCopies[copy.getSourceAttr().getAttr()] =
            FlatSymbolRefAttr::get(copy.getSymNameAttr());

    // Pairs of (parameter, gradient buffer), in declaration order.
    SmallVector<std::pair<train::ParamOp, train::ParamOp>> pairs;
    for (auto param : module.getOps<train::ParamOp>()) {
      if (param.getKind() != train::ParamKind::Trainable)
        continue;
      auto grad = module.lookupSymbol<train::ParamOp>(
          (param.getSymName() + ".grad").str());
      if (grad && grad.getKind() == train::ParamKind::Gradient)
        pairs.push_back({param, grad});
    }

    for (auto [param, grad] : pairs) {
      Location loc = param.getLoc();
      auto paramRef = FlatSymbolRefAttr::get(param.getSymNameAttr());
      auto gradRef = FlatSymbolRefAttr::get(grad.getSymNameAttr());
      bool decays = noDecay.empty() || !noDecayRegex.match(param.getSymName());
      FlatSymbolRefAttr copy = weightCopies.lookup(param.getSymNameAttr());
      FloatAttr decay =
          builder.getF32FloatAttr(decays ? float(weightDecay) : 0.0f);
      if (optimizer == OptimizerKind::SGD) {
        FlatSymbolRefAttr buffer;
        if (momentum != 0.0)
          buffer = declareState(param, ".momentum_buffer");
        train::SGDUpdateOp::create(
            builder, loc, paramRef, gradRef, buffer, copy, lr, step, skipIf,
            builder.getF32FloatAttr(momentum),
            builder.getF32FloatAttr(dampening), builder.getBoolAttr(nesterov),
            decay);
      } else {
        FlatSymbolRefAttr expAvg = declareState(param, ".exp_avg");
        FlatSymbolRefAttr expAvgSq = declareState(param, ".exp_avg_sq");
        train::AdamUpdateOp::create(
            builder, loc, paramRef, gradRef, expAvg, expAvgSq, copy, lr, step,
            skipIf,
            builder.getF32FloatAttr(beta1), builder.getF32FloatAttr(beta2),
            builder.getF32FloatAttr(eps), decay,
            builder.getBoolAttr(optimizer == OptimizerKind::AdamW));
      }
      train::ZeroOp::create(builder, loc, gradRef);
    }
    module->setAttr("train.optimizer", builder.getStringAttr(stringifyEnum(optimizer.getValue())));
  }

};

} // namespace
