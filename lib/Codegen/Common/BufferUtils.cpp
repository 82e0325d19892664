//===- BufferUtils.cpp - sizes and roots of buffers -----------------------===//

#include "traincc/Codegen/Common/BufferUtils.h"

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

} // namespace traincc::codegen
