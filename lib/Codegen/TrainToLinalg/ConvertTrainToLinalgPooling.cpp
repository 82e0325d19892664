//===- ConvertTrainToLinalgPooling.cpp - max, average, global pooling -----===//
//
// Window ops pad the input explicitly (tensor.pad) so that the window
// reduction itself never tests bounds: max pooling pads with -inf, average
// pooling with zeros and divides by a count known at compile time. In ceil
// mode the last window can run past the end padding; the input is padded
// further so every window is in bounds, and that overhang is never counted.
// 2-D windows use the named NCHW pooling ops, others a `linalg.generic`.
// reduce_max (max "pooling" over any axes) and its gradient live here too.
//
//===----------------------------------------------------------------------===//

#include "ConvertTrainToLinalg.h"

#include "traincc/Codegen/Common/WindowGeometry.h"

#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace traincc::codegen;
namespace train = traincc::train;

namespace {

template <typename PoolOp>
WindowGeometry getWindow(PoolOp op, ArrayRef<int64_t> dilations) {
  return WindowGeometry(op.getInput().getType().getShape(),
                        op.getType().getShape(), op.getKernelShape(),
                        op.getStrides(), dilations, op.getPads());
}

/// Reduces every window of `padded` into `init` (N x C x out...) with
/// `combine(element, accumulator)`: the N-d form of the named pooling ops. The
/// kernel-shaped `window` operand only gives the kernel loops their extent, as
/// in the named pooling ops.
Value buildWindowReduction(OpBuilder &b, Location loc, Value padded, Value init,
                           const WindowGeometry &window, ScalarBodyFn combine) {
  int64_t spatial = window.spatial();
  Type elementType = cast<RankedTensorType>(padded.getType()).getElementType();
  Value kernel = tensor::EmptyOp::create(b, loc, window.kernel, elementType);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{padded, kernel},
             ValueRange{init}, window.windowReductionMaps(b.getContext()),
             iteratorTypes(2 + spatial, spatial),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc,
                                       combine(nb, nloc, {args[0], args[2]}));
             })
      .getResult(0);
}

struct MaxPoolLowering : OpConversionPattern<train::MaxPoolOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::MaxPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    Type elementType = resultType.getElementType();
    WindowGeometry window = getWindow(op, op.getDilations());
    SmallVector<int64_t> low, high;
    window.reachPads(low, high);
    // Padding with -inf: a padded position never wins.
    TypedAttr lowest = negativeInfinity(elementType);
    Value padded =
        padTensor(rewriter, loc, adaptor.getInput(), low, high, lowest);
    Value init = filledTensor(rewriter, loc, resultType.getShape(), lowest);
    Value result;
    if (window.spatial() == 2) {
      Value kernel =
          tensor::EmptyOp::create(rewriter, loc, window.kernel, elementType);
      result =
          linalg::PoolingNchwMaxOp::create(
              rewriter, loc, TypeRange{resultType}, ValueRange{padded, kernel},
              ValueRange{init}, rewriter.getI64TensorAttr(window.strides),
              rewriter.getI64TensorAttr(window.dilations))
              .getResult(0);
    } else {
      result = buildWindowReduction(
          rewriter, loc, padded, init, window,
          [](OpBuilder &b, Location nloc, ValueRange args) -> Value {
            return arith::MaximumFOp::create(b, nloc, args[0], args[1]);
          });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// `sums` (accumulator type) divided by each window's `windowCount`, in
/// `resultType`. The count factors into one per spatial axis; axes where it
/// varies get a constant vector of counts, the others fold into one scalar.
Value divideByCounts(OpBuilder &b, Location loc, Value sums,
                     const WindowGeometry &window, bool countIncludePad,
                     RankedTensorType resultType) {
  MLIRContext *context = b.getContext();
  int64_t rank = resultType.getRank();
  Type elementType = resultType.getElementType();
  Type accType = tensorType(sums).getElementType();
  double uniformCount = 1.0;
  SmallVector<Value> countVectors;
  SmallVector<AffineMap> maps = {
      AffineMap::getMultiDimIdentityMap(rank, context)};
  for (int64_t i = 0; i < window.spatial(); ++i) {
    SmallVector<double> counts;
    for (int64_t o = 0; o < window.output[i]; ++o)
      counts.push_back(window.windowCount(i, o, countIncludePad));
    if (counts.empty() || llvm::all_equal(counts)) {
      uniformCount *= counts.empty() ? 1.0 : counts[0];
      continue;
    }
    countVectors.push_back(floatTensorConstant(
        b, loc, RankedTensorType::get({window.output[i]}, accType), counts));
    maps.push_back(
        AffineMap::get(rank, 0, getAffineDimExpr(2 + i, context), context));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, context));
  SmallVector<Value> inputs = {sums};
  inputs.append(countVectors);
  Value out =
      tensor::EmptyOp::create(b, loc, resultType.getShape(), elementType);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, inputs, ValueRange{out}, maps,
             iteratorTypes(rank),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value count;
               if (uniformCount != 1.0 || countVectors.empty())
                 count = floatConstant(nb, nloc, accType, uniformCount);
               for (Value axisCount : args.drop_front().drop_back())
                 count = count
                             ? arith::MulFOp::create(nb, nloc, count, axisCount)
                                   .getResult()
                             : axisCount;
               Value mean = arith::DivFOp::create(nb, nloc, args[0], count);
               linalg::YieldOp::create(
                   nb, nloc, convertFloat(nb, nloc, mean, elementType));
             })
      .getResult(0);
}

