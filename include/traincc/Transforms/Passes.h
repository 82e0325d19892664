//===- Passes.h - training-step construction passes -------------*- C++ -*-===//

#ifndef TRAINCC_TRANSFORMS_PASSES_H
#define TRAINCC_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "traincc/Dialect/Train/IR/TrainDialect.h"
#include "traincc/Transforms/TrainingOptions.h"

namespace traincc {

#define GEN_PASS_DECL
#include "traincc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "traincc/Transforms/Passes.h.inc"

} // namespace traincc

#endif // TRAINCC_TRANSFORMS_PASSES_H
