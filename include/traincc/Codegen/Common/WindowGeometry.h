//===- WindowGeometry.h - geometry of convolution and pooling ---*- C++ -*-===//
//
// Convolution, pooling and their gradients all read N x C x spatial...
// tensors through windows: output position o of axis i reads input
// o * stride + k * dilation - pad_begin for each kernel offset k. The
// forward lowerings, the data and filter gradients of convolution and the
// pooling gradients derive their pads, indexing maps and grouped views from
// this one description, so that they agree on every edge case (ceil mode,
// windows that stop short of the end padding, groups).
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_CODEGEN_COMMON_WINDOWGEOMETRY_H
#define TRAINCC_CODEGEN_COMMON_WINDOWGEOMETRY_H

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace traincc::codegen {

/// The spatial geometry of a window op: forward input and output sizes,
/// kernel, strides, dilations and pads of each spatial axis.
struct WindowGeometry {
  llvm::SmallVector<int64_t> input, output, kernel, strides, dilations,
      padBegin, padEnd;

  /// From the forward op's full N x C x spatial... input and output shapes
  /// and its attributes (`pads`: every begin pad, then every end pad).
  WindowGeometry(llvm::ArrayRef<int64_t> inputShape,
                 llvm::ArrayRef<int64_t> outputShape,
                 llvm::ArrayRef<int64_t> kernel,
                 llvm::ArrayRef<int64_t> strides,
                 llvm::ArrayRef<int64_t> dilations,
                 llvm::ArrayRef<int64_t> pads);

  int64_t spatial() const { return kernel.size(); }
  /// (kernel - 1) * dilation: how far a window reaches past its start.
  int64_t span(int64_t i) const { return (kernel[i] - 1) * dilations[i]; }
  /// Length of the spread layout along axis i.
  int64_t spreadSize(int64_t i) const { return input[i] + span(i); }
  /// Where output position 0 lands in the spread layout.
  int64_t spreadOffset(int64_t i) const { return span(i) - padBegin[i]; }
  /// End padding that makes every window of the forward op in bounds (the
  /// op's own, or more in ceil mode; less where the windows stop short of
  /// it).
  int64_t reachPad(int64_t i) const;

  /// Low and high pads of the whole input (none on N and C) by the op's own
  /// pads, as a convolution reads it.
  void ownPads(llvm::SmallVectorImpl<int64_t> &low,
               llvm::SmallVectorImpl<int64_t> &high) const;
  /// Low and high pads of the whole input that keep every window in bounds:
  /// the begin pads and `reachPad`, as pooling reads it (the ceil-mode
  /// overhang is padding too).
  void reachPads(llvm::SmallVectorImpl<int64_t> &low,
                 llvm::SmallVectorImpl<int64_t> &high) const;

  /// How many elements window `o` of axis `i` averages: the real input
  /// elements in it, or with `countIncludePad` the window clipped to the
  /// padded input (PyTorch's rule; the ceil-mode overhang never counts).
  int64_t windowCount(int64_t i, int64_t o, bool countIncludePad) const;

  /// The input position that output loop `o` and kernel loop `k` read
  /// along axis `i` in the padded input: o * stride + k * dilation.
  mlir::AffineExpr windowRead(mlir::AffineExpr o, mlir::AffineExpr k,
                              int64_t i) const;
  /// The position of the spread layout that input loop `x` gathers from
  /// for kernel loop `k` along axis `i`: x + (kernel - 1 - k) * dilation.
  mlir::AffineExpr flippedRead(mlir::AffineExpr x, mlir::AffineExpr k,
                               int64_t i) const;

  /// The indexing maps of a pooling-style window reduction over loops
  /// n, c, o... (parallel), k... (reduction): the padded input at
  /// `windowRead`, a kernel-shaped operand at k..., the output at o... .
  llvm::SmallVector<mlir::AffineMap, 3>
  windowReductionMaps(mlir::MLIRContext *context) const;
};

/// `type` with axis `axis` split into groups x size / groups.
mlir::RankedTensorType splitGroups(mlir::RankedTensorType type, int64_t axis,
                                   int64_t groups);

/// Reassociation splitting axis `axis` of a rank-`rank` tensor in two.
llvm::SmallVector<mlir::ReassociationIndices> splitAxis(int64_t rank,
                                                        int64_t axis);

/// The scalar body of a contraction `linalg.generic` (inputs, then the
/// accumulator).
using ContractionBodyFn = llvm::function_ref<void(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// The `linalg.generic` of a grouped convolution or one of its gradients on
/// grouped views: 3 + spatial parallel loops, then 1 + spatial reduction
/// loops, `lhs` and `rhs` read and `init` updated through the expressions
/// of those loops, each term computed by `body`.
mlir::Value buildGroupedContraction(mlir::OpBuilder &b, mlir::Location loc,
                                    mlir::Value lhs, mlir::Value rhs,
                                    mlir::Value init, int64_t spatial,
                                    llvm::ArrayRef<mlir::AffineExpr> lhsExprs,
                                    llvm::ArrayRef<mlir::AffineExpr> rhsExprs,
                                    llvm::ArrayRef<mlir::AffineExpr> outExprs,
                                    ContractionBodyFn body);

} // namespace traincc::codegen

#endif // TRAINCC_CODEGEN_COMMON_WINDOWGEOMETRY_H
