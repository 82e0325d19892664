//===- OpPlacement.cpp - moving ops on tensors to an earlier point --------===//

#include "traincc/Codegen/Common/OpPlacement.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace traincc::codegen {

bool isHoistableBefore(Value value, Operation *point,
                       DominanceInfo &dominance) {
  if (dominance.properlyDominates(value, point))
    return true;
  Operation *def = value.getDefiningOp();
  return def && def->getBlock() == point->getBlock() &&
         isa<tensor::EmptyOp, arith::ConstantOp, linalg::FillOp>(def) &&
         llvm::all_of(def->getOperands(), [&](Value operand) {
           return isHoistableBefore(operand, point, dominance);
         });
}

void hoistBefore(Value value, Operation *point, DominanceInfo &dominance) {
  if (dominance.properlyDominates(value, point))
    return;
  Operation *def = value.getDefiningOp();
  for (Value operand : def->getOperands())
    hoistBefore(operand, point, dominance);
  def->moveBefore(point);
}

} // namespace traincc::codegen
