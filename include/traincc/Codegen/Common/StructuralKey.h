//===- StructuralKey.h - functions equal up to their names ------*- C++ -*-===//

#ifndef TRAINCC_CODEGEN_COMMON_STRUCTURALKEY_H
#define TRAINCC_CODEGEN_COMMON_STRUCTURALKEY_H

#include "mlir/Interfaces/FunctionInterfaces.h"

#include <string>

namespace traincc::codegen {

/// The function's IR without its name and argument attributes: type, other
/// attributes and body, printed in generic form with local value numbers.
/// Two kernels with equal keys compute the same thing on the same shapes
/// (printing is exact, so no collision merges different code); sharing
/// one of them keeps compile time proportional to a model's distinct
/// shapes rather than its depth.
std::string structuralKey(mlir::FunctionOpInterface function);

} // namespace traincc::codegen

#endif // TRAINCC_CODEGEN_COMMON_STRUCTURALKEY_H
