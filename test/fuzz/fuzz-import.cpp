//===- fuzz-import.cpp - libFuzzer target over the ONNX import ------------===//
//
// Feeds arbitrary bytes to importONNXBuffer and, when they import, runs the
// import pipeline on the result. Any crash, sanitizer report, hang or
// runaway allocation is a bug: bad input must only ever produce
// diagnostics. Built by run-fuzz.sh (see CMakeLists.txt here).
//
//===----------------------------------------------------------------------===//

#include "traincc/Import/ONNXImporter.h"
#include "traincc/InitAll.h"
#include "traincc/Pipelines/Pipelines.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include <cstddef>
#include <cstdint>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DialectRegistry registry;
  traincc::registerAllDialects(registry);
  // A fresh context per input: attributes live as long as their context,
  // and one input must not change how the next is handled.
  // Dialects load on demand (the importer loads its own, passes their
  // dependent ones): loading all of them would cost more than an import.
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  // Diagnostics are the expected outcome; printing them would only slow
  // the fuzzer down.
  ScopedDiagnosticHandler handler(&context,
                                  [](Diagnostic &) { return success(); });

  traincc::ONNXImportOptions options;
  // Inputs are small; this keeps legitimate allocations far below the
  // fuzzer's memory limit.
  options.maxTensorBytes = uint64_t(64) << 20;
  // The first byte picks a batch size so that both batch paths are
  // explored (it is also part of the protobuf, whose first byte is a tag).
  options.batchSize = size ? data[0] % 4 : 0;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module = traincc::importONNXBuffer(
      &context, bytes, /*modelDir=*/"", "fuzz.onnx", options);
  if (!module)
    return 0;

  // Through the registered pipeline rather than buildImportPipeline: its
  // options type must not be constructed in clang-built code when the
  // library was built by g++ (their construction vtables differ).
  static bool registered = (traincc::registerPipelines(), true);
  (void)registered;
  PassManager pm(&context);
  if (failed(parsePassPipeline("traincc-import-pipeline", pm)))
    __builtin_trap();
  (void)pm.run(*module);
  return 0;
}
