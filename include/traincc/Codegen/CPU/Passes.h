//===- Passes.h - CPU kernels -----------------------------------*- C++ -*-===//

#ifndef TRAINCC_CODEGEN_CPU_PASSES_H
#define TRAINCC_CODEGEN_CPU_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"
// For the CPU pipeline (Pipelines.cpp): convert-vector-to-llvm, and
// cpuHasFeature to pick the target's instructions.
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "traincc/Codegen/CPU/EmitObject.h"

namespace traincc {

/// Marks the functions traincc-outline-parallel-loops outlines, for
/// traincc-lower-parallel-calls.
constexpr llvm::StringLiteral kParallelBodyAttrName = "traincc.parallel_body";
/// Marks the functions it outlines from ops too small to split: called
/// directly, so that traincc-share-identical-kernels keeps one of each and
/// step functions stay short sequences of calls for LLVM.
constexpr llvm::StringLiteral kSerialBodyAttrName = "traincc.serial_body";
/// Marks the contractions whose zero fill traincc-absorb-zero-fills
/// dropped, for traincc-vectorize-contractions.
constexpr llvm::StringLiteral kZeroInitAttrName = "traincc.zero_init";

#define GEN_PASS_DECL
#include "traincc/Codegen/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "traincc/Codegen/CPU/Passes.h.inc"

} // namespace traincc

#endif // TRAINCC_CODEGEN_CPU_PASSES_H
