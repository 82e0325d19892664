//===- LossScaling.cpp - dynamic loss scaling -----------------------------===//
//
// PyTorch's GradScaler as compiler output: the loss is scaled in @loss
// (autodiff then produces scaled gradients), and @apply_step unscales,
// checks, skips and updates the scale, all on the device and without host
// control flow: a skipped step is a flag the updates read.
//
//===----------------------------------------------------------------------===//

#include "traincc/Dialect/Train/IR/TrainOps.h"
#include "traincc/Transforms/Passes.h"

#include "StepFunctions.h"

#include "mlir/IR/Builders.h"

#include <cmath>

namespace traincc {
#define GEN_PASS_DEF_LOSSSCALINGPASS
#include "traincc/Transforms/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

struct LossScalingPass
    : public traincc::impl::LossScalingPassBase<LossScalingPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TrainingOptions options;
    options.precision = precision;
    options.lossScale = lossScale;
    options.lossScaleInit = initScale;
    options.lossScaleGrowthInterval = interval;
    auto resolved = options.getLossScale();
    if (auto *error = std::get_if<std::string>(&resolved)) {
      module.emitError(*error);
      return signalPassFailure();
    }
    TrainingOptions::LossScale setting =
        std::get<TrainingOptions::LossScale>(resolved);
    if (setting.mode == LossScaleMode::None)
      return;
    bool dynamic = setting.mode == LossScaleMode::Dynamic;
    double firstScale = dynamic ? double(initScale) : setting.value;
    if (failed(checkOptions(module, firstScale)))
      return signalPassFailure();
    auto lossFunc = module.lookupSymbol<func::FuncOp>("loss");
    if (!lossFunc || lossFunc.getNumResults() != 1) {
      module.emitError("expected a @loss function with one result (run "
                       "traincc-append-loss first)");
      return signalPassFailure();
    }
    auto ret = cast<func::ReturnOp>(lossFunc.getBody().front().getTerminator());
    Value loss = ret.getOperand(0);
    OpBuilder builder(module.getContext());
    auto scalarF32 = RankedTensorType::get({}, builder.getF32Type());
    if (loss.getType() != scalarF32) {
      lossFunc.emitError("loss scaling needs an f32 scalar loss, got ")
          << loss.getType();
      return signalPassFailure();
    }

    // The scaler's state, after the last parameter.
    train::ParamOp last;
    for (auto param : module.getOps<train::ParamOp>())
      last = param;
    if (last)
      builder.setInsertionPointAfter(last);
    else
      builder.setInsertionPointToStart(module.getBody());
    auto declare = [&](StringRef name, RankedTensorType type,
                       Attribute value) {
      train::ParamOp::create(
          builder, module.getLoc(), name, train::ParamKind::LossScaler, type,
          DenseElementsAttr::get(type, value), FlatSymbolRefAttr());
      return FlatSymbolRefAttr::get(module.getContext(), name);
    };
    FlatSymbolRefAttr scale =
        declare("loss_scaler.scale", scalarF32,
                builder.getF32FloatAttr(float(firstScale)));
    FlatSymbolRefAttr tracker = declare(
        "loss_scaler.growth_tracker",
        RankedTensorType::get({}, builder.getI64Type()),
        builder.getI64IntegerAttr(0));
    FlatSymbolRefAttr foundInf = declare("loss_scaler.found_inf", scalarF32,
                                         builder.getF32FloatAttr(0.0f));

    // @loss returns the scaled loss.
    builder.setInsertionPoint(ret);
    Value scaleValue =
        train::ReadParamOp::create(builder, ret.getLoc(), scalarF32, scale);
    ret.setOperand(0, train::ScaleLossOp::create(builder, ret.getLoc(), loss,
                                                 scaleValue, Value()));

    // Running statistics updated every micro-batch: backed up at the end
    // of each step, restored when the step is skipped.
    SmallVector<std::pair<FlatSymbolRefAttr, FlatSymbolRefAttr>> backups;
    lossFunc.walk([&](train::BNRunningUpdateOp update) {
      for (FlatSymbolRefAttr stat :
           {update.getRunningMeanAttr(), update.getRunningVarAttr()})
        backups.push_back({stat, declareBackup(module, stat)});
    });

    FailureOr<func::FuncOp> apply = getOrCreateApplyStep(module);
    if (failed(apply))
      return signalPassFailure();
    Block &body = apply->getBody().front();
    Operation *terminator = body.getTerminator();
    Location loc = apply->getLoc();
    builder.setInsertionPointToStart(&body);
    train::UnscaleCheckFiniteOp::create(builder, loc, scale, foundInf);
    Value found =
        train::ReadParamOp::create(builder, loc, scalarF32, foundInf);
    for (auto [stat, backup] : backups) {
      RankedTensorType type = statType(module, stat);
      Value saved = train::ReadParamOp::create(builder, loc, type, backup);
      train::AssignOp::create(builder, loc, stat, saved, /*only_if=*/found);
    }
    // Statistics pooled over the step (bn-stats=step) are not applied.
    for (auto update : body.getOps<train::BNRunningUpdateOp>())
      update.getSkipIfMutable().assign(found);

    builder.setInsertionPoint(terminator);
    for (auto [stat, backup] : backups) {
      Value current =
          train::ReadParamOp::create(builder, loc, statType(module, stat), stat);
      train::AssignOp::create(builder, loc, backup, current, Value());
    }
    train::UpdateLossScaleOp::create(
        builder, loc, scale, tracker, foundInf,
        builder.getF32FloatAttr(dynamic ? float(growth) : 1.0f),
        builder.getF32FloatAttr(dynamic ? float(backoff) : 1.0f),
        builder.getI64IntegerAttr(dynamic ? int64_t(interval) : 1));
  }

  LogicalResult checkOptions(ModuleOp module, double firstScale) {
    if (!(firstScale > 0.0) || !std::isfinite(float(firstScale)))
      return module.emitError("the loss scale must be a positive f32 "
                              "number, got ")
             << firstScale;
    if (!(growth >= 1.0) || !std::isfinite(growth))
      return module.emitError("the loss scale growth must be >= 1, got ")
             << growth;
    if (!(backoff > 0.0 && backoff <= 1.0))
      return module.emitError("the loss scale backoff must be in (0, 1], got ")
             << backoff;
    if (interval < 1)
      return module.emitError("the loss scale growth interval must be "
                              "positive, got ")
             << interval;
    return success();
  }

  RankedTensorType statType(ModuleOp module, FlatSymbolRefAttr stat) {
    return module.lookupSymbol<train::ParamOp>(stat.getAttr())
        .getTensorType();
  }

  /// `<stat>.step_start`, holding the statistic's initial value.
  FlatSymbolRefAttr declareBackup(ModuleOp module, FlatSymbolRefAttr stat) {
    auto param = module.lookupSymbol<train::ParamOp>(stat.getAttr());
    std::string name = (param.getSymName() + ".step_start").str();
    if (!module.lookupSymbol(name)) {
      OpBuilder builder(param);
      builder.setInsertionPointAfter(param);
      train::ParamOp::create(builder, param.getLoc(), name,
                             train::ParamKind::StepBackup, param.getType(),
                             param.getInitialValueAttr(), stat);
    }
    return FlatSymbolRefAttr::get(module.getContext(), name);
  }
};

} // namespace
