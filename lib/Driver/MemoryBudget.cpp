//===- MemoryBudget.cpp - the micro-batch that fits a budget --------------===//
//
// Each candidate is compiled as far as its memory plan: import at that
// micro-batch, the training pipeline, the CPU lowering up to the LLVM
// dialect (which plans the workspace) and, for CUDA, the launch plans.
// No LLVM code generation, so a candidate costs a fraction of a compile.
// The plan of a micro-batch is exact (it is the plan the trainer will
// have), so the choice needs no margin.
//
//===----------------------------------------------------------------------===//

#include "MemoryBudget.h"

#include "CompileTiming.h"
#include "KernelReport.h"
#include "MemoryReport.h"
#include "TrainerDescription.h"

#include "traincc/Import/ONNXImporter.h"
#include "traincc/InitAll.h"
#include "traincc/Pipelines/Pipelines.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace traincc;

namespace {

/// The plan's peak on each target of one micro-batch.
struct CandidatePlan {
  std::optional<uint64_t> cpu, cuda;
};

std::optional<CandidatePlan> planFor(const CompileOptions &options,
                                     int64_t microBatch, bool cuda,
                                     bool recompute) {
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  ScopedDiagnosticHandler handler(&context, [](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      llvm::errs() << "traincc: error: " << diag.str() << "\n";
    return success();
  });
  ONNXImportOptions importOptions;
  importOptions.batchSize = microBatch;
  OwningOpRef<ModuleOp> module =
      importONNXFile(&context, options.inputPath, importOptions);
  if (!module)
    return std::nullopt;
  // Each candidate is a compile of its own, verified once per stage.
  CompileTiming timing(false, "", options.verifyEach);
  CompileStage stage(timing, "memory budget");
  PassManager stepPm(&context);
  stage.time(stepPm);
  buildImportPipeline(stepPm, ImportPipelineOptions());
  TrainingOptions training = options.training;
  training.recompute = recompute;
  buildTrainingPipeline(stepPm, training);
  if (failed(stage.run(stepPm, *module)))
    return std::nullopt;
  FailureOr<TrainerDescription> description =
      describeTrainer(*module, options);
  if (failed(description))
    return std::nullopt;
  CandidatePlan plan;
  if (cuda) {
    FailureOr<GPUProgram> program =
        buildGPUProgram(*module, *description, options, stage);
    if (failed(program))
      return std::nullopt;
    description->gpu = std::move(*program);
    plan.cuda = summarizeMemory(*description, true).peak();
  }
  if (options.targetCPU) {
    PassManager pm(&context);
    stage.time(pm);
    buildBufferizePipeline(pm,
                           LinalgPipelineOptions(
                               !options.training.noFuse,
                               /*replicaCollectives=*/true, /*forCPU=*/true,
                               options.training.winogradMinChannels));
    CPUCodegenPipelineOptions cpuOptions;
    cpuOptions.cpu = options.cpu;
    cpuOptions.fuse = !options.training.noFuse;
    buildCPULowerToLLVMPipeline(pm, cpuOptions);
    if (failed(stage.run(pm, *module)) ||
        failed(bindKernels(*module, *description)))
      return std::nullopt;
    plan.cpu = summarizeMemory(*description, false).peak();
  }
  return plan;
}

std::string describeBytes(uint64_t bytes) {
  return formatBytes(bytes) + " (" + std::to_string(bytes) + " bytes)";
}

} // namespace

std::optional<uint64_t> traincc::parseByteSize(llvm::StringRef text) {
  text = text.trim();
  size_t split = text.find_first_not_of("0123456789.eE+");
  // "1e9" is a number; "2e" is not, and neither is "GiB".
  llvm::StringRef number = text.take_front(split), unit = text.drop_front(
                                                       number.size());
  double value;
  if (number.empty() || number.getAsDouble(value) || !(value >= 0))
    return std::nullopt;
  unit = unit.trim();
  static const std::pair<const char *, double> units[] = {
      {"", 1},           {"B", 1},
      {"KB", 1e3},       {"MB", 1e6},
      {"GB", 1e9},       {"TB", 1e12},
      {"KiB", 1024.0},   {"MiB", 1024.0 * 1024},
      {"GiB", 1024.0 * 1024 * 1024}, {"TiB", 1024.0 * 1024 * 1024 * 1024}};
  for (auto [name, scale] : units)
    if (unit.equals_insensitive(name)) {
      double bytes = std::floor(value * scale);
      if (bytes > 1.8e19)
        return std::nullopt;
      return uint64_t(bytes);
    }
  return std::nullopt;
}

