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
  void runOnOperation() override {
    using namespace traincc::train;
    MLIRContext *context = &getContext();
    ConversionTarget target(*context);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect>();
    // Every forward compute op must go; parameters, their reads and the
    // import scaffolding are not this pass's business.
    target.addIllegalOp<ConvOp, BatchNormOp, GemmOp, MatMulOp, AddOp, SubOp,
                        MulOp, DivOp, MaximumOp, MinimumOp, ReluOp, LeakyReluOp,
                        ClipOp, SigmoidOp, TanhOp, SqrtOp, ErfOp, DropoutOp, SoftmaxOp,
                        LogSoftmaxOp, MaxPoolOp, AvgPoolOp, GlobalAvgPoolOp,
                        ReduceMaxOp, ReshapeOp, FlattenOp, TransposeOp,
                        ConcatOp, SliceOp, GatherOp, IdentityOp, ConstantOp,
                        CastOp, ScaleLossOp>();
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
        GatherBackwardOp, BNStatsOp, BNApplyOp, DropoutMaskOp>();

    RewritePatternSet patterns(context);
    traincc::codegen::populateLinearAlgebraPatterns(patterns);
    traincc::codegen::populateElementwisePatterns(patterns);
    traincc::codegen::populatePoolingPatterns(patterns);
    traincc::codegen::populateDataMovementPatterns(patterns);
    traincc::codegen::populateGradientPatterns(patterns);
    traincc::codegen::populateWindowGradientPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
