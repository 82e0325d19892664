//===- PadInProducer.cpp - producers write into the padded buffer ---------===//

#include "traincc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace traincc {
#define GEN_PASS_DEF_PADINPRODUCERPASS
#include "traincc/Codegen/Common/Passes.h.inc"
} // namespace traincc

using namespace mlir;

namespace {

struct PadInProducerPass
    : public traincc::impl::PadInProducerPassBase<PadInProducerPass> {
  void runOnOperation() override {
    SmallVector<tensor::PadOp> pads;
    getOperation().walk([&](tensor::PadOp pad) { pads.push_back(pad); });
    IRRewriter rewriter(&getContext());
    for (tensor::PadOp pad : pads)
      padInProducer(rewriter, pad);
  }

  /// `pad` of a linalg.generic's result, by a constant: the generic writes
  /// its result into the interior of a filled tensor of the padded shape,
  /// which replaces the pad.
  void padInProducer(RewriterBase &rewriter, tensor::PadOp pad) {
    RankedTensorType paddedType = pad.getResultType();
    Value padding = pad.getConstantPaddingValue();
    auto constant =
        padding ? padding.getDefiningOp<arith::ConstantOp>() : nullptr;
    auto producer = pad.getSource().getDefiningOp<linalg::GenericOp>();
    if (!constant || !paddedType.hasStaticShape() || !producer ||
        producer->getNumResults() != 1 || !producer.hasPureTensorSemantics())
      return;
    // Only a destination that is written, never read (an empty tensor):
    // the fill under it then changes nothing the generic computes.
    OpOperand *init = producer.getDpsInitOperand(0);
    if (!init->get().getDefiningOp<tensor::EmptyOp>() ||
        producer.payloadUsesValueFromOperand(init))
      return;
    SmallVector<OpFoldResult> offsets = pad.getMixedLowPad();
    if (llvm::any_of(offsets, [](OpFoldResult offset) {
          return !getConstantIntValue(offset);
        }))
      return;
    auto sourceType = cast<RankedTensorType>(pad.getSource().getType());
    SmallVector<OpFoldResult> sizes =
        getAsIndexOpFoldResult(&getContext(), sourceType.getShape());
    SmallVector<OpFoldResult> strides(sourceType.getRank(),
                                      rewriter.getIndexAttr(1));
    Location loc = pad.getLoc();

    rewriter.setInsertionPoint(producer);
    Value padValue = rewriter.clone(*constant)->getResult(0);
    Value empty = tensor::EmptyOp::create(rewriter, loc, paddedType.getShape(),
                                          paddedType.getElementType());
    Value filled =
        linalg::FillOp::create(rewriter, loc, padValue, empty).getResult(0);
    Value interior = tensor::ExtractSliceOp::create(
        rewriter, loc, sourceType, filled, offsets, sizes, strides);
    Operation *oldInit = init->get().getDefiningOp();
    rewriter.modifyOpInPlace(producer, [&] { init->set(interior); });
    if (oldInit->use_empty())
      rewriter.eraseOp(oldInit);
    rewriter.setInsertionPoint(pad);
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        pad, pad.getSource(), filled, offsets, sizes, strides);
  }
};

} // namespace
