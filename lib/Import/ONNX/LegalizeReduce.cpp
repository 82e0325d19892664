//===- LegalizeReduce.cpp - ONNX reductions and padding -------------------===//
//
// ReduceSum, ReduceMean, ReduceMax, ReduceSumSquare and ReduceL2 over any
// axes, and Pad. Both are built from Train ops that already have gradient
// rules where that loses nothing: a sum is a train.sum_to to the keepdims
// shape (whose gradient is a broadcast), a mean that sum divided by the
// count, a sum of squares the sum of x * x, an L2 norm its square root
// (swin_v2's cosine attention, F.normalize), and a Pad one
// concatenation per padded axis of the input with constant blocks
// (constant mode), broadcast edge slices (edge) or reversed slices
// (reflect), so that its gradient is the sum of the slices' gradients.
// Only the maximum needs an op of its own (train.reduce_max).
//
//===----------------------------------------------------------------------===//

#include "LegalizeUtils.h"

#include <limits>

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

namespace {

/// The reduced axes of a Reduce* node, normalised and sorted: the `axes`
/// attribute, or for ReduceSum from opset 13 the constant `axes` input; all
/// axes when none are given. nullopt (without error) for a ReduceSum that
/// asks for a no-op on empty axes.
FailureOr<std::optional<SmallVector<int64_t>>>
getReduceAxes(const ONNXNode &node, int64_t rank) {
  std::optional<SmallVector<int64_t>> given;
  bool axesInput = node.getOpType() == "ReduceSum" && node.getOpset() >= 13;
  if (axesInput) {
    if (node.getInput(1)) {
      given = node.getConstantInts(1);
      if (!given) {
        node.emitError() << "input 1 (axes) must be a constant: traincc "
                            "compiles static shapes";
        return failure();
      }
    }
  } else {
    given = node.getInts("axes");
  }
  if (!given || given->empty()) {
    if (axesInput && node.getInt("noop_with_empty_axes", 0) != 0)
      return std::optional<SmallVector<int64_t>>();
    return std::optional<SmallVector<int64_t>>(
        llvm::to_vector(llvm::seq<int64_t>(0, rank)));
  }
  SmallVector<int64_t> axes;
  for (int64_t axis : *given) {
    FailureOr<int64_t> normalized = normalizeAxis(node, axis, rank);
    if (failed(normalized))
      return failure();
    if (llvm::is_contained(axes, *normalized)) {
      node.emitError() << "axis " << axis << " is given twice";
      return failure();
    }
    axes.push_back(*normalized);
  }
  llvm::sort(axes);
  return std::optional<SmallVector<int64_t>>(std::move(axes));
}

enum class ReduceKind { Sum, Mean, Max, SumSquare, L2 };

template <ReduceKind kind>
LogicalResult legalizeReduce(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "data");
  if (failed(input))
    return failure();
  auto type = cast<RankedTensorType>(input->getType());
  auto axes = getReduceAxes(node, type.getRank());
  if (failed(axes))
    return failure();
  if (!*axes)
    return finishNode(node, rewriter, *input);
  Location loc = node.getLoc();
  SmallVector<int64_t> kept(type.getShape()), dropped;
  int64_t count = 1;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (llvm::is_contained(**axes, i)) {
      count *= type.getDimSize(i);
      kept[i] = 1;
    } else {
      dropped.push_back(type.getDimSize(i));
    }
  }
  auto keptType = RankedTensorType::get(kept, type.getElementType());
  Value result;
  if (kind == ReduceKind::Max) {
    if (count == 0) {
      node.emitError() << "the maximum of an empty set of elements";
      return failure();
    }
    result = train::ReduceMaxOp::create(rewriter, loc, keptType, *input);
  } else {
    Value summed = *input;
    if (kind == ReduceKind::SumSquare || kind == ReduceKind::L2)
      summed = train::MulOp::create(rewriter, loc, type, *input, *input);
    result = train::SumToOp::create(rewriter, loc, keptType, summed);
  }
  if (kind == ReduceKind::L2) {
    // The square root of at least float32's smallest normal: a zero norm
    // (swin_v2's keys of padded tokens: zero inputs, zero key bias) then
    // passes no gradient, as in PyTorch's norm, instead of sqrt's infinite
    // one; the value moves by 1e-19 at most.
    auto scalarType = RankedTensorType::get({}, type.getElementType());
    Value smallest = createConstant(
        rewriter, loc,
        DenseElementsAttr::get(
            scalarType,
            rewriter.getFloatAttr(type.getElementType(),
                                  std::numeric_limits<float>::min())));
    result = train::MaximumOp::create(rewriter, loc, keptType, result,
                                      smallest);
    result = train::SqrtOp::create(rewriter, loc, keptType, result);
  }
  if (kind == ReduceKind::Mean) {
    auto scalarType = RankedTensorType::get({}, type.getElementType());
    Value divisor = createConstant(
        rewriter, loc,
        DenseElementsAttr::get(
            scalarType,
            rewriter.getFloatAttr(type.getElementType(), double(count))));
    result = train::DivOp::create(rewriter, loc, keptType, result, divisor);
  }
  if (node.getInt("keepdims", 1) == 0)
    result = train::ReshapeOp::create(
        rewriter, loc, RankedTensorType::get(dropped, type.getElementType()),
        result);
  return finishNode(node, rewriter, result);
}

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

