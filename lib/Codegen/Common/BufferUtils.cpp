//===- BufferUtils.cpp - sizes and roots of buffers -----------------------===//

#include "traincc/Codegen/Common/BufferUtils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace traincc::codegen {

int64_t elementBytes(Type elementType) {
  return llvm::divideCeil(elementType.getIntOrFloatBitWidth(), 8);
}

int64_t staticByteSize(ShapedType type) {
  return type.getNumElements() * elementBytes(type.getElementType());
}

Value rootBuffer(Value value) {
  if (auto memref = dyn_cast<TypedValue<MemRefType>>(value))
    return memref::skipViewLikeOps(memref);
  return value;
}

std::optional<std::pair<int64_t, int64_t>> staticByteRange(Value value) {
  // Subviews, reshapes and casts stay inside their source; the view at the
  // bottom of the chain says where that is.
  while (Operation *def = value.getDefiningOp()) {
    if (auto view = dyn_cast<memref::ViewOp>(def)) {
      std::optional<int64_t> shift =
          getConstantIntValue(view.getByteShift());
      MemRefType type = view.getType();
      if (!shift || !type.hasStaticShape())
        return std::nullopt;
      return std::make_pair(*shift, *shift + staticByteSize(type));
    }
    if (!isa<memref::SubViewOp, memref::CollapseShapeOp,
             memref::ExpandShapeOp, memref::CastOp>(def))
      return std::nullopt;
    value = def->getOperand(0);
  }
  return std::nullopt;
}

bool onlyReadsBuffer(Operation *op, Value root) {
  if (op->getNumRegions() && !isa<linalg::LinalgOp>(op))
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()) ||
        rootBuffer(operand.get()) != root)
      continue;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      if (linalgOp.isDpsInput(&operand))
        continue;
    if (isa<memref::LoadOp, memref::SubViewOp, memref::CollapseShapeOp,
            memref::ExpandShapeOp, memref::CastOp>(op))
      continue;
    if (auto copy = dyn_cast<memref::CopyOp>(op))
      if (operand.get() == copy.getSource())
        continue;
    return false;
  }
  return true;
}

bool accessesBuffer(Operation *op, Value root) {
  if (op->getNumRegions() && !isa<linalg::LinalgOp>(op))
    return true;
  if (isa<memref::SubViewOp, memref::CollapseShapeOp, memref::ExpandShapeOp,
          memref::CastOp>(op))
    return false;
  return llvm::any_of(op->getOperands(), [&](Value operand) {
    return isa<MemRefType>(operand.getType()) && rootBuffer(operand) == root;
  });
}

} // namespace traincc::codegen
