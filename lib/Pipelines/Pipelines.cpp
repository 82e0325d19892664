//===- Pipelines.cpp - named pass pipelines -------------------------------===//

#include "traincc/Pipelines/Pipelines.h"

#include "traincc/Codegen/CPU/Passes.h"
#include "traincc/Codegen/Common/Passes.h"
#include "traincc/Codegen/GPU/Passes.h"
#include "traincc/Codegen/GPUEmulation/Passes.h"
#include "traincc/Codegen/TrainToLinalg/Passes.h"
#include "traincc/Import/Passes.h"
#include "traincc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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

traincc::TrainingOptions
traincc::TrainingPipelineOptions::toTrainingOptions() const {
  TrainingOptions options;
#define TRAINER_OPTION(TYPE, FIELD, FLAG, DEFAULT, VALUE_NAME, HELP)
#define TRAINING_OPTION(TYPE, FIELD, FLAG, DEFAULT, VALUE_NAME, HELP)          \
  options.FIELD = fieldFromOption<TYPE>(FIELD, FIELD.hasValue());
#include "traincc/Transforms/TrainingOptions.def"
  return options;
}

void traincc::buildTrainingPipeline(OpPassManager &pm,
                                    const TrainingOptions &options) {
  // Freezing first: every later pass asks whether a parameter trains.
  pm.addPass(createFreezeParamsPass(FreezeParamsPassOptions{options.freeze}));
  pm.addPass(createAppendLossPass(AppendLossPassOptions{options.loss}));
  ExplicitTrainingModePassOptions modeOptions;
  modeOptions.bnStats = options.bnStats;
  pm.addPass(createExplicitTrainingModePass(modeOptions));
  // The ReLU before a max pooling moves after it, onto the pooled tensor
  // (every step). @eval_step normalises with running statistics from here
  // on; folding them into the convolutions now lets the canonicalizer
  // below tidy the weight reshapes. --no-fuse keeps both as the model
  // wrote them, for comparison.
  if (!options.noFuse) {
    pm.addPass(createPoolBeforeReluPass());
    pm.addPass(createFoldBatchNormIntoConvPass());
  }
  // Mixed precision and loss scaling before autodiff, which carries their
  // types and the scaled loss into the backward pass.
  pm.addPass(createInsertCastsPass(InsertCastsPassOptions{options.precision}));
  LossScalingPassOptions scalingOptions;
  scalingOptions.precision = options.precision;
  scalingOptions.lossScale = options.lossScale;
  scalingOptions.initScale = options.lossScaleInit;
  scalingOptions.interval = options.lossScaleGrowthInterval;
  pm.addPass(createLossScalingPass(scalingOptions));
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
  optimizerOptions.weightDecay = options.getWeightDecay();
  optimizerOptions.beta1 = options.beta1;
  optimizerOptions.beta2 = options.beta2;
  optimizerOptions.eps = options.eps;
  optimizerOptions.noDecay = options.noDecay;
  pm.addPass(createBuildOptimizerPass(optimizerOptions));
  // After autodiff, which creates the BatchNorm backward ops to mark.
  if (options.syncBatchNorm)
    pm.addPass(createSynchronizeBatchNormPass());
  // Gradient rules emit small arithmetic (broadcast reductions, scalar
  // factors) that folds.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Last, on the tidied step: CSE would merge the clones back.
  if (options.recompute)
    pm.addPass(createRecomputeActivationsPass());
}

