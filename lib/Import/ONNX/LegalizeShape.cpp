//===- LegalizeShape.cpp - ONNX shape and data-movement handlers ----------===//
//
// Shape, Gather, Unsqueeze, Squeeze, Concat, Reshape, Flatten, Transpose
// and Slice. On constants (the integer shape sub-graphs PyTorch exports
// around `x.view(x.size(0), -1)`) each folds into a train.constant as soon
// as it is met, so that the Reshape at the end sees a constant shape; on
// float data they become Train data-movement ops with normalised
// attributes.
//
//===----------------------------------------------------------------------===//

#include "LegalizeUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

namespace {

int64_t product(ArrayRef<int64_t> shape) {
  int64_t result = 1;
  for (int64_t dim : shape)
    result *= dim;
  return result;
}

/// Replaces the node by its input 0 under the static shape `shape`: a folded
/// constant when the input is constant, else a train.reshape of float data.
LogicalResult finishWithReshape(const ONNXNode &node, RewriterBase &rewriter,
                                ArrayRef<int64_t> shape) {
  if (DenseElementsAttr constant = node.getConstantInput(0)) {
    FailureOr<Value> folded =
        createNodeConstant(node, rewriter,
                           constant.reshape(RankedTensorType::get(
                               shape, constant.getElementType())));
    return failed(folded) ? failure() : finishNode(node, rewriter, *folded);
  }
  FailureOr<Value> input = getFloatInput(node, 0, "data");
  if (failed(input))
    return failure();
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(input->getType()).getElementType());
  return finishNode(
      node, rewriter,
      train::ReshapeOp::create(rewriter, node.getLoc(), type, *input));
}

