//===- ConvertTrainToLinalgElementwise.cpp - pointwise ops and softmax ----===//
//
// Unary and binary elementwise ops become one `linalg.generic` each (numpy
// broadcasting lives in the indexing maps), softmax and log_softmax a
// max-reduction, a sum-reduction and an elementwise epilogue. Ops that are the
// identity at inference (identity, dropout) forward their operand.
//
//===----------------------------------------------------------------------===//

#include "ConvertTrainToLinalg.h"

#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace traincc::codegen;
namespace train = traincc::train;

namespace {

//===----------------------------------------------------------------------===//
// Binary and unary ops
//===----------------------------------------------------------------------===//

template <typename TrainOp, typename ArithOp>
struct BinaryLowering : OpConversionPattern<TrainOp> {
  using OpConversionPattern<TrainOp>::OpConversionPattern;
  using OpAdaptor = typename TrainOp::Adaptor;

  LogicalResult
  matchAndRewrite(TrainOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getType());
    rewriter.replaceOp(
        op, buildElementwise(
                rewriter, op.getLoc(),
                ValueRange{adaptor.getLhs(), adaptor.getRhs()},
                resultType.getShape(), resultType.getElementType(),
                [](OpBuilder &b, Location loc, ValueRange args) -> Value {
                  return ArithOp::create(b, loc, args[0], args[1]);
                }));
    return success();
  }
};

/// A unary op whose scalar body `Derived::build(b, loc, op, x)` computes.
template <typename Derived, typename TrainOp>
struct UnaryLowering : OpConversionPattern<TrainOp> {
  using OpConversionPattern<TrainOp>::OpConversionPattern;
  using OpAdaptor = typename TrainOp::Adaptor;

  LogicalResult
  matchAndRewrite(TrainOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getType());
    rewriter.replaceOp(
        op,
        buildElementwise(rewriter, op.getLoc(), ValueRange{adaptor.getInput()},
                         resultType.getShape(), resultType.getElementType(),
                         [&](OpBuilder &b, Location loc, ValueRange args) {
                           return Derived::build(b, loc, op, args[0]);
                         }));
    return success();
  }
};

// maximumf propagates NaN, as ONNX's max(x, 0) does.
struct ReluLowering : UnaryLowering<ReluLowering, train::ReluOp> {
  using UnaryLowering::UnaryLowering;
  static Value build(OpBuilder &b, Location loc, train::ReluOp, Value x) {
    return arith::MaximumFOp::create(b, loc, x,
                                     floatConstant(b, loc, x.getType(), 0.0));
  }
};

struct LeakyReluLowering
    : UnaryLowering<LeakyReluLowering, train::LeakyReluOp> {
  using UnaryLowering::UnaryLowering;
  static Value build(OpBuilder &b, Location loc, train::LeakyReluOp op,
                     Value x) {
    Type type = x.getType();
    Value zero = floatConstant(b, loc, type, 0.0);
    Value alpha = floatConstant(b, loc, type, op.getAlpha().convertToDouble());
    Value positive =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x, zero);
    Value scaled = arith::MulFOp::create(b, loc, x, alpha);
    return arith::SelectOp::create(b, loc, positive, x, scaled);
  }
};

struct ClipLowering : UnaryLowering<ClipLowering, train::ClipOp> {
  using UnaryLowering::UnaryLowering;
  static Value build(OpBuilder &b, Location loc, train::ClipOp op, Value x) {
    Type type = x.getType();
    if (std::optional<APFloat> min = op.getMin())
      x = arith::MaximumFOp::create(
          b, loc, x, floatConstant(b, loc, type, min->convertToDouble()));
    if (std::optional<APFloat> max = op.getMax())
      x = arith::MinimumFOp::create(
          b, loc, x, floatConstant(b, loc, type, max->convertToDouble()));
    return x;
  }
};

// 1 / (1 + exp(-x)): exp overflows to inf for very negative x, giving 0.
struct SigmoidLowering : UnaryLowering<SigmoidLowering, train::SigmoidOp> {
  using UnaryLowering::UnaryLowering;
  static Value build(OpBuilder &b, Location loc, train::SigmoidOp, Value x) {
    Type type = x.getType();
    Value one = floatConstant(b, loc, type, 1.0);
    Value exp = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
    return arith::DivFOp::create(b, loc, one,
                                 arith::AddFOp::create(b, loc, one, exp));
  }
};

struct TanhLowering : UnaryLowering<TanhLowering, train::TanhOp> {
  using UnaryLowering::UnaryLowering;
  static Value build(OpBuilder &b, Location loc, train::TanhOp, Value x) {
    return math::TanhOp::create(b, loc, x);
  }
};

/// Ops that return their operand at inference: identity, and dropout (the
/// training form, with its random mask, is built by training-step
/// construction).
template <typename TrainOp>
struct ForwardOperandLowering : OpConversionPattern<TrainOp> {
  using OpConversionPattern<TrainOp>::OpConversionPattern;
  using OpAdaptor = typename TrainOp::Adaptor;

  LogicalResult
  matchAndRewrite(TrainOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getInput());
    return success();
  }
};

struct ConstantLowering : OpConversionPattern<train::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto value = dyn_cast<TypedAttr>(op.getValue());
    if (!value)
      return rewriter.notifyMatchFailure(op, "value is not a typed attribute");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, value);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Softmax and log_softmax
//===----------------------------------------------------------------------===//

