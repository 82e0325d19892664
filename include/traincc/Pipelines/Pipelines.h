//===- Pipelines.h - named pass pipelines -----------------------*- C++ -*-===//
//
// Every pipeline `traincc` runs is built here, so that
// `traincc-opt --traincc-...-pipeline` reproduces any stage of a compile.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_PIPELINES_PIPELINES_H
#define TRAINCC_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace traincc {

struct ImportPipelineOptions
    : public mlir::PassPipelineOptions<ImportPipelineOptions> {
  Option<bool> canonicalize{
      *this, "canonicalize",
      llvm::cl::desc("Fold no-op data movement after legalisation"),
      llvm::cl::init(true)};
};

/// From first-stage ONNX import to a verified Train forward graph.
void buildImportPipeline(mlir::OpPassManager &pm,
                         const ImportPipelineOptions &options);

/// Registers every named pipeline with the pass registry.
void registerPipelines();

} // namespace traincc

#endif // TRAINCC_PIPELINES_PIPELINES_H
