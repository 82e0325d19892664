//===- AffineStride.h - how an index moves with one loop --------*- C++ -*-===//
//
// Shared by the CPU passes that look at how loop nests walk memory
// (OrderLoopsForVectorization, VectorizeContractions, PackConvolutionWindows,
// VectorizeInterleavedWindows).
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_LIB_CODEGEN_CPU_AFFINESTRIDE_H
#define TRAINCC_LIB_CODEGEN_CPU_AFFINESTRIDE_H

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"

#include <optional>

namespace traincc::cpu {

/// How much `expr` moves when loop `dim` steps by one, if by a fixed amount
/// (`d3` and `d3 - d6 + 2`: 1; `2 * d3`: 2; `d3 floordiv 2`: none).
inline std::optional<int64_t> strideOf(mlir::AffineExpr expr, unsigned dim) {
  using namespace mlir;
  if (auto d = dyn_cast<AffineDimExpr>(expr))
    return d.getPosition() == dim ? 1 : 0;
  if (isa<AffineConstantExpr, AffineSymbolExpr>(expr))
    return 0;
  auto binary = cast<AffineBinaryOpExpr>(expr);
  std::optional<int64_t> lhs = strideOf(binary.getLHS(), dim);
  std::optional<int64_t> rhs = strideOf(binary.getRHS(), dim);
  if (!lhs || !rhs)
    return std::nullopt;
  switch (binary.getKind()) {
  case AffineExprKind::Add:
    return *lhs + *rhs;
  case AffineExprKind::Mul:
    // One side is a constant in a pure affine map.
    if (auto c = dyn_cast<AffineConstantExpr>(binary.getRHS()))
      return *lhs * c.getValue();
    if (auto c = dyn_cast<AffineConstantExpr>(binary.getLHS()))
      return *rhs * c.getValue();
    return std::nullopt;
  default:
    // floordiv/mod/ceildiv: not a fixed stride.
    return (*lhs == 0 && *rhs == 0) ? std::optional<int64_t>(0) : std::nullopt;
  }
}

/// How an operand's indexing map moves with loop `dim` when it is the
/// innermost loop: not at all, by one element along its last (unit-stride)
/// dimension, or otherwise.
enum class Access { Invariant, Contiguous, Strided };

inline Access accessOf(mlir::AffineMap map, unsigned dim) {
  unsigned last = map.getNumResults();
  for (unsigned i = 0; i < last; ++i) {
    std::optional<int64_t> stride = strideOf(map.getResult(i), dim);
    if (stride && *stride == 0)
      continue;
    if (i + 1 != last || !stride || *stride != 1)
      return Access::Strided;
    return Access::Contiguous;
  }
  return Access::Invariant;
}

} // namespace traincc::cpu

#endif // TRAINCC_LIB_CODEGEN_CPU_AFFINESTRIDE_H
