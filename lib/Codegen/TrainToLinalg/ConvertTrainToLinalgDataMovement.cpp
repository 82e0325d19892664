//===- ConvertTrainToLinalgDataMovement.cpp - reshape, transpose, ... -----===//
//
// Ops that move elements without computing: they become `tensor` view ops
// where one exists (reshapes, positive-step slices, insert_slice chains for
// concat), so that bufferization can often make them free, and
// `linalg.transpose` / `linalg.generic` where elements really move.
// Gather reads its run-time index in the body of a `linalg.generic`
// (tensor.extract); its gradient, a scatter-add, is a reduction over the
// index positions, so that it stays one race-free generic on every target.
//
//===----------------------------------------------------------------------===//

#include "ConvertTrainToLinalg.h"

#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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

/// A gather index as an `index` in [0, dim): negative ones count from the
/// end, and out-of-range ones are clamped.
Value normalizeIndex(OpBuilder &b, Location loc, Value raw, int64_t dim) {
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value size = arith::ConstantIndexOp::create(b, loc, dim);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index, zero);
  index = arith::SelectOp::create(
      b, loc, negative, arith::AddIOp::create(b, loc, index, size), index);
  index = arith::MaxSIOp::create(b, loc, index, zero);
  return arith::MinSIOp::create(
      b, loc, index, arith::ConstantIndexOp::create(b, loc, dim - 1));
}

/// The map from loops [0, count) onto the dims `first`, `first` + 1, ...
AffineMap dimRangeMap(unsigned loops, unsigned first, unsigned count,
                      MLIRContext *context) {
  SmallVector<AffineExpr> exprs;
  for (unsigned i = 0; i < count; ++i)
    exprs.push_back(getAffineDimExpr(first + i, context));
  return AffineMap::get(loops, 0, exprs, context);
}

struct GatherLowering : OpConversionPattern<train::GatherOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    RankedTensorType type = op.getType();
    RankedTensorType data = op.getData().getType();
    int64_t axis = op.getAxis();
    int64_t count = op.getIndices().getType().getRank();
    int64_t rank = type.getRank();
    if (type.getNumElements() == 0 || data.getDimSize(axis) == 0) {
      rewriter.replaceOp(op, zeroTensor(rewriter, loc, type.getShape(),
                                        type.getElementType()));
      return success();
    }
    Value table = adaptor.getData();
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                         type.getElementType());
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{type}, ValueRange{adaptor.getIndices()},
            ValueRange{init},
            ArrayRef<AffineMap>{
                dimRangeMap(rank, axis, count, context),
                AffineMap::getMultiDimIdentityMap(rank, context)},
            iteratorTypes(rank),
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              SmallVector<Value> coords;
              for (int64_t i = 0; i < axis; ++i)
                coords.push_back(linalg::IndexOp::create(b, nloc, i));
              coords.push_back(
                  normalizeIndex(b, nloc, args[0], data.getDimSize(axis)));
              for (int64_t i = axis + 1; i < data.getRank(); ++i)
                coords.push_back(
                    linalg::IndexOp::create(b, nloc, i + count - 1));
              linalg::YieldOp::create(
                  b, nloc,
                  tensor::ExtractOp::create(b, nloc, table, coords)
                      .getResult());
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Loops over the data's axes (parallel) and the index positions
/// (reduction): each data element sums the gradient at the positions whose
/// index is its own, in the accumulator type.
struct GatherBackwardLowering : OpConversionPattern<train::GatherBackwardOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::GatherBackwardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    Type accType = accumulatorType(element);
    int64_t axis = op.getAxis();
    int64_t rank = type.getRank();
    int64_t count = op.getIndices().getType().getRank();
    int64_t loops = rank + count;
    if (type.getNumElements() == 0 ||
        op.getGrad().getType().getNumElements() == 0) {
      rewriter.replaceOp(op,
                         zeroTensor(rewriter, loc, type.getShape(), element));
      return success();
    }
    SmallVector<AffineExpr> gradExprs;
    for (int64_t i = 0; i < axis; ++i)
      gradExprs.push_back(getAffineDimExpr(i, context));
    for (int64_t i = 0; i < count; ++i)
      gradExprs.push_back(getAffineDimExpr(rank + i, context));
    for (int64_t i = axis + 1; i < rank; ++i)
      gradExprs.push_back(getAffineDimExpr(i, context));
    Value init = zeroTensor(rewriter, loc, type.getShape(), accType);
    int64_t dim = type.getDimSize(axis);
    Value sums =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{init.getType()},
            ValueRange{adaptor.getGrad(), adaptor.getIndices()},
            ValueRange{init},
            ArrayRef<AffineMap>{AffineMap::get(loops, 0, gradExprs, context),
                                dimRangeMap(loops, rank, count, context),
                                dimRangeMap(loops, 0, rank, context)},
            iteratorTypes(rank, count),
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              Value index = normalizeIndex(b, nloc, args[1], dim);
              Value equal = arith::CmpIOp::create(
                  b, nloc, arith::CmpIPredicate::eq, index,
                  linalg::IndexOp::create(b, nloc, axis));
              Value term = arith::SelectOp::create(
                  b, nloc, equal, convertFloat(b, nloc, args[0], accType),
                  floatConstant(b, nloc, accType, 0.0));
              linalg::YieldOp::create(
                  b, nloc,
                  arith::AddFOp::create(b, nloc, args[2], term).getResult());
            })
            .getResult(0);
    rewriter.replaceOp(op, convertElementType(rewriter, loc, sums, element));
    return success();
  }
};

} // namespace

void traincc::codegen::populateDataMovementPatterns(
    RewritePatternSet &patterns) {
  patterns
      .add<ReshapeLowering<train::ReshapeOp>, ReshapeLowering<train::FlattenOp>,
           TransposeLowering, ConcatLowering, SliceLowering, GatherLowering,
           GatherBackwardLowering>(patterns.getContext());
}
