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

/// A padded copy of a generic's result: `tensor.pad` by a constant, or (as
/// the data-gradient lowering pads) an `insert_slice` with unit strides into
/// a `linalg.fill` of an empty tensor.
struct PaddedResult {
  OpResult result;
  Operation *padding;
  // The padded tensor's fill when the padding already has one.
  linalg::FillOp fill;
  RankedTensorType paddedType;
  Value padValue;
  SmallVector<OpFoldResult> offsets;
};

static bool allConstant(ArrayRef<OpFoldResult> values) {
  return llvm::all_of(values, [](OpFoldResult value) {
    return getConstantIntValue(value).has_value();
  });
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
  return PaddedResult{result,    pad,     nullptr, pad.getResultType(),
                      padding,   pad.getMixedLowPad()};
}

static std::optional<PaddedResult> matchInsertIntoFill(
    tensor::InsertSliceOp insert) {
  auto fill = insert.getDest().getDefiningOp<linalg::FillOp>();
  auto result = dyn_cast<OpResult>(insert.getSource());
  if (!fill || !result || !fill->hasOneUse() ||
      !fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>() ||
      !fill.getInputs()[0].getDefiningOp<arith::ConstantOp>() ||
      !insert.getDestType().hasStaticShape() ||
      // Not rank-reducing: the whole result goes into the interior.
      insert.getSourceType().getRank() != insert.getDestType().getRank() ||
      !allConstant(insert.getMixedOffsets()) ||
      !llvm::all_of(insert.getMixedStrides(), [](OpFoldResult stride) {
        return getConstantIntValue(stride) == 1;
      }))
    return std::nullopt;
  return PaddedResult{result,
                      insert,
                      fill,
                      insert.getDestType(),
                      fill.getInputs()[0],
                      insert.getMixedOffsets()};
}

/// Whether `op` sums products (a convolution or matmul, named or generic):
/// those keep whole outputs, which their register tiles store in full
/// vectors. Elementwise ops and poolings write into padded interiors.
static bool isContraction(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() == 0)
    return false;
  return llvm::any_of(op.getBlock()->getOperations(), [](Operation &inner) {
    return isa<arith::MulFOp>(inner);
  });
}

struct PadInProducerPass
    : public traincc::impl::PadInProducerPassBase<PadInProducerPass> {
  void runOnOperation() override {
    SmallVector<PaddedResult> padded;
    getOperation().walk([&](Operation *op) {
      std::optional<PaddedResult> match;
      if (auto pad = dyn_cast<tensor::PadOp>(op))
        match = matchPad(pad);
      else if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
        match = matchInsertIntoFill(insert);
      if (match)
        padded.push_back(*match);
    });
    IRRewriter rewriter(&getContext());
    for (PaddedResult &candidate : padded)
      padInProducer(rewriter, candidate);
  }

  /// The generic that computes `padded.result` writes it into the interior
  /// of a filled tensor of the padded shape, which replaces the padding.
  void padInProducer(RewriterBase &rewriter, PaddedResult &padded) {
    auto producer = dyn_cast<linalg::LinalgOp>(padded.result.getOwner());
    if (!producer || !producer.hasPureTensorSemantics() ||
        isContraction(producer))
      return;
    // A result padded twice is written into the first padding only; the
    // second then pads its interior.
    if (padded.padding->getOperand(0) != padded.result)
      return;
    OpOperand *init = producer.getDpsInitOperand(padded.result.getResultNumber());
    // What the destination held before the generic must be there in the
    // interior too: nothing, when the generic writes every element without
    // reading it, or a fill's constant that the interior is filled with.
    linalg::FillOp initFill;
    if (producer.payloadUsesValueFromOperand(init)) {
      initFill = init->get().getDefiningOp<linalg::FillOp>();
      if (!initFill || !initFill->hasOneUse() ||
          !initFill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>() ||
          !initFill.getInputs()[0].getDefiningOp<arith::ConstantOp>())
        return;
    } else if (producer.getNumReductionLoops() != 0 ||
               !producer.getMatchingIndexingMap(init).isPermutation()) {
      return;
    }
    auto sourceType = cast<RankedTensorType>(padded.result.getType());
    SmallVector<OpFoldResult> sizes =
        getAsIndexOpFoldResult(&getContext(), sourceType.getShape());
    SmallVector<OpFoldResult> strides(sourceType.getRank(),
                                      rewriter.getIndexAttr(1));
    Location loc = padded.padding->getLoc();

    rewriter.setInsertionPoint(producer);
    Value filled;
    if (padded.fill) {
      // The insert's fill comes after the producer: moved in front, with
      // its empty tensor and constant, which have no other users.
      Operation *empty = padded.fill.getOutputs()[0].getDefiningOp();
      Operation *constant = padded.fill.getInputs()[0].getDefiningOp();
      if (!empty->hasOneUse())
        return;
      if (!DominanceInfo().properlyDominates(constant, producer))
        padded.fill->setOperand(0, rewriter.clone(*constant)->getResult(0));
      rewriter.moveOpBefore(empty, producer);
      rewriter.moveOpBefore(padded.fill, producer);
      filled = padded.fill.getResult(0);
    } else {
      Value padValue =
          rewriter.clone(*padded.padValue.getDefiningOp())->getResult(0);
      Value empty = tensor::EmptyOp::create(rewriter, loc,
                                            padded.paddedType.getShape(),
                                            padded.paddedType.getElementType());
      filled =
          linalg::FillOp::create(rewriter, loc, padValue, empty).getResult(0);
    }
    Value interior = tensor::ExtractSliceOp::create(
        rewriter, loc, sourceType, filled, padded.offsets, sizes, strides);
    if (initFill) {
      Value initValue =
          rewriter.clone(*initFill.getInputs()[0].getDefiningOp())->getResult(0);
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
    rewriter.setInsertionPointAfter(producer);
    Value inserted;
    if (padded.fill) {
      rewriter.moveOpAfter(padded.padding, producer);
      inserted = padded.padding->getResult(0);
    } else {
      inserted = tensor::InsertSliceOp::create(rewriter, loc, padded.result,
                                               filled, padded.offsets, sizes,
                                               strides);
      rewriter.replaceOp(padded.padding, inserted);
    }
    rewriter.setInsertionPointAfter(inserted.getDefiningOp());
    Value readBack = tensor::ExtractSliceOp::create(
        rewriter, loc, sourceType, inserted, padded.offsets, sizes, strides);
    rewriter.replaceUsesWithIf(padded.result, readBack, [&](OpOperand &use) {
      return use.getOwner() != inserted.getDefiningOp();
    });
  }
};

} // namespace