/// A slice of `value` along `axis` only.
Value sliceAxis(RewriterBase &rewriter, Location loc, Value value, int64_t axis,
                int64_t start, int64_t end, int64_t step) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> starts(type.getRank(), 0), ends(type.getShape()),
      steps(type.getRank(), 1);
  starts[axis] = start;
  ends[axis] = end;
  steps[axis] = step;
  return train::SliceOp::create(rewriter, loc, value, starts, ends, steps);
}

/// `value` padded along `axis` by `low` and `high` (both >= 0) elements.
Value padAxis(RewriterBase &rewriter, Location loc, Value value, int64_t axis,
              int64_t low, int64_t high, StringRef mode, double constant) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t size = type.getDimSize(axis);
  auto block = [&](int64_t extent, bool before) -> Value {
    SmallVector<int64_t> shape(type.getShape());
    shape[axis] = extent;
    auto blockType = RankedTensorType::get(shape, type.getElementType());
    if (mode == "constant")
      return createConstant(
          rewriter, loc,
          DenseElementsAttr::get(
              blockType,
              rewriter.getFloatAttr(type.getElementType(), constant)));
    if (mode == "edge") {
      int64_t at = before ? 0 : size - 1;
      return train::BroadcastToOp::create(
          rewriter, loc, blockType,
          sliceAxis(rewriter, loc, value, axis, at, at + 1, 1));
    }
    // reflect: x[low], ..., x[1] before; x[size-2], ..., x[size-1-high]
    // after.
    return before ? sliceAxis(rewriter, loc, value, axis, extent, 0, -1)
                  : sliceAxis(rewriter, loc, value, axis, size - 2,
                              size - 2 - extent, -1);
  };
  SmallVector<Value> parts;
  if (low > 0)
    parts.push_back(block(low, true));
  parts.push_back(value);
  if (high > 0)
    parts.push_back(block(high, false));
  if (parts.size() == 1)
    return value;
  return train::ConcatOp::create(rewriter, loc, parts, axis);
}

