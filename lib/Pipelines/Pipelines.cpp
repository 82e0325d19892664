//===- Pipelines.cpp - named pass pipelines -------------------------------===//

#include "traincc/Pipelines/Pipelines.h"

#include "traincc/Dialect/Train/IR/TrainDialect.h"
#include "traincc/Import/Passes.h"
#include "traincc/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
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

void traincc::registerPipelines() {
  PassPipelineRegistration<ImportPipelineOptions>(
      "traincc-import-pipeline",
      "Legalises first-stage ONNX import into a Train forward graph",
      buildImportPipeline);
}

void traincc::registerAllDialects(DialectRegistry &registry) {
  registry.insert<train::TrainDialect, func::FuncDialect>();
}

void traincc::registerAllPasses() {
  registerTrainccImportPasses();
  registerCanonicalizerPass();
  registerCSEPass();
  registerSymbolDCEPass();
  registerPipelines();
}
