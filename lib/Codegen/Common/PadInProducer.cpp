//===- PadInProducer.cpp - producers write into the padded buffer ---------===//

#include "traincc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"

namespace traincc {
#define GEN_PASS_DEF_PADINPRODUCERPASS
#include "traincc/Codegen/Common/Passes.h.inc"
} // namespace traincc

using namespace mlir;

namespace {

/// A padded copy of an op's result: `tensor.pad` by a constant, or (as the
/// data-gradient lowering pads) an `insert_slice` with unit strides into a
/// `linalg.fill` of an empty tensor.
struct PaddedResult {
  OpResult result;
  Operation *padding;
  // The padded tensor's fill when the padding already has one.
  linalg::FillOp fill;
  Value padValue;
  SmallVector<OpFoldResult> offsets;
};

/// Whether `fill` writes a constant into an empty tensor and is its only
/// user, and its result has one user: a fill that can move or go.
static bool isLoneConstantFill(linalg::FillOp fill) {
  return fill && fill->hasOneUse() &&
         fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>() &&
         fill.getOutputs()[0].hasOneUse() &&
         fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
}

static bool allConstant(ArrayRef<OpFoldResult> values) {
  return llvm::all_of(values, [](OpFoldResult value) {
    return getConstantIntValue(value).has_value();
  });
}

/// The padded tensor's interior in `whole` (the value's place in it).
static Value extractInterior(OpBuilder &b, const PaddedResult &padded,
                             Value whole) {
  auto type = cast<RankedTensorType>(padded.result.getType());
  return tensor::ExtractSliceOp::create(
      b, padded.padding->getLoc(), type, whole, padded.offsets,
      getAsIndexOpFoldResult(b.getContext(), type.getShape()),
      SmallVector<OpFoldResult>(type.getRank(), b.getIndexAttr(1)));
}

/// `part` inserted as the interior of `whole`.
static Value insertInterior(OpBuilder &b, const PaddedResult &padded,
                            Value part, Value whole) {
  auto type = cast<RankedTensorType>(part.getType());
  return tensor::InsertSliceOp::create(
      b, padded.padding->getLoc(), part, whole, padded.offsets,
      getAsIndexOpFoldResult(b.getContext(), type.getShape()),
      SmallVector<OpFoldResult>(type.getRank(), b.getIndexAttr(1)));
}

static std::optional<PaddedResult> matchPad(tensor::PadOp pad) {
  Value padding = pad.getConstantPaddingValue();
  if (!padding || !padding.getDefiningOp<arith::ConstantOp>() ||
      !pad.getResultType().hasStaticShape() ||
      !allConstant(pad.getMixedLowPad()))
    return std::nullopt;
  auto result = dyn_cast<OpResult>(pad.getSource());
  if (!result)
    return std::nullopt;
  return PaddedResult{result, pad, nullptr, padding, pad.getMixedLowPad()};
}

static std::optional<PaddedResult>
matchInsertIntoFill(tensor::InsertSliceOp insert) {
  auto fill = insert.getDest().getDefiningOp<linalg::FillOp>();
  auto result = dyn_cast<OpResult>(insert.getSource());
  if (!result || !isLoneConstantFill(fill) ||
      !insert.getDestType().hasStaticShape() ||
      // Not rank-reducing: the whole result goes into the interior.
      insert.getSourceType().getRank() != insert.getDestType().getRank() ||
      !allConstant(insert.getMixedOffsets()) ||
      !llvm::all_of(insert.getMixedStrides(), [](OpFoldResult stride) {
        return getConstantIntValue(stride) == 1;
      }))
    return std::nullopt;
  return PaddedResult{result, insert, fill, fill.getInputs()[0],
                      insert.getMixedOffsets()};
}

/// Whether `op` sums products into `result` (a convolution or matmul,
/// named or generic): those keep whole outputs, which their register tiles
/// store in full vectors. Elementwise ops and poolings write into padded
/// interiors, and so does an op that writes `result` once per point while
/// it sums other outputs (traincc-fuse-sums-into-producers).
static bool isContraction(linalg::LinalgOp op, OpResult result) {
  if (op.getNumReductionLoops() == 0 ||
      op.getIndexingMapMatchingResult(result).isPermutation())
    return false;
  return llvm::any_of(op.getBlock()->getOperations(), [](Operation &inner) {
    return isa<arith::MulFOp>(inner);
  });
}

/// Rows shorter than this many elements (an AVX-512 vector of f32) are read
/// faster from a whole buffer, where loops over them join.
constexpr int64_t kMinInteriorRow = 16;

/// Whether every user of `padded.result` other than its padding reads the
/// padded interior as fast as a whole buffer: elementwise ops, through
/// reshapes and other paddings. If not, the value keeps its own buffer, and
/// an elementwise producer writes it a second time into the interior
/// (writeAlsoPadded); after any other, the padding copies it. An elementwise
/// op that writes over the value in place
/// (traincc-fuse-elementwise reuses dead inputs) would leave its result in
/// the interior too, and that result is often a gradient that bias and
/// filter gradients sum: such ops, listed in `freshDestinations`, get a
/// destination of their own instead. One that reads its destination keeps
/// it, and its result's users must read the interior well too.
static bool
othersReadStridedWell(const PaddedResult &padded,
                      SmallVectorImpl<OpOperand *> &freshDestinations) {
  int64_t rowLength =
      cast<RankedTensorType>(padded.result.getType()).getShape().back();
  SmallVector<Value> values = {padded.result};
  while (!values.empty()) {
    Value value = values.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user == padded.padding ||
          isa<tensor::PadOp, tensor::InsertSliceOp>(user))
        continue;
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user)) {
        values.push_back(user->getResult(0));
        continue;
      }
      // Reductions and contractions read whole buffers faster: a bias or
      // BatchNorm sum, or a filter gradient's output-gradient operand, joins
      // the rows into one long contiguous reduction, which the interior's
      // row stride cuts (ResNet-18's filter gradients ran at half speed);
      // a 1x1 strided convolution and its filter gradient lost 40-60% too.
      // Elementwise ops too when the rows are shorter than a vector (a
      // ResNet's 8x8 and 4x4 stages): whole, their loops join into one;
      // in the interior each 4-wide row is a loop of its own, and the
      // backward pass's ReLU masks ran at 1 GB/s.
      auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
      if (!linalgOp || linalgOp.getNumReductionLoops() != 0 ||
          rowLength < kMinInteriorRow)
        return false;
      if (!linalgOp.isDpsInit(&use))
        continue;
      if (linalgOp.payloadUsesValueFromOperand(&use))
        values.push_back(linalgOp.getTiedOpResult(&use));
      else
        freshDestinations.push_back(&use);
    }
  }
  return true;
}

