//===- ConvertTrainToLinalgGradients.cpp - losses, BN, backward ops -------===//
//
// Losses, the reductions and broadcasts that gradients of broadcasting ops
// need, elementwise and softmax backward ops, explicit BatchNorm (statistics,
// apply, backward), slice_backward and dropout masks. Sums accumulate in
// `accumulatorType` (f32 for f16/bf16) and round to the element type once.
// The window gradients (convolution, pooling) live in
// ConvertTrainToLinalgWindowGradients.cpp.
//
// Dropout masks come from a counter-based generator, so that the mask is a
// pure function of (seed, stream, flat element index) that the runtime and
// tests can reproduce; with u64 wrapping arithmetic,
//
//   mix(z)  = z ^= z >> 30; z *= 0xBF58476D1CE4E5B9;
//             z ^= z >> 27; z *= 0x94D049BB133111EB; z ^ (z >> 31)
//   key     = mix(seed + 0x9E3779B97F4A7C15 * (stream + 1))
//   bits    = mix(key + 0x9E3779B97F4A7C15 * (index + 1))
//   dropped = (bits >> 40) < ceil(ratio * 2^24)
//
// i.e. element `index` (row-major) draws the (index+1)-th output of a
// SplitMix64 sequence started at `key`, and is dropped when its top 24 bits
// as a fraction of 2^24 are below `ratio`; kept elements are 1/(1 - ratio).
// Integer arithmetic only, so CPU and GPU draw identical masks.
//
//===----------------------------------------------------------------------===//

#include "ConvertTrainToLinalg.h"

#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;
using namespace traincc::codegen;
namespace train = traincc::train;

namespace {

/// Every axis of a rank-`rank` tensor but `keep`.
SmallVector<int64_t> allAxesBut(int64_t rank, int64_t keep) {
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < rank; ++i)
    if (i != keep)
      axes.push_back(i);
  return axes;
}

/// `value` (a float scalar) divided by the constant `divisor`.
Value divideBy(OpBuilder &b, Location loc, Value value, double divisor) {
  return arith::DivFOp::create(b, loc, value,
                               floatConstant(b, loc, value.getType(), divisor));
}

/// `tensor` (any float type) divided elementwise by `divisor`, in
/// `element`.
Value divideTensor(OpBuilder &b, Location loc, Value tensor, double divisor,
                   Type element) {
  RankedTensorType type = tensorType(tensor);
  return buildElementwise(b, loc, tensor, type.getShape(), element,
                          [&](OpBuilder &nb, Location nloc, ValueRange args) {
                            return convertFloat(
                                nb, nloc, divideBy(nb, nloc, args[0], divisor),
                                element);
                          });
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// Per-row statistics of [N, C] logits in the accumulator type: the maximum,
/// sum(exp(x - max)) and the logit at the row's label.
struct LogitStats {
  Value max, sumExp, picked;
};

LogitStats computeLogitStats(OpBuilder &b, Location loc, Value logits,
                             Value labels, Type accType) {
  MLIRContext *context = b.getContext();
  RankedTensorType type = tensorType(logits);
  int64_t rows = type.getDimSize(0);
  AffineMap full = AffineMap::getMultiDimIdentityMap(2, context);
  AffineMap row = AffineMap::get(2, 0, getAffineDimExpr(0, context), context);

  Value maxInit = filledTensor(b, loc, {rows}, negativeInfinity(accType));
  Value max =
      linalg::GenericOp::create(
          b, loc, TypeRange{maxInit.getType()}, ValueRange{logits},
          ValueRange{maxInit}, ArrayRef<AffineMap>{full, row},
          iteratorTypes(1, 1),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            Value x = convertFloat(nb, nloc, args[0], accType);
            linalg::YieldOp::create(
                nb, nloc,
                arith::MaximumFOp::create(nb, nloc, x, args[1]).getResult());
          })
          .getResult(0);

  // One pass sums exp(x - max) and picks the label's logit (exactly one
  // column matches, so the select is order-independent).
  Value zeros = zeroTensor(b, loc, {rows}, accType);
  auto stats = linalg::GenericOp::create(
      b, loc, TypeRange{zeros.getType(), zeros.getType()},
      ValueRange{logits, max, labels}, ValueRange{zeros, zeros},
      ArrayRef<AffineMap>{full, row, row, row, row}, iteratorTypes(1, 1),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value x = convertFloat(nb, nloc, args[0], accType);
        Value shifted = arith::SubFOp::create(nb, nloc, x, args[1]);
        Value sum = arith::AddFOp::create(
            nb, nloc, args[3], math::ExpOp::create(nb, nloc, shifted));
        Value column = arith::IndexCastOp::create(
            nb, nloc, nb.getI64Type(), linalg::IndexOp::create(nb, nloc, 1));
        Value isLabel = arith::CmpIOp::create(
            nb, nloc, arith::CmpIPredicate::eq, column, args[2]);
        Value picked = arith::SelectOp::create(nb, nloc, isLabel, x, args[4]);
        linalg::YieldOp::create(nb, nloc, ValueRange{sum, picked});
      });
  return {max, stats.getResult(0), stats.getResult(1)};
}

