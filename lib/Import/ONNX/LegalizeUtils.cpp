//===- LegalizeUtils.cpp - helpers shared by the ONNX handlers ------------===//

#include "LegalizeUtils.h"

#include "llvm/ADT/APSInt.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

//===----------------------------------------------------------------------===//
// Inputs, outputs and results
//===----------------------------------------------------------------------===//

bool onnx_import::isFloatElementType(Type type) {
  return type.isF16() || type.isBF16() || type.isF32() || type.isF64();
}

bool onnx_import::isTrainElementType(Type type) {
  return isFloatElementType(type) || type.isSignlessInteger(1) ||
         type.isSignlessInteger(32) || type.isSignlessInteger(64);
}

FailureOr<RankedTensorType>
onnx_import::getStaticInputType(const ONNXNode &node, unsigned index,
                                StringRef what) {
  Value value = node.getInput(index);
  if (!value) {
    node.emitError() << "input " << index << " (" << what << ") is missing";
    return failure();
  }
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape()) {
    node.emitError() << "input " << index << " (" << what
                     << ") needs a static shape, got " << value.getType();
    return failure();
  }
  return type;
}

FailureOr<Value> onnx_import::getFloatInput(const ONNXNode &node,
                                            unsigned index, StringRef what) {
  Value value = node.getInput(index);
  auto tensor =
      dyn_cast_if_present<TensorType>(value ? value.getType() : Type());
  if (value && (!tensor || !isFloatElementType(tensor.getElementType()))) {
    node.emitError() << "input " << index << " (" << what
                     << ") has unsupported type " << value.getType()
                     << ": expected a float tensor";
    return failure();
  }
  if (failed(getStaticInputType(node, index, what)))
    return failure();
  return value;
}

LogicalResult onnx_import::requireUnusedOutputs(const ONNXNode &node,
                                                unsigned first,
                                                ArrayRef<StringRef> names) {
  auto outputs = node.getOp().getOutputs();
  for (unsigned i = first; i < outputs.size(); ++i) {
    if (outputs[i].use_empty())
      continue;
    InFlightDiagnostic diag = node.emitError() << "output " << i;
    if (i - first < names.size())
      diag << " (" << names[i - first] << ")";
    diag << " is used but not supported";
    return failure();
  }
  return success();
}

LogicalResult onnx_import::finishNode(const ONNXNode &node,
                                      RewriterBase &rewriter, Value value) {
  train::ONNXNodeOp op = node.getOp();
  if (failed(requireUnusedOutputs(node, 1, {})))
    return failure();
  if (op.getOutputs().empty()) {
    node.emitError() << "has no outputs";
    return failure();
  }
  auto declared = dyn_cast<RankedTensorType>(op.getOutputs()[0].getType());
  if (declared && declared.hasStaticShape() && declared != value.getType()) {
    node.emitError() << "result type " << value.getType()
                     << " differs from the type " << declared
                     << " that ONNX shape inference declared";
    return failure();
  }
  llvm::SetVector<Operation *> producers;
  for (Value input : op.getInputs())
    if (Operation *producer = input.getDefiningOp())
      producers.insert(producer);
  replaceNode(node, rewriter, value);
  // Shape sub-graphs leave their folded inputs behind; drop them as we go.
  for (Operation *producer : producers)
    if (isa<train::ConstantOp, train::ONNXNoneOp>(producer) &&
        producer->use_empty())
      rewriter.eraseOp(producer);
  return success();
}

LogicalResult onnx_import::rejectAttrBefore(const ONNXNode &node,
                                            StringRef name, int64_t since) {
  if (node.getOpset() >= since || !node.hasAttr(name))
    return success();
  node.emitError() << "attribute '" << name << "' needs opset " << since
                   << " or later, the model imports opset " << node.getOpset();
  return failure();
}