/// Window sums divided by how many elements each window counts: the real
/// input elements in it, or with `count_include_pad` the window clipped to
/// the padded input (PyTorch's rule; the ceil-mode overhang never counts).
/// The count factors into one per spatial axis; axes where it varies get a
/// constant vector of counts, the others fold into one scalar.
struct AvgPoolLowering : OpConversionPattern<train::AvgPoolOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::AvgPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    int64_t rank = resultType.getRank();
    Type elementType = resultType.getElementType();
    Type accType = accumulatorType(elementType);
    SmallVector<int64_t> ones(rank - 2, 1);
    WindowGeometry window = getWindow(op, ones);
    SmallVector<int64_t> low, high;
    window.reachPads(low, high);
    Value padded = padTensor(rewriter, loc, adaptor.getInput(), low, high,
                             rewriter.getFloatAttr(elementType, 0.0));
    Value init = zeroTensor(rewriter, loc, resultType.getShape(), accType);
    Value sums;
    if (window.spatial() == 2) {
      Value kernel =
          tensor::EmptyOp::create(rewriter, loc, window.kernel, elementType);
      sums = linalg::PoolingNchwSumOp::create(
                 rewriter, loc, TypeRange{init.getType()},
                 ValueRange{padded, kernel}, ValueRange{init},
                 rewriter.getI64TensorAttr(window.strides),
                 rewriter.getI64TensorAttr(window.dilations))
                 .getResult(0);
    } else {
      sums = buildWindowReduction(
          rewriter, loc, padded, init, window,
          [accType](OpBuilder &b, Location nloc, ValueRange args) -> Value {
            return arith::AddFOp::create(
                b, nloc, convertFloat(b, nloc, args[0], accType), args[1]);
          });
    }

    rewriter.replaceOp(op, divideByCounts(rewriter, loc, sums, window,
                                          op.getCountIncludePad(), resultType));
    return success();
  }
};

/// Sum over the spatial axes into N x C (accumulator type), then divide and
/// round into the N x C x 1... result.
struct GlobalAvgPoolLowering : OpConversionPattern<train::GlobalAvgPoolOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::GlobalAvgPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    RankedTensorType resultType = op.getType();
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
    int64_t rank = inputType.getRank();
    Type elementType = resultType.getElementType();
    Type accType = accumulatorType(elementType);
    int64_t count = 1;
    for (int64_t size : inputType.getShape().drop_front(2))
      count *= size;

    SmallVector<int64_t> reducedShape = {inputType.getDimSize(0),
                                         inputType.getDimSize(1)};
    AffineMap batchChannel = AffineMap::get(
        rank, 0, {getAffineDimExpr(0, context), getAffineDimExpr(1, context)},
        context);
    Value init = zeroTensor(rewriter, loc, reducedShape, accType);
    Value sums =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{init.getType()},
            ValueRange{adaptor.getInput()}, ValueRange{init},
            ArrayRef<AffineMap>{
                AffineMap::getMultiDimIdentityMap(rank, context), batchChannel},
            iteratorTypes(2, rank - 2),
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              Value x = convertFloat(b, nloc, args[0], accType);
              linalg::YieldOp::create(
                  b, nloc,
                  arith::AddFOp::create(b, nloc, x, args[1]).getResult());
            })
            .getResult(0);
    Value out = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                        elementType);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{resultType}, ValueRange{sums},
            ValueRange{out},
            ArrayRef<AffineMap>{
                batchChannel, AffineMap::getMultiDimIdentityMap(rank, context)},
            iteratorTypes(rank),
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              Value mean = arith::DivFOp::create(
                  b, nloc, args[0],
                  floatConstant(b, nloc, accType, static_cast<double>(count)));
              linalg::YieldOp::create(b, nloc,
                                      convertFloat(b, nloc, mean, elementType));
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// reduce_max over any axes
//===----------------------------------------------------------------------===//

