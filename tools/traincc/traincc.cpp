//===- traincc.cpp - compile an ONNX model into a trainer -----------------===//
//
// Flags only: every decision is library code (traincc/Driver/Compile.h).
//
//===----------------------------------------------------------------------===//

#include "traincc/Driver/Compile.h"
#include "traincc/Import/SupportedOps.h"

#include "llvm/Support/Allocator.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <type_traits>

namespace cl = llvm::cl;
using traincc::EmitKind;

static cl::OptionCategory category("traincc options");
static cl::OptionCategory trainingCategory(
    "Training options (compiled into the trainer as its defaults)");

static cl::opt<std::string> inputPath(cl::Positional, cl::desc("MODEL.onnx"),
                                      cl::cat(category));
static cl::opt<std::string>
    outputPath("o", cl::desc("Output file ('-' for standard output)"),
               cl::value_desc("FILE"), cl::init("-"), cl::cat(category));
static cl::opt<EmitKind> emit(
    "emit", cl::desc("What to produce"),
    cl::values(
        clEnumValN(EmitKind::Exe, "exe",
                   "the trainer executable (default; needs -o)"),
        clEnumValN(EmitKind::Obj, "obj",
                   "the generated kernels as an object file"),
        clEnumValN(EmitKind::LLVMIR, "llvm",
                   "the generated kernels as LLVM IR"),
        clEnumValN(EmitKind::PTX, "ptx", "the CUDA kernels as PTX"),
        clEnumValN(EmitKind::CUDAEmulation, "cuda-emulation",
                   "the CUDA kernels compiled for this CPU (a block's "
                   "threads as fibers), as an object file (tests the GPU "
                   "path without a "
                   "GPU)"),
        clEnumValN(EmitKind::LinalgMLIR, "linalg-mlir",
                   "the step functions lowered to linalg (MLIR text)"),
        clEnumValN(EmitKind::TrainMLIR, "train-mlir",
                   "the imported Train forward graph (MLIR text)"),
        clEnumValN(EmitKind::StepMLIR, "step-mlir",
                   "the training-step functions micro_step, apply_step and "
                   "eval_step (MLIR text)"),
        clEnumValN(EmitKind::ONNXMLIR, "onnx-mlir",
                   "the first import stage alone: one train.onnx_node per "
                   "ONNX node (MLIR text)")),
    cl::init(EmitKind::Exe), cl::cat(category));
static cl::opt<std::string> cpu(
    "cpu",
    cl::desc("CPU the kernels are compiled for: native (default: this "
             "machine's CPU and vector width), x86-64 (any x86-64 machine), "
             "or an LLVM CPU name such as x86-64-v3 or sapphirerapids"),
    cl::init("native"), cl::cat(category));
static cl::opt<std::string> target(
    "target",
    cl::desc("Where the trainer runs: cpu, cuda or cpu,cuda (default: "
             "cpu,cuda when the CUDA toolkit's ptxas is found, else cpu)"),
    cl::init(""), cl::cat(category));
static cl::opt<std::string>
    gpuArch("gpu-arch",
            cl::desc("GPU architecture of the cubin (default sm_90, the "
                     "H200); the PTX runs on newer GPUs too"),
            cl::value_desc("sm_NN"), cl::init("sm_90"), cl::cat(category));
static cl::opt<std::string>
    cudaPath("cuda-path",
             cl::desc("CUDA toolkit folder (ptxas, libdevice); default "
                      "/usr/local/cuda"),
             cl::value_desc("DIR"), cl::init("/usr/local/cuda"),
             cl::cat(category));
static cl::opt<int64_t> batchSize(
    "batch-size",
    cl::desc("Micro-batch size: the first axis of every model input "
             "(default: the model's own; required where it is symbolic)"),
    cl::value_desc("N"), cl::init(0), cl::cat(category));
static cl::opt<bool> report(
    "report",
    cl::desc("Print the model's inputs, outputs, op counts and parameters; "
             "with --emit=exe, obj, llvm or ptx, also each step's kernels "
             "(CPU loop nests, GPU launches) with the bytes they move and "
             "their FLOPs, and the totals"),
    cl::cat(category));
