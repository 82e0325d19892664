//===- Passes.h - GPU kernels -----------------------------------*- C++ -*-===//

#ifndef TRAINCC_CODEGEN_GPU_PASSES_H
#define TRAINCC_CODEGEN_GPU_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace traincc {

/// Alignment of each temporary in a GPU step's workspace
/// (traincc-prepare-gpu-steps plans it, traincc-pack-gpu-workspace packs it).
constexpr int64_t kGPUWorkspaceAlignment = 256;

/// Alignment of every pointer a launch plan passes to a kernel (a device
/// allocation plus a planned offset): the launch plan builder checks it,
/// traincc-annotate-kernel-pointers declares it to LLVM.
constexpr int64_t kGPUKernelPointerAlignment = 16;

/// A replica collective of a GPU step (traincc --sync-bn):
/// `func.call @traincc_gpu_replica_mean(%values) : (memref<?xf32>) -> ()`
/// on a workspace view, which traincc-prepare-gpu-steps makes of the CPU
/// steps' traincc_replica_mean call. It stays host code between the
/// kernels; the launch plan makes it a traincc_gpu_collective.
constexpr llvm::StringLiteral kGPUReplicaMeanFunc = "traincc_gpu_replica_mean";

/// The workspace argument of a step function prepared for the GPU
/// (`train.gpu_buffer = "workspace"`), or null.
mlir::BlockArgument gpuWorkspaceArgument(mlir::func::FuncOp func);

#define GEN_PASS_DECL
#include "traincc/Codegen/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "traincc/Codegen/GPU/Passes.h.inc"

} // namespace traincc

#endif // TRAINCC_CODEGEN_GPU_PASSES_H