LogicalResult legalizePad(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "data");
  if (failed(input))
    return failure();
  auto type = cast<RankedTensorType>(input->getType());
  int64_t rank = type.getRank();
  StringRef mode = node.getString("mode").value_or("constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") {
    node.emitError() << "mode '" << mode
                     << "' is not supported (constant, reflect, edge are)";
    return failure();
  }
  std::optional<SmallVector<int64_t>> pads;
  double constant = 0.0;
  if (node.getOpset() < 11) {
    pads = node.getInts("pads");
    constant = node.getFloat("value", 0.0f);
  } else {
    if (!node.getInput(1)) {
      node.emitError() << "input 1 (pads) is missing";
      return failure();
    }
    pads = node.getConstantInts(1);
    if (!pads) {
      node.emitError() << "input 1 (pads) must be a constant: traincc "
                          "compiles static shapes";
      return failure();
    }
    if (node.getInput(2)) {
      DenseElementsAttr value = getConstantOrInitialValue(node, 2);
      std::optional<double> scalar =
          value ? getScalarValue(value) : std::nullopt;
      if (!scalar) {
        node.emitError() << "input 2 (constant_value) must be a constant "
                            "holding one value";
        return failure();
      }
      constant = *scalar;
    }
    if (node.getInput(3)) {
      node.emitError() << "input 3 (axes) needs opset 18 or later";
      return failure();
    }
  }
  if (!pads || static_cast<int64_t>(pads->size()) != 2 * rank) {
    node.emitError() << "expected " << 2 * rank << " pads for rank " << rank
                     << ", got " << (pads ? pads->size() : 0);
    return failure();
  }
  Location loc = node.getLoc();
  Value result = *input;
  for (int64_t axis = 0; axis < rank; ++axis) {
    int64_t low = (*pads)[axis], high = (*pads)[rank + axis];
    int64_t size = type.getDimSize(axis);
    // Negative pads crop.
    if (low < 0 || high < 0) {
      int64_t start = std::max<int64_t>(-low, 0);
      int64_t end = size - std::max<int64_t>(-high, 0);
      if (start > end) {
        node.emitError() << "pads " << low << " and " << high
                         << " crop more than the " << size
                         << " elements of axis " << axis;
        return failure();
      }
      result = sliceAxis(rewriter, loc, result, axis, start, end, 1);
      size = end - start;
      low = std::max<int64_t>(low, 0);
      high = std::max<int64_t>(high, 0);
    }
    if (low == 0 && high == 0)
      continue;
    if (mode != "constant" && size == 0) {
      node.emitError() << "cannot pad the empty axis " << axis << " in mode '"
                       << mode << "'";
      return failure();
    }
    if (mode == "reflect" && std::max(low, high) >= size) {
      node.emitError() << "reflect pads of " << std::max(low, high)
                       << " need more than the " << size << " elements of axis "
                       << axis;
      return failure();
    }
    // Bounded before adding, so that hostile pads cannot overflow.
    if (low > kMaxFoldedElements || high > kMaxFoldedElements ||
        failed(checkFoldSize(node, {size + low + high}))) {
      node.emitError() << "pads " << low << " and " << high << " of axis "
                       << axis << " are too large";
      return failure();
    }
    result = padAxis(rewriter, loc, result, axis, low, high, mode, constant);
  }
  return finishNode(node, rewriter, result);
}

/// GlobalMaxPool: the maximum over the spatial axes, kept as 1.
LogicalResult legalizeGlobalMaxPool(const ONNXNode &node,
                                    RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "X");
  if (failed(input))
    return failure();
  auto type = cast<RankedTensorType>(input->getType());
  if (type.getRank() < 3 || type.getNumElements() == 0) {
    node.emitError() << "expects a non-empty input of rank 3 or more, "
                        "[N, C, D...]";
    return failure();
  }
  SmallVector<int64_t> kept(type.getShape());
  std::fill(kept.begin() + 2, kept.end(), 1);
  return finishNode(node, rewriter,
                    train::ReduceMaxOp::create(
                        rewriter, node.getLoc(),
                        RankedTensorType::get(kept, type.getElementType()),
                        *input));
}

} // namespace

void onnx_import::addReduceHandlers(HandlerTable &table) {
  table["ReduceSum"] = legalizeReduce<ReduceKind::Sum>;
  table["ReduceMean"] = legalizeReduce<ReduceKind::Mean>;
  table["ReduceMax"] = legalizeReduce<ReduceKind::Max>;
  table["ReduceSumSquare"] = legalizeReduce<ReduceKind::SumSquare>;
  table["ReduceL2"] = legalizeReduce<ReduceKind::L2>;
  table["Pad"] = legalizePad;
  table["GlobalMaxPool"] = legalizeGlobalMaxPool;
}
