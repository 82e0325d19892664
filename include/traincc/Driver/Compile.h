//===- Compile.h - the traincc compile driver -------------------*- C++ -*-===//
//
// Library side of the `traincc` tool: the tool parses its flags into
// CompileOptions and calls runCompile, so tests and other front ends can
// drive a compile without a command line.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_DRIVER_COMPILE_H
#define TRAINCC_DRIVER_COMPILE_H

#include <cstdint>
#include <string>

namespace traincc {

enum class EmitKind {
  /// The imported Train forward graph as MLIR text.
  TrainMLIR,
};

struct CompileOptions {
  std::string inputPath;
  /// "-" writes to standard output.
  std::string outputPath = "-";
  EmitKind emit = EmitKind::TrainMLIR;
  /// See ONNXImportOptions::batchSize.
  int64_t batchSize = 0;
  /// Print a summary of the model (inputs, outputs, ops, parameters) to
  /// standard output.
  bool report = false;
  /// Print full initial values in emitted MLIR instead of eliding tensors
  /// of more than 16 elements.
  bool printWeights = false;
};

/// Runs one compile. Diagnostics go to standard error as
/// "traincc: error: ..."; returns the process exit code (0 or 1).
int runCompile(const CompileOptions &options);

} // namespace traincc

#endif // TRAINCC_DRIVER_COMPILE_H
