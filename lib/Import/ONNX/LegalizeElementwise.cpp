//===- LegalizeElementwise.cpp - ONNX elementwise handlers ----------------===//
//
// Arithmetic with numpy broadcasting (folded when both operands are
// constants: the integer arithmetic of shape sub-graphs), Max/Min and Clip,
// Pow with constant exponents and Sqrt (LayerNorm's decomposition),
// activations,
// Softmax/LogSoftmax and Identity.
//
//===----------------------------------------------------------------------===//

#include "LegalizeUtils.h"

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

namespace {

template <typename OpTy>
LogicalResult legalizeBinary(const ONNXNode &node, RewriterBase &rewriter) {
  DenseElementsAttr lhs = node.getConstantInput(0);
  DenseElementsAttr rhs = node.getConstantInput(1);
  if (lhs && rhs) {
    FailureOr<DenseElementsAttr> folded =
        foldBinary(node, node.getOpType(), lhs, rhs);
    if (failed(folded))
      return failure();
    FailureOr<Value> constant = createNodeConstant(node, rewriter, *folded);
    if (failed(constant))
      return failure();
    return finishNode(node, rewriter, *constant);
  }
  FailureOr<Value> a, b;
  if (failed(a = getFloatInput(node, 0, "A")) ||
      failed(b = getFloatInput(node, 1, "B")))
    return failure();
  FailureOr<Value> result = createInferred<OpTy>(node, rewriter, *a, *b);
  if (failed(result))
    return failure();
  return finishNode(node, rewriter, *result);
}

template <typename OpTy>
LogicalResult legalizeUnary(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "X");
  if (failed(input))
    return failure();
  return finishNode(node, rewriter,
                    OpTy::create(rewriter, node.getLoc(), *input));
}

LogicalResult legalizeLeakyRelu(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "X");
  if (failed(input))
    return failure();
  Value result = train::LeakyReluOp::create(
      rewriter, node.getLoc(), *input,
      rewriter.getF32FloatAttr(node.getFloat("alpha", 0.01f)));
  return finishNode(node, rewriter, result);
}

/// Pow with a constant scalar exponent, as products and square roots of the
/// base (LayerNorm's decomposition squares with Pow 2): exponents 1, 2, 3,
/// 4, 0.5 and their negatives (a reciprocal). Other exponents would need
/// exp(y log x) and a gradient for negative bases; they are refused.
LogicalResult legalizePow(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<Value> base = getFloatInput(node, 0, "X");
  if (failed(base))
    return failure();
  DenseElementsAttr exponentValue = getConstantOrInitialValue(node, 1);
  std::optional<double> exponent =
      exponentValue ? getScalarValue(exponentValue) : std::nullopt;
  if (!exponent) {
    node.emitError() << "input 1 (Y) must be a constant scalar exponent";
    return failure();
  }
  double magnitude = std::abs(*exponent);
  bool supported = magnitude == 0.5 || magnitude == 1 || magnitude == 2 ||
                   magnitude == 3 || magnitude == 4;
  if (!supported) {
    node.emitError() << "exponent " << *exponent
                     << " is not supported (only 0.5, 1, 2, 3, 4 and their "
                        "negatives)";
    return failure();
  }
  Location loc = node.getLoc();
  Value x = *base, result = x;
  if (magnitude == 0.5) {
    result = train::SqrtOp::create(rewriter, loc, x);
  } else {
    for (int i = 1; i < int(magnitude); ++i)
      result = train::MulOp::create(rewriter, loc, result, x);
  }
  if (*exponent < 0) {
    Type element = cast<RankedTensorType>(x.getType()).getElementType();
    auto scalar = RankedTensorType::get({}, element);
    Value one = createConstant(
        rewriter, loc,
        DenseElementsAttr::get(scalar, rewriter.getFloatAttr(element, 1.0)));
    result = train::DivOp::create(rewriter, loc, one, result);
  }
  return finishNode(node, rewriter, result);
}

