//===- ChannelSums.cpp - a BatchNorm mean's sum in a conv's epilogue ------===//

#include "traincc/Codegen/Common/ChannelSums.h"
#include "traincc/Codegen/Common/BufferUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

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

namespace {

/// `op` rebuilt before it on `inits`, with `maps`: the body's first
/// `keptArguments` arguments map to the new ones, and it yields `op`'s
/// first result followed by the new body's extra arguments (the outputs it
/// passes through). Discardable attributes other than `dropped` stay.
linalg::GenericOp rebuild(linalg::GenericOp op, ValueRange inits,
                          ArrayRef<AffineMap> maps, unsigned keptArguments,
                          StringRef dropped) {
  OpBuilder b(op);
  Block &body = op.getRegion().front();
  auto rebuilt = linalg::GenericOp::create(
      b, op.getLoc(), TypeRange{}, op.getDpsInputs(), inits, maps,
      op.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        IRMapping mapping;
        mapping.map(body.getArguments().take_front(keptArguments),
                    args.take_front(keptArguments));
        for (Operation &nested : body.without_terminator())
          nb.clone(nested, mapping);
        SmallVector<Value> yielded = {
            mapping.lookup(body.getTerminator()->getOperand(0))};
        llvm::append_range(yielded, args.drop_front(keptArguments));
        linalg::YieldOp::create(nb, nloc, yielded);
      });
  for (NamedAttribute attr : op->getDiscardableAttrs())
    if (attr.getName() != dropped)
      rebuilt->setAttr(attr.getName(), attr.getValue());
  op->erase();
  return rebuilt;
}

} // namespace

linalg::GenericOp addChannelSumsOutput(linalg::GenericOp op, Value sums,
                                       AffineMap sumsMap, StringRef mark) {
  MLIRContext *context = op.getContext();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps.push_back(sumsMap);
  unsigned arguments = op.getRegion().front().getNumArguments();
  linalg::GenericOp fused =
      rebuild(op, ValueRange{op.getDpsInitOperand(0)->get(), sums}, maps,
              arguments, /*dropped=*/"");
  fused->setAttr(mark, UnitAttr::get(context));
  return fused;
}

linalg::GenericOp dropChannelSumsOutput(linalg::GenericOp op, StringRef mark) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps.pop_back();
  unsigned arguments = op.getRegion().front().getNumArguments() - 1;
  return rebuild(op, ValueRange{op.getDpsInitOperand(0)->get()}, maps,
                 arguments, mark);
}

} // namespace traincc::codegen