/// Replaces the node by a strided view of `constant` folded to a constant of
/// `resultType`: its element at index r reads `constant`'s element at linear
/// position offset + sum of r[i] * strides[i]. Transpose and Slice fold so.
LogicalResult finishWithStridedView(const ONNXNode &node,
                                    RewriterBase &rewriter,
                                    DenseElementsAttr constant,
                                    RankedTensorType resultType, int64_t offset,
                                    ArrayRef<int64_t> strides) {
  ArrayRef<int64_t> shape = resultType.getShape();
  int64_t rank = shape.size();
  SmallVector<int64_t> index(rank, 0), picks;
  for (int64_t n = 0, e = resultType.getNumElements(); n < e; ++n) {
    int64_t linear = offset;
    for (int64_t i = 0; i < rank; ++i)
      linear += index[i] * strides[i];
    picks.push_back(linear);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return finishWithConstant(node, rewriter,
                            pickElements(constant, resultType, picks));
}

/// Normalises `axes` against `rank`; an error on repeats.
FailureOr<SmallVector<int64_t>>
normalizeAxes(const ONNXNode &node, ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> result;
  for (int64_t axis : axes) {
    FailureOr<int64_t> normalized = normalizeAxis(node, axis, rank);
    if (failed(normalized))
      return failure();
    if (llvm::is_contained(result, *normalized)) {
      node.emitError() << "axis " << axis << " appears more than once";
      return failure();
    }
    result.push_back(*normalized);
  }
  return result;
}

/// Axes given as an INTS attribute before opset `since` and as a constant
/// input `index` from it on; nullopt (without error) when absent.
FailureOr<std::optional<SmallVector<int64_t>>>
getAxesOperand(const ONNXNode &node, int64_t since, unsigned index) {
  if (node.getOpset() < since)
    return node.getInts("axes");
  if (!node.getInput(index))
    return std::optional<SmallVector<int64_t>>();
  std::optional<SmallVector<int64_t>> axes = node.getConstantInts(index);
  if (!axes) {
    node.emitError() << "input " << index << " (axes) is not a constant";
    return failure();
  }
  return axes;
}

//===----------------------------------------------------------------------===//
// Handlers
//===----------------------------------------------------------------------===//

/// Shape of the (static) input, optionally cut to [start, end) (opset 15).
LogicalResult legalizeShape(const ONNXNode &node, RewriterBase &rewriter) {
  if (failed(rejectAttrBefore(node, "start", 15)) ||
      failed(rejectAttrBefore(node, "end", 15)))
    return failure();
  FailureOr<RankedTensorType> type = getStaticInputType(node, 0, "data");
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  auto clampIndex = [&](int64_t index) {
    return std::clamp<int64_t>(index < 0 ? index + rank : index, 0, rank);
  };
  int64_t start = clampIndex(node.getInt("start", 0));
  int64_t end = clampIndex(node.getInt("end", rank));
  SmallVector<int64_t> dims;
  for (int64_t i = start; i < end; ++i)
    dims.push_back(type->getDimSize(i));
  auto resultType = RankedTensorType::get({static_cast<int64_t>(dims.size())},
                                          rewriter.getI64Type());
  return finishWithConstant(node, rewriter,
                            DenseElementsAttr::get(resultType, ArrayRef(dims)));
}

/// Gather on constants only: in shape sub-graphs it picks dimensions out of
/// a Shape.
/// Gather on float data that is not a constant (an embedding table, a
/// computed tensor): a train.gather, with indices of any integer type
/// (constant or not).
LogicalResult legalizeGatherOnData(const ONNXNode &node,
                                   RewriterBase &rewriter) {
  FailureOr<Value> data = getFloatInput(node, 0, "data");
  if (failed(data))
    return failure();
  FailureOr<RankedTensorType> indicesType =
      getStaticInputType(node, 1, "indices");
  if (failed(indicesType))
    return failure();
  if (!indicesType->getElementType().isInteger(64) &&
      !indicesType->getElementType().isInteger(32)) {
    node.emitError() << "input 1 (indices) must be int32 or int64, got "
                     << *indicesType;
    return failure();
  }
  auto type = cast<RankedTensorType>(data->getType());
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.getInt("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  // Constant indices are checked here; run-time ones are clamped.
  if (std::optional<SmallVector<int64_t>> indices = node.getConstantInts(1)) {
    int64_t dim = type.getDimSize(*axis);
    for (int64_t index : *indices)
      if (index < -dim || index >= dim) {
        node.emitError() << "index " << index << " is out of range for axis "
                         << *axis << " of size " << dim;
        return failure();
      }
  }
  if (failed(checkRank(node, type.getRank() - 1 + indicesType->getRank())))
    return failure();
  // Ids straight from a graph input are checked by the trainer as it loads
  // them (an id outside the table is a data error, not a clamped read):
  // record the smallest table each input indexes.
  if (auto arg = dyn_cast<BlockArgument>(node.getInput(1)))
    if (auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())) {
      int64_t rows = type.getDimSize(*axis);
      unsigned index = arg.getArgNumber();
      auto limit = func.getArgAttrOfType<IntegerAttr>(index, "train.id_limit");
      if (!limit || limit.getInt() > rows)
        func.setArgAttr(index, "train.id_limit",
                        rewriter.getI64IntegerAttr(rows));
    }
  FailureOr<Value> gathered = createInferred<train::GatherOp>(
      node, rewriter, *data, node.getInput(1), *axis);
  if (failed(gathered))
    return failure();
  return finishNode(node, rewriter, *gathered);
}

LogicalResult legalizeGather(const ONNXNode &node, RewriterBase &rewriter) {
  DenseElementsAttr data = node.getConstantInput(0);
  if (!data)
    return legalizeGatherOnData(node, rewriter);
  DenseElementsAttr indicesAttr = node.getConstantInput(1);
  std::optional<SmallVector<int64_t>> indices = node.getConstantInts(1);
  if (!indices) {
    node.emitError() << "input 1 (indices) is not a constant integer tensor";
    return failure();
  }
  ArrayRef<int64_t> shape = data.getType().getShape();
  FailureOr<int64_t> axis =
      normalizeAxis(node, node.getInt("axis", 0), shape.size());
  if (failed(axis))
    return failure();
  int64_t dim = shape[*axis];
  for (int64_t &index : *indices) {
    if (index < -dim || index >= dim) {
      node.emitError() << "index " << index << " is out of range for axis "
                       << *axis << " of size " << dim;
      return failure();
    }
    if (index < 0)
      index += dim;
  }
  SmallVector<int64_t> resultShape(shape.take_front(*axis));
  llvm::append_range(resultShape, indicesAttr.getType().getShape());
  llvm::append_range(resultShape, shape.drop_front(*axis + 1));
  if (failed(checkFoldSize(node, resultShape)))
    return failure();
  int64_t outer = product(shape.take_front(*axis));
  int64_t inner = product(shape.drop_front(*axis + 1));
  SmallVector<int64_t> picks;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t index : *indices)
      for (int64_t i = 0; i < inner; ++i)
        picks.push_back((o * dim + index) * inner + i);
  auto type = RankedTensorType::get(resultShape, data.getElementType());
  return finishWithConstant(node, rewriter, pickElements(data, type, picks));
}

