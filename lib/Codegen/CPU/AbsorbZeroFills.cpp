//===- AbsorbZeroFills.cpp - contractions that start from zero ------------===//
//
// Every convolution and matmul sums into a buffer a linalg.fill zeroes
// first: half of a ResNet step's filled bytes, written once by the fill and
// read back by the contraction. The micro-kernels of
// traincc-vectorize-contractions can start their accumulators at zero
// instead, but they are generated inside the outlined thread bodies, where
// the fill is another function; so the fill is dropped here, before
// outlining, and the contraction marked. Only a +0.0 fill: the sums then
// round exactly as they did from the filled buffer.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/CPU/Passes.h"
#include "traincc/Codegen/Common/BufferUtils.h"

#include "ChannelSums.h"
#include "MultiplyAdd.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace traincc {
#define GEN_PASS_DEF_ABSORBZEROFILLSPASS
#include "traincc/Codegen/CPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using traincc::codegen::rootBuffer;
using traincc::codegen::staticByteRange;

namespace {

/// Whether memrefs `a` and `b` may share an element: views of one buffer
/// at disjoint constant byte ranges (the planned workspace) do not.
bool mayAlias(Value a, Value b) {
  if (rootBuffer(a) != rootBuffer(b))
    return false;
  auto rangeA = staticByteRange(a), rangeB = staticByteRange(b);
  return !rangeA || !rangeB ||
         (rangeA->first < rangeB->second && rangeB->first < rangeA->second);
}

/// Whether `op` may read or write `buffer`. Views and reshapes do not; ops
/// with regions other than linalg ops (whose regions see only their
/// operands) count as accesses.
bool mayAccess(Operation *op, Value buffer) {
  if (isMemoryEffectFree(op))
    return false;
  if (op->getNumRegions() && !isa<linalg::LinalgOp>(op))
    return true;
  return llvm::any_of(op->getOperands(), [&](Value operand) {
    return isa<MemRefType>(operand.getType()) && mayAlias(operand, buffer);
  });
}

/// The buffer `op` fills with +0.0: a linalg.fill, or the linalg.generic
/// that linalg-generalize-named-ops makes of one (a scalar yielded to every
/// element); null otherwise.
Value zeroFilledBuffer(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
      linalgOp.getNumDpsInputs() != 1 || linalgOp.getNumDpsInits() != 1)
    return {};
  Value value = linalgOp.getDpsInputOperand(0)->get();
  if (!matchPattern(value, m_PosZeroFloat()))
    return {};
  if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
    Block &body = generic.getRegion().front();
    if (generic.getNumParallelLoops() != generic.getNumLoops() ||
        !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0))
             .isIdentity() ||
        body.getOperations().size() != 1 ||
        body.getTerminator()->getOperand(0) != body.getArgument(0))
      return {};
  } else if (!isa<linalg::FillOp>(op)) {
    return {};
  }
  return linalgOp.getDpsInitOperand(0)->get();
}

/// The memref `value` reshapes (itself if none): reshapes keep the set of
/// elements, and traincc-collapse-contiguous-loops collapses a fill to one
/// loop while the contraction keeps its shape.
Value unreshaped(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(def))
      break;
    value = def->getOperand(0);
  }
  return value;
}

/// The multiply-add that the fill of `buffer` at `fill` only zeroes the
/// output of, if any: the first op after it that accesses the buffer,
/// writing every element (each output index one loop) and reading none of
/// it (nor holding it in a second output: BatchNorm's channel sums).
linalg::GenericOp absorbingContraction(Operation *fill, Value buffer) {
  for (Operation *op = fill->getNextNode(); op; op = op->getNextNode()) {
    if (!mayAccess(op, buffer))
      continue;
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic || !(traincc::cpu::isMultiplyAdd(generic) ||
                      traincc::cpu::isMultiplyAddWithChannelSums(generic)))
      return nullptr;
    OpOperand *init = generic.getDpsInitOperand(0);
    if (unreshaped(init->get()) != unreshaped(buffer) ||
        !generic.getMatchingIndexingMap(init).isProjectedPermutation())
      return nullptr;
    for (OpOperand &other : generic->getOpOperands())
      if (&other != init && mayAlias(other.get(), buffer))
        return nullptr;
    return generic;
  }
  return nullptr;
}

struct AbsorbZeroFillsPass
    : public traincc::impl::AbsorbZeroFillsPassBase<AbsorbZeroFillsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<Operation *, Value>> fills;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (Value buffer = zeroFilledBuffer(op))
        fills.push_back({op, buffer});
    });
    UnitAttr unit = UnitAttr::get(&getContext());
    for (auto [fill, buffer] : fills) {
      if (linalg::GenericOp generic = absorbingContraction(fill, buffer)) {
        generic->setAttr(traincc::kZeroInitAttrName, unit);
        fill->erase();
      }
    }
  }
};

} // namespace