LogicalResult onnx_import::detail::inferWithNodeDiagnostic(
    const ONNXNode &node, function_ref<LogicalResult()> infer) {
  std::string reason;
  LogicalResult result = failure();
  {
    ScopedDiagnosticHandler capture(node.getOp()->getContext(),
                                    [&](Diagnostic &diag) {
                                      if (reason.empty())
                                        reason = diag.str();
                                      return success();
                                    });
    result = infer();
  }
  if (failed(result))
    node.emitError() << (reason.empty() ? "invalid operands" : reason);
  return result;
}

//===----------------------------------------------------------------------===//
// Constants and folding
//===----------------------------------------------------------------------===//

SmallVector<DenseElementsAttr>
onnx_import::getConstantInputs(const ONNXNode &node) {
  SmallVector<DenseElementsAttr> constants;
  for (unsigned i = 0, e = node.getNumInputs(); i < e; ++i)
    if (DenseElementsAttr constant = node.getConstantInput(i))
      constants.push_back(constant);
  return constants;
}

SmallVector<int64_t> onnx_import::getStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

LogicalResult onnx_import::checkRank(const ONNXNode &node, int64_t rank) {
  if (rank <= kMaxRank)
    return success();
  node.emitError() << "result rank " << rank
                   << " exceeds the supported maximum of " << kMaxRank;
  return failure();
}

LogicalResult onnx_import::checkFoldSize(const ONNXNode &node,
                                         ArrayRef<int64_t> shape) {
  if (failed(checkRank(node, shape.size())))
    return failure();
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0 || (dim > 0 && count > kMaxFoldedElements / dim)) {
      node.emitError() << "folding would create a constant of shape "
                       << train::shapeString(shape) << ", more than "
                       << kMaxFoldedElements << " elements";
      return failure();
    }
    count *= dim;
  }
  return success();
}

FailureOr<Value> onnx_import::createNodeConstant(const ONNXNode &node,
                                                 RewriterBase &rewriter,
                                                 DenseElementsAttr value) {
  if (!isTrainElementType(value.getElementType())) {
    node.emitError() << "constant of unsupported element type "
                     << value.getElementType();
    return failure();
  }
  return createConstant(rewriter, node.getLoc(), value);
}

LogicalResult onnx_import::finishWithConstant(const ONNXNode &node,
                                              RewriterBase &rewriter,
                                              DenseElementsAttr value) {
  FailureOr<Value> constant = createNodeConstant(node, rewriter, value);
  return failed(constant) ? failure() : finishNode(node, rewriter, *constant);
}

DenseElementsAttr onnx_import::pickElements(DenseElementsAttr source,
                                            RankedTensorType type,
                                            ArrayRef<int64_t> indices) {
  if (source.isSplat())
    return DenseElementsAttr::get(type, source.getSplatValue<Attribute>());
  if (isa<FloatType>(source.getElementType())) {
    auto values = llvm::to_vector(source.getValues<APFloat>());
    SmallVector<APFloat> picked;
    picked.reserve(indices.size());
    for (int64_t index : indices)
      picked.push_back(values[index]);
    return DenseElementsAttr::get(type, picked);
  }
  auto values = llvm::to_vector(source.getValues<APInt>());
  SmallVector<APInt> picked;
  picked.reserve(indices.size());
  for (int64_t index : indices)
    picked.push_back(values[index]);
  return DenseElementsAttr::get(type, picked);
}

SmallVector<int64_t> onnx_import::broadcastIndices(ArrayRef<int64_t> from,
                                                   ArrayRef<int64_t> to) {
  int64_t total = 1;
  for (int64_t dim : to)
    total *= dim;
  size_t offset = to.size() - from.size();
  SmallVector<int64_t> fromStrides = getStrides(from);
  SmallVector<int64_t> index(to.size(), 0);
  SmallVector<int64_t> result;
  result.reserve(total);
  for (int64_t n = 0; n < total; ++n) {
    int64_t linear = 0;
    for (size_t d = 0; d < from.size(); ++d)
      if (from[d] != 1)
        linear += index[d + offset] * fromStrides[d];
    result.push_back(linear);
    for (int64_t d = static_cast<int64_t>(to.size()) - 1; d >= 0; --d) {
      if (++index[d] < to[d])
        break;
      index[d] = 0;
    }
  }
  return result;
}

