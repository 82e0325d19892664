//===- Compile.cpp - the traincc compile driver ---------------------------===//

#include "traincc/Driver/Compile.h"

#include "CompileTiming.h"
#include "MemoryBudget.h"
#include "MemoryReport.h"
#include "TrainerDescription.h"

#include "llvm/Support/FormatVariadic.h"

#include "traincc/Codegen/CPU/EmitObject.h"
#include "traincc/Codegen/CPU/Passes.h"
#include "traincc/Dialect/Train/IR/TrainOps.h"
#include "traincc/Import/ONNXImporter.h"
#include "traincc/InitAll.h"
#include "traincc/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <thread>

using namespace mlir;
using namespace traincc;

namespace {

/// Prints diagnostics as "traincc: error: MESSAGE". Locations of imported
/// ONNX nodes carry no line information, and the messages themselves name
/// the node; MLIR-text locations (file:line:col) are kept.
LogicalResult printDiagnostic(Diagnostic &diag) {
  // One write: the GPU code generation reports from a thread of its own.
  std::string message;
  llvm::raw_string_ostream os(message);
  os << "traincc: ";
  if (auto file = dyn_cast<FileLineColLoc>(diag.getLocation()))
    if (file.getLine() != 0)
      os << file.getFilename() << ":" << file.getLine() << ":"
         << file.getColumn() << ": ";
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error:
    os << "error: ";
    break;
  case DiagnosticSeverity::Warning:
    os << "warning: ";
    break;
  case DiagnosticSeverity::Note:
    os << "note: ";
    break;
  case DiagnosticSeverity::Remark:
    os << "remark: ";
    break;
  }
  os << diag.str() << "\n";
  for (Diagnostic &note : diag.getNotes())
    os << "traincc: note: " << note.str() << "\n";
  llvm::errs() << message;
  return success();
}

void printReport(ModuleOp module, llvm::raw_ostream &os) {
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (forward) {
    for (auto [index, type] : llvm::enumerate(forward.getArgumentTypes())) {
      auto name = forward.getArgAttrOfType<StringAttr>(index, "train.name");
      os << "input  " << (name ? name.getValue() : StringRef("?")) << ": "
         << type << "\n";
    }
    for (auto [index, type] : llvm::enumerate(forward.getResultTypes())) {
      auto name = forward.getResultAttrOfType<StringAttr>(index, "train.name");
      os << "output " << (name ? name.getValue() : StringRef("?")) << ": "
         << type << "\n";
    }
  }
  llvm::MapVector<StringRef, unsigned> opCounts;
  module.walk([&](Operation *op) {
    if (isa<train::TrainDialect>(op->getDialect()) &&
        !isa<train::ParamOp, train::ReadParamOp>(op))
      ++opCounts[op->getName().getStringRef()];
  });
  os << "ops:";
  for (auto &[name, count] : opCounts)
    os << " " << name.drop_front(6) << "=" << count;
  os << "\n";
  uint64_t tensors[4] = {0, 0, 0, 0}, elements[4] = {0, 0, 0, 0}, bytes = 0;
  for (auto param : module.getOps<train::ParamOp>()) {
    unsigned kind = static_cast<unsigned>(param.getKind());
    RankedTensorType type = param.getTensorType();
    ++tensors[kind];
    elements[kind] += type.getNumElements();
    bytes += type.getNumElements() *
             ((type.getElementTypeBitWidth() + 7) / 8);
  }
  os << "parameters: " << elements[0] << " trainable in " << tensors[0]
     << " tensors";
  if (tensors[1])
    os << ", " << elements[1] << " frozen in " << tensors[1] << " tensors";
  os << "; BatchNorm state: " << elements[2] + elements[3] << " values in "
     << tensors[2] + tensors[3] << " tensors; " << bytes << " bytes\n";
}

} // namespace

static std::string formatNumber(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << value;
  return text;
}

