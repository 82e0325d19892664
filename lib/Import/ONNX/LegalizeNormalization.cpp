//===- LegalizeNormalization.cpp - layer, instance and group norms --------===//
//
// LayerNormalization (opset 17, what current PyTorch writes for nn.LayerNorm
// where 1.13 wrote its decomposition), InstanceNormalization and
// GroupNormalization (opset 18). Each normalises over trailing axes with
// the biased variance and epsilon inside the square root, then scales and
// shifts. They import as compositions of Train ops that already have
// gradient rules (sum_to for the means, sub, mul, div, sqrt), the ops that
// PyTorch 1.13's decomposed LayerNorm imports as: one gradient path for
// every export, checked by the float64 gradient check, and left to the
// elementwise fusion to merge into few kernels. BatchNormalization, whose
// statistics are state, stays train.batch_norm (LegalizeNN.cpp).
//
//===----------------------------------------------------------------------===//

#include "LegalizeUtils.h"

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

namespace {

/// A rank-0 constant of `element` type.
Value scalarConstant(RewriterBase &rewriter, Location loc, Type element,
                     double value) {
  return createConstant(
      rewriter, loc,
      DenseElementsAttr::get(RankedTensorType::get({}, element),
                             rewriter.getFloatAttr(element, value)));
}

/// `x` normalised over its axes from `axis` on, with the statistics of the
/// kept shape (those axes as 1).
struct Normalized {
  Value value, mean, deviation;
};

FailureOr<Normalized> normalizeTrailing(const ONNXNode &node,
                                        RewriterBase &rewriter, Value x,
                                        int64_t axis, double epsilon) {
  auto type = cast<RankedTensorType>(x.getType());
  Location loc = node.getLoc();
  Type element = type.getElementType();
  SmallVector<int64_t> kept(type.getShape());
  int64_t count = 1;
  for (int64_t i = axis; i < type.getRank(); ++i) {
    count *= kept[i];
    kept[i] = 1;
  }
  if (count == 0) {
    node.emitError() << "normalises over an empty set of elements";
    return failure();
  }
  auto keptType = RankedTensorType::get(kept, element);
  Value inverseCount = scalarConstant(rewriter, loc, element, 1.0 / count);
  auto meanOf = [&](Value value) -> Value {
    Value sum = train::SumToOp::create(rewriter, loc, keptType, value);
    return train::MulOp::create(rewriter, loc, keptType, sum, inverseCount);
  };
  Value mean = meanOf(x);
  Value centred = train::SubOp::create(rewriter, loc, type, x, mean);
  Value squares = train::MulOp::create(rewriter, loc, type, centred, centred);
  Value variance = meanOf(squares);
  Value shifted = train::AddOp::create(
      rewriter, loc, keptType, variance,
      scalarConstant(rewriter, loc, element, epsilon));
  Value deviation = train::SqrtOp::create(rewriter, loc, shifted);
  Value value = train::DivOp::create(rewriter, loc, type, centred, deviation);
  return Normalized{value, mean, deviation};
}

/// `value` * scale (+ bias), broadcasting; a null bias is left out.
FailureOr<Value> scaleAndShift(const ONNXNode &node, RewriterBase &rewriter,
                               Value value, Value scale, Value bias) {
  FailureOr<Value> result =
      createInferred<train::MulOp>(node, rewriter, value, scale);
  if (succeeded(result) && bias)
    result = createInferred<train::AddOp>(node, rewriter, *result, bias);
  return result;
}

/// Optional input `index` as a float tensor: null when omitted.
FailureOr<Value> getOptionalFloatInput(const ONNXNode &node, unsigned index,
                                       StringRef what) {
  if (!node.getInput(index))
    return Value();
  return getFloatInput(node, index, what);
}

/// LayerNormalization: normalised over the axes from `axis` on, Scale and
/// B broadcast against them. The optional Mean and InvStdDev outputs
/// (which exporters do not write, but ONNX's tests do) have the input's
/// shape with those axes kept as 1.
LogicalResult legalizeLayerNorm(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "X");
  FailureOr<Value> scale = getFloatInput(node, 1, "Scale");
  FailureOr<Value> bias = getOptionalFloatInput(node, 2, "B");
  if (failed(input) || failed(scale) || failed(bias))
    return failure();
  auto type = cast<RankedTensorType>(input->getType());
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.getInt("axis", -1), type.getRank());
  if (failed(axis))
    return failure();
  FailureOr<Normalized> normalized = normalizeTrailing(
      node, rewriter, *input, *axis, node.getFloat("epsilon", 1e-5f));
  if (failed(normalized))
    return failure();
  Location loc = node.getLoc();
  auto outputs = node.getOp().getOutputs();
  if (outputs.size() > 1 && !outputs[1].use_empty())
    rewriter.replaceAllUsesWith(outputs[1], normalized->mean);
  if (outputs.size() > 2 && !outputs[2].use_empty()) {
    Value deviation = normalized->deviation;
    Value one = scalarConstant(rewriter, loc, type.getElementType(), 1.0);
    rewriter.replaceAllUsesWith(
        outputs[2], train::DivOp::create(rewriter, loc, deviation.getType(),
                                         one, deviation));
  }
  FailureOr<Value> result =
      scaleAndShift(node, rewriter, normalized->value, *scale, *bias);
  return failed(result) ? failure() : finishNode(node, rewriter, *result);
}

