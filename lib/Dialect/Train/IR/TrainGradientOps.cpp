//===- TrainGradientOps.cpp - losses and gradient ops ---------------------===//
//
// Gradient ops whose result shape is written (the forward input's) are
// verified by running the forward op's shape function on that result and
// comparing with the gradient's shape: one source of truth for shapes.
//
//===----------------------------------------------------------------------===//

#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace traincc::train;

namespace {

RankedTensorType rankedType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Checks a loss's class labels against [N, C] logits.
LogicalResult checkLogitsAndLabels(std::optional<Location> loc,
                                   RankedTensorType logits,
                                   RankedTensorType labels) {
  if (logits.getRank() != 2)
    return emitOptionalError(loc, "logits must be [N, C], got ", logits);
  if (labels.getRank() != 1 || labels.getDimSize(0) != logits.getDimSize(0))
    return emitOptionalError(loc, "labels must be [", logits.getDimSize(0),
                             "], got ", labels);
  return success();
}

/// Checks a regression loss's target against its prediction: same type.
LogicalResult checkTarget(std::optional<Location> loc,
                          RankedTensorType prediction, Value target) {
  if (prediction != target.getType())
    return emitOptionalError(loc, "target type ", target.getType(),
                             " differs from prediction type ", prediction);
  return success();
}

/// The result type of a loss with the given reduction over N samples.
RankedTensorType lossType(Reduction reduction, int64_t samples,
                          Type elementType) {
  if (reduction == Reduction::Mean)
    return RankedTensorType::get({}, elementType);
  return RankedTensorType::get({samples}, elementType);
}

/// The upstream gradient of a mean loss is the loss's own type: a scalar of
/// the operand's element type.
LogicalResult checkScalarGrad(std::optional<Location> loc, Value grad,
                              Type elementType) {
  RankedTensorType type = rankedType(grad);
  if (type.getRank() != 0)
    return emitOptionalError(loc, "upstream gradient of a mean loss must be a "
                                  "scalar, got ",
                             type);
  if (type.getElementType() != elementType)
    return emitOptionalError(loc, "upstream gradient element type ",
                             type.getElementType(), " differs from ",
                             elementType);
  return success();
}

/// Checks that a written result shape is what the forward op would consume:
/// the forward shape function applied to it must give the gradient's shape.
/// The forward shape function reports at the op's location without naming
/// it, so a failure gets a second error that does.
LogicalResult checkForwardShape(Operation *op,
                                FailureOr<SmallVector<int64_t>> forward,
                                RankedTensorType grad) {
  if (failed(forward))
    return op->emitOpError("result type and attributes do not describe a "
                           "valid forward op");
  Type resultElement = getElementTypeOrSelf(op->getResult(0).getType());
  if (grad.getElementType() != resultElement)
    return op->emitOpError("gradient element type ")
           << grad.getElementType() << " differs from result element type "
           << resultElement;
  if (ArrayRef<int64_t>(*forward) != grad.getShape())
    return op->emitOpError("gradient of type ")
           << grad << " does not match the forward result shape implied by "
           << "the result type";
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxCrossEntropyOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  RankedTensorType logits = rankedType(adaptor.getLogits());
  if (failed(checkLogitsAndLabels(loc, logits, rankedType(adaptor.getLabels()))))
    return failure();
  types.push_back(lossType(adaptor.getReduction(), logits.getDimSize(0),
                           logits.getElementType()));
  return success();
}

LogicalResult SoftmaxCrossEntropyBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  RankedTensorType logits = rankedType(adaptor.getLogits());
  if (failed(checkScalarGrad(loc, adaptor.getGrad(),
                             logits.getElementType())) ||
      failed(checkLogitsAndLabels(loc, logits, rankedType(adaptor.getLabels()))))
    return failure();
  types.push_back(logits);
  return success();
}

LogicalResult MSEOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  RankedTensorType prediction = rankedType(adaptor.getPrediction());
  if (failed(checkTarget(loc, prediction, adaptor.getTarget())))
    return failure();
  if (prediction.getRank() < 1)
    return emitOptionalError(loc, "prediction needs a batch axis");
  types.push_back(lossType(adaptor.getReduction(), prediction.getDimSize(0),
                           prediction.getElementType()));
  return success();
}

LogicalResult MSEBackwardOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  RankedTensorType prediction = rankedType(adaptor.getPrediction());
  if (failed(checkScalarGrad(loc, adaptor.getGrad(),
                             prediction.getElementType())) ||
      failed(checkTarget(loc, prediction, adaptor.getTarget())))
    return failure();
  types.push_back(prediction);
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and broadcasts
//===----------------------------------------------------------------------===//

LogicalResult ReduceSumOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  SmallVector<bool> reduced(input.getRank(), false);
  for (int64_t axis : adaptor.getAxes()) {
    if (axis < 0 || axis >= input.getRank() || reduced[axis])
      return emitOptionalError(loc, "axes must be distinct axes of rank ",
                               input.getRank());
    reduced[axis] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < input.getRank(); ++i)
    if (!reduced[i])
      shape.push_back(input.getDimSize(i));
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

OpFoldResult ReduceSumOp::fold(FoldAdaptor) {
  if (getAxes().empty())
    return getInput();
  return {};
}