bool traincc::validateOptions(const CompileOptions &options) {
  auto fail = [](const llvm::Twine &message) {
    llvm::errs() << "traincc: error: " << message << "\n";
    return false;
  };
  const TrainingOptions &t = options.training;
  if (options.optLevel > 3)
    return fail("-O must be -O0, -O1, -O2 or -O3, got -O" +
                llvm::Twine(options.optLevel));
  if (options.inputPath.empty())
    return fail("no input model (usage: traincc MODEL.onnx [options]; see "
                "--help)");
  bool binary = options.emit == EmitKind::Exe ||
                options.emit == EmitKind::Obj ||
                options.emit == EmitKind::CUDAEmulation;
  if (binary && options.outputPath == "-")
    return fail("-o FILE is required to emit a trainer or an object file");
  if (!options.targetSpelling.empty()) {
    SmallVector<StringRef> targets;
    StringRef(options.targetSpelling).split(targets, ',');
    for (StringRef target : targets)
      if (target != "cpu" && target != "cuda")
        return fail("--target must be cpu, cuda or cpu,cuda, got '" +
                    options.targetSpelling + "'");
  }
  if (!options.targetCPU &&
      (options.emit == EmitKind::Obj || options.emit == EmitKind::LLVMIR))
    return fail("--emit=obj and --emit=llvm are CPU kernels; they need "
                "--target to include cpu");
  if (!llvm::Regex("^sm_[0-9]+a?$").match(options.gpuArch))
    return fail("--gpu-arch must look like sm_90, got '" + options.gpuArch +
                "'");
  if (options.batchSize && *options.batchSize < 1)
    return fail("--batch-size must be positive, got " +
                llvm::Twine(*options.batchSize));
  if (!isKnownCPU(options.cpu))
    return fail("--cpu '" + options.cpu +
                "' is not a CPU LLVM knows for this machine's target; use "
                "native, x86-64 or a name that `llc -mcpu=help` lists");
  if (t.accumSteps < 1)
    return fail("--accum-steps must be at least 1, got " +
                llvm::Twine(t.accumSteps));
  if (!(t.momentum >= 0.0 && t.momentum < 1.0))
    return fail("--momentum must be in [0, 1), got " +
                formatNumber(t.momentum));
  if (!(t.dampening >= 0.0 && t.dampening <= 1.0))
    return fail("--dampening must be in [0, 1], got " +
                formatNumber(t.dampening));
  if (t.nesterov && (t.momentum == 0.0 || t.dampening != 0.0))
    return fail("--nesterov needs --momentum > 0 and --dampening 0");
  if (!(t.getWeightDecay() >= 0.0))
    return fail("--weight-decay must be non-negative, got " +
                formatNumber(t.getWeightDecay()));
  if (!(t.beta1 >= 0.0 && t.beta1 < 1.0) || !(t.beta2 >= 0.0 && t.beta2 < 1.0))
    return fail("--beta1 and --beta2 must be in [0, 1)");
  if (!(t.eps > 0.0))
    return fail("--eps must be positive, got " + formatNumber(t.eps));
  // --loss-scale's value and its combination with --precision.
  auto lossScale = t.getLossScale();
  if (auto *error = std::get_if<std::string>(&lossScale))
    return fail(*error);
  for (auto [flag, pattern] : {std::pair<StringRef, const std::string &>{
                                   "--freeze", t.freeze},
                               {"--no-decay", t.noDecay}}) {
    std::string error;
    if (!pattern.empty() && !llvm::Regex(pattern).isValid(error))
      return fail(flag + " regex '" + pattern + "' is invalid: " + error);
  }
  return true;
}

