//===- Passes.h - state lowering and step signatures ------------*- C++ -*-===//

#ifndef TRAINCC_CODEGEN_COMMON_PASSES_H
#define TRAINCC_CODEGEN_COMMON_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace traincc {

#define GEN_PASS_DECL
#include "traincc/Codegen/Common/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "traincc/Codegen/Common/Passes.h.inc"

} // namespace traincc

#endif // TRAINCC_CODEGEN_COMMON_PASSES_H
