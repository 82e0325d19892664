//===- ChannelSums.cpp - a BatchNorm mean's sum in a conv's epilogue ------===//

#include "traincc/Codegen/Common/ChannelSums.h"
#include "traincc/Codegen/Common/BufferUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace traincc::codegen {

namespace {

/// `view` without the collapse_shapes that keep its first two dimensions
/// ([batch, channel]) apart: the buffer whose elements of each [n, c] it
/// holds, in some order.
Value channelBase(Value view) {
  while (auto collapse = view.getDefiningOp<memref::CollapseShapeOp>()) {
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    if (groups.size() < 2 || groups[0].size() != 1 || groups[1].size() != 1)
      break;
    view = collapse.getSrc();
  }
  return view;
}

/// Whether `op` at most reads the buffer `root` (through any view of it).
/// Ops with regions other than linalg ops count as writes; calls without
/// memref operands (the kernel timers of --profile-kernels) touch nothing.
bool onlyReads(Operation *op, Value root) {
  if (op->getNumRegions() && !isa<linalg::LinalgOp>(op))
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()) ||
        rootBuffer(operand.get()) != root)
      continue;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      if (linalgOp.isDpsInput(&operand))
        continue;
    if (isa<memref::LoadOp, memref::SubViewOp, memref::CollapseShapeOp,
            memref::ExpandShapeOp, memref::CastOp>(op))
      continue;
    if (auto copy = dyn_cast<memref::CopyOp>(op))
      if (operand.get() == copy.getSource())
        continue;
    return false;
  }
  return true;
}

/// Whether `op` is `init[c] += sum of input over every index but its
/// second` (input f32, read once per loop): a BatchNorm mean's sum.
bool isChannelSum(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.hasIndexSemantics())
    return false;
  OpOperand *input = op.getDpsInputOperand(0);
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap inMap = op.getMatchingIndexingMap(input);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  if (!inMap.isPermutation() || inMap.getNumResults() < 3 ||
      outMap.getNumResults() != 1 || outMap.getResult(0) != inMap.getResult(1))
    return false;
  unsigned channel = cast<AffineDimExpr>(inMap.getResult(1)).getPosition();
  for (auto [dim, iterator] : llvm::enumerate(op.getIteratorTypesArray()))
    if (linalg::isParallelIterator(iterator) != (dim == channel))
      return false;
  Block &body = op.getRegion().front();
  if (!body.getArgument(0).getType().isF32() ||
      !body.getArgument(1).getType().isF32() ||
      body.getOperations().size() != 2)
    return false;
  auto add = body.getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  return add && ((add.getLhs() == body.getArgument(0) &&
                  add.getRhs() == body.getArgument(1)) ||
                 (add.getLhs() == body.getArgument(1) &&
                  add.getRhs() == body.getArgument(0)));
}

} // namespace

linalg::GenericOp findChannelSum(linalg::LinalgOp producer) {
  Value output = producer.getDpsInitOperand(0)->get();
  Value root = rootBuffer(output);
  for (Operation *op = producer->getNextNode(); op; op = op->getNextNode()) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (generic && isChannelSum(generic) &&
        channelBase(generic.getDpsInputOperand(0)->get()) ==
            channelBase(output))
      return generic;
    if (!onlyReads(op, root))
      return nullptr;
  }
  return nullptr;
}

linalg::GenericOp replaceChannelSum(linalg::GenericOp sum, Value partials) {
  MLIRContext *context = sum.getContext();
  OpBuilder b(sum);
  AffineMap both = AffineMap::getMultiDimIdentityMap(2, context);
  AffineMap channel = AffineMap::get(2, 0, getAffineDimExpr(1, context));
  auto stage = linalg::GenericOp::create(
      b, sum.getLoc(), TypeRange{}, ValueRange{partials},
      ValueRange{sum.getDpsInitOperand(0)->get()}, {both, channel},
      {utils::IteratorType::reduction, utils::IteratorType::parallel},
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value added = arith::AddFOp::create(nb, nloc, args[1], args[0]);
        linalg::YieldOp::create(nb, nloc, added);
      });
  sum->erase();
  return stage;
}

} // namespace traincc::codegen
