//===- InitAll.h - dialects and passes traincc uses -------------*- C++ -*-===//

#ifndef TRAINCC_INITALL_H
#define TRAINCC_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace traincc {

/// The dialects that appear in traincc's IR at any stage.
void registerAllDialects(mlir::DialectRegistry &registry);

/// traincc's passes and named pipelines, plus the upstream passes its
/// pipelines use.
void registerAllPasses();

} // namespace traincc

#endif // TRAINCC_INITALL_H
