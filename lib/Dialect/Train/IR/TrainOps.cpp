//===- TrainOps.cpp - shape functions and verifiers -----------------------===//
//
// Each compute op's shape function both infers its result type (so builders
// need no result type) and reports what is wrong with its operands and
// attributes (the InferTypeOpInterface verifier calls it with a location).
//
//===----------------------------------------------------------------------===//

#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace traincc::train;

namespace traincc::train {

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return text;
}

FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l != r && l != 1 && r != 1)
      return failure();
    result[i] = l == 1 ? r : l;
  }
  return result;
}

int64_t windowOutputSize(int64_t inputSize, int64_t kernel, int64_t stride,
                         int64_t padBegin, int64_t padEnd, int64_t dilation,
                         bool ceilMode) {
  // Floor division, as in PyTorch's pooling_output_shape: in ceil mode a span
  // just short of one window (-stride < span < 0) still gives one window.
  int64_t span = inputSize + padBegin + padEnd - dilation * (kernel - 1) - 1;
  int64_t count =
      llvm::divideFloorSigned(span + (ceilMode ? stride - 1 : 0), stride) + 1;
  if (count < 1)
    return 0;
  // PyTorch (and ONNX since opset 19) drop a last window that would start in
  // the end padding.
  if (ceilMode && (count - 1) * stride >= inputSize + padBegin)
    --count;
  return count;
}

} // namespace traincc::train

namespace {

RankedTensorType rankedType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Checks the window attributes shared by convolution and pooling: one stride
/// and dilation per spatial axis, a begin and end pad per spatial axis.
LogicalResult verifyWindowAttrs(std::optional<Location> loc, int64_t spatial,
                                ArrayRef<int64_t> kernel,
                                ArrayRef<int64_t> strides,
                                ArrayRef<int64_t> pads,
                                ArrayRef<int64_t> dilations) {
  if (static_cast<int64_t>(kernel.size()) != spatial)
    return emitOptionalError(loc, "expected ", spatial, " kernel sizes, got ",
                             kernel.size());
  if (static_cast<int64_t>(strides.size()) != spatial)
    return emitOptionalError(loc, "expected ", spatial, " strides, got ",
                             strides.size());
  if (static_cast<int64_t>(dilations.size()) != spatial)
    return emitOptionalError(loc, "expected ", spatial, " dilations, got ",
                             dilations.size());
  if (static_cast<int64_t>(pads.size()) != 2 * spatial)
    return emitOptionalError(loc, "expected ", 2 * spatial,
                             " pads (begin and end per spatial axis), got ",
                             pads.size());
  if (llvm::any_of(kernel, [](int64_t k) { return k < 1; }))
    return emitOptionalError(loc, "kernel sizes must be positive");
  if (llvm::any_of(strides, [](int64_t s) { return s < 1; }))
    return emitOptionalError(loc, "strides must be positive");
  if (llvm::any_of(dilations, [](int64_t d) { return d < 1; }))
    return emitOptionalError(loc, "dilations must be positive");
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return emitOptionalError(loc, "pads must be non-negative");
  return success();
}

/// A pooling pad must be smaller than the dilated window, so that no window
/// holds padding only (max of nothing, average over zero elements).
LogicalResult verifyPoolPads(std::optional<Location> loc,
                             ArrayRef<int64_t> kernel, ArrayRef<int64_t> pads,
                             ArrayRef<int64_t> dilations) {
  int64_t spatial = kernel.size();
  for (int64_t i = 0; i < 2 * spatial; ++i) {
    int64_t axis = i % spatial;
    int64_t extent = dilations[axis] * (kernel[axis] - 1) + 1;
    if (pads[i] >= extent)
      return emitOptionalError(loc, i < spatial ? "begin" : "end", " pad ",
                               pads[i], " of spatial axis ", axis,
                               " is not smaller than the window (", extent,
                               ")");
  }
  return success();
}

/// Shape of a windowed op's result: batch and channel axes, then one window
/// count per spatial axis.
FailureOr<SmallVector<int64_t>>
windowedShape(std::optional<Location> loc, RankedTensorType input,
              int64_t channels, ArrayRef<int64_t> kernel,
              ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
              ArrayRef<int64_t> dilations, bool ceilMode) {
  int64_t spatial = input.getRank() - 2;
  SmallVector<int64_t> shape = {input.getDimSize(0), channels};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t size =
        windowOutputSize(input.getDimSize(i + 2), kernel[i], strides[i],
                         pads[i], pads[i + spatial], dilations[i], ceilMode);
    if (size < 1) {
      (void)emitOptionalError(loc, "window of ", kernel[i], " (dilation ",
                              dilations[i], ") does not fit spatial axis ", i,
                              " of size ", input.getDimSize(i + 2),
                              " with its padding");
      return failure();
    }
    shape.push_back(size);
  }
  return shape;
}

