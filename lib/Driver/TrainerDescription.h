//===- TrainerDescription.h - what a trainer's descriptor holds -*- C++ -*-===//
//
// Internal to the driver: the facts about a compiled model that the runtime
// needs (ModelABI.h), gathered from the step functions before codegen (the
// state arena layout, input and output types) and from the lowered kernels
// (which argument is which), then written out as C++ and linked.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_LIB_DRIVER_TRAINERDESCRIPTION_H
#define TRAINCC_LIB_DRIVER_TRAINERDESCRIPTION_H

#include "KernelReport.h"

#include "traincc/Dialect/Train/IR/TrainOps.h"
#include "traincc/Driver/Compile.h"
#include "traincc/Pipelines/Pipelines.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace traincc {

/// One persistent tensor at its place in the state arena.
struct StateTensor {
  std::string name;
  train::ParamKind kind;
  mlir::RankedTensorType type;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  /// Index of the parameter a gradient or optimizer buffer belongs to.
  int32_t owner = -1;
  /// The tensor a weight copy or step backup copies: its name (the param's
  /// `source`) and index.
  std::string sourceName;
  int32_t source = -1;
  mlir::ElementsAttr initialValue;
};

/// A model input, target or output: name and type of one micro-batch.
struct IOTensor {
  std::string name;
  mlir::RankedTensorType type;
  /// Integer inputs: ids lie in [0, idLimit) (the importer's
  /// `train.id_limit`); 0 when unbounded or not integer.
  int64_t idLimit = 0;
};

/// What an argument of a lowered kernel receives.
struct KernelArgument {
  enum class Role {
    State,     // pointer into the state arena
    Input,     // the micro-batch input
    Target,    // the micro-batch targets
    GradScale, // f32
    Seed,      // i64
    LearningRate,
    Step,
    Loss,   // out: scalar (micro_step) or per-sample (eval_step)
    Output, // out: the model output
    Workspace, // the step's planned temporaries (ModelABI.h workspace)
  };
  Role role;
  /// For State: index into TrainerDescription::state.
  unsigned stateIndex = 0;
};

/// The static memory plan of one target's step functions
/// (traincc_memory_plan): each step's workspace, and the part of
/// micro_step's that holds forward values saved for the backward pass.
struct StepMemory {
  uint64_t microStep = 0, applyStep = 0, evalStep = 0;
  uint64_t savedActivations = 0;
  /// The one workspace the runtime allocates for all three steps.
  uint64_t workspace() const {
    return std::max({microStep, applyStep, evalStep});
  }
};

/// One argument of a GPU kernel launch (traincc_gpu_arg).
struct GPUArgument {
  int32_t kind; // traincc_gpu_arg_kind
  int32_t size;
  uint64_t value;
};

/// One kernel launch of a GPU launch plan (traincc_gpu_launch).
struct GPULaunch {
  std::string kernel;
  /// Index of the GPUProgram module that defines the kernel.
  int32_t module = 0;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t sharedBytes = 0;
  std::vector<GPUArgument> args;
};

/// A replica collective (--sync-bn) between the launches of a GPU plan
/// (traincc_gpu_collective): the mean over the replicas of `count` floats
/// at workspace `offset`, after the first `position` launches.
struct GPUCollective {
  int32_t position = 0;
  uint64_t offset = 0;
  uint64_t count = 0;
};

/// The CUDA side of a trainer (traincc_gpu_program).
/// One part of the kernels (traincc_gpu_module).
struct GPUModuleImage {
  std::string ptx;
  /// ptxas output for the program's arch; empty without the CUDA toolkit.
  std::string cubin;
};

struct GPUProgram {
  std::string arch;
  /// ptxas's optimisation level (traincc -O), as the PTX's.
  unsigned optLevel = 3;
  std::vector<GPUModuleImage> modules;
  uint64_t workspaceBytes = 0;
  StepMemory memory;
  std::vector<GPULaunch> microStep, applyStep, evalStep;
  std::vector<GPUCollective> microStepCollectives, applyStepCollectives,
      evalStepCollectives;
  /// The launches' bytes and FLOPs (--report, `info`).
  std::optional<StepCosts> costs;
};

