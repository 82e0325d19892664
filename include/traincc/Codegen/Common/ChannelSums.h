//===- ChannelSums.h - a BatchNorm mean's sum in a conv's epilogue -*- C++ -*-//
//
// A training BatchNorm after a convolution starts with the per-channel sum
// of the convolution's output (its mean), which reads the whole output back
// right after the convolution stored it. The CPU's
// traincc-fuse-conv-channel-sums and the GPU's
// traincc-fuse-gpu-conv-channel-sums both let the convolution add its
// outputs into partial sums while they are in registers; this is the part
// they share: which sum to take, and the small second stage that replaces
// it.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_CODEGEN_COMMON_CHANNELSUMS_H
#define TRAINCC_CODEGEN_COMMON_CHANNELSUMS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace traincc::codegen {

/// The per-channel sum of `producer`'s output that can move into its
/// epilogue: the first later op of its block that is `init[c] += x[n, c,
/// ...]` over every index but the second (f32, nothing else in the body),
/// where `x` is the output or a view of it through collapse_shapes that
/// keep its first two dimensions apart, with no op in between that may
/// write the output. Null if there is none.
mlir::linalg::GenericOp findChannelSum(mlir::linalg::LinalgOp producer);

/// Replaces `sum` (a findChannelSum result) by its second stage,
/// `init[c] += partials[p, c]` with p a reduction loop, in order; returns
/// that op.
mlir::linalg::GenericOp replaceChannelSum(mlir::linalg::GenericOp sum,
                                          mlir::Value partials);

/// `op` (one output) rebuilt before it with `sums` as a second output,
/// indexed by `sumsMap`, that its body passes through; its discardable
/// attributes stay and `mark` says what the back end computes into `sums`.
/// Erases `op`.
mlir::linalg::GenericOp addChannelSumsOutput(mlir::linalg::GenericOp op,
                                             mlir::Value sums,
                                             mlir::AffineMap sumsMap,
                                             llvm::StringRef mark);

/// The reverse of addChannelSumsOutput: `op` without its second output and
/// without `mark`. Erases `op`.
mlir::linalg::GenericOp dropChannelSumsOutput(mlir::linalg::GenericOp op,
                                              llvm::StringRef mark);

} // namespace traincc::codegen

#endif // TRAINCC_CODEGEN_COMMON_CHANNELSUMS_H
