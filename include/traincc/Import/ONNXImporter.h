//===- ONNXImporter.h - first import stage ----------------------*- C++ -*-===//
//
// Reads an ONNX ModelProto and emits the first-stage module: a `forward`
// function whose body is one `train.onnx_node` per ONNX node (in graph
// order), `train.param` for every float initializer, `train.constant` for
// other initializers, and the default-domain opset as the module attribute
// `train.onnx_opset`. The second stage is the `traincc-legalize-onnx` pass.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_IMPORT_ONNXIMPORTER_H
#define TRAINCC_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace traincc {

struct ONNXImportOptions {
  /// Size of the first axis of every graph input that is not an
  /// initializer. 0 keeps the model's own size, which must then be static
  /// (a symbolic one is an error).
  int64_t batchSize = 0;
  /// Refuse any single tensor larger than this many bytes (hostile or absurd
  /// dimensions must not turn into huge allocations).
  uint64_t maxTensorBytes = uint64_t(4) << 30;
  /// Refuse models whose external data adds up to more than this many
  /// bytes (many tensors may name the same region of one file).
  uint64_t maxExternalDataBytes = uint64_t(16) << 30;
};

/// Imports the model in file `path`. External data is read relative to the
/// file's folder and may not leave it. Every problem is reported as an error
/// diagnostic naming the file; returns null then.
mlir::OwningOpRef<mlir::ModuleOp>
importONNXFile(mlir::MLIRContext *context, llvm::StringRef path,
               const ONNXImportOptions &options);

/// Imports a serialized ModelProto held in memory. `modelDir` is where
/// external data lives (empty: external data is refused); `bufferName`
/// names the model in diagnostics.
mlir::OwningOpRef<mlir::ModuleOp>
importONNXBuffer(mlir::MLIRContext *context, llvm::StringRef bytes,
                 llvm::StringRef modelDir, llvm::StringRef bufferName,
                 const ONNXImportOptions &options);

} // namespace traincc

#endif // TRAINCC_IMPORT_ONNXIMPORTER_H