/// A per-channel vector [C] as [C, 1, ...] against an input of `rank`.
Value perChannel(RewriterBase &rewriter, Location loc, Value vector,
                 int64_t rank) {
  auto type = cast<RankedTensorType>(vector.getType());
  SmallVector<int64_t> shape(rank - 1, 1);
  shape[0] = type.getNumElements();
  return train::ReshapeOp::create(
      rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
      vector);
}

/// Checks that `value` is a vector of `size` elements.
LogicalResult checkVector(const ONNXNode &node, Value value, StringRef what,
                          int64_t size, StringRef of) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() == 1 && type.getDimSize(0) == size)
    return success();
  node.emitError() << what << " of type " << type << " is not a vector of "
                   << size << " elements (" << of << ")";
  return failure();
}

/// InstanceNormalization: each (sample, channel) normalised over its
/// spatial axes, then per-channel scale and B.
LogicalResult legalizeInstanceNorm(const ONNXNode &node,
                                   RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "input");
  FailureOr<Value> scale = getFloatInput(node, 1, "scale");
  FailureOr<Value> bias = getFloatInput(node, 2, "B");
  if (failed(input) || failed(scale) || failed(bias))
    return failure();
  auto type = cast<RankedTensorType>(input->getType());
  if (type.getRank() < 3) {
    node.emitError() << "expects an input of rank 3 or more, [N, C, D...]";
    return failure();
  }
  int64_t channels = type.getDimSize(1);
  if (failed(checkVector(node, *scale, "scale", channels, "one per channel")) ||
      failed(checkVector(node, *bias, "B", channels, "one per channel")))
    return failure();
  FailureOr<Normalized> normalized = normalizeTrailing(
      node, rewriter, *input, 2, node.getFloat("epsilon", 1e-5f));
  if (failed(normalized))
    return failure();
  Location loc = node.getLoc();
  Value channelScale = perChannel(rewriter, loc, *scale, type.getRank());
  Value channelBias = perChannel(rewriter, loc, *bias, type.getRank());
  FailureOr<Value> result = scaleAndShift(node, rewriter, normalized->value,
                                          channelScale, channelBias);
  return failed(result) ? failure() : finishNode(node, rewriter, *result);
}

/// GroupNormalization: the channels split into `num_groups` groups, each
/// (sample, group) normalised over its channels and spatial axes. Scale and
/// bias are per channel (opset 21, PyTorch's nn.GroupNorm) or per group
/// (opset 18's first definition); their length tells which (the same when
/// every group is one channel).
LogicalResult legalizeGroupNorm(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "X");
  FailureOr<Value> scale = getFloatInput(node, 1, "scale");
  FailureOr<Value> bias = getFloatInput(node, 2, "bias");
  if (failed(input) || failed(scale) || failed(bias))
    return failure();
  auto type = cast<RankedTensorType>(input->getType());
  std::optional<int64_t> groups = node.getInt("num_groups");
  if (!groups) {
    node.emitError() << "attribute 'num_groups' is missing";
    return failure();
  }
  if (type.getRank() < 2) {
    node.emitError() << "expects an input of rank 2 or more, [N, C, D...]";
    return failure();
  }
  int64_t channels = type.getDimSize(1);
  if (*groups <= 0 || channels % *groups != 0) {
    node.emitError() << "num_groups " << *groups << " does not divide the "
                     << channels << " channels";
    return failure();
  }
  int64_t scaleSize = cast<RankedTensorType>(scale->getType()).getNumElements();
  bool perGroup = scaleSize == *groups && *groups != channels;
  int64_t size = perGroup ? *groups : channels;
  StringRef of = perGroup ? "one per group" : "one per channel";
  if (failed(checkVector(node, *scale, "scale", size, of)) ||
      failed(checkVector(node, *bias, "bias", size, of)))
    return failure();
  Location loc = node.getLoc();
  Type element = type.getElementType();
  int64_t batch = type.getDimSize(0);
  int64_t perGroupElements = type.getNumElements() / std::max<int64_t>(
                                                         1, batch * *groups);
  auto groupedType =
      RankedTensorType::get({batch, *groups, perGroupElements}, element);
  Value grouped =
      train::ReshapeOp::create(rewriter, loc, groupedType, *input);
  FailureOr<Normalized> normalized = normalizeTrailing(
      node, rewriter, grouped, 2, node.getFloat("epsilon", 1e-5f));
  if (failed(normalized))
    return failure();
  Value value = normalized->value;
  if (!perGroup)
    value = train::ReshapeOp::create(rewriter, loc, type, value);
  int64_t rank = perGroup ? 3 : type.getRank();
  Value vectorScale = perChannel(rewriter, loc, *scale, rank);
  Value vectorBias = perChannel(rewriter, loc, *bias, rank);
  FailureOr<Value> result =
      scaleAndShift(node, rewriter, value, vectorScale, vectorBias);
  if (perGroup && succeeded(result))
    result = Value(train::ReshapeOp::create(rewriter, loc, type, *result));
  return failed(result) ? failure() : finishNode(node, rewriter, *result);
}

} // namespace

void onnx_import::addNormalizationHandlers(HandlerTable &table) {
  table["LayerNormalization"] = legalizeLayerNorm;
  table["InstanceNormalization"] = legalizeInstanceNorm;
  table["GroupNormalization"] = legalizeGroupNorm;
}
