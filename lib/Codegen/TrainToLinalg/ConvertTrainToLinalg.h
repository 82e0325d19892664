//===- ConvertTrainToLinalg.h - Train -> linalg patterns -------*- C++ -*-===//
//
// The entry points that add each family's patterns, one file each, and the
// pattern shape that several families share; the IR builders they share are
// in traincc/Codegen/Common/LinalgBuilders.h.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_LIB_CODEGEN_TRAINTOLINALG_CONVERTTRAINTOLINALG_H
#define TRAINCC_LIB_CODEGEN_TRAINTOLINALG_CONVERTTRAINTOLINALG_H

#include "traincc/Codegen/Common/LinalgBuilders.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace traincc::codegen {

/// Lowers `TrainOp` to one elementwise `linalg.generic` over its result type
/// that reads every operand (numpy broadcasting in the indexing maps) and
/// computes each element as `Derived::build(b, loc, op, scalars)`: the unary
/// and binary forward ops and the activation gradients.
template <typename Derived, typename TrainOp>
struct ElementwiseLowering : mlir::OpConversionPattern<TrainOp> {
  using mlir::OpConversionPattern<TrainOp>::OpConversionPattern;
  using OpAdaptor = typename TrainOp::Adaptor;

  mlir::LogicalResult
  matchAndRewrite(TrainOp op, OpAdaptor adaptor,
                  mlir::ConversionPatternRewriter &rewriter) const override {
    auto type = mlir::cast<mlir::RankedTensorType>(op.getType());
    rewriter.replaceOp(
        op, buildElementwise(rewriter, op.getLoc(), adaptor.getOperands(),
                             type.getShape(), type.getElementType(),
                             [&](mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::ValueRange args) -> mlir::Value {
                               return Derived::build(b, loc, op, args);
                             }));
    return mlir::success();
  }
};

// Pattern families, one file each.
void populateLinearAlgebraPatterns(mlir::RewritePatternSet &patterns);
void populateElementwisePatterns(mlir::RewritePatternSet &patterns);
void populatePoolingPatterns(mlir::RewritePatternSet &patterns);
void populateDataMovementPatterns(mlir::RewritePatternSet &patterns);
/// Losses, reductions, activation and BatchNorm gradients, dropout masks.
void populateGradientPatterns(mlir::RewritePatternSet &patterns);
/// Gradients of convolution and pooling.
void populateWindowGradientPatterns(mlir::RewritePatternSet &patterns);
/// train.replica_count (ConvertTrainToLinalgCollectives.cpp).
void populateCollectivePatterns(mlir::RewritePatternSet &patterns);

/// `values` (a rank-1 f32 tensor) averaged over the data-parallel replicas
/// that synchronise BatchNorm: a call to the trainer runtime's
/// traincc_replica_mean on a copy, at `anchor`'s place in its module.
mlir::Value replicaMean(mlir::OpBuilder &builder, mlir::Operation *anchor,
                        mlir::Value values);

} // namespace traincc::codegen

#endif // TRAINCC_LIB_CODEGEN_TRAINTOLINALG_CONVERTTRAINTOLINALG_H