void traincc::buildTrainToLinalgPipeline(OpPassManager &pm,
                                         const LinalgPipelineOptions &options) {
  // Before the direct lowering, which takes the convolutions left.
  if (options.cpuKernels && options.winogradMinChannels > 0) {
    WinogradConvolutionsPassOptions winograd;
    winograd.minChannels = options.winogradMinChannels;
    pm.addPass(createWinogradConvolutionsPass(winograd));
  }
  ConvertTrainToLinalgPassOptions lowering;
  lowering.replicaCollectives = options.collectives;
  pm.addPass(createConvertTrainToLinalgPass(lowering));
  // After compute lowering, so state updates are plain linalg on tensors.
  pm.addPass(createLowerStatePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // On tensors, where producer and consumer are explicit values, and after
  // the state lowering, so that optimizer updates fuse too; before
  // bufferization, so that the CPU and GPU kernels both see the fused ops.
  if (options.fuse) {
    FuseElementwisePassOptions fusion;
    fusion.cpuKernels = options.cpuKernels;
    pm.addPass(createFuseElementwisePass(fusion));
    // One launch and one read of dy fewer per BatchNorm on the GPU; the
    // CPU kernels measured slower with it (the pass's description).
    if (!options.cpuKernels && options.sumsInProducers)
      pm.addPass(createFuseSumsIntoProducersPass());
  }
}

void traincc::buildBufferizePipeline(OpPassManager &pm,
                                     const LinalgPipelineOptions &options) {
  buildTrainToLinalgPipeline(pm, options);
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // After the last CSE: an empty shared by a forward and a backward op
  // would become one buffer alive across the step, outside the memory plan.
  pm.addPass(createSplitEmptyTensorsPass());
  pm.addPass(createSplitSharedFillsPass());
  // CPU kernels walk strided interiors as fast as whole buffers; the GPU
  // kernels' launch geometry assumes whole buffers.
  if (options.cpuKernels)
    pm.addPass(createPadInProducerPass());
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Bufferization copies each padded interior onto itself, through two
  // equal subviews: merged, the canonicalizer below drops the copies.
  if (options.cpuKernels)
    pm.addPass(createCSEPass());
  // Parameters were updated in their own buffers: their results go, the
  // remaining results (losses, outputs) become caller-provided buffers.
  pm.addPass(createDropStateResultsPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.modifyPublicFunctions = true;
  // Results of static shape are computed straight into the caller's buffer.
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addPass(createCanonicalizerPass());
}

/// f16 and bf16 arithmetic and math functions computed in f32, each result
/// rounded back once: exactly the low-precision operation for +, -, *, /
/// (f32 holds more than twice their precision), the same numbers on the
/// CPU and the GPU, and no f16/bf16 libm calls. Only conversions, loads and
/// stores stay in f16/bf16.
static void addWidenLowPrecisionPasses(OpPassManager &pm) {
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"f16", "bf16"};
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  pm.addPass(math::createMathExtendToSupportedTypes());
}

void traincc::buildCPULowerToLLVMPipeline(
    OpPassManager &pm, const CPUCodegenPipelineOptions &options) {
  // Kernels: every linalg op as a loop nest whose innermost loop LLVM can
  // vectorize, the large ones split across the trainer's threads.
  pm.addPass(createLinalgGeneralizeNamedOpsPass());
  int64_t vectorWidth = cpuHasFeature(options.cpu, "avx512f") ? 16 : 8;
  PackConvolutionWindowsPassOptions pack;
  pack.vectorWidth = vectorWidth;
  pm.addPass(createPackConvolutionWindowsPass(pack));
  pm.addPass(createCollapseContiguousLoopsPass());
  pm.addPass(createOrderLoopsForVectorizationPass());
  // BatchNorm means in the convolutions' epilogues: on the final loop
  // nests, before the memory plan places their partial sums.
  if (options.fuse)
    pm.addPass(createFuseConvChannelSumsPass());
  // Every temporary (the packed convolution windows too) in one workspace
  // the runtime allocates once; before outlining, so that a loop nest's
  // buffers stay alive for its whole parallel call. Deallocation then has
  // only what a step does not own left to free.
  pm.addPass(createPlanStepMemoryPass());
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  // Before outlining, which moves each fill and its contraction into
  // separate functions; the vectorizer below starts those sums at zero.
  pm.addPass(createAbsorbZeroFillsPass());
  if (options.threads) {
    pm.addPass(createOutlineParallelLoopsPass());
    // Repeated blocks' kernels are generated and compiled once.
    pm.addPass(createShareIdenticalKernelsPass());
  }
  // Convolutions and matmuls (f32, or bf16/f16 with f32 accumulation) as
  // register-tiled loops over vectors; vdpbf16ps for bf16 dot products
  // where the CPU has AVX512-BF16. An f16 operand is widened with F16C;
  // without it, each lane would be a libgcc call, slower than the scalar
  // loops LLVM makes.
  VectorizeContractionsPassOptions vectorize;
  vectorize.avx512bf16 = cpuHasFeature(options.cpu, "avx512bf16");
  vectorize.vectorWidth = vectorWidth;
  vectorize.f16c = cpuHasFeature(options.cpu, "f16c");
  pm.addPass(createVectorizeContractionsPass(vectorize));
  // Max pooling's rows (2x2 windows, stride 2) as loads and shuffles.
  VectorizeInterleavedWindowsPassOptions windows;
  windows.vectorWidth = vectorWidth;
  pm.addPass(createVectorizeInterleavedWindowsPass(windows));
  // Winograd transforms: each tile position's formula as straight code.
  pm.addPass(createUnrollTilePositionsPass());
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  addWidenLowPrecisionPasses(pm);
  // Then bf16 conversions as integer code: no libgcc __truncsfbf2, and no
  // denormal flushing where the CPU has AVX512-BF16. (f16 conversions stay
  // LLVM's: F16C instructions or libgcc's __truncsfhf2/__extendhfsf2.)
  pm.addPass(createExpandBF16ConversionsPass());
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.x86Vector = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createConvertMathToLLVMPass());
  // What LLVM has no intrinsic for (tanh, ...) calls libm.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  // Step functions take plain pointers: the trainer passes addresses in
  // its state arena, not memref descriptors.
  funcOptions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  if (options.threads)
    pm.addPass(createLowerParallelCallsPass());
}

