//===- TrainStepOps.cpp - training-step structure -------------------------===//

#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

#include <cmath>

using namespace mlir;
using namespace traincc::train;

/// Looks up the `train.param` that `op` names by `symbol` and checks its
/// kind set and, when given, its type.
static FailureOr<ParamOp> lookupBuffer(Operation *op,
                                       SymbolTableCollection &symbols,
                                       FlatSymbolRefAttr symbol,
                                       StringRef role, Type expectedType) {
  auto param = symbols.lookupNearestSymbolFrom<ParamOp>(op, symbol);
  if (!param)
    return op->emitOpError(role)
           << " '" << symbol.getValue() << "' does not name a train.param";
  if (expectedType && param.getType() != expectedType)
    return op->emitOpError(role)
           << " '" << symbol.getValue() << "' has type " << param.getType()
           << ", expected " << expectedType;
  return param;
}

/// Checks that `kind` is one of `allowed`.
static LogicalResult requireKind(Operation *op, ParamOp param, StringRef role,
                                 ArrayRef<ParamKind> allowed) {
  if (llvm::is_contained(allowed, param.getKind()))
    return success();
  return op->emitOpError(role)
         << " '" << param.getSymName() << "' is a "
         << stringifyParamKind(param.getKind()) << " parameter";
}

//===----------------------------------------------------------------------===//
// Explicit BatchNorm
//===----------------------------------------------------------------------===//

bool traincc::train::isBatchNormStatType(Type stat, Type input) {
  return stat == input ||
         (stat.isF32() && isa<Float16Type, BFloat16Type>(input));
}

LogicalResult BNStatsOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  if (input.getRank() < 2)
    return emitOptionalError(loc, "input must have rank 2 or more (N, C, ...), "
                                  "got ",
                             input);
  // Statistics of f16/bf16 activations are f32: they are sums over
  // thousands of values (mixed precision keeps BatchNorm in f32).
  Type element = input.getElementType();
  if (isa<Float16Type, BFloat16Type>(element))
    element = Float32Type::get(element.getContext());
  auto stats = RankedTensorType::get({input.getDimSize(1)}, element);
  types.append({stats, stats});
  return success();
}

LogicalResult BNApplyOp::verify() {
  RankedTensorType input = getInput().getType();
  RankedTensorType stats = getMean().getType();
  if (input.getRank() < 2)
    return emitOpError("input must have rank 2 or more (N, C, ...), got ")
           << input;
  if (stats.getRank() != 1 || stats.getDimSize(0) != input.getDimSize(1) ||
      !isBatchNormStatType(stats.getElementType(), input.getElementType()))
    return emitOpError("statistics, scale and bias must be vectors of ")
           << input.getDimSize(1) << " " << input.getElementType()
           << ", got " << stats;
  // As for train.batch_norm: a negative epsilon could make the square root
  // NaN.
  float epsilon = getEpsilon().convertToFloat();
  if (!(epsilon >= 0.0f))
    return emitOpError("epsilon must be non-negative, got ") << epsilon;
  return success();
}

LogicalResult BNRunningUpdateOp::verify() {
  if (getMean().getType() != getVariance().getType() ||
      getMean().getType().getRank() != 1)
    return emitOpError("mean and variance must be vectors of one type");
  float momentum = getMomentum().convertToFloat();
  if (!(momentum >= 0.0f && momentum <= 1.0f))
    return emitOpError("momentum must be in [0, 1], got ") << momentum;
  if (getCount() < 2)
    return emitOpError("count must be at least 2 for an unbiased variance, "
                       "got ")
           << getCount();
  return success();
}

LogicalResult
BNRunningUpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<ParamOp> mean = lookupBuffer(*this, symbols, getRunningMeanAttr(),
                                         "running mean", getMean().getType());
  if (failed(mean) ||
      failed(requireKind(*this, *mean, "running mean",
                         {ParamKind::RunningMean})))
    return failure();
  FailureOr<ParamOp> var = lookupBuffer(*this, symbols, getRunningVarAttr(),
                                        "running variance",
                                        getVariance().getType());
  if (failed(var) || failed(requireKind(*this, *var, "running variance",
                                        {ParamKind::RunningVar})))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Persistent buffers