/// A Clip bound given as optional input `index` (opset 11 on): a constant
/// (or initializer) scalar becomes `constant`, any other float tensor holding
/// one value (a graph input, a computed bound) a 0-d `tensor`.
LogicalResult getClipBound(const ONNXNode &node, RewriterBase &rewriter,
                           unsigned index, StringRef what,
                           std::optional<float> &constant, Value &tensor) {
  if (!node.getInput(index))
    return success();
  if (DenseElementsAttr value = getConstantOrInitialValue(node, index)) {
    std::optional<double> scalar = getScalarValue(value);
    if (!scalar) {
      node.emitError() << "input " << index << " (" << what
                       << ") must hold one value, got " << value.getType();
      return failure();
    }
    constant = static_cast<float>(*scalar);
    return success();
  }
  FailureOr<Value> bound = getFloatInput(node, index, what);
  if (failed(bound))
    return failure();
  auto type = cast<RankedTensorType>(bound->getType());
  if (type.getNumElements() != 1) {
    node.emitError() << "input " << index << " (" << what
                     << ") must hold one value, got " << type;
    return failure();
  }
  // ONNX bounds are scalars; a [1] bound must not widen the result.
  tensor = type.getRank() == 0
               ? *bound
               : Value(train::ReshapeOp::create(
                     rewriter, node.getLoc(),
                     RankedTensorType::get({}, type.getElementType()),
                     *bound));
  return success();
}

/// Clip: constant bounds become one train.clip (whose gradient, like
/// PyTorch's hardtanh, is zero at the bounds); a bound that is a tensor
/// value becomes train.maximum (lower) or train.minimum (upper), applied in
/// ONNX's order, min(max(x, lo), hi).
LogicalResult legalizeClip(const ONNXNode &node, RewriterBase &rewriter) {
  std::optional<float> min, max;
  Value minTensor, maxTensor;
  if (node.getOpset() < 11) {
    // Clip-6's defaults are the float range, the same as no bound.
    min = node.getFloat("min");
    max = node.getFloat("max");
  } else if (failed(getClipBound(node, rewriter, 1, "min", min, minTensor)) ||
             failed(getClipBound(node, rewriter, 2, "max", max, maxTensor))) {
    return failure();
  }
  if (min && max && *min > *max) {
    node.emitError() << "min " << *min << " exceeds max " << *max;
    return failure();
  }
  FailureOr<Value> input = getFloatInput(node, 0, "input");
  if (failed(input))
    return failure();
  auto clip = [&](Value x, std::optional<float> lo, std::optional<float> hi) {
    if (!lo && !hi)
      return x;
    return Value(train::ClipOp::create(
        rewriter, node.getLoc(), x,
        lo ? rewriter.getF32FloatAttr(*lo) : FloatAttr(),
        hi ? rewriter.getF32FloatAttr(*hi) : FloatAttr()));
  };
  Value result = *input;
  if (minTensor) {
    FailureOr<Value> clamped =
        createInferred<train::MaximumOp>(node, rewriter, result, minTensor);
    if (failed(clamped))
      return failure();
    result = *clamped;
  } else {
    result = clip(result, min, maxTensor ? std::nullopt : max);
  }
  if (maxTensor) {
    FailureOr<Value> clamped =
        createInferred<train::MinimumOp>(node, rewriter, result, maxTensor);
    if (failed(clamped))
      return failure();
    result = *clamped;
  } else if (minTensor) {
    result = clip(result, std::nullopt, max);
  }
  return finishNode(node, rewriter, result);
}

/// Max and Min: variadic, folded left to right into binary train.maximum /
/// train.minimum (with numpy broadcasting from opset 8; before, the inputs
/// share one shape). All-constant inputs fold, as in shape sub-graphs.
template <typename OpTy>
LogicalResult legalizeVariadicSelect(const ONNXNode &node,
                                     RewriterBase &rewriter) {
  unsigned count = node.getNumInputs();
  if (count == 0) {
    node.emitError() << "needs at least one input";
    return failure();
  }
  SmallVector<DenseElementsAttr> constants = getConstantInputs(node);
  if (constants.size() == count) {
    DenseElementsAttr folded = constants.front();
    for (DenseElementsAttr value : ArrayRef(constants).drop_front()) {
      FailureOr<DenseElementsAttr> next =
          foldBinary(node, node.getOpType(), folded, value);
      if (failed(next))
        return failure();
      folded = *next;
    }
    FailureOr<Value> constant = createNodeConstant(node, rewriter, folded);
    if (failed(constant))
      return failure();
    return finishNode(node, rewriter, *constant);
  }
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < count; ++i) {
    std::string what = "data_" + std::to_string(i);
    FailureOr<Value> input = getFloatInput(node, i, what);
    if (failed(input))
      return failure();
    if (node.getOpset() < 8 && !inputs.empty() &&
        input->getType() != inputs.front().getType()) {
      node.emitError() << "inputs " << inputs.front().getType() << " and "
                       << input->getType()
                       << " differ; broadcasting needs opset 8 or later";
      return failure();
    }
    inputs.push_back(*input);
  }
  Value result = inputs.front();
  for (Value input : ArrayRef(inputs).drop_front()) {
    FailureOr<Value> next = createInferred<OpTy>(node, rewriter, result, input);
    if (failed(next))
      return failure();
    result = *next;
  }
  return finishNode(node, rewriter, result);
}