/// softmax(x) = exp(x - max) / sum(exp(x - max)) and
/// log_softmax(x) = (x - max) - log(sum(exp(x - max))) along `axis`. The
/// maximum is subtracted first so that exp never overflows; exp and the sum
/// are computed in the accumulator type (f32 for f16/bf16).
template <typename TrainOp, bool isLog>
struct SoftmaxLowering : OpConversionPattern<TrainOp> {
  using OpConversionPattern<TrainOp>::OpConversionPattern;
  using OpAdaptor = typename TrainOp::Adaptor;

  LogicalResult
  matchAndRewrite(TrainOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    auto type = cast<RankedTensorType>(op.getType());
    Type elementType = type.getElementType();
    Type accType = accumulatorType(elementType);
    int64_t rank = type.getRank();
    int64_t axis = op.getAxis();
    Value input = adaptor.getInput();

    // The reduced iteration space keeps every axis but `axis`; the loops put
    // `axis` last so that it can be the one reduction loop.
    SmallVector<int64_t> reducedShape;
    SmallVector<AffineExpr> inputExprs(rank), reducedExprs;
    for (int64_t i = 0, loop = 0; i < rank; ++i) {
      if (i == axis)
        continue;
      reducedShape.push_back(type.getDimSize(i));
      inputExprs[i] = getAffineDimExpr(loop, context);
      reducedExprs.push_back(getAffineDimExpr(loop++, context));
    }
    inputExprs[axis] = getAffineDimExpr(rank - 1, context);
    AffineMap inputMap = AffineMap::get(rank, 0, inputExprs, context);
    AffineMap reducedMap = AffineMap::get(rank, 0, reducedExprs, context);
    auto reduce = [&](ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                      Value init, auto combine) {
      SmallVector<AffineMap> maps(inputMaps);
      maps.push_back(reducedMap);
      return linalg::GenericOp::create(
                 rewriter, loc, TypeRange{init.getType()}, inputs,
                 ValueRange{init}, maps, iteratorTypes(rank - 1, 1),
                 [&](OpBuilder &b, Location nloc, ValueRange args) {
                   linalg::YieldOp::create(b, nloc, combine(b, nloc, args));
                 })
          .getResult(0);
    };

    Value maxInit = filledTensor(rewriter, loc, reducedShape,
                                 negativeInfinity(elementType));
    Value max =
        reduce(ValueRange{input}, {inputMap}, maxInit,
               [](OpBuilder &b, Location nloc, ValueRange args) {
                 return arith::MaximumFOp::create(b, nloc, args[0], args[1])
                     .getResult();
               });
    // x - max in the accumulator type.
    auto shifted = [accType](OpBuilder &b, Location nloc, Value x, Value m) {
      return arith::SubFOp::create(b, nloc, convertFloat(b, nloc, x, accType),
                                   convertFloat(b, nloc, m, accType))
          .getResult();
    };
    Value sumInit = filledTensor(rewriter, loc, reducedShape,
                                 rewriter.getFloatAttr(accType, 0.0));
    Value sum = reduce(
        ValueRange{input, max}, {inputMap, reducedMap}, sumInit,
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value exp =
              math::ExpOp::create(b, nloc, shifted(b, nloc, args[0], args[1]));
          return arith::AddFOp::create(b, nloc, args[2], exp).getResult();
        });

    // The epilogue runs over the input's own axis order.
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
    SmallVector<AffineExpr> keptAxes;
    for (int64_t i = 0; i < rank; ++i)
      if (i != axis)
        keptAxes.push_back(getAffineDimExpr(i, context));
    AffineMap toReduced = AffineMap::get(rank, 0, keptAxes, context);
    Value init =
        tensor::EmptyOp::create(rewriter, loc, type.getShape(), elementType);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{type}, ValueRange{input, max, sum},
            ValueRange{init},
            ArrayRef<AffineMap>{identity, toReduced, toReduced, identity},
            iteratorTypes(rank),
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              Value diff = shifted(b, nloc, args[0], args[1]);
              Value value;
              if (isLog)
                value = arith::SubFOp::create(
                    b, nloc, diff, math::LogOp::create(b, nloc, args[2]));
              else
                value = arith::DivFOp::create(
                    b, nloc, math::ExpOp::create(b, nloc, diff), args[2]);
              linalg::YieldOp::create(
                  b, nloc, convertFloat(b, nloc, value, elementType));
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void traincc::codegen::populateElementwisePatterns(
    RewritePatternSet &patterns) {
  patterns.add<BinaryLowering<train::AddOp, arith::AddFOp>,
               BinaryLowering<train::SubOp, arith::SubFOp>,
               BinaryLowering<train::MulOp, arith::MulFOp>,
               BinaryLowering<train::DivOp, arith::DivFOp>,
               // maximumf/minimumf propagate NaN, as ONNX Max/Min/Clip do.
               BinaryLowering<train::MaximumOp, arith::MaximumFOp>,
               BinaryLowering<train::MinimumOp, arith::MinimumFOp>, ReluLowering,
               LeakyReluLowering, ClipLowering, SigmoidLowering, TanhLowering,
               ForwardOperandLowering<train::IdentityOp>,
               ForwardOperandLowering<train::DropoutOp>, ConstantLowering,
               SoftmaxLowering<train::SoftmaxOp, /*isLog=*/false>,
               SoftmaxLowering<train::LogSoftmaxOp, /*isLog=*/true>>(
      patterns.getContext());
}
