//===- StructuralKey.cpp - functions equal up to their names --------------===//

#include "traincc/Codegen/Common/StructuralKey.h"

#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

std::string traincc::codegen::structuralKey(FunctionOpInterface function) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << function->getName() << " " << function.getFunctionType() << "\n";
  StringRef name = SymbolTable::getSymbolAttrName();
  // func.func and gpu.func keep argument attributes under this name.
  StringRef argAttrs = "arg_attrs";
  for (NamedAttribute attr : function->getAttrs())
    if (attr.getName() != name && attr.getName() != argAttrs)
      os << attr.getName() << "=" << attr.getValue() << "\n";
  OpPrintingFlags flags;
  flags.printGenericOpForm().useLocalScope();
  for (Block &block : function.getFunctionBody()) {
    for (BlockArgument arg : block.getArguments())
      os << arg.getType() << ",";
    os << "\n";
    for (Operation &op : block)
      op.print(os, flags);
  }
  return key;
}
