//===- FuseConvChannelSums.cpp - BatchNorm's sums in the conv's epilogue --===//
//
// A training BatchNorm after a convolution starts with the per-channel sum
// of the convolution's output (its mean; BNStatsLowering): a loop nest that
// reads the whole output back from memory right after the convolution
// stored it. traincc-vectorize-contractions holds each vector of outputs
// in a register when it stores it, so it can add the vector to the sum
// there for the price of an add. The sums cannot be one linalg op with the
// convolution (they need its finished outputs), so this pass gives the
// convolution a second output marked traincc.channel_sums that the
// vectorizer fills, and leaves the sum a small second stage over it.
//
// The partial sums are per [image, channel]: each is computed by the one
// thread that owns that image (the convolution is split across threads
// along its batch loop), from vectors in an order that only the static
// register tile decides; the second stage then adds the images in order.
// So the result does not depend on the thread count, and it differs from
// the unfused sum only in where it rounds.
//
// The variance that follows, sum((x - mean)^2) around the finished mean,
// is a second pass over the output. It moves into the epilogue too, as
// partial moments: each tile's vectors of one [n, c] give their count,
// mean and squares around that mean (two passes over registers), merged
// into the running [n, c] moments with Chan et al.'s parallel formula
// (M2 += M2' + delta^2 * n * n' / (n + n')); the second stage adds each
// image's squares around the batch's mean, m2 + count * (its mean -
// mean)^2. No step subtracts two large sums, so a channel whose mean is
// far from zero keeps its variance, where E[x^2] - mean^2 in f32 cancels
// (mean 1000, std 1: every digit). A shift by a sample known when the
// sums start would save the merge's few scalar operations per tile, but
// the only sample known first is a corner output, which zero padding
// pulls away from the mean (by 5/9 of it at the corner of a 3x3 window),
// leaving most of the cancellation. The merge order is fixed like the
// sums', so the result does not depend on the thread count either.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/CPU/Passes.h"
#include "traincc/Codegen/Common/ChannelSums.h"

#include "ChannelSums.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace traincc {
#define GEN_PASS_DEF_FUSECONVCHANNELSUMSPASS
#include "traincc/Codegen/CPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using traincc::cpu::isMultiplyAdd;
using traincc::cpu::kChannelMomentsAttrName;
using traincc::cpu::kChannelSumsAttrName;

namespace {

/// Whether `conv` can compute [batch, channel] sums of its output in its
/// epilogue: a multiply-add over a static output of rank 3 or more whose
/// first two indices are parallel loops other than the innermost one (the
/// vectors' loop) and whose every index is one loop.
bool hasChannelEpilogue(linalg::GenericOp conv) {
  if (!isMultiplyAdd(conv))
    return false;
  OpOperand *init = conv.getDpsInitOperand(0);
  auto type = cast<MemRefType>(init->get().getType());
  AffineMap map = conv.getMatchingIndexingMap(init);
  if (type.getRank() < 3 || !type.hasStaticShape() ||
      !map.isProjectedPermutation())
    return false;
  unsigned inner = conv.getNumLoops() - 1;
  auto iterators = conv.getIteratorTypesArray();
  if (!linalg::isParallelIterator(iterators[inner]))
    return false;
  for (unsigned result : {0u, 1u}) {
    unsigned dim = cast<AffineDimExpr>(map.getResult(result)).getPosition();
    if (dim == inner || !linalg::isParallelIterator(iterators[dim]))
      return false;
  }
  return true;
}

/// `conv` with the zeroed `sums` as marked second output, `sum` a
/// reduction of `sums` over the batch, in order; with `variance`, also
/// the zeroed moments `counts` and `m2`, and `variance` their reduction.
void fuse(linalg::GenericOp conv, linalg::GenericOp sum,
          linalg::GenericOp variance) {
  MLIRContext *context = conv.getContext();
  Location loc = conv.getLoc();
  OpBuilder b(conv);
  Value output = conv.getDpsInitOperand(0)->get();
  auto outType = cast<MemRefType>(output.getType());
  Type f32 = b.getF32Type();
  auto sumsType =
      MemRefType::get({outType.getDimSize(0), outType.getDimSize(1)}, f32);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  SmallVector<Value> partials;
  for (int i = 0, e = variance ? 3 : 1; i < e; ++i) {
    partials.push_back(memref::AllocOp::create(b, loc, sumsType));
    linalg::FillOp::create(b, loc, ValueRange{zero},
                           ValueRange{partials.back()});
  }

  AffineMap outMap = conv.getIndexingMapsArray().back();
  AffineMap sumsMap = AffineMap::get(
      conv.getNumLoops(), 0, {outMap.getResult(0), outMap.getResult(1)},
      context);
  // Marks of earlier passes (traincc.zero_init) stay.
  linalg::GenericOp fused = traincc::codegen::addChannelSumsOutput(
      conv, partials, SmallVector<AffineMap>(partials.size(), sumsMap),
      kChannelSumsAttrName);
  if (variance)
    fused->setAttr(kChannelMomentsAttrName, UnitAttr::get(context));

  // The second stages: images in order, channels the vectors' loop.
  linalg::GenericOp stage =
      traincc::codegen::replaceChannelSum(sum, partials[0]);
  if (variance)
    stage = traincc::codegen::replaceChannelVariance(variance, partials[0],
                                                     partials[1], partials[2]);
  b.setInsertionPointAfter(stage);
  for (Value buffer : partials)
    memref::DeallocOp::create(b, stage.getLoc(), buffer);
}

/// The multiply-adds that make each output of `conv`: the product of its
/// reduction loops' ranges (static, as hasChannelEpilogue's outputs are).
int64_t termsPerOutput(linalg::GenericOp conv) {
  int64_t terms = 1;
  for (auto [range, iterator] : llvm::zip(conv.getStaticLoopRanges(),
                                          conv.getIteratorTypesArray()))
    if (linalg::isReductionIterator(iterator))
      terms *= ShapedType::isDynamic(range) ? 1 : range;
  return terms;
}

struct FuseConvChannelSumsPass
    : public traincc::impl::FuseConvChannelSumsPassBase<
          FuseConvChannelSumsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> convs;
    getOperation().walk([&](linalg::GenericOp op) {
      if (hasChannelEpilogue(op))
        convs.push_back(op);
    });
    for (linalg::GenericOp conv : convs) {
      linalg::GenericOp sum = traincc::codegen::findChannelSum(conv);
      if (!sum)
        continue;
      linalg::GenericOp variance;
      if (termsPerOutput(conv) >= minVarianceTerms)
        variance = traincc::codegen::findChannelVariance(conv, sum);
      fuse(conv, sum, variance);
    }
  }
};

} // namespace
