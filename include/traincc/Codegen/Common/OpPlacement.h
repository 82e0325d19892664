//===- OpPlacement.h - moving ops on tensors to an earlier point -*- C++ -*-===//
//
// The fusions that merge two linalg ops on tensors into one place the merged
// op at the earlier of the two; what the later one reads must be there by
// then, or move up to it. This is the check and the move they share
// (traincc-fuse-elementwise's sibling merges,
// traincc-fuse-sums-into-producers).
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_CODEGEN_COMMON_OPPLACEMENT_H
#define TRAINCC_CODEGEN_COMMON_OPPLACEMENT_H

#include "mlir/IR/Dominance.h"

namespace traincc::codegen {

/// Whether `value` is available before `point`, or comes from a
/// tensor.empty, a constant or a fill of those in `point`'s block, which
/// may move up to it (hoistBefore).
bool isHoistableBefore(mlir::Value value, mlir::Operation *point,
                       mlir::DominanceInfo &dominance);

/// Moves the ops `value` needs (isHoistableBefore's) up to just before
/// `point`.
void hoistBefore(mlir::Value value, mlir::Operation *point,
                 mlir::DominanceInfo &dominance);

} // namespace traincc::codegen

#endif // TRAINCC_CODEGEN_COMMON_OPPLACEMENT_H