/// True when `small` broadcasts to `large` under numpy rules.
static bool broadcastsTo(RankedTensorType small, RankedTensorType large) {
  FailureOr<SmallVector<int64_t>> joined =
      broadcastShapes(small.getShape(), large.getShape());
  return succeeded(joined) && ArrayRef<int64_t>(*joined) == large.getShape();
}

LogicalResult SumToOp::verify() {
  if (getInput().getType().getElementType() != getType().getElementType())
    return emitOpError("element type changes");
  if (!broadcastsTo(getType(), getInput().getType()))
    return emitOpError("result type ")
           << getType() << " does not broadcast to the input type "
           << getInput().getType();
  return success();
}

OpFoldResult SumToOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

LogicalResult BroadcastToOp::verify() {
  if (getInput().getType().getElementType() != getType().getElementType())
    return emitOpError("element type changes");
  if (!broadcastsTo(getInput().getType(), getType()))
    return emitOpError("input type ")
           << getInput().getType() << " does not broadcast to "
           << getType();
  return success();
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto splat = dyn_cast_if_present<SplatElementsAttr>(adaptor.getInput()))
    return splat.resizeSplat(getType());
  return {};
}

//===----------------------------------------------------------------------===//
// Gradients of layers
//===----------------------------------------------------------------------===//

LogicalResult ConvBackwardDataOp::verify() {
  return checkForwardShape(
      *this,
      inferConvShape(getLoc(), getType(), getWeight().getType(), Type(),
                     getStrides(), getPads(), getDilations(), getGroups()),
      getGrad().getType());
}

LogicalResult ConvBackwardFilterOp::verify() {
  return checkForwardShape(
      *this,
      inferConvShape(getLoc(), getInput().getType(), getType(), Type(),
                     getStrides(), getPads(), getDilations(), getGroups()),
      getGrad().getType());
}

/// As for train.batch_norm: a negative epsilon could make the normaliser's
/// square root NaN.
static LogicalResult verifyEpsilon(Operation *op, const APFloat &epsilon) {
  if (!(epsilon.convertToFloat() >= 0.0f))
    return op->emitOpError("epsilon must be non-negative, got ")
           << epsilon.convertToFloat();
  return success();
}

LogicalResult BatchNormBackwardOp::verify() {
  RankedTensorType input = getInput().getType();
  if (input.getRank() < 2)
    return emitOpError("input must have rank 2 or more (N, C, ...), got ")
           << input;
  RankedTensorType stats = getMean().getType();
  if (stats.getRank() != 1 || stats.getDimSize(0) != input.getDimSize(1))
    return emitOpError("statistics must be vectors of ")
           << input.getDimSize(1) << " elements, got " << stats;
  if (!isBatchNormStatType(stats.getElementType(), input.getElementType()))
    return emitOpError("statistics and input differ in element type");
  return verifyEpsilon(*this, getEpsilon());
}

LogicalResult ClipBackwardOp::verify() {
  if (getMin() && getMax() &&
      getMin()->convertToFloat() > getMax()->convertToFloat())
    return emitOpError("min ") << getMin()->convertToFloat() << " exceeds max "
                               << getMax()->convertToFloat();
  return success();
}

static LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << rank;
  return success();
}

LogicalResult SoftmaxBackwardOp::verify() {
  return verifyAxis(*this, getAxis(), getType().getRank());
}

LogicalResult LogSoftmaxBackwardOp::verify() {
  return verifyAxis(*this, getAxis(), getType().getRank());
}

LogicalResult MaxPoolBackwardOp::verify() {
  if (getInput().getType() != getType())
    return emitOpError("result type must be the forward input's type ")
           << getInput().getType();
  return checkForwardShape(
      *this,
      inferPoolShape(getLoc(), getType(), getKernelShape(), getStrides(),
                     getPads(), getDilations(), getCeilMode()),
      getGrad().getType());
}

LogicalResult AvgPoolBackwardOp::verify() {
  SmallVector<int64_t> dilations(
      std::max<int64_t>(getType().getRank() - 2, 0), 1);
  return checkForwardShape(
      *this,
      inferPoolShape(getLoc(), getType(), getKernelShape(), getStrides(),
                     getPads(), dilations, getCeilMode()),
      getGrad().getType());
}

LogicalResult GatherBackwardOp::verify() {
  RankedTensorType data = getType();
  if (data.getElementType() != getGrad().getType().getElementType())
    return emitOpError("element type changes");
  FailureOr<SmallVector<int64_t>> shape = inferGatherShape(
      getLoc(), data.getShape(), getIndices().getType().getShape(), getAxis());
  if (failed(shape))
    return failure();
  if (ArrayRef<int64_t>(*shape) != getGrad().getType().getShape())
    return emitOpError("grad type ")
           << getGrad().getType() << " is not the gather result of " << data;
  return success();
}

LogicalResult ReduceMaxBackwardOp::verify() {
  if (getGrad().getType() != getOutput().getType())
    return emitOpError("grad type ")
           << getGrad().getType() << " differs from the output type "
           << getOutput().getType();
  if (getInput().getType() != getType())
    return emitOpError("result type differs from the input type");
  return verifyKeptDimsReduction(*this, getInput().getType(),
                                 getOutput().getType());
}

LogicalResult SliceBackwardOp::verify() {
  return checkForwardShape(
      *this,
      inferSliceShape(getLoc(), getType(), getStarts(), getEnds(), getSteps()),
      getGrad().getType());
}
