//===- GradientOpInterface.h - reverse-mode rules ---------------*- C++ -*-===//
//
// The interface each differentiable Train op implements (its rule lives
// beside the op, in lib/Dialect/Train/IR/TrainGradientRules.cpp), and the
// state a rule works on: the adjoints accumulated so far and which values
// depend on a trainable parameter.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_DIALECT_TRAIN_IR_GRADIENTOPINTERFACE_H
#define TRAINCC_DIALECT_TRAIN_IR_GRADIENTOPINTERFACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace traincc::train {

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

} // namespace traincc::train

#include "traincc/Dialect/Train/IR/GradientOpInterface.h.inc"

#endif // TRAINCC_DIALECT_TRAIN_IR_GRADIENTOPINTERFACE_H
