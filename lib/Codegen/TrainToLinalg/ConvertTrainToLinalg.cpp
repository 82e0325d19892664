//===- ConvertTrainToLinalg.cpp - Train forward ops -> linalg -------------===//
//
// The pass; the patterns are in one file per op family. Tensors
// keep their types through this stage, so the conversion needs no type
// converter: the target only says which Train ops must go.
//
//===----------------------------------------------------------------------===//

#include "ConvertTrainToLinalg.h"

#include "traincc/Codegen/TrainToLinalg/Passes.h"
#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace traincc {
#define GEN_PASS_DEF_CONVERTTRAINTOLINALGPASS
#include "traincc/Codegen/TrainToLinalg/Passes.h.inc"
} // namespace traincc

using namespace mlir;

namespace {

struct ConvertTrainToLinalgPass
    : public traincc::impl::ConvertTrainToLinalgPassBase<
          ConvertTrainToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    using namespace traincc::train;
    MLIRContext *context = &getContext();
    if (!replicaCollectives)
      dropReplicaCollectives();
    ConversionTarget target(*context);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect>();
    // The calls of replica collectives and their buffers.
    target.addLegalDialect<bufferization::BufferizationDialect,
                           func::FuncDialect, LLVM::LLVMDialect,
                           memref::MemRefDialect>();
    // Every forward compute op must go; parameters, their reads and the
    // import scaffolding are not this pass's business.
    target.addIllegalOp<ConvOp, BatchNormOp, GemmOp, MatMulOp, AddOp, SubOp,
                        MulOp, DivOp, MaximumOp, MinimumOp, ReluOp, LeakyReluOp,
                        ClipOp, SigmoidOp, TanhOp, SqrtOp, ErfOp, ExpOp, LogOp, DropoutOp, SoftmaxOp,
                        LogSoftmaxOp, MaxPoolOp, AvgPoolOp, GlobalAvgPoolOp,
                        ReduceMaxOp, ReshapeOp, FlattenOp, TransposeOp,
                        ConcatOp, SliceOp, GatherOp, IdentityOp, ConstantOp,
                        CastOp, ScaleLossOp, CompareOp, SelectOp>();
    // Losses, gradients and the explicit training-mode ops; the ops that
    // touch persistent state (accumulate, optimizer updates, running
    // statistics) are left to state lowering.
    target.addIllegalOp<
        SoftmaxCrossEntropyOp, SoftmaxCrossEntropyBackwardOp, MSEOp,
        MSEBackwardOp, ReduceSumOp, SumToOp, BroadcastToOp, ConvBackwardDataOp,
        ConvBackwardFilterOp, BatchNormBackwardOp, ReluBackwardOp,
        LeakyReluBackwardOp, ClipBackwardOp, SigmoidBackwardOp, TanhBackwardOp,
        ErfBackwardOp,
        SoftmaxBackwardOp, LogSoftmaxBackwardOp, MaxPoolBackwardOp,
        AvgPoolBackwardOp, SliceBackwardOp, ReduceMaxBackwardOp,
        GatherBackwardOp, BNStatsOp, BNApplyOp, DropoutMaskOp,
        ReplicaCountOp>();

    RewritePatternSet patterns(context);
    traincc::codegen::populateLinearAlgebraPatterns(patterns);
    traincc::codegen::populateElementwisePatterns(patterns);
    traincc::codegen::populatePoolingPatterns(patterns);
    traincc::codegen::populateDataMovementPatterns(patterns);
    traincc::codegen::populateGradientPatterns(patterns);
    traincc::codegen::populateWindowGradientPatterns(patterns);
    traincc::codegen::populateCollectivePatterns(patterns);
    // An op recomputed in the backward pass (traincc-recompute-activations)
    // passes its mark to its lowering through a named location; the mark
    // keeps CSE from merging the lowering with the forward original.
    getOperation()->walk([](Operation *op) {
      if (op->hasAttr(kRecomputedAttrName))
        op->setLoc(NameLoc::get(
            StringAttr::get(op->getContext(), kRecomputedAttrName),
            op->getLoc()));
    });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();
    // The lowering's tensor.empty too: one shared with the original would
    // bufferize to one buffer for both, alive across the whole step.
    getOperation()->walk([](Operation *op) {
      if (!isa<linalg::LinalgOp, tensor::EmptyOp>(op))
        return;
      if (auto name = dyn_cast<NameLoc>(op->getLoc()))
        if (name.getName() == kRecomputedAttrName)
          op->setAttr(kRecomputedAttrName, UnitAttr::get(op->getContext()));
    });
  }

  /// Each replica's own BatchNorm statistics, as if it ran alone.
  void dropReplicaCollectives() {
    using namespace traincc::train;
    getOperation()->walk([](Operation *op) {
      if (auto stats = dyn_cast<BNStatsOp>(op)) {
        stats.setSynchronized(false);
      } else if (auto backward = dyn_cast<BatchNormBackwardOp>(op)) {
        backward.setSynchronized(false);
      } else if (auto count = dyn_cast<ReplicaCountOp>(op)) {
        OpBuilder builder(count);
        RankedTensorType type = count.getType();
        Value one = ConstantOp::create(
            builder, count.getLoc(),
            DenseElementsAttr::get(type, builder.getF32FloatAttr(1.0f)));
        count.replaceAllUsesWith(one);
        count.erase();
      }
    });
  }
};

} // namespace