static cl::opt<bool> profileKernels(
    "profile-kernels",
    cl::desc("Time every CPU kernel of the training and evaluation steps "
             "(the loop nests --report lists): the trainer then prints, when "
             "it exits, the time, GFLOP/s and GB/s of each kernel class "
             "(convolution forward, data and filter gradients, matmul, "
             "pooling, reductions, elementwise, copies), the step time "
             "outside every kernel, and the 8 slowest kernels, numbered as "
             "in --report (TRAINCC_SLOWEST_KERNELS=N in the trainer's "
             "environment lists N; 0 lists all)"),
    cl::cat(category));
static cl::opt<unsigned> optLevel(
    "O",
    cl::desc("Optimisation level of the kernels: LLVM's for the CPU "
             "kernels and the CUDA kernels' PTX, and ptxas's: -O0 to -O3 "
             "(default -O3; -O1 compiles faster for quick iterations, and "
             "its trainer runs slower)"),
    cl::Prefix, cl::init(3), cl::cat(category));
static cl::opt<unsigned> jobs(
    "jobs",
    cl::desc("Threads that compile the kernels: the CPU kernels with LLVM, "
             "the CUDA kernels to PTX in two parts per thread, ptxas on each "
             "part (default 0: every core); the code is the same for any "
             "count"),
    cl::value_desc("N"), cl::init(0), cl::cat(category));
static cl::opt<bool> timing(
    "timing",
    cl::desc("Print each compile stage's wall time and the peak memory at "
             "its end, then every pass's time under its stage (standard "
             "error)"),
    cl::cat(category));
static cl::opt<std::string> printIRAfter(
    "print-ir-after",
    cl::desc("Print the IR after each run of the pass with this traincc-opt "
             "name (standard error); for working on the compiler"),
    cl::value_desc("pass"), cl::Hidden, cl::cat(category));
static cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("Verify the IR after every pass, not only at the end of each "
             "stage; for working on the compiler"),
    cl::Hidden, cl::cat(category));
static cl::opt<bool> sumsInProducers(
    "sums-in-producers",
    cl::desc("GPU kernels: compute BatchNorm's backward sums in the kernel "
             "that computes their input (default); =false keeps them "
             "apart, for measuring the difference"),
    cl::init(true), cl::Hidden, cl::cat(category));
static cl::opt<bool> convEpilogues(
    "conv-epilogues",
    cl::desc("GPU kernels: apply the elementwise op that reads a tiled "
             "convolution's output (a ReLU mask, with BatchNorm's backward "
             "sums) in the convolution's kernel (default); =false keeps "
             "them apart, for measuring the difference"),
    cl::init(true), cl::Hidden, cl::cat(category));
static cl::opt<bool> printWeights(
    "print-weights",
    cl::desc("Print every initial value in emitted MLIR (default: elide "
             "tensors of more than 16 elements)"),
    cl::cat(category));
static cl::opt<bool> listOps(
    "list-ops",
    cl::desc("Print the supported ONNX op types, one per line, and exit"),
    cl::cat(category));

// One flag per entry of TrainingOptions.def; enumerated options are read as
// text and parsed by collectOptions, which names the flag and the choices.
template <typename T>
using FlagType = std::conditional_t<std::is_enum_v<T>, std::string,
                                    traincc::OptionValueType<T>>;

template <typename T>
static FlagType<T> flagDefault(const T &value) {
  if constexpr (std::is_enum_v<T>)
    return traincc::stringifyEnum(value).str();
  else
    return traincc::optionInitialValue<T>(value);
}

