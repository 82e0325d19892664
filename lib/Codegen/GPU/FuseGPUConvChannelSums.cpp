//===- FuseGPUConvChannelSums.cpp - BatchNorm's sums in the tiled conv ----===//
//
// A training BatchNorm after a convolution starts with the per-channel sum
// of the convolution's output (its mean): on the GPU, a reduction kernel
// that reads the whole output back right after the convolution's kernel
// stored it. The tiled convolution holds each output in a register before
// it stores it, so it can sum them there; this pass marks the convolutions
// that traincc-tile-gpu-contractions will tile, giving each a second
// output of partial sums, and leaves the sum a small second stage over
// those.
//
// No float atomics: each block of the tiled kernel covers one tile of
// kMaxGemmTile output positions along M (images and pixels flattened) for
// a range of channels, so it writes one partial per (M tile, channel) that
// no other block touches, summed in an order the kernel fixes; the second
// stage adds the tiles in order. Results are the same on every run.
//
// The variance that follows the mean moves into the epilogue the same way,
// as partial moments per (M tile, channel): count, sum and squares around
// the partial's own mean, merged across a block's threads with Chan et
// al.'s formula, and a second stage that adds each tile's squares around
// the batch's mean (traincc-fuse-conv-channel-sums says why: no large sums
// cancel when |mean| >> std).
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/Common/ChannelSums.h"
#include "traincc/Codegen/GPU/Passes.h"

#include "GemmView.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

#include <vector>

namespace traincc {
#define GEN_PASS_DEF_FUSEGPUCONVCHANNELSUMSPASS
#include "traincc/Codegen/GPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc::gpu_kernels;

namespace {

/// The loop of `op`'s output channel (its output's second index) if
/// traincc-tile-gpu-contractions gives `op` a tiled kernel whose blocks
/// each cover one M tile of some channels: the channel is N's only loop,
/// there are no batch loops (so every other output index is M's), it is
/// not split along K first, and the output is f32, as the sums are.
std::optional<unsigned> tiledChannel(linalg::LinalgOp op,
                                     const GemmView &view, int64_t minWork) {
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  // A split-K contraction keeps its split: its partial GEMMs give the GPU
  // many more blocks than tiles of the whole would.
  if (!worthTiling(view, minWork) || splitsAlongK(op) || !view.batch.empty() ||
      view.n.size() != 1 || outMap.getNumResults() < 2 ||
      !cast<MemRefType>(init->get().getType()).getElementType().isF32())
    return std::nullopt;
  auto channel = dyn_cast<AffineDimExpr>(outMap.getResult(1));
  if (!channel || channel.getPosition() != view.n.front())
    return std::nullopt;
  return channel.getPosition();
}

/// `conv` with a marked second output of partials (kChannelPartialsAttrName)
/// and `sum` their sum over the M tiles, in order; with `variance`, also
/// the moments' outputs counts and m2 (kChannelMomentsAttrName) and
/// `variance` their reduction.
void fuse(linalg::LinalgOp conv, const GemmView &view, unsigned channel,
          linalg::GenericOp sum, linalg::GenericOp variance) {
  IRRewriter rewriter(conv);
  auto generic = dyn_cast<linalg::GenericOp>(conv.getOperation());
  if (!generic) {
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, conv);
    if (failed(generalized))
      return;
    generic = *generalized;
  }
  MLIRContext *context = generic.getContext();
  Location loc = generic.getLoc();
  int64_t sizeM = view.size(view.m);
  int64_t tiles =
      sizeM > kMaxGemmTile ? llvm::divideCeil(sizeM, kMaxGemmTile) : 1;
  auto type = MemRefType::get({tiles, view.ranges[channel]},
                              rewriter.getF32Type());
  rewriter.setInsertionPoint(generic);
  SmallVector<Value> partials;
  for (int i = 0, e = variance ? 3 : 1; i < e; ++i)
    partials.push_back(memref::AllocOp::create(rewriter, loc, type));

  linalg::GenericOp fused = traincc::codegen::addChannelSumsOutput(
      generic, partials,
      SmallVector<AffineMap>(partials.size(),
                             channelPartialsMap(view, channel, context)),
      kChannelPartialsAttrName);
  traincc::codegen::replaceChannelSum(sum, partials[0]);
  if (!variance)
    return;
  fused->setAttr(kChannelMomentsAttrName, rewriter.getUnitAttr());
  traincc::codegen::replaceChannelVariance(variance, partials[0], partials[1],
                                           partials[2]);
}

struct FuseGPUConvChannelSumsPass
    : public traincc::impl::FuseGPUConvChannelSumsPassBase<
          FuseGPUConvChannelSumsPass> {
  using FuseGPUConvChannelSumsPassBase::FuseGPUConvChannelSumsPassBase;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> convs =
        stepContractionCandidates(getOperation());
    // Found first, fused after: fusing erases the sums, and a variance's
    // sum (two inputs, reductions) is on the list too.
    struct Fusion {
      linalg::LinalgOp conv;
      GemmView view;
      unsigned channel;
      linalg::GenericOp sum, variance;
    };
    std::vector<Fusion> fusions;
    for (linalg::LinalgOp conv : convs) {
      std::optional<GemmView> view = analyzeContraction(conv);
      if (!view)
        continue;
      std::optional<unsigned> channel = tiledChannel(conv, *view, minWork);
      if (!channel)
        continue;
      if (linalg::GenericOp sum = traincc::codegen::findChannelSum(conv))
        fusions.push_back({conv, *view, *channel, sum,
                           traincc::codegen::findChannelVariance(conv, sum)});
    }
    for (Fusion &fusion : fusions)
      fuse(fusion.conv, fusion.view, fusion.channel, fusion.sum,
           fusion.variance);
  }
};

} // namespace