LogicalResult requireSameElementType(std::optional<Location> loc,
                                     ArrayRef<Type> types) {
  Type element = getElementTypeOrSelf(types.front());
  for (Type type : types.drop_front())
    if (getElementTypeOrSelf(type) != element)
      return emitOptionalError(loc,
                               "operands must share one element type, got ",
                               element, " and ", getElementTypeOrSelf(type));
  return success();
}

LogicalResult requireChannelVector(std::optional<Location> loc, Value value,
                                   StringRef name, int64_t channels) {
  RankedTensorType type = rankedType(value);
  if (type.getRank() != 1 || type.getDimSize(0) != channels)
    return emitOptionalError(loc, name, " must be a vector of ", channels,
                             " elements, got ", type);
  return success();
}

LogicalResult requireAxis(Operation *op, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << rank;
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Parameters and constants
//===----------------------------------------------------------------------===//

static ParseResult parseParamKind(OpAsmParser &parser, ParamKindAttr &kind) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef word;
  if (parser.parseKeyword(&word))
    return failure();
  std::optional<ParamKind> value = symbolizeParamKind(word);
  if (!value)
  {
    InFlightDiagnostic diag = parser.emitError(loc, "expected one of ");
    for (uint32_t i = 0; i <= getMaxEnumValForParamKind(); ++i)
      diag << (i ? ", " : "") << stringifyParamKind(static_cast<ParamKind>(i));
    return diag << "; got '" << word << "'";
  }
  kind = ParamKindAttr::get(parser.getContext(), *value);
  return success();
}

static void printParamKind(OpAsmPrinter &printer, ParamOp, ParamKindAttr kind) {
  printer << stringifyParamKind(kind.getValue());
}

/// The initial value takes the declared type, so it is written without one:
/// `= dense<0.0>`.
static ParseResult parseParamInitialValue(OpAsmParser &parser, TypeAttr type,
                                          ElementsAttr &value) {
  if (failed(parser.parseOptionalEqual()))
    return success();
  SMLoc loc = parser.getCurrentLocation();
  Attribute attr;
  if (parser.parseAttribute(attr, type.getValue()))
    return failure();
  value = dyn_cast<ElementsAttr>(attr);
  if (!value)
    return parser.emitError(loc, "expected an elements attribute, got ")
           << attr;
  return success();
}

static void printParamInitialValue(OpAsmPrinter &printer, ParamOp, TypeAttr,
                                   ElementsAttr value) {
  if (!value)
    return;
  printer << " = ";
  printer.printAttributeWithoutType(value);
}

LogicalResult ParamOp::verify() {
  if (std::optional<ElementsAttr> init = getInitialValue())
    if (init->getType() != getType())
      return emitOpError("initial value of type ")
             << init->getType() << " does not match declared type "
             << getType();
  if ((getKind() == ParamKind::RunningMean ||
       getKind() == ParamKind::RunningVar) &&
      getTensorType().getRank() != 1)
    return emitOpError("running statistics must be a vector, got ")
           << getType();
  bool isCopy = getKind() == ParamKind::WeightCopy ||
                getKind() == ParamKind::StepBackup;
  if (isCopy != static_cast<bool>(getSourceAttr()))
    return emitOpError("a source is needed exactly for weight_copy and "
                       "step_backup parameters");
  if (FlatSymbolRefAttr source = getSourceAttr()) {
    auto module = (*this)->getParentOfType<ModuleOp>();
    auto param = module ? module.lookupSymbol<ParamOp>(source.getAttr())
                        : ParamOp();
    if (!param)
      return emitOpError("source '")
             << source.getValue() << "' does not name a train.param";
    if (param.getTensorType().getShape() != getTensorType().getShape())
      return emitOpError("has type ")
             << getType() << ", but its source '" << source.getValue()
             << "' has type " << param.getType();
  }
  return success();
}

