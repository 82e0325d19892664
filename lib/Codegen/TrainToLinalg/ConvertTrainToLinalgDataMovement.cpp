//===- ConvertTrainToLinalgDataMovement.cpp - reshape, transpose, ... -----===//
//
// Ops that move elements without computing: they become `tensor` view ops
// where one exists (reshapes, positive-step slices, insert_slice chains for
// concat), so that bufferization can often make them free, and
// `linalg.transpose` / `linalg.generic` where elements really move.
//
//===----------------------------------------------------------------------===//

#include "ConvertTrainToLinalg.h"

#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace traincc::codegen;
namespace train = traincc::train;

namespace {

/// Reshape and flatten: both only change the static shape.
template <typename TrainOp>
struct ReshapeLowering : OpConversionPattern<TrainOp> {
  using OpConversionPattern<TrainOp>::OpConversionPattern;
  using OpAdaptor = typename TrainOp::Adaptor;

  LogicalResult
  matchAndRewrite(TrainOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op,
                       reshapeTensor(rewriter, op.getLoc(), adaptor.getInput(),
                                     cast<RankedTensorType>(op.getType())));
    return success();
  }
};

struct TransposeLowering : OpConversionPattern<train::TransposeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Value init = tensor::EmptyOp::create(rewriter, op.getLoc(), type.getShape(),
                                         type.getElementType());
    // Both sides use "result axis i is input axis perm[i]".
    rewriter.replaceOp(op, linalg::TransposeOp::create(rewriter, op.getLoc(),
                                                       adaptor.getInput(), init,
                                                       op.getPerm())
                               .getResult());
    return success();
  }
};

/// Each input is inserted at its offset along `axis` into one destination.
struct ConcatLowering : OpConversionPattern<train::ConcatOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t axis = op.getAxis();
    Value result = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                           type.getElementType());
    int64_t offset = 0;
    for (Value input : adaptor.getInputs()) {
      auto inputType = cast<RankedTensorType>(input.getType());
      int64_t size = inputType.getDimSize(axis);
      if (size == 0)
        continue;
      SmallVector<OpFoldResult> offsets(type.getRank(),
                                        rewriter.getIndexAttr(0));
      offsets[axis] = rewriter.getIndexAttr(offset);
      SmallVector<OpFoldResult> sizes =
          getAsIndexOpFoldResult(rewriter.getContext(), inputType.getShape());
      SmallVector<OpFoldResult> strides(type.getRank(),
                                        rewriter.getIndexAttr(1));
      result = tensor::InsertSliceOp::create(rewriter, loc, input, result,
                                             offsets, sizes, strides);
      offset += size;
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Positive steps: one strided `tensor.extract_slice`. A negative step on any
/// axis: a `linalg.generic` that reads element start + step * i of that axis
/// (the slice cannot express reversal).
struct SliceLowering : OpConversionPattern<train::SliceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    RankedTensorType type = op.getType();
    ArrayRef<int64_t> starts = op.getStarts(), steps = op.getSteps();
    if (type.getNumElements() == 0) {
      rewriter.replaceOpWithNewOp<tensor::EmptyOp>(op, type.getShape(),
                                                   type.getElementType());
      return success();
    }
    if (llvm::all_of(steps, [](int64_t step) { return step > 0; })) {
      rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
          op, type, adaptor.getInput(), getAsIndexOpFoldResult(context, starts),
          getAsIndexOpFoldResult(context, type.getShape()),
          getAsIndexOpFoldResult(context, steps));
      return success();
    }
    int64_t rank = type.getRank();
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < rank; ++i)
      exprs.push_back(getAffineDimExpr(i, context) * steps[i] + starts[i]);
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                         type.getElementType());
    Value result = linalg::GenericOp::create(
                       rewriter, loc, TypeRange{type},
                       ValueRange{adaptor.getInput()}, ValueRange{init},
                       ArrayRef<AffineMap>{
                           AffineMap::get(rank, 0, exprs, context),
                           AffineMap::getMultiDimIdentityMap(rank, context)},
                       iteratorTypes(rank),
                       [](OpBuilder &b, Location nloc, ValueRange args) {
                         linalg::YieldOp::create(b, nloc, args[0]);
                       })
                       .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void traincc::codegen::populateDataMovementPatterns(
    RewritePatternSet &patterns) {
  patterns
      .add<ReshapeLowering<train::ReshapeOp>, ReshapeLowering<train::FlattenOp>,
           TransposeLowering, ConcatLowering, SliceLowering>(
          patterns.getContext());
}