/// loss_n = log(sum exp(x - max)) + max - x[label]: logsumexp without
/// overflow. `mean` sums the losses and divides by N.
struct SoftmaxCrossEntropyLowering
    : OpConversionPattern<train::SoftmaxCrossEntropyOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::SoftmaxCrossEntropyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type element = op.getType().getElementType();
    Type accType = accumulatorType(element);
    int64_t rows = tensorType(adaptor.getLogits()).getDimSize(0);
    LogitStats stats = computeLogitStats(rewriter, loc, adaptor.getLogits(),
                                         adaptor.getLabels(), accType);
    bool mean = op.getReduction() == train::Reduction::Mean;
    Value losses = buildElementwise(
        rewriter, loc, ValueRange{stats.sumExp, stats.max, stats.picked},
        {rows}, mean ? accType : element,
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value lse = arith::AddFOp::create(
              b, nloc, math::LogOp::create(b, nloc, args[0]), args[1]);
          Value loss = arith::SubFOp::create(b, nloc, lse, args[2]);
          return mean ? loss : convertFloat(b, nloc, loss, element);
        });
    if (mean)
      losses = divideTensor(rewriter, loc,
                            sumElements(rewriter, loc, losses, {0}, accType),
                            static_cast<double>(rows), element);
    rewriter.replaceOp(op, losses);
    return success();
  }
};

/// (softmax(x) - onehot(label)) * grad / N.
struct SoftmaxCrossEntropyBackwardLowering
    : OpConversionPattern<train::SoftmaxCrossEntropyBackwardOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::SoftmaxCrossEntropyBackwardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    Type accType = accumulatorType(element);
    double rows = static_cast<double>(type.getDimSize(0));
    LogitStats stats = computeLogitStats(rewriter, loc, adaptor.getLogits(),
                                         adaptor.getLabels(), accType);
    AffineMap full = AffineMap::getMultiDimIdentityMap(2, context);
    AffineMap row = AffineMap::get(2, 0, getAffineDimExpr(0, context), context);
    AffineMap scalar = AffineMap::get(2, 0, {}, context);
    Value result = buildPointwise(
        rewriter, loc,
        ValueRange{adaptor.getLogits(), stats.max, stats.sumExp,
                   adaptor.getLabels(), adaptor.getGrad()},
        {full, row, row, row, scalar}, type.getShape(), element,
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value x = convertFloat(b, nloc, args[0], accType);
          Value prob = arith::DivFOp::create(
              b, nloc,
              math::ExpOp::create(b, nloc,
                                  arith::SubFOp::create(b, nloc, x, args[1])),
              args[2]);
          Value column = arith::IndexCastOp::create(
              b, nloc, b.getI64Type(), linalg::IndexOp::create(b, nloc, 1));
          Value isLabel = arith::CmpIOp::create(
              b, nloc, arith::CmpIPredicate::eq, column, args[3]);
          Value onehot = arith::SelectOp::create(
              b, nloc, isLabel, floatConstant(b, nloc, accType, 1.0),
              floatConstant(b, nloc, accType, 0.0));
          Value diff = arith::SubFOp::create(b, nloc, prob, onehot);
          Value grad = convertFloat(b, nloc, args[4], accType);
          Value scaled = divideBy(
              b, nloc, arith::MulFOp::create(b, nloc, diff, grad), rows);
          return convertFloat(b, nloc, scaled, element);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Mean of (p - t)^2 over every element (`mean`) or over each sample's
/// elements (`none`).
struct MSELowering : OpConversionPattern<train::MSEOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::MSEOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType predictionType = tensorType(adaptor.getPrediction());
    ArrayRef<int64_t> shape = predictionType.getShape();
    int64_t rank = shape.size();
    Type element = op.getType().getElementType();
    Type accType = accumulatorType(element);
    AffineMap identity =
        AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext());
    bool mean = op.getReduction() == train::Reduction::Mean;
    SmallVector<int64_t> axes =
        mean ? llvm::to_vector(llvm::seq<int64_t>(0, rank))
             : llvm::to_vector(llvm::seq<int64_t>(1, rank));
    double count = 1.0;
    for (int64_t axis : axes)
      count *= static_cast<double>(shape[axis]);
    Value sums = sumOver(
        rewriter, loc, ValueRange{adaptor.getPrediction(), adaptor.getTarget()},
        {identity, identity}, shape, axes, accType,
        [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
          Value diff = arith::SubFOp::create(
              b, nloc, convertFloat(b, nloc, args[0], accType),
              convertFloat(b, nloc, args[1], accType));
          return arith::MulFOp::create(b, nloc, diff, diff);
        });
    rewriter.replaceOp(op, divideTensor(rewriter, loc, sums, count, element));
    return success();
  }
};

