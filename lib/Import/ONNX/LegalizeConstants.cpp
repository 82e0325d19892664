//===- LegalizeConstants.cpp - ONNX constant-producing handlers -----------===//
//
// Constant, ConstantOfShape, Range, Cast, Expand and Tile: the ops that make
// or transform the small integer tensors of shape sub-graphs. Except for
// Constant, a float Cast, Expand and Tile they only fold; on non-constant
// data they are reported as unsupported uses. (Equal and Where, which also
// work on computed data, are in LegalizeConditionals.cpp.)
//
//===----------------------------------------------------------------------===//

#include "LegalizeUtils.h"

#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

namespace {

/// The element type of ONNX TensorProto data type `code`, when a Train
/// tensor can hold it.
Type getONNXElementType(MLIRContext *context, int64_t code) {
  switch (code) {
  case 1:
    return Float32Type::get(context);
  case 6:
    return IntegerType::get(context, 32);
  case 7:
    return IntegerType::get(context, 64);
  case 9:
    return IntegerType::get(context, 1);
  case 10:
    return Float16Type::get(context);
  case 11:
    return Float64Type::get(context);
  case 16:
    return BFloat16Type::get(context);
  default:
    return nullptr;
  }
}

LogicalResult legalizeConstant(const ONNXNode &node, RewriterBase &rewriter) {
  Location loc = node.getLoc();
  DictionaryAttr attrs = node.getOp().getOnnxAttrs();
  if (auto value = dyn_cast_if_present<ElementsAttr>(attrs.get("value"))) {
    if (!isTrainElementType(value.getElementType())) {
      node.emitError() << "constant of unsupported element type "
                       << value.getElementType();
      return failure();
    }
    return finishNode(node, rewriter,
                      train::ConstantOp::create(rewriter, loc, value));
  }
  if (std::optional<float> value = node.getFloat("value_float"))
    return finishWithConstant(
        node, rewriter,
        DenseElementsAttr::get(RankedTensorType::get({}, rewriter.getF32Type()),
                               *value));
  if (std::optional<int64_t> value = node.getInt("value_int"))
    return finishWithConstant(
        node, rewriter,
        DenseElementsAttr::get(RankedTensorType::get({}, rewriter.getI64Type()),
                               *value));
  if (auto values =
          dyn_cast_if_present<DenseF32ArrayAttr>(attrs.get("value_floats"))) {
    auto type = RankedTensorType::get({values.size()}, rewriter.getF32Type());
    return finishWithConstant(
        node, rewriter, DenseElementsAttr::get(type, values.asArrayRef()));
  }
  if (std::optional<SmallVector<int64_t>> values = node.getInts("value_ints")) {
    auto type = RankedTensorType::get({static_cast<int64_t>(values->size())},
                                      rewriter.getI64Type());
    return finishWithConstant(node, rewriter,
                              DenseElementsAttr::get(type, ArrayRef(*values)));
  }
  for (StringRef name : {"sparse_value", "value_string", "value_strings"}) {
    if (node.hasAttr(name)) {
      node.emitError() << "attribute '" << name << "' is not supported";
      return failure();
    }
  }
  node.emitError() << "has no value attribute";
  return failure();
}

LogicalResult legalizeConstantOfShape(const ONNXNode &node,
                                      RewriterBase &rewriter) {
  std::optional<SmallVector<int64_t>> shape = node.getConstantInts(0);
  if (!shape) {
    node.emitError() << "input 0 (input) is not a constant shape";
    return failure();
  }
  if (failed(checkRank(node, shape->size())))
    return failure();
  int64_t count = 1;
  for (int64_t dim : *shape) {
    if (dim < 0) {
      node.emitError() << "shape has a negative dimension";
      return failure();
    }
    // A splat costs nothing here, but later stages materialise it.
    constexpr int64_t limit = int64_t(1) << 32;
    if (llvm::MulOverflow(count, dim, count) || count > limit) {
      node.emitError() << "shape holds more than " << limit << " elements";
      return failure();
    }
  }
  DenseElementsAttr value = node.getTensor("value");
  Attribute element = rewriter.getF32FloatAttr(0.0f);
  if (value) {
    if (value.getNumElements() != 1) {
      node.emitError() << "attribute 'value' must hold one element, got "
                       << value.getType();
      return failure();
    }
    element = *value.getValues<Attribute>().begin();
  }
  // A splat: no elements are materialised whatever the shape.
  auto type = RankedTensorType::get(*shape, cast<TypedAttr>(element).getType());
  return finishWithConstant(node, rewriter,
                            DenseElementsAttr::get(type, element));
}

/// Range(start, limit, delta) = numpy.arange on constant scalars.
LogicalResult legalizeRange(const ONNXNode &node, RewriterBase &rewriter) {
  SmallVector<DenseElementsAttr, 3> operands;
  const StringRef names[] = {"start", "limit", "delta"};
  for (auto [index, what] : llvm::enumerate(names)) {
    DenseElementsAttr value = node.getConstantInput(index);
    if (!value || value.getNumElements() != 1) {
      node.emitError() << "input " << index << " (" << what
                       << ") is not a constant scalar";
      return failure();
    }
    operands.push_back(value);
  }
  Type element = operands[0].getElementType();
  if (operands[1].getElementType() != element ||
      operands[2].getElementType() != element) {
    node.emitError() << "start, limit and delta differ in type";
    return failure();
  }
  double start = *getScalarValue(operands[0]);
  double limit = *getScalarValue(operands[1]);
  double delta = *getScalarValue(operands[2]);
  if (delta == 0) {
    node.emitError() << "delta is zero";
    return failure();
  }
  double count = std::max(std::ceil((limit - start) / delta), 0.0);
  if (!(count <= static_cast<double>(kMaxFoldedElements))) {
    node.emitError() << "range of " << count << " elements is too long";
    return failure();
  }
  auto n = static_cast<int64_t>(count);
  auto type = RankedTensorType::get({n}, element);
  if (auto floatType = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> values;
    for (int64_t i = 0; i < n; ++i) {
      APFloat value(start + static_cast<double>(i) * delta);
      bool losesInfo;
      (void)value.convert(floatType.getFloatSemantics(),
                          llvm::RoundingMode::NearestTiesToEven, &losesInfo);
      values.push_back(value);
    }
    return finishWithConstant(node, rewriter,
                              DenseElementsAttr::get(type, values));
  }
  // Integers: exact arithmetic, not through doubles.
  APInt first = *operands[0].getValues<APInt>().begin();
  APInt step = *operands[2].getValues<APInt>().begin();
  SmallVector<APInt> values;
  for (int64_t i = 0; i < n; ++i, first += step)
    values.push_back(first);
  return finishWithConstant(node, rewriter,
                            DenseElementsAttr::get(type, values));
}

/// Input 0 converted to `element`: folded on constants, a train.cast
/// between float types.
LogicalResult castTo(const ONNXNode &node, RewriterBase &rewriter,
                     Type element) {
  if (DenseElementsAttr constant = node.getConstantInput(0))
    return finishWithConstant(node, rewriter,
                              convertElements(constant, element));
  Value input = node.getInput(0);
  auto type =
      dyn_cast_if_present<RankedTensorType>(input ? input.getType() : Type());
  if (!type) {
    (void)getStaticInputType(node, 0, "input"); // Reports what is wrong.
    return failure();
  }
  if (type.getElementType() == element)
    return finishNode(node, rewriter, input);
  // Between float types (a model's own mixed precision): train.cast, which
  // rounds to nearest even as ONNX Cast does.
  if (isFloatElementType(type.getElementType()) && isFloatElementType(element))
    return finishNode(node, rewriter,
                      train::CastOp::create(rewriter, node.getLoc(),
                                            type.clone(element), input));
  node.emitError() << "cast of a non-constant tensor from "
                   << type.getElementType() << " to " << element
                   << " is not supported";
  return failure();
}

LogicalResult legalizeCast(const ONNXNode &node, RewriterBase &rewriter) {
  std::optional<int64_t> to = node.getInt("to");
  if (!to) {
    node.emitError() << "attribute 'to' is missing";
    return failure();
  }
  Type element = getONNXElementType(rewriter.getContext(), *to);
  if (!element) {
    node.emitError() << "cast to ONNX data type " << *to << " is not supported";
    return failure();
  }
  return castTo(node, rewriter, element);
}

/// CastLike (opset 15; PyTorch 2.x's exporter writes it): Cast to the
/// element type of input 1.
LogicalResult legalizeCastLike(const ONNXNode &node, RewriterBase &rewriter) {
  Value like = node.getInput(1);
  auto type =
      dyn_cast_if_present<RankedTensorType>(like ? like.getType() : Type());
  if (!type) {
    node.emitError() << "input 1 (target_type) must be a ranked tensor";
    return failure();
  }
  return castTo(node, rewriter, type.getElementType());
}


/// Expand broadcasts both ways: the result shape is the broadcast of the
/// input's and the requested one. Folded on constants; computed float data
/// (a ViT's class token expanded over the batch) becomes a
/// train.broadcast_to, whose gradient sums back.
LogicalResult legalizeExpand(const ONNXNode &node, RewriterBase &rewriter) {
  DenseElementsAttr input = node.getConstantInput(0);
  RankedTensorType inputType =
      input ? cast<RankedTensorType>(input.getType()) : node.getInputType(0);
  if (!input && !(inputType && inputType.hasStaticShape() &&
                  isFloatElementType(inputType.getElementType()))) {
    node.emitError() << "Expand of non-constant data is supported for "
                        "float tensors of static shape only";
    return failure();
  }
  std::optional<SmallVector<int64_t>> requested = node.getConstantInts(1);
  if (!requested) {
    node.emitError() << "input 1 (shape) is not a constant";
    return failure();
  }
  FailureOr<SmallVector<int64_t>> shape =
      train::broadcastShapes(inputType.getShape(), *requested);
  if (failed(shape) || llvm::any_of(*shape, [](int64_t d) { return d < 0; })) {
    InFlightDiagnostic diag = node.emitError()
                              << "input of type " << inputType
                              << " cannot be expanded to [";
    llvm::interleaveComma(*requested, diag);
    // The usual cause: a constant traced at the export's batch size (PyTorch
    // exports LSTM/GRU initial states so) meeting another --batch-size.
    diag << "]; if the model was exported at another batch size than the "
            "--batch-size it is compiled for, export it at batch size 1 or "
            "at that batch size";
    return failure();
  }
  if (!input) {
    if (failed(checkRank(node, shape->size())))
      return failure();
    auto type = RankedTensorType::get(*shape, inputType.getElementType());
    Value data = node.getInput(0);
    return finishNode(node, rewriter,
                      type == inputType
                          ? data
                          : train::BroadcastToOp::create(
                                rewriter, node.getLoc(), type, data));
  }
  if (failed(checkFoldSize(node, *shape)))
    return failure();
  auto type = RankedTensorType::get(*shape, input.getElementType());
  return finishWithConstant(
      node, rewriter,
      pickElements(input, type,
                   broadcastIndices(input.getType().getShape(), *shape)));
}

/// Tile repeats the input repeats[i] times along each axis i (output index
/// o reads input index o mod size). On computed float data (Keras 3 writes
/// UpSampling2D's nearest repeat so) it is a reshape that opens a size-1
/// axis before every axis, a broadcast of those to the repeats and a
/// reshape that merges each pair: the broadcast's gradient sums the copies.
/// Folded on constants.
LogicalResult legalizeTile(const ONNXNode &node, RewriterBase &rewriter) {
  std::optional<SmallVector<int64_t>> repeats = node.getConstantInts(1);
  if (!repeats) {
    node.emitError() << "input 1 (repeats) is not a constant";
    return failure();
  }
  DenseElementsAttr input = node.getConstantInput(0);
  RankedTensorType type =
      input ? cast<RankedTensorType>(input.getType()) : node.getInputType(0);
  if (!type || !type.hasStaticShape()) {
    node.emitError() << "input 0 (input) must have a static shape";
    return failure();
  }
  int64_t rank = type.getRank();
  if (static_cast<int64_t>(repeats->size()) != rank) {
    node.emitError() << "expected " << rank << " repeats (one per axis), got "
                     << repeats->size();
    return failure();
  }
  SmallVector<int64_t> shape, opened, broadcast;
  for (auto [size, repeat] : llvm::zip_equal(type.getShape(), *repeats)) {
    if (repeat < 0 ||
        (size != 0 && repeat > kMaxFoldedElements / std::max<int64_t>(size, 1))) {
      node.emitError() << "repeat " << repeat << " is out of range";
      return failure();
    }
    shape.push_back(size * repeat);
    opened.append({1, size});
    broadcast.append({repeat, size});
  }
  if (input) {
    if (failed(checkFoldSize(node, shape)))
      return failure();
    auto resultType = RankedTensorType::get(shape, type.getElementType());
    SmallVector<int64_t> outStrides = getStrides(shape);
    SmallVector<int64_t> inStrides = getStrides(type.getShape());
    SmallVector<int64_t> indices;
    for (int64_t linear = 0, count = resultType.getNumElements();
         linear < count; ++linear) {
      int64_t source = 0;
      for (int64_t axis = 0; axis < rank; ++axis) {
        int64_t coordinate = (linear / outStrides[axis]) % shape[axis];
        source += (coordinate % type.getDimSize(axis)) * inStrides[axis];
      }
      indices.push_back(source);
    }
    return finishWithConstant(node, rewriter,
                              pickElements(input, resultType, indices));
  }
  if (!isFloatElementType(type.getElementType())) {
    node.emitError() << "Tile of non-constant data is supported for float "
                        "tensors only";
    return failure();
  }
  Value data = node.getInput(0);
  if (llvm::all_of(*repeats, [](int64_t r) { return r == 1; }))
    return finishNode(node, rewriter, data);
  if (failed(checkRank(node, 2 * rank)))
    return failure();
  Location loc = node.getLoc();
  Type element = type.getElementType();
  Value grouped = train::ReshapeOp::create(
      rewriter, loc, RankedTensorType::get(opened, element), data);
  Value copies = train::BroadcastToOp::create(
      rewriter, loc, RankedTensorType::get(broadcast, element), grouped);
  return finishNode(node, rewriter,
                    train::ReshapeOp::create(
                        rewriter, loc, RankedTensorType::get(shape, element),
                        copies));
}

} // namespace

void onnx_import::addConstantHandlers(HandlerTable &table) {
  table["Constant"] = legalizeConstant;
  table["ConstantOfShape"] = legalizeConstantOfShape;
  table["Range"] = legalizeRange;
  table["Cast"] = legalizeCast;
  table["CastLike"] = legalizeCastLike;
  table["Expand"] = legalizeExpand;
  table["Tile"] = legalizeTile;
}
