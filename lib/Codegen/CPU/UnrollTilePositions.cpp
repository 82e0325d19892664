//===- UnrollTilePositions.cpp - Winograd transforms as straight code -----===//
//
// A Winograd transform computes each of a tile's 4x4 (or 2x2) values by
// its own formula, chosen by selects on the innermost loop indices. LLVM
// does not unroll both short loops (it turns the innermost into a 4-wide
// scatter and keeps the selects): 16 times the arithmetic of the unrolled
// form, which shares the tile's loads and folds every select. Unrolled here,
// the formulas are constant-indexed straight code.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/CPU/Passes.h"
#include "traincc/Codegen/Common/LinalgBuilders.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

namespace traincc {
#define GEN_PASS_DEF_UNROLLTILEPOSITIONSPASS
#include "traincc/Codegen/CPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;

namespace {

struct UnrollTilePositionsPass
    : public traincc::impl::UnrollTilePositionsPassBase<
          UnrollTilePositionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op->hasAttr(traincc::codegen::kKeepLoopOrderAttrName) &&
          op.hasPureBufferSemantics())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToLoops(rewriter, op);
      if (failed(loops)) {
        op.emitError("could not lower a tile transform to loops");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
      // Innermost first: the position loops, then the run of short tile
      // loops outside them if the whole run fits in maxCopies copies of
      // the body. LLVM vectorizes what is left: a row of 8 tiles with
      // interleaved loads, or the loop over images when an image's 2x2
      // tiles are unrolled (4x4 tiles unrolled spill; a 4x4 image half
      // unrolled is slower than not at all).
      SmallVector<scf::ForOp> shortLoops;
      int64_t copies = 1;
      for (Operation *loop : llvm::reverse(*loops)) {
        auto forOp = dyn_cast<scf::ForOp>(loop);
        std::optional<APInt> trips =
            forOp ? forOp.getStaticTripCount() : std::nullopt;
        if (!trips || trips->getSExtValue() > maxTrips)
          break;
        shortLoops.push_back(forOp);
        copies *= trips->getSExtValue();
      }
      size_t count = copies <= maxCopies
                         ? shortLoops.size()
                         : std::min<size_t>(shortLoops.size(), positionLoops);
      for (scf::ForOp forOp : ArrayRef(shortLoops).take_front(count))
        if (failed(loopUnrollFull(forOp)))
          break;
    }
  }
};

} // namespace
