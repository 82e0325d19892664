//===- SerializeGPUModules.cpp - gpu.module -> PTX, in parallel -----------===//
//
// Upstream's gpu-module-to-binary serializes one module after the other;
// translating, optimising and compiling a large model's kernels to PTX is
// most of the CUDA target's compile time, so the kernel parts
// (traincc-merge-kernel-modules parts=N) are serialized on the context's
// threads. Serialization only reads the module and builds its own
// LLVMContext; the IR is changed afterwards, on this thread.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Threading.h"

namespace traincc {
#define GEN_PASS_DEF_SERIALIZEGPUMODULESPASS
#include "traincc/Codegen/GPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;

namespace {

struct SerializeGPUModulesPass
    : public traincc::impl::SerializeGPUModulesPassBase<
          SerializeGPUModulesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> kernelModules(
        module.getOps<gpu::GPUModuleOp>());
    for (gpu::GPUModuleOp kernels : kernelModules)
      if (!kernels.getTargetsAttr() || kernels.getTargetsAttr().size() != 1)
        return (void)kernels.emitError(
                   "expected a gpu.module with exactly one target"),
               signalPassFailure();

    // Built once, before the threads start: the callback must not build it
    // lazily from several threads.
    SymbolTable symbols(module);
    auto symbolTable = [&]() -> SymbolTable * { return &symbols; };
    gpu::TargetOptions options(toolkit, /*librariesToLink=*/{},
                               /*cmdOptions=*/"", /*elfSection=*/"",
                               gpu::CompilationTarget::Assembly, symbolTable);
    SmallVector<std::optional<SmallVector<char, 0>>> objects(
        kernelModules.size());
    auto target = [&](size_t index) {
      return cast<gpu::TargetAttrInterface>(
          kernelModules[index].getTargetsAttr()[0]);
    };
    // Failures are reported below, in module order, on this thread.
    (void)failableParallelForEach(
        &getContext(), llvm::seq<size_t>(0, kernelModules.size()),
        [&](size_t index) {
          objects[index] =
              target(index).serializeToObject(kernelModules[index], options);
          return success(objects[index].has_value());
        });

    OpBuilder builder(&getContext());
    for (auto [index, kernels] : llvm::enumerate(kernelModules)) {
      if (!objects[index]) {
        kernels.emitError("translating the kernels to PTX failed");
        return signalPassFailure();
      }
      Attribute object =
          target(index).createObject(kernels, *objects[index], options);
      if (!object) {
        kernels.emitError("packing the PTX of the kernels failed");
        return signalPassFailure();
      }
      builder.setInsertionPointAfter(kernels);
      gpu::BinaryOp::create(builder, kernels.getLoc(), kernels.getName(),
                            /*offloadingHandler=*/nullptr,
                            builder.getArrayAttr({object}));
      kernels.erase();
    }
  }
};

} // namespace