FailureOr<SmallVector<DenseElementsAttr>>
onnx_import::requireConstantInputs(const ONNXNode &node, unsigned count) {
  SmallVector<DenseElementsAttr> values;
  for (unsigned i = 0; i < count; ++i) {
    DenseElementsAttr value = node.getConstantInput(i);
    if (!value) {
      node.emitError() << node.getOpType() << " on computed data (input " << i
                       << ") is not supported; only its use on constants "
                          "(shape arithmetic) folds";
      return failure();
    }
    values.push_back(value);
  }
  return values;
}

FailureOr<ConstantBroadcast>
onnx_import::broadcastConstants(const ONNXNode &node, DenseElementsAttr lhs,
                                DenseElementsAttr rhs) {
  Type element = lhs.getElementType();
  if (element != rhs.getElementType()) {
    node.emitError() << "operand element types differ: " << element << " and "
                     << rhs.getElementType();
    return failure();
  }
  ArrayRef<int64_t> lhsShape = lhs.getType().getShape();
  ArrayRef<int64_t> rhsShape = rhs.getType().getShape();
  FailureOr<SmallVector<int64_t>> shape =
      train::broadcastShapes(lhsShape, rhsShape);
  if (failed(shape)) {
    node.emitError() << "shapes " << train::shapeString(lhsShape) << " and "
                     << train::shapeString(rhsShape) << " do not broadcast";
    return failure();
  }
  if (failed(checkFoldSize(node, *shape)))
    return failure();
  return ConstantBroadcast{*shape, broadcastIndices(lhsShape, *shape),
                           broadcastIndices(rhsShape, *shape)};
}

FailureOr<DenseElementsAttr> onnx_import::foldBinary(const ONNXNode &node,
                                                     StringRef opType,
                                                     DenseElementsAttr lhs,
                                                     DenseElementsAttr rhs) {
  Type element = lhs.getElementType();
  FailureOr<ConstantBroadcast> broadcast = broadcastConstants(node, lhs, rhs);
  if (failed(broadcast))
    return failure();
  const SmallVector<int64_t> &lhsIndices = broadcast->lhsIndices;
  const SmallVector<int64_t> &rhsIndices = broadcast->rhsIndices;
  bool compare = opType == "Equal";
  auto resultType = RankedTensorType::get(
      broadcast->shape, compare ? IntegerType::get(element.getContext(), 1) : element);

  if (isa<FloatType>(element)) {
    auto l = llvm::to_vector(lhs.getValues<APFloat>());
    auto r = llvm::to_vector(rhs.getValues<APFloat>());
    SmallVector<APFloat> values;
    SmallVector<APInt> bits;
    for (auto [li, ri] : llvm::zip_equal(lhsIndices, rhsIndices)) {
      APFloat a = l[li], b = r[ri];
      llvm::RoundingMode rm = llvm::RoundingMode::NearestTiesToEven;
      if (compare)
        bits.emplace_back(1, a.compare(b) == APFloat::cmpEqual);
      else if (opType == "Add")
        (void)a.add(b, rm);
      else if (opType == "Sub")
        (void)a.subtract(b, rm);
      else if (opType == "Mul")
        (void)a.multiply(b, rm);
      else if (opType == "Max")
        a = llvm::maximum(a, b);
      else if (opType == "Min")
        a = llvm::minimum(a, b);
      else
        (void)a.divide(b, rm);
      if (!compare)
        values.push_back(a);
    }
    return compare ? DenseElementsAttr::get(resultType, bits)
                   : DenseElementsAttr::get(resultType, values);
  }

  auto l = llvm::to_vector(lhs.getValues<APInt>());
  auto r = llvm::to_vector(rhs.getValues<APInt>());
  SmallVector<APInt> values;
  for (auto [li, ri] : llvm::zip_equal(lhsIndices, rhsIndices)) {
    const APInt &a = l[li], &b = r[ri];
    if (compare)
      values.emplace_back(1, a == b);
    else if (opType == "Add")
      values.push_back(a + b);
    else if (opType == "Sub")
      values.push_back(a - b);
    else if (opType == "Mul")
      values.push_back(a * b);
    else if (opType == "Max")
      values.push_back(a.sge(b) ? a : b);
    else if (opType == "Min")
      values.push_back(a.sle(b) ? a : b);
    else if (b.isZero()) {
      node.emitError() << "integer division by zero";
      return failure();
    } else {
      values.push_back(a.sdiv(b));
    }
  }
  return DenseElementsAttr::get(resultType, values);
}

