//===- OrderGPULoops.cpp - reduction loops inside each thread -------------===//
//
// traincc-map-to-gpu gives each iteration of a loop nest's outer
// scf.parallel a thread; convert-linalg-to-parallel-loops puts in that
// scf.parallel only the parallel loops before the first reduction loop.
// Interchanging a generic's loops so that its reductions come last makes
// every parallel loop a thread dimension.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

namespace traincc {
#define GEN_PASS_DEF_ORDERGPULOOPSPASS
#include "traincc/Codegen/GPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;

namespace {

/// The interchange that puts `op`'s parallel loops first and its reduction
/// loops last, each group in its order (new loop i is old loop
/// result[i]); empty when the reductions are already last.
SmallVector<unsigned> reductionsLast(linalg::GenericOp op) {
  SmallVector<unsigned> parallel, reductions;
  for (auto [loop, iterator] : llvm::enumerate(op.getIteratorTypesArray()))
    (linalg::isParallelIterator(iterator) ? parallel : reductions)
        .push_back(loop);
  if (reductions.empty() || reductions.front() > parallel.back())
    return {};
  llvm::append_range(parallel, reductions);
  return parallel;
}

struct OrderGPULoopsPass
    : public traincc::impl::OrderGPULoopsPassBase<OrderGPULoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, SmallVector<unsigned>>> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (!op.hasPureBufferSemantics() || op.getNumParallelLoops() == 0)
        return;
      SmallVector<unsigned> order = reductionsLast(op);
      if (!order.empty())
        ops.emplace_back(op, std::move(order));
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, order] : ops) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, order))) {
        op.emitError("cannot interchange the loops of this op");
        return signalPassFailure();
      }
    }
  }
};

} // namespace
