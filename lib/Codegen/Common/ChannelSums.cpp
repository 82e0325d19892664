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

/// Whether `op` (buffers, `inputs` inputs, one init, f32 block arguments)
/// reduces its first input into `init[c]` over every index but the
/// input's second, which every other input is indexed by alone.
bool reducesAllButChannel(linalg::GenericOp op, unsigned inputs) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != inputs ||
      op.getNumDpsInits() != 1 || op.hasIndexSemantics())
    return false;
  AffineMap inMap = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!inMap.isPermutation() || inMap.getNumResults() < 3 ||
      outMap.getNumResults() != 1 || outMap.getResult(0) != inMap.getResult(1))
    return false;
  for (unsigned i = 1; i < inputs; ++i)
    if (op.getMatchingIndexingMap(op.getDpsInputOperand(i)) != outMap)
      return false;
  unsigned channel = cast<AffineDimExpr>(inMap.getResult(1)).getPosition();
  for (auto [dim, iterator] : llvm::enumerate(op.getIteratorTypesArray()))
    if (linalg::isParallelIterator(iterator) != (dim == channel))
      return false;
  return llvm::all_of(op.getRegion().front().getArguments(),
                      [](BlockArgument arg) { return arg.getType().isF32(); });
}

/// Whether `op` is `a op b` or `b op a` of the two values.
template <typename OpTy>
bool isCommutedOf(Operation *op, Value a, Value b) {
  auto typed = dyn_cast_or_null<OpTy>(op);
  return typed && ((typed.getLhs() == a && typed.getRhs() == b) ||
                   (typed.getLhs() == b && typed.getRhs() == a));
}

/// Whether `op` is `init[c] += (x - mean[c])^2` over every index of `x`
/// but its second (f32): a BatchNorm variance's sum (BNStatsLowering).
bool isChannelVariance(linalg::GenericOp op) {
  if (!reducesAllButChannel(op, 2))
    return false;
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 4)
    return false;
  auto add = body.getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value square = add.getLhs() == body.getArgument(2) ? add.getRhs()
                                                      : add.getLhs();
  auto mul = square.getDefiningOp<arith::MulFOp>();
  if (!isCommutedOf<arith::AddFOp>(add, body.getArgument(2), square) || !mul ||
      mul.getLhs() != mul.getRhs())
    return false;
  auto sub = mul.getLhs().getDefiningOp<arith::SubFOp>();
  return sub && sub.getLhs() == body.getArgument(0) &&
         sub.getRhs() == body.getArgument(1);
}

} // namespace

bool isChannelSum(linalg::GenericOp op) {
  if (!reducesAllButChannel(op, 1))
    return false;
  Block &body = op.getRegion().front();
  return body.getOperations().size() == 2 &&
         isCommutedOf<arith::AddFOp>(
             body.getTerminator()->getOperand(0).getDefiningOp(),
             body.getArgument(0), body.getArgument(1));
}

bool addsIntoOutput(linalg::GenericOp op, unsigned index) {
  BlockArgument out = op.getRegionOutputArgs()[index];
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  if (!out.getType().isF32() || !out.hasOneUse())
    return false;
  auto add = dyn_cast<arith::AddFOp>(*out.getUsers().begin());
  return add && add->hasOneUse() &&
         yield.getOperand(index) == add.getResult();
}

linalg::GenericOp findChannelSum(linalg::LinalgOp producer) {
  Value output = producer.getDpsInitOperand(0)->get();
  Value root = rootBuffer(output);
  for (Operation *op = producer->getNextNode(); op; op = op->getNextNode()) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (generic && isChannelSum(generic) &&
        channelBase(generic.getDpsInputOperand(0)->get()) ==
            channelBase(output))
      return generic;
    if (!onlyReadsBuffer(op, root))
      return nullptr;
  }
  return nullptr;
}

