//===- CollapseContiguousLoops.cpp - one long loop per contiguous run -----===//
//
// An elementwise op on a [64, 32, 28, 28] buffer is a nest whose innermost
// loop runs 28 times: LLVM unrolls such short loops into scalar code
// instead of vectorizing them, and a reduction over H and W restarts its
// vector sum every row. Where neighbouring loops walk every operand as one
// contiguous run (the same order, and no gap between the rows), they can be
// one loop: the elementwise op becomes one loop over 1.6M elements, the
// statistics of a BatchNorm a sum over 784 per channel.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace traincc {
#define GEN_PASS_DEF_COLLAPSECONTIGUOUSLOOPSPASS
#include "traincc/Codegen/CPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;

namespace {

/// Whether loops `dim` and `dim + 1` can be one loop for `operand`: the
/// operand reads neither, or reads them as neighbouring results (`dim`
/// first) whose rows follow each other in memory.
bool mergeableFor(linalg::GenericOp op, OpOperand &operand, unsigned dim) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  std::optional<unsigned> outer = map.getResultPosition(
      getAffineDimExpr(dim, op.getContext()));
  std::optional<unsigned> inner = map.getResultPosition(
      getAffineDimExpr(dim + 1, op.getContext()));
  if (!outer && !inner)
    return true;
  if (!outer || !inner || *inner != *outer + 1)
    return false;
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  if (!type)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  int64_t innerSize = type.getDimSize(*inner);
  return !ShapedType::isDynamic(strides[*outer]) &&
         !ShapedType::isDynamic(strides[*inner]) &&
         !ShapedType::isDynamic(innerSize) &&
         strides[*outer] == strides[*inner] * innerSize;
}

/// The runs of neighbouring loops of `op` that can each become one loop, or
/// nothing when no two can.
SmallVector<ReassociationIndices> collapsibleRuns(linalg::GenericOp op) {
  // Ops that read their indices would pay a division per element to
  // recover them; operands that are not buffers (scalars) read no loop.
  if (!op.hasPureBufferSemantics() || op.hasIndexSemantics() ||
      !llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
        return map.isProjectedPermutation();
      }))
    return {};
  unsigned numLoops = op.getNumLoops();
  auto iterators = op.getIteratorTypesArray();
  SmallVector<ReassociationIndices> runs;
  bool merged = false;
  for (unsigned dim = 0; dim < numLoops; ++dim) {
    bool joinsPrevious =
        dim > 0 && iterators[dim - 1] == iterators[dim] &&
        llvm::all_of(op->getOpOperands(), [&](OpOperand &operand) {
          return mergeableFor(op, operand, dim - 1);
        });
    if (joinsPrevious) {
      runs.back().push_back(dim);
      merged = true;
    } else {
      runs.push_back({static_cast<int64_t>(dim)});
    }
  }
  if (!merged)
    return {};
  return runs;
}

struct CollapseContiguousLoopsPass
    : public traincc::impl::CollapseContiguousLoopsPassBase<
          CollapseContiguousLoopsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      SmallVector<ReassociationIndices> runs = collapsibleRuns(op);
      if (runs.empty())
        continue;
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::CollapseResult> collapsed =
          linalg::collapseOpIterationDims(op, runs, rewriter);
      if (failed(collapsed))
        continue;
      // Ops on buffers have no results to replace.
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
