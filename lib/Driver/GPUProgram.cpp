//===- GPUProgram.cpp - CUDA kernels and launch plans of a trainer --------===//
//
// The GPU side of a trainer (ModelABI.h, traincc_gpu_program): the step
// functions go through the GPU pipeline on a copy of the module, the
// kernels' PTX comes out of the gpu.binary, ptxas (when the CUDA toolkit is
// there) adds a cubin, and each step function's gpu.launch_func sequence
// becomes a launch plan whose arguments are (buffer, offset) pairs.
//
//===----------------------------------------------------------------------===//

#include "CompileTiming.h"
#include "TrainerDescription.h"

#include "traincc/Codegen/GPU/Passes.h"
#include "traincc/Pipelines/Pipelines.h"
#include "traincc/runtime/ModelABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace traincc;

namespace {

/// The launch-plan argument for a kernel operand: a step function argument
/// (buffer + offset) or a constant.
FailureOr<GPUArgument> planArgument(func::FuncOp func, Value operand,
                                    const TrainerDescription &d,
                                    gpu::LaunchFuncOp launch) {
  // A view at a constant offset (traincc-hoist-workspace-views): the
  // buffer's plan argument, that much further on.
  if (auto view = operand.getDefiningOp<memref::ViewOp>()) {
    std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
    if (!shift || !view.getSizes().empty())
      return launch.emitError("a kernel argument view needs a constant "
                              "offset and a static shape");
    FailureOr<GPUArgument> base =
        planArgument(func, view.getSource(), d, launch);
    if (failed(base))
      return failure();
    base->value += *shift;
    return base;
  }
  if (auto arg = dyn_cast<BlockArgument>(operand)) {
    unsigned index = arg.getArgNumber();
    if (auto state =
            func.getArgAttrOfType<FlatSymbolRefAttr>(index, "train.state")) {
      auto found = d.stateIndex.find(state.getValue());
      if (found == d.stateIndex.end())
        return launch.emitError("unknown state tensor ") << state;
      return GPUArgument{TRAINCC_GPU_ARG_STATE, 8,
                         d.state[found->second].offset};
    }
    if (auto role =
            func.getArgAttrOfType<StringAttr>(index, "train.gpu_buffer"))
      return GPUArgument{role.getValue() == "workspace"
                             ? TRAINCC_GPU_ARG_WORKSPACE
                             : TRAINCC_GPU_ARG_PARAMS,
                         8, 0};
    if (auto name = func.getArgAttrOfType<StringAttr>(index, "train.name")) {
      if (name.getValue() == "input")
        return GPUArgument{TRAINCC_GPU_ARG_INPUT, 8, 0};
      if (name.getValue() == "target")
        return GPUArgument{TRAINCC_GPU_ARG_TARGET, 8, 0};
      if (name.getValue() == "loss")
        return GPUArgument{TRAINCC_GPU_ARG_LOSS, 8, 0};
      if (isa<MemRefType>(operand.getType()))
        return GPUArgument{TRAINCC_GPU_ARG_OUTPUT, 8, 0};
    }
    return launch.emitError("kernel argument #")
           << index << " of " << func.getSymName()
           << " has no place in the launch plan";
  }
  return launch.emitError("kernel arguments must be step function "
                          "arguments (MapToGPU sinks everything else)");
}

bool isPointer(const GPUArgument &arg) {
  return arg.kind != TRAINCC_GPU_ARG_I64 && arg.kind != TRAINCC_GPU_ARG_F32;
}

/// Kernels assume (traincc-annotate-kernel-pointers) that every plan
/// pointer is aligned to kGPUKernelPointerAlignment, as device allocations
/// are, and that the distinct buffer arguments of a launch do not overlap,
/// as distinct state tensors and separate allocations do not.
LogicalResult checkKernelPointers(const GPULaunch &entry,
                                  gpu::LaunchFuncOp launch) {
  ValueRange operands = launch.getKernelOperands();
  for (auto [i, arg] : llvm::enumerate(entry.args)) {
    if (!isPointer(arg))
      continue;
    if (arg.value % kGPUKernelPointerAlignment != 0)
      return launch.emitError("kernel pointer at offset ")
             << arg.value << " is not " << kGPUKernelPointerAlignment
             << "-byte aligned, as the kernels assume";
    for (size_t j = 0; j < i; ++j)
      if (isPointer(entry.args[j]) && entry.args[j].kind == arg.kind &&
          entry.args[j].value == arg.value && operands[j] != operands[i])
        return launch.emitError("kernel arguments #")
               << j << " and #" << i
               << " are the same buffer, which the kernels assume they "
                  "are not";
  }
  return success();
}

/// The collective entry of a replica mean (traincc-prepare-gpu-steps) that
/// follows the first `position` launches.
FailureOr<GPUCollective> planCollective(func::CallOp call, int32_t position) {
  auto cast = call.getNumOperands() == 1
                  ? call.getOperand(0).getDefiningOp<memref::CastOp>()
                  : nullptr;
  auto view =
      cast ? cast.getSource().getDefiningOp<memref::ViewOp>() : nullptr;
  auto root = view ? dyn_cast<BlockArgument>(view.getSource()) : nullptr;
  auto func = call->getParentOfType<func::FuncOp>();
  auto role = root ? func.getArgAttrOfType<StringAttr>(root.getArgNumber(),
                                                       "train.gpu_buffer")
                   : nullptr;
  std::optional<int64_t> offset =
      view ? getConstantIntValue(view.getByteShift()) : std::nullopt;
  if (!role || role.getValue() != "workspace" || !offset ||
      !view.getType().hasStaticShape() ||
      *offset % kGPUKernelPointerAlignment != 0)
    return call.emitError("a replica collective must average an aligned "
                          "workspace temporary of static shape");
  return GPUCollective{position, uint64_t(*offset),
                       uint64_t(view.getType().getNumElements())};
}

FailureOr<std::vector<GPULaunch>>
buildPlan(func::FuncOp func, const TrainerDescription &d,
          const llvm::StringMap<int32_t> &moduleIndex,
          std::vector<GPUCollective> &collectives) {
  std::vector<GPULaunch> plan;
  for (Operation &op : func.getBody().getOps()) {
    if (isa<func::ReturnOp, arith::ConstantOp>(op) || isMemoryEffectFree(&op))
      continue;
    if (auto call = dyn_cast<func::CallOp>(op);
        call && call.getCallee() == kGPUReplicaMeanFunc) {
      FailureOr<GPUCollective> collective =
          planCollective(call, int32_t(plan.size()));
      if (failed(collective))
        return failure();
      collectives.push_back(*collective);
      continue;
    }
    auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
    if (!launch)
      return op.emitError("a GPU step may only launch kernels");
    GPULaunch entry;
    entry.kernel = launch.getKernelName().str();
    auto module = moduleIndex.find(launch.getKernelModuleName().getValue());
    if (module == moduleIndex.end())
      return launch.emitError("launch of a kernel in no compiled module");
    entry.module = module->second;
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    Value sizes[6] = {grid.x, grid.y, grid.z, block.x, block.y, block.z};
    for (auto [index, size] : llvm::enumerate(sizes)) {
      std::optional<int64_t> value = getConstantIntValue(size);
      if (!value || *value <= 0 || *value > UINT32_MAX)
        return launch.emitError("launch sizes must be positive constants");
      (index < 3 ? entry.grid[index] : entry.block[index - 3]) = *value;
    }
    if (Value shared = launch.getDynamicSharedMemorySize()) {
      std::optional<int64_t> bytes = getConstantIntValue(shared);
      if (!bytes || *bytes < 0 || *bytes > UINT32_MAX)
        return launch.emitError(
            "dynamic shared memory size must be a constant");
      entry.sharedBytes = uint32_t(*bytes);
    }
    for (Value operand : launch.getKernelOperands()) {
      FailureOr<GPUArgument> arg = planArgument(func, operand, d, launch);
      if (failed(arg))
        return failure();
      entry.args.push_back(*arg);
    }
    if (failed(checkKernelPointers(entry, launch)))
      return failure();
    plan.push_back(std::move(entry));
  }
  return plan;
}

/// Measures the kernels once they are outlined, right before the NVVM
/// lowering starts (with the target attachment).
class MeasureKernels : public PassInstrumentation {
public:
  MeasureKernels(GPUCostTracker &tracker, std::optional<StepCosts> &costs)
      : tracker_(tracker), costs_(costs) {}
  void runBeforePass(Pass *pass, Operation *op) override {
    auto module = dyn_cast<ModuleOp>(op);
    if (module && !costs_ && pass->getArgument() == "nvvm-attach-target")
      costs_ = tracker_.measure(module);
  }

private:
  GPUCostTracker &tracker_;
  std::optional<StepCosts> &costs_;
};

/// The PTX of each gpu.binary (one per kernel part), in module order;
/// `moduleIndex` maps the part names to their indices.
FailureOr<std::vector<GPUModuleImage>>
extractModules(ModuleOp module, llvm::StringMap<int32_t> &moduleIndex) {
  std::vector<GPUModuleImage> images;
  for (auto binary : module.getOps<gpu::BinaryOp>()) {
    if (binary.getObjects().size() != 1)
      return binary.emitError("expected one object in the GPU binary");
    auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
    if (object.getFormat() != gpu::CompilationTarget::Assembly)
      return binary.emitError("expected PTX assembly in the GPU binary");
    moduleIndex[binary.getName()] = images.size();
    images.push_back({object.getObject().getValue().str(), ""});
  }
  if (images.empty())
    return module.emitError("the GPU pipeline produced no PTX");
  return images;
}

} // namespace

