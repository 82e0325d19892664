//===- ShareIdenticalKernels.cpp - one copy of each outlined kernel -------===//
//
// Compile time grows with the code handed to LLVM. A ResNet-50 repeats the
// same bottleneck on the same shapes a dozen times, and micro_step and
// eval_step run the same forward ops: after outlining, those are kernels
// that differ only in their names. Keeping one of each makes the code that
// is vectorized, lowered, optimized and emitted proportional to the
// distinct shapes of a model, not to its depth.
//
// Two kernels are the same when their IR is, with the name and argument
// attributes left out (codegen::StructuralTable: a structural hash picks
// the candidates, a full comparison decides, so no hash collision can merge
// different code).
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/CPU/Passes.h"
#include "traincc/Codegen/Common/StructuralKey.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace traincc {
#define GEN_PASS_DEF_SHAREIDENTICALKERNELSPASS
#include "traincc/Codegen/CPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

struct ShareIdenticalKernelsPass
    : public traincc::impl::ShareIdenticalKernelsPassBase<
          ShareIdenticalKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    codegen::StructuralTable firstOfKind;
    DenseMap<StringAttr, func::FuncOp> replacement;
    SmallVector<func::FuncOp> duplicates;
    for (func::FuncOp kernel : module.getOps<func::FuncOp>()) {
      bool outlined = kernel->hasAttr(kParallelBodyAttrName) ||
                      kernel->hasAttr(kSerialBodyAttrName);
      if (kernel.isExternal() || !outlined || !kernel.isPrivate())
        continue;
      auto kept = cast<func::FuncOp>(firstOfKind.lookupOrInsert(kernel));
      if (kept == kernel)
        continue;
      replacement[kernel.getSymNameAttr()] = kept;
      duplicates.push_back(kernel);
      keepCommonNoAlias(kept, kernel);
    }
    if (duplicates.empty())
      return;
    // One walk redirects every call: replacing each symbol's uses in turn
    // would walk the module once per duplicate.
    module.walk([&](func::CallOp call) {
      auto it = replacement.find(call.getCalleeAttr().getAttr());
      if (it != replacement.end())
        call.setCallee(it->second.getSymName());
    });
    for (func::FuncOp duplicate : duplicates)
      duplicate.erase();
  }

  /// `kept` may be called wherever `other` was: an argument stays noalias
  /// only if it is in both.
  static void keepCommonNoAlias(func::FuncOp kept, func::FuncOp other) {
    StringRef noAlias = LLVM::LLVMDialect::getNoAliasAttrName();
    for (unsigned index = 0; index < kept.getNumArguments(); ++index)
      if (kept.getArgAttr(index, noAlias) && !other.getArgAttr(index, noAlias))
        kept.removeArgAttr(index, noAlias);
  }
};

} // namespace
