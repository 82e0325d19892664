//===- LegalizeUtils.h - helpers shared by the ONNX handlers ----*- C++ -*-===//
//
// Internal to the second import stage: input checks that name what is wrong,
// builders that turn a failed shape function into a diagnostic on the node
// (the generated inferring builders would abort), and the constant folding
// of the integer shape sub-graphs PyTorch exports.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_LIB_IMPORT_ONNX_LEGALIZEUTILS_H
#define TRAINCC_LIB_IMPORT_ONNX_LEGALIZEUTILS_H

#include "LegalizeONNX.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"


namespace traincc::onnx_import {

//===----------------------------------------------------------------------===//
// Inputs, outputs and results
//===----------------------------------------------------------------------===//

/// Element types the Train ops' float operands accept.
bool isFloatElementType(mlir::Type type);
/// Element types a Train tensor (and so a train.constant) may hold.
bool isTrainElementType(mlir::Type type);

/// Input `index` (called `what` in diagnostics) as a float tensor of static
/// shape; an error on `node` when it is missing or of another type.
mlir::FailureOr<mlir::Value> getFloatInput(const ONNXNode &node, unsigned index,
                                           llvm::StringRef what);

/// Input `index` as a ranked tensor type of static shape, whatever its
/// element type; an error on `node` otherwise.
mlir::FailureOr<mlir::RankedTensorType>
getStaticInputType(const ONNXNode &node, unsigned index, llvm::StringRef what);

/// Fails with "output N (NAME) is used but not supported" when one of the
/// outputs from `first` on has a user; `names` names them in order.
mlir::LogicalResult requireUnusedOutputs(const ONNXNode &node, unsigned first,
                                         llvm::ArrayRef<llvm::StringRef> names);

/// Replaces the node's first result by `value` and erases the node (and
/// constants that fed only it). Fails when another output is used or when
/// the declared result type is static and differs from `value`'s.
mlir::LogicalResult finishNode(const ONNXNode &node,
                               mlir::RewriterBase &rewriter, mlir::Value value);

/// Reads an attribute that exists only from opset `since` on; an error when
/// an older model carries it.
mlir::LogicalResult rejectAttrBefore(const ONNXNode &node, llvm::StringRef name,
                                     int64_t since);

namespace detail {
/// Runs `infer`, turning the diagnostic of a failed shape function into an
/// error on `node`.
mlir::LogicalResult
inferWithNodeDiagnostic(const ONNXNode &node,
                        llvm::function_ref<mlir::LogicalResult()> infer);
} // namespace detail

/// Creates an op whose result type comes from its shape function; when the
/// shape function rejects the operands, its reason becomes an error on
/// `node` instead of an abort. `args` are those of the op's builder without
/// the result type.
template <typename OpTy, typename... Args>
mlir::FailureOr<mlir::Value> createInferred(const ONNXNode &node,
                                            mlir::RewriterBase &rewriter,
                                            Args &&...args) {
  mlir::MLIRContext *context = rewriter.getContext();
  mlir::OperationState state(node.getLoc(), OpTy::getOperationName());
  OpTy::build(rewriter, state, mlir::Type(), std::forward<Args>(args)...);
  state.types.clear();
  llvm::SmallVector<mlir::Type, 1> types;
  if (mlir::failed(detail::inferWithNodeDiagnostic(node, [&] {
        return OpTy::inferReturnTypes(context, node.getLoc(), state.operands,
                                      state.attributes.getDictionary(context),
                                      state.getRawProperties(), state.regions,
                                      types);
      })))
    return mlir::failure();
  state.addTypes(types);
  return rewriter.create(state)->getResult(0);
}

//===----------------------------------------------------------------------===//
// Constants and folding
//===----------------------------------------------------------------------===//

/// Largest tensor a fold may materialise; shape sub-graphs are tiny, and a
/// hostile model must not turn a fold into a huge allocation.
constexpr int64_t kMaxFoldedElements = int64_t(1) << 22;

/// Largest rank a handler creates; real models stay far below it, and a
/// hostile one must not build huge shapes.
constexpr int64_t kMaxRank = 32;

/// Fails with a diagnostic when a result of rank `rank` would exceed
/// kMaxRank.
mlir::LogicalResult checkRank(const ONNXNode &node, int64_t rank);

/// Fails with a diagnostic when a folded result would hold more than
/// kMaxFoldedElements elements or exceed kMaxRank.
mlir::LogicalResult checkFoldSize(const ONNXNode &node,
                                  llvm::ArrayRef<int64_t> shape);

/// Creates a train.constant; an error when its element type is not one a
/// Train tensor may hold.
mlir::FailureOr<mlir::Value> createNodeConstant(const ONNXNode &node,
                                                mlir::RewriterBase &rewriter,
                                                mlir::DenseElementsAttr value);

/// Replaces the node by a constant folded from `value`.
mlir::LogicalResult finishWithConstant(const ONNXNode &node,
                                       mlir::RewriterBase &rewriter,
                                       mlir::DenseElementsAttr value);

/// The node's inputs that are constants, in order: all of them when a
/// variadic node (Concat, Max, Min) can fold.
llvm::SmallVector<mlir::DenseElementsAttr>
getConstantInputs(const ONNXNode &node);

/// The first `count` inputs of a node that folds on constants only (Equal,
/// Where, Expand, Mod, Not, ...); an error naming the first computed one.
mlir::FailureOr<llvm::SmallVector<mlir::DenseElementsAttr>>
requireConstantInputs(const ONNXNode &node, unsigned count);

/// Two constants of one element type broadcast together: the result shape
/// and, for each result element, the linear index into each operand.
struct ConstantBroadcast {
  llvm::SmallVector<int64_t> shape, lhsIndices, rhsIndices;
};
/// An error when the element types differ, the shapes do not broadcast or
/// the result is too large to fold.
mlir::FailureOr<ConstantBroadcast>
broadcastConstants(const ONNXNode &node, mlir::DenseElementsAttr lhs,
                   mlir::DenseElementsAttr rhs);

/// The tensor of type `type` whose element i is `source`'s element
/// `indices[i]` (linear, row-major): the common core of every
/// data-movement fold.
mlir::DenseElementsAttr pickElements(mlir::DenseElementsAttr source,
                                     mlir::RankedTensorType type,
                                     llvm::ArrayRef<int64_t> indices);

/// For every element of a tensor of shape `to`, the linear index of the
/// element of a tensor of shape `from` that numpy broadcasting reads.
llvm::SmallVector<int64_t> broadcastIndices(llvm::ArrayRef<int64_t> from,
                                            llvm::ArrayRef<int64_t> to);

/// Folds Add, Sub, Mul, Div, Max, Min or Equal (`opType`) on two constants
/// with broadcasting; integer division truncates, as ONNX runtimes do, and
/// float Max/Min propagate NaN.
mlir::FailureOr<mlir::DenseElementsAttr>
foldBinary(const ONNXNode &node, llvm::StringRef opType,
           mlir::DenseElementsAttr lhs, mlir::DenseElementsAttr rhs);

/// The value of input `index` when it is a constant or a parameter's
/// initial value (exporters store scalar operands such as Clip bounds as
/// float initializers too), or null.
mlir::DenseElementsAttr getConstantOrInitialValue(const ONNXNode &node,
                                                  unsigned index);

/// The only element of a one-element constant as a double (float or
/// integer), or nullopt.
std::optional<double> getScalarValue(mlir::DenseElementsAttr value);

/// Converts `value` element by element to `elementType` (int <-> int by
/// sign extension or truncation, float -> int toward zero, bool as 0/1).
mlir::DenseElementsAttr convertElements(mlir::DenseElementsAttr value,
                                        mlir::Type elementType);

/// Row-major strides of `shape`.
llvm::SmallVector<int64_t> getStrides(llvm::ArrayRef<int64_t> shape);

/// Handlers for constant-producing ops of shape sub-graphs (Constant,
/// ConstantOfShape, Range, Cast, Expand, Tile); part of the shape family's
/// table.
void addConstantHandlers(HandlerTable &table);

/// Handlers for Mod, Not and ScatterND, folded on constants (the shape
/// arithmetic of swin's attention mask); part of the shape family's table.
void addShapeFoldHandlers(HandlerTable &table);

} // namespace traincc::onnx_import

#endif // TRAINCC_LIB_IMPORT_ONNX_LEGALIZEUTILS_H
