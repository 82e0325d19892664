//===- LinalgBuilders.h - small linalg/tensor IR builders -------*- C++ -*-===//
//
// The pieces of linalg/tensor IR that many lowerings build: constants and
// fills, float conversions, broadcasting elementwise generics, sums over
// axes, padding and reshapes. Shared by the Train -> linalg patterns and the
// state lowering, so that every lowering rounds and accumulates alike.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_CODEGEN_COMMON_LINALGBUILDERS_H
#define TRAINCC_CODEGEN_COMMON_LINALGBUILDERS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace traincc::codegen {

/// Body of an elementwise `linalg.generic`: the scalar operands in, the
/// scalar result out.
using ScalarBodyFn = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// The static type of a ranked tensor value.
mlir::RankedTensorType tensorType(mlir::Value value);

/// The type sums and products accumulate in: f32 for f16 and bf16 (one
/// rounding at the end instead of one per term), the element type otherwise.
mlir::Type accumulatorType(mlir::Type elementType);

/// A float constant of `type` (rounded to it) inside a builder's block.
mlir::Value floatConstant(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Type type, double value);

/// An `arith.constant` tensor of `type` (float elements) holding `values`,
/// each rounded to the nearest element value (ties to even).
mlir::Value floatTensorConstant(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::RankedTensorType type,
                                llvm::ArrayRef<double> values);

/// -inf of a float type.
mlir::TypedAttr negativeInfinity(mlir::Type type);

/// Converts a float scalar to another float type (extf/truncf).
mlir::Value convertFloat(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value value, mlir::Type to);

/// A tensor of `shape` filled with `value`.
mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc,
                         llvm::ArrayRef<int64_t> shape, mlir::TypedAttr value);

/// A tensor of `shape` x `elementType` (a float type) filled with zeros.
mlir::Value zeroTensor(mlir::OpBuilder &b, mlir::Location loc,
                       llvm::ArrayRef<int64_t> shape, mlir::Type elementType);

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

/// Like `buildElementwise`, with every scalar operand first extended to
/// `accType` and the result of `body` converted to `resultElement`: the
/// arithmetic of f16/bf16 tensors happens in f32 and rounds once.
mlir::Value buildWidenedElementwise(mlir::OpBuilder &b, mlir::Location loc,
                                    mlir::ValueRange inputs,
                                    llvm::ArrayRef<int64_t> resultShape,
                                    mlir::Type accType,
                                    mlir::Type resultElement,
                                    ScalarBodyFn body);

/// A parallel `linalg.generic` over `shape` whose operands are read through
/// `maps` (the result through the identity); `body` computes each element.
mlir::Value buildPointwise(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::ValueRange inputs,
                           llvm::ArrayRef<mlir::AffineMap> maps,
                           llvm::ArrayRef<int64_t> shape, mlir::Type element,
                           ScalarBodyFn body);

/// The map of an operand that holds one value per channel (axis 1) of a
/// rank-`rank` iteration space.
mlir::AffineMap channelMap(int64_t rank, mlir::MLIRContext *context);

/// The projection of a rank-`rank` iteration space onto every axis but
/// those in `axes`.
mlir::AffineMap keptAxesMap(int64_t rank, llvm::ArrayRef<int64_t> axes,
                            mlir::MLIRContext *context);

/// The iterator types of a reduction of `shape` over `axes` (reduction
/// there, parallel elsewhere) and the shape of the axes it keeps.
void reductionLoops(llvm::ArrayRef<int64_t> shape,
                    llvm::ArrayRef<int64_t> axes,
                    llvm::SmallVectorImpl<mlir::utils::IteratorType> &iterators,
                    llvm::SmallVectorImpl<int64_t> &keptShape);

/// Sums `term(operand scalars)` over the `axes` of the iteration space
/// `shape` (operands read through `maps`) into a zero-initialised
/// `accType` tensor of the other axes.
mlir::Value sumOver(mlir::OpBuilder &b, mlir::Location loc,
                    mlir::ValueRange inputs,
                    llvm::ArrayRef<mlir::AffineMap> maps,
                    llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> axes,
                    mlir::Type accType, ScalarBodyFn term);

/// `sumOver` of one identity-indexed operand's own elements, each extended
/// to `accType`.
mlir::Value sumElements(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value input, llvm::ArrayRef<int64_t> axes,
                        mlir::Type accType);

/// The body of a contraction `linalg.generic`: yields acc + a * b with both
/// factors converted to the accumulator's type (`args` = a, b, acc).
void multiplyAccumulate(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::ValueRange args);

/// The body of a sum `linalg.generic`: yields acc + a in the accumulator's
/// type (`args` = a, further inputs that only give loops their extent, acc).
void accumulate(mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange args);

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

/// On a `linalg.generic` whose body was written for its loop order (the
/// Winograd transforms: short position loops innermost, which LLVM unrolls
/// whole): traincc-order-loops-for-vectorization leaves it alone.
constexpr llvm::StringLiteral kKeepLoopOrderAttrName =
    "traincc.keep_loop_order";
/// On a contraction whose inputs are laid out in blocks that stay cached
/// while its outer parallel loops hold still (the Winograd products):
/// traincc-vectorize-contractions does not block its reduction loop.
constexpr llvm::StringLiteral kCacheBlockedAttrName = "traincc.cache_blocked";

} // namespace traincc::codegen

#endif // TRAINCC_CODEGEN_COMMON_LINALGBUILDERS_H