/// 2 * (p - t) * grad / numel.
struct MSEBackwardLowering : OpConversionPattern<train::MSEBackwardOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::MSEBackwardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    Type accType = accumulatorType(element);
    double count = static_cast<double>(type.getNumElements());
    Value result = buildElementwise(
        rewriter, loc,
        ValueRange{adaptor.getPrediction(), adaptor.getTarget(),
                   adaptor.getGrad()},
        type.getShape(), element,
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value diff = arith::SubFOp::create(
              b, nloc, convertFloat(b, nloc, args[0], accType),
              convertFloat(b, nloc, args[1], accType));
          Value scaled = arith::MulFOp::create(
              b, nloc, diff, convertFloat(b, nloc, args[2], accType));
          Value twice = arith::MulFOp::create(
              b, nloc, scaled, floatConstant(b, nloc, accType, 2.0));
          return convertFloat(b, nloc, divideBy(b, nloc, twice, count),
                              element);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Reductions and broadcasts
//===----------------------------------------------------------------------===//

struct ReduceSumLowering : OpConversionPattern<train::ReduceSumOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::ReduceSumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type element = op.getType().getElementType();
    Value sums = sumElements(rewriter, op.getLoc(), adaptor.getInput(),
                             op.getAxes(), accumulatorType(element));
    rewriter.replaceOp(
        op, convertElementType(rewriter, op.getLoc(), sums, element));
    return success();
  }
};

/// Sums the axes broadcasting added (leading ones, and size-1 result axes
/// the input widened), then reshapes the kept axes to the result.
struct SumToLowering : OpConversionPattern<train::SumToOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::SumToOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resultType = op.getType();
    ArrayRef<int64_t> input = tensorType(adaptor.getInput()).getShape();
    ArrayRef<int64_t> result = resultType.getShape();
    int64_t offset = input.size() - result.size();
    SmallVector<int64_t> axes;
    for (int64_t i = 0; i < static_cast<int64_t>(input.size()); ++i)
      if (i < offset || (result[i - offset] == 1 && input[i] != 1))
        axes.push_back(i);
    Type element = resultType.getElementType();
    Value sums = sumElements(rewriter, op.getLoc(), adaptor.getInput(), axes,
                             accumulatorType(element));
    sums = convertElementType(rewriter, op.getLoc(), sums, element);
    rewriter.replaceOp(op,
                       reshapeTensor(rewriter, op.getLoc(), sums, resultType));
    return success();
  }
};

/// The broadcast is all in the indexing map; the body copies.
struct BroadcastToLowering
    : ElementwiseLowering<BroadcastToLowering, train::BroadcastToOp> {
  using ElementwiseLowering::ElementwiseLowering;
  static Value build(OpBuilder &, Location, train::BroadcastToOp,
                     ValueRange args) {
    return args[0];
  }
};

//===----------------------------------------------------------------------===//
// Activation gradients
//===----------------------------------------------------------------------===//

// Each activation gradient is an `ElementwiseLowering` of two same-typed
// operands: the upstream gradient dy and a forward value (x or y).

/// `grad` where `condition`, else zero.
Value gradWhere(OpBuilder &b, Location loc, Value condition, Value grad) {
  return arith::SelectOp::create(b, loc, condition, grad,
                                 floatConstant(b, loc, grad.getType(), 0.0));
}

Value isPositive(OpBuilder &b, Location loc, Value x) {
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x,
                               floatConstant(b, loc, x.getType(), 0.0));
}

struct ReluBackwardLowering
    : ElementwiseLowering<ReluBackwardLowering, train::ReluBackwardOp> {
  using ElementwiseLowering::ElementwiseLowering;
  static Value build(OpBuilder &b, Location loc, train::ReluBackwardOp,
                     ValueRange args) {
    Value dy = args[0], x = args[1];
    return gradWhere(b, loc, isPositive(b, loc, x), dy);
  }
};