LogicalResult
ReadParamOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto param =
      symbolTable.lookupNearestSymbolFrom<ParamOp>(*this, getParamAttr());
  if (!param)
    return emitOpError("'") << getParam() << "' does not name a train.param";
  if (param.getType() != getType())
    return emitOpError("result type ")
           << getType() << " does not match parameter type " << param.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution, normalisation and dense layers
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>> traincc::train::inferConvShape(
    std::optional<Location> loc, RankedTensorType input,
    RankedTensorType weight, Type biasType, ArrayRef<int64_t> strides,
    ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations, int64_t groups) {
  if (input.getRank() < 3) {
    (void)emitOptionalError(loc,
                            "input must have rank 3 or more (N, C, "
                            "spatial...), got ",
                            input);
    return failure();
  }
  if (weight.getRank() != input.getRank()) {
    (void)emitOptionalError(loc, "weight rank ", weight.getRank(),
                            " differs from input rank ", input.getRank());
    return failure();
  }
  SmallVector<Type> operandTypes = {input, weight};
  if (biasType)
    operandTypes.push_back(biasType);
  if (failed(requireSameElementType(loc, operandTypes)))
    return failure();
  int64_t spatial = input.getRank() - 2;
  if (failed(verifyWindowAttrs(loc, spatial, weight.getShape().drop_front(2),
                               strides, pads, dilations)))
    return failure();
  int64_t channels = input.getDimSize(1);
  int64_t filters = weight.getDimSize(0);
  if (groups < 1 || channels % groups != 0 || filters % groups != 0) {
    (void)emitOptionalError(loc, "groups = ", groups,
                            " must divide the input channels (", channels,
                            ") and the filters (", filters, ")");
    return failure();
  }
  if (weight.getDimSize(1) * groups != channels) {
    (void)emitOptionalError(loc, "weight has ", weight.getDimSize(1),
                            " channels per group but the input has ", channels,
                            " channels in ", groups, " groups");
    return failure();
  }
  if (biasType) {
    auto bias = cast<RankedTensorType>(biasType);
    if (bias.getRank() != 1 || bias.getDimSize(0) != filters) {
      (void)emitOptionalError(loc, "bias must be a vector of ", filters,
                              " elements, got ", bias);
      return failure();
    }
  }
  return windowedShape(loc, input, filters, weight.getShape().drop_front(2),
                       strides, pads, dilations, /*ceilMode=*/false);
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  FailureOr<SmallVector<int64_t>> shape = inferConvShape(
      loc, input, rankedType(adaptor.getWeight()),
      adaptor.getBias() ? adaptor.getBias().getType() : Type(),
      adaptor.getStrides(), adaptor.getPads(), adaptor.getDilations(),
      adaptor.getGroups());
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, input.getElementType()));
  return success();
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  if (input.getRank() < 2)
    return emitOptionalError(loc,
                             "input must have rank 2 or more (N, C, ...), "
                             "got ",
                             input);
  int64_t channels = input.getDimSize(1);
  if (failed(requireSameElementType(
          loc, {input, adaptor.getScale().getType(),
                adaptor.getBias().getType(), adaptor.getRunningMean().getType(),
                adaptor.getRunningVar().getType()})) ||
      failed(
          requireChannelVector(loc, adaptor.getScale(), "scale", channels)) ||
      failed(requireChannelVector(loc, adaptor.getBias(), "bias", channels)) ||
      failed(requireChannelVector(loc, adaptor.getRunningMean(), "running mean",
                                  channels)) ||
      failed(requireChannelVector(loc, adaptor.getRunningVar(),
                                  "running variance", channels)))
    return failure();
  float epsilon = adaptor.getEpsilon().convertToFloat();
  float momentum = adaptor.getMomentum().convertToFloat();
  if (!(epsilon >= 0.0f))
    return emitOptionalError(loc, "epsilon must be non-negative, got ",
                             epsilon);
  if (!(momentum >= 0.0f && momentum <= 1.0f))
    return emitOptionalError(loc, "momentum must be in [0, 1], got ", momentum);
  types.push_back(input);
  return success();
}