namespace {

int printModule(ModuleOp module, const CompileOptions &options) {
  std::string error;
  auto output = openOutputFile(options.outputPath, &error);
  if (!output) {
    llvm::errs() << "traincc: error: " << error << "\n";
    return 1;
  }
  OpPrintingFlags flags;
  if (!options.printWeights)
    flags.elideLargeElementsAttrs(16);
  module->print(output->os(), flags);
  output->keep();
  return 0;
}

/// A fresh temporary folder for a compile's intermediate files, removed at
/// the end unless TRAINCC_KEEP_TEMPS is set.
class WorkDir {
public:
  bool create() {
    if (std::error_code error =
            llvm::sys::fs::createUniqueDirectory("traincc", path_)) {
      llvm::errs() << "traincc: error: cannot create a temporary directory: "
                   << error.message() << "\n";
      return false;
    }
    return true;
  }
  ~WorkDir() {
    if (path_.empty())
      return;
    if (!std::getenv("TRAINCC_KEEP_TEMPS"))
      (void)llvm::sys::fs::remove_directories(path_);
    else
      llvm::errs() << "traincc: kept intermediate files in " << path_ << "\n";
  }
  llvm::StringRef path() const { return path_; }

private:
  SmallString<128> path_;
};

/// --timing: each LLVM part's seconds, and the slowest optimisation passes
/// over all parts.
void printObjectTimings(ArrayRef<ObjectPartTiming> parts) {
  llvm::StringMap<double> passSeconds;
  for (auto [index, part] : llvm::enumerate(parts)) {
    llvm::errs() << llvm::formatv(
        "traincc: timing:   LLVM part {0} of {1}: {2} functions, "
        "optimisation {3:f3} s, code generation {4:f3} s\n",
        index + 1, parts.size(), part.functions, part.optimizeSeconds,
        part.codegenSeconds);
    for (const auto &pass : part.passSeconds)
      passSeconds[pass.getKey()] += pass.getValue();
  }
  std::vector<std::pair<double, std::string>> slowest;
  for (const auto &pass : passSeconds)
    slowest.push_back({pass.getValue(), pass.getKey().str()});
  llvm::sort(slowest, [](const auto &a, const auto &b) { return a > b; });
  if (slowest.size() > 10)
    slowest.resize(10);
  llvm::errs() << "traincc: timing:   slowest LLVM optimisation passes "
                  "(seconds summed over the parts, nested passes excluded):\n";
  for (const auto &[seconds, name] : slowest)
    llvm::errs() << llvm::formatv("traincc: timing:     {0,8:f3} s  {1}\n",
                                  seconds, name);
}

/// The CUDA side of the trainer: kernels, launch plans and (with ptxas) a
/// cubin, built while the CPU code is generated. The GPU passes are mostly
/// single-threaded, like the CPU ones, so on a second core they cost the
/// compile little wall time. They run on their own thread in a context of
/// their own (a bytecode copy of the step functions): the two pipelines
/// share no IR, dialect registry or diagnostic handler. With one job
/// (--jobs 1) the build runs in start() itself.
///
/// When CUDA was not asked for explicitly, a model the GPU path cannot
/// compile yet gets a warning and a CPU-only trainer.
class GPUProgramBuild {
public:
  ~GPUProgramBuild() { join(); }

  /// Copies `module` (before the CPU lowering rewrites it) and starts.
  LogicalResult start(ModuleOp module, const TrainerDescription &description,
                      const CompileOptions &options, llvm::StringRef workDir,
                      CompileTiming &timing, PendingAssembly &assembly) {
    MLIRContext *hostContext = module.getContext();
    context_ = std::make_unique<MLIRContext>(hostContext->getDialectRegistry(),
                                             MLIRContext::Threading::DISABLED);
    // The compile's threads (the kernel parts are serialized on them).
    context_->setThreadPool(hostContext->getThreadPool());
    context_->loadAllAvailableDialects();
    context_->printOpOnDiagnostic(false);
    std::string bytecode;
    {
      llvm::raw_string_ostream os(bytecode);
      if (failed(writeBytecodeToFile(module, os)))
        return module.emitError("cannot copy the step functions for the GPU");
    }
    module_ = parseSourceString<ModuleOp>(bytecode, ParserConfig(&*context_));
    if (!module_)
      return module.emitError("cannot copy the step functions for the GPU");
    started_ = true;
    // Its own copy: the CPU side fills in the description meanwhile.
    description_ = description;
    auto build = [this, &options, workDir = workDir.str(), &timing,
                  &assembly] {
      build_(*description_, options, workDir, timing, assembly);
    };
    background_ =
        llvm::hardware_concurrency(options.jobs).compute_thread_count() > 1;
    if (background_)
      thread_ = std::thread(build);
    else
      build();
    return success();
  }

