//===- traincc.cpp - compile an ONNX model into a trainer -----------------===//

#include "traincc/Driver/Compile.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

namespace cl = llvm::cl;

static cl::OptionCategory category("traincc options");

static cl::opt<std::string> inputPath(cl::Positional, cl::Required,
                                      cl::desc("MODEL.onnx"),
                                      cl::cat(category));
static cl::opt<std::string>
    outputPath("o", cl::desc("Output file ('-' for standard output)"),
               cl::value_desc("FILE"), cl::init("-"), cl::cat(category));
static cl::opt<traincc::EmitKind> emit(
    "emit", cl::desc("What to produce"),
    cl::values(clEnumValN(traincc::EmitKind::TrainMLIR, "train-mlir",
                          "the imported Train forward graph (MLIR text)")),
    cl::init(traincc::EmitKind::TrainMLIR), cl::cat(category));
static cl::opt<int64_t> batchSize(
    "batch-size",
    cl::desc("Micro-batch size: the first axis of every model input "
             "(default: the model's own, 1 where it is symbolic)"),
    cl::value_desc("N"), cl::init(0), cl::cat(category));
static cl::opt<bool> report(
    "report",
    cl::desc("Print the model's inputs, outputs, op counts and parameters"),
    cl::cat(category));
static cl::opt<bool> printWeights(
    "print-weights",
    cl::desc("Print every initial value in emitted MLIR (default: elide "
             "tensors of more than 16 elements)"),
    cl::cat(category));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "traincc: ahead-of-time compiler for training "
                              "ONNX models\n");
  if (batchSize < 0) {
    llvm::errs() << "traincc: error: --batch-size must be positive, got "
                 << batchSize << "\n";
    return 1;
  }
  traincc::CompileOptions options;
  options.inputPath = inputPath;
  options.outputPath = outputPath;
  options.emit = emit;
  options.batchSize = batchSize;
  options.report = report;
  options.printWeights = printWeights;
  return traincc::runCompile(options);
}
