//===- FoldBatchNormIntoConv.cpp - evaluation BatchNorm into conv ---------===//
//
// Evaluation normalises with the running statistics, an affine map per
// channel, so a convolution followed by it is one convolution with scaled
// weights and a shifted bias. The folded weights are computed inside
// @eval_step from the current parameters (the trainer evaluates between
// optimizer steps, so they cannot be folded once at compile time), with
// train.bn_apply on [1, M, ...] views of the weight and bias: that is the
// per-channel factor scale / sqrt(variance + epsilon) the unfolded
// normalisation computes, applied to M x C/groups x k... weight elements
// instead of N x M x H x W activations.
//
//===----------------------------------------------------------------------===//

#include "traincc/Dialect/Train/IR/TrainOps.h"
#include "traincc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace traincc {
#define GEN_PASS_DEF_FOLDBATCHNORMINTOCONVPASS
#include "traincc/Transforms/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

/// `value` viewed as [1, M, rest...] flattened to rank 3 (rank 2 for a
/// vector), the layout train.bn_apply normalises per channel M.
Value channelView(OpBuilder &builder, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape = {1, type.getDimSize(0)};
  if (type.getRank() > 1)
    shape.push_back(type.getNumElements() / type.getDimSize(0));
  return train::ReshapeOp::create(
      builder, loc, RankedTensorType::get(shape, type.getElementType()), value);
}

Value reshapeTo(OpBuilder &builder, Location loc, Value value, Type type) {
  return train::ReshapeOp::create(builder, loc, type, value);
}

/// Rewrites `conv` -> `bn` into one convolution when `bn` alone reads the
/// convolution; returns whether it did.
bool foldIntoConv(train::BNApplyOp bn) {
  auto conv = bn.getInput().getDefiningOp<train::ConvOp>();
  if (!conv || !conv.getResult().hasOneUse())
    return false;
  RankedTensorType statType = bn.getMean().getType();
  RankedTensorType weightType = conv.getWeight().getType();
  if (weightType.getElementType() != statType.getElementType() ||
      weightType.getDimSize(0) != statType.getDimSize(0))
    return false;
  if (Value bias = conv.getBias();
      bias && cast<RankedTensorType>(bias.getType()) != statType)
    return false;

  // At the BatchNorm: its statistics may be read after the convolution.
  OpBuilder builder(bn);
  Location loc = bn.getLoc();
  Value zeros = train::ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(
          statType, builder.getFloatAttr(statType.getElementType(), 0.0)));
  // W * factor: bn_apply with mean 0 and bias 0.
  Value weightView = channelView(builder, loc, conv.getWeight());
  Value scaledWeight = train::BNApplyOp::create(
      builder, loc, weightView.getType(), weightView, zeros, bn.getVariance(),
      bn.getScale(), zeros, bn.getEpsilonAttr());
  Value weight = reshapeTo(builder, loc, scaledWeight, weightType);
  // (b - mean) * factor + beta: bn_apply of the bias.
  Value biasView =
      channelView(builder, loc, conv.getBias() ? conv.getBias() : zeros);
  Value shiftedBias = train::BNApplyOp::create(
      builder, loc, biasView.getType(), biasView, bn.getMean(),
      bn.getVariance(), bn.getScale(), bn.getBias(), bn.getEpsilonAttr());
  Value bias = reshapeTo(builder, loc, shiftedBias, statType);

  auto folded = train::ConvOp::create(
      builder, conv.getLoc(), conv.getType(), conv.getInput(), weight, bias,
      conv.getStridesAttr(), conv.getPadsAttr(), conv.getDilationsAttr(),
      conv.getGroupsAttr());
  bn.replaceAllUsesWith(folded.getResult());
  bn.erase();
  conv.erase();
  return true;
}

struct FoldBatchNormIntoConvPass
    : public traincc::impl::FoldBatchNormIntoConvPassBase<
          FoldBatchNormIntoConvPass> {
  using Base::Base;

  void runOnOperation() override {
    // Only evaluation: training normalises with the batch statistics.
    auto eval = getOperation().lookupSymbol<func::FuncOp>("eval_step");
    if (!eval)
      return;
    SmallVector<train::BNApplyOp> norms;
    eval.walk([&](train::BNApplyOp bn) { norms.push_back(bn); });
    for (train::BNApplyOp bn : norms)
      foldIntoConv(bn);
  }
};

} // namespace