  /// Waits for the build; on success, `description` gets the program
  /// (none, after the warning, when CUDA was not asked for and the model
  /// cannot compile for it).
  LogicalResult finish(TrainerDescription &description,
                       CompileTiming &timing) {
    if (!started_)
      return success();
    {
      std::optional<CompileStage> wait;
      if (background_)
        wait.emplace(timing, "wait for the GPU code generation");
      join();
    }
    started_ = false;
    if (failed(result_))
      return failure();
    if (program_)
      description.gpu = std::move(*program_);
    return success();
  }

private:
  void join() {
    if (thread_.joinable())
      thread_.join();
  }

  void build_(const TrainerDescription &description,
              const CompileOptions &options, const std::string &workDir,
              CompileTiming &timing, PendingAssembly &assembly) {
    CompileStage stage(timing,
                       "GPU code generation (MLIR, NVVM; ptxas started)",
                       background_);
    bool explicitRequest = options.targetCUDA.has_value();
    std::optional<std::string> ptxas = findPtxas(options.cudaToolkit);
    // Errors of an implicit GPU build become one warning.
    std::string diagnostics;
    ScopedDiagnosticHandler handler(&*context_, [&](Diagnostic &diag) {
      if (explicitRequest)
        return printDiagnostic(diag);
      if (diag.getSeverity() == DiagnosticSeverity::Error)
        diagnostics += diag.str();
      return success();
    });
    // Two parts per thread, so that the parts finish together; one when
    // there is one thread (--jobs 1).
    unsigned threads =
        llvm::hardware_concurrency(options.jobs).compute_thread_count();
    FailureOr<GPUProgram> program = buildGPUProgram(
        *module_, description, options, stage, threads > 1 ? 2 * threads : 1);
    module_ = nullptr;
    if (failed(program)) {
      if (explicitRequest) {
        result_ = failure();
        return;
      }
      llvm::errs() << "traincc: warning: no CUDA kernels for this model (" +
                          diagnostics + "); the trainer runs on the CPU only\n";
      return;
    }
    // ptxas runs in the background while the CPU code is generated.
    if (ptxas && failed(assembly.start(*program, *ptxas, workDir))) {
      result_ = failure();
      return;
    }
    program_ = std::move(*program);
  }