/// `help` and " (default VALUE)", for --help; unset options, false and
/// empty strings show no default (their help says what happens).
template <typename T>
static llvm::StringRef describe(llvm::StringRef help, const T &value) {
  static llvm::BumpPtrAllocator allocator;
  static llvm::StringSaver saver(allocator);
  std::string shown;
  llvm::raw_string_ostream os(shown);
  if constexpr (std::is_enum_v<T>)
    os << traincc::stringifyEnum(value);
  else if constexpr (std::is_same_v<T, bool>)
    os << (value ? "on" : "");
  else if constexpr (std::is_same_v<T, std::string>)
    os << value;
  else if constexpr (std::is_same_v<T, double>)
    os << llvm::format("%g", value);
  else if constexpr (std::is_integral_v<T>)
    os << value;
  if (shown.empty())
    return help;
  return saver.save(help + " (default " + shown + ")");
}

namespace training_flags {
using namespace traincc;
#define TRAINING_OPTION(TYPE, FIELD, FLAG, DEFAULT, VALUE_NAME, HELP)          \
  static cl::opt<FlagType<TYPE>>                                               \
      FIELD(FLAG, cl::desc(describe<TYPE>(HELP, DEFAULT)),                     \
            cl::value_desc(VALUE_NAME),                                        \
            cl::init(flagDefault<TYPE>(DEFAULT)), cl::cat(trainingCategory));
#include "traincc/Transforms/TrainingOptions.def"
} // namespace training_flags

/// Reads flag `--FLAG` into `field`; false (with the error printed) for a
/// spelling that names no value of an enumeration. An unset-able field
/// stays unset when the flag is not given.
template <typename T>
static bool readFlag(llvm::StringRef flag, const cl::opt<FlagType<T>> &value,
                     T &field) {
  if constexpr (std::is_enum_v<T>) {
    std::optional<T> parsed = traincc::symbolizeEnum<T>(value.getValue());
    if (!parsed) {
      llvm::errs() << "traincc: error: --" << flag << " must be "
                   << traincc::enumSpellingList<T>() << ", got '"
                   << value.getValue() << "'\n";
      return false;
    }
    field = *parsed;
  } else {
    field = traincc::fieldFromOption<T>(value.getValue(),
                                        value.getNumOccurrences() > 0);
  }
  return true;
}

static std::optional<traincc::CompileOptions> collectOptions() {
  traincc::CompileOptions options;
  options.inputPath = inputPath;
  options.outputPath = outputPath;
  options.emit = emit;
  options.cpu = cpu;
  if (!target.empty()) {
    llvm::SmallVector<llvm::StringRef> targets;
    llvm::StringRef(target).split(targets, ',');
    options.targetCPU = llvm::is_contained(targets, "cpu");
    options.targetCUDA = llvm::is_contained(targets, "cuda");
    options.targetSpelling = target;
  }
  options.gpuArch = gpuArch;
  options.cudaToolkit = cudaPath;
  if (batchSize.getNumOccurrences())
    options.batchSize = batchSize;
  options.report = report;
  options.profileKernels = profileKernels;
  options.timing = timing;
  options.printIRAfter = printIRAfter;
  options.verifyEach = verifyEach;
  options.sumsInProducers = sumsInProducers;
  options.convEpilogues = convEpilogues;
  options.optLevel = optLevel;
  options.jobs = jobs;
  options.printWeights = printWeights;
  using namespace traincc;
  TrainingOptions &t = options.training;
#define TRAINING_OPTION(TYPE, FIELD, FLAG, DEFAULT, VALUE_NAME, HELP)          \
  if (!readFlag<TYPE>(FLAG, training_flags::FIELD, t.FIELD))                   \
    return std::nullopt;
#include "traincc/Transforms/TrainingOptions.def"
  return options;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions({&category, &trainingCategory});
  cl::SetVersionPrinter(traincc::printVersion);
  if (!traincc::rejectTrainerFlags(llvm::ArrayRef(argv + 1, argc - 1)))
    return 1;
  cl::ParseCommandLineOptions(
      argc, argv, "traincc: ahead-of-time compiler for training ONNX models\n");
  if (listOps) {
    for (const std::string &op : traincc::getSupportedONNXOps())
      llvm::outs() << op << "\n";
    return 0;
  }
  std::optional<traincc::CompileOptions> options = collectOptions();
  return options ? traincc::runCompile(*options) : 1;
}