std::optional<std::string> traincc::findPtxas(StringRef toolkit) {
  SmallString<128> path(toolkit);
  llvm::sys::path::append(path, "bin", "ptxas");
  if (llvm::sys::fs::can_execute(path))
    return std::string(path);
  if (auto found = llvm::sys::findProgramByName("ptxas"))
    return *found;
  return std::nullopt;
}

PendingAssembly::~PendingAssembly() {
  // A compile that failed elsewhere still waits for its ptxas processes
  // before the work directory goes.
  for (Job &job : jobs_)
    if (job.process.Pid != llvm::sys::ProcessInfo::InvalidPid)
      llvm::sys::Wait(job.process, /*SecondsToWait=*/std::nullopt);
}

LogicalResult PendingAssembly::start(const GPUProgram &program,
                                     StringRef ptxas, StringRef workDir) {
  std::string archFlag = "-arch=" + program.arch;
  std::string optFlag = "-O" + std::to_string(program.optLevel);
  for (auto [index, image] : llvm::enumerate(program.modules)) {
    Job job;
    auto path = [&](StringRef extension) {
      SmallString<128> path(workDir);
      llvm::sys::path::append(path, llvm::formatv("kernels-{0}.{1}", index,
                                                  extension));
      return std::string(path);
    };
    std::string ptxPath = path("ptx");
    job.cubinPath = path("cubin");
    job.logPath = path("ptxas.log");
    {
      std::error_code error;
      llvm::raw_fd_ostream os(ptxPath, error);
      if (error) {
        llvm::errs() << "traincc: error: cannot write '" << ptxPath
                     << "': " << error.message() << "\n";
        return failure();
      }
      os << image.ptx;
    }
    SmallVector<StringRef> args = {ptxas,   archFlag, optFlag,
                                   ptxPath, "-o",     job.cubinPath};
    std::optional<StringRef> redirects[] = {std::nullopt,
                                            StringRef(job.logPath),
                                            StringRef(job.logPath)};
    std::string error;
    job.process = llvm::sys::ExecuteNoWait(ptxas, args, std::nullopt,
                                           redirects, 0, &error);
    if (job.process.Pid == llvm::sys::ProcessInfo::InvalidPid) {
      llvm::errs() << "traincc: error: cannot run ptxas: " << error << "\n";
      return failure();
    }
    jobs_.push_back(std::move(job));
  }
  return success();
}

