//===- TrainGradientRules.cpp - each op's reverse-mode rule ---------------===//
//
// GradientOpInterface for every differentiable Train op. A rule reads the
// adjoint of the op's result and adds the adjoint of every active operand;
// inactive operands (data, frozen parameters, constants) get nothing, so
// e.g. the first convolution of a network computes no input gradient. The
// autodiff pass (lib/Transforms/Autodiff.cpp) calls a rule only when a
// result of the op has an adjoint.
//
//===----------------------------------------------------------------------===//

#include "traincc/Dialect/Train/IR/TrainOps.h"

using namespace mlir;
using namespace traincc::train;
namespace tr = traincc::train;

#include "traincc/Dialect/Train/IR/GradientOpInterface.cpp.inc"

void tr::GradientEmitter::addGradient(Value value, Value gradient) {
  if (!isActive(value) || !gradient)
    return;
  Value &slot = gradients[value];
  slot =
      slot
          ? Value(tr::AddOp::create(builder, gradient.getLoc(), slot, gradient))
          : gradient;
}

Value tr::GradientEmitter::scalar(Location loc, Type elementType,
                                  double number) {
  auto type = RankedTensorType::get({}, elementType);
  return tr::ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(type, builder.getFloatAttr(elementType, number)));
}

Value tr::GradientEmitter::sumTo(Location loc, Value gradient, Type type) {
  if (gradient.getType() == type)
    return gradient;
  return tr::SumToOp::create(builder, loc, type, gradient);
}

