//===- StructuralKey.cpp - functions equal up to their names --------------===//

#include "traincc/Codegen/Common/StructuralKey.h"

#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace traincc::codegen;

namespace {

/// The attributes that take part: all but the name and (func.func and
/// gpu.func keep them under this name) the argument attributes.
bool comparedAttribute(NamedAttribute attr) {
  return attr.getName() != SymbolTable::getSymbolAttrName() &&
         attr.getName() != "arg_attrs";
}

/// A hash of what `equal` compares: values and blocks by their position in
/// the function, operations by name, attributes, properties and types.
size_t structuralHash(FunctionOpInterface function) {
  llvm::hash_code hash = llvm::hash_combine(function->getName(),
                                            function.getFunctionType());
  for (NamedAttribute attr : function->getAttrs())
    if (comparedAttribute(attr))
      hash = llvm::hash_combine(hash, attr.getName(), attr.getValue());
  DenseMap<Value, unsigned> values;
  DenseMap<Block *, unsigned> blocks;
  auto numberRegion = [&](Region &region) {
    for (Block &block : region) {
      blocks.try_emplace(&block, blocks.size());
      for (BlockArgument arg : block.getArguments()) {
        values.try_emplace(arg, values.size());
        hash = llvm::hash_combine(hash, arg.getType());
      }
    }
  };
  numberRegion(function.getFunctionBody());
  function.getFunctionBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    hash = llvm::hash_combine(hash, op->getName(), op->getRawDictionaryAttrs(),
                              op->hashProperties(), op->getNumRegions());
    for (Value operand : op->getOperands()) {
      auto it = values.find(operand);
      hash = llvm::hash_combine(
          hash, it == values.end() ? hash_value(operand)
                                   : llvm::hash_code(it->second));
    }
    for (Block *successor : op->getSuccessors())
      hash = llvm::hash_combine(hash, blocks.lookup(successor));
    for (OpResult result : op->getResults()) {
      values.try_emplace(result, values.size());
      hash = llvm::hash_combine(hash, result.getType());
    }
    for (Region &region : op->getRegions())
      numberRegion(region);
  });
  return static_cast<size_t>(hash);
}

bool equal(FunctionOpInterface a, FunctionOpInterface b) {
  if (a->getName() != b->getName() ||
      a.getFunctionType() != b.getFunctionType())
    return false;
  auto compared = [](FunctionOpInterface f) {
    return llvm::to_vector(llvm::make_filter_range(f->getAttrs(),
                                                   comparedAttribute));
  };
  return compared(a) == compared(b) &&
         OperationEquivalence::isRegionEquivalentTo(
             &a.getFunctionBody(), &b.getFunctionBody(),
             OperationEquivalence::IgnoreLocations);
}

} // namespace

FunctionOpInterface
StructuralTable::lookupOrInsert(FunctionOpInterface function) {
  SmallVector<FunctionOpInterface, 1> &bucket =
      buckets[structuralHash(function)];
  for (FunctionOpInterface candidate : bucket)
    if (equal(candidate, function))
      return candidate;
  bucket.push_back(function);
  return function;
}