//===----------------------------------------------------------------------===//

LogicalResult AccumulateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<ParamOp> buffer = lookupBuffer(*this, symbols, getBufferAttr(),
                                           "buffer", getValue().getType());
  if (failed(buffer))
    return failure();
  return requireKind(*this, *buffer, "buffer",
                     {ParamKind::Gradient, ParamKind::BNAccumulator});
}

LogicalResult AssignOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return lookupBuffer(*this, symbols, getBufferAttr(), "buffer",
                      getValue().getType());
}

LogicalResult ZeroOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return lookupBuffer(*this, symbols, getBufferAttr(), "buffer", Type());
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

/// Checks the parameter/gradient pair every optimizer update names, and
/// returns the parameter's type for its state buffers.
static FailureOr<Type> verifyParamAndGrad(Operation *op,
                                          SymbolTableCollection &symbols,
                                          FlatSymbolRefAttr paramSymbol,
                                          FlatSymbolRefAttr gradSymbol) {
  FailureOr<ParamOp> param =
      lookupBuffer(op, symbols, paramSymbol, "parameter", Type());
  if (failed(param) || failed(requireKind(op, *param, "parameter",
                                          {ParamKind::Trainable})))
    return failure();
  FailureOr<ParamOp> grad =
      lookupBuffer(op, symbols, gradSymbol, "gradient", param->getType());
  if (failed(grad) ||
      failed(requireKind(op, *grad, "gradient", {ParamKind::Gradient})))
    return failure();
  return param->getType();
}

static LogicalResult checkNonNegative(Operation *op, StringRef name,
                                      float value) {
  if (!(value >= 0.0f))
    return op->emitOpError(name) << " must be non-negative, got " << value;
  return success();
}

LogicalResult SGDUpdateOp::verify() {
  if (failed(checkNonNegative(*this, "momentum",
                              getMomentum().convertToFloat())) ||
      failed(checkNonNegative(*this, "weight_decay",
                              getWeightDecay().convertToFloat())))
    return failure();
  bool hasMomentum = !getMomentum().isZero();
  if (hasMomentum != static_cast<bool>(getMomentumBuffer()))
    return emitOpError("a momentum buffer is needed exactly when momentum is "
                       "non-zero");
  if (getNesterov() && (!hasMomentum || !getDampening().isZero()))
    return emitOpError("nesterov needs momentum and zero dampening");
  return success();
}

/// A `weight_copy` has the parameter's shape, a float element type, and
/// the `weight_copy` kind.
static LogicalResult verifyWeightCopy(Operation *op,
                                      SymbolTableCollection &symbols,
                                      FlatSymbolRefAttr copy, Type paramType) {
  if (!copy)
    return success();
  FailureOr<ParamOp> param = lookupBuffer(op, symbols, copy, "weight copy",
                                          Type());
  if (failed(param) || failed(requireKind(op, *param, "weight copy",
                                          {ParamKind::WeightCopy})))
    return failure();
  if (param->getTensorType().getShape() !=
      cast<RankedTensorType>(paramType).getShape())
    return op->emitOpError("weight copy '")
           << copy.getValue() << "' has type " << param->getType()
           << ", expected the shape of " << paramType;
  return success();
}

LogicalResult SGDUpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<Type> type =
      verifyParamAndGrad(*this, symbols, getParamAttr(), getGradAttr());
  if (failed(type) ||
      failed(verifyWeightCopy(*this, symbols, getWeightCopyAttr(), *type)))
    return failure();
  if (FlatSymbolRefAttr buffer = getMomentumBufferAttr()) {
    FailureOr<ParamOp> state =
        lookupBuffer(*this, symbols, buffer, "momentum buffer", *type);
    if (failed(state) || failed(requireKind(*this, *state, "momentum buffer",
                                            {ParamKind::OptimizerState})))
      return failure();
  }
  return success();
}

