//===- ConvertTrainToLinalgPooling.cpp - max, average, global pooling -----===//
//
// Window ops pad the input explicitly (tensor.pad) so that the window
// reduction itself never tests bounds: max pooling pads with -inf, average
// pooling with zeros and divides by a count known at compile time. In ceil
// mode the last window can run past the end padding; the input is padded
// further so every window is in bounds, and that overhang is never counted.
// 2-D windows use the named NCHW pooling ops, others a `linalg.generic`.
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

/// The geometry of a window op on an N x C x spatial... input.
struct Window {
  SmallVector<int64_t> inputShape, outputShape, kernel, strides, dilations,
      pads;

  int64_t spatial() const { return kernel.size(); }
  int64_t inputSize(int64_t axis) const { return inputShape[2 + axis]; }
  int64_t outputSize(int64_t axis) const { return outputShape[2 + axis]; }
  int64_t padBegin(int64_t axis) const { return pads[axis]; }
  int64_t padEnd(int64_t axis) const { return pads[spatial() + axis]; }

  /// Low and high pads of the whole input: the op's begin pads, and at the
  /// end whatever the last window reaches (the end pad, or more in ceil
  /// mode; less where the windows stop short of it).
  void explicitPads(SmallVectorImpl<int64_t> &low,
                    SmallVectorImpl<int64_t> &high) const {
    low.assign(2, 0);
    high.assign(2, 0);
    for (int64_t i = 0; i < spatial(); ++i) {
      int64_t reach =
          (outputSize(i) - 1) * strides[i] + dilations[i] * (kernel[i] - 1) + 1;
      low.push_back(padBegin(i));
      high.push_back(std::max<int64_t>(0, reach - inputSize(i) - padBegin(i)));
    }
  }
};

template <typename PoolOp>
Window getWindow(PoolOp op, ArrayRef<int64_t> dilations) {
  Window window;
  window.inputShape.assign(op.getInput().getType().getShape().begin(),
                           op.getInput().getType().getShape().end());
  window.outputShape.assign(op.getType().getShape().begin(),
                            op.getType().getShape().end());
  window.kernel.assign(op.getKernelShape().begin(), op.getKernelShape().end());
  window.strides.assign(op.getStrides().begin(), op.getStrides().end());
  window.dilations.assign(dilations.begin(), dilations.end());
  window.pads.assign(op.getPads().begin(), op.getPads().end());
  return window;
}

/// Reduces every window of `padded` into `init` (N x C x out...) with
/// `combine(element, accumulator)`: the N-d form of the named pooling ops. The
/// kernel-shaped `window` operand only gives the kernel loops their extent, as
/// in the named pooling ops.
Value buildWindowReduction(OpBuilder &b, Location loc, Value padded, Value init,
                           const Window &window, ScalarBodyFn combine) {
  MLIRContext *context = b.getContext();
  int64_t spatial = window.spatial();
  Type elementType = cast<RankedTensorType>(padded.getType()).getElementType();
  Value kernel = tensor::EmptyOp::create(b, loc, window.kernel, elementType);
  int64_t numLoops = 2 + 2 * spatial;
  auto dim = [&](int64_t i) { return getAffineDimExpr(i, context); };
  SmallVector<AffineExpr> inputExprs = {dim(0), dim(1)}, kernelExprs,
                          outputExprs = {dim(0), dim(1)};
  for (int64_t i = 0; i < spatial; ++i) {
    AffineExpr out = dim(2 + i), k = dim(2 + spatial + i);
    inputExprs.push_back(out * window.strides[i] + k * window.dilations[i]);
    kernelExprs.push_back(k);
    outputExprs.push_back(out);
  }
  SmallVector<AffineMap> maps = {
      AffineMap::get(numLoops, 0, inputExprs, context),
      AffineMap::get(numLoops, 0, kernelExprs, context),
      AffineMap::get(numLoops, 0, outputExprs, context)};
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{padded, kernel},
             ValueRange{init}, maps, iteratorTypes(2 + spatial, spatial),
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
    Window window = getWindow(op, op.getDilations());
    SmallVector<int64_t> low, high;
    window.explicitPads(low, high);
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
    MLIRContext *context = rewriter.getContext();
    RankedTensorType resultType = op.getType();
    int64_t rank = resultType.getRank();
    Type elementType = resultType.getElementType();
    Type accType = accumulatorType(elementType);
    SmallVector<int64_t> ones(rank - 2, 1);
    Window window = getWindow(op, ones);
    SmallVector<int64_t> low, high;
    window.explicitPads(low, high);
    Value padded = padTensor(rewriter, loc, adaptor.getInput(), low, high,
                             rewriter.getFloatAttr(elementType, 0.0));
    Value init = filledTensor(rewriter, loc, resultType.getShape(),
                              rewriter.getFloatAttr(accType, 0.0));
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

    // Counts per axis and output position.
    double uniformCount = 1.0;
    SmallVector<Value> countVectors;
    SmallVector<AffineMap> maps = {
        AffineMap::getMultiDimIdentityMap(rank, context)};
    for (int64_t i = 0; i < window.spatial(); ++i) {
      SmallVector<double> counts;
      for (int64_t o = 0; o < window.outputSize(i); ++o) {
        int64_t start = o * window.strides[i] - window.padBegin(i);
        int64_t end = start + window.kernel[i];
        int64_t count =
            op.getCountIncludePad()
                ? std::min(end, window.inputSize(i) + window.padEnd(i)) - start
                : std::min(end, window.inputSize(i)) -
                      std::max<int64_t>(start, 0);
        counts.push_back(count);
      }
      if (counts.empty() || llvm::all_equal(counts)) {
        uniformCount *= counts.empty() ? 1.0 : counts[0];
        continue;
      }
      auto vectorType = RankedTensorType::get({window.outputSize(i)}, accType);
      SmallVector<APFloat> values;
      for (double count : counts) {
        APFloat value(count);
        bool losesInfo;
        value.convert(cast<FloatType>(accType).getFloatSemantics(),
                      APFloat::rmNearestTiesToEven, &losesInfo);
        values.push_back(value);
      }
      countVectors.push_back(arith::ConstantOp::create(
          rewriter, loc, DenseElementsAttr::get(vectorType, values)));
      maps.push_back(
          AffineMap::get(rank, 0, getAffineDimExpr(2 + i, context), context));
    }
    maps.push_back(AffineMap::getMultiDimIdentityMap(rank, context));
    SmallVector<Value> inputs = {sums};
    inputs.append(countVectors);
    Value out = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                        elementType);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{resultType}, inputs, ValueRange{out}, maps,
            iteratorTypes(rank),
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              Value count;
              if (uniformCount != 1.0 || countVectors.empty())
                count = floatConstant(b, nloc, accType, uniformCount);
              for (Value axisCount : args.drop_front().drop_back())
                count = count ? arith::MulFOp::create(b, nloc, count, axisCount)
                                    .getResult()
                              : axisCount;
              Value mean = arith::DivFOp::create(b, nloc, args[0], count);
              linalg::YieldOp::create(b, nloc,
                                      convertFloat(b, nloc, mean, elementType));
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
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
    Value init = filledTensor(rewriter, loc, reducedShape,
                              rewriter.getFloatAttr(accType, 0.0));
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

} // namespace

void traincc::codegen::populatePoolingPatterns(RewritePatternSet &patterns) {
  patterns.add<MaxPoolLowering, AvgPoolLowering, GlobalAvgPoolLowering>(
      patterns.getContext());
}
