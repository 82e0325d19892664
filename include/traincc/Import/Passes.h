//===- Passes.h - ONNX import passes ----------------------------*- C++ -*-===//

#ifndef TRAINCC_IMPORT_PASSES_H
#define TRAINCC_IMPORT_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "traincc/Dialect/Train/IR/TrainDialect.h"

namespace traincc {

#define GEN_PASS_DECL
#include "traincc/Import/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "traincc/Import/Passes.h.inc"

} // namespace traincc

#endif // TRAINCC_IMPORT_PASSES_H