namespace {

RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// All axes of a rank-`rank` tensor but the channel axis 1.
SmallVector<int64_t> nonChannelAxes(int64_t rank) {
  SmallVector<int64_t> axes = {0};
  for (int64_t i = 2; i < rank; ++i)
    axes.push_back(i);
  return axes;
}

/// A transpose swapping the last two axes.
Value transposeLastTwo(OpBuilder &builder, Location loc, Value value) {
  int64_t rank = tensorType(value).getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return tr::TransposeOp::create(builder, loc, value, perm);
}

LogicalResult convRule(tr::ConvOp op, Value dy, GradientEmitter &e) {
  OpBuilder &b = e.getBuilder();
  Location loc = op.getLoc();
  if (e.isActive(op.getInput()))
    e.addGradient(op.getInput(),
                  tr::ConvBackwardDataOp::create(
                      b, loc, op.getInput().getType(), dy, op.getWeight(),
                      op.getStridesAttr(), op.getPadsAttr(),
                      op.getDilationsAttr(), op.getGroupsAttr()));
  if (e.isActive(op.getWeight()))
    e.addGradient(op.getWeight(),
                  tr::ConvBackwardFilterOp::create(
                      b, loc, op.getWeight().getType(), op.getInput(), dy,
                      op.getStridesAttr(), op.getPadsAttr(),
                      op.getDilationsAttr(), op.getGroupsAttr()));
  if (op.getBias() && e.isActive(op.getBias()))
    e.addGradient(op.getBias(),
                  tr::ReduceSumOp::create(
                      b, loc, dy, nonChannelAxes(tensorType(dy).getRank())));
  return success();
}

LogicalResult bnApplyRule(tr::BNApplyOp op, Value dy, GradientEmitter &e) {
  // Training-mode BatchNorm: the statistics are the input's own, so the
  // input gradient includes the paths through them.
  // A model whose BatchNorm parameters are f16/bf16 normalises with its
  // f32 batch statistics cast to their type (ExplicitTrainingMode).
  auto uncast = [](Value value) -> Value {
    if (auto cast = value.getDefiningOp<tr::CastOp>())
      return cast.getInput();
    return value;
  };
  auto stats = uncast(op.getMean()).getDefiningOp<tr::BNStatsOp>();
  if (!stats || stats.getInput() != op.getInput() ||
      uncast(op.getVariance()) != stats.getVariance())
    return op.emitError("no gradient rule for bn_apply with statistics that "
                        "are not the batch statistics of its input");
  auto backward = tr::BatchNormBackwardOp::create(
      e.getBuilder(), op.getLoc(), dy, op.getInput(), op.getMean(),
      op.getVariance(), op.getScale(), op.getEpsilonAttr());
  e.addGradient(op.getInput(), backward.getInputGrad());
  e.addGradient(op.getScale(), backward.getScaleGrad());
  e.addGradient(op.getBias(), backward.getBiasGrad());
  return success();
}

/// Batch statistics used other than by their bn_apply (an imported
/// BatchNormalization's running-statistics outputs): mean = sum(x) / n and
/// var = sum((x - mean)^2) / n per channel, so dx = (dmean + 2 dvar (x -
/// mean)) / n. bn_apply's rule covers its own use of the statistics.
LogicalResult bnStatsRule(tr::BNStatsOp op, GradientEmitter &e) {
  OpBuilder &b = e.getBuilder();
  Location loc = op.getLoc();
  RankedTensorType input = tensorType(op.getInput());
  int64_t channels = input.getDimSize(1);
  double count = double(input.getNumElements()) / double(channels);
  // [C] -> [1, C, 1, ...], which broadcasts against the input, in the
  // input's type (the statistics of f16/bf16 inputs are f32).
  SmallVector<int64_t> shape(input.getRank(), 1);
  shape[1] = channels;
  auto perChannel = [&](Value vector) {
    auto vectorType = tensorType(vector);
    Value reshaped = tr::ReshapeOp::create(
        b, loc, RankedTensorType::get(shape, vectorType.getElementType()),
        vector);
    if (vectorType.getElementType() != input.getElementType())
      reshaped = tr::CastOp::create(
          b, loc, RankedTensorType::get(shape, input.getElementType()),
          reshaped);
    return reshaped;
  };
  Value sum;
  if (Value dmean = e.getGradient(op.getMean()))
    sum = tr::BroadcastToOp::create(b, loc, input, perChannel(dmean));
  if (Value dvar = e.getGradient(op.getVariance())) {
    Value centered =
        tr::SubOp::create(b, loc, op.getInput(), perChannel(op.getMean()));
    Value term = tr::MulOp::create(
        b, loc, tr::MulOp::create(b, loc, centered, perChannel(dvar)),
        e.scalar(loc, input.getElementType(), 2.0));
    sum = sum ? Value(tr::AddOp::create(b, loc, sum, term)) : term;
  }
  e.addGradient(
      op.getInput(),
      tr::MulOp::create(b, loc, sum,
                        e.scalar(loc, input.getElementType(), 1.0 / count)));
  return success();
}

LogicalResult gemmRule(tr::GemmOp op, Value dy, GradientEmitter &e) {
  OpBuilder &b = e.getBuilder();
  Location loc = op.getLoc();
  bool ta = op.getTransA(), tb = op.getTransB();
  FloatAttr alpha = op.getAlphaAttr();
  auto gemm = [&](Value lhs, Value rhs, bool transLhs, bool transRhs) {
    return Value(tr::GemmOp::create(
        b, loc, lhs, rhs, Value(), b.getBoolAttr(transLhs),
        b.getBoolAttr(transRhs), alpha, b.getF32FloatAttr(1.0f)));
  };
  // Y = alpha * op(A) op(B) + beta * C.
  if (e.isActive(op.getA()))
    e.addGradient(op.getA(), ta ? gemm(op.getB(), dy, tb, true)
                                : gemm(dy, op.getB(), false, !tb));
  if (e.isActive(op.getB()))
    e.addGradient(op.getB(), tb ? gemm(dy, op.getA(), true, ta)
                                : gemm(op.getA(), dy, !ta, false));
  if (op.getC() && e.isActive(op.getC())) {
    Value dc = dy;
    if (op.getBeta().convertToDouble() != 1.0)
      dc = tr::MulOp::create(b, loc, dy,
                             e.scalar(loc, tensorType(dy).getElementType(),
                                      op.getBeta().convertToDouble()));
    e.addGradient(op.getC(), e.sumTo(loc, dc, op.getC().getType()));
  }
  return success();
}

LogicalResult matmulRule(tr::MatMulOp op, Value dy, GradientEmitter &e) {
  OpBuilder &b = e.getBuilder();
  Location loc = op.getLoc();
  if (tensorType(op.getLhs()).getRank() < 2 ||
      tensorType(op.getRhs()).getRank() < 2)
    return op.emitError("no gradient rule for matmul with a vector operand");
  if (e.isActive(op.getLhs())) {
    Value da =
        tr::MatMulOp::create(b, loc, dy, transposeLastTwo(b, loc, op.getRhs()));
    e.addGradient(op.getLhs(), e.sumTo(loc, da, op.getLhs().getType()));
  }
  if (e.isActive(op.getRhs())) {
    Value db =
        tr::MatMulOp::create(b, loc, transposeLastTwo(b, loc, op.getLhs()), dy);
    e.addGradient(op.getRhs(), e.sumTo(loc, db, op.getRhs().getType()));
  }
  return success();
}

LogicalResult binaryRule(Operation *op, Value dy, GradientEmitter &e) {
  OpBuilder &b = e.getBuilder();
  Location loc = op->getLoc();
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  Type element = tensorType(dy).getElementType();
  auto negate = [&](Value value) {
    return Value(
        tr::MulOp::create(b, loc, value, e.scalar(loc, element, -1.0)));
  };
  Value dl, dr;
  if (isa<tr::AddOp>(op)) {
    dl = dy;
    dr = e.isActive(rhs) ? dy : Value();
  } else if (isa<tr::SubOp>(op)) {
    dl = dy;
    dr = e.isActive(rhs) ? negate(dy) : Value();
  } else if (isa<tr::MulOp>(op)) {
    dl = e.isActive(lhs) ? Value(tr::MulOp::create(b, loc, dy, rhs)) : Value();
    dr = e.isActive(rhs) ? Value(tr::MulOp::create(b, loc, dy, lhs)) : Value();
  } else {
    // y = a / b: da = dy / b, db = -dy * y / b.
    dl = e.isActive(lhs) ? Value(tr::DivOp::create(b, loc, dy, rhs)) : Value();
    if (e.isActive(rhs))
      dr = negate(tr::DivOp::create(
          b, loc, tr::MulOp::create(b, loc, dy, op->getResult(0)), rhs));
  }
  if (dl && e.isActive(lhs))
    e.addGradient(lhs, e.sumTo(loc, dl, lhs.getType()));
  if (dr)
    e.addGradient(rhs, e.sumTo(loc, dr, rhs.getType()));
  return success();
}

/// y = maximum(a, b) or minimum(a, b), as torch.maximum/minimum: the selected
/// operand takes dy, ties give each operand dy / 2. Built from existing ops:
/// relu_backward(dy, a - b) is dy exactly where a > b (a difference of
/// distinct floats is never zero), and what neither strict side takes, dy
/// minus both, is dy exactly at the ties (and where a NaN compares false).
LogicalResult selectRule(Operation *op, Value dy, GradientEmitter &e) {
  OpBuilder &b = e.getBuilder();
  Location loc = op->getLoc();
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  if (!e.isActive(lhs) && !e.isActive(rhs))
    return success();
  bool isMax = isa<tr::MaximumOp>(op);
  Value lhsMinusRhs = tr::SubOp::create(b, loc, lhs, rhs);
  Value rhsMinusLhs = tr::SubOp::create(b, loc, rhs, lhs);
  Value toLhs =
      tr::ReluBackwardOp::create(b, loc, dy, isMax ? lhsMinusRhs : rhsMinusLhs);
  Value toRhs =
      tr::ReluBackwardOp::create(b, loc, dy, isMax ? rhsMinusLhs : lhsMinusRhs);
  Value tied =
      tr::SubOp::create(b, loc, tr::SubOp::create(b, loc, dy, toLhs), toRhs);
  Value half = tr::MulOp::create(
      b, loc, tied, e.scalar(loc, tensorType(dy).getElementType(), 0.5));
  if (e.isActive(lhs))
    e.addGradient(lhs, e.sumTo(loc, tr::AddOp::create(b, loc, toLhs, half),
                               lhs.getType()));
  if (e.isActive(rhs))
    e.addGradient(rhs, e.sumTo(loc, tr::AddOp::create(b, loc, toRhs, half),
                               rhs.getType()));
  return success();
}

LogicalResult concatRule(tr::ConcatOp op, Value dy, GradientEmitter &e) {
  RankedTensorType type = tensorType(dy);
  int64_t axis = op.getAxis(), offset = 0;
  for (Value input : op.getInputs()) {
    RankedTensorType inputType = tensorType(input);
    if (e.isActive(input)) {
      SmallVector<int64_t> starts(type.getRank(), 0);
      SmallVector<int64_t> ends(type.getShape());
      SmallVector<int64_t> steps(type.getRank(), 1);
      starts[axis] = offset;
      ends[axis] = offset + inputType.getDimSize(axis);
      e.addGradient(input, tr::SliceOp::create(e.getBuilder(), op.getLoc(), dy,
                                               starts, ends, steps));
    }
    offset += inputType.getDimSize(axis);
  }
  return success();
}

LogicalResult globalAvgPoolRule(tr::GlobalAvgPoolOp op, Value dy,
                                GradientEmitter &e) {
  OpBuilder &b = e.getBuilder();
  RankedTensorType input = op.getInput().getType();
  int64_t spatial =
      input.getNumElements() / (input.getDimSize(0) * input.getDimSize(1));
  Value spread = tr::BroadcastToOp::create(b, op.getLoc(), input, dy);
  e.addGradient(op.getInput(),
                tr::MulOp::create(b, op.getLoc(), spread,
                                  e.scalar(op.getLoc(), input.getElementType(),
                                           1.0 / double(spatial))));
  return success();
}

LogicalResult lossRule(Operation *op, Value dl, GradientEmitter &e) {
  OpBuilder &b = e.getBuilder();
  if (auto ce = dyn_cast<tr::SoftmaxCrossEntropyOp>(op)) {
    if (ce.getReduction() != tr::Reduction::Mean)
      return op->emitError("only a mean loss can be differentiated");
    e.addGradient(ce.getLogits(),
                  tr::SoftmaxCrossEntropyBackwardOp::create(
                      b, op->getLoc(), dl, ce.getLogits(), ce.getLabels()));
    return success();
  }
  auto mse = cast<tr::MSEOp>(op);
  if (mse.getReduction() != tr::Reduction::Mean)
    return op->emitError("only a mean loss can be differentiated");
  e.addGradient(mse.getPrediction(),
                tr::MSEBackwardOp::create(
                    b, op->getLoc(), dl, mse.getPrediction(), mse.getTarget()));
  if (e.isActive(mse.getTarget()))
    e.addGradient(
        mse.getTarget(),
        tr::MulOp::create(
            b, op->getLoc(),
            tr::MSEBackwardOp::create(b, op->getLoc(), dl, mse.getPrediction(),
                                      mse.getTarget()),
            e.scalar(op->getLoc(), tensorType(dl).getElementType(), -1.0)));
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Forward compute ops
//===----------------------------------------------------------------------===//

LogicalResult ConvOp::emitGradient(GradientEmitter &e) {
  return convRule(*this, e.getGradient(getResult()), e);
}

LogicalResult ConvBackwardDataOp::emitGradient(GradientEmitter &e) {
  // Linear in both operands: y[p] = sum over q, k with p = q s + k d - pad
  // of grad[q] w[k].
  Value dy = e.getGradient(getResult());
  OpBuilder &b = e.getBuilder();
  if (e.isActive(getGrad()))
    e.addGradient(getGrad(),
                  ConvOp::create(b, getLoc(), getGrad().getType(), dy,
                                 getWeight(), Value(), getStridesAttr(),
                                 getPadsAttr(), getDilationsAttr(),
                                 getGroupsAttr()));
  if (e.isActive(getWeight()))
    e.addGradient(getWeight(),
                  ConvBackwardFilterOp::create(
                      b, getLoc(), getWeight().getType(), dy, getGrad(),
                      getStridesAttr(), getPadsAttr(), getDilationsAttr(),
                      getGroupsAttr()));
  return success();
}

LogicalResult GemmOp::emitGradient(GradientEmitter &e) {
  return gemmRule(*this, e.getGradient(getResult()), e);
}

LogicalResult MatMulOp::emitGradient(GradientEmitter &e) {
  return matmulRule(*this, e.getGradient(getResult()), e);
}

LogicalResult AddOp::emitGradient(GradientEmitter &e) {
  return binaryRule(*this, e.getGradient(getResult()), e);
}

LogicalResult SubOp::emitGradient(GradientEmitter &e) {
  return binaryRule(*this, e.getGradient(getResult()), e);
}

LogicalResult MulOp::emitGradient(GradientEmitter &e) {
  return binaryRule(*this, e.getGradient(getResult()), e);
}

LogicalResult DivOp::emitGradient(GradientEmitter &e) {
  return binaryRule(*this, e.getGradient(getResult()), e);
}

LogicalResult MaximumOp::emitGradient(GradientEmitter &e) {
  return selectRule(*this, e.getGradient(getResult()), e);
}

LogicalResult MinimumOp::emitGradient(GradientEmitter &e) {
  return selectRule(*this, e.getGradient(getResult()), e);
}

/// dy goes to the picked operand, zero to the other, each summed back to
/// its own (broadcast) shape; the condition gets no gradient.
LogicalResult SelectOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  OpBuilder &b = e.getBuilder();
  Location loc = getLoc();
  Value zero = e.scalar(loc, tensorType(dy).getElementType(), 0.0);
  if (e.isActive(getTrueValue()))
    e.addGradient(getTrueValue(),
                  e.sumTo(loc, SelectOp::create(b, loc, getCondition(), dy, zero),
                          getTrueValue().getType()));
  if (e.isActive(getFalseValue()))
    e.addGradient(getFalseValue(),
                  e.sumTo(loc, SelectOp::create(b, loc, getCondition(), zero, dy),
                          getFalseValue().getType()));
  return success();
}

LogicalResult CastOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  e.addGradient(getInput(), CastOp::create(e.getBuilder(), getLoc(),
                                           getInput().getType(), dy));
  return success();
}

