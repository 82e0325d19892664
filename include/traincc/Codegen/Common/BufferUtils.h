//===- BufferUtils.h - sizes and roots of buffers ---------------*- C++ -*-===//
//
// Code generation plans memory in bytes (the GPU workspace, partial sums)
// and asks which allocation or argument a view reads (kernel arguments on
// the GPU, loops split across threads on the CPU); these are the answers
// the passes share, so that every pass sizes and traces buffers alike.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_CODEGEN_COMMON_BUFFERUTILS_H
#define TRAINCC_CODEGEN_COMMON_BUFFERUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

#include <optional>
#include <utility>

namespace traincc::codegen {

/// Bytes one element of an integer or float type takes (sub-byte types
/// round up to a byte).
int64_t elementBytes(mlir::Type elementType);

/// Bytes a statically shaped memref or tensor of integers or floats holds.
int64_t staticByteSize(mlir::ShapedType type);

/// The buffer behind a chain of views (subviews, reshapes, casts): the
/// allocation or function argument they start from; `value` itself when it
/// is not a memref.
mlir::Value rootBuffer(mlir::Value value);

/// The bytes [begin, end) of its root buffer that `value` may touch, when
/// it is a `memref.view` at a constant offset (a temporary of the planned
/// workspace) or a subview, reshape or cast of one; nullopt otherwise.
std::optional<std::pair<int64_t, int64_t>> staticByteRange(mlir::Value value);

/// Whether `op` at most reads the buffer `root` (through any view of it).
/// Ops with regions other than linalg ops count as writes; calls without
/// memref operands (the kernel timers of --profile-kernels) touch nothing.
bool onlyReadsBuffer(mlir::Operation *op, mlir::Value root);

/// Whether `op` may read or write the buffer `root`: views of it do
/// neither, ops with regions other than linalg ops may do both.
bool accessesBuffer(mlir::Operation *op, mlir::Value root);

} // namespace traincc::codegen

#endif // TRAINCC_CODEGEN_COMMON_BUFFERUTILS_H
