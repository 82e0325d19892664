//===- KernelCost.h - what one CPU loop nest moves and computes -*- C++ -*-===//
//
// The cost of one kernel of a bufferized step function (a linalg op or a
// memref.copy), shared by `traincc --report` (lib/Driver/KernelReport) and
// by the kernel timers of `traincc --profile-kernels`
// (traincc-time-kernels), so that both count the same bytes and FLOPs. How
// they are counted is in lib/Driver/KernelReport.h.
//
// The kernel class says what a loop nest is for (a convolution's forward,
// data or filter gradient, a matmul, ...): contractions of the same shape
// serve different purposes, so the lowering that creates a convolution
// gradient names it with the `traincc.kernel_class` attribute; other ops
// are classified by what they are.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_CODEGEN_COMMON_KERNELCOST_H
#define TRAINCC_CODEGEN_COMMON_KERNELCOST_H

#include "traincc/runtime/ModelABI.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Types.h"

#include <cstdint>
#include <string>

namespace traincc {

/// One kernel of a step: a CPU loop nest or a GPU launch.
struct KernelCost {
  /// The linalg op (`linalg.matmul`) or the GPU kernel's symbol.
  std::string name;
  /// CPU: the iteration space (`64x10x784`); GPU: grid x block (`225x256`).
  std::string shape;
  /// CPU: the body's arithmetic (`mulf addf`); GPU: the linalg ops the
  /// kernel runs (`matmul`, `generic+generic`).
  std::string body;
  uint64_t bytes = 0;
  uint64_t flops = 0;
};

/// The size of a static memref in bytes (0 otherwise).
uint64_t memrefBytes(mlir::Type type);

/// The cost of a kernel of a bufferized step: a linalg op or a
/// memref.copy (the ops `isLoopNestKernel` accepts).
KernelCost loopNestCost(mlir::Operation *kernel);

/// Whether `op` is one kernel of a bufferized step function.
bool isLoopNestKernel(mlir::Operation *op);

/// Names `op` as a kernel of class `kind` (TRAINCC_KERNEL_*).
void setKernelClass(mlir::Operation *op, traincc_kernel_class kind);

/// The class of a kernel of a bufferized step: the one its lowering named,
/// else what the op is.
traincc_kernel_class kernelClassOf(mlir::Operation *kernel);

} // namespace traincc

#endif // TRAINCC_CODEGEN_COMMON_KERNELCOST_H