LogicalResult legalizeUnsqueeze(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<std::optional<SmallVector<int64_t>>> axes =
      getAxesOperand(node, 13, 1);
  if (failed(axes))
    return failure();
  if (!*axes) {
    node.emitError() << "axes are missing";
    return failure();
  }
  FailureOr<RankedTensorType> type = getStaticInputType(node, 0, "data");
  if (failed(type))
    return failure();
  int64_t rank = type->getRank() + (*axes)->size();
  if (failed(checkRank(node, rank)))
    return failure();
  FailureOr<SmallVector<int64_t>> normalized =
      normalizeAxes(node, **axes, rank);
  if (failed(normalized))
    return failure();
  SmallVector<int64_t> shape;
  ArrayRef<int64_t> dims = type->getShape();
  for (int64_t i = 0; i < rank; ++i) {
    if (llvm::is_contained(*normalized, i)) {
      shape.push_back(1);
      continue;
    }
    shape.push_back(dims.front());
    dims = dims.drop_front();
  }
  return finishWithReshape(node, rewriter, shape);
}

LogicalResult legalizeSqueeze(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<std::optional<SmallVector<int64_t>>> axes =
      getAxesOperand(node, 13, 1);
  if (failed(axes))
    return failure();
  FailureOr<RankedTensorType> type = getStaticInputType(node, 0, "data");
  if (failed(type))
    return failure();
  ArrayRef<int64_t> dims = type->getShape();
  SmallVector<int64_t> squeezed;
  // An empty axes list squeezes every unit axis, as onnxruntime reads it.
  if (*axes && !(*axes)->empty()) {
    FailureOr<SmallVector<int64_t>> normalized =
        normalizeAxes(node, **axes, dims.size());
    if (failed(normalized))
      return failure();
    squeezed = *normalized;
    for (int64_t axis : squeezed) {
      if (dims[axis] != 1) {
        node.emitError() << "cannot squeeze axis " << axis << " of size "
                         << dims[axis];
        return failure();
      }
    }
  } else {
    for (auto [axis, dim] : llvm::enumerate(dims))
      if (dim == 1)
        squeezed.push_back(axis);
  }
  SmallVector<int64_t> shape;
  for (auto [axis, dim] : llvm::enumerate(dims))
    if (!llvm::is_contained(squeezed, static_cast<int64_t>(axis)))
      shape.push_back(dim);
  return finishWithReshape(node, rewriter, shape);
}