LogicalResult ScaleLossOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  // Linear in the loss: the gradient is the same product.
  e.addGradient(getLoss(), ScaleLossOp::create(e.getBuilder(), getLoc(), dy,
                                               getScale(), getFactor()));
  return success();
}

LogicalResult ReluOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  // relu(x) > 0 exactly where x > 0 (NaN stays NaN): masking by the output
  // leaves the input with the relu as its only user, so the op that
  // produces it (a BatchNorm's apply) fuses with the relu into one pass.
  e.addGradient(getInput(), ReluBackwardOp::create(e.getBuilder(), getLoc(), dy,
                                                   getResult()));
  return success();
}

LogicalResult LeakyReluOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  e.addGradient(getInput(),
                LeakyReluBackwardOp::create(e.getBuilder(), getLoc(), dy,
                                            getInput(), getAlphaAttr()));
  return success();
}

LogicalResult ClipOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  e.addGradient(getInput(),
                ClipBackwardOp::create(e.getBuilder(), getLoc(), dy, getInput(),
                                       getMinAttr(), getMaxAttr()));
  return success();
}

LogicalResult SigmoidOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  e.addGradient(getInput(), SigmoidBackwardOp::create(e.getBuilder(), getLoc(),
                                                      dy, getResult()));
  return success();
}

