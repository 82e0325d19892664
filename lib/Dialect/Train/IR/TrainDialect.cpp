//===- TrainDialect.cpp - Train dialect registration ----------------------===//

#include "traincc/Dialect/Train/IR/TrainDialect.h"
#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace traincc::train;

#include "traincc/Dialect/Train/IR/TrainOpsDialect.cpp.inc"
#include "traincc/Dialect/Train/IR/TrainEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "traincc/Dialect/Train/IR/TrainAttrs.cpp.inc"

void TrainDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "traincc/Dialect/Train/IR/TrainAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "traincc/Dialect/Train/IR/TrainOps.cpp.inc"
      >();
}

Operation *TrainDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                             Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
