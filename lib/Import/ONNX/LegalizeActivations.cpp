//===- LegalizeActivations.cpp - activations, PRelu, Gelu, Split ----------===//
//
// Exp, Log, Neg, Abs, Elu, Selu, Softplus, PRelu and Gelu (opset 20, what
// current PyTorch writes for nn.GELU), which PyTorch's converted models and
// current architectures use, and Split (GLU, and the attention of models
// that unbind q, k and v). Only Exp and Log are Train ops of their own; the
// others are compositions of ops that have gradient rules, built so that
// the gradient matches PyTorch's where the function has a kink (Elu as
// relu(x) + alpha (exp(min(x, 0)) - 1) has slope 1 on the positive side,
// Softplus as relu(x) + log(1 + exp(-|x|)) never overflows). Split is one
// slice per output, whose gradients add up.
//
//===----------------------------------------------------------------------===//

#include "LegalizeUtils.h"

#include <cmath>

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

namespace {

/// A rank-0 float constant of the element type of `like`.
Value scalarLike(RewriterBase &rewriter, Location loc, Value like,
                 double value) {
  Type element = cast<RankedTensorType>(like.getType()).getElementType();
  return createConstant(
      rewriter, loc,
      DenseElementsAttr::get(RankedTensorType::get({}, element),
                             rewriter.getFloatAttr(element, value)));
}

template <typename OpTy>
LogicalResult legalizeUnaryOp(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "input");
  if (failed(input))
    return failure();
  return finishNode(node, rewriter,
                    OpTy::create(rewriter, node.getLoc(), *input));
}

Value negate(RewriterBase &rewriter, Location loc, Value x) {
  return train::MulOp::create(rewriter, loc, x.getType(), x,
                              scalarLike(rewriter, loc, x, -1.0));
}

LogicalResult legalizeNeg(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "X");
  if (failed(input))
    return failure();
  return finishNode(node, rewriter, negate(rewriter, node.getLoc(), *input));
}

/// |x| = max(x, -x).
Value absolute(RewriterBase &rewriter, Location loc, Value x) {
  return train::MaximumOp::create(rewriter, loc, x.getType(), x,
                                  negate(rewriter, loc, x));
}

LogicalResult legalizeAbs(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "X");
  if (failed(input))
    return failure();
  return finishNode(node, rewriter,
                    absolute(rewriter, node.getLoc(), *input));
}

/// Elu, relu(x) + alpha (exp(min(x, 0)) - 1); Selu is gamma times it with
/// its own alpha default.
template <bool scaled>
LogicalResult legalizeElu(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "X");
  if (failed(input))
    return failure();
  Location loc = node.getLoc();
  Value x = *input;
  Type type = x.getType();
  double alpha = scaled ? node.getFloat("alpha", 1.67326319217681884765625f)
                        : node.getFloat("alpha", 1.0f);
  Value negative = train::MinimumOp::create(rewriter, loc, type, x,
                                            scalarLike(rewriter, loc, x, 0));
  Value exp = train::ExpOp::create(rewriter, loc, negative);
  Value expm1 = train::SubOp::create(rewriter, loc, type, exp,
                                     scalarLike(rewriter, loc, x, 1));
  Value tail = train::MulOp::create(rewriter, loc, type, expm1,
                                    scalarLike(rewriter, loc, x, alpha));
  Value result = train::AddOp::create(
      rewriter, loc, type, train::ReluOp::create(rewriter, loc, x), tail);
  if (scaled)
    result = train::MulOp::create(
        rewriter, loc, type, result,
        scalarLike(rewriter, loc, x,
                   node.getFloat("gamma", 1.05070102214813232421875f)));
  return finishNode(node, rewriter, result);
}

/// Softplus, log(1 + exp(x)), as relu(x) + log(1 + exp(-|x|)).
LogicalResult legalizeSoftplus(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "X");
  if (failed(input))
    return failure();
  Location loc = node.getLoc();
  Value x = *input;
  Type type = x.getType();
  Value exp = train::ExpOp::create(
      rewriter, loc, negate(rewriter, loc, absolute(rewriter, loc, x)));
  Value log = train::LogOp::create(
      rewriter, loc,
      train::AddOp::create(rewriter, loc, type, exp,
                           scalarLike(rewriter, loc, x, 1)));
  return finishNode(
      node, rewriter,
      train::AddOp::create(rewriter, loc, type,
                           train::ReluOp::create(rewriter, loc, x), log));
}

/// PRelu, relu(x) + slope * min(x, 0), with a (trainable) slope that
/// broadcasts to X. Before opset 7 a 1-D slope of X's channel count was
/// per channel (axis 1), as PyTorch's converted models hold it: it is
/// reshaped to [C, 1, ...].
LogicalResult legalizePRelu(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "X");
  FailureOr<Value> slope = getFloatInput(node, 1, "slope");
  if (failed(input) || failed(slope))
    return failure();
  Location loc = node.getLoc();
  auto type = cast<RankedTensorType>(input->getType());
  auto slopeType = cast<RankedTensorType>(slope->getType());
  FailureOr<SmallVector<int64_t>> shape =
      train::broadcastShapes(type.getShape(), slopeType.getShape());
  if ((failed(shape) || *shape != type.getShape()) &&
      slopeType.getRank() == 1 && type.getRank() >= 2 &&
      slopeType.getDimSize(0) == type.getDimSize(1)) {
    SmallVector<int64_t> channel(type.getRank() - 1, 1);
    channel[0] = type.getDimSize(1);
    *slope = train::ReshapeOp::create(
        rewriter, loc, RankedTensorType::get(channel, type.getElementType()),
        *slope);
    shape = train::broadcastShapes(type.getShape(), channel);
  }
  if (failed(shape) || *shape != type.getShape()) {
    node.emitError() << "slope of type " << slopeType
                     << " does not broadcast to the input type " << type;
    return failure();
  }
  Value x = *input;
  Value negative = train::MinimumOp::create(rewriter, loc, type, x,
                                            scalarLike(rewriter, loc, x, 0));
  Value scaledPart =
      train::MulOp::create(rewriter, loc, type, negative, *slope);
  return finishNode(
      node, rewriter,
      train::AddOp::create(rewriter, loc, type,
                           train::ReluOp::create(rewriter, loc, x),
                           scaledPart));
}