DenseElementsAttr onnx_import::getConstantOrInitialValue(const ONNXNode &node,
                                                         unsigned index) {
  if (DenseElementsAttr value = node.getConstantInput(index))
    return value;
  Value input = node.getInput(index);
  auto read = input ? input.getDefiningOp<train::ReadParamOp>() : nullptr;
  if (!read)
    return nullptr;
  auto param = SymbolTable::lookupNearestSymbolFrom<train::ParamOp>(
      read, read.getParamAttr());
  if (!param || !param.getInitialValue())
    return nullptr;
  return dyn_cast<DenseElementsAttr>(*param.getInitialValue());
}

std::optional<double> onnx_import::getScalarValue(DenseElementsAttr value) {
  if (!value || value.getNumElements() != 1)
    return std::nullopt;
  if (isa<FloatType>(value.getElementType()))
    return (*value.getValues<APFloat>().begin()).convertToDouble();
  APInt integer = *value.getValues<APInt>().begin();
  if (integer.getBitWidth() == 1)
    return static_cast<double>(integer.getZExtValue());
  return static_cast<double>(integer.getSExtValue());
}

DenseElementsAttr onnx_import::convertElements(DenseElementsAttr value,
                                               Type elementType) {
  auto type = RankedTensorType::get(value.getType().getShape(), elementType);
  Type from = value.getElementType();
  if (from == elementType)
    return value;
  llvm::RoundingMode rm = llvm::RoundingMode::NearestTiesToEven;
  auto toFloat = dyn_cast<FloatType>(elementType);
  if (auto fromFloat = dyn_cast<FloatType>(from)) {
    SmallVector<APFloat> floats;
    SmallVector<APInt> ints;
    for (APFloat element : value.getValues<APFloat>()) {
      if (toFloat) {
        bool losesInfo;
        (void)element.convert(toFloat.getFloatSemantics(), rm, &losesInfo);
        floats.push_back(element);
        continue;
      }
      unsigned width = elementType.getIntOrFloatBitWidth();
      if (width == 1) {
        ints.emplace_back(1, !element.isZero());
        continue;
      }
      llvm::APSInt result(width, /*isUnsigned=*/false);
      bool exact;
      (void)element.convertToInteger(result, llvm::RoundingMode::TowardZero,
                                     &exact);
      ints.push_back(result);
    }
    return toFloat ? DenseElementsAttr::get(type, floats)
                   : DenseElementsAttr::get(type, ints);
  }
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  SmallVector<APFloat> floats;
  SmallVector<APInt> ints;
  for (const APInt &element : value.getValues<APInt>()) {
    bool isSigned = fromWidth != 1;
    if (toFloat) {
      APFloat result(toFloat.getFloatSemantics());
      (void)result.convertFromAPInt(element, isSigned, rm);
      floats.push_back(result);
      continue;
    }
    unsigned width = elementType.getIntOrFloatBitWidth();
    if (width == 1)
      ints.emplace_back(1, !element.isZero());
    else
      ints.push_back(isSigned ? element.sextOrTrunc(width)
                              : element.zextOrTrunc(width));
  }
  return toFloat ? DenseElementsAttr::get(type, floats)
                 : DenseElementsAttr::get(type, ints);
}