  std::unique_ptr<MLIRContext> context_;
  OwningOpRef<ModuleOp> module_;
  std::optional<TrainerDescription> description_;
  std::thread thread_;
  bool started_ = false, background_ = false;
  LogicalResult result_ = success();
  std::optional<GPUProgram> program_;
};

/// Writes the CUDA kernels as PTX (--emit=ptx).
int emitPTX(ModuleOp module, const CompileOptions &options,
            CompileTiming &timing) {
  FailureOr<TrainerDescription> description =
      describeTrainer(module, options);
  if (failed(description))
    return 1;
  CompileStage stage(timing, "GPU code generation (MLIR, NVVM)");
  FailureOr<GPUProgram> program =
      buildGPUProgram(module, *description, options, stage);
  if (failed(program))
    return 1;
  if (options.report)
    printKernelReport(nullptr, program->costs ? &*program->costs : nullptr,
                      llvm::outs());
  std::string error;
  auto output = openOutputFile(options.outputPath, &error);
  if (!output) {
    llvm::errs() << "traincc: error: " << error << "\n";
    return 1;
  }
  // One part: a single PTX text.
  output->os() << program->modules.front().ptx;
  output->keep();
  return 0;
}

/// Writes the CUDA kernels compiled for the CPU (--emit=cuda-emulation).
int emitCUDAEmulation(ModuleOp module, const CompileOptions &options,
                      CompileTiming &timing) {
  CompileStage stage(timing, "GPU emulation code generation");
  PassManager pm(module.getContext());
  stage.time(pm);
  // The trainer's kernels: those of steps with --sync-bn's collectives.
  LinalgPipelineOptions linalg;
  setGPULinalgOptions(linalg, options);
  buildBufferizePipeline(pm, linalg);
  buildGPUEmulationPipeline(pm, !options.training.noFuse,
                            options.convEpilogues);
  if (failed(stage.run(pm, module)))
    return 1;
  ObjectOptions objectOptions;
  objectOptions.cpu = options.cpu;
  objectOptions.optLevel = options.optLevel;
  std::string error;
  auto output = openOutputFile(options.outputPath, &error);
  if (!output) {
    llvm::errs() << "traincc: error: " << error << "\n";
    return 1;
  }
  if (failed(emitHostCode(module, objectOptions, false, output->os())))
    return 1;
  output->keep();
  return 0;
}

/// Lowers the step functions to host code and writes LLVM IR, an object or
/// (linked with the runtime, with CUDA kernels when asked) the trainer.
int emitTrainer(ModuleOp module, const CompileOptions &options,
                CompileTiming &timing) {
  FailureOr<TrainerDescription> description =
      describeTrainer(module, options);
  if (failed(description))
    return 1;
  description->targetCPU = options.cpu == "native"
                               ? llvm::sys::getHostCPUName().str()
                               : options.cpu;
  description->hasCPU = options.targetCPU;
  WorkDir workDir;
  // Declared after the work directory: destroyed first, it waits for its
  // ptxas processes before the directory goes.
  PendingAssembly assembly;
  // Declared after both: destroyed first, it waits for its thread.
  GPUProgramBuild gpuBuild;
  if (options.emit == EmitKind::Exe) {
    if (!workDir.create())
      return 1;
    // Before the CPU lowering, which rewrites the module in place.
    bool cuda = options.targetCUDA.value_or(
        findPtxas(options.cudaToolkit).has_value());
    if (cuda && failed(gpuBuild.start(module, *description, options,
                                      workDir.path(), timing, assembly)))
      return 1;
  }

  // Two runs: the loop nests are measured on buffers (KernelReport.h).
  std::optional<CompileStage> stage;
  stage.emplace(timing, "CPU code generation (MLIR)");
  PassManager bufferizePm(module.getContext());
  stage->time(bufferizePm);
  buildBufferizePipeline(bufferizePm,
                         LinalgPipelineOptions(
                             !options.training.noFuse,
                             /*replicaCollectives=*/true, /*forCPU=*/true,
                             options.training.winogradMinChannels));
  if (failed(stage->run(bufferizePm, module)))
    return 1;
  if (options.targetCPU)
    description->cpuCosts = measureLoopNests(module);
  // The report shows both targets' kernels, so it waits for the GPU's.
  if (options.report && failed(gpuBuild.finish(*description, timing)))
    return 1;
  if (options.report)
    printKernelReport(description->cpuCosts ? &*description->cpuCosts
                                            : nullptr,
                      description->gpu && description->gpu->costs
                          ? &*description->gpu->costs
                          : nullptr,
                      llvm::outs());
  PassManager pm(module.getContext());
  stage->time(pm);
  // After measuring: the timers must not count as kernels themselves.
  if (options.profileKernels && options.targetCPU)
    pm.addPass(createTimeKernelsPass());
  CPUCodegenPipelineOptions cpuOptions;
  cpuOptions.cpu = options.cpu;
  cpuOptions.fuse = !options.training.noFuse;
  buildCPULowerToLLVMPipeline(pm, cpuOptions);
  if (failed(stage->run(pm, module)) ||
      failed(bindKernels(module, *description)))
    return 1;
  if (options.report)
    printMemoryReport(*description, llvm::outs());
  stage.emplace(timing, "LLVM optimisation and code generation");

  ObjectOptions objectOptions;
  objectOptions.cpu = options.cpu;
  objectOptions.optLevel = options.optLevel;
  objectOptions.jobs = options.jobs;
  if (options.emit != EmitKind::Exe) {
    std::string error;
    auto output = openOutputFile(options.outputPath, &error);
    if (!output) {
      llvm::errs() << "traincc: error: " << error << "\n";
      return 1;
    }
    if (failed(emitHostCode(module, objectOptions,
                            options.emit == EmitKind::LLVMIR, output->os())))
      return 1;
    output->keep();
    return 0;
  }

  SmallVector<std::string> objects;
  SmallVector<ObjectPartTiming> partTimings;
  if (options.targetCPU &&
      failed(emitHostObjects(module, objectOptions, workDir.path(), objects,
                             &partTimings)))
    return 1;
  stage.reset();
  // Each part's balance, under the stage that ran them in parallel.
  if (timing.enabled())
    printObjectTimings(partTimings);
  if (failed(gpuBuild.finish(*description, timing)))
    return 1;
  if (description->gpu) {
    stage.emplace(timing, "ptxas (its time after the CPU code generation)");
    if (failed(assembly.finish(*description->gpu)))
      return 1;
  }
  stage.emplace(timing, "link (descriptor, runtime, system linker)");
  return failed(linkTrainer(*description, objects, workDir.path(),
                            options.outputPath))
             ? 1
             : 0;
}

} // namespace