/// Whether `arch` (sm_NN) has mma.sync m16n8k16 on f16 and bf16: sm_80 on.
static bool hasTensorCoreMma(llvm::StringRef arch) {
  unsigned version = 0;
  return arch.consume_front("sm_") && !arch.consumeInteger(10, version) &&
         version >= 80;
}

/// Bufferized step functions -> launches of kernels in @traincc_kernels;
/// mixed-precision contractions on the tensor cores if `tensorCores`.
static void buildGPUKernelPipeline(OpPassManager &pm, bool tensorCores,
                                   bool fuse, bool convEpilogues,
                                   unsigned parts = 1) {
  using namespace traincc;
  // BatchNorm means in the tiled convolutions' epilogues: before the split
  // would cut their sums in two and the plan places the partials.
  // The ReLU mask (and BatchNorm's backward sums) that read a tiled
  // convolution's output in its epilogue, by the same rule.
  if (fuse) {
    pm.addPass(createFuseGPUConvChannelSumsPass());
    if (convEpilogues)
      pm.addPass(createFuseGPUConvEpiloguesPass());
  }
  pm.addPass(createSplitGPUReductionsPass());
  pm.addPass(createPrepareGPUStepsPass());
  // Convolutions, matmuls and long sums get tiled kernels of their own;
  // every other op becomes one thread per output below.
  TileGPUContractionsPassOptions tile;
  tile.tensorCores = tensorCores;
  pm.addPass(createTileGPUContractionsPass(tile));
  pm.addPass(createMapGPUReductionsPass());
  // What is left runs one thread per output: reduction loops go inside.
  pm.addPass(createOrderGPULoopsPass());
  pm.addPass(createConvertLinalgToParallelLoopsPass());
  // Adjacent loop nests over the same iterations whose second reads what the
  // first wrote at the same place (elementwise chains) become one kernel.
  pm.addNestedPass<func::FuncOp>(createParallelLoopFusionPass());
  pm.addPass(createMapToGPUPass());
  // Launches that do not depend on each other side by side, chains of
  // single-block ones behind barriers; while each temporary still has its
  // own workspace range, so that dependencies are exact.
  if (fuse)
    pm.addPass(createFuseGPULaunchesPass());
  // Kernels run in order: temporaries alive in disjoint kernel ranges
  // share memory.
  pm.addPass(createPackGPUWorkspacePass());
  // Then each kernel takes its temporaries as arguments, not as offsets in
  // its code: the repeated blocks' kernels become equal and are merged.
  pm.addPass(createHoistWorkspaceViewsPass());
  // Outlining right away: CSE would hoist the constants MapToGPU cloned
  // into each kernel back out, making them kernel arguments.
  pm.addPass(createGpuKernelOutliningPass());
  MergeKernelModulesPassOptions merge;
  merge.parts = parts;
  pm.addPass(createMergeKernelModulesPass(merge));
  // Every region is one block here (structured control flow): region
  // simplification finds nothing to remove, yet walks the whole module,
  // kernels and steps, after each round of folding.
  GreedyRewriteConfig canonicalize;
  canonicalize.setRegionSimplificationLevel(
      GreedySimplifyRegionLevel::Disabled);
  pm.addPass(createCanonicalizerPass(canonicalize));
}