LogicalResult PendingAssembly::finish(GPUProgram &program) {
  bool ok = true;
  for (auto [index, job] : llvm::enumerate(jobs_)) {
    std::string error;
    llvm::sys::ProcessInfo done =
        llvm::sys::Wait(job.process, /*SecondsToWait=*/std::nullopt, &error);
    job.process.Pid = llvm::sys::ProcessInfo::InvalidPid;
    if (done.ReturnCode != 0) {
      auto log = llvm::MemoryBuffer::getFile(job.logPath);
      llvm::errs() << "traincc: error: ptxas rejected the generated PTX for "
                   << program.arch << (error.empty() ? "" : ": " + error)
                   << "\n"
                   << (log ? (*log)->getBuffer() : "");
      ok = false;
      continue;
    }
    auto cubin = llvm::MemoryBuffer::getFile(job.cubinPath, /*IsText=*/false);
    if (!cubin) {
      llvm::errs() << "traincc: error: ptxas wrote no cubin\n";
      ok = false;
      continue;
    }
    program.modules[index].cubin = (*cubin)->getBuffer().str();
  }
  jobs_.clear();
  return success(ok);
}

void traincc::setGPULinalgOptions(LinalgPipelineOptions &linalg,
                                  const CompileOptions &options) {
  linalg.fuse = !options.training.noFuse;
  linalg.collectives = true;
  linalg.cpuKernels = false;
  linalg.winogradMinChannels = 0;
  linalg.sumsInProducers = options.sumsInProducers;
}

