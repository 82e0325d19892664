//===- MultiplyAdd.h - the bodies of convolutions and matmuls ---*- C++ -*-===//
//
// Shared by the CPU passes that rewrite contractions
// (PackConvolutionWindows, VectorizeContractions).
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_LIB_CODEGEN_CPU_MULTIPLYADD_H
#define TRAINCC_LIB_CODEGEN_CPU_MULTIPLYADD_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace traincc::cpu {

inline bool isLowPrecision(mlir::Type type) {
  return type.isF16() || type.isBF16();
}

/// Whether `value`, in the body of a contraction (arguments in0, in1, out),
/// is `out + in0 * in1` (operands in any order) with f32 inputs, or `out +
/// extf(in0) * extf(in1)` with bf16/f16 inputs of one type; out is f32 and
/// the body holds only those ops and its yield.
inline bool isMultiplyAddOf(mlir::Block &body, mlir::Value value) {
  mlir::Type a = body.getArgument(0).getType();
  if (a != body.getArgument(1).getType() ||
      !body.getArgument(2).getType().isF32())
    return false;
  bool widening = isLowPrecision(a);
  if ((!widening && !a.isF32()) ||
      body.getOperations().size() != (widening ? 5 : 3))
    return false;
  auto add = value.getDefiningOp<mlir::arith::AddFOp>();
  mlir::Value out = body.getArgument(2);
  if (!add || (add.getLhs() != out && add.getRhs() != out))
    return false;
  auto mul = (add.getLhs() == out ? add.getRhs() : add.getLhs())
                 .getDefiningOp<mlir::arith::MulFOp>();
  if (!mul)
    return false;
  mlir::Value x = mul.getLhs(), y = mul.getRhs();
  if (widening) {
    auto lhs = x.getDefiningOp<mlir::arith::ExtFOp>();
    auto rhs = y.getDefiningOp<mlir::arith::ExtFOp>();
    if (!lhs || !rhs)
      return false;
    x = lhs.getIn();
    y = rhs.getIn();
  }
  return (x == body.getArgument(0) && y == body.getArgument(1)) ||
         (x == body.getArgument(1) && y == body.getArgument(0));
}

/// The body `yield(out + in0 * in1)` (see isMultiplyAddOf) on buffers.
inline bool isMultiplyAdd(mlir::linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !op.hasPureBufferSemantics())
    return false;
  mlir::Block &body = op.getRegion().front();
  auto yield = mlir::cast<mlir::linalg::YieldOp>(body.getTerminator());
  return isMultiplyAddOf(body, yield.getOperand(0));
}

} // namespace traincc::cpu

#endif // TRAINCC_LIB_CODEGEN_CPU_MULTIPLYADD_H
