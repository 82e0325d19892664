//===- Compile.h - the traincc compile driver -------------------*- C++ -*-===//
//
// Library side of the `traincc` tool: the tool parses its flags into
// CompileOptions and calls runCompile, so tests and other front ends can
// drive a compile without a command line.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_DRIVER_COMPILE_H
#define TRAINCC_DRIVER_COMPILE_H

#include "traincc/Transforms/TrainingOptions.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>

namespace traincc {

enum class EmitKind {
  /// The trainer executable (kernels linked with the runtime).
  Exe,
  /// The kernels as a relocatable object file.
  Obj,
  /// The kernels as optimised LLVM IR text.
  LLVMIR,
  /// The CUDA kernels as PTX text.
  PTX,
  /// The CUDA kernels compiled for the CPU (a block's threads as fibers),
  /// as an object file (the fake CUDA driver of the tests runs them).
  CUDAEmulation,
  /// The step functions after lowering compute ops to linalg (MLIR text).
  LinalgMLIR,
  /// The imported Train forward graph as MLIR text.
  TrainMLIR,
  /// The first import stage alone (`train.onnx_node` ops, before
  /// legalisation) as MLIR text.
  ONNXMLIR,
  /// The training-step functions (@micro_step, @apply_step, @eval_step)
  /// in the Train dialect as MLIR text.
  StepMLIR,
};

struct CompileOptions {
  std::string inputPath;
  /// "-" writes to standard output.
  std::string outputPath = "-";
  EmitKind emit = EmitKind::Exe;
  /// Host CPU the kernels are compiled for ("x86-64": any x86-64 machine;
  /// "native": this one).
  std::string cpu = "native";
  /// Kernels for the CPU (--target cpu).
  bool targetCPU = true;
  /// Kernels for CUDA GPUs (--target cuda). Unset: when the CUDA toolkit
  /// (ptxas) is found, and then a model the GPU path cannot compile gets a
  /// warning and a CPU-only trainer rather than an error.
  std::optional<bool> targetCUDA;
  /// --target as given, for validation ("" when not given).
  std::string targetSpelling;
  /// GPU architecture of the cubin (--gpu-arch).
  std::string gpuArch = "sm_90";
  /// CUDA toolkit folder: ptxas, and libdevice for math functions.
  std::string cudaToolkit = "/usr/local/cuda";
  /// See ONNXImportOptions::batchSize; unset: the model's own, which must
  /// then be static.
  std::optional<int64_t> batchSize;
  /// Print a summary of the model (inputs, outputs, ops, parameters) to
  /// standard output.
  bool report = false;
  /// Time each CPU kernel of the steps in the trainer, which prints the
  /// times by kernel class when it exits (--profile-kernels).
  bool profileKernels = false;
  /// Print each stage's wall time and peak memory, and every pass's time
  /// (--timing), on standard error.
  bool timing = false;
  /// Print the IR after each run of the pass with this argument
  /// (`traincc-vectorize-contractions`) on standard error (hidden
  /// --print-ir-after, for working on the compiler).
  std::string printIRAfter;
  /// Verify the IR after every pass (hidden --verify-each). By default each
  /// stage verifies its result once: verifying after every pass cost a
  /// quarter of the GPU code generation's time.
  bool verifyEach = false;
  /// Optimisation level of the kernels, 0 to 3 (-O): LLVM's for the CPU
  /// kernels and the CUDA kernels' PTX, and ptxas's.
  unsigned optLevel = 3;
  /// GPU kernels: BatchNorm's backward sums in the op that computes dy
  /// (hidden --sums-in-producers; false keeps them apart, for measuring).
  bool sumsInProducers = true;
  /// GPU kernels: the elementwise op after a tiled convolution in the
  /// convolution's kernel (hidden --conv-epilogues; false keeps them
  /// apart, for measuring).
  bool convEpilogues = true;
  /// Threads for LLVM's optimisation and code generation; 0: every core.
  unsigned jobs = 0;
  TrainingOptions training;
  /// Print full initial values in emitted MLIR instead of eliding tensors
  /// of more than 16 elements.
  bool printWeights = false;
};

/// Prints "traincc: error: --lr is a flag of the trainer (...)" and returns
/// false when `arguments` (a command line, without the program name) holds
/// a flag of the trainer that traincc does not have.
bool rejectTrainerFlags(llvm::ArrayRef<const char *> arguments);

/// Prints traincc's version, its commit and the LLVM it was built with.
void printVersion(llvm::raw_ostream &os);

/// Checks option values (ranges, names); prints "traincc: error: ..." for
/// the first bad one and returns false.
bool validateOptions(const CompileOptions &options);

/// Runs one compile (validating the options first). Diagnostics go to standard error as
/// "traincc: error: ..."; returns the process exit code (0 or 1).
int runCompile(const CompileOptions &options);

} // namespace traincc

#endif // TRAINCC_DRIVER_COMPILE_H