LogicalResult GemmOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  RankedTensorType a = rankedType(adaptor.getA());
  RankedTensorType b = rankedType(adaptor.getB());
  if (a.getRank() != 2 || b.getRank() != 2)
    return emitOptionalError(loc, "operands A and B must be matrices, got ", a,
                             " and ", b);
  SmallVector<Type> operandTypes = {a, b};
  if (adaptor.getC())
    operandTypes.push_back(adaptor.getC().getType());
  if (failed(requireSameElementType(loc, operandTypes)))
    return failure();
  int64_t m = a.getDimSize(adaptor.getTransA() ? 1 : 0);
  int64_t k = a.getDimSize(adaptor.getTransA() ? 0 : 1);
  int64_t kb = b.getDimSize(adaptor.getTransB() ? 1 : 0);
  int64_t n = b.getDimSize(adaptor.getTransB() ? 0 : 1);
  if (k != kb)
    return emitOptionalError(loc, "inner dimensions differ: ", k, " and ", kb);
  SmallVector<int64_t> shape = {m, n};
  if (adaptor.getC()) {
    RankedTensorType c = rankedType(adaptor.getC());
    FailureOr<SmallVector<int64_t>> joined =
        broadcastShapes(shape, c.getShape());
    if (failed(joined) || ArrayRef<int64_t>(*joined) != ArrayRef(shape))
      return emitOptionalError(loc, "C of shape ", shapeString(c.getShape()),
                               " does not broadcast to ", shapeString(shape));
  }
  types.push_back(RankedTensorType::get(shape, a.getElementType()));
  return success();
}

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  RankedTensorType lhs = rankedType(adaptor.getLhs());
  RankedTensorType rhs = rankedType(adaptor.getRhs());
  if (lhs.getRank() < 1 || rhs.getRank() < 1)
    return emitOptionalError(loc, "operands must have rank 1 or more");
  if (failed(requireSameElementType(loc, {lhs, rhs})))
    return failure();
  // Numpy: a vector operand is promoted to a matrix and the promoted axis is
  // dropped from the result.
  SmallVector<int64_t> l(lhs.getShape()), r(rhs.getShape());
  bool lhsVector = l.size() == 1, rhsVector = r.size() == 1;
  if (lhsVector)
    l.insert(l.begin(), 1);
  if (rhsVector)
    r.push_back(1);
  if (l.back() != r[r.size() - 2])
    return emitOptionalError(loc, "inner dimensions differ: ", l.back(),
                             " and ", r[r.size() - 2]);
  FailureOr<SmallVector<int64_t>> batch =
      broadcastShapes(ArrayRef(l).drop_back(2), ArrayRef(r).drop_back(2));
  if (failed(batch))
    return emitOptionalError(loc, "batch dimensions do not broadcast");
  SmallVector<int64_t> shape = *batch;
  if (!lhsVector)
    shape.push_back(l[l.size() - 2]);
  if (!rhsVector)
    shape.push_back(r.back());
  types.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

static LogicalResult inferBroadcast(std::optional<Location> loc, Value lhsValue,
                                    Value rhsValue,
                                    SmallVectorImpl<Type> &types) {
  RankedTensorType lhs = rankedType(lhsValue);
  RankedTensorType rhs = rankedType(rhsValue);
  if (failed(requireSameElementType(loc, {lhs, rhs})))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return emitOptionalError(loc, "shapes ", shapeString(lhs.getShape()),
                             " and ", shapeString(rhs.getShape()),
                             " do not broadcast");
  types.push_back(RankedTensorType::get(*shape, lhs.getElementType()));
  return success();
}

#define TRAIN_BROADCAST_SHAPE_FUNCTION(OP)                                     \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &types) {                                          \
    return inferBroadcast(loc, adaptor.getLhs(), adaptor.getRhs(), types);     \
  }
TRAIN_BROADCAST_SHAPE_FUNCTION(AddOp)
TRAIN_BROADCAST_SHAPE_FUNCTION(SubOp)
TRAIN_BROADCAST_SHAPE_FUNCTION(MulOp)
TRAIN_BROADCAST_SHAPE_FUNCTION(DivOp)
TRAIN_BROADCAST_SHAPE_FUNCTION(MaximumOp)
TRAIN_BROADCAST_SHAPE_FUNCTION(MinimumOp)
#undef TRAIN_BROADCAST_SHAPE_FUNCTION

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  if (failed(inferBroadcast(loc, adaptor.getLhs(), adaptor.getRhs(), types)))
    return failure();
  types.back() = cast<RankedTensorType>(types.back())
                     .clone(IntegerType::get(context, 1));
  return success();
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  if (failed(inferBroadcast(loc, adaptor.getTrueValue(),
                            adaptor.getFalseValue(), types)))
    return failure();
  auto values = cast<RankedTensorType>(types.back());
  ArrayRef<int64_t> condition =
      rankedType(adaptor.getCondition()).getShape();
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(condition, values.getShape());
  if (failed(shape))
    return emitOptionalError(loc, "condition shape ", shapeString(condition),
                             " does not broadcast with ",
                             shapeString(values.getShape()));
  types.back() = values.clone(*shape);
  return success();
}

