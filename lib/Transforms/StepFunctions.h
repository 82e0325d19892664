//===- StepFunctions.h - helpers shared by the step passes ------*- C++ -*-===//

#ifndef TRAINCC_LIB_TRANSFORMS_STEPFUNCTIONS_H
#define TRAINCC_LIB_TRANSFORMS_STEPFUNCTIONS_H

#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace traincc {

/// Returns `@apply_step(lr: f32, step: i64)`, creating it empty (just a
/// return) at the end of `module` if no earlier pass did. Fails, with an
/// error, when an existing @apply_step has no body or another type.
mlir::FailureOr<mlir::func::FuncOp>
getOrCreateApplyStep(mlir::ModuleOp module);

/// Declares a zero-initialised buffer `name` of `type` and `kind` right
/// after `anchor` (the parameter it belongs to).
mlir::FlatSymbolRefAttr declareBuffer(train::ParamOp anchor,
                                      llvm::StringRef name,
                                      mlir::RankedTensorType type,
                                      train::ParamKind kind);

} // namespace traincc

#endif // TRAINCC_LIB_TRANSFORMS_STEPFUNCTIONS_H