/// Split along `axis` into the node's outputs: sizes from the `split`
/// input (opset 13 on) or attribute (before), else equal parts (opset 18's
/// `num_outputs`: parts of ceil(dim / n), the last one smaller).
LogicalResult legalizeSplit(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "input");
  if (failed(input))
    return failure();
  auto type = cast<RankedTensorType>(input->getType());
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.getInt("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  auto outputs = node.getOp().getOutputs();
  int64_t count = outputs.size();
  int64_t dim = type.getDimSize(*axis);
  SmallVector<int64_t> sizes;
  if (node.getInput(1)) {
    std::optional<SmallVector<int64_t>> given = node.getConstantInts(1);
    if (!given) {
      node.emitError() << "input 1 (split) must be a constant: traincc "
                          "compiles static shapes";
      return failure();
    }
    sizes = *given;
  } else if (std::optional<SmallVector<int64_t>> given =
                 node.getInts("split")) {
    sizes = *given;
  } else {
    int64_t parts = node.getInt("num_outputs", count);
    if (parts != count || parts <= 0) {
      node.emitError() << "num_outputs " << parts << " differs from its "
                       << count << " outputs";
      return failure();
    }
    bool uneven = node.hasAttr("num_outputs");
    if (!uneven && dim % parts != 0) {
      node.emitError() << "cannot split " << dim << " elements into " << parts
                       << " equal parts";
      return failure();
    }
    int64_t part = (dim + parts - 1) / parts;
    for (int64_t i = 0, left = dim; i < parts; ++i, left -= part)
      sizes.push_back(std::max<int64_t>(0, std::min(part, left)));
  }
  int64_t total = 0;
  for (int64_t size : sizes) {
    if (size < 0) {
      node.emitError() << "split sizes must not be negative";
      return failure();
    }
    total += size;
  }
  if (static_cast<int64_t>(sizes.size()) != count || total != dim) {
    node.emitError() << "split sizes of " << sizes.size() << " parts adding "
                     << "up to " << total << " do not cover " << count
                     << " outputs of the " << dim << " elements of axis "
                     << *axis;
    return failure();
  }
  Location loc = node.getLoc();
  int64_t start = 0;
  for (auto [output, size] : llvm::zip(outputs, sizes)) {
    SmallVector<int64_t> starts(type.getRank(), 0), ends(type.getShape()),
        steps(type.getRank(), 1);
    starts[*axis] = start;
    ends[*axis] = start + size;
    start += size;
    if (output.use_empty())
      continue;
    Value part =
        train::SliceOp::create(rewriter, loc, *input, starts, ends, steps);
    rewriter.replaceAllUsesWith(output, part);
  }
  rewriter.eraseOp(node.getOp());
  return success();
}

/// Gelu-20: x * Phi(x) = x/2 (1 + erf(x / sqrt 2)), or with approximate
/// "tanh" x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), what PyTorch's
/// nn.GELU(approximate=...) computes.
LogicalResult legalizeGelu(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "X");
  if (failed(input))
    return failure();
  StringRef approximate = node.getString("approximate").value_or("none");
  if (approximate != "none" && approximate != "tanh") {
    node.emitError() << "approximate '" << approximate
                     << "' is not one of 'none' and 'tanh'";
    return failure();
  }
  Location loc = node.getLoc();
  auto type = cast<RankedTensorType>(input->getType());
  Value x = *input;
  auto constant = [&](double value) {
    return scalarLike(rewriter, loc, x, value);
  };
  Value gate;
  if (approximate == "none") {
    Value scaled =
        train::MulOp::create(rewriter, loc, type, x, constant(M_SQRT1_2));
    gate = train::ErfOp::create(rewriter, loc, scaled);
  } else {
    Value square = train::MulOp::create(rewriter, loc, type, x, x);
    Value cube = train::MulOp::create(rewriter, loc, type, square, x);
    Value term =
        train::MulOp::create(rewriter, loc, type, cube, constant(0.044715));
    Value inner = train::AddOp::create(rewriter, loc, type, x, term);
    Value scaled = train::MulOp::create(rewriter, loc, type, inner,
                                        constant(std::sqrt(2.0 / M_PI)));
    gate = train::TanhOp::create(rewriter, loc, scaled);
  }
  Value onePlus = train::AddOp::create(rewriter, loc, type, gate, constant(1));
  Value half = train::MulOp::create(rewriter, loc, type, x, constant(0.5));
  return finishNode(node, rewriter,
                    train::MulOp::create(rewriter, loc, type, half, onePlus));
}

} // namespace

void onnx_import::addActivationHandlers(HandlerTable &table) {
  table["Exp"] = legalizeUnaryOp<train::ExpOp>;
  table["Log"] = legalizeUnaryOp<train::LogOp>;
  table["Neg"] = legalizeNeg;
  table["Abs"] = legalizeAbs;
  table["Elu"] = legalizeElu<false>;
  table["Selu"] = legalizeElu<true>;
  table["Softplus"] = legalizeSoftplus;
  table["PRelu"] = legalizePRelu;
  table["Gelu"] = legalizeGelu;
  table["Split"] = legalizeSplit;
}
