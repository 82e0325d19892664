//===- ConvertTrainToLinalgElementwise.cpp - pointwise ops and softmax ----===//
//
// Unary and binary elementwise ops, float casts included, become one
// `linalg.generic` each (numpy broadcasting lives in the indexing maps),
// softmax and log_softmax a max-reduction, a sum-reduction and an
// elementwise epilogue. Ops that are the identity at inference (identity,
// dropout) forward their operand.
//
//===----------------------------------------------------------------------===//

#include "ConvertTrainToLinalg.h"

#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace traincc::codegen;
namespace train = traincc::train;

namespace {

//===----------------------------------------------------------------------===//
// Binary and unary ops
//===----------------------------------------------------------------------===//

/// lhs `ArithOp` rhs.
template <typename TrainOp, typename ArithOp>
struct BinaryLowering
    : ElementwiseLowering<BinaryLowering<TrainOp, ArithOp>, TrainOp> {
  using ElementwiseLowering<BinaryLowering, TrainOp>::ElementwiseLowering;
  static Value build(OpBuilder &b, Location loc, TrainOp, ValueRange args) {
    return ArithOp::create(b, loc, args[0], args[1]);
  }
};

/// `MathOp`(x): libm's function on the CPU, libdevice's on the GPU.
template <typename TrainOp, typename MathOp>
struct UnaryMathLowering
    : ElementwiseLowering<UnaryMathLowering<TrainOp, MathOp>, TrainOp> {
  using ElementwiseLowering<UnaryMathLowering, TrainOp>::ElementwiseLowering;
  static Value build(OpBuilder &b, Location loc, TrainOp, ValueRange args) {
    return MathOp::create(b, loc, args[0]);
  }
};

/// loss * scale (* factor, a scalar the body reads from above: the GPU
/// gets it from the step's parameter block, like grad_scale elsewhere).
struct ScaleLossLowering : OpConversionPattern<train::ScaleLossOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(train::ScaleLossOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value factor = adaptor.getFactor();
    rewriter.replaceOp(
        op, buildElementwise(
                rewriter, op.getLoc(), {adaptor.getLoss(), adaptor.getScale()},
                {}, rewriter.getF32Type(),
                [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
                  Value scaled = arith::MulFOp::create(b, loc, args[0], args[1]);
                  if (factor)
                    scaled = arith::MulFOp::create(b, loc, scaled, factor);
                  return scaled;
                }));
    return success();
  }
};

// maximumf propagates NaN, as ONNX's max(x, 0) does.
struct ReluLowering : ElementwiseLowering<ReluLowering, train::ReluOp> {
  using ElementwiseLowering::ElementwiseLowering;
  static Value build(OpBuilder &b, Location loc, train::ReluOp,
                     ValueRange args) {
    Value x = args[0];
    return arith::MaximumFOp::create(b, loc, x,
                                     floatConstant(b, loc, x.getType(), 0.0));
  }
};

struct LeakyReluLowering
    : ElementwiseLowering<LeakyReluLowering, train::LeakyReluOp> {
  using ElementwiseLowering::ElementwiseLowering;
  static Value build(OpBuilder &b, Location loc, train::LeakyReluOp op,
                     ValueRange args) {
    Value x = args[0];
    Type type = x.getType();
    Value zero = floatConstant(b, loc, type, 0.0);
    Value alpha = floatConstant(b, loc, type, op.getAlpha().convertToDouble());
    Value positive =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x, zero);
    Value scaled = arith::MulFOp::create(b, loc, x, alpha);
    return arith::SelectOp::create(b, loc, positive, x, scaled);
  }
};

