//===- ExplicitTrainingMode.cpp - BatchNorm and dropout per mode ----------===//

#include "traincc/Dialect/Train/IR/TrainOps.h"
#include "traincc/Transforms/Passes.h"

#include "StepFunctions.h"

#include "mlir/IR/Builders.h"

namespace traincc {
#define GEN_PASS_DEF_EXPLICITTRAININGMODEPASS
#include "traincc/Transforms/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

/// bn-stats=step: micro-batches pooled since the last optimizer step.

/// The symbol of the parameter `value` reads, if it is a plain read.
FlatSymbolRefAttr paramSymbolOf(Value value) {
  if (auto read = value.getDefiningOp<train::ReadParamOp>())
    return read.getParamAttr();
  return nullptr;
}

/// Module attribute saying that the running variance takes the biased batch
/// variance (Keras, Flax and the ONNX specification) rather than PyTorch's
/// unbiased one; the importer sets it from the model's producer.
constexpr llvm::StringLiteral kRunningVarianceAttrName =
    "train.bn_running_variance";

/// `variance * (1 - 1 / (count * batches))` (batches: a 0-d tensor, or
/// none for 1): the biased variance that bn_running_update, which corrects
/// by n / (n - 1), turns back into itself.
Value cancelBesselCorrection(OpBuilder &builder, Location loc, Value variance,
                             int64_t count, Value batches) {
  auto type = cast<RankedTensorType>(variance.getType());
  auto scalarType = RankedTensorType::get({}, type.getElementType());
  auto scalar = [&](double value) -> Value {
    return train::ConstantOp::create(
        builder, loc,
        DenseElementsAttr::get(
            scalarType, builder.getFloatAttr(type.getElementType(), value)));
  };
  Value factor = scalar(double(count - 1) / double(count));
  if (batches) {
    Value n =
        train::MulOp::create(builder, loc, scalar(double(count)), batches);
    factor = train::SubOp::create(
        builder, loc, scalar(1.0),
        train::DivOp::create(builder, loc, scalar(1.0), n));
  }
  return train::MulOp::create(builder, loc, variance, factor);
}

struct ExplicitTrainingModePass
    : public traincc::impl::ExplicitTrainingModePassBase<
          ExplicitTrainingModePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto lossFunc = module.lookupSymbol<func::FuncOp>("loss");
    auto evalFunc = module.lookupSymbol<func::FuncOp>("eval_step");
    if (!lossFunc || !evalFunc) {
      module.emitError("expected @loss and @eval_step (run "
                       "traincc-append-loss first)");
      return signalPassFailure();
    }
    if (failed(rewriteTraining(module, lossFunc)))
      return signalPassFailure();
    rewriteEvaluation(evalFunc);
  }

  /// Training form: batch statistics, running-statistics updates, masks.
  LogicalResult rewriteTraining(ModuleOp module, func::FuncOp func) {
    OpBuilder builder(func);
    // Every micro-step gets a seed for its dropout masks, so the runtime
    // calls every model the same way.
    unsigned seedIndex = func.getNumArguments();
    (void)func.insertArgument(
        seedIndex, builder.getI64Type(),
        builder.getDictionaryAttr(
            builder.getNamedAttr("train.name", builder.getStringAttr("seed"))),
        func.getLoc());
    Value seed = func.getArgument(seedIndex);

    SmallVector<train::BatchNormOp> norms;
    SmallVector<train::DropoutOp> dropouts;
    func.walk([&](Operation *op) {
      if (auto bn = dyn_cast<train::BatchNormOp>(op))
        norms.push_back(bn);
      else if (auto dropout = dyn_cast<train::DropoutOp>(op))
        dropouts.push_back(dropout);
    });

    for (auto [stream, dropout] : llvm::enumerate(dropouts)) {
      builder.setInsertionPoint(dropout);
      Value mask = train::DropoutMaskOp::create(
          builder, dropout.getLoc(), dropout.getType(), seed,
          dropout.getRatioAttr(), builder.getI64IntegerAttr(stream));
      Value dropped = train::MulOp::create(builder, dropout.getLoc(),
                                           dropout.getInput(), mask);
      dropout.replaceAllUsesWith(dropped);
      dropout.erase();
    }

    // bn-stats=step updates the running statistics in @apply_step.
    func::FuncOp apply;
    if (bnStats == BNStatsMode::Step && !norms.empty()) {
      FailureOr<func::FuncOp> applyOr = getOrCreateApplyStep(module);
      if (failed(applyOr))
        return failure();
      apply = *applyOr;
    }

    auto convention =
        module->getAttrOfType<StringAttr>(kRunningVarianceAttrName);
    biasedRunningVariance = convention && convention.getValue() == "biased";
    for (train::BatchNormOp bn : norms) {
      FlatSymbolRefAttr mean = paramSymbolOf(bn.getRunningMean());
      FlatSymbolRefAttr var = paramSymbolOf(bn.getRunningVar());
      if (!mean || !var)
        return bn.emitError("running statistics of a trained BatchNorm must "
                            "be parameters (ONNX initializers)");
      builder.setInsertionPoint(bn);
      Location loc = bn.getLoc();
      auto stats = train::BNStatsOp::create(builder, loc, bn.getInput());
      // An f16/bf16 model's f32 statistics, in its parameters' type.
      Value batchMean = stats.getMean(), batchVar = stats.getVariance();
      if (batchMean.getType() != bn.getScale().getType()) {
        batchMean = train::CastOp::create(builder, loc, bn.getScale().getType(),
                                          batchMean);
        batchVar = train::CastOp::create(builder, loc, bn.getScale().getType(),
                                         batchVar);
      }
      Value normalized = train::BNApplyOp::create(
          builder, loc, bn.getType(), bn.getInput(), batchMean, batchVar,
          bn.getScale(), bn.getBias(), bn.getEpsilonAttr());
      RankedTensorType inputType = bn.getInput().getType();
      int64_t count = inputType.getNumElements() / inputType.getDimSize(1);
      // As in PyTorch: one value has no variance to normalise with.
      if (count < 2)
        return bn.emitError("a BatchNorm in training needs more than one "
                            "value per channel, got ")
               << count << " for input " << inputType;
      if (bnStats == BNStatsMode::Micro)
        train::BNRunningUpdateOp::create(
            builder, loc, mean, var, batchMean,
            biasedRunningVariance
                ? cancelBesselCorrection(builder, loc, batchVar, count, Value())
                : batchVar,
            /*batches=*/Value(), /*skip_if=*/Value(), bn.getMomentumAttr(),
            builder.getI64IntegerAttr(count));
      else
        poolForStep(module, apply, builder, bn, stats, mean, var, count);
      bn.replaceAllUsesWith(normalized);
      bn.erase();
    }
    return success();
  }

  /// bn-stats=step: each micro-batch adds its mean and mean of squares to
  /// accumulators (and counts itself); @apply_step turns their averages into
  /// the statistics of the whole effective batch and updates once.
  void poolForStep(ModuleOp module, func::FuncOp apply, OpBuilder &builder,
                   train::BatchNormOp bn, train::BNStatsOp stats,
                   FlatSymbolRefAttr mean, FlatSymbolRefAttr var,
                   int64_t count) {
    Location loc = bn.getLoc();
    auto anchor = module.lookupSymbol<train::ParamOp>(mean.getAttr());
    RankedTensorType statType = stats.getMean().getType();
    std::string base = mean.getValue().str();
    FlatSymbolRefAttr meanSum =
        declareBuffer(anchor, base + ".pooled_mean", statType,
                      train::ParamKind::BNAccumulator);
    FlatSymbolRefAttr squareSum =
        declareBuffer(anchor, base + ".pooled_square", statType,
                      train::ParamKind::BNAccumulator);
    // Micro-batches pooled since the last optimizer step, in the
    // statistics' element type so that every division stays in one type.
    auto counterType = RankedTensorType::get({}, statType.getElementType());
    FlatSymbolRefAttr batches =
        declareBuffer(anchor, base + ".pooled_count", counterType,
                      train::ParamKind::BNAccumulator);

    // In the micro-step: sums of means and of E[x^2] = var + mean^2.
    Value one = arith::ConstantOp::create(builder, loc,
                                          builder.getF32FloatAttr(1.0f));
    Value square = train::MulOp::create(builder, loc, stats.getMean(),
                                        stats.getMean());
    Value secondMoment =
        train::AddOp::create(builder, loc, stats.getVariance(), square);
    train::AccumulateOp::create(builder, loc, meanSum, stats.getMean(), one);
    train::AccumulateOp::create(builder, loc, squareSum, secondMoment, one);
    Value unit = train::ConstantOp::create(
        builder, loc,
        DenseElementsAttr::get(
            counterType, builder.getFloatAttr(counterType.getElementType(), 1.0)));
    train::AccumulateOp::create(builder, loc, batches, unit, one);

    // In the optimizer step: pooled statistics and the single update.
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(apply.getBody().back().getTerminator());
    Value n = train::ReadParamOp::create(builder, loc, counterType, batches);
    Value pooledMean = train::DivOp::create(
        builder, loc,
        train::ReadParamOp::create(builder, loc, statType, meanSum), n);
    Value pooledSquare = train::DivOp::create(
        builder, loc,
        train::ReadParamOp::create(builder, loc, statType, squareSum), n);
    Value pooledVar = train::SubOp::create(
        builder, loc, pooledSquare,
        train::MulOp::create(builder, loc, pooledMean, pooledMean));
    if (biasedRunningVariance)
      pooledVar = cancelBesselCorrection(builder, loc, pooledVar, count, n);
    // f32 statistics of an f16/bf16 model: in its running statistics' type.
    Type runningType = bn.getRunningMean().getType();
    if (pooledMean.getType() != runningType) {
      pooledMean = train::CastOp::create(builder, loc, runningType, pooledMean);
      pooledVar = train::CastOp::create(builder, loc, runningType, pooledVar);
    }
    train::BNRunningUpdateOp::create(builder, loc, mean, var, pooledMean,
                                     pooledVar, n, /*skip_if=*/Value(),
                                     bn.getMomentumAttr(),
                                     builder.getI64IntegerAttr(count));
    train::ZeroOp::create(builder, loc, meanSum);
    train::ZeroOp::create(builder, loc, squareSum);
    train::ZeroOp::create(builder, loc, batches);
  }

  bool biasedRunningVariance = false;

  /// Evaluation form: running statistics, no dropout.
  void rewriteEvaluation(func::FuncOp func) {
    func.walk([&](Operation *op) {
      OpBuilder builder(op);
      if (auto bn = dyn_cast<train::BatchNormOp>(op)) {
        Value normalized = train::BNApplyOp::create(
            builder, bn.getLoc(), bn.getType(), bn.getInput(),
            bn.getRunningMean(), bn.getRunningVar(), bn.getScale(),
            bn.getBias(), bn.getEpsilonAttr());
        bn.replaceAllUsesWith(normalized);
        bn.erase();
      } else if (auto dropout = dyn_cast<train::DropoutOp>(op)) {
        dropout.replaceAllUsesWith(dropout.getInput());
        dropout.erase();
      }
    });
  }
};

} // namespace