LogicalResult TanhOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  e.addGradient(getInput(), TanhBackwardOp::create(e.getBuilder(), getLoc(), dy,
                                                   getResult()));
  return success();
}

LogicalResult SqrtOp::emitGradient(GradientEmitter &e) {
  // d sqrt(x) = dy / (2 y): y + y is exact, so no constant is needed.
  Value dy = e.getGradient(getResult());
  OpBuilder &b = e.getBuilder();
  Value twice = AddOp::create(b, getLoc(), getResult(), getResult());
  e.addGradient(getInput(), DivOp::create(b, getLoc(), dy, twice));
  return success();
}

LogicalResult ErfOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  e.addGradient(getInput(), ErfBackwardOp::create(e.getBuilder(), getLoc(), dy,
                                                  getInput()));
  return success();
}

LogicalResult ExpOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  e.addGradient(getInput(),
                MulOp::create(e.getBuilder(), getLoc(), dy, getResult()));
  return success();
}

LogicalResult LogOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  e.addGradient(getInput(),
                DivOp::create(e.getBuilder(), getLoc(), dy, getInput()));
  return success();
}

LogicalResult SoftmaxOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  e.addGradient(getInput(),
                SoftmaxBackwardOp::create(e.getBuilder(), getLoc(), dy,
                                          getResult(), getAxisAttr()));
  return success();
}

