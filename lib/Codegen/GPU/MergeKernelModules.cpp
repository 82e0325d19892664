//===- MergeKernelModules.cpp - one gpu.module for all kernels ------------===//

#include "traincc/Codegen/GPU/Passes.h"
#include "traincc/Codegen/Common/StructuralKey.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/SymbolTable.h"

namespace traincc {
#define GEN_PASS_DEF_MERGEKERNELMODULESPASS
#include "traincc/Codegen/GPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

constexpr llvm::StringLiteral kKernelModule = "traincc_kernels";
// Kernels read shared memory with vector loads up to 16 bytes wide
// (ld.shared.v4.f32); the lowering otherwise aligns the arrays to their
// element size only.
constexpr int64_t kSharedAlignment = 16;

// CUDA's launch limits on every GPU traincc targets (sm_70 on): a launch
// over them fails on any device, so it is a compile error, not a run-time
// surprise. Dynamic shared memory above 48 KiB needs an opt-in the runtime
// makes; 227 KiB is the most any device (sm_90) allows per block.
constexpr int64_t kMaxGrid[3] = {(int64_t(1) << 31) - 1, 65535, 65535};
constexpr int64_t kMaxBlock[3] = {1024, 1024, 64};
constexpr int64_t kMaxThreads = 1024;
constexpr int64_t kMaxDynamicShared = 227 * 1024;

/// Checks the launch's constant sizes against the limits (sizes that are
/// not constants are left to the launch plan, which rejects them).
LogicalResult checkLaunchLimits(gpu::LaunchFuncOp launch) {
  auto fail = [&]() {
    return launch.emitError("kernel '")
           << launch.getKernelName().getValue() << "': ";
  };
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  Value grids[3] = {grid.x, grid.y, grid.z};
  Value blocks[3] = {block.x, block.y, block.z};
  const char *axes[3] = {"x", "y", "z"};
  int64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    std::optional<int64_t> g = getConstantIntValue(grids[i]);
    if (g && *g > kMaxGrid[i])
      return fail() << "grid " << axes[i] << " of " << *g
                    << " blocks exceeds CUDA's limit of " << kMaxGrid[i];
    std::optional<int64_t> b = getConstantIntValue(blocks[i]);
    if (!b)
      continue;
    if (*b > kMaxBlock[i])
      return fail() << "block " << axes[i] << " of " << *b
                    << " threads exceeds CUDA's limit of " << kMaxBlock[i];
    threads *= std::max<int64_t>(*b, 1);
  }
  if (threads > kMaxThreads)
    return fail() << threads << " threads per block exceed CUDA's limit of "
                  << kMaxThreads;
  if (Value shared = launch.getDynamicSharedMemorySize())
    if (std::optional<int64_t> bytes = getConstantIntValue(shared);
        bytes && *bytes > kMaxDynamicShared)
      return fail() << *bytes
                    << " bytes of dynamic shared memory exceed the "
                    << kMaxDynamicShared
                    << " bytes a block may have on any CUDA device";
  return success();
}

void alignWorkgroupBuffers(gpu::GPUFuncOp kernel) {
  auto align = IntegerAttr::get(IntegerType::get(kernel.getContext(), 64),
                                kSharedAlignment);
  for (unsigned i = 0; i < kernel.getNumWorkgroupAttributions(); ++i)
    kernel.setWorkgroupAttributionAttr(
        i, LLVM::LLVMDialect::getAlignAttrName(), align);
}

int64_t countOps(Operation *op) {
  int64_t count = 0;
  op->walk([&](Operation *) { ++count; });
  return count;
}

