//===- TrainAttrs.td - Train dialect attributes ------------*- tablegen -*-===//

#ifndef TRAINCC_DIALECT_TRAIN_IR_TRAINATTRS_TD
#define TRAINCC_DIALECT_TRAIN_IR_TRAINATTRS_TD

include "traincc/Dialect/Train/IR/TrainDialect.td"
include "mlir/IR/EnumAttr.td"

// What a `train.param` holds; decides whether it gets a gradient and an
// optimizer update, and how it is checkpointed and exported.
def Train_ParamKind : I32EnumAttr<"ParamKind", "kind of a module-level parameter", [
    I32EnumAttrCase<"Trainable", 0, "trainable">,
    I32EnumAttrCase<"Frozen", 1, "frozen">,
    I32EnumAttrCase<"RunningMean", 2, "running_mean">,
    I32EnumAttrCase<"RunningVar", 3, "running_var">,
    I32EnumAttrCase<"Gradient", 4, "gradient">,
    I32EnumAttrCase<"OptimizerState", 5, "optimizer_state">,
    I32EnumAttrCase<"LossScaler", 6, "loss_scaler">,
    I32EnumAttrCase<"BNAccumulator", 7, "bn_accumulator">,
    // Mixed precision: the low-precision copy of a master weight that the
    // forward and backward passes read, rewritten by each optimizer update.
    I32EnumAttrCase<"WeightCopy", 8, "weight_copy">,
    // Loss scaling: a tensor's value at the start of the optimizer step,
    // restored when the step is skipped.
    I32EnumAttrCase<"StepBackup", 9, "step_backup">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::traincc::train";
}

// How a loss is reduced over the micro-batch.
def Train_Reduction : I32EnumAttr<"Reduction", "loss reduction", [
    I32EnumAttrCase<"Mean", 0, "mean">,
    I32EnumAttrCase<"None", 1, "none">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::traincc::train";
}

// The comparison of `train.compare`; ordered, so a NaN operand compares
// false, as in ONNX.
def Train_ComparePredicate : I32EnumAttr<"ComparePredicate",
    "elementwise comparison", [
    I32EnumAttrCase<"Eq", 0, "eq">,
    I32EnumAttrCase<"Lt", 1, "lt">,
    I32EnumAttrCase<"Le", 2, "le">,
    I32EnumAttrCase<"Gt", 3, "gt">,
    I32EnumAttrCase<"Ge", 4, "ge">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::traincc::train";
}

def Train_ComparePredicateAttr
    : EnumAttr<Train_Dialect, Train_ComparePredicate, "compare_predicate"> {
  // Printed as the bare word: `train.compare gt %x, %y`.
  let assemblyFormat = "$value";
}

def Train_ReductionAttr : EnumAttr<Train_Dialect, Train_Reduction, "reduction">;

def Train_ParamKindAttr : EnumAttr<Train_Dialect, Train_ParamKind, "param_kind">;

#endif // TRAINCC_DIALECT_TRAIN_IR_TRAINATTRS_TD
