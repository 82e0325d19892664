//===- Pipelines.cpp - named pass pipelines -------------------------------===//

#include "traincc/Pipelines/Pipelines.h"

#include "traincc/Codegen/Passes.h"
#include "traincc/Dialect/Train/IR/TrainDialect.h"
#include "traincc/Import/Passes.h"
#include "traincc/InitAll.h"
#include "traincc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void traincc::buildImportPipeline(OpPassManager &pm,
                                  const ImportPipelineOptions &options) {
  // Legalisation first: everything after it sees only Train ops.
  pm.addPass(createLegalizeONNXPass());
  // Canonicalisation removes the identities, view-of-view chains and
  // zero-ratio dropouts that exporters leave, and CSE merges the repeated
  // parameter reads of shared weights.
  if (options.canonicalize) {
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
}

void traincc::buildTrainingPipeline(OpPassManager &pm,
                                    const TrainingPipelineOptions &options) {
  // Freezing first: every later pass asks whether a parameter trains.
  pm.addPass(createFreezeParamsPass(FreezeParamsPassOptions{options.freeze}));
  pm.addPass(createAppendLossPass(AppendLossPassOptions{options.loss}));
  ExplicitTrainingModePassOptions modeOptions;
  modeOptions.bnStats = options.bnStats;
  modeOptions.accumSteps = options.accumSteps;
  pm.addPass(createExplicitTrainingModePass(modeOptions));
  // Autodiff differentiates what canonicalisation left: no dead ops, no
  // identities, one read per parameter.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createAutodiffPass());
  BuildOptimizerPassOptions optimizerOptions;
  optimizerOptions.optimizer = options.optimizer;
  optimizerOptions.momentum = options.momentum;
  optimizerOptions.dampening = options.dampening;
  optimizerOptions.nesterov = options.nesterov;
  optimizerOptions.weightDecay = options.weightDecay;
  optimizerOptions.beta1 = options.beta1;
  optimizerOptions.beta2 = options.beta2;
  optimizerOptions.eps = options.eps;
  optimizerOptions.noDecay = options.noDecay;
  pm.addPass(createBuildOptimizerPass(optimizerOptions));
  // Gradient rules emit small arithmetic (broadcast reductions, scalar
  // factors) that folds.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void traincc::registerPipelines() {
  PassPipelineRegistration<TrainingPipelineOptions>(
      "traincc-training-pipeline",
      "Builds the training-step functions from a Train forward graph",
      buildTrainingPipeline);
  PassPipelineRegistration<ImportPipelineOptions>(
      "traincc-import-pipeline",
      "Legalises first-stage ONNX import into a Train forward graph",
      buildImportPipeline);
}

void traincc::registerAllDialects(DialectRegistry &registry) {
  registry.insert<train::TrainDialect, func::FuncDialect, arith::ArithDialect,
                  linalg::LinalgDialect, math::MathDialect,
                  tensor::TensorDialect>();
}

void traincc::registerAllPasses() {
  registerTrainccImportPasses();
  registerTrainccTransformsPasses();
  registerTrainccCodegenPasses();
  registerCanonicalizerPass();
  registerCSEPass();
  registerSymbolDCEPass();
  registerPipelines();
}
