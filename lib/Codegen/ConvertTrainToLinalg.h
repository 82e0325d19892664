//===- ConvertTrainToLinalg.h - Train -> linalg helpers ---------*- C++ -*-===//
//
// Shared by the per-family lowering files: builders for the small pieces of
// linalg/tensor IR that many lowerings need, and the entry points that add
// each family's patterns.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_LIB_CODEGEN_CONVERTTRAINTOLINALG_H
#define TRAINCC_LIB_CODEGEN_CONVERTTRAINTOLINALG_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

namespace traincc::codegen {

/// Body of an elementwise `linalg.generic`: the scalar operands in, the
/// scalar result out.
using ScalarBodyFn = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// The type sums and products accumulate in: f32 for f16 and bf16 (one
/// rounding at the end instead of one per term), the element type otherwise.
mlir::Type accumulatorType(mlir::Type elementType);

/// A float constant of `type` (rounded to it) inside a builder's block.
mlir::Value floatConstant(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Type type, double value);

/// -inf of a float type.
mlir::TypedAttr negativeInfinity(mlir::Type type);

/// Converts a float scalar to another float type (extf/truncf).
mlir::Value convertFloat(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value value, mlir::Type to);

/// A tensor of `shape` filled with `value`.
mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc,
                         llvm::ArrayRef<int64_t> shape, mlir::TypedAttr value);

/// The indexing map that reads an operand of `operandShape` at every point
/// of an iteration space of `resultShape` under numpy broadcasting: operand
/// axes align with the trailing result axes, and a size-1 axis that the
/// result widens is read at index 0.
mlir::AffineMap broadcastMap(llvm::ArrayRef<int64_t> operandShape,
                             llvm::ArrayRef<int64_t> resultShape,
                             mlir::MLIRContext *context);

/// A `linalg.generic` producing a tensor of `resultShape` x `resultElement`,
/// each element computed by `body` from the broadcast elements of `inputs`.
mlir::Value buildElementwise(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::ValueRange inputs,
                             llvm::ArrayRef<int64_t> resultShape,
                             mlir::Type resultElement, ScalarBodyFn body);

/// `value` with its elements converted to `elementType` (itself when they
/// already are).
mlir::Value convertElementType(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Value value, mlir::Type elementType);

/// `input` padded with `padValue` by `low`/`high` elements per axis (itself
/// when every pad is zero).
mlir::Value padTensor(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                      llvm::ArrayRef<int64_t> low, llvm::ArrayRef<int64_t> high,
                      mlir::TypedAttr padValue);

/// `input` under the static shape of `resultType`: a collapse_shape of each
/// block of axes the two shapes have in common, then an expand_shape into the
/// result's axes (either alone where it suffices); tensor.reshape with a
/// constant shape only where blocks are not defined (zero-size axes).
mlir::Value reshapeTensor(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value input, mlir::RankedTensorType resultType);

/// Iterator types: `parallel` parallel loops, then `reduction` reductions.
llvm::SmallVector<mlir::utils::IteratorType>
iteratorTypes(unsigned parallel, unsigned reduction = 0);

// Pattern families, one file each.
void populateLinearAlgebraPatterns(mlir::RewritePatternSet &patterns);
void populateElementwisePatterns(mlir::RewritePatternSet &patterns);
void populatePoolingPatterns(mlir::RewritePatternSet &patterns);
void populateDataMovementPatterns(mlir::RewritePatternSet &patterns);
/// Losses, reductions, activation and BatchNorm gradients, dropout masks.
void populateGradientPatterns(mlir::RewritePatternSet &patterns);
/// Gradients of convolution and pooling.
void populateWindowGradientPatterns(mlir::RewritePatternSet &patterns);

} // namespace traincc::codegen

#endif // TRAINCC_LIB_CODEGEN_CONVERTTRAINTOLINALG_H
