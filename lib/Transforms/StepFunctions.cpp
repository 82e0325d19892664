//===- StepFunctions.cpp - helpers shared by the step passes --------------===//

#include "StepFunctions.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace traincc;

FailureOr<func::FuncOp> traincc::getOrCreateApplyStep(ModuleOp module) {
  OpBuilder builder(module.getBodyRegion());
  FunctionType type = builder.getFunctionType(
      {builder.getF32Type(), builder.getI64Type()}, {});
  if (auto existing = module.lookupSymbol<func::FuncOp>("apply_step")) {
    // Passes append to its body and use its arguments.
    if (existing.isExternal() || existing.getFunctionType() != type)
      return existing.emitError("@apply_step must be a function with a body "
                                "and the type ")
             << type << " (lr, step)";
    return existing;
  }
  builder.setInsertionPointToEnd(module.getBody());
  auto func =
      func::FuncOp::create(builder, module.getLoc(), "apply_step", type);
  func.setArgAttrs(0, builder.getDictionaryAttr(builder.getNamedAttr(
                          "train.name", builder.getStringAttr("lr"))));
  func.setArgAttrs(1, builder.getDictionaryAttr(builder.getNamedAttr(
                          "train.name", builder.getStringAttr("step"))));
  builder.setInsertionPointToEnd(func.addEntryBlock());
  func::ReturnOp::create(builder, module.getLoc());
  return func;
}

FlatSymbolRefAttr traincc::declareBuffer(train::ParamOp anchor, StringRef name,
                                         RankedTensorType type,
                                         train::ParamKind kind) {
  OpBuilder builder(anchor->getContext());
  builder.setInsertionPointAfter(anchor);
  auto param = train::ParamOp::create(builder, anchor.getLoc(), name, kind,
                                      type, ElementsAttr(),
                                      /*source=*/FlatSymbolRefAttr());
  return FlatSymbolRefAttr::get(param.getSymNameAttr());
}