LogicalResult LogSoftmaxOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  e.addGradient(getInput(),
                LogSoftmaxBackwardOp::create(e.getBuilder(), getLoc(), dy,
                                             getResult(), getAxisAttr()));
  return success();
}

LogicalResult MaxPoolOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  e.addGradient(getInput(),
                MaxPoolBackwardOp::create(
                    e.getBuilder(), getLoc(), getInput().getType(), dy,
                    getInput(), getKernelShapeAttr(), getStridesAttr(),
                    getPadsAttr(), getDilationsAttr(), getCeilModeAttr()));
  return success();
}

LogicalResult AvgPoolOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  e.addGradient(getInput(),
                AvgPoolBackwardOp::create(
                    e.getBuilder(), getLoc(), getInput().getType(), dy,
                    getKernelShapeAttr(), getStridesAttr(), getPadsAttr(),
                    getCeilModeAttr(), getCountIncludePadAttr()));
  return success();
}

LogicalResult GlobalAvgPoolOp::emitGradient(GradientEmitter &e) {
  return globalAvgPoolRule(*this, e.getGradient(getResult()), e);
}

/// Reshape and flatten: the gradient is the result gradient under the
/// input's shape.
static LogicalResult reshapeRule(Operation *op, GradientEmitter &e) {
  Value input = op->getOperand(0);
  Value dy = e.getGradient(op->getResult(0));
  e.addGradient(input, ReshapeOp::create(e.getBuilder(), op->getLoc(),
                                         input.getType(), dy));
  return success();
}

