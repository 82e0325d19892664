//===- FuseConvChannelSums.cpp - BatchNorm's sums in the conv's epilogue --===//
//
// A training BatchNorm after a convolution starts with the per-channel sum
// of the convolution's output (its mean; BNStatsLowering): a loop nest that
// reads the whole output back from memory right after the convolution
// stored it. traincc-vectorize-contractions holds each vector of outputs
// in a register when it stores it, so it can add the vector to the sum
// there for the price of an add. The sums cannot be one linalg op with the
// convolution (they need its finished outputs), so this pass gives the
// convolution a second output marked traincc.channel_sums that the
// vectorizer fills, and leaves the sum a small second stage over it.
//
// The partial sums are per [image, channel]: each is computed by the one
// thread that owns that image (the convolution is split across threads
// along its batch loop), from vectors in an order that only the static
// register tile decides; the second stage then adds the images in order.
// So the result does not depend on the thread count, and it differs from
// the unfused sum only in where it rounds.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/CPU/Passes.h"
#include "traincc/Codegen/Common/BufferUtils.h"

#include "ChannelSums.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

namespace traincc {
#define GEN_PASS_DEF_FUSECONVCHANNELSUMSPASS
#include "traincc/Codegen/CPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using traincc::codegen::rootBuffer;
using traincc::cpu::isMultiplyAdd;
using traincc::cpu::kChannelSumsAttrName;

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

/// Whether `conv` can compute [batch, channel] sums of its output in its
/// epilogue: a multiply-add over a static output of rank 3 or more whose
/// first two indices are parallel loops other than the innermost one (the
/// vectors' loop) and whose every index is one loop.
bool hasChannelEpilogue(linalg::GenericOp conv) {
  if (!isMultiplyAdd(conv))
    return false;
  OpOperand *init = conv.getDpsInitOperand(0);
  auto type = cast<MemRefType>(init->get().getType());
  AffineMap map = conv.getMatchingIndexingMap(init);
  if (type.getRank() < 3 || !type.hasStaticShape() ||
      !map.isProjectedPermutation())
    return false;
  unsigned inner = conv.getNumLoops() - 1;
  auto iterators = conv.getIteratorTypesArray();
  if (!linalg::isParallelIterator(iterators[inner]))
    return false;
  for (unsigned result : {0u, 1u}) {
    unsigned dim = cast<AffineDimExpr>(map.getResult(result)).getPosition();
    if (dim == inner || !linalg::isParallelIterator(iterators[dim]))
      return false;
  }
  return true;
}

/// The channel sum of `conv`'s output that can move into its epilogue:
/// the first later op of its block that sums the output (through a view
/// that keeps its [batch, channel] indices),
/// with nothing writing that buffer in between.
linalg::GenericOp fusibleSum(linalg::GenericOp conv) {
  Value output = conv.getDpsInitOperand(0)->get();
  Value root = rootBuffer(output);
  for (Operation *op = conv->getNextNode(); op; op = op->getNextNode()) {
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

/// `conv` with the zeroed `sums` as marked second output, `sum` a
/// reduction of `sums` over the batch, in order.
void fuse(linalg::GenericOp conv, linalg::GenericOp sum) {
  MLIRContext *context = conv.getContext();
  Location loc = conv.getLoc();
  OpBuilder b(conv);
  Value output = conv.getDpsInitOperand(0)->get();
  auto outType = cast<MemRefType>(output.getType());
  Type f32 = b.getF32Type();
  auto sumsType =
      MemRefType::get({outType.getDimSize(0), outType.getDimSize(1)}, f32);
  Value sums = memref::AllocOp::create(b, loc, sumsType);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{sums});

  SmallVector<AffineMap> maps = conv.getIndexingMapsArray();
  AffineMap outMap = maps.back();
  maps.push_back(AffineMap::get(conv.getNumLoops(), 0,
                                {outMap.getResult(0), outMap.getResult(1)},
                                context));
  Block &oldBody = conv.getRegion().front();
  auto fused = linalg::GenericOp::create(
      b, loc, TypeRange{}, conv.getDpsInputs(), ValueRange{output, sums}, maps,
      conv.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        IRMapping mapping;
        for (unsigned i = 0; i < 3; ++i)
          mapping.map(oldBody.getArgument(i), args[i]);
        for (Operation &op : oldBody.without_terminator())
          nb.clone(op, mapping);
        Value result =
            mapping.lookup(oldBody.getTerminator()->getOperand(0));
        linalg::YieldOp::create(nb, nloc, ValueRange{result, args[3]});
      });
  // Marks of earlier passes (traincc.zero_init) stay.
  for (NamedAttribute attr : conv->getDiscardableAttrs())
    fused->setAttr(attr.getName(), attr.getValue());
  fused->setAttr(kChannelSumsAttrName, UnitAttr::get(context));
  conv->erase();

  // The second stage: images in order, channels the vectors' loop.
  b.setInsertionPoint(sum);
  AffineMap both = AffineMap::getMultiDimIdentityMap(2, context);
  AffineMap channel = AffineMap::get(2, 0, getAffineDimExpr(1, context));
  linalg::GenericOp::create(
      b, sum.getLoc(), TypeRange{}, ValueRange{sums},
      ValueRange{sum.getDpsInitOperand(0)->get()}, {both, channel},
      {utils::IteratorType::reduction, utils::IteratorType::parallel},
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value added = arith::AddFOp::create(nb, nloc, args[1], args[0]);
        linalg::YieldOp::create(nb, nloc, added);
      });
  memref::DeallocOp::create(b, sum.getLoc(), sums);
  sum->erase();
}

struct FuseConvChannelSumsPass
    : public traincc::impl::FuseConvChannelSumsPassBase<
          FuseConvChannelSumsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> convs;
    getOperation().walk([&](linalg::GenericOp op) {
      if (hasChannelEpilogue(op))
        convs.push_back(op);
    });
    for (linalg::GenericOp conv : convs)
      if (linalg::GenericOp sum = fusibleSum(conv))
        fuse(conv, sum);
  }
};

} // namespace