LogicalResult AdamUpdateOp::verify() {
  for (auto [name, value] :
       {std::pair<StringRef, float>{"beta1", getBeta1().convertToFloat()},
        {"beta2", getBeta2().convertToFloat()}})
    if (!(value >= 0.0f && value < 1.0f))
      return emitOpError(name) << " must be in [0, 1), got " << value;
  if (!(getEpsilon().convertToFloat() > 0.0f))
    return emitOpError("epsilon must be positive");
  // Both moments are read and written by one update: one buffer for both
  // would mix them.
  if (getExpAvgAttr() == getExpAvgSqAttr())
    return emitOpError("first and second moments must be distinct buffers");
  return checkNonNegative(*this, "weight_decay",
                          getWeightDecay().convertToFloat());
}

LogicalResult AdamUpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<Type> type =
      verifyParamAndGrad(*this, symbols, getParamAttr(), getGradAttr());
  if (failed(type) ||
      failed(verifyWeightCopy(*this, symbols, getWeightCopyAttr(), *type)))
    return failure();
  for (auto [role, symbol] :
       {std::pair<StringRef, FlatSymbolRefAttr>{"first moment",
                                                 getExpAvgAttr()},
        {"second moment", getExpAvgSqAttr()}}) {
    FailureOr<ParamOp> state = lookupBuffer(*this, symbols, symbol, role, *type);
    if (failed(state) || failed(requireKind(*this, *state, role,
                                            {ParamKind::OptimizerState})))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Loss scaling
//===----------------------------------------------------------------------===//

/// The loss scaler's buffers: 0-d, of `element` type, kind `loss_scaler`.
static LogicalResult verifyScalerBuffer(Operation *op,
                                        SymbolTableCollection &symbols,
                                        FlatSymbolRefAttr symbol,
                                        StringRef role, Type element) {
  FailureOr<ParamOp> param = lookupBuffer(
      op, symbols, symbol, role, RankedTensorType::get({}, element));
  if (failed(param))
    return failure();
  return requireKind(op, *param, role, {ParamKind::LossScaler});
}

LogicalResult
UnscaleCheckFiniteOp::verifySymbolUses(SymbolTableCollection &symbols) {
  Builder b(getContext());
  if (failed(verifyScalerBuffer(*this, symbols, getScaleAttr(), "scale",
                                b.getF32Type())))
    return failure();
  return verifyScalerBuffer(*this, symbols, getFoundInfAttr(), "found_inf",
                            b.getF32Type());
}

LogicalResult UpdateLossScaleOp::verify() {
  float growth = getGrowth().convertToFloat();
  float backoff = getBackoff().convertToFloat();
  if (!(growth >= 1.0f) || std::isinf(growth))
    return emitOpError("growth must be a finite number >= 1, got ") << growth;
  if (!(backoff > 0.0f && backoff <= 1.0f))
    return emitOpError("backoff must be in (0, 1], got ") << backoff;
  if (getInterval() < 1)
    return emitOpError("interval must be positive, got ") << getInterval();
  return success();
}

LogicalResult
UpdateLossScaleOp::verifySymbolUses(SymbolTableCollection &symbols) {
  Builder b(getContext());
  if (failed(verifyScalerBuffer(*this, symbols, getScaleAttr(), "scale",
                                b.getF32Type())) ||
      failed(verifyScalerBuffer(*this, symbols, getGrowthTrackerAttr(),
                                "growth tracker", b.getI64Type())))
    return failure();
  return verifyScalerBuffer(*this, symbols, getFoundInfAttr(), "found_inf",
                            b.getF32Type());
}

//===----------------------------------------------------------------------===//
// Randomness
//===----------------------------------------------------------------------===//

LogicalResult DropoutMaskOp::verify() {
  float ratio = getRatio().convertToFloat();
  if (!(ratio >= 0.0f && ratio < 1.0f))
    return emitOpError("ratio must be in [0, 1), got ") << ratio;
  return success();
}