LogicalResult ClipOp::verify() {
  if (getMin() && getMax() &&
      getMin()->convertToFloat() > getMax()->convertToFloat())
    return emitOpError("min ") << getMin()->convertToFloat() << " exceeds max "
                               << getMax()->convertToFloat();
  return success();
}

LogicalResult DropoutOp::verify() {
  float ratio = getRatio().convertToFloat();
  if (!(ratio >= 0.0f && ratio < 1.0f))
    return emitOpError("ratio must be in [0, 1), got ") << ratio;
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return requireAxis(*this, getAxis(), getType().getRank());
}

LogicalResult LogSoftmaxOp::verify() {
  return requireAxis(*this, getAxis(), getType().getRank());
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>> traincc::train::inferPoolShape(
    std::optional<Location> loc, RankedTensorType input,
    ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
    ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations, bool ceilMode) {
  if (input.getRank() < 3) {
    (void)emitOptionalError(loc, "input must have rank 3 or more, got ",
                            input);
    return failure();
  }
  if (failed(verifyWindowAttrs(loc, input.getRank() - 2, kernel, strides,
                               pads, dilations)) ||
      failed(verifyPoolPads(loc, kernel, pads, dilations)))
    return failure();
  return windowedShape(loc, input, input.getDimSize(1), kernel, strides, pads,
                       dilations, ceilMode);
}

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  FailureOr<SmallVector<int64_t>> shape = inferPoolShape(
      loc, input, adaptor.getKernelShape(), adaptor.getStrides(),
      adaptor.getPads(), adaptor.getDilations(), adaptor.getCeilMode());
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, input.getElementType()));
  return success();
}

LogicalResult AvgPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  SmallVector<int64_t> dilations(std::max<int64_t>(input.getRank() - 2, 0), 1);
  FailureOr<SmallVector<int64_t>> shape =
      inferPoolShape(loc, input, adaptor.getKernelShape(),
                     adaptor.getStrides(), adaptor.getPads(), dilations,
                     adaptor.getCeilMode());
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, input.getElementType()));
  return success();
}

LogicalResult GlobalAvgPoolOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  if (input.getRank() < 3)
    return emitOptionalError(loc, "input must have rank 3 or more, got ",
                             input);
  SmallVector<int64_t> shape(input.getShape());
  std::fill(shape.begin() + 2, shape.end(), 1);
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult
traincc::train::verifyKeptDimsReduction(Operation *op, RankedTensorType input,
                                        RankedTensorType reduced) {
  if (input.getElementType() != reduced.getElementType())
    return op->emitOpError("element type changes");
  if (input.getRank() != reduced.getRank())
    return op->emitOpError("reduced type ")
           << reduced << " does not have the rank of " << input;
  for (auto [in, out] : llvm::zip(input.getShape(), reduced.getShape()))
    if (out != in && out != 1)
      return op->emitOpError("reduced type ")
             << reduced << " is not " << input
             << " with some axes reduced to size 1";
  return success();
}

LogicalResult ReduceMaxOp::verify() {
  return verifyKeptDimsReduction(*this, getInput().getType(), getType());
}

OpFoldResult ReduceMaxOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  RankedTensorType input = getInput().getType();
  RankedTensorType result = getType();
  if (input.getElementType() != result.getElementType())
    return emitOpError("element type changes from ")
           << input.getElementType() << " to " << result.getElementType();
  if (input.getNumElements() != result.getNumElements())
    return emitOpError("cannot reshape ")
           << input.getNumElements() << " elements into "
           << shapeString(result.getShape()) << " (" << result.getNumElements()
           << " elements)";
  return success();
}