LogicalResult legalizeConcat(const ONNXNode &node, RewriterBase &rewriter) {
  std::optional<int64_t> axisAttr = node.getInt("axis");
  if (!axisAttr) {
    node.emitError() << "attribute 'axis' is missing";
    return failure();
  }
  unsigned count = node.getNumInputs();
  if (count == 0) {
    node.emitError() << "needs at least one input";
    return failure();
  }
  SmallVector<DenseElementsAttr> constants = getConstantInputs(node);
  if (constants.size() != count) {
    SmallVector<Value> inputs;
    for (unsigned i = 0; i < count; ++i) {
      FailureOr<Value> input = getFloatInput(node, i, "inputs");
      if (failed(input))
        return failure();
      inputs.push_back(*input);
    }
    FailureOr<int64_t> axis = normalizeAxis(
        node, *axisAttr, cast<RankedTensorType>(inputs[0].getType()).getRank());
    if (failed(axis))
      return failure();
    FailureOr<Value> concat = createInferred<train::ConcatOp>(
        node, rewriter, ValueRange(inputs), static_cast<uint64_t>(*axis));
    return failed(concat) ? failure() : finishNode(node, rewriter, *concat);
  }

  // Fold: every input is one slab per outer index, laid end to end.
  auto first = cast<RankedTensorType>(constants[0].getType());
  FailureOr<int64_t> axis = normalizeAxis(node, *axisAttr, first.getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  shape[*axis] = 0;
  for (DenseElementsAttr constant : constants) {
    auto type = cast<RankedTensorType>(constant.getType());
    bool compatible = type.getElementType() == first.getElementType() &&
                      type.getRank() == first.getRank();
    for (int64_t i = 0; compatible && i < type.getRank(); ++i)
      compatible = i == *axis || type.getDimSize(i) == first.getDimSize(i);
    if (!compatible) {
      node.emitError() << "inputs " << first << " and " << type
                       << " cannot be concatenated along axis " << *axis;
      return failure();
    }
    shape[*axis] += type.getDimSize(*axis);
  }
  if (failed(checkFoldSize(node, shape)))
    return failure();
  int64_t outer = product(ArrayRef(shape).take_front(*axis));
  SmallVector<SmallVector<Attribute>> values;
  for (DenseElementsAttr constant : constants)
    values.push_back(llvm::to_vector(constant.getValues<Attribute>()));
  SmallVector<Attribute> result;
  for (int64_t o = 0; o < outer; ++o) {
    for (const SmallVector<Attribute> &input : values) {
      int64_t slab = input.size() / std::max<int64_t>(outer, 1);
      llvm::append_range(result, ArrayRef(input).slice(o * slab, slab));
    }
  }
  auto type = RankedTensorType::get(shape, first.getElementType());
  return finishWithConstant(node, rewriter,
                            DenseElementsAttr::get(type, result));
}

/// Reshape to a constant shape: 0 copies the input dimension (unless
/// allowzero), one -1 takes what is left.
LogicalResult legalizeReshape(const ONNXNode &node, RewriterBase &rewriter) {
  if (failed(rejectAttrBefore(node, "allowzero", 14)))
    return failure();
  FailureOr<RankedTensorType> type = getStaticInputType(node, 0, "data");
  if (failed(type))
    return failure();
  if (!node.getInput(1)) {
    node.emitError() << "input 1 (shape) is missing";
    return failure();
  }
  std::optional<SmallVector<int64_t>> requested = node.getConstantInts(1);
  if (!requested) {
    node.emitError() << "shape input is not a constant";
    return failure();
  }
  if (failed(checkRank(node, requested->size())))
    return failure();
  bool allowZero = node.getInt("allowzero", 0) != 0;
  SmallVector<int64_t> shape;
  std::optional<size_t> inferred;
  int64_t known = 1;
  bool overflow = false;
  for (auto [i, dim] : llvm::enumerate(*requested)) {
    if (dim == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= type->getRank()) {
        node.emitError() << "shape entry " << i
                         << " is 0 but the input has no axis " << i
                         << " to copy";
        return failure();
      }
      dim = type->getDimSize(i);
    } else if (dim == -1) {
      if (inferred) {
        node.emitError() << "shape has more than one -1";
        return failure();
      }
      inferred = i;
    } else if (dim < -1) {
      node.emitError() << "shape entry " << i << " is " << dim;
      return failure();
    }
    shape.push_back(dim);
    if (dim != -1)
      overflow |= llvm::MulOverflow(known, dim, known);
  }
  int64_t total = type->getNumElements();
  if (inferred && !overflow && known != 0 && total % known == 0)
    shape[*inferred] = total / known;
  if (overflow || (inferred && (known == 0 || total % known != 0)) ||
      (!inferred && known != total)) {
    InFlightDiagnostic diag = node.emitError()
                              << "cannot reshape " << *type << " into [";
    llvm::interleaveComma(*requested, diag);
    diag << "]";
    return failure();
  }
  return finishWithReshape(node, rewriter, shape);
}

