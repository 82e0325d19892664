//===- TrainerLink.cpp - descriptor source, blobs, final link -------------===//
//
// The descriptor of ModelABI.h is written as C++ (a table of names, shapes
// and offsets, and wrappers that turn the ABI's calls into kernel calls with
// pointers into the state arena), the initial state and the model's bytes
// are embedded with `.incbin`, and the system C++ compiler links it all with
// the runtime: no MLIR or LLVM library reaches the trainer.
//
//===----------------------------------------------------------------------===//

#include "TrainerDescription.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir;
using namespace traincc;

#ifndef TRAINCC_RUNTIME_INCLUDE_DIR
#error "TRAINCC_RUNTIME_INCLUDE_DIR must name the runtime's headers"
#endif
#ifndef TRAINCC_RUNTIME_LIBRARY_DIR
#error "TRAINCC_RUNTIME_LIBRARY_DIR must name the runtime's libraries"
#endif

namespace {

/// Initialised bytes of the state arena: `bytes` bytes at arena `offset`.
struct InitialRun {
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

LogicalResult fail(const llvm::Twine &message) {
  llvm::errs() << "traincc: error: " << message << "\n";
  return failure();
}

const char *abiDtype(Type type) {
  if (type.isF32())
    return "TRAINCC_DTYPE_F32";
  if (type.isF16())
    return "TRAINCC_DTYPE_F16";
  if (type.isBF16())
    return "TRAINCC_DTYPE_BF16";
  if (type.isF64())
    return "TRAINCC_DTYPE_F64";
  return "TRAINCC_DTYPE_I64";
}

/// A C++ string literal (names come from the model file).
/// The ModelABI.h constant of a loss (resolved: never auto).
const char *abiName(LossKind loss) {
  switch (loss) {
  case LossKind::CrossEntropy:
    return "TRAINCC_LOSS_CROSS_ENTROPY";
  case LossKind::MSE:
    return "TRAINCC_LOSS_MSE";
  case LossKind::Output:
  case LossKind::Auto:
    break;
  }
  return "TRAINCC_LOSS_OUTPUT";
}

/// The ModelABI.h constant of a compute precision.
const char *abiName(Precision precision) {
  switch (precision) {
  case Precision::FP16:
    return "TRAINCC_PRECISION_FP16";
  case Precision::BF16:
    return "TRAINCC_PRECISION_BF16";
  case Precision::FP32:
    break;
  }
  return "TRAINCC_PRECISION_FP32";
}

/// The ModelABI.h constant of a loss-scaling mode.
const char *abiName(LossScaleMode mode) {
  switch (mode) {
  case LossScaleMode::Dynamic:
    return "TRAINCC_LOSS_SCALING_DYNAMIC";
  case LossScaleMode::Static:
    return "TRAINCC_LOSS_SCALING_STATIC";
  case LossScaleMode::None:
    break;
  }
  return "TRAINCC_LOSS_SCALING_NONE";
}

/// The ModelABI.h constant of an optimizer.
const char *abiName(OptimizerKind optimizer) {
  switch (optimizer) {
  case OptimizerKind::Adam:
    return "TRAINCC_OPTIMIZER_ADAM";
  case OptimizerKind::AdamW:
    return "TRAINCC_OPTIMIZER_ADAMW";
  case OptimizerKind::SGD:
    break;
  }
  return "TRAINCC_OPTIMIZER_SGD";
}

std::string quote(StringRef text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (c < 0x20 || c >= 0x7f)
      out += llvm::formatv("\\{0:o3}", unsigned(c)).str();
    else
      out += c;
  }
  return out + "\"";
}

std::string shapeList(RankedTensorType type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "{";
  llvm::interleaveComma(type.getShape(), os);
  if (type.getRank() == 0)
    os << "1"; // an empty initializer list cannot size an array
  os << "}";
  return text;
}

/// The C parameter type of a kernel argument under the bare-pointer
/// convention.
const char *cType(KernelArgument::Role role) {
  using Role = KernelArgument::Role;
  switch (role) {
  case Role::GradScale:
  case Role::LearningRate:
    return "float";
  case Role::Seed:
  case Role::Step:
    return "int64_t";
  default:
    return "void *";
  }
}

/// The expression the ABI wrapper passes for an argument.
std::string cArgument(const TrainerDescription &d, const KernelArgument &arg) {
  using Role = KernelArgument::Role;
  switch (arg.role) {
  case Role::State:
    return llvm::formatv("state + {0}", d.state[arg.stateIndex].offset).str();
  case Role::Input:
    return "const_cast<void *>(input)";
  case Role::Target:
    return "const_cast<void *>(target)";
  case Role::GradScale:
    return "gradScale";
  case Role::Seed:
    return "static_cast<int64_t>(seed)";
  case Role::LearningRate:
    return "lr";
  case Role::Step:
    return "step";
  case Role::Loss:
    return "static_cast<void *>(loss)";
  case Role::Output:
    return "output";
  case Role::Workspace:
    return "workspace";
  }
  return "";
}

void emitKernelDeclaration(llvm::raw_ostream &os, StringRef name,
                           ArrayRef<KernelArgument> args) {
  os << "void traincc_kernel_" << name << "(";
  llvm::interleaveComma(
      args, os, [&](const KernelArgument &arg) { os << cType(arg.role); });
  os << ");\n";
}

void emitKernelCall(llvm::raw_ostream &os, const TrainerDescription &d,
                    StringRef name, ArrayRef<KernelArgument> args) {
  os << "  traincc_kernel_" << name << "(";
  llvm::interleaveComma(
      args, os, [&](const KernelArgument &arg) { os << cArgument(d, arg); });
  os << ");\n";
}

void emitIOTensor(llvm::raw_ostream &os, StringRef field, const IOTensor &t,
                  unsigned index) {
  os << "  ." << field << " = {" << quote(t.name) << ", "
     << abiDtype(t.type.getElementType()) << ", " << t.type.getRank()
     << ", ioShape" << index << ", " << t.idLimit << "},\n";
}

/// The launch plan of one step function as C++ tables.
void emitGPUPlan(llvm::raw_ostream &os, StringRef name,
                 ArrayRef<GPULaunch> plan) {
  for (auto [index, launch] : llvm::enumerate(plan)) {
    os << "const traincc_gpu_arg " << name << "Args" << index << "[] = {";
    for (const GPUArgument &arg : launch.args)
      os << "{" << arg.kind << ", " << arg.size << ", " << arg.value << "u}, ";
    if (launch.args.empty())
      os << "{0, 0, 0u}";
    os << "};\n";
  }
  os << "const traincc_gpu_launch " << name << "Plan[] = {\n";
  for (auto [index, launch] : llvm::enumerate(plan))
    os << "  {" << quote(launch.kernel) << ", " << launch.module << ", {"
       << launch.grid[0] << ", "
       << launch.grid[1] << ", " << launch.grid[2] << "}, {" << launch.block[0]
       << ", " << launch.block[1] << ", " << launch.block[2] << "}, "
       << launch.sharedBytes << ", " << launch.args.size() << ", " << name
       << "Args" << index << "},\n";
  if (plan.empty())
    os << "  {\"\", 0, {1, 1, 1}, {1, 1, 1}, 0, 0, nullptr},\n";
  os << "};\n";
}

/// The replica collectives of one step function's plan (--sync-bn).
void emitGPUCollectives(llvm::raw_ostream &os, StringRef name,
                        ArrayRef<GPUCollective> collectives) {
  if (collectives.empty())
    return;
  os << "const traincc_gpu_collective " << name << "Collectives[] = {\n";
  for (const GPUCollective &c : collectives)
    os << "  {TRAINCC_GPU_COLLECTIVE_REPLICA_MEAN, " << c.position << ", "
       << c.offset << "u, " << c.count << "u},\n";
  os << "};\n";
}

/// A traincc_step_costs initializer.
std::string stepCosts(const std::optional<StepCosts> &costs) {
  if (!costs)
    return "{}";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "{";
  for (const StepCost *step :
       {&costs->microStep, &costs->applyStep, &costs->evalStep})
    os << "{" << step->kernels.size() << ", " << step->bytes() << "u, "
       << step->flops() << "u}, ";
  os << "}";
  return text;
}

/// A traincc_memory_plan initializer.
std::string memoryPlan(const StepMemory &memory) {
  return llvm::formatv("{{{0}u, {1}u, {2}u, {3}u}", memory.microStep,
                       memory.applyStep, memory.evalStep,
                       memory.savedActivations)
      .str();
}

/// traincc_gpu_program `gpuProgram`, its PTX and cubin in blobs.S.
void emitGPUProgram(llvm::raw_ostream &os, const GPUProgram &gpu) {
  emitGPUPlan(os, "microStep", gpu.microStep);
  emitGPUPlan(os, "applyStep", gpu.applyStep);
  emitGPUPlan(os, "evalStep", gpu.evalStep);
  emitGPUCollectives(os, "microStep", gpu.microStepCollectives);
  emitGPUCollectives(os, "applyStep", gpu.applyStepCollectives);
  emitGPUCollectives(os, "evalStep", gpu.evalStepCollectives);
  auto plan = [&](StringRef name, ArrayRef<GPULaunch> launches) {
    ArrayRef<GPUCollective> collectives =
        name == "microStep"   ? gpu.microStepCollectives
        : name == "applyStep" ? gpu.applyStepCollectives
                              : gpu.evalStepCollectives;
    std::string table =
        collectives.empty() ? "nullptr" : (name + "Collectives").str();
    return llvm::formatv("{{{0}, {1}Plan, {2}, {3}}", launches.size(), name,
                         collectives.size(), table)
        .str();
  };
  os << "const traincc_gpu_module gpuModules[] = {\n";
  for (auto [index, image] : llvm::enumerate(gpu.modules))
    os << "  {reinterpret_cast<const char *>(traincc_ptx_blob_" << index
       << "), "
       << (image.cubin.empty() ? std::string("nullptr")
                               : ("traincc_cubin_blob_" + Twine(index)).str())
       << ", " << image.cubin.size() << "u},\n";
  os << "};\n"
     << "const traincc_gpu_program gpuProgram = {\n"
     << "  .arch = " << quote(gpu.arch) << ",\n"
     << "  .num_modules = " << gpu.modules.size() << ",\n"
     << "  .modules = gpuModules,\n"
     << "  .workspace_bytes = " << gpu.workspaceBytes << "u,\n"
     << "  .micro_step = " << plan("microStep", gpu.microStep) << ",\n"
     << "  .apply_step = " << plan("applyStep", gpu.applyStep) << ",\n"
     << "  .eval_step = " << plan("evalStep", gpu.evalStep) << ",\n"
     << "  .costs = " << stepCosts(gpu.costs) << ",\n"
     << "  .memory = " << memoryPlan(gpu.memory) << ",\n"
     << "};\n\n";
}

/// The step kernels and data blobs the descriptor points at, defined by the
/// object traincc emits.
void emitExternalDeclarations(llvm::raw_ostream &os,
                              const TrainerDescription &d) {
  os << "extern \"C\" {\n";
  if (d.hasCPU) {
    emitKernelDeclaration(os, "micro_step", d.microStep);
    emitKernelDeclaration(os, "apply_step", d.applyStep);
    emitKernelDeclaration(os, "eval_step", d.evalStep);
  }
  if (d.gpu)
    for (size_t index = 0; index < d.gpu->modules.size(); ++index)
      os << "extern const uint8_t traincc_ptx_blob_" << index << "[];\n"
         << "extern const uint8_t traincc_cubin_blob_" << index << "[];\n";
  os << "extern const uint8_t traincc_initial_state_blob[];\n"
     << "extern const uint8_t traincc_onnx_model_blob[];\n}\n\n";
}

/// The shapes of the state and I/O tensors, and the state table.
void emitStateTable(llvm::raw_ostream &os, const TrainerDescription &d) {
  for (auto [index, tensor] : llvm::enumerate(d.state))
    os << "const int64_t stateShape" << index
       << "[] = " << shapeList(tensor.type) << ";\n";
  IOTensor target = d.target.value_or(IOTensor{"", d.input.type});
  const IOTensor *io[] = {&d.input, &target, &d.output};
  for (auto [index, tensor] : llvm::enumerate(io))
    os << "const int64_t ioShape" << index << "[] = " << shapeList(tensor->type)
       << ";\n";
  os << "\nconst traincc_state_tensor stateTable[] = {\n";
  for (const StateTensor &tensor : d.state)
    os << "  {" << quote(tensor.name) << ", " << static_cast<int>(tensor.kind)
       << ", " << abiDtype(tensor.type.getElementType()) << ", "
       << tensor.type.getRank() << ", stateShape" << (&tensor - d.state.data())
       << ", " << tensor.offset << "u, " << tensor.bytes << "u, "
       << tensor.owner << ", " << tensor.source << "},\n";
  os << "};\n\n";
}

/// The CPU step functions of ModelABI.h over the generated kernels.
void emitCPUSteps(llvm::raw_ostream &os, const TrainerDescription &d) {
  os << "void microStep(uint8_t *state, uint8_t *workspace, "
        "const void *input, "
        "const void *target, float gradScale, uint64_t seed, float *loss) "
        "{\n";
  emitKernelCall(os, d, "micro_step", d.microStep);
  os << "}\n\nvoid applyStep(uint8_t *state, uint8_t *workspace, float lr, "
        "int64_t "
        "step) {\n";
  emitKernelCall(os, d, "apply_step", d.applyStep);
  // eval_step's kernel reads targets and writes losses unconditionally;
  // predict passes neither (ModelABI.h allows null).
  uint64_t targetBytes =
      d.target ? d.target->type.getNumElements() *
                     llvm::divideCeil(d.target->type.getElementTypeBitWidth(),
                                      8)
               : 0;
  os << "}\n\nalignas(64) const uint8_t noTarget["
     << std::max<uint64_t>(targetBytes, 1)
     << "] = {};\nalignas(64) float spareLosses["
     << d.input.type.getDimSize(0) << "];\n\n"
     << "void evalStep(uint8_t *state, uint8_t *workspace, const void *input, "
        "const void *target, void *output, float *loss) {\n"
     << "  if (!target)\n    target = noTarget;\n"
     << "  if (!loss)\n    loss = spareLosses;\n";
  emitKernelCall(os, d, "eval_step", d.evalStep);
  os << "}\n\n";
}

/// The `traincc_model` descriptor: shapes, training defaults, state, steps.
void emitModelDescriptor(llvm::raw_ostream &os, const TrainerDescription &d,
                         size_t numInitialRuns, uint64_t onnxBytes) {
  const TrainingOptions &t = d.training;
  int64_t classes =
      d.loss == LossKind::CrossEntropy && d.output.type.getRank() == 2
          ? d.output.type.getDimSize(1)
          : 0;
  os << "const traincc_model model = {\n"
     << "  .abi_version = TRAINCC_ABI_VERSION,\n"
     << "  .model_name = " << quote(d.modelName) << ",\n"
     << "  .micro_batch = " << d.input.type.getDimSize(0) << ",\n"
     << "  .accum_steps = " << t.accumSteps << ",\n"
     << "  .loss = " << abiName(d.loss) << ",\n"
     << "  .optimizer = " << abiName(t.optimizer) << ",\n"
     << "  .nesterov = " << (t.nesterov ? 1 : 0) << ",\n"
     << llvm::formatv("  .momentum = {0:e}f,\n  .dampening = {1:e}f,\n"
                      "  .weight_decay = {2:e}f,\n  .beta1 = {3:e}f,\n"
                      "  .beta2 = {4:e}f,\n  .eps = {5:e}f,\n",
                      t.momentum, t.dampening, t.getWeightDecay(), t.beta1, t.beta2,
                      t.eps)
            .str()
     << "  .bn_stats_per_step = " << (t.bnStats == BNStatsMode::Step ? 1 : 0)
     << ",\n"
     << "  .num_classes = " << classes << ",\n"
     << "  .precision = " << abiName(t.precision) << ",\n"
     << "  .loss_scaling = " << abiName(d.lossScaling) << ",\n"
     << "  .loss_scale_state = " << d.lossScaleState << ",\n"
     << "  .found_inf_state = " << d.foundInfState << ",\n";
  emitIOTensor(os, "input", d.input, 0);
  if (d.target)
    emitIOTensor(os, "target", *d.target, 1);
  else
    os << "  .target = {\"\", TRAINCC_DTYPE_F32, 0, nullptr, 0},\n";
  emitIOTensor(os, "output", d.output, 2);
  os << "  .num_state = " << d.state.size() << ",\n"
     << "  .state = stateTable,\n"
     << "  .state_bytes = " << d.stateBytes << "u,\n"
     << "  .initial_state = traincc_initial_state_blob,\n"
     << "  .num_initial_runs = " << numInitialRuns << ",\n"
     << "  .initial_runs = initialRuns,\n"
     << "  .workspace_bytes = " << d.cpuMemory.workspace() << "u,\n"
     << "  .onnx_model = traincc_onnx_model_blob,\n"
     << "  .onnx_model_bytes = " << onnxBytes << "u,\n"
     << "  .micro_step = " << (d.hasCPU ? "microStep" : "nullptr") << ",\n"
     << "  .apply_step = " << (d.hasCPU ? "applyStep" : "nullptr") << ",\n"
     << "  .eval_step = " << (d.hasCPU ? "evalStep" : "nullptr") << ",\n"
     << "  .target_cpu = " << quote(d.hasCPU ? d.targetCPU : "") << ",\n"
     << "  .gpu = " << (d.gpu ? "&gpuProgram" : "nullptr") << ",\n"
     << "  .cpu_costs = " << stepCosts(d.cpuCosts) << ",\n"
     << "  .cpu_memory = " << memoryPlan(d.cpuMemory) << ",\n"
     << "  .sync_bn = " << (t.syncBatchNorm ? 1 : 0) << ",\n"
     << "};\n\n";
}

/// The C++ source of the trainer's descriptor (ModelABI.h).
std::string generateSource(const TrainerDescription &d,
                           ArrayRef<InitialRun> runs, uint64_t onnxBytes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// Generated by traincc from " << d.modelPath
     << ": the descriptor of ModelABI.h.\n"
     << "#include \"traincc/runtime/ModelABI.h\"\n\n";
  emitExternalDeclarations(os, d);
  os << "namespace {\n\n";
  emitStateTable(os, d);
  if (d.gpu)
    emitGPUProgram(os, *d.gpu);
  if (d.hasCPU)
    emitCPUSteps(os, d);
  os << "const traincc_initial_run initialRuns[] = {\n";
  for (const InitialRun &run : runs)
    os << "  {" << run.offset << "u, " << run.bytes << "u},\n";
  os << "};\n\n";
  emitModelDescriptor(os, d, runs.size(), onnxBytes);
  os << "} // namespace\n\n"
     << "extern \"C\" const traincc_model *traincc_get_model(void) { return "
        "&model; }\n";
  return text;
}

/// The state tensors that start non-zero (the initializers), by offset.
LogicalResult initialisedTensors(const TrainerDescription &d,
                                 std::vector<const StateTensor *> &tensors) {
  for (const StateTensor &tensor : d.state) {
    auto dense = dyn_cast_if_present<DenseElementsAttr>(tensor.initialValue);
    if (tensor.initialValue && !dense)
      return fail("initial value of '" + tensor.name +
                  "' is not a dense tensor");
    if (!dense || tensor.bytes == 0)
      continue;
    ArrayRef<char> raw = dense.getRawData();
    if (dense.isSplat() && llvm::all_of(raw, [](char c) { return c == 0; }))
      continue;
    if (!dense.isSplat() && raw.size() != tensor.bytes)
      return fail("initial value of '" + tensor.name + "' has " +
                  llvm::Twine(raw.size()) + " bytes, expected " +
                  llvm::Twine(tensor.bytes));
    tensors.push_back(&tensor);
  }
  llvm::sort(tensors, [](const StateTensor *a, const StateTensor *b) {
    return a->offset < b->offset;
  });
  return success();
}

/// The runs of the arena the initialised tensors cover; tensors apart by
/// no more than alignment padding share a run (the padding's zeros are
/// cheaper than a run each). Always one run at least, if empty.
std::vector<InitialRun>
initialRuns(ArrayRef<const StateTensor *> tensors) {
  constexpr uint64_t kMergeGap = 256;
  std::vector<InitialRun> runs;
  for (const StateTensor *tensor : tensors) {
    if (!runs.empty() &&
        tensor->offset <= runs.back().offset + runs.back().bytes + kMergeGap)
      runs.back().bytes = tensor->offset + tensor->bytes - runs.back().offset;
    else
      runs.push_back({tensor->offset, tensor->bytes});
  }
  if (runs.empty())
    runs.push_back({0, 0});
  return runs;
}

/// The initial state blob: the runs' bytes back to back (initializer
/// values, zeros for the padding between them). Gradients and optimizer
/// state stay out: they start at zero and the runtime's arena does too.
LogicalResult writeInitialState(ArrayRef<const StateTensor *> tensors,
                                ArrayRef<InitialRun> runs, StringRef path) {
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (error)
    return fail("cannot write '" + path + "': " + error.message());
  const StateTensor *const *next = tensors.begin();
  for (const InitialRun &run : runs) {
    uint64_t cursor = run.offset;
    for (; next != tensors.end() &&
           (*next)->offset + (*next)->bytes <= run.offset + run.bytes;
         ++next) {
      const StateTensor &tensor = **next;
      os.write_zeros(tensor.offset - cursor);
      auto dense = cast<DenseElementsAttr>(tensor.initialValue);
      ArrayRef<char> raw = dense.getRawData();
      if (dense.isSplat()) {
        uint64_t elementSize = tensor.bytes / tensor.type.getNumElements();
        for (uint64_t at = 0; at < tensor.bytes; at += elementSize)
          os.write(raw.data(), elementSize);
      } else {
        os.write(raw.data(), raw.size());
      }
      cursor = tensor.offset + tensor.bytes;
    }
    os.write_zeros(run.offset + run.bytes - cursor);
  }
  os.close();
  if (os.has_error())
    return fail("cannot write '" + path + "': " + os.error().message());
  return success();
}

LogicalResult writeFile(StringRef path, StringRef contents) {
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (error)
    return fail("cannot write '" + path + "': " + error.message());
  os << contents;
  return success();
}

} // namespace