void traincc::buildGPULowerToNVVMPipeline(
    OpPassManager &pm, const GPUCodegenPipelineOptions &options) {
  buildGPUKernelPipeline(pm, hasTensorCoreMma(options.arch), options.fuse,
                         options.convEpilogues, options.parts);
  // Plan pointers are 16-byte aligned and distinct: NVPTX's load/store
  // vectorizer then merges adjacent global accesses into v2/v4 ones. (The
  // emulated kernels need no such hint.)
  pm.addPass(createAnnotateKernelPointersPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.arch;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createSCFToControlFlowPass());
  // As on the CPU, so that the emulated kernels compute the same numbers;
  // conversions stay native (cvt.rn.bf16.f32 rounds to nearest even).
  addWidenLowPrecisionPasses(kernels);
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  // Kernels take plain device pointers: the launch plan passes addresses
  // in the state arena and the workspace, not memref descriptors.
  nvvm.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  // No canonicalizer here: LLVM's own folding, at the optimisation level
  // the target asks for, leaves the same PTX at a fraction of the time.
  kernels.addPass(createReconcileUnrealizedCastsPass());
  // The parts above and their translation to PTX run on the context's
  // threads.
  SerializeGPUModulesPassOptions serialize;
  serialize.toolkit = options.toolkit;
  pm.addPass(createSerializeGPUModulesPass(serialize));
}

void traincc::buildGPUEmulationPipeline(OpPassManager &pm, bool fuse,
                                        bool convEpilogues) {
  // The emulated GPU is taken to be an sm_80 or newer (the trainers' PTX
  // is built for sm_90 by default).
  buildGPUKernelPipeline(pm, /*tensorCores=*/true, fuse, convEpilogues);
  // Tensor-core mma.sync are warp-collective: lanes exchange fragments
  // through shared memory between barriers.
  pm.addPass(createEmulateMmaSyncPass());
  pm.addPass(createGPUKernelsToCPUPass());
  CPUCodegenPipelineOptions cpu;
  cpu.threads = false;
  // The CUDA kernels' own fusion is done; none of the CPU kernels'.
  cpu.fuse = false;
  buildCPULowerToLLVMPipeline(pm, cpu);
  pm.addPass(createEmulationEntryPointsPass());
}

void traincc::registerPipelines() {
  PassPipelineRegistration<ImportPipelineOptions>(
      "traincc-import-pipeline",
      "Legalises first-stage ONNX import into a Train forward graph",
      buildImportPipeline);
  PassPipelineRegistration<TrainingPipelineOptions>(
      "traincc-training-pipeline",
      "Builds the training-step functions from a Train forward graph",
      [](OpPassManager &pm, const TrainingPipelineOptions &options) {
        buildTrainingPipeline(pm, options.toTrainingOptions());
      });
  PassPipelineRegistration<LinalgPipelineOptions>(
      "traincc-train-to-linalg-pipeline",
      "Lowers training-step functions to linalg on tensors",
      buildTrainToLinalgPipeline);
  PassPipelineRegistration<LinalgPipelineOptions>(
      "traincc-bufferize-pipeline",
      "Lowers training-step functions to linalg on buffers (CPU and GPU)",
      buildBufferizePipeline);
  PassPipelineRegistration<CPUCodegenPipelineOptions>(
      "traincc-cpu-codegen-pipeline",
      "Lowers training-step functions to the LLVM dialect for the CPU",
      [](OpPassManager &pm, const CPUCodegenPipelineOptions &options) {
        LinalgPipelineOptions linalg;
        linalg.fuse = options.fuse;
        linalg.cpuKernels = true;
        buildBufferizePipeline(pm, linalg);
        buildCPULowerToLLVMPipeline(pm, options);
      });
  PassPipelineRegistration<GPUCodegenPipelineOptions>(
      "traincc-gpu-codegen-pipeline",
      "Lowers training-step functions to CUDA kernels and launch sequences",
      [](OpPassManager &pm, const GPUCodegenPipelineOptions &options) {
        LinalgPipelineOptions linalg;
        linalg.fuse = options.fuse;
        buildBufferizePipeline(pm, linalg);
        buildGPULowerToNVVMPipeline(pm, options);
      });
  PassPipelineRegistration<LinalgPipelineOptions>(
      "traincc-gpu-emulation-pipeline",
      "Lowers training-step functions to the CUDA kernels compiled for the "
      "CPU, with emulation entry points",
      [](OpPassManager &pm, const LinalgPipelineOptions &options) {
        buildBufferizePipeline(pm, options);
        buildGPUEmulationPipeline(pm, options.fuse);
      });
}
