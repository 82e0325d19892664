//===- ChannelSums.h - convolutions that also sum their outputs -*- C++ -*-===//
//
// Shared by traincc-fuse-conv-channel-sums, which makes such ops, and
// traincc-vectorize-contractions, which computes their sums.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_LIB_CODEGEN_CPU_CHANNELSUMS_H
#define TRAINCC_LIB_CODEGEN_CPU_CHANNELSUMS_H

#include "MultiplyAdd.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace traincc::cpu {

/// On a multiply-add with a second output `sums` (f32, indexed by the
/// first output's first two indices: [batch, channel]) whose body yields
/// it unchanged: after the op, `sums[n, c]` has had added to it the sum of
/// the first output's final values at [n, c, ...]. The body cannot say
/// this (the sums need the finished outputs), so the attribute carries it,
/// and traincc-vectorize-contractions honours it for every op it marks.
constexpr llvm::StringLiteral kChannelSumsAttrName = "traincc.channel_sums";

/// On an op marked kChannelSumsAttrName, two more outputs `counts` and
/// `m2` indexed like `sums` (all three zero before the op): after it,
/// `counts[n, c]` holds how many outputs [n, c, ...] there are and
/// `m2[n, c]` the sum of their squared distances from their mean
/// `sums[n, c] / counts[n, c]`, merged from partial moments in a fixed
/// order (traincc-fuse-conv-channel-sums says why).
constexpr llvm::StringLiteral kChannelMomentsAttrName =
    "traincc.channel_moments";

/// Whether `op` is a marked multiply-add: the body `yield(out + a * b,
/// sums)` (isMultiplyAdd's, plus the second output passed through), or
/// with kChannelMomentsAttrName `yield(out + a * b, sums, counts, m2)`.
inline bool isMultiplyAddWithChannelSums(mlir::linalg::GenericOp op) {
  unsigned extra = op->hasAttr(kChannelMomentsAttrName) ? 3 : 1;
  if (!op->hasAttr(kChannelSumsAttrName) || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 + extra || !op.hasPureBufferSemantics())
    return false;
  mlir::Block &body = op.getRegion().front();
  auto yield = mlir::cast<mlir::linalg::YieldOp>(body.getTerminator());
  if (yield.getNumOperands() != 1 + extra)
    return false;
  for (unsigned i = 1; i <= extra; ++i)
    if (yield.getOperand(i) != body.getArgument(2 + i) ||
        !body.getArgument(2 + i).getType().isF32())
      return false;
  return isMultiplyAddOf(body, yield.getOperand(0));
}

} // namespace traincc::cpu

#endif // TRAINCC_LIB_CODEGEN_CPU_CHANNELSUMS_H
