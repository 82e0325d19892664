//===- MemoryPlan.h - one arena for the temporaries of a step ---*- C++ -*-===//
//
// Shapes are static and a step runs its ops in one fixed order, so which
// temporaries are alive at the same time is known at compile time. The CPU
// steps (traincc-plan-step-memory) and the GPU steps
// (traincc-pack-gpu-workspace) both place their temporaries in one arena
// with this planner; they differ only in what counts as a use (a top-level
// op on the CPU, a kernel launch on the GPU).
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_CODEGEN_COMMON_MEMORYPLAN_H
#define TRAINCC_CODEGEN_COMMON_MEMORYPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace traincc::codegen {

/// The step-function argument that holds a planned workspace (unit
/// attribute; the GPU steps mark theirs `train.gpu_buffer = "workspace"`).
constexpr llvm::StringLiteral kWorkspaceArgAttrName = "train.workspace";
/// On a planned step function: its workspace's size in bytes.
constexpr llvm::StringLiteral kWorkspaceBytesAttrName = "train.workspace_bytes";
/// On a planned training step: the bytes of its workspace that hold forward
/// values kept for the backward pass (part of the workspace).
constexpr llvm::StringLiteral kSavedBytesAttrName =
    "train.saved_activation_bytes";

/// One temporary of a step: its size, and the positions (in program order)
/// of its first and last use, both inclusive. The planner fills `offset`.
struct PlannedBuffer {
  int64_t bytes = 0;
  int64_t first = 0, last = 0;
  int64_t offset = 0;

  bool overlapsInTime(const PlannedBuffer &other) const {
    return other.last >= first && other.first <= last;
  }
};

/// Places `buffers` in one arena so that two buffers alive at the same
/// position never share a byte, every offset a multiple of `alignment`
/// (each buffer takes its size rounded up to it). First fit, tried in two
/// orders (by first use, and largest first), the smaller arena kept.
/// Returns the arena's size in bytes.
int64_t planArena(llvm::MutableArrayRef<PlannedBuffer> buffers,
                  int64_t alignment);

/// The most bytes (sizes rounded up to `alignment`) alive at one position:
/// no plan can be smaller.
int64_t peakLiveBytes(llvm::ArrayRef<PlannedBuffer> buffers,
                      int64_t alignment);

/// Bytes of the buffers alive both before and after `position` (first <
/// position <= last): on a training step whose backward pass starts at
/// `position`, the forward values saved for the backward pass.
int64_t bytesLiveAcross(llvm::ArrayRef<PlannedBuffer> buffers,
                        int64_t position, int64_t alignment);

/// The `loss` out-parameter of a step that writes gradients (whose backward
/// pass follows the loss), or null for any other step: what the plans use
/// to tell the activations saved for the backward pass.
mlir::Value lossOfGradientStep(mlir::ModuleOp module, mlir::func::FuncOp step);

} // namespace traincc::codegen

#endif // TRAINCC_CODEGEN_COMMON_MEMORYPLAN_H
