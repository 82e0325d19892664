//===- LegalizeElementwise.cpp - ONNX elementwise handlers ----------------===//
//
// Arithmetic with numpy broadcasting (folded when both operands are
// constants: the integer arithmetic of shape sub-graphs), activations,
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

/// A Clip bound given as optional input `index` (opset 11 on): it must be a
/// constant scalar.
LogicalResult getClipBound(const ONNXNode &node, unsigned index, StringRef what,
                           std::optional<float> &bound) {
  if (!node.getInput(index))
    return success();
  DenseElementsAttr value = getConstantOrInitialValue(node, index);
  if (!value) {
    node.emitError() << "input " << index << " (" << what
                     << ") is not a constant";
    return failure();
  }
  std::optional<double> scalar = getScalarValue(value);
  if (!scalar) {
    node.emitError() << "input " << index << " (" << what
                     << ") must hold one value, got " << value.getType();
    return failure();
  }
  bound = static_cast<float>(*scalar);
  return success();
}

LogicalResult legalizeClip(const ONNXNode &node, RewriterBase &rewriter) {
  std::optional<float> min, max;
  if (node.getOpset() < 11) {
    // Clip-6's defaults are the float range, the same as no bound.
    min = node.getFloat("min");
    max = node.getFloat("max");
  } else if (failed(getClipBound(node, 1, "min", min)) ||
             failed(getClipBound(node, 2, "max", max))) {
    return failure();
  }
  if (min && max && *min > *max) {
    node.emitError() << "min " << *min << " exceeds max " << *max;
    return failure();
  }
  FailureOr<Value> input = getFloatInput(node, 0, "input");
  if (failed(input))
    return failure();
  Value result =
      train::ClipOp::create(rewriter, node.getLoc(), *input,
                            min ? rewriter.getF32FloatAttr(*min) : FloatAttr(),
                            max ? rewriter.getF32FloatAttr(*max) : FloatAttr());
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
  table["LeakyRelu"] = legalizeLeakyRelu;
  table["Clip"] = legalizeClip;
  table["Softmax"] = legalizeSoftmax<train::SoftmaxOp>;
  table["LogSoftmax"] = legalizeSoftmax<train::LogSoftmaxOp>;
  table["Identity"] = legalizeIdentity;
}
