//===- TrainOps.h - Train dialect operations --------------------*- C++ -*-===//

#ifndef TRAINCC_DIALECT_TRAIN_IR_TRAINOPS_H
#define TRAINCC_DIALECT_TRAIN_IR_TRAINOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "traincc/Dialect/Train/IR/GradientOpInterface.h"
#include "traincc/Dialect/Train/IR/TrainDialect.h"
#include "traincc/Dialect/Train/IR/TrainEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "traincc/Dialect/Train/IR/TrainAttrs.h.inc"

#define GET_OP_CLASSES
#include "traincc/Dialect/Train/IR/TrainOps.h.inc"

namespace traincc::train {

/// Marks an op that the backward pass computes again instead of keeping
/// the forward value (traincc-recompute-activations); the Train to linalg
/// conversion keeps it on the linalg ops, so CSE does not merge them back.
inline constexpr llvm::StringLiteral kRecomputedAttrName = "train.recomputed";

/// True when BatchNorm statistics of element type `stat` go with an input of
/// element type `input`: the same type, or f32 for f16/bf16 (mixed
/// precision).
bool isBatchNormStatType(mlir::Type stat, mlir::Type input);

/// `shape` as diagnostics print it: `[2, 3]`.
std::string shapeString(llvm::ArrayRef<int64_t> shape);

/// Numpy broadcasting of two static shapes; failure when they are
/// incompatible.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// Output length of a pooling or convolution window along one axis.
/// `ceilMode` rounds the window count up, as ONNX pooling allows; a window
/// that would start in the end padding is dropped, as in PyTorch.
int64_t windowOutputSize(int64_t inputSize, int64_t kernel, int64_t stride,
                         int64_t padBegin, int64_t padEnd, int64_t dilation,
                         bool ceilMode);

/// Result shape of a convolution of `input` by `weight` (with a bias of
/// `biasType` unless null); failure, with a diagnostic at `loc` when given,
/// if the operands and attributes do not fit together.
mlir::FailureOr<llvm::SmallVector<int64_t>>
inferConvShape(std::optional<mlir::Location> loc, mlir::RankedTensorType input,
               mlir::RankedTensorType weight, mlir::Type biasType,
               llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> pads,
               llvm::ArrayRef<int64_t> dilations, int64_t groups);

/// Result shape of max or average pooling of `input`.
mlir::FailureOr<llvm::SmallVector<int64_t>>
inferPoolShape(std::optional<mlir::Location> loc, mlir::RankedTensorType input,
               llvm::ArrayRef<int64_t> kernel, llvm::ArrayRef<int64_t> strides,
               llvm::ArrayRef<int64_t> pads, llvm::ArrayRef<int64_t> dilations,
               bool ceilMode);

/// Result shape of a train.slice of `input`.
mlir::FailureOr<llvm::SmallVector<int64_t>>
inferSliceShape(std::optional<mlir::Location> loc, mlir::RankedTensorType input,
                llvm::ArrayRef<int64_t> starts, llvm::ArrayRef<int64_t> ends,
                llvm::ArrayRef<int64_t> steps);

/// Result shape of a train.gather of `data` at `indices` along `axis`.
mlir::FailureOr<llvm::SmallVector<int64_t>>
inferGatherShape(std::optional<mlir::Location> loc,
                 llvm::ArrayRef<int64_t> data, llvm::ArrayRef<int64_t> indices,
                 int64_t axis);

/// Checks that `reduced` is `input` with some axes reduced to size 1 (the
/// keepdims form of a reduction), of the same element type.
mlir::LogicalResult verifyKeptDimsReduction(mlir::Operation *op,
                                            mlir::RankedTensorType input,
                                            mlir::RankedTensorType reduced);

} // namespace traincc::train

#endif // TRAINCC_DIALECT_TRAIN_IR_TRAINOPS_H