LogicalResult traincc::linkTrainer(const TrainerDescription &d,
                                   ArrayRef<std::string> kernelObjects,
                                   StringRef workDir,
                                   StringRef outputPath) {
  auto inWorkDir = [&](StringRef name) {
    SmallString<256> path(workDir);
    llvm::sys::path::append(path, name);
    return std::string(path);
  };
  auto model = llvm::MemoryBuffer::getFile(d.modelPath, /*IsText=*/false);
  if (!model)
    return fail("cannot read '" + d.modelPath +
                "': " + model.getError().message());
  std::string statePath = inWorkDir("state.bin");
  std::string onnxPath = inWorkDir("model.onnx");
  std::string sourcePath = inWorkDir("model.cpp");
  std::string blobPath = inWorkDir("blobs.S");
  std::vector<const StateTensor *> initialised;
  if (failed(initialisedTensors(d, initialised)))
    return failure();
  std::vector<InitialRun> runs = initialRuns(initialised);
  if (failed(writeInitialState(initialised, runs, statePath)) ||
      failed(writeFile(onnxPath, (*model)->getBuffer())) ||
      failed(writeFile(sourcePath,
                       generateSource(d, runs, (*model)->getBufferSize()))))
    return failure();
  // The work directory is ours (created with a unique name), so its paths
  // need no escaping inside .incbin. The weights go to .lrodata (flag "l":
  // x86-64's large data), which both GNU linkers place after all other
  // sections: a multi-GiB blob in .rodata would put .data and .bss out of
  // the 32-bit PC-relative reach of the code (vit_h_14's 2.5 GB).
  std::string blobs = llvm::formatv(
      "  .section .lrodata,\"al\",@progbits\n  .balign 64\n"
      "  .globl traincc_initial_state_blob\n"
      "traincc_initial_state_blob:\n  .incbin \"{0}\"\n  .balign 64\n"
      "  .globl traincc_onnx_model_blob\n"
      "traincc_onnx_model_blob:\n  .incbin \"{1}\"\n"
      "  .section .note.GNU-stack,\"\",@progbits\n",
      statePath, onnxPath);
  if (d.gpu) {
    std::string gpuBlobs;
    for (auto [index, image] : llvm::enumerate(d.gpu->modules)) {
      // The PTX is a C string for the driver's JIT: NUL-terminated.
      std::string ptxPath = inWorkDir(llvm::formatv("module-{0}.ptx", index).str());
      std::string cubinPath =
          inWorkDir(llvm::formatv("module-{0}.cubin", index).str());
      if (failed(writeFile(ptxPath, image.ptx)) ||
          failed(writeFile(cubinPath, image.cubin)))
        return failure();
      gpuBlobs += llvm::formatv(
          "  .section .rodata\n  .balign 64\n"
          "  .globl traincc_ptx_blob_{2}\n"
          "traincc_ptx_blob_{2}:\n  .incbin \"{0}\"\n  .byte 0\n"
          "  .balign 64\n  .globl traincc_cubin_blob_{2}\n"
          "traincc_cubin_blob_{2}:\n  .incbin \"{1}\"\n  .byte 0\n",
          ptxPath, cubinPath, index);
    }
    blobs = gpuBlobs + blobs;
  }
  if (failed(writeFile(blobPath, blobs)))
    return failure();

  auto compiler = llvm::sys::findProgramByName("c++");
  if (!compiler)
    return fail("no C++ compiler ('c++') on PATH to link the trainer");
  std::string includeFlag = std::string("-I") + TRAINCC_RUNTIME_INCLUDE_DIR;
  std::string runtimeMain =
      std::string(TRAINCC_RUNTIME_LIBRARY_DIR) + "/libTrainccRuntimeMain.a";
  std::string runtime =
      std::string(TRAINCC_RUNTIME_LIBRARY_DIR) + "/libTrainccRuntime.a";
  for (const std::string &library : {runtimeMain, runtime})
    if (!llvm::sys::fs::exists(library))
      return fail("the trainer runtime library '" + library +
                  "' is missing (build the TrainccRuntimeMain target)");
  std::string output = outputPath.str();
  SmallVector<StringRef> args = {*compiler,   "-std=c++20", "-O2",
                                 includeFlag, sourcePath,   blobPath};
  // gold writes the weight blobs' hundreds of megabytes faster than BFD ld.
  if (llvm::sys::findProgramByName("ld.gold"))
    args.push_back("-fuse-ld=gold");
  for (const std::string &object : kernelObjects)
    args.push_back(object);
  // -ldl: the CUDA backend opens libcuda.so.1 at run time.
  args.append({runtimeMain, runtime, "-static-libstdc++", "-static-libgcc",
               "-pthread", "-lz", "-lm", "-ldl", "-o", output});
  std::string errorText;
  std::string logPath = inWorkDir("link.log");
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath),
                                          StringRef(logPath)};
  int status = llvm::sys::ExecuteAndWait(*compiler, args, std::nullopt,
                                         redirects, 0, 0, &errorText);
  if (status != 0) {
    auto log = llvm::MemoryBuffer::getFile(logPath);
    return fail("linking the trainer failed" +
                (errorText.empty() ? "" : ": " + errorText) + "\n" +
                (log ? (*log)->getBuffer() : StringRef()));
  }
  return success();
}
