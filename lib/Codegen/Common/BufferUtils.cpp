//===- BufferUtils.cpp - sizes and roots of buffers -----------------------===//

#include "traincc/Codegen/Common/BufferUtils.h"

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
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

} // namespace traincc::codegen