struct PadInProducerPass
    : public traincc::impl::PadInProducerPassBase<PadInProducerPass> {
  void runOnOperation() override {
    // Matched when their turn comes: an earlier rewrite may have replaced
    // the producer they pad.
    SmallVector<Operation *> paddings;
    getOperation().walk([&](Operation *op) {
      if (isa<tensor::PadOp, tensor::InsertSliceOp>(op))
        paddings.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : paddings) {
      std::optional<PaddedResult> match;
      if (auto pad = dyn_cast<tensor::PadOp>(op))
        match = matchPad(pad);
      else
        match = matchInsertIntoFill(cast<tensor::InsertSliceOp>(op));
      if (match)
        padInProducer(rewriter, *match);
    }
  }

  /// The tensor of the padded shape filled with the padding value, in front
  /// of `producer`: the insert's own fill, moved there with its empty
  /// tensor and constant (which have no other users), or a new one.
  Value filledInFront(RewriterBase &rewriter, PaddedResult &padded,
                      Operation *producer) {
    rewriter.setInsertionPoint(producer);
    if (padded.fill) {
      Operation *empty = padded.fill.getOutputs()[0].getDefiningOp();
      Operation *constant = padded.fill.getInputs()[0].getDefiningOp();
      if (!DominanceInfo().properlyDominates(constant, producer))
        padded.fill->setOperand(0, rewriter.clone(*constant)->getResult(0));
      rewriter.moveOpBefore(empty, producer);
      rewriter.moveOpBefore(padded.fill, producer);
      return padded.fill.getResult(0);
    }
    Location loc = padded.padding->getLoc();
    auto paddedType =
        cast<RankedTensorType>(padded.padding->getResult(0).getType());
    Value padValue =
        rewriter.clone(*padded.padValue.getDefiningOp())->getResult(0);
    Value empty = tensor::EmptyOp::create(rewriter, loc, paddedType.getShape(),
                                          paddedType.getElementType());
    return linalg::FillOp::create(rewriter, loc, padValue, empty).getResult(0);
  }

  /// Right after `producer`, the padded value: `value` inserted into
  /// `filled` as its interior (an insert_slice of the slice `value` was
  /// written to, which bufferizes to nothing), in place of the padding.
  Value placePaddingAfter(RewriterBase &rewriter, PaddedResult &padded,
                          Operation *producer, Value value, Value filled) {
    rewriter.setInsertionPointAfter(producer);
    if (padded.fill) {
      rewriter.moveOpAfter(padded.padding, producer);
      rewriter.modifyOpInPlace(padded.padding,
                               [&] { padded.padding->setOperand(0, value); });
      return padded.padding->getResult(0);
    }
    Value inserted = insertInterior(rewriter, padded, value, filled);
    rewriter.replaceOp(padded.padding, inserted);
    return inserted;
  }

  /// An elementwise generic whose result some users read best from a whole
  /// buffer keeps writing it there and writes it a second time, as an extra
  /// output, into the padded tensor's interior: the padding's copy, which
  /// read the result back, goes.
  void writeAlsoPadded(RewriterBase &rewriter, PaddedResult &padded) {
    // An output indexed by every loop is written once per element, also in
    // a producer that sums over some of its loops
    // (traincc-fuse-sums-into-producers).
    auto producer = dyn_cast<linalg::GenericOp>(padded.result.getOwner());
    if (!producer)
      return;
    OpOperand *init =
        producer.getDpsInitOperand(padded.result.getResultNumber());
    AffineMap initMap = producer.getMatchingIndexingMap(init);
    if (producer.payloadUsesValueFromOperand(init) || !initMap.isPermutation())
      return;
    Location loc = padded.padding->getLoc();
    Value filled = filledInFront(rewriter, padded, producer);
    Value interior = extractInterior(rewriter, padded, filled);

    SmallVector<Value> inits(producer.getOutputs());
    inits.push_back(interior);
    SmallVector<AffineMap> maps = producer.getIndexingMapsArray();
    maps.push_back(initMap);
    unsigned resultNumber = padded.result.getResultNumber();
    auto twice = linalg::GenericOp::create(
        rewriter, producer.getLoc(), TypeRange(ValueRange(inits)),
        producer.getInputs(), inits, maps, producer.getIteratorTypesArray());
    // The same body with one more (unread) block argument, yielding the
    // padded result's value a second time.
    Region &body = twice.getRegion();
    rewriter.cloneRegionBefore(producer.getRegion(), body, body.end());
    Block &block = body.front();
    block.addArgument(getElementTypeOrSelf(padded.result.getType()), loc);
    auto yield = cast<linalg::YieldOp>(block.getTerminator());
    rewriter.modifyOpInPlace(yield, [&] {
      yield->insertOperands(yield->getNumOperands(),
                            yield->getOperand(resultNumber));
    });
    Value second = twice->getResult(producer->getNumResults());
    rewriter.replaceOp(producer, twice->getResults().drop_back());
    placePaddingAfter(rewriter, padded, twice, second, filled);
  }

  /// The generic that computes `padded.result` writes it into the interior
  /// of a filled tensor of the padded shape, which replaces the padding.
  void padInProducer(RewriterBase &rewriter, PaddedResult &padded) {
    auto producer = dyn_cast<linalg::LinalgOp>(padded.result.getOwner());
    if (!producer || !producer.hasPureTensorSemantics() ||
        isContraction(producer, padded.result))
      return;
    SmallVector<OpOperand *> freshDestinations;
    if (!othersReadStridedWell(padded, freshDestinations)) {
      writeAlsoPadded(rewriter, padded);
      return;
    }
    OpOperand *init =
        producer.getDpsInitOperand(padded.result.getResultNumber());
    // What the destination held before the generic must be there in the
    // interior too: nothing, when the generic writes every element without
    // reading it, or a fill's constant that the interior is filled with.
    linalg::FillOp initFill;
    if (producer.payloadUsesValueFromOperand(init)) {
      initFill = init->get().getDefiningOp<linalg::FillOp>();
      if (!isLoneConstantFill(initFill))
        return;
    } else if (!producer.getMatchingIndexingMap(init).isPermutation()) {
      return;
    }
    Location loc = padded.padding->getLoc();
    for (OpOperand *destination : freshDestinations) {
      rewriter.setInsertionPoint(destination->getOwner());
      auto type = cast<RankedTensorType>(destination->get().getType());
      Value empty =
          tensor::EmptyOp::create(rewriter, destination->getOwner()->getLoc(),
                                  type.getShape(), type.getElementType());
      rewriter.modifyOpInPlace(destination->getOwner(),
                               [&] { destination->set(empty); });
    }

    Value filled = filledInFront(rewriter, padded, producer);
    Value interior = extractInterior(rewriter, padded, filled);
    if (initFill) {
      Value initValue =
          rewriter.clone(*initFill.getInputs()[0].getDefiningOp())
              ->getResult(0);
      interior = linalg::FillOp::create(rewriter, loc, initValue, interior)
                     .getResult(0);
    }
    Operation *oldInit = init->get().getDefiningOp();
    rewriter.modifyOpInPlace(producer, [&] { init->set(interior); });
    if (initFill) {
      Operation *oldEmpty = initFill.getOutputs()[0].getDefiningOp();
      rewriter.eraseOp(initFill);
      if (oldEmpty->use_empty())
        rewriter.eraseOp(oldEmpty);
    } else if (oldInit && oldInit->use_empty() &&
               isa<tensor::EmptyOp>(oldInit)) {
      rewriter.eraseOp(oldInit);
    }
    // Right after the producer, an insert_slice of the same slice (which
    // bufferizes to nothing) stands for the padded value; the result's
    // other users read the padded tensor's interior. Read directly, through
    // a reshape, the result would look to bufferization as if the insert
    // could overwrite it, and the insert would become a copy.
    Value inserted =
        placePaddingAfter(rewriter, padded, producer, padded.result, filled);
    rewriter.setInsertionPointAfter(inserted.getDefiningOp());
    Value readBack = extractInterior(rewriter, padded, inserted);
    rewriter.replaceUsesWithIf(padded.result, readBack, [&](OpOperand &use) {
      return use.getOwner() != inserted.getDefiningOp();
    });
  }
};

} // namespace