/// Spreads the kernels of `merged` over up to `parts` modules of about equal
/// size and at least `minKernels` kernels, each with copies of the other
/// symbols its kernels use; returns the module each kernel went to, and
/// erases `merged`. Returns nothing, `merged` kept, if one part would do.
DenseMap<StringAttr, StringAttr> splitKernelModule(gpu::GPUModuleOp merged,
                                                   unsigned parts,
                                                   unsigned minKernels) {
  SmallVector<gpu::GPUFuncOp> kernels(
      merged.getBodyRegion().front().getOps<gpu::GPUFuncOp>());
  // Each part links libdevice and starts ptxas once: small programs stay
  // whole.
  parts = std::clamp<unsigned>(kernels.size() / std::max(minKernels, 1u), 1,
                               parts);
  if (parts == 1)
    return {};
  // Largest first onto the lightest part (LPT): the parts finish together.
  SmallVector<std::pair<int64_t, unsigned>> bySize;
  for (auto [index, kernel] : llvm::enumerate(kernels))
    bySize.push_back({countOps(kernel), index});
  llvm::stable_sort(bySize, [](auto a, auto b) { return a.first > b.first; });
  SmallVector<int64_t> load(parts, 0);
  SmallVector<unsigned> partOf(kernels.size());
  for (auto [size, index] : bySize) {
    unsigned lightest = std::min_element(load.begin(), load.end()) - load.begin();
    partOf[index] = lightest;
    load[lightest] += size;
  }

  OpBuilder builder(merged);
  SmallVector<gpu::GPUModuleOp> modules;
  for (unsigned part = 0; part < parts; ++part)
    modules.push_back(gpu::GPUModuleOp::create(
        builder, merged.getLoc(),
        (Twine(kKernelModule) + "_" + Twine(part)).str()));
  SymbolTable mergedSymbols(merged);
  SmallVector<DenseSet<StringAttr>> copied(parts);
  DenseMap<StringAttr, StringAttr> moduleOf;
  for (auto [index, kernel] : llvm::enumerate(kernels)) {
    unsigned part = partOf[index];
    Block &body = modules[part].getBodyRegion().front();
    // The symbols the kernel uses, and those they use in turn.
    SmallVector<Operation *> users = {kernel};
    while (!users.empty()) {
      Operation *user = users.pop_back_val();
      auto uses = SymbolTable::getSymbolUses(user);
      if (!uses)
        continue;
      for (const SymbolTable::SymbolUse &use : *uses) {
        StringAttr name = use.getSymbolRef().getRootReference();
        Operation *symbol = mergedSymbols.lookup(name);
        if (!symbol || isa<gpu::GPUFuncOp>(symbol) ||
            !copied[part].insert(name).second)
          continue;
        OpBuilder::atBlockBegin(&body).clone(*symbol);
        users.push_back(symbol);
      }
    }
    kernel->moveBefore(&body, body.end());
    moduleOf[kernel.getNameAttr()] = modules[part].getNameAttr();
  }
  merged.erase();
  return moduleOf;
}

struct MergeKernelModulesPass
    : public traincc::impl::MergeKernelModulesPassBase<MergeKernelModulesPass> {
  using Base::Base;
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

    // Kernels equal up to their names (repeated blocks, the forward
    // kernels micro_step and eval_step share) are compiled once: each old
    // module name maps to the kernel its launches use.
    codegen::StructuralTable firstOfKind;
    DenseMap<StringAttr, StringAttr> kernelFor;
    for (gpu::GPUModuleOp source : sources) {
      StringAttr moduleName = source.getNameAttr();
      for (Operation &op : llvm::make_early_inc_range(
               source.getBodyRegion().front().getOperations())) {
        if (auto kernel = dyn_cast<gpu::GPUFuncOp>(op)) {
          // Old module names are unique; kernel names repeat across them.
          kernel.setName(moduleName);
          alignWorkgroupBuffers(kernel);
          // The first of its kind keeps its name (its old module's).
          auto first = cast<gpu::GPUFuncOp>(firstOfKind.lookupOrInsert(kernel));
          kernelFor[moduleName] = first.getNameAttr();
          if (first == kernel)
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
    WalkResult walk = module.walk([&](gpu::LaunchFuncOp launch) {
      StringAttr kernel = kernelFor.lookup(launch.getKernelModuleName());
      if (!kernel) {
        launch.emitError("launch of a kernel no gpu.module defines");
        return WalkResult::interrupt();
      }
      launch.setKernelAttr(SymbolRefAttr::get(
          merged.getNameAttr(), {FlatSymbolRefAttr::get(kernel)}));
      return failed(checkLaunchLimits(launch)) ? WalkResult::interrupt()
                                               : WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    for (gpu::GPUModuleOp source : sources)
      source.erase();
    if (parts <= 1)
      return;
    DenseMap<StringAttr, StringAttr> moduleOf =
        splitKernelModule(merged, parts, minKernelsPerPart);
    if (moduleOf.empty())
      return;
    module.walk([&](gpu::LaunchFuncOp launch) {
      StringAttr kernel = launch.getKernelName();
      launch.setKernelAttr(SymbolRefAttr::get(
          moduleOf.lookup(kernel), {FlatSymbolRefAttr::get(kernel)}));
    });
  }
};

} // namespace
