//===- TrainDialect.h - the Train dialect -----------------------*- C++ -*-===//

#ifndef TRAINCC_DIALECT_TRAIN_IR_TRAINDIALECT_H
#define TRAINCC_DIALECT_TRAIN_IR_TRAINDIALECT_H

#include "mlir/IR/Dialect.h"

#include "traincc/Dialect/Train/IR/TrainOpsDialect.h.inc"

#endif // TRAINCC_DIALECT_TRAIN_IR_TRAINDIALECT_H