struct ClipLowering : ElementwiseLowering<ClipLowering, train::ClipOp> {
  using ElementwiseLowering::ElementwiseLowering;
  static Value build(OpBuilder &b, Location loc, train::ClipOp op,
                     ValueRange args) {
    Value x = args[0];
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
struct SigmoidLowering
    : ElementwiseLowering<SigmoidLowering, train::SigmoidOp> {
  using ElementwiseLowering::ElementwiseLowering;
  static Value build(OpBuilder &b, Location loc, train::SigmoidOp,
                     ValueRange args) {
    Value x = args[0];
    Type type = x.getType();
    Value one = floatConstant(b, loc, type, 1.0);
    Value exp = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
    return arith::DivFOp::create(b, loc, one,
                                 arith::AddFOp::create(b, loc, one, exp));
  }
};

// Rounds to nearest even (arith.truncf's default); f16 <-> bf16 through f32.
struct CastLowering : ElementwiseLowering<CastLowering, train::CastOp> {
  using ElementwiseLowering::ElementwiseLowering;
  static Value build(OpBuilder &b, Location loc, train::CastOp op,
                     ValueRange args) {
    return convertFloat(b, loc, args[0],
                        cast<RankedTensorType>(op.getType()).getElementType());
  }
};

/// arith.cmpf's ordered predicate (false on NaN) for `predicate`.
arith::CmpFPredicate cmpfPredicate(train::ComparePredicate predicate) {
  switch (predicate) {
  case train::ComparePredicate::Eq:
    return arith::CmpFPredicate::OEQ;
  case train::ComparePredicate::Lt:
    return arith::CmpFPredicate::OLT;
  case train::ComparePredicate::Le:
    return arith::CmpFPredicate::OLE;
  case train::ComparePredicate::Gt:
    return arith::CmpFPredicate::OGT;
  case train::ComparePredicate::Ge:
    return arith::CmpFPredicate::OGE;
  }
  llvm_unreachable("unknown comparison");
}

struct CompareLowering
    : ElementwiseLowering<CompareLowering, train::CompareOp> {
  using ElementwiseLowering::ElementwiseLowering;
  static Value build(OpBuilder &b, Location loc, train::CompareOp op,
                     ValueRange args) {
    return arith::CmpFOp::create(b, loc, cmpfPredicate(op.getPredicate()),
                                 args[0], args[1]);
  }
};

/// One linalg.generic that picks per element. A condition computed by
/// train.compare is computed again inline from the comparison's operands
/// (numpy broadcasting composes, so they broadcast straight to the result),
/// so that a bool mask is not stored between the forward pass and the
/// backward pass's selects; the comparison's own lowering is then dead
/// and the canonicalizer drops it. A constant condition is read as i8:
/// one byte per element whatever a vectorizer makes of i1 vectors.
struct SelectLowering : OpConversionPattern<train::SelectOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::SelectOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    SmallVector<Value> inputs = {adaptor.getTrueValue(),
                                 adaptor.getFalseValue()};
    std::function<Value(OpBuilder &, Location, ValueRange)> condition;
    Value cond = op.getCondition();
    DenseElementsAttr constantCond;
    if (auto compare = cond.getDefiningOp<train::CompareOp>()) {
      inputs.push_back(rewriter.getRemappedValue(compare.getLhs()));
      inputs.push_back(rewriter.getRemappedValue(compare.getRhs()));
      arith::CmpFPredicate predicate = cmpfPredicate(compare.getPredicate());
      condition = [predicate](OpBuilder &b, Location nloc, ValueRange args) {
        return arith::CmpFOp::create(b, nloc, predicate, args[2], args[3])
            .getResult();
      };
    } else if (matchPattern(cond, m_Constant(&constantCond))) {
      Type i8 = rewriter.getI8Type();
      auto bytes = constantCond.mapValues(
          i8, [](const APInt &bit) { return bit.zext(8); });
      inputs.push_back(arith::ConstantOp::create(rewriter, loc, bytes));
      condition = [i8](OpBuilder &b, Location nloc, ValueRange args) {
        Value zero = arith::ConstantOp::create(b, nloc, b.getIntegerAttr(i8, 0));
        return arith::CmpIOp::create(b, nloc, arith::CmpIPredicate::ne,
                                     args[2], zero)
            .getResult();
      };
    } else {
      inputs.push_back(adaptor.getCondition());
      condition = [](OpBuilder &, Location, ValueRange args) {
        return args[2];
      };
    }
    rewriter.replaceOp(
        op, buildElementwise(
                rewriter, loc, inputs, type.getShape(), type.getElementType(),
                [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
                  return arith::SelectOp::create(
                      b, nloc, condition(b, nloc, args), args[0], args[1]);
                }));
    return success();
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

/// A `linalg.generic` over loops (kept axes..., reduced axis) that reduces
/// `inputs`, read through `maps`, into `init`, read through `reducedMap`;
/// `combine` computes the new accumulator from the inputs and the old one.
Value buildAxisReduction(OpBuilder &b, Location loc, ValueRange inputs,
                         ArrayRef<AffineMap> maps, AffineMap reducedMap,
                         Value init, ScalarBodyFn combine) {
  int64_t rank = reducedMap.getNumDims();
  SmallVector<AffineMap> allMaps(maps);
  allMaps.push_back(reducedMap);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
             allMaps, iteratorTypes(rank - 1, 1),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc, combine(nb, nloc, args));
             })
      .getResult(0);
}

