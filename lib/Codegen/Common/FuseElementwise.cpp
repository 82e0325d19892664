//===- FuseElementwise.cpp - elementwise producers into consumers ---------===//
//
// Upstream's elementwise fusion patterns do the rewriting; this pass decides
// which producers may fuse (mayFuse: the cost model of Passes.td) and
// applies the patterns to a fixed point, so a chain fuses step by step into
// its last consumer. A consumer that reads its producer through a
// collapse_shape is expanded to the producer's loops first
// (mayExpandConsumer), so that the two fuse.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace traincc {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "traincc/Codegen/Common/Passes.h.inc"
} // namespace traincc

using namespace mlir;

namespace {

/// Whether every op of `producer`'s body is cheap enough to repeat for each
/// point of a larger consumer: additions, multiplications, comparisons,
/// selections and conversions, not divisions or transcendental functions.
bool isCheapToRepeat(linalg::GenericOp producer) {
  return llvm::all_of(producer.getBody()->without_terminator(),
                      [](Operation &op) {
                        return isa<arith::AddFOp, arith::SubFOp,
                                   arith::MulFOp, arith::NegFOp,
                                   arith::MaximumFOp, arith::MinimumFOp,
                                   arith::CmpFOp, arith::SelectOp,
                                   arith::ExtFOp, arith::TruncFOp,
                                   arith::ConstantOp>(op);
                      });
}

/// Whether the producer of `operand` may be inlined into its consumer: the
/// consumer is the producer's only user, so nothing is materialised for
/// someone else, and each producer element is computed once (the consumer
/// reads it through a permutation) or is cheap to compute again at every
/// point that reads it (a broadcast of a per-channel scale: repeating a
/// square root per element would cost more than the small tensor saves).
bool mayFuse(OpOperand *operand) {
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  if (!producer || !producer->hasOneUse())
    return false;
  auto consumer = cast<linalg::LinalgOp>(operand->getOwner());
  return consumer.getMatchingIndexingMap(operand).isPermutation() ||
         isCheapToRepeat(producer);
}

/// Whether an elementwise consumer of `operand`, a collapse_shape of what a
/// generic computes for it alone, may take on the expanded iteration space,
/// so that it fuses with that generic: the mask of max pooling's gradient
/// (computed per 2x2 window position) and ReLU's mask (per pixel) become
/// one pass. Reductions keep their shape: the GPU mapping picks their
/// kernels by the loops they have.
bool mayExpandConsumer(OpOperand *operand) {
  auto collapse = operand->get().getDefiningOp<tensor::CollapseShapeOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  if (!collapse || !consumer || !collapse->hasOneUse() ||
      consumer.getNumReductionLoops() != 0)
    return false;
  auto producer = collapse.getSrc().getDefiningOp<linalg::GenericOp>();
  return producer && producer->hasOneUse() &&
         producer.getNumReductionLoops() == 0;
}

/// Gives each state result of `func` that a generic computes into a
/// `tensor.empty` (RemoveOutsDependency's work) its parameter's argument
/// back as destination.
void restoreStateDestinations(func::FuncOp func) {
  llvm::DenseMap<Attribute, BlockArgument> arguments;
  for (BlockArgument arg : func.getArguments())
    if (Attribute state = func.getArgAttr(arg.getArgNumber(), "train.state"))
      arguments[state] = arg;
  func.walk([&](func::ReturnOp ret) {
    for (OpOperand &operand : ret->getOpOperands()) {
      Attribute state =
          func.getResultAttr(operand.getOperandNumber(), "train.state");
      auto result = dyn_cast<OpResult>(operand.get());
      auto generic =
          result ? dyn_cast<linalg::GenericOp>(result.getOwner()) : nullptr;
      BlockArgument arg = state ? arguments.lookup(state) : BlockArgument();
      if (!generic || !arg)
        continue;
      OpOperand *init = generic.getDpsInitOperand(result.getResultNumber());
      auto empty = init->get().getDefiningOp<tensor::EmptyOp>();
      if (!empty || empty.getType() != arg.getType())
        continue;
      init->set(arg);
      if (empty->use_empty())
        empty->erase();
    }
  });
}

struct FuseElementwisePass
    : public traincc::impl::FuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, mayFuse);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns,
                                                      mayExpandConsumer);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    for (auto func : getOperation().getOps<func::FuncOp>())
      restoreStateDestinations(func);
  }
};

} // namespace
