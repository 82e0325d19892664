//===- GemmView.h - a linalg op's loops as an implicit GEMM ----*- C++ -*-===//
//
// A contraction's loops read as an implicit GEMM: M loops index the first
// input and not the second, N loops the second and not the first, batch
// loops both, K loops are the reductions. traincc-split-gpu-reductions sizes
// its partial sums by this view (outputs M*N*batch, terms K),
// traincc-tile-gpu-contractions builds its kernels on it and
// traincc-fuse-gpu-conv-channel-sums sizes a convolution's channel
// partials by the tiles it will get, so the passes agree on what a
// contraction is, how large it is and how it is tiled.
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

/// The ops of the GPU steps (the module's public functions with bodies)
/// that may be contractions: two inputs and a reduction loop, in program
/// order. Collected before any is rewritten (not fills: building a kernel
/// may erase the fill before it).
llvm::SmallVector<mlir::linalg::LinalgOp>
stepContractionCandidates(mlir::ModuleOp module);

/// Whether `op` reuses input elements across outputs: some input read along
/// a reduction loop does not vary along some parallel loop (a matmul's A
/// along N, a convolution's input along output channels). A plain sum reads
/// each element for one output only.
bool reusesInputs(mlir::linalg::LinalgOp op);

/// Whether traincc-split-gpu-reductions splits the contraction `op` along
/// K (split-K: too few tiles for the GPU, a long K), a batch of partial
/// GEMMs and a final sum. May say yes where the split then fails. No for a
/// split into just enough parts to fill the GPU (partials per sample too
/// large): a convolution that sums its outputs for BatchNorm in its
/// epilogue keeps that instead, and is then not split.
bool splitsAlongK(mlir::linalg::LinalgOp op);

/// The most outputs along M or N one block of a tiled kernel computes
/// (traincc-tile-gpu-contractions, scalar and tensor-core kernels alike).
constexpr int64_t kMaxGemmTile = 64;

/// Whether traincc-tile-gpu-contractions gives the contraction of `view` a
/// tiled kernel (`minWork` its option): M and N of at least 8, K of at
/// least 4 and at least `minWork` multiply-adds. A thin side (a
/// matrix-vector product, a depthwise convolution) would leave most threads
/// of a tile idle, and a short K reuses little.
bool worthTiling(const GemmView &view, int64_t minWork);

/// Marks a contraction with a second output `partials` (f32, [P, C]) whose
/// body yields it unchanged and whose indexing map is channelPartialsMap:
/// after the op, partials[p, c] is the sum of the final outputs of channel
/// c (the one N loop) whose flattened M position lies in tile p, in an
/// order that is fixed but not the loop order. The body cannot say this
/// (the sums need the finished outputs), so the attribute carries it:
/// traincc-fuse-gpu-conv-channel-sums makes such ops and
/// traincc-tile-gpu-contractions computes them, in the tiled kernel's
/// epilogue or, where it does not tile the op, as a sum after it.
constexpr llvm::StringLiteral kChannelPartialsAttrName =
    "traincc.channel_partials";

/// On an op marked kChannelPartialsAttrName, two more outputs `counts` and
/// `m2` indexed like the partials: after the op, `counts[p, c]` holds how
/// many outputs the partial [p, c] sums and `m2[p, c]` the sum of their
/// squared distances from their mean `partials[p, c] / counts[p, c]`
/// (BatchNorm's variance; traincc-fuse-gpu-conv-channel-sums).
constexpr llvm::StringLiteral kChannelMomentsAttrName =
    "traincc.channel_moments";

/// On a contraction that traincc-tile-gpu-contractions will tile: the next
/// op of its block that has memory effects is its epilogue, a
/// linalg.generic over the contraction's parallel loops (in their order)
/// whose first input is the contraction's output, read at the output's
/// indices, and which is the output's last reader. Its outputs are channel
/// partials, f32 [P, C] buffers indexed by the restriction of
/// channelPartialsMap to its loops, into which its body adds a term
/// (`out + t`, `t` reading no output), or give each of its iterations an
/// element of its own (a permutation of its loops, or of a reshape of
/// them). The tiled kernel may then apply the epilogue to each finished
/// accumulator and sum the partials in its blocks, leaving the
/// contraction's output unwritten; traincc-fuse-gpu-conv-epilogues makes
/// such pairs.
constexpr llvm::StringLiteral kEpilogueAttrName = "traincc.epilogue";

/// `map` (over the loops of `op`) over `op`'s parallel loops alone, in
/// their order: reduction loops, which `map` must not read for the
/// result to mean the same, become 0. An epilogue's loops
/// (kEpilogueAttrName) are these.
mlir::AffineMap overParallelLoops(mlir::linalg::LinalgOp op,
                                  mlir::AffineMap map);

/// The map from the loops of `view`'s contraction to [M tile, channel]:
/// (flattened M position) floordiv kMaxGemmTile, or 0 when M fits one tile
/// (what a block of the tiled kernel covers along M, either way), and the
/// loop `channel`.
mlir::AffineMap channelPartialsMap(const GemmView &view, unsigned channel,
                                   mlir::MLIRContext *context);

} // namespace traincc::gpu_kernels

#endif // TRAINCC_LIB_CODEGEN_GPU_GEMMVIEW_H
