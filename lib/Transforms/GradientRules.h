//===- GradientRules.h - per-op reverse-mode rules --------------*- C++ -*-===//
//
// Internal to the autodiff pass: the gradient rule of each Train op, and the
// small state a rule needs (the adjoints accumulated so far and which values
// depend on a trainable parameter).
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_LIB_TRANSFORMS_GRADIENTRULES_H
#define TRAINCC_LIB_TRANSFORMS_GRADIENTRULES_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace traincc {

/// Adjoints of the values of one function, built in reverse order.
class GradientEmitter {
public:
  GradientEmitter(mlir::OpBuilder &builder,
                  const llvm::DenseSet<mlir::Value> &active)
      : builder(builder), active(active) {}

  mlir::OpBuilder &getBuilder() { return builder; }
  /// True when `value` depends on a trainable parameter, i.e. needs a
  /// gradient.
  bool isActive(mlir::Value value) const { return active.contains(value); }
  /// The gradient of the loss by `value` accumulated so far, or null.
  mlir::Value getGradient(mlir::Value value) const {
    return gradients.lookup(value);
  }
  /// Adds `gradient` to `value`'s adjoint if `value` is active.
  void addGradient(mlir::Value value, mlir::Value gradient);

  /// A 0-d constant of `elementType` holding `number`, which broadcasts
  /// against any tensor in the elementwise ops.
  mlir::Value scalar(mlir::Location loc, mlir::Type elementType,
                     double number);
  /// Sums `gradient` over the axes that broadcasting added to reach it from
  /// `type` (the adjoint of numpy broadcasting).
  mlir::Value sumTo(mlir::Location loc, mlir::Value gradient,
                    mlir::Type type);

private:
  mlir::OpBuilder &builder;
  const llvm::DenseSet<mlir::Value> &active;
  llvm::DenseMap<mlir::Value, mlir::Value> gradients;
};

/// Emits the gradient of `op`'s operands from the adjoints of its results.
/// Fails (with a diagnostic on `op`) when `op` has no rule.
mlir::LogicalResult emitGradientRule(mlir::Operation *op,
                                     GradientEmitter &emitter);

} // namespace traincc

#endif // TRAINCC_LIB_TRANSFORMS_GRADIENTRULES_H