struct LeakyReluBackwardLowering
    : ElementwiseLowering<LeakyReluBackwardLowering,
                          train::LeakyReluBackwardOp> {
  using ElementwiseLowering::ElementwiseLowering;
  static Value build(OpBuilder &b, Location loc, train::LeakyReluBackwardOp op,
                     ValueRange args) {
    Value dy = args[0], x = args[1];
    Value alpha =
        floatConstant(b, loc, dy.getType(), op.getAlpha().convertToDouble());
    Value positive = isPositive(b, loc, x);
    Value scaled = arith::MulFOp::create(b, loc, dy, alpha);
    return arith::SelectOp::create(b, loc, positive, dy, scaled);
  }
};

/// Zero at and beyond the bounds (PyTorch's hardtanh / ReLU6).
struct ClipBackwardLowering
    : ElementwiseLowering<ClipBackwardLowering, train::ClipBackwardOp> {
  using ElementwiseLowering::ElementwiseLowering;
  static Value build(OpBuilder &b, Location loc, train::ClipBackwardOp op,
                     ValueRange args) {
    Value dy = args[0], x = args[1];
    Type type = x.getType();
    Value inside = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
    if (std::optional<APFloat> min = op.getMin())
      inside = arith::AndIOp::create(
          b, loc, inside,
          arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OGT, x,
              floatConstant(b, loc, type, min->convertToDouble())));
    if (std::optional<APFloat> max = op.getMax())
      inside = arith::AndIOp::create(
          b, loc, inside,
          arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OLT, x,
              floatConstant(b, loc, type, max->convertToDouble())));
    return gradWhere(b, loc, inside, dy);
  }
};

struct SigmoidBackwardLowering
    : ElementwiseLowering<SigmoidBackwardLowering, train::SigmoidBackwardOp> {
  using ElementwiseLowering::ElementwiseLowering;
  static Value build(OpBuilder &b, Location loc, train::SigmoidBackwardOp,
                     ValueRange args) {
    Value dy = args[0], y = args[1];
    Value oneMinus = arith::SubFOp::create(
        b, loc, floatConstant(b, loc, y.getType(), 1.0), y);
    return arith::MulFOp::create(b, loc, dy,
                                 arith::MulFOp::create(b, loc, y, oneMinus));
  }
};

struct TanhBackwardLowering
    : ElementwiseLowering<TanhBackwardLowering, train::TanhBackwardOp> {
  using ElementwiseLowering::ElementwiseLowering;
  static Value build(OpBuilder &b, Location loc, train::TanhBackwardOp,
                     ValueRange args) {
    Value dy = args[0], y = args[1];
    Value oneMinus =
        arith::SubFOp::create(b, loc, floatConstant(b, loc, y.getType(), 1.0),
                              arith::MulFOp::create(b, loc, y, y));
    return arith::MulFOp::create(b, loc, dy, oneMinus);
  }
};

struct ErfBackwardLowering
    : ElementwiseLowering<ErfBackwardLowering, train::ErfBackwardOp> {
  using ElementwiseLowering::ElementwiseLowering;
  static Value build(OpBuilder &b, Location loc, train::ErfBackwardOp,
                     ValueRange args) {
    Value dy = args[0], x = args[1];
    Value square = arith::MulFOp::create(b, loc, x, x);
    Value gauss =
        math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, square));
    // 2 / sqrt(pi).
    Value scale = floatConstant(b, loc, x.getType(), 1.1283791670955126);
    return arith::MulFOp::create(b, loc, dy,
                                 arith::MulFOp::create(b, loc, scale, gauss));
  }
};

/// softmax: y * (dy - sum(dy * y)); log_softmax: dy - exp(y) * sum(dy),
/// the sums along `axis` in the accumulator type.
template <typename TrainOp, bool isLog>
struct SoftmaxBackwardLowering : OpConversionPattern<TrainOp> {
  using OpConversionPattern<TrainOp>::OpConversionPattern;
  using OpAdaptor = typename TrainOp::Adaptor;

