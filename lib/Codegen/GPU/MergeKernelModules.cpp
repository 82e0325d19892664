//===- MergeKernelModules.cpp - one gpu.module for all kernels ------------===//

#include "traincc/Codegen/GPU/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace traincc {
#define GEN_PASS_DEF_MERGEKERNELMODULESPASS
#include "traincc/Codegen/GPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

constexpr llvm::StringLiteral kKernelModule = "traincc_kernels";

struct MergeKernelModulesPass
    : public traincc::impl::MergeKernelModulesPassBase<MergeKernelModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> sources(module.getOps<gpu::GPUModuleOp>());
    if (sources.empty())
      return;
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    auto merged =
        gpu::GPUModuleOp::create(builder, module.getLoc(), kKernelModule);
    Block &mergedBody = merged.getBodyRegion().front();
    SymbolTable mergedSymbols(merged);

    for (gpu::GPUModuleOp source : sources) {
      StringRef moduleName = source.getName();
      for (Operation &op : llvm::make_early_inc_range(
               source.getBodyRegion().front().getOperations())) {
        if (auto kernel = dyn_cast<gpu::GPUFuncOp>(op)) {
          // Old module names are unique; kernel names repeat across them.
          kernel.setName(moduleName);
          kernel->moveBefore(&mergedBody, mergedBody.end());
          continue;
        }
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol)
          continue;
        Operation *existing = mergedSymbols.lookup(symbol.getName());
        if (!existing) {
          op.moveBefore(&mergedBody, mergedBody.end());
          mergedSymbols.insert(&op);
        } else if (!OperationEquivalence::isEquivalentTo(
                       existing, &op, OperationEquivalence::Flags::IgnoreLocations)) {
          op.emitError("kernels define different symbols named ")
              << symbol.getName();
          return signalPassFailure();
        }
      }
    }
    DenseMap<StringAttr, StringAttr> moduleOf;
    for (gpu::GPUModuleOp source : sources)
      moduleOf[source.getNameAttr()] = source.getNameAttr();
    module.walk([&](gpu::LaunchFuncOp launch) {
      StringAttr old = launch.getKernelModuleName();
      launch.setKernelAttr(SymbolRefAttr::get(merged.getNameAttr(),
                                              {FlatSymbolRefAttr::get(old)}));
    });
    for (gpu::GPUModuleOp source : sources)
      source.erase();
  }
};

} // namespace