/// The axes a keepdims-form reduction from `input` to `reduced` reduces.
SmallVector<int64_t> reducedAxes(ArrayRef<int64_t> input,
                                 ArrayRef<int64_t> reduced) {
  SmallVector<int64_t> axes;
  for (auto [index, dims] : llvm::enumerate(llvm::zip(input, reduced)))
    if (std::get<0>(dims) != std::get<1>(dims))
      axes.push_back(index);
  return axes;
}

/// A max over the reduced axes into a -inf-filled tensor of the kept axes
/// (maximumf propagates NaN), reshaped to the keepdims result.
struct ReduceMaxLowering : OpConversionPattern<train::ReduceMaxOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::ReduceMaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    RankedTensorType input = op.getInput().getType();
    RankedTensorType resultType = op.getType();
    Type element = resultType.getElementType();
    int64_t rank = input.getRank();
    SmallVector<int64_t> axes =
        reducedAxes(input.getShape(), resultType.getShape());
    SmallVector<int64_t> kept;
    SmallVector<utils::IteratorType> iterators;
    reductionLoops(input.getShape(), axes, iterators, kept);
    Value init = filledTensor(rewriter, loc, kept, negativeInfinity(element));
    Value maxima = linalg::GenericOp::create(
                       rewriter, loc, TypeRange{init.getType()},
                       ValueRange{adaptor.getInput()}, ValueRange{init},
                       ArrayRef<AffineMap>{
                           AffineMap::getMultiDimIdentityMap(rank, context),
                           keptAxesMap(rank, axes, context)},
                       iterators,
                       [](OpBuilder &b, Location nloc, ValueRange args) {
                         linalg::YieldOp::create(b, nloc,
                                                 arith::MaximumFOp::create(
                                                     b, nloc, args[0], args[1])
                                                     .getResult());
                       })
                       .getResult(0);
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, maxima, resultType));
    return success();
  }
};

/// Counts the elements equal to their maximum, then gives each of them
/// grad / count (in the accumulator type).
struct ReduceMaxBackwardLowering
    : OpConversionPattern<train::ReduceMaxBackwardOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::ReduceMaxBackwardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    RankedTensorType input = op.getInput().getType();
    RankedTensorType output = op.getOutput().getType();
    Type element = input.getElementType();
    Type accType = accumulatorType(element);
    ArrayRef<int64_t> shape = input.getShape();
    SmallVector<int64_t> axes = reducedAxes(shape, output.getShape());
    Value counts = sumOver(
        rewriter, loc, ValueRange{adaptor.getInput(), adaptor.getOutput()},
        {AffineMap::getMultiDimIdentityMap(shape.size(), context),
         broadcastMap(output.getShape(), shape, context)},
        shape, axes, accType,
        [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
          Value equal = arith::CmpFOp::create(
              b, nloc, arith::CmpFPredicate::OEQ, args[0], args[1]);
          return arith::SelectOp::create(b, nloc, equal,
                                         floatConstant(b, nloc, accType, 1.0),
                                         floatConstant(b, nloc, accType, 0.0));
        });
    counts = reshapeTensor(rewriter, loc, counts,
                           RankedTensorType::get(output.getShape(), accType));
    Value result = buildElementwise(
        rewriter, loc,
        ValueRange{adaptor.getGrad(), adaptor.getInput(), adaptor.getOutput(),
                   counts},
        shape, element, [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value equal = arith::CmpFOp::create(
              b, nloc, arith::CmpFPredicate::OEQ, args[1], args[2]);
          Value share = arith::DivFOp::create(
              b, nloc, convertFloat(b, nloc, args[0], accType), args[3]);
          Value picked = arith::SelectOp::create(
              b, nloc, equal, share, floatConstant(b, nloc, accType, 0.0));
          return convertFloat(b, nloc, picked, element);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void traincc::codegen::populatePoolingPatterns(RewritePatternSet &patterns) {
  patterns.add<MaxPoolLowering, AvgPoolLowering, GlobalAvgPoolLowering,
               ReduceMaxLowering, ReduceMaxBackwardLowering>(
      patterns.getContext());
}