LogicalResult legalizeFlatten(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<RankedTensorType> type = getStaticInputType(node, 0, "input");
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  int64_t axis = node.getInt("axis", 1);
  if (axis < -rank || axis > rank) {
    node.emitError() << "axis " << axis << " is out of range [" << -rank << ", "
                     << rank << "]";
    return failure();
  }
  if (axis < 0)
    axis += rank;
  if (node.getConstantInput(0))
    return finishWithReshape(node, rewriter,
                             {product(type->getShape().take_front(axis)),
                              product(type->getShape().drop_front(axis))});
  FailureOr<Value> input = getFloatInput(node, 0, "input");
  if (failed(input))
    return failure();
  FailureOr<Value> flatten = createInferred<train::FlattenOp>(
      node, rewriter, *input, static_cast<uint64_t>(axis));
  return failed(flatten) ? failure() : finishNode(node, rewriter, *flatten);
}

LogicalResult legalizeTranspose(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<RankedTensorType> type = getStaticInputType(node, 0, "data");
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  SmallVector<int64_t> perm;
  if (std::optional<SmallVector<int64_t>> attr = node.getInts("perm"))
    perm = *attr;
  else
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  if (sorted != llvm::to_vector(llvm::seq<int64_t>(0, rank))) {
    InFlightDiagnostic diag = node.emitError() << "perm [";
    llvm::interleaveComma(perm, diag);
    diag << "] is not a permutation of " << rank << " axes";
    return failure();
  }
  DenseElementsAttr constant = node.getConstantInput(0);
  if (!constant) {
    FailureOr<Value> input = getFloatInput(node, 0, "data");
    if (failed(input))
      return failure();
    FailureOr<Value> transpose =
        createInferred<train::TransposeOp>(node, rewriter, *input, perm);
    return failed(transpose) ? failure()
                             : finishNode(node, rewriter, *transpose);
  }
  // Fold: result index r reads input index s with s[perm[i]] = r[i].
  SmallVector<int64_t> inputStrides = getStrides(type->getShape());
  SmallVector<int64_t> shape, strides;
  for (int64_t axis : perm) {
    shape.push_back(type->getDimSize(axis));
    strides.push_back(inputStrides[axis]);
  }
  return finishWithStridedView(
      node, rewriter, constant,
      RankedTensorType::get(shape, type->getElementType()), /*offset=*/0,
      strides);
}

/// Slice parameters of one call: attributes before opset 10, constant
/// inputs from it on.
FailureOr<SmallVector<int64_t>> getSliceInts(const ONNXNode &node,
                                             unsigned index, StringRef name,
                                             bool required) {
  if (node.getOpset() < 10) {
    if (std::optional<SmallVector<int64_t>> values = node.getInts(name))
      return *values;
  } else if (node.getInput(index)) {
    if (std::optional<SmallVector<int64_t>> values =
            node.getConstantInts(index))
      return *values;
    node.emitError() << "input " << index << " (" << name
                     << ") is not a constant";
    return failure();
  }
  if (required) {
    node.emitError() << name << " are missing";
    return failure();
  }
  return SmallVector<int64_t>();
}