LogicalResult ReshapeOp::emitGradient(GradientEmitter &e) {
  return reshapeRule(*this, e);
}

LogicalResult FlattenOp::emitGradient(GradientEmitter &e) {
  return reshapeRule(*this, e);
}

LogicalResult TransposeOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  SmallVector<int64_t> inverse(getPerm().size());
  for (auto [index, axis] : llvm::enumerate(getPerm()))
    inverse[axis] = index;
  e.addGradient(getInput(),
                TransposeOp::create(e.getBuilder(), getLoc(), dy, inverse));
  return success();
}

LogicalResult ConcatOp::emitGradient(GradientEmitter &e) {
  return concatRule(*this, e.getGradient(getResult()), e);
}

LogicalResult SliceOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  e.addGradient(getInput(),
                SliceBackwardOp::create(
                    e.getBuilder(), getLoc(), getInput().getType(), dy,
                    getStartsAttr(), getEndsAttr(), getStepsAttr()));
  return success();
}

LogicalResult SumToOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  e.addGradient(getInput(), BroadcastToOp::create(e.getBuilder(), getLoc(),
                                                  getInput().getType(), dy));
  return success();
}

LogicalResult BroadcastToOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  e.addGradient(getInput(), e.sumTo(getLoc(), dy, getInput().getType()));
  return success();
}

LogicalResult GatherOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  e.addGradient(getData(), GatherBackwardOp::create(
                               e.getBuilder(), getLoc(), getData().getType(),
                               dy, getIndices(), getAxisAttr()));
  return success();
}

LogicalResult ReduceMaxOp::emitGradient(GradientEmitter &e) {
  Value dy = e.getGradient(getResult());
  e.addGradient(getInput(), ReduceMaxBackwardOp::create(
                                e.getBuilder(), getLoc(), getInput().getType(),
                                dy, getInput(), getResult()));
  return success();
}

LogicalResult IdentityOp::emitGradient(GradientEmitter &e) {
  e.addGradient(getInput(), e.getGradient(getResult()));
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxCrossEntropyOp::emitGradient(GradientEmitter &e) {
  return lossRule(*this, e.getGradient(getResult()), e);
}

LogicalResult MSEOp::emitGradient(GradientEmitter &e) {
  return lossRule(*this, e.getGradient(getResult()), e);
}

//===----------------------------------------------------------------------===//
// BatchNorm in training mode
//===----------------------------------------------------------------------===//

LogicalResult BNApplyOp::emitGradient(GradientEmitter &e) {
  return bnApplyRule(*this, e.getGradient(getResult()), e);
}

LogicalResult BNStatsOp::emitGradient(GradientEmitter &e) {
  return bnStatsRule(*this, e);
}