int traincc::runCompile(const CompileOptions &options) {
  if (!validateOptions(options))
    return 1;
  // The budget picks --batch-size and --accum-steps, then compiles as if
  // they had been given.
  if (!options.training.memoryBudget.empty()) {
    std::optional<CompileOptions> budgeted = applyMemoryBudget(options);
    return budgeted ? runCompile(*budgeted) : 1;
  }
  DialectRegistry registry;
  registerAllDialects(registry);
  // --jobs bounds MLIR's threads too (the GPU kernel parts).
  llvm::DefaultThreadPool threads(llvm::hardware_concurrency(options.jobs));
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.setThreadPool(threads);
  context.loadAllAvailableDialects();
  // Messages name what is wrong; a dump of the op (for a module-level
  // diagnostic, the whole model with its weights) would bury them.
  context.printOpOnDiagnostic(false);
  ScopedDiagnosticHandler handler(&context, printDiagnostic);

  // Reports when it goes out of scope: after every stage below.
  CompileTiming timing(options.timing, options.printIRAfter,
                       options.verifyEach);
  OwningOpRef<ModuleOp> module;
  {
    CompileStage stage(timing, "read ONNX (check, convert, first stage)");
    ONNXImportOptions importOptions;
    importOptions.batchSize = options.batchSize.value_or(0);
    module = importONNXFile(&context, options.inputPath, importOptions);
  }
  if (!module)
    return 1;
  if (options.emit == EmitKind::ONNXMLIR)
    return printModule(*module, options);

  {
    CompileStage stage(timing, "import pipeline");
    PassManager importPm(&context);
    stage.time(importPm);
    buildImportPipeline(importPm, ImportPipelineOptions());
    if (failed(stage.run(importPm, *module)))
      return 1;
  }
  if (options.report)
    printReport(*module, llvm::outs());
  if (options.emit == EmitKind::TrainMLIR)
    return printModule(*module, options);

  {
    CompileStage stage(timing, "training pipeline");
    PassManager stepPm(&context);
    stage.time(stepPm);
    buildTrainingPipeline(stepPm, options.training);
    if (failed(stage.run(stepPm, *module)))
      return 1;
  }
  if (options.emit == EmitKind::StepMLIR)
    return printModule(*module, options);
  if (options.emit == EmitKind::PTX)
    return emitPTX(*module, options, timing);
  if (options.emit == EmitKind::CUDAEmulation)
    return emitCUDAEmulation(*module, options, timing);
  if (options.emit == EmitKind::LinalgMLIR) {
    CompileStage stage(timing, "train-to-linalg pipeline");
    PassManager linalgPm(&context);
    stage.time(linalgPm);
    LinalgPipelineOptions linalg;
    setGPULinalgOptions(linalg, options);
    buildTrainToLinalgPipeline(linalgPm, linalg);
    if (failed(stage.run(linalgPm, *module)))
      return 1;
    return printModule(*module, options);
  }
  return emitTrainer(*module, options, timing);
}
