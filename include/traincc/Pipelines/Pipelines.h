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

struct TrainingPipelineOptions
    : public mlir::PassPipelineOptions<TrainingPipelineOptions> {
  Option<std::string> loss{*this, "loss",
                           llvm::cl::desc("auto, cross-entropy, mse or output"),
                           llvm::cl::init("auto")};
  Option<std::string> optimizer{*this, "optimizer",
                                llvm::cl::desc("sgd, adam or adamw"),
                                llvm::cl::init("sgd")};
  Option<double> momentum{*this, "momentum", llvm::cl::desc("SGD momentum"),
                          llvm::cl::init(0.0)};
  Option<double> dampening{*this, "dampening",
                           llvm::cl::desc("SGD dampening"),
                           llvm::cl::init(0.0)};
  Option<bool> nesterov{*this, "nesterov",
                        llvm::cl::desc("SGD Nesterov momentum"),
                        llvm::cl::init(false)};
  Option<double> weightDecay{*this, "weight-decay",
                             llvm::cl::desc("Weight decay"),
                             llvm::cl::init(0.0)};
  Option<double> beta1{*this, "beta1", llvm::cl::desc("Adam beta1"),
                       llvm::cl::init(0.9)};
  Option<double> beta2{*this, "beta2", llvm::cl::desc("Adam beta2"),
                       llvm::cl::init(0.999)};
  Option<double> eps{*this, "eps", llvm::cl::desc("Adam epsilon"),
                     llvm::cl::init(1e-8)};
  Option<std::string> noDecay{
      *this, "no-decay",
      llvm::cl::desc("Regex of parameters exempt from weight decay"),
      llvm::cl::init("")};
  Option<std::string> bnStats{*this, "bn-stats",
                              llvm::cl::desc("micro or step"),
                              llvm::cl::init("micro")};
  Option<std::string> freeze{*this, "freeze",
                             llvm::cl::desc("Regex of parameters to freeze"),
                             llvm::cl::init("")};
};

/// From a Train forward graph to the step functions @micro_step,
/// @apply_step and @eval_step.
void buildTrainingPipeline(mlir::OpPassManager &pm,
                           const TrainingPipelineOptions &options);

struct CPUCodegenPipelineOptions
    : public mlir::PassPipelineOptions<CPUCodegenPipelineOptions> {
  Option<bool> threads{
      *this, "threads",
      llvm::cl::desc("Split large kernels across the trainer's threads "
                     "(traincc_parallel_for)"),
      llvm::cl::init(true)};
};

/// Step functions in the Train dialect -> functions on memrefs: compute ops
/// become linalg, parameters become arguments updated in place, results
/// become output arguments. The signature is final after this stage (the
/// driver reads it to generate the trainer's descriptor).
void buildCPUBufferizePipeline(mlir::OpPassManager &pm,
                               const CPUCodegenPipelineOptions &options);

/// Functions on memrefs -> the LLVM dialect, with bare-pointer arguments.
void buildCPULowerToLLVMPipeline(mlir::OpPassManager &pm,
                                 const CPUCodegenPipelineOptions &options);

struct GPUCodegenPipelineOptions
    : public mlir::PassPipelineOptions<GPUCodegenPipelineOptions> {
  Option<std::string> arch{*this, "arch",
                           llvm::cl::desc("GPU architecture (sm_NN)"),
                           llvm::cl::init("sm_90")};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit folder (libdevice for math functions)"),
      llvm::cl::init("/usr/local/cuda")};
};

/// Functions on memrefs (after buildCPUBufferizePipeline) -> GPU steps: each
/// step function becomes a sequence of gpu.launch_func over its buffer
/// arguments, and the kernels one gpu.binary holding their PTX.
void buildGPULowerPipeline(mlir::OpPassManager &pm,
                           const GPUCodegenPipelineOptions &options);

/// Functions on memrefs -> the GPU kernels compiled for the CPU (threads one
/// after another, or as fibers meeting at barriers for kernels that share
/// memory), with `traincc_emu_<kernel>` entry points (LLVM dialect): the GPU
/// path checked numerically without a GPU (EmulateGPUKernels.cpp).
void buildGPUEmulationPipeline(mlir::OpPassManager &pm);

/// Registers every named pipeline with the pass registry.
void registerPipelines();

} // namespace traincc

#endif // TRAINCC_PIPELINES_PIPELINES_H
