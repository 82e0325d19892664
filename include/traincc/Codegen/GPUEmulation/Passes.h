//===- Passes.h - GPU kernels run on the CPU --------------------*- C++ -*-===//

#ifndef TRAINCC_CODEGEN_GPUEMULATION_PASSES_H
#define TRAINCC_CODEGEN_GPUEMULATION_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace traincc {

#define GEN_PASS_DECL
#include "traincc/Codegen/GPUEmulation/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "traincc/Codegen/GPUEmulation/Passes.h.inc"

} // namespace traincc

#endif // TRAINCC_CODEGEN_GPUEMULATION_PASSES_H
