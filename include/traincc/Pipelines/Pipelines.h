//===- Pipelines.h - named pass pipelines -----------------------*- C++ -*-===//
//
// Every pipeline `traincc` runs is built here, so that
// `traincc-opt --traincc-...-pipeline` reproduces any stage of a compile.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_PIPELINES_PIPELINES_H
#define TRAINCC_PIPELINES_PIPELINES_H

#include "traincc/Transforms/TrainingOptions.h"

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

/// The options of TrainingOptions.def that shape the training step, as
/// pipeline options (`-traincc-training-pipeline='optimizer=adamw ...'`).
struct TrainingPipelineOptions
    : public mlir::PassPipelineOptions<TrainingPipelineOptions> {
#define TRAINER_OPTION(TYPE, FIELD, FLAG, DEFAULT, VALUE_NAME, HELP)
#define TRAINING_OPTION(TYPE, FIELD, FLAG, DEFAULT, VALUE_NAME, HELP)          \
  Option<OptionValueType<TYPE>> FIELD{                                         \
      *this, FLAG, llvm::cl::desc(HELP),                                       \
      llvm::cl::init(optionInitialValue<TYPE>(DEFAULT)),                       \
      clValuesOf<OptionValueType<TYPE>>()};
#include "traincc/Transforms/TrainingOptions.def"

  /// The training options these pipeline options give (the others at
  /// their defaults).
  TrainingOptions toTrainingOptions() const;
};

/// From a Train forward graph to the step functions @micro_step,
/// @apply_step and @eval_step.
void buildTrainingPipeline(mlir::OpPassManager &pm,
                           const TrainingOptions &options);

struct LinalgPipelineOptions
    : public mlir::PassPipelineOptions<LinalgPipelineOptions> {
  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("Fuse elementwise chains (off under "
                                   "traincc --no-fuse)"),
                    llvm::cl::init(true)};
  Option<bool> collectives{
      *this, "collectives",
      llvm::cl::desc("Synchronized BatchNorm calls the trainer runtime "
                     "(false: per-replica statistics)"),
      llvm::cl::init(true)};
  Option<bool> cpuKernels{
      *this, "cpu-kernels",
      llvm::cl::desc("The steps become CPU loop nests: elementwise fusion "
                     "uses the CPU cost model (traincc-fuse-elementwise)"),
      llvm::cl::init(false)};
  Option<int64_t> winogradMinChannels{
      *this, "winograd-min-channels",
      llvm::cl::desc("With cpu-kernels: 3x3 stride-1 convolutions and their "
                     "gradients with at least this many input and output "
                     "channels go through Winograd "
                     "(traincc-winograd-convolutions; 0: none, the default "
                     "here; traincc's is 128)"),
      llvm::cl::init(0)};
  Option<bool> sumsInProducers{
      *this, "sums-in-producers",
      llvm::cl::desc("Without cpu-kernels (GPU kernels): BatchNorm's "
                     "backward sums computed by the op that computes dy "
                     "(traincc-fuse-sums-into-producers)"),
      llvm::cl::init(true)};

  LinalgPipelineOptions() = default;
  explicit LinalgPipelineOptions(bool fuseElementwise,
                                 bool replicaCollectives = true,
                                 bool forCPU = false,
                                 int64_t winogradChannels = 0) {
    fuse = fuseElementwise;
    collectives = replicaCollectives;
    cpuKernels = forCPU;
    winogradMinChannels = winogradChannels;
  }
};

/// Step functions in the Train dialect -> linalg on tensors: compute ops
/// become linalg, parameter reads and in-place updates become function
/// arguments and linalg on them, and elementwise chains fuse
/// (`--emit=linalg-mlir`).
void buildTrainToLinalgPipeline(mlir::OpPassManager &pm,
                                const LinalgPipelineOptions &options);

/// Step functions in the Train dialect -> functions on memrefs, for the CPU
/// and the GPU alike: buildTrainToLinalgPipeline, then bufferization;
/// parameters are arguments updated in place, results become output
/// arguments. The signature is final after this stage (the driver reads it
/// to generate the trainer's descriptor).
void buildBufferizePipeline(mlir::OpPassManager &pm,
                            const LinalgPipelineOptions &options);

struct CPUCodegenPipelineOptions
    : public mlir::PassPipelineOptions<CPUCodegenPipelineOptions> {
  Option<bool> threads{
      *this, "threads",
      llvm::cl::desc("Split large kernels across the trainer's threads "
                     "(traincc_parallel_for)"),
      llvm::cl::init(true)};
  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("Fuse elementwise chains, and BatchNorm "
                                   "means into the convolutions' epilogues "
                                   "(off under traincc --no-fuse)"),
                    llvm::cl::init(true)};
  Option<std::string> cpu{
      *this, "cpu",
      llvm::cl::desc("CPU the kernels are compiled for (traincc --cpu): "
                     "picks the vector width and instructions such as "
                     "vdpbf16ps"),
      llvm::cl::init("x86-64")};
};

/// Functions on memrefs -> CPU loop nests in the LLVM dialect, with
/// bare-pointer arguments.
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
  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("Fuse elementwise chains"),
                    llvm::cl::init(true)};
  Option<bool> convEpilogues{
      *this, "conv-epilogues",
      llvm::cl::desc("With fuse: the elementwise op that reads a tiled "
                     "convolution's output runs in the convolution's "
                     "kernel (traincc-fuse-gpu-conv-epilogues)"),
      llvm::cl::init(true)};
  Option<unsigned> parts{
      *this, "parts",
      llvm::cl::desc("gpu.modules the kernels are spread over, compiled in "
                     "parallel (one PTX text and cubin each)"),
      llvm::cl::init(1)};
  Option<unsigned> optLevel{
      *this, "opt-level",
      llvm::cl::desc("LLVM optimisation level of the kernels' PTX (0-3; "
                     "traincc's -O, which also sets ptxas's)"),
      llvm::cl::init(3)};
};

/// Functions on memrefs -> GPU steps: each step function becomes a sequence
/// of gpu.launch_func over its buffer arguments, and the kernels one
/// gpu.binary holding their PTX.
void buildGPULowerToNVVMPipeline(mlir::OpPassManager &pm,
                                 const GPUCodegenPipelineOptions &options);

/// Functions on memrefs -> the GPU kernels compiled for the CPU (threads one
/// after another, or as fibers meeting at barriers for kernels that share
/// memory), with `traincc_emu_<kernel>` entry points (LLVM dialect): the GPU
/// path checked numerically without a GPU (EmulateGPUKernels.cpp).
void buildGPUEmulationPipeline(mlir::OpPassManager &pm, bool fuse = true,
                               bool convEpilogues = true);

/// Registers every named pipeline with the pass registry.
void registerPipelines();

} // namespace traincc

#endif // TRAINCC_PIPELINES_PIPELINES_H
