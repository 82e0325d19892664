//===- GemmView.cpp - a linalg op's loops as an implicit GEMM -------------===//

#include "GemmView.h"

#include "GPUKernelBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"

using namespace mlir;

namespace traincc::gpu_kernels {

int64_t GemmView::size(ArrayRef<unsigned> group) const {
  int64_t product = 1;
  for (unsigned dim : group)
    product *= ranges[dim];
  return product;
}

SmallVector<int64_t> GemmView::sizes(ArrayRef<unsigned> group) const {
  return llvm::map_to_vector(group, [&](unsigned dim) { return ranges[dim]; });
}

GemmView groupLoops(linalg::LinalgOp op) {
  auto inputMap = [&](unsigned i) {
    return i < op.getNumDpsInputs()
               ? op.getMatchingIndexingMap(op.getDpsInputOperand(i))
               : AffineMap();
  };
  AffineMap mapA = inputMap(0), mapB = inputMap(1);
  auto reads = [](AffineMap map, unsigned dim) {
    return map && map.isFunctionOfDim(dim);
  };
  GemmView view;
  view.ranges = op.getStaticLoopRanges();
  auto iterators = op.getIteratorTypesArray();
  for (unsigned dim = 0; dim < view.ranges.size(); ++dim) {
    if (!linalg::isParallelIterator(iterators[dim])) {
      view.k.push_back(dim);
      continue;
    }
    bool inA = reads(mapA, dim), inB = reads(mapB, dim);
    if (inA && !inB)
      view.m.push_back(dim);
    else if (inB && !inA)
      view.n.push_back(dim);
    else
      view.batch.push_back(dim);
  }
  return view;
}

std::optional<GemmView> analyzeContraction(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op.hasIndexSemantics() ||
      !hasStaticShapes(op) || op.getNumReductionLoops() == 0)
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands())
    if (!isa<MemRefType>(operand.get().getType()))
      return std::nullopt;
  AffineMap mapOut = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  // Each output element belongs to exactly one parallel iteration, so
  // blocks never write the same element.
  if (!mapOut.isProjectedPermutation())
    return std::nullopt;
  auto iterators = op.getIteratorTypesArray();
  for (unsigned dim = 0; dim < iterators.size(); ++dim)
    if (linalg::isParallelIterator(iterators[dim]) &&
        !mapOut.isFunctionOfDim(dim))
      return std::nullopt;
  return groupLoops(op);
}

bool worthTiling(const GemmView &view, int64_t minWork) {
  constexpr int64_t kMinSide = 8, kMinK = 4;
  int64_t sizeM = view.size(view.m), sizeN = view.size(view.n),
          sizeK = view.size(view.k);
  return sizeM >= kMinSide && sizeN >= kMinSide && sizeK >= kMinK &&
         sizeM * sizeN * sizeK * view.size(view.batch) >= minWork;
}

AffineMap channelPartialsMap(const GemmView &view, unsigned channel,
                             MLIRContext *context) {
  AffineExpr tile = getAffineConstantExpr(0, context);
  if (view.size(view.m) > kMaxGemmTile) {
    AffineExpr flat = getAffineConstantExpr(0, context);
    int64_t stride = view.size(view.m);
    for (unsigned dim : view.m) {
      stride /= view.ranges[dim];
      flat = flat + getAffineDimExpr(dim, context) * stride;
    }
    tile = flat.floorDiv(kMaxGemmTile);
  }
  return AffineMap::get(view.ranges.size(), 0,
                        {tile, getAffineDimExpr(channel, context)}, context);
}

SmallVector<linalg::LinalgOp> stepContractionCandidates(ModuleOp module) {
  SmallVector<linalg::LinalgOp> candidates;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal() && !func.isPrivate())
      func.walk([&](linalg::LinalgOp op) {
        if (op.getNumDpsInputs() == 2 && op.getNumReductionLoops() > 0)
          candidates.push_back(op);
      });
  return candidates;
}

AffineMap overParallelLoops(linalg::LinalgOp op, AffineMap map) {
  MLIRContext *context = op.getContext();
  SmallVector<AffineExpr> exprs(op.getNumLoops(),
                                getAffineConstantExpr(0, context));
  unsigned position = 0;
  for (auto [dim, iterator] : llvm::enumerate(op.getIteratorTypesArray()))
    if (linalg::isParallelIterator(iterator))
      exprs[dim] = getAffineDimExpr(position++, context);
  return map.replaceDimsAndSymbols(exprs, {}, position, 0);
}

bool reusesInputs(linalg::LinalgOp op) {
  SmallVector<unsigned> parallel, reduction;
  op.getParallelDims(parallel);
  op.getReductionDims(reduction);
  return llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) {
    AffineMap map = op.getMatchingIndexingMap(input);
    bool readsTerms = llvm::any_of(
        reduction, [&](unsigned dim) { return map.isFunctionOfDim(dim); });
    bool missesOutputs = llvm::any_of(
        parallel, [&](unsigned dim) { return !map.isFunctionOfDim(dim); });
    return readsTerms && missesOutputs;
  });
}

} // namespace traincc::gpu_kernels