  LogicalResult
  matchAndRewrite(TrainOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    RankedTensorType type = op.getType();
    ArrayRef<int64_t> shape = type.getShape();
    Type element = type.getElementType();
    Type accType = accumulatorType(element);
    int64_t rank = shape.size();
    int64_t axis = op.getAxis();
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
    Value dy = adaptor.getGrad(), y = adaptor.getOutput();
    Value sums = sumOver(
        rewriter, loc, ValueRange{dy, y}, {identity, identity}, shape, {axis},
        accType, [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
          Value grad = convertFloat(b, nloc, args[0], accType);
          if (isLog)
            return grad;
          return arith::MulFOp::create(b, nloc, grad,
                                       convertFloat(b, nloc, args[1], accType));
        });
    Value result = buildPointwise(
        rewriter, loc, ValueRange{dy, y, sums},
        {identity, identity, keptAxesMap(rank, {axis}, context)}, shape,
        element, [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value grad = convertFloat(b, nloc, args[0], accType);
          Value out = convertFloat(b, nloc, args[1], accType);
          Value value;
          if (isLog)
            value = arith::SubFOp::create(
                b, nloc, grad,
                arith::MulFOp::create(
                    b, nloc, math::ExpOp::create(b, nloc, out), args[2]));
          else
            value = arith::MulFOp::create(
                b, nloc, out, arith::SubFOp::create(b, nloc, grad, args[2]));
          return convertFloat(b, nloc, value, element);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Explicit BatchNorm
//===----------------------------------------------------------------------===//

/// 1 / sqrt(variance + epsilon) per channel, in the accumulator type.
Value inverseStdDev(OpBuilder &b, Location loc, Value variance, double epsilon,
                    Type accType) {
  return buildElementwise(
      b, loc, variance, tensorType(variance).getShape(), accType,
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value var = arith::AddFOp::create(
            nb, nloc, convertFloat(nb, nloc, args[0], accType),
            floatConstant(nb, nloc, accType, epsilon));
        return arith::DivFOp::create(nb, nloc,
                                     floatConstant(nb, nloc, accType, 1.0),
                                     math::SqrtOp::create(nb, nloc, var));
      });
}

/// Mean, then the biased variance as the mean of (x - mean)^2 (two passes:
/// no cancellation when the mean is large). Synchronized: each is the
/// replicas' mean of theirs (equal slices), so the variance is taken
/// around the global mean and stays exactly two passes.
struct BNStatsLowering : OpConversionPattern<train::BNStatsOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::BNStatsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    Value input = adaptor.getInput();
    RankedTensorType type = tensorType(input);
    ArrayRef<int64_t> shape = type.getShape();
    int64_t rank = shape.size();
    Type element = type.getElementType();
    Type accType = accumulatorType(element);
    SmallVector<int64_t> axes = allAxesBut(rank, 1);
    double count = static_cast<double>(type.getNumElements()) /
                   static_cast<double>(shape[1]);
    Value mean = divideTensor(rewriter, loc,
                              sumElements(rewriter, loc, input, axes, accType),
                              count, accType);
    if (op.getSynchronized())
      mean = replicaMean(rewriter, op, mean);
    Value squares = sumOver(
        rewriter, loc, ValueRange{input, mean},
        {AffineMap::getMultiDimIdentityMap(rank, context),
         channelMap(rank, context)},
        shape, axes, accType,
        [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
          Value centred = arith::SubFOp::create(
              b, nloc, convertFloat(b, nloc, args[0], accType), args[1]);
          return arith::MulFOp::create(b, nloc, centred, centred);
        });
    // f32 statistics of f16/bf16 inputs (mixed precision).
    Type statElement = op.getMean().getType().getElementType();
    Value variance = divideTensor(rewriter, loc, squares, count,
                                  op.getSynchronized() ? accType : statElement);
    if (op.getSynchronized())
      variance = convertElementType(
          rewriter, loc, replicaMean(rewriter, op, variance), statElement);
    rewriter.replaceOp(
        op, {convertElementType(rewriter, loc, mean, statElement), variance});
    return success();
  }
};

/// (x - mean) * (scale / sqrt(variance + epsilon)) + bias, the factor
/// computed once per channel.
struct BNApplyLowering : OpConversionPattern<train::BNApplyOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::BNApplyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank();
    Type element = type.getElementType();
    Type accType = accumulatorType(element);
    Value invStd = inverseStdDev(rewriter, loc, adaptor.getVariance(),
                                 op.getEpsilon().convertToDouble(), accType);
    Value factor = buildElementwise(
        rewriter, loc, ValueRange{adaptor.getScale(), invStd},
        tensorType(invStd).getShape(), accType,
        [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
          return arith::MulFOp::create(
              b, nloc, convertFloat(b, nloc, args[0], accType), args[1]);
        });
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
    AffineMap channel = channelMap(rank, context);
    Value result = buildPointwise(
        rewriter, loc,
        ValueRange{adaptor.getInput(), adaptor.getMean(), factor,
                   adaptor.getBias()},
        {identity, channel, channel, channel}, type.getShape(), element,
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value centred = arith::SubFOp::create(
              b, nloc, convertFloat(b, nloc, args[0], accType),
              convertFloat(b, nloc, args[1], accType));
          Value value = arith::AddFOp::create(
              b, nloc, arith::MulFOp::create(b, nloc, centred, args[2]),
              convertFloat(b, nloc, args[3], accType));
          return convertFloat(b, nloc, value, element);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// dx = k * (M * dy - sum(dy) - (x - mean) * c) of BatchNorm's backward op,
/// from `forward` = (dy, x, mean) and the per-channel k, sum(dy) and c in
/// the accumulator type.
Value batchNormInputGrad(OpBuilder &rewriter, Location loc, ValueRange forward,
                         Value k, Value sumDy, Value c, double count,
                         Type element) {
  MLIRContext *context = rewriter.getContext();
  ArrayRef<int64_t> shape = tensorType(forward[1]).getShape();
  int64_t rank = shape.size();
  Type accType = tensorType(k).getElementType();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
  AffineMap channel = channelMap(rank, context);
  Value dy = forward[0], x = forward[1], mean = forward[2];
  return buildPointwise(
      rewriter, loc, ValueRange{dy, x, mean, k, sumDy, c},
      {identity, identity, channel, channel, channel, channel}, shape, element,
      [&](OpBuilder &b, Location nloc, ValueRange args) {
        Value grad = convertFloat(b, nloc, args[0], accType);
        Value centred = arith::SubFOp::create(
            b, nloc, convertFloat(b, nloc, args[1], accType),
            convertFloat(b, nloc, args[2], accType));
        Value value = arith::MulFOp::create(
            b, nloc, grad, floatConstant(b, nloc, accType, count));
        value = arith::SubFOp::create(b, nloc, value, args[4]);
        value = arith::SubFOp::create(
            b, nloc, value, arith::MulFOp::create(b, nloc, centred, args[5]));
        value = arith::MulFOp::create(b, nloc, args[3], value);
        return convertFloat(b, nloc, value, element);
      });
}

/// With xhat = (x - mean) * invstd and M values per channel:
///   dbias = sum(dy), dscale = sum(dy * xhat),
///   dx = scale * invstd / M * (M * dy - sum(dy) - xhat * sum(dy * xhat)),
/// the training-mode gradient including the paths through mean and
/// variance.
struct BatchNormBackwardLowering
    : OpConversionPattern<train::BatchNormBackwardOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::BatchNormBackwardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    RankedTensorType type = op.getInput().getType();
    ArrayRef<int64_t> shape = type.getShape();
    int64_t rank = shape.size();
    Type element = type.getElementType();
    Type accType = accumulatorType(element);
    ArrayRef<int64_t> channelShape = tensorType(adaptor.getMean()).getShape();
    double count = static_cast<double>(type.getNumElements()) /
                   static_cast<double>(shape[1]);
    SmallVector<int64_t> axes = allAxesBut(rank, 1);
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
    AffineMap channel = channelMap(rank, context);
    Value dy = adaptor.getGrad(), x = adaptor.getInput();
    Value mean = adaptor.getMean();

    Value invStd = inverseStdDev(rewriter, loc, adaptor.getVariance(),
                                 op.getEpsilon().convertToDouble(), accType);
    Value sumDy = sumElements(rewriter, loc, dy, axes, accType);
    // sum(dy * (x - mean)); times invstd it is sum(dy * xhat).
    Value sumDyCentred = sumOver(
        rewriter, loc, ValueRange{dy, x, mean}, {identity, identity, channel},
        shape, axes, accType,
        [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
          Value centred = arith::SubFOp::create(
              b, nloc, convertFloat(b, nloc, args[1], accType),
              convertFloat(b, nloc, args[2], accType));
          return arith::MulFOp::create(
              b, nloc, convertFloat(b, nloc, args[0], accType), centred);
        });
    auto perChannel = [&](ValueRange inputs, Type resultElement,
                          ScalarBodyFn compute) {
      return buildWidenedElementwise(rewriter, loc, inputs, channelShape,
                                     accType, resultElement, compute);
    };
    // Parameter gradients in the statistics' type (f32 for the f16/bf16
    // inputs of mixed precision), the input gradient in the input's.
    Type statElement = tensorType(adaptor.getMean()).getElementType();
    Value scaleGrad =
        perChannel(ValueRange{sumDyCentred, invStd}, statElement,
                   [](OpBuilder &b, Location nloc, ValueRange v) -> Value {
                     return arith::MulFOp::create(b, nloc, v[0], v[1]);
                   });
    // dx = k * (M * dy - sum(dy) - (x - mean) * c) with
    // k = scale * invstd / M and c = invstd^2 * sum(dy * (x - mean)).
    Value k = perChannel(
        ValueRange{adaptor.getScale(), invStd}, accType,
        [&](OpBuilder &b, Location nloc, ValueRange v) -> Value {
          return divideBy(b, nloc, arith::MulFOp::create(b, nloc, v[0], v[1]),
                          count);
        });
    Value c =
        perChannel(ValueRange{sumDyCentred, invStd}, accType,
                   [](OpBuilder &b, Location nloc, ValueRange v) -> Value {
                     Value square = arith::MulFOp::create(b, nloc, v[1], v[1]);
                     return arith::MulFOp::create(b, nloc, v[0], square);
                   });
    // Synchronized: the statistics are the global batch's, so the input
    // gradient takes the replicas' sums; since the slices are equal, M
    // times their means stands for them with the local M. The parameter
    // gradients stay local (averaged with every gradient after the step).
    Value inputSumDy = sumDy;
    if (op.getSynchronized()) {
      inputSumDy = replicaMean(rewriter, op, sumDy);
      Value globalCentred = replicaMean(rewriter, op, sumDyCentred);
      c = perChannel(ValueRange{globalCentred, invStd}, accType,
                     [](OpBuilder &b, Location nloc, ValueRange v) -> Value {
                       Value square = arith::MulFOp::create(b, nloc, v[1], v[1]);
                       return arith::MulFOp::create(b, nloc, v[0], square);
                     });
    }
    Value inputGrad = batchNormInputGrad(rewriter, loc, ValueRange{dy, x, mean},
                                         k, inputSumDy, c, count, element);
    rewriter.replaceOp(op, {inputGrad, scaleGrad,
                            convertElementType(rewriter, loc, sumDy,
                                               statElement)});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Slices and dropout masks
//===----------------------------------------------------------------------===//

/// Zeros of the input's shape with the gradient inserted where the slice
/// read: a strided `tensor.insert_slice`, after reversing the axes with a
/// negative step (the insertion then starts at the lowest index read).
struct SliceBackwardLowering : OpConversionPattern<train::SliceBackwardOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::SliceBackwardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    RankedTensorType type = op.getType();
    Value grad = adaptor.getGrad();
    RankedTensorType gradType = tensorType(grad);
    Value zeros =
        zeroTensor(rewriter, loc, type.getShape(), type.getElementType());
    if (gradType.getNumElements() == 0) {
      rewriter.replaceOp(op, zeros);
      return success();
    }
    ArrayRef<int64_t> starts = op.getStarts(), steps = op.getSteps();
    int64_t rank = type.getRank();
    SmallVector<int64_t> offsets, strides;
    SmallVector<AffineExpr> reversed;
    for (int64_t i = 0; i < rank; ++i) {
      int64_t size = gradType.getDimSize(i);
      AffineExpr d = getAffineDimExpr(i, context);
      if (steps[i] > 0) {
        offsets.push_back(starts[i]);
        reversed.push_back(d);
      } else {
        offsets.push_back(starts[i] + (size - 1) * steps[i]);
        reversed.push_back(getAffineConstantExpr(size - 1, context) - d);
      }
      strides.push_back(std::abs(steps[i]));
    }
    if (llvm::any_of(steps, [](int64_t step) { return step < 0; }))
      grad = buildPointwise(
          rewriter, loc, grad, AffineMap::get(rank, 0, reversed, context),
          gradType.getShape(), gradType.getElementType(),
          [](OpBuilder &, Location, ValueRange args) { return args[0]; });
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        op, grad, zeros, getAsIndexOpFoldResult(context, offsets),
        getAsIndexOpFoldResult(context, gradType.getShape()),
        getAsIndexOpFoldResult(context, strides));
    return success();
  }
};