std::optional<CompileOptions>
traincc::applyMemoryBudget(const CompileOptions &options) {
  auto fail = [](const llvm::Twine &message) -> std::optional<CompileOptions> {
    llvm::errs() << "traincc: error: " << message << "\n";
    return std::nullopt;
  };
  const std::string &spelling = options.training.memoryBudget;
  std::optional<uint64_t> budget = parseByteSize(spelling);
  if (!budget || *budget == 0)
    return fail("--memory-budget must be a size such as 2GiB, 512MiB or "
                "1e9, got '" + spelling + "'");
  if (!options.batchSize)
    return fail("--memory-budget needs --batch-size: the effective batch "
                "it keeps while choosing the micro-batch");
  if (options.emit != EmitKind::Exe && options.emit != EmitKind::Obj &&
      options.emit != EmitKind::LLVMIR)
    return fail("--memory-budget applies to trainers (--emit=exe, obj or "
                "llvm)");
  int64_t batch = *options.batchSize;
  bool cuda = options.targetCUDA.value_or(
      options.emit == EmitKind::Exe &&
      findPtxas(options.cudaToolkit).has_value());

  std::optional<CandidatePlan> smallest;
  for (int64_t micro = batch; micro >= 1; --micro) {
    if (batch % micro != 0)
      continue;
    auto fits = [&](const CandidatePlan &plan) {
      return (!plan.cpu || *plan.cpu <= *budget) &&
             (!plan.cuda || *plan.cuda <= *budget);
    };
    bool recompute = options.training.recompute;
    std::optional<CandidatePlan> plan = planFor(options, micro, cuda, recompute);
    if (!plan)
      return std::nullopt;
    // Recomputing cheap forward values in the backward pass before a
    // smaller micro-batch: one more pass over them costs less than the
    // smaller kernels and the extra accumulation steps.
    if (!fits(*plan) && !recompute) {
      plan = planFor(options, micro, cuda, /*recompute=*/true);
      if (!plan)
        return std::nullopt;
      recompute = true;
    }
    if (!fits(*plan)) {
      smallest = plan;
      continue;
    }
    CompileOptions chosen = options;
    chosen.training.memoryBudget.clear();
    chosen.training.recompute = recompute;
    chosen.batchSize = micro;
    chosen.training.accumSteps = options.training.accumSteps * (batch / micro);
    llvm::errs() << "traincc: memory budget " << describeBytes(*budget)
                 << ": micro-batch " << micro << ", accumulation steps "
                 << chosen.training.accumSteps << " (effective batch "
                 << batch * options.training.accumSteps << ")"
                 << (recompute ? ", recomputing cheap forward values" : "");
    if (plan->cpu)
      llvm::errs() << "; plan peak cpu " << describeBytes(*plan->cpu);
    if (plan->cuda)
      llvm::errs() << "; plan peak cuda " << describeBytes(*plan->cuda);
    llvm::errs() << "\n";
    return chosen;
  }
  std::string needs;
  if (smallest->cpu && *smallest->cpu > *budget)
    needs += " " + describeBytes(*smallest->cpu) + " on the cpu";
  if (smallest->cuda && *smallest->cuda > *budget)
    needs += std::string(needs.empty() ? "" : " and") + " " +
             describeBytes(*smallest->cuda) + " on cuda";
  return fail("--memory-budget " + spelling + " (" +
              std::to_string(*budget) +
              " bytes) is too small: a micro-batch of 1 needs" + needs);
}
