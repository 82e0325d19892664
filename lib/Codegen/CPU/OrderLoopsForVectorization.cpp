//===- OrderLoopsForVectorization.cpp - contiguous innermost loops --------===//
//
// LLVM's loop vectorizer works on the innermost loop of a nest. The loop
// order linalg ops come with follows their mathematical definition (a
// convolution's filter window innermost, for example), which leaves the
// vectorizer three iterations and strided loads. Choosing the innermost loop
// by how operands are laid out gives it long unit-stride loops instead.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/CPU/Passes.h"
#include "traincc/Codegen/Common/LinalgBuilders.h"

#include "AffineStride.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

namespace traincc {
#define GEN_PASS_DEF_ORDERLOOPSFORVECTORIZATIONPASS
#include "traincc/Codegen/CPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

using traincc::cpu::Access;
using traincc::cpu::accessOf;
using traincc::cpu::strideOf;

namespace {

/// Higher is better: every contiguous operand helps, the stored output
/// twice as much as a loaded input; strided ones hurt as much.
int64_t scoreInnermost(linalg::GenericOp op, unsigned dim) {
  int64_t score = 0;
  for (OpOperand &operand : op->getOpOperands()) {
    int64_t weight = op.isDpsInit(&operand) ? 2 : 1;
    switch (accessOf(op.getMatchingIndexingMap(&operand), dim)) {
    case Access::Invariant:
      // An output that a reduction loop does not move is accumulated in a
      // register, as good as a contiguous store (a per-channel sum reads
      // its rows contiguously rather than the channels with a stride).
      if (op.isDpsInit(&operand) &&
          linalg::isReductionIterator(op.getIteratorTypesArray()[dim]))
        score += weight;
      break;
    case Access::Contiguous:
      score += weight;
      break;
    case Access::Strided:
      score -= weight;
      break;
    }
  }
  return score;
}

/// Whether `op` has a reduction loop and an output indexed by every loop.
bool writesEveryPointWhileSumming(linalg::GenericOp op) {
  return op.getNumReductionLoops() != 0 &&
         llvm::any_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
           AffineMap map = op.getMatchingIndexingMap(&init);
           return map.isPermutation();
         });
}

/// Lets LLVM vectorize a reduction along the innermost loop: without
/// `reassoc` it must add in loop order, one lane at a time.
void allowReassociation(linalg::GenericOp op) {
  op.getRegion().walk([](arith::AddFOp add) {
    add.setFastmath(add.getFastmath() | arith::FastMathFlags::reassoc);
  });
}

struct OrderLoopsForVectorizationPass
    : public traincc::impl::OrderLoopsForVectorizationPassBase<
          OrderLoopsForVectorizationPass> {
  using OrderLoopsForVectorizationPassBase::OrderLoopsForVectorizationPassBase;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      unsigned numLoops = op.getNumLoops();
      // Ops whose bodies were written for their loop order (the Winograd
      // transforms: short position loops innermost, unrolled whole).
      if (numLoops < 2 || op->hasAttr(traincc::codegen::kKeepLoopOrderAttrName))
        continue;
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      auto iterators = op.getIteratorTypesArray();
      // Best by (long enough, score, parallel, later in the current order).
      std::optional<unsigned> best;
      auto key = [&](unsigned dim) {
        bool longEnough =
            ShapedType::isDynamic(ranges[dim]) || ranges[dim] >= minVectorTrip;
        bool parallel = linalg::isParallelIterator(iterators[dim]);
        return std::make_tuple(longEnough, scoreInnermost(op, dim), parallel,
                               dim);
      };
      // An op that writes an output at every point while it sums over
      // some loops (traincc-fuse-sums-into-producers: partial sums over
      // an image's rows) keeps the parallel loop along which most operands
      // are contiguous innermost, however short (a pooling window's
      // offsets, for traincc-vectorize-interleaved-windows): each lane then
      // adds its terms in loop order, so the sums do not depend on how
      // LLVM would split a reduction by what the body costs.
      bool orderedSums = writesEveryPointWhileSumming(op);
      auto orderedKey = [&](unsigned dim) {
        return std::make_tuple(scoreInnermost(op, dim), dim);
      };
      for (unsigned dim = 0; dim < numLoops; ++dim) {
        if (ranges[dim] == 1)
          continue;
        if (orderedSums) {
          if (linalg::isParallelIterator(iterators[dim]) &&
              (!best || orderedKey(dim) > orderedKey(*best)))
            best = dim;
        } else if (!best || key(dim) > key(*best)) {
          best = dim;
        }
      }
      if (!best)
        continue;
      if (*best != numLoops - 1) {
        SmallVector<unsigned> order;
        for (unsigned dim = 0; dim < numLoops; ++dim)
          if (dim != *best)
            order.push_back(dim);
        order.push_back(*best);
        rewriter.setInsertionPoint(op);
        FailureOr<linalg::GenericOp> reordered =
            linalg::interchangeGenericOp(rewriter, op, order);
        if (failed(reordered))
          continue;
        op = *reordered;
      }
      if (linalg::isReductionIterator(op.getIteratorTypesArray().back()))
        allowReassociation(op);
    }
  }
};

} // namespace
