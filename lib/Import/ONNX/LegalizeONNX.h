//===- LegalizeONNX.h - per-op legalisation handlers ------------*- C++ -*-===//
//
// Internal to the second import stage. One handler per ONNX op type rewrites
// a `train.onnx_node` into Train ops; handlers are grouped by op family in
// Legalize*.cpp files, each contributing to one table.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_LIB_IMPORT_ONNX_LEGALIZEONNX_H
#define TRAINCC_LIB_IMPORT_ONNX_LEGALIZEONNX_H

#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/StringMap.h"

#include <optional>

namespace traincc::onnx_import {

/// A view of one imported ONNX node with typed accessors for its attributes
/// and optional inputs, and diagnostics that name the node.
class ONNXNode {
public:
  ONNXNode(train::ONNXNodeOp op, int64_t opset) : op(op), opset(opset) {}

  train::ONNXNodeOp getOp() const { return op; }
  mlir::Location getLoc() const { return op.getLoc(); }
  llvm::StringRef getOpType() const { return op.getOpType(); }
  llvm::StringRef getName() const { return op.getNodeName(); }
  /// The default-domain opset the model imports.
  int64_t getOpset() const { return opset; }

  /// Number of inputs written in the model, omitted optional ones included.
  unsigned getNumInputs() const { return op.getInputs().size(); }
  /// Input `index`, or a null value when it is omitted or out of range.
  mlir::Value getInput(unsigned index) const;
  /// Input `index` as a ranked tensor type, or null.
  mlir::RankedTensorType getInputType(unsigned index) const;
  /// The constant value of input `index` (train.constant, possibly behind
  /// folds), or null when it is not a constant.
  mlir::DenseElementsAttr getConstantInput(unsigned index) const;
  /// A constant integer input as int64 values.
  std::optional<llvm::SmallVector<int64_t>>
  getConstantInts(unsigned index) const;

  bool hasAttr(llvm::StringRef name) const;
  std::optional<int64_t> getInt(llvm::StringRef name) const;
  int64_t getInt(llvm::StringRef name, int64_t defaultValue) const;
  std::optional<float> getFloat(llvm::StringRef name) const;
  float getFloat(llvm::StringRef name, float defaultValue) const;
  std::optional<llvm::SmallVector<int64_t>> getInts(llvm::StringRef name) const;
  std::optional<llvm::StringRef> getString(llvm::StringRef name) const;
  /// A tensor-valued attribute (Constant's `value`).
  mlir::DenseElementsAttr getTensor(llvm::StringRef name) const;

  /// Starts an error naming this node: "node 'NAME' (TYPE): ...".
  mlir::InFlightDiagnostic emitError() const;

private:
  mutable train::ONNXNodeOp op;
  int64_t opset;
};

/// Rewrites `node` (replacing every used result). On failure the handler has
/// emitted a diagnostic through `node.emitError()`.
using LegalizeHandler = mlir::LogicalResult (*)(const ONNXNode &node,
                                                mlir::RewriterBase &rewriter);
using HandlerTable = llvm::StringMap<LegalizeHandler>;

/// Conv, ConvTranspose-free NN ops: Conv, BatchNormalization, Gemm, MatMul,
/// pooling, Dropout.
void addNNHandlers(HandlerTable &table);
/// Elementwise arithmetic and activations, Softmax/LogSoftmax.
void addElementwiseHandlers(HandlerTable &table);
/// ReduceSum, ReduceMean, ReduceMax and Pad.
void addReduceHandlers(HandlerTable &table);
/// LSTM and GRU, unrolled over the sequence into ops autodiff knows.
void addRecurrentHandlers(HandlerTable &table);
/// Exp, Log, Neg, Abs, Elu, Selu, Softplus, PRelu, Gelu and Split.
void addActivationHandlers(HandlerTable &table);
/// Einsum of one or two operands, as a batched matmul.
void addEinsumHandlers(HandlerTable &table);
/// ConvTranspose, as the input gradient of a convolution.
void addConvTransposeHandlers(HandlerTable &table);
/// LayerNormalization, InstanceNormalization and GroupNormalization, as
/// compositions of Train ops.
void addNormalizationHandlers(HandlerTable &table);
/// Equal, Less, LessOrEqual, Greater, GreaterOrEqual and Where: folded on
/// constants, train.compare and train.select on computed float data.
void addConditionalHandlers(HandlerTable &table);
/// Resize and Upsample (nearest, linear, cubic), as per-axis products with
/// constant interpolation matrices.
void addResizeHandlers(HandlerTable &table);
/// Shapes and data movement: Constant, Shape, Gather, Unsqueeze, Squeeze,
/// Concat, Reshape, Flatten, Transpose, Slice, Identity, Cast, and the
/// integer arithmetic of shape sub-graphs (folded on constants).
void addShapeHandlers(HandlerTable &table);

/// Normalises an ONNX axis in [-rank, rank) to [0, rank); failure (with a
/// diagnostic on `node`) when out of range.
mlir::FailureOr<int64_t> normalizeAxis(const ONNXNode &node, int64_t axis,
                                       int64_t rank);

/// Replaces `node`'s single result with `value`.
void replaceNode(const ONNXNode &node, mlir::RewriterBase &rewriter,
                 mlir::Value value);

/// Creates a train.constant holding `value`.
mlir::Value createConstant(mlir::RewriterBase &rewriter, mlir::Location loc,
                           mlir::DenseElementsAttr value);

} // namespace traincc::onnx_import

#endif // TRAINCC_LIB_IMPORT_ONNX_LEGALIZEONNX_H