/// Softmax and LogSoftmax. Before opset 13 they work on the input coerced to
/// a matrix [prod(dims < axis), prod(dims >= axis)]: one softmax over all
/// trailing axes, which is a reshape around a softmax over axis 1 (and the
/// plain op when `axis` is already the last one).
template <typename OpTy>
LogicalResult legalizeSoftmax(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "input");
  if (failed(input))
    return failure();
  auto type = cast<RankedTensorType>(input->getType());
  int64_t rank = type.getRank();
  bool coerced = node.getOpset() < 13;
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.getInt("axis", coerced ? 1 : -1), rank);
  if (failed(axis))
    return failure();
  Location loc = node.getLoc();
  if (!coerced || *axis == rank - 1)
    return finishNode(node, rewriter,
                      OpTy::create(rewriter, loc, *input, *axis));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < *axis ? outer : inner) *= type.getDimSize(i);
  auto matrix = RankedTensorType::get({outer, inner}, type.getElementType());
  Value flat = train::ReshapeOp::create(rewriter, loc, matrix, *input);
  Value softmax = OpTy::create(rewriter, loc, flat, 1);
  return finishNode(node, rewriter,
                    train::ReshapeOp::create(rewriter, loc, type, softmax));
}

/// HardSigmoid, max(0, min(1, alpha x + beta)), as a multiply-add and a
/// train.clip 0..1, whose gradients make PyTorch's (zero outside the
/// linear part). HardSwish is x * HardSigmoid(x) with alpha 1/6, beta 1/2:
/// the product rule gives x / 3 + 1/2 inside (-3, 3), as PyTorch's does.
template <bool swish>
LogicalResult legalizeHard(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "X");
  if (failed(input))
    return failure();
  Location loc = node.getLoc();
  auto type = cast<RankedTensorType>(input->getType());
  Type element = type.getElementType();
  auto scalar = [&](double value) {
    return createConstant(
        rewriter, loc,
        DenseElementsAttr::get(RankedTensorType::get({}, element),
                               rewriter.getFloatAttr(element, value)));
  };
  double alpha = swish ? 1.0 / 6.0 : node.getFloat("alpha", 0.2f);
  double beta = swish ? 0.5 : node.getFloat("beta", 0.5f);
  Value scaled =
      train::MulOp::create(rewriter, loc, type, *input, scalar(alpha));
  Value shifted =
      train::AddOp::create(rewriter, loc, type, scaled, scalar(beta));
  Value gate = train::ClipOp::create(rewriter, loc, shifted,
                                     rewriter.getF32FloatAttr(0.0f),
                                     rewriter.getF32FloatAttr(1.0f));
  if (!swish)
    return finishNode(node, rewriter, gate);
  return finishNode(node, rewriter,
                    train::MulOp::create(rewriter, loc, type, *input, gate));
}

LogicalResult legalizeIdentity(const ONNXNode &node, RewriterBase &rewriter) {
  Value input = node.getInput(0);
  if (!input) {
    node.emitError() << "input 0 (input) is missing";
    return failure();
  }
  return finishNode(node, rewriter, input);
}

} // namespace

void onnx_import::addElementwiseHandlers(HandlerTable &table) {
  table["Add"] = legalizeBinary<train::AddOp>;
  table["Sub"] = legalizeBinary<train::SubOp>;
  table["Mul"] = legalizeBinary<train::MulOp>;
  table["Div"] = legalizeBinary<train::DivOp>;
  table["Relu"] = legalizeUnary<train::ReluOp>;
  table["Sigmoid"] = legalizeUnary<train::SigmoidOp>;
  table["Tanh"] = legalizeUnary<train::TanhOp>;
  table["Sqrt"] = legalizeUnary<train::SqrtOp>;
  table["Erf"] = legalizeUnary<train::ErfOp>;
  table["Pow"] = legalizePow;
  table["LeakyRelu"] = legalizeLeakyRelu;
  table["Clip"] = legalizeClip;
  table["HardSigmoid"] = legalizeHard<false>;
  table["HardSwish"] = legalizeHard<true>;
  table["Max"] = legalizeVariadicSelect<train::MaximumOp>;
  table["Min"] = legalizeVariadicSelect<train::MinimumOp>;
  table["Softmax"] = legalizeSoftmax<train::SoftmaxOp>;
  table["LogSoftmax"] = legalizeSoftmax<train::LogSoftmaxOp>;
  table["Identity"] = legalizeIdentity;
}
