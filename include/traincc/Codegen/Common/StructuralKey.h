//===- StructuralKey.h - functions equal up to their names ------*- C++ -*-===//

#ifndef TRAINCC_CODEGEN_COMMON_STRUCTURALKEY_H
#define TRAINCC_CODEGEN_COMMON_STRUCTURALKEY_H

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallVector.h"

#include <unordered_map>

namespace traincc::codegen {

/// Finds functions equal up to their names and argument attributes: the
/// same type, other attributes and body (locations ignored). Such kernels
/// compute the same thing on the same shapes; sharing one of them keeps
/// compile time proportional to a model's distinct shapes rather than its
/// depth.
///
/// A structural hash picks the candidates and a full comparison decides, so
/// no collision merges different code; both are linear in a function's
/// size and, unlike printing the IR, allocate almost nothing.
class StructuralTable {
public:
  /// The first function inserted that equals `function`; `function` itself
  /// (now inserted) if there was none. Inserted functions must outlive the
  /// table.
  mlir::FunctionOpInterface lookupOrInsert(mlir::FunctionOpInterface function);

private:
  std::unordered_map<size_t, llvm::SmallVector<mlir::FunctionOpInterface, 1>>
      buckets;
};

} // namespace traincc::codegen

#endif // TRAINCC_CODEGEN_COMMON_STRUCTURALKEY_H
