//===- GPUKernelBuilder.h - building blocks of tiled GPU kernels -*- C++ -*-===//
//
// The tiled kernels (TileGPUContractions, MapGPUReductions) build gpu.launch
// bodies straight from a linalg op on buffers: which element an iteration
// reads, the op's scalar body applied to values in registers, shared-memory
// buffers. These are the pieces they share.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_LIB_CODEGEN_GPUKERNELBUILDER_H
#define TRAINCC_LIB_CODEGEN_GPUKERNELBUILDER_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace traincc::gpu_kernels {

/// An `index` constant.
mlir::Value indexConstant(mlir::OpBuilder &b, mlir::Location loc,
                          int64_t value);

/// Splits `linear` into positions along `sizes`, the last one fastest (the
/// order loops nest in). Sizes must be positive.
llvm::SmallVector<mlir::Value> delinearize(mlir::OpBuilder &b,
                                           mlir::Location loc,
                                           mlir::Value linear,
                                           llvm::ArrayRef<int64_t> sizes);

/// The indices of `operand` that the iteration `ivs` (one value per loop of
/// `op`) touches: its indexing map applied to them.
llvm::SmallVector<mlir::Value> operandIndices(mlir::OpBuilder &b,
                                              mlir::Location loc,
                                              mlir::linalg::LinalgOp op,
                                              mlir::OpOperand &operand,
                                              mlir::ValueRange ivs);

/// Loads the element of `operand` that the iteration `ivs` reads.
mlir::Value loadOperand(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::linalg::LinalgOp op, mlir::OpOperand &operand,
                        mlir::ValueRange ivs);

/// Clones the scalar body of `op` at `b` with its block arguments bound to
/// `args` (inputs, then outputs) and returns the values it yields. Values
/// the body uses from above stay uses from above.
llvm::SmallVector<mlir::Value> inlineBody(mlir::OpBuilder &b,
                                          mlir::linalg::LinalgOp op,
                                          mlir::ValueRange args);

/// A `gpu.launch` of `grid` blocks of `threads` threads (x only) whose body
/// holds only its terminator; build before it.
mlir::gpu::LaunchOp createLaunch(mlir::OpBuilder &b, mlir::Location loc,
                                 std::array<int64_t, 3> grid,
                                 int64_t threads);

/// A shared-memory buffer of `launch` (a workgroup attribution).
mlir::Value addSharedBuffer(mlir::gpu::LaunchOp launch,
                            llvm::ArrayRef<int64_t> shape,
                            mlir::Type elementType);

/// When `op` writes every element of its one output buffer, and that
/// buffer was filled with a constant by a `linalg.fill` just before (only
/// memory-free ops such as views in between), erases the fill and returns
/// the constant: the kernel starts its sums from it instead of launching a
/// kernel to write it and reading it back.
std::optional<mlir::Value> takeInitFill(mlir::linalg::LinalgOp op);

/// Whether every size of `op`'s loops and operands is static, as a launch
/// plan needs.
bool hasStaticShapes(mlir::linalg::LinalgOp op);

} // namespace traincc::gpu_kernels

#endif // TRAINCC_LIB_CODEGEN_GPUKERNELBUILDER_H