/// x - max in the accumulator type.
Value shiftByMax(OpBuilder &b, Location loc, Value x, Value max, Type accType) {
  return arith::SubFOp::create(b, loc, convertFloat(b, loc, x, accType),
                               convertFloat(b, loc, max, accType))
      .getResult();
}

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

    Value maxInit = filledTensor(rewriter, loc, reducedShape,
                                 negativeInfinity(elementType));
    Value max = buildAxisReduction(
        rewriter, loc, ValueRange{input}, {inputMap}, reducedMap, maxInit,
        [](OpBuilder &b, Location nloc, ValueRange args) -> Value {
          return arith::MaximumFOp::create(b, nloc, args[0], args[1])
              .getResult();
        });
    Value sumInit = zeroTensor(rewriter, loc, reducedShape, accType);
    Value sum = buildAxisReduction(
        rewriter, loc, ValueRange{input, max}, {inputMap, reducedMap},
        reducedMap, sumInit,
        [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
          Value exp = math::ExpOp::create(
              b, nloc, shiftByMax(b, nloc, args[0], args[1], accType));
          return arith::AddFOp::create(b, nloc, args[2], exp).getResult();
        });

    // The epilogue runs over the input's own axis order.
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
    AffineMap toReduced = keptAxesMap(rank, {axis}, context);
    Value result = buildPointwise(
        rewriter, loc, ValueRange{input, max, sum},
        {identity, toReduced, toReduced}, type.getShape(), elementType,
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value diff = shiftByMax(b, nloc, args[0], args[1], accType);
          Value value;
          if (isLog)
            value = arith::SubFOp::create(
                b, nloc, diff, math::LogOp::create(b, nloc, args[2]));
          else
            value = arith::DivFOp::create(
                b, nloc, math::ExpOp::create(b, nloc, diff), args[2]);
          return convertFloat(b, nloc, value, elementType);
        });
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
               BinaryLowering<train::MinimumOp, arith::MinimumFOp>,
               // loss * scale, a 0-d product.
               ScaleLossLowering, ReluLowering,
               LeakyReluLowering, ClipLowering, SigmoidLowering,
               UnaryMathLowering<train::TanhOp, math::TanhOp>,
               UnaryMathLowering<train::SqrtOp, math::SqrtOp>,
               UnaryMathLowering<train::ErfOp, math::ErfOp>,
               UnaryMathLowering<train::ExpOp, math::ExpOp>,
               UnaryMathLowering<train::LogOp, math::LogOp>,
               CastLowering, CompareLowering, SelectLowering,
               ForwardOperandLowering<train::IdentityOp>,
               ForwardOperandLowering<train::DropoutOp>, ConstantLowering,
               SoftmaxLowering<train::SoftmaxOp, /*isLog=*/false>,
               SoftmaxLowering<train::LogSoftmaxOp, /*isLog=*/true>>(
      patterns.getContext());
}