linalg::GenericOp findChannelVariance(linalg::LinalgOp producer,
                                      linalg::GenericOp sum) {
  Value output = producer.getDpsInitOperand(0)->get();
  Value root = rootBuffer(output);
  Value totals = rootBuffer(sum.getDpsInitOperand(0)->get());
  // The buffer the mean (totals / count) is written to, once seen.
  Value mean;
  for (Operation *op = sum->getNextNode(); op; op = op->getNextNode()) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (generic && !mean && generic.getNumDpsInputs() == 1 &&
        generic.getNumDpsInits() == 1 && generic.hasPureBufferSemantics() &&
        rootBuffer(generic.getDpsInputOperand(0)->get()) == totals) {
      mean = rootBuffer(generic.getDpsInitOperand(0)->get());
      continue;
    }
    if (generic && mean && isChannelVariance(generic) &&
        channelBase(generic.getDpsInputOperand(0)->get()) ==
            channelBase(output) &&
        rootBuffer(generic.getDpsInputOperand(1)->get()) == mean)
      return generic;
    // Anything else that may write the output, the sums or the mean (the
    // pointer to it that a synchronized BatchNorm's replica mean takes
    // counts as a write) keeps the variance apart.
    if (!onlyReadsBuffer(op, root) || !onlyReadsBuffer(op, totals) ||
        (mean && !onlyReadsBuffer(op, mean)))
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

linalg::GenericOp replaceChannelVariance(linalg::GenericOp variance,
                                         Value sums, Value counts, Value m2) {
  MLIRContext *context = variance.getContext();
  OpBuilder b(variance);
  AffineMap both = AffineMap::getMultiDimIdentityMap(2, context);
  AffineMap channel = AffineMap::get(2, 0, getAffineDimExpr(1, context));
  auto stage = linalg::GenericOp::create(
      b, variance.getLoc(), TypeRange{},
      ValueRange{sums, counts, m2, variance.getDpsInputOperand(1)->get()},
      ValueRange{variance.getDpsInitOperand(0)->get()},
      {both, both, both, channel, channel},
      {utils::IteratorType::reduction, utils::IteratorType::parallel},
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        // m2 + count * (sum / count - mean)^2: the image's squares around
        // the batch's mean; no term cancels another.
        Value offset = arith::SubFOp::create(
            nb, nloc, arith::DivFOp::create(nb, nloc, args[0], args[1]),
            args[3]);
        Value spread = arith::MulFOp::create(
            nb, nloc, args[1], arith::MulFOp::create(nb, nloc, offset, offset));
        Value squares = arith::AddFOp::create(nb, nloc, args[2], spread);
        linalg::YieldOp::create(
            nb, nloc, arith::AddFOp::create(nb, nloc, args[4], squares)
                          .getResult());
      });
  variance->erase();
  return stage;
}

namespace {

/// `op` rebuilt before it on `inits`, with `maps`: the body's first
/// `keptArguments` arguments map to the new ones, and it yields `op`'s
/// first result followed by the new body's extra arguments (the outputs it
/// passes through). Discardable attributes other than `dropped` stay.
linalg::GenericOp rebuild(linalg::GenericOp op, ValueRange inits,
                          ArrayRef<AffineMap> maps, unsigned keptArguments,
                          ArrayRef<StringRef> dropped) {
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
    if (!llvm::is_contained(dropped, attr.getName().getValue()))
      rebuilt->setAttr(attr.getName(), attr.getValue());
  op->erase();
  return rebuilt;
}

} // namespace

linalg::GenericOp addChannelSumsOutput(linalg::GenericOp op,
                                       ValueRange sums,
                                       ArrayRef<AffineMap> sumsMaps,
                                       StringRef mark) {
  MLIRContext *context = op.getContext();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  llvm::append_range(maps, sumsMaps);
  unsigned arguments = op.getRegion().front().getNumArguments();
  SmallVector<Value> inits = {op.getDpsInitOperand(0)->get()};
  llvm::append_range(inits, sums);
  linalg::GenericOp fused =
      rebuild(op, inits, maps, arguments, /*dropped=*/{});
  fused->setAttr(mark, UnitAttr::get(context));
  return fused;
}

linalg::GenericOp dropChannelSumsOutput(linalg::GenericOp op,
                                        ArrayRef<StringRef> marks) {
  unsigned extra = op.getNumDpsInits() - 1;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps.resize(maps.size() - extra);
  unsigned arguments = op.getRegion().front().getNumArguments() - extra;
  return rebuild(op, ValueRange{op.getDpsInitOperand(0)->get()}, maps,
                 arguments, marks);
}

void addChannelMomentsNests(OpBuilder &b, Location loc, Value output,
                            Value sums, Value counts, Value m2,
                            AffineMap outputMap, AffineMap partialsMap,
                            ArrayRef<utils::IteratorType> iterators,
                            Value zero) {
  if (zero)
    linalg::FillOp::create(b, loc, zero, counts);
  // The output only gives the loops their bounds.
  linalg::GenericOp::create(
      b, loc, TypeRange{}, ValueRange{output}, ValueRange{counts},
      {outputMap, partialsMap}, iterators,
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value one = arith::ConstantOp::create(nb, nloc, nb.getF32FloatAttr(1.0));
        linalg::YieldOp::create(
            nb, nloc, arith::AddFOp::create(nb, nloc, args[1], one).getResult());
      });
  if (zero)
    linalg::FillOp::create(b, loc, zero, m2);
  linalg::GenericOp::create(
      b, loc, TypeRange{}, ValueRange{output, sums, counts}, ValueRange{m2},
      {outputMap, partialsMap, partialsMap, partialsMap}, iterators,
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value centred = arith::SubFOp::create(
            nb, nloc, args[0], arith::DivFOp::create(nb, nloc, args[1], args[2]));
        Value square = arith::MulFOp::create(nb, nloc, centred, centred);
        linalg::YieldOp::create(
            nb, nloc,
            arith::AddFOp::create(nb, nloc, args[3], square).getResult());
      });
}

} // namespace traincc::codegen
