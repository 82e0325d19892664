//===- GemmView.h - a linalg op's loops as an implicit GEMM ----*- C++ -*-===//
//
// A contraction's loops read as an implicit GEMM: M loops index the first
// input and not the second, N loops the second and not the first, batch
// loops both, K loops are the reductions. traincc-split-gpu-reductions sizes
// its partial sums by this view (outputs M*N*batch, terms K) and
// traincc-tile-gpu-contractions builds its kernels on it, so both passes
// agree on what a contraction is and how large it is.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_LIB_CODEGEN_GPU_GEMMVIEW_H
#define TRAINCC_LIB_CODEGEN_GPU_GEMMVIEW_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace traincc::gpu_kernels {

/// A linalg op's loops, grouped as an implicit GEMM. Each group lists loop
/// dimensions in loop order, so a group's flattened position runs through
/// them as the loop nest does (last fastest).
struct GemmView {
  llvm::SmallVector<unsigned> m, n, batch, k;
  llvm::SmallVector<int64_t> ranges;

  int64_t size(llvm::ArrayRef<unsigned> group) const;
  llvm::SmallVector<int64_t> sizes(llvm::ArrayRef<unsigned> group) const;
  /// Parallel iterations: the outputs of a sum.
  int64_t outputs() const { return size(m) * size(n) * size(batch); }
  /// Reduction iterations: the terms of each output.
  int64_t terms() const { return size(k); }
};

/// The loops of `op` (static loop ranges) grouped: reductions into K,
/// parallel loops into M, N or batch by which of the first two inputs they
/// index (an absent input indexes none).
GemmView groupLoops(mlir::linalg::LinalgOp op);

/// The GEMM view of `op` if it is a contraction of static shape on buffers
/// that a tiled kernel can compute: two inputs, one output that every
/// parallel loop indexes once, no index semantics.
std::optional<GemmView> analyzeContraction(mlir::linalg::LinalgOp op);

/// Whether `op` reuses input elements across outputs: some input read along
/// a reduction loop does not vary along some parallel loop (a matmul's A
/// along N, a convolution's input along output channels). A plain sum reads
/// each element for one output only.
bool reusesInputs(mlir::linalg::LinalgOp op);

} // namespace traincc::gpu_kernels

#endif // TRAINCC_LIB_CODEGEN_GPU_GEMMVIEW_H
