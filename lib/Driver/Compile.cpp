//===- Compile.cpp - the traincc compile driver ---------------------------===//

#include "traincc/Driver/Compile.h"

#include "traincc/Dialect/Train/IR/TrainOps.h"
#include "traincc/Import/ONNXImporter.h"
#include "traincc/InitAll.h"
#include "traincc/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace traincc;

namespace {

/// Prints diagnostics as "traincc: error: MESSAGE". Locations of imported
/// ONNX nodes carry no line information, and the messages themselves name
/// the node; MLIR-text locations (file:line:col) are kept.
LogicalResult printDiagnostic(Diagnostic &diag) {
  llvm::raw_ostream &os = llvm::errs();
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

int traincc::runCompile(const CompileOptions &options) {
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  ScopedDiagnosticHandler handler(&context, printDiagnostic);

  ONNXImportOptions importOptions;
  importOptions.batchSize = options.batchSize;
  OwningOpRef<ModuleOp> module =
      importONNXFile(&context, options.inputPath, importOptions);
  if (!module)
    return 1;

  PassManager pm(&context);
  buildImportPipeline(pm, ImportPipelineOptions());
  if (failed(pm.run(*module)))
    return 1;

  if (options.report)
    printReport(*module, llvm::outs());

  std::string error;
  auto output = openOutputFile(options.outputPath, &error);
  if (!output) {
    llvm::errs() << "traincc: error: " << error << "\n";
    return 1;
  }
  switch (options.emit) {
  case EmitKind::TrainMLIR: {
    OpPrintingFlags flags;
    if (!options.printWeights)
      flags.elideLargeElementsAttrs(16);
    module->print(output->os(), flags);
    break;
  }
  }
  output->keep();
  return 0;
}