LogicalResult FlattenOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis > input.getRank())
    return emitOptionalError(loc, "axis ", axis, " is out of range [0, ",
                             input.getRank(), "]");
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < input.getRank(); ++i)
    (i < axis ? outer : inner) *= input.getDimSize(i);
  types.push_back(
      RankedTensorType::get({outer, inner}, input.getElementType()));
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  SmallVector<bool> seen(input.getRank(), false);
  if (static_cast<int64_t>(perm.size()) != input.getRank())
    return emitOptionalError(loc, "perm has ", perm.size(),
                             " entries for rank ", input.getRank());
  SmallVector<int64_t> shape;
  for (int64_t axis : perm) {
    if (axis < 0 || axis >= input.getRank() || seen[axis])
      return emitOptionalError(loc, "perm ", shapeString(perm),
                               " is not a permutation of the axes");
    seen[axis] = true;
    shape.push_back(input.getDimSize(axis));
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  if (adaptor.getInputs().empty())
    return emitOptionalError(loc, "needs at least one input");
  RankedTensorType first = rankedType(adaptor.getInputs().front());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= first.getRank())
    return emitOptionalError(loc, "axis ", axis, " is out of range for rank ",
                             first.getRank());
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (Value input : adaptor.getInputs()) {
    RankedTensorType type = rankedType(input);
    if (type.getElementType() != first.getElementType() ||
        type.getRank() != first.getRank())
      return emitOptionalError(loc, "inputs ", first, " and ", type,
                               " differ in rank or element type");
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (i != axis && type.getDimSize(i) != first.getDimSize(i))
        return emitOptionalError(loc, "inputs ", first, " and ", type,
                                 " differ off the concatenation axis");
    shape[axis] += type.getDimSize(axis);
  }
  types.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

FailureOr<SmallVector<int64_t>>
traincc::train::inferGatherShape(std::optional<Location> loc,
                                 ArrayRef<int64_t> data,
                                 ArrayRef<int64_t> indices, int64_t axis) {
  int64_t rank = data.size();
  if (axis < 0 || axis >= rank)
    return emitOptionalError(loc, "axis ", axis, " is out of range for rank ",
                             rank);
  SmallVector<int64_t> shape(data.take_front(axis));
  llvm::append_range(shape, indices);
  llvm::append_range(shape, data.drop_front(axis + 1));
  return shape;
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  RankedTensorType data = rankedType(adaptor.getData());
  FailureOr<SmallVector<int64_t>> shape = inferGatherShape(
      loc, data.getShape(), rankedType(adaptor.getIndices()).getShape(),
      adaptor.getAxis());
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, data.getElementType()));
  return success();
}

FailureOr<SmallVector<int64_t>> traincc::train::inferSliceShape(
    std::optional<Location> loc, RankedTensorType input,
    ArrayRef<int64_t> starts, ArrayRef<int64_t> ends,
    ArrayRef<int64_t> steps) {
  int64_t rank = input.getRank();
  if (static_cast<int64_t>(starts.size()) != rank ||
      static_cast<int64_t>(ends.size()) != rank ||
      static_cast<int64_t>(steps.size()) != rank) {
    (void)emitOptionalError(loc, "starts, ends and steps need ", rank,
                            " entries each");
    return failure();
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t dim = input.getDimSize(i);
    if (steps[i] == 0) {
      (void)emitOptionalError(loc, "step of axis ", i, " is zero");
      return failure();
    }
    // An empty axis takes start 0 (and yields nothing).
    if (starts[i] < 0 || starts[i] >= std::max<int64_t>(dim, 1)) {
      (void)emitOptionalError(loc, "start ", starts[i], " of axis ", i,
                              " is outside [0, ", std::max<int64_t>(dim, 1),
                              ")");
      return failure();
    }
    if (ends[i] < -1 || ends[i] > dim) {
      (void)emitOptionalError(loc, "end ", ends[i], " of axis ", i,
                              " is outside [-1, ", dim, "]");
      return failure();
    }
    int64_t distance = steps[i] > 0 ? ends[i] - starts[i] : starts[i] - ends[i];
    int64_t step = std::abs(steps[i]);
    shape.push_back(std::max<int64_t>(0, (distance + step - 1) / step));
  }
  return shape;
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  FailureOr<SmallVector<int64_t>> shape =
      inferSliceShape(loc, input, adaptor.getStarts(), adaptor.getEnds(),
                      adaptor.getSteps());
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, input.getElementType()));
  return success();
}

/// The reduction prints as a bare word: `reduction mean`.
static ParseResult parseReduction(OpAsmParser &parser,
                                  ReductionAttr &reduction) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef word;
  if (parser.parseKeyword(&word))
    return failure();
  std::optional<Reduction> value = symbolizeReduction(word);
  if (!value)
    return parser.emitError(loc, "expected 'mean' or 'none', got '")
           << word << "'";
  reduction = ReductionAttr::get(parser.getContext(), *value);
  return success();
}

static void printReduction(OpAsmPrinter &printer, Operation *,
                           ReductionAttr reduction) {
  printer << stringifyReduction(reduction.getValue());
}

#define GET_OP_CLASSES
#include "traincc/Dialect/Train/IR/TrainOps.cpp.inc"