/// Slice with ONNX's clamping (negative indices count from the end, huge
/// ones stand for "to the end") normalised to one start, end and step per
/// axis, empty ranges as [0, 0).
LogicalResult legalizeSlice(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<RankedTensorType> type = getStaticInputType(node, 0, "data");
  if (failed(type))
    return failure();
  FailureOr<SmallVector<int64_t>> starts, ends, axes, steps;
  if (failed(starts = getSliceInts(node, 1, "starts", true)) ||
      failed(ends = getSliceInts(node, 2, "ends", true)) ||
      failed(axes = getSliceInts(node, 3, "axes", false)) ||
      failed(steps = node.getOpset() < 10
                         ? SmallVector<int64_t>()
                         : getSliceInts(node, 4, "steps", false)))
    return failure();
  size_t count = starts->size();
  if (axes->empty())
    *axes = llvm::to_vector(llvm::seq<int64_t>(0, count));
  if (steps->empty())
    *steps = SmallVector<int64_t>(count, 1);
  if (ends->size() != count || axes->size() != count ||
      steps->size() != count) {
    node.emitError() << "starts, ends, axes and steps differ in length";
    return failure();
  }
  int64_t rank = type->getRank();
  FailureOr<SmallVector<int64_t>> normalized = normalizeAxes(node, *axes, rank);
  if (failed(normalized))
    return failure();

  SmallVector<int64_t> allStarts(rank, 0), allEnds(type->getShape()),
      allSteps(rank, 1);
  for (size_t i = 0; i < count; ++i) {
    int64_t axis = (*normalized)[i], dim = type->getDimSize(axis);
    int64_t start = (*starts)[i], end = (*ends)[i], step = (*steps)[i];
    if (step == 0) {
      node.emitError() << "step of axis " << axis << " is zero";
      return failure();
    }
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    bool empty;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      empty = start >= end;
    } else {
      start = std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
      end = std::clamp<int64_t>(end, -1, dim - 1);
      empty = dim == 0 || start <= end;
    }
    if (empty)
      start = end = 0;
    allStarts[axis] = start;
    allEnds[axis] = end;
    allSteps[axis] = step;
  }

  DenseElementsAttr constant = node.getConstantInput(0);
  if (!constant) {
    FailureOr<Value> input = getFloatInput(node, 0, "data");
    if (failed(input))
      return failure();
    FailureOr<Value> slice = createInferred<train::SliceOp>(
        node, rewriter, *input, allStarts, allEnds, allSteps);
    return failed(slice) ? failure() : finishNode(node, rewriter, *slice);
  }
  // Fold: result index r reads input index start + r * step per axis.
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t distance =
        allSteps[i] > 0 ? allEnds[i] - allStarts[i] : allStarts[i] - allEnds[i];
    int64_t step = std::abs(allSteps[i]);
    shape.push_back(std::max<int64_t>(0, (distance + step - 1) / step));
  }
  SmallVector<int64_t> inputStrides = getStrides(type->getShape()), strides;
  int64_t offset = 0;
  for (int64_t i = 0; i < rank; ++i) {
    offset += allStarts[i] * inputStrides[i];
    strides.push_back(allSteps[i] * inputStrides[i]);
  }
  return finishWithStridedView(
      node, rewriter, constant,
      RankedTensorType::get(shape, type->getElementType()), offset, strides);
}

} // namespace

void onnx_import::addShapeHandlers(HandlerTable &table) {
  table["Shape"] = legalizeShape;
  table["Gather"] = legalizeGather;
  table["Unsqueeze"] = legalizeUnsqueeze;
  table["Squeeze"] = legalizeSqueeze;
  table["Concat"] = legalizeConcat;
  table["Reshape"] = legalizeReshape;
  table["Flatten"] = legalizeFlatten;
  table["Transpose"] = legalizeTranspose;
  table["Slice"] = legalizeSlice;
  addConstantHandlers(table);
  addShapeFoldHandlers(table);
}
