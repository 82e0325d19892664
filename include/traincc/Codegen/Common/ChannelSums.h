//===- ChannelSums.h - BatchNorm statistics in a conv epilogue -*- C++ -*-===//
//
// A training BatchNorm after a convolution starts with the per-channel sum
// of the convolution's output (its mean), which reads the whole output back
// right after the convolution stored it. The CPU's
// traincc-fuse-conv-channel-sums and the GPU's
// traincc-fuse-gpu-conv-channel-sums both let the convolution add its
// outputs into partial sums while they are in registers, and the CPU's
// also the variance's squares (as partial moments); this is the part they
// share: which sums to take, and the small second stages that replace
// them.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_CODEGEN_COMMON_CHANNELSUMS_H
#define TRAINCC_CODEGEN_COMMON_CHANNELSUMS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace traincc::codegen {

/// Whether `op` is `init[c] += x[..., c, ...]` over every index of `x` but
/// its second (f32, `x` read once per loop through a permutation, nothing
/// else in the body): a BatchNorm mean's sum, or the second stage of one.
bool isChannelSum(mlir::linalg::GenericOp op);

/// Whether the body of `op` yields `out + t` for its output `index` (f32),
/// where no term reads that output's argument: a sum into the output.
bool addsIntoOutput(mlir::linalg::GenericOp op, unsigned index);

/// The per-channel sum of `producer`'s output that can move into its
/// epilogue: the first later op of its block that is `init[c] += x[n, c,
/// ...]` over every index but the second (f32, nothing else in the body),
/// where `x` is the output or a view of it through collapse_shapes that
/// keep its first two dimensions apart, with no op in between that may
/// write the output. Null if there is none.
mlir::linalg::GenericOp findChannelSum(mlir::linalg::LinalgOp producer);

/// The variance's sum that can move into `producer`'s epilogue with `sum`
/// (findChannelSum's): the first op after `sum` that is `init[c] += (x[n,
/// c, ...] - mean[c])^2` (f32, `x` as for findChannelSum), where `mean` is
/// written by the one-input op that first reads `sum`'s result (the
/// division by the count), with no op in between that may write the
/// output, that result or the mean. A synchronized BatchNorm's mean goes
/// to the runtime through a pointer in between, so it is never found.
/// Null if there is none. Call it before replaceChannelSum.
mlir::linalg::GenericOp findChannelVariance(mlir::linalg::LinalgOp producer,
                                            mlir::linalg::GenericOp sum);

/// Replaces `sum` (a findChannelSum result) by its second stage,
/// `init[c] += partials[p, c]` with p a reduction loop, in order; returns
/// that op.
mlir::linalg::GenericOp replaceChannelSum(mlir::linalg::GenericOp sum,
                                          mlir::Value partials);

/// For a convolution whose epilogue cannot compute its moments: loop nests
/// after it that add 1 per output of `output` into `counts` and the square
/// of each output's distance from its partial's mean (`sums` / `counts`)
/// into `m2`, in order. `outputMap` and `partialsMap` index the output and
/// the partials from `iterators`' loops. With `zero`, each of `counts` and
/// `m2` is filled with it first; without, they start at zero already.
void addChannelMomentsNests(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value output, mlir::Value sums,
                            mlir::Value counts, mlir::Value m2,
                            mlir::AffineMap outputMap,
                            mlir::AffineMap partialsMap,
                            llvm::ArrayRef<mlir::utils::IteratorType> iterators,
                            mlir::Value zero = {});

/// Replaces `variance` (a findChannelVariance result) by its second stage
/// from per-[p, c] partials (sum, count, sum of squares around the
/// partial's own mean): `init[c] += m2[p, c] + counts[p, c] * (sums[p, c] /
/// counts[p, c] - mean[c])^2` with p a reduction loop, in order; returns
/// that op.
mlir::linalg::GenericOp replaceChannelVariance(mlir::linalg::GenericOp variance,
                                               mlir::Value sums,
                                               mlir::Value counts,
                                               mlir::Value m2);

/// `op` (one output) rebuilt before it with `sums` as further outputs,
/// indexed by `sumsMaps`, that its body passes through; its discardable
/// attributes stay and `mark` says what the back end computes into `sums`.
/// Erases `op`.
mlir::linalg::GenericOp
addChannelSumsOutput(mlir::linalg::GenericOp op, mlir::ValueRange sums,
                     llvm::ArrayRef<mlir::AffineMap> sumsMaps,
                     llvm::StringRef mark);

/// The reverse of addChannelSumsOutput: `op` with its first output alone
/// and without `marks`. Erases `op`.
mlir::linalg::GenericOp
dropChannelSumsOutput(mlir::linalg::GenericOp op,
                      llvm::ArrayRef<llvm::StringRef> marks);

} // namespace traincc::codegen

#endif // TRAINCC_CODEGEN_COMMON_CHANNELSUMS_H
