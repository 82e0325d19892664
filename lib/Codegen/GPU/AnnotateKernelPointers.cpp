//===- AnnotateKernelPointers.cpp - what the plan knows of kernel pointers ===//
//
// The kernels' global loads are vectorised by LLVM, not here: the NVPTX
// backend's load/store vectorizer already merges accesses it can prove
// adjacent and aligned (unrolled reduction loops, the per-thread tiles of
// the tiled kernels, the parameter block), and gives up only because a
// bare pointer argument says nothing of its alignment, nor that a store
// through another argument leaves it alone. The launch plan knows both, so
// this pass states them once per argument.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/GPU/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SmallBitVector.h"

namespace traincc {
#define GEN_PASS_DEF_ANNOTATEKERNELPOINTERSPASS
#include "traincc/Codegen/GPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

/// Whether `value`, passed to a kernel, is a plan pointer: a buffer
/// argument of the step function that launches it, or a view of one at a
/// constant, aligned offset (traincc-hoist-workspace-views).
bool isPlanPointer(Value value, gpu::LaunchFuncOp launch) {
  APInt offset;
  if (auto view = value.getDefiningOp<memref::ViewOp>())
    if (matchPattern(view.getByteShift(), m_ConstantInt(&offset)) &&
        offset.getSExtValue() % kGPUKernelPointerAlignment == 0)
      value = view.getSource();
  auto arg = dyn_cast<BlockArgument>(value);
  return arg && isa<MemRefType>(arg.getType()) &&
         arg.getOwner()->isEntryBlock() &&
         arg.getOwner()->getParentOp() ==
             launch->getParentOfType<FunctionOpInterface>();
}

/// What the launches of one kernel allow for each of its arguments.
struct ArgumentFacts {
  llvm::SmallBitVector unplanned; // some launch passes a non-plan value
  llvm::SmallBitVector repeated;  // some launch passes it twice
};

struct AnnotateKernelPointersPass
    : public traincc::impl::AnnotateKernelPointersPassBase<
          AnnotateKernelPointersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::DenseMap<Operation *, ArgumentFacts> facts;
    SymbolTableCollection symbols;
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto kernel = symbols.lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      if (!kernel)
        return;
      ArgumentFacts &known = facts[kernel];
      known.unplanned.resize(kernel.getNumArguments());
      known.repeated.resize(kernel.getNumArguments());
      ValueRange operands = launch.getKernelOperands();
      for (auto [index, operand] : llvm::enumerate(operands)) {
        if (index >= kernel.getNumArguments())
          break;
        if (!isPlanPointer(operand, launch))
          known.unplanned.set(index);
        if (llvm::count(operands, operand) > 1)
          known.repeated.set(index);
      }
    });
    Builder b(&getContext());
    auto align = b.getI64IntegerAttr(kGPUKernelPointerAlignment);
    module.walk([&](gpu::GPUFuncOp kernel) {
      auto found = facts.find(kernel);
      // A kernel nothing launches keeps what LLVM would assume.
      if (!kernel.isKernel() || found == facts.end())
        return;
      const ArgumentFacts &known = found->second;
      for (unsigned i = 0; i < kernel.getNumArguments(); ++i) {
        if (!isa<MemRefType>(kernel.getArgument(i).getType()) ||
            known.unplanned.test(i))
          continue;
        kernel.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(), align);
        if (!known.repeated.test(i))
          kernel.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                            b.getUnitAttr());
      }
    });
  }
};

} // namespace