/// SplitMix64's finaliser (see the file comment).
Value splitMixFinalize(OpBuilder &b, Location loc, Value z) {
  auto constant = [&](uint64_t value) {
    return arith::ConstantOp::create(
        b, loc, b.getI64IntegerAttr(static_cast<int64_t>(value)));
  };
  auto xorShift = [&](Value value, int64_t shift) {
    return arith::XOrIOp::create(
        b, loc, value, arith::ShRUIOp::create(b, loc, value, constant(shift)));
  };
  z = arith::MulIOp::create(b, loc, xorShift(z, 30),
                            constant(0xBF58476D1CE4E5B9ULL));
  z = arith::MulIOp::create(b, loc, xorShift(z, 27),
                            constant(0x94D049BB133111EBULL));
  return xorShift(z, 31);
}

/// The row-major flat index of the enclosing linalg op's iteration over
/// `shape`.
Value flatIndex(OpBuilder &b, Location loc, ArrayRef<int64_t> shape) {
  Value flat;
  if (shape.empty())
    flat = arith::ConstantIndexOp::create(b, loc, 0);
  for (auto [axis, size] : llvm::enumerate(shape)) {
    Value index = linalg::IndexOp::create(b, loc, axis);
    flat = axis == 0 ? index
                     : arith::AddIOp::create(
                           b, loc,
                           arith::MulIOp::create(
                               b, loc, flat,
                               arith::ConstantIndexOp::create(b, loc, size)),
                           index);
  }
  return flat;
}

