#include "traincc/Import/ONNXImporter.h"
// First import stage: ModelProto -> generic IR (in progress).
mlir::OwningOpRef<mlir::ModuleOp>
traincc::importONNXFile(mlir::MLIRContext *, llvm::StringRef,
                        const ONNXImportOptions &) {
  return nullptr;
}