struct TrainerDescription {
  std::string modelName;
  /// The LLVM CPU the kernels are compiled for (--cpu, "native" resolved).
  std::string targetCPU;
  std::string modelPath;
  TrainingOptions training;
  /// The loss the training pipeline chose (never auto).
  LossKind loss = LossKind::Output;
  /// --loss-scale resolved (validateOptions has checked it).
  LossScaleMode lossScaling = LossScaleMode::None;
  /// With loss scaling, the state indices of loss_scaler.scale and
  /// loss_scaler.found_inf.
  int32_t lossScaleState = -1, foundInfState = -1;
  std::vector<StateTensor> state;
  llvm::StringMap<unsigned> stateIndex;
  uint64_t stateBytes = 0;
  IOTensor input;
  std::optional<IOTensor> target;
  IOTensor output;
  std::vector<KernelArgument> microStep, applyStep, evalStep;
  /// Whether the trainer has CPU kernels (--target cpu).
  bool hasCPU = true;
  /// The CPU steps' workspaces (traincc-plan-step-memory).
  StepMemory cpuMemory;
  /// The forward values micro_step computes again in the backward pass
  /// instead of keeping them (--recompute): op name and result bytes.
  std::vector<std::pair<std::string, uint64_t>> recomputed;
  /// The CPU loop nests' bytes and FLOPs (--report, `info`).
  std::optional<StepCosts> cpuCosts;
  /// The CUDA kernels, when the trainer has them (--target cuda).
  std::optional<GPUProgram> gpu;
};

/// Reads the state table and the model interface from the step functions
/// (after the training pipeline, before codegen). Errors are emitted on the
/// module.
mlir::FailureOr<TrainerDescription>
describeTrainer(mlir::ModuleOp module, const CompileOptions &options);

/// Reads the argument roles of the lowered kernels (LLVM dialect functions
/// micro_step, apply_step and eval_step, whose arguments still carry
/// `train.state` / `train.name` attributes), then renames the kernels to
/// `traincc_kernel_<name>` and removes what LLVM translation cannot take
/// (train.param ops, train.* attributes).
mlir::LogicalResult bindKernels(mlir::ModuleOp module,
                                TrainerDescription &description);

class CompileStage;

/// Sets `linalg` to the linalg pipeline's options for the GPU kernels (and
/// their CPU emulation) under `options`.
void setGPULinalgOptions(LinalgPipelineOptions &linalg,
                         const CompileOptions &options);

/// Lowers a copy of the step functions for the GPU: PTX for the kernels,
/// spread over up to `parts` modules compiled in parallel, and the three
/// launch plans (no cubins; see PendingAssembly). Its passes are timed
/// under `stage`.
mlir::FailureOr<GPUProgram> buildGPUProgram(mlir::ModuleOp stepModule,
                                            const TrainerDescription &d,
                                            const CompileOptions &options,
                                            CompileStage &stage,
                                            unsigned parts = 1);

/// ptxas in the CUDA toolkit folder or on PATH.
std::optional<std::string> findPtxas(llvm::StringRef toolkit);

/// ptxas assembling each module of a GPUProgram into a cubin, one process
/// per module, in the background while the CPU code is generated.
class PendingAssembly {
public:
  PendingAssembly() = default;
  PendingAssembly(PendingAssembly &&) = default;
  ~PendingAssembly();
  /// Writes each module's PTX into `workDir` and starts ptxas on it.
  mlir::LogicalResult start(const GPUProgram &program, llvm::StringRef ptxas,
                            llvm::StringRef workDir);
  /// Waits for the processes and stores the cubins in `program`. Prints
  /// "traincc: error: ..." with ptxas's log for each module it rejected.
  mlir::LogicalResult finish(GPUProgram &program);

private:
  struct Job {
    llvm::sys::ProcessInfo process;
    std::string cubinPath, logPath;
  };
  std::vector<Job> jobs_;
};

/// Writes the descriptor source, the initial state and the model bytes into
/// `workDir`, compiles them with the system C++ compiler and links them
/// with `kernelObjects` and the runtime into `outputPath`. Prints
/// "traincc: error: ..." and returns failure on any problem.
mlir::LogicalResult linkTrainer(const TrainerDescription &description,
                                llvm::ArrayRef<std::string> kernelObjects,
                                llvm::StringRef workDir,
                                llvm::StringRef outputPath);

} // namespace traincc

#endif // TRAINCC_LIB_DRIVER_TRAINERDESCRIPTION_H