FailureOr<GPUProgram> traincc::buildGPUProgram(ModuleOp stepModule,
                                               const TrainerDescription &d,
                                               const CompileOptions &options,
                                               CompileStage &stage,
                                               unsigned parts) {
  // The kernels call CUDA's math library (exp, log, sqrt); without it
  // ptxas would only report unresolved `__nv_*` functions.
  SmallString<128> libdevice(options.cudaToolkit);
  llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
  if (!llvm::sys::fs::exists(libdevice))
    return stepModule.emitError("the CUDA toolkit at '")
           << options.cudaToolkit
           << "' has no nvvm/libdevice/libdevice.10.bc (CUDA's math "
              "library, which the kernels call); pass "
              "--cuda-path with a complete toolkit, or --target cpu";
  OwningOpRef<ModuleOp> module = stepModule.clone();
  // Two runs, so that the linalg ops can be tagged between bufferization
  // and the GPU kernel pipeline, and the kernels measured before NVVM
  // lowering turns them into LLVM (KernelReport.h).
  PassManager bufferizePm(module->getContext());
  stage.time(bufferizePm);
  // Synchronized BatchNorm (--sync-bn) averages between kernels.
  LinalgPipelineOptions linalg;
  setGPULinalgOptions(linalg, options);
  buildBufferizePipeline(bufferizePm, linalg);
  if (failed(stage.run(bufferizePm, *module)))
    return failure();
  GPUCostTracker tracker;
  tracker.tag(*module);
  PassManager pm(module->getContext());
  stage.time(pm);
  GPUCodegenPipelineOptions gpuOptions;
  gpuOptions.arch = options.gpuArch;
  gpuOptions.toolkit = options.cudaToolkit;
  gpuOptions.fuse = !options.training.noFuse;
  gpuOptions.convEpilogues = options.convEpilogues;
  gpuOptions.parts = parts;
  gpuOptions.optLevel = options.optLevel;
  buildGPULowerToNVVMPipeline(pm, gpuOptions);
  std::optional<StepCosts> costs;
  pm.addInstrumentation(std::make_unique<MeasureKernels>(tracker, costs));
  if (failed(stage.run(pm, *module)))
    return failure();

  GPUProgram program;
  program.costs = std::move(costs);
  program.arch = options.gpuArch;
  program.optLevel = options.optLevel;
  llvm::StringMap<int32_t> moduleIndex;
  FailureOr<std::vector<GPUModuleImage>> images =
      extractModules(*module, moduleIndex);
  if (failed(images))
    return failure();
  program.modules = std::move(*images);
  struct {
    StringRef name;
    std::vector<GPULaunch> *plan;
    std::vector<GPUCollective> *collectives;
  } steps[] = {
      {"micro_step", &program.microStep, &program.microStepCollectives},
      {"apply_step", &program.applyStep, &program.applyStepCollectives},
      {"eval_step", &program.evalStep, &program.evalStepCollectives}};
  for (auto [name, plan, collectives] : steps) {
    auto func = module->lookupSymbol<func::FuncOp>(name);
    if (!func)
      return module->emitError("no step function @") << name;
    FailureOr<std::vector<GPULaunch>> built =
        buildPlan(func, d, moduleIndex, *collectives);
    if (failed(built))
      return failure();
    *plan = std::move(*built);
    if (auto bytes = func->getAttrOfType<IntegerAttr>("train.workspace_bytes"))
      program.workspaceBytes =
          std::max<uint64_t>(program.workspaceBytes, bytes.getInt());
    StepMemory &memory = program.memory;
    if (auto bytes = func->getAttrOfType<IntegerAttr>("train.workspace_bytes"))
      (name == "micro_step"   ? memory.microStep
       : name == "apply_step" ? memory.applyStep
                              : memory.evalStep) = bytes.getInt();
    if (auto saved =
            func->getAttrOfType<IntegerAttr>("train.saved_activation_bytes"))
      memory.savedActivations = saved.getInt();
  }
  return program;
}
