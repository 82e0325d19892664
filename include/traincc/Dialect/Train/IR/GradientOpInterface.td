//===- GradientOpInterface.td - reverse-mode rules ---------*- tablegen -*-===//
//
// Every differentiable Train op carries its own gradient rule, so that a new
// op brings its rule with it instead of adding a case to the autodiff pass.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_DIALECT_TRAIN_IR_GRADIENTOPINTERFACE_TD
#define TRAINCC_DIALECT_TRAIN_IR_GRADIENTOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::traincc::train";
  let description = [{
    The reverse-mode gradient rule of an op. The autodiff pass visits the
    ops of the loss function in reverse order and calls `emitGradient` on
    each op at least one of whose results has an adjoint. The rule reads
    those adjoints from the emitter (`getGradient`) and adds the adjoint of
    every active operand (`addGradient`, which ignores inactive ones: data,
    frozen parameters, constants), building the gradient ops at the
    emitter's insertion point. A rule that cannot differentiate this
    particular op (e.g. a loss with a `sum` reduction) emits an error and
    fails.

    Example: `train.relu %x` adds `train.relu_backward %dy, %x` to the
    adjoint of `%x`.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/"Adds the adjoints of the op's operands from the adjoints of "
               "its results.",
      /*retTy=*/"::mlir::LogicalResult",
      /*methodName=*/"emitGradient",
      /*args=*/(ins "::traincc::train::GradientEmitter &":$emitter)>
  ];
}

// The trait of an op with a gradient rule.
defvar Train_Differentiable = DeclareOpInterfaceMethods<GradientOpInterface>;

#endif // TRAINCC_DIALECT_TRAIN_IR_GRADIENTOPINTERFACE_TD