/// SplitMix64's increment.
constexpr uint64_t kSplitMixGamma = 0x9E3779B97F4A7C15ULL;

struct DropoutMaskLowering : OpConversionPattern<train::DropoutMaskOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::DropoutMaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    double ratio = op.getRatio().convertToDouble();
    int64_t threshold = static_cast<int64_t>(std::ceil(ratio * 16777216.0));
    auto i64Constant = [](OpBuilder &b, Location nloc, uint64_t value) {
      return arith::ConstantOp::create(
          b, nloc, b.getI64IntegerAttr(static_cast<int64_t>(value)));
    };
    // key = mix(seed + gamma * (stream + 1)), once per op.
    uint64_t streamStep = kSplitMixGamma * (op.getStream() + 1);
    Value key = splitMixFinalize(
        rewriter, loc,
        arith::AddIOp::create(rewriter, loc, adaptor.getSeed(),
                              i64Constant(rewriter, loc, streamStep)));
    ArrayRef<int64_t> shape = type.getShape();
    Value init = tensor::EmptyOp::create(rewriter, loc, shape, element);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
            ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(
                shape.size(), rewriter.getContext())},
            iteratorTypes(shape.size()),
            [&](OpBuilder &b, Location nloc, ValueRange) {
              // bits = mix(key + gamma * (index + 1)) for the row-major
              // flat index.
              Value flat = flatIndex(b, nloc, shape);
              Value counter = arith::AddIOp::create(
                  b, nloc,
                  arith::IndexCastOp::create(b, nloc, b.getI64Type(), flat),
                  i64Constant(b, nloc, 1));
              Value step = arith::MulIOp::create(
                  b, nloc, counter, i64Constant(b, nloc, kSplitMixGamma));
              Value bits = splitMixFinalize(
                  b, nloc, arith::AddIOp::create(b, nloc, key, step));
              // Dropped when the top 24 bits, as a fraction of 2^24, are
              // below the ratio.
              Value top = arith::ShRUIOp::create(b, nloc, bits,
                                                 i64Constant(b, nloc, 40));
              Value dropped =
                  arith::CmpIOp::create(b, nloc, arith::CmpIPredicate::ult, top,
                                        i64Constant(b, nloc, threshold));
              Value zero = floatConstant(b, nloc, element, 0.0);
              Value kept = floatConstant(b, nloc, element, 1.0 / (1.0 - ratio));
              linalg::YieldOp::create(
                  b, nloc,
                  arith::SelectOp::create(b, nloc, dropped, zero, kept)
                      .getResult());
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void traincc::codegen::populateGradientPatterns(RewritePatternSet &patterns) {
  patterns
      .add<SoftmaxCrossEntropyLowering, SoftmaxCrossEntropyBackwardLowering,
           MSELowering, MSEBackwardLowering, ReduceSumLowering, SumToLowering,
           BroadcastToLowering, ReluBackwardLowering, LeakyReluBackwardLowering,
           ClipBackwardLowering, SigmoidBackwardLowering, TanhBackwardLowering,
           ErfBackwardLowering,
           SoftmaxBackwardLowering<train::SoftmaxBackwardOp, /*isLog=*/false>,
           SoftmaxBackwardLowering<train::LogSoftmaxBackwardOp, /*isLog=*/true>,
           BNStatsLowering, BNApplyLowering, BatchNormBackwardLowering,
           SliceBackwardLowering, DropoutMaskLowering>(patterns.getContext());
}
