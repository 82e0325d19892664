//===- EmulateGPUKernels.cpp - GPU kernels as CPU code, for tests ---------===//
//
// A kernel that never synchronises its threads computes the same thing
// when its threads run one after another. That makes the whole GPU path
// testable on a machine without a GPU: the kernels traincc generates run on
// the CPU, under the fake CUDA driver, from the same launch plans.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/Passes.h"

#include "mlir/IR/IRMapping.h"

namespace traincc {
#define GEN_PASS_DEF_GPUKERNELSTOCPUPASS
#define GEN_PASS_DEF_EMULATIONENTRYPOINTSPASS
#include "traincc/Codegen/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

constexpr llvm::StringLiteral kEmulatedAttr = "traincc.emulated_kernel";
/// Block id, thread id, grid size, block size; x, y, z each.
constexpr unsigned kLaunchIndices = 12;

unsigned dimIndex(gpu::Dimension dim) { return static_cast<unsigned>(dim); }

struct GPUKernelsToCPUPass
    : public traincc::impl::GPUKernelsToCPUPassBase<GPUKernelsToCPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> kernelModules(
        module.getOps<gpu::GPUModuleOp>());
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    SmallVector<Operation *> keep;
    for (gpu::GPUModuleOp kernels : kernelModules) {
      for (Operation &op : kernels.getBodyRegion().front()) {
        auto kernel = dyn_cast<gpu::GPUFuncOp>(op);
        if (!kernel) {
          keep.push_back(builder.clone(op));
          continue;
        }
        FailureOr<func::FuncOp> emulated = emulate(builder, kernel);
        if (failed(emulated))
          return signalPassFailure();
        keep.push_back(*emulated);
      }
    }
    // Only the kernels (and the globals they use) are compiled.
    llvm::SmallPtrSet<Operation *, 16> kept(keep.begin(), keep.end());
    for (Operation &op : llvm::make_early_inc_range(module.getOps()))
      if (!kept.contains(&op))
        op.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }

  FailureOr<func::FuncOp> emulate(OpBuilder &builder,
                                  gpu::GPUFuncOp kernel) {
    if (!kernel.getWorkgroupAttributions().empty() ||
        !kernel.getPrivateAttributions().empty())
      return kernel.emitError("kernels with memory attributions cannot be "
                              "emulated one thread at a time");
    SmallVector<Type> types(kernel.getArgumentTypes());
    types.append(kLaunchIndices, builder.getIndexType());
    auto func = func::FuncOp::create(builder, kernel.getLoc(),
                                     kernel.getName(),
                                     builder.getFunctionType(types, {}));
    func->setAttr(kEmulatedAttr, builder.getUnitAttr());
    IRMapping mapping;
    kernel.getBody().cloneInto(&func.getBody(), mapping);
    Block &entry = func.getBody().front();
    SmallVector<Value> launch;
    for (unsigned i = 0; i < kLaunchIndices; ++i)
      launch.push_back(entry.addArgument(builder.getIndexType(),
                                         kernel.getLoc()));

    WalkResult result = func.walk([&](Operation *op) {
      IRRewriter rewriter(op);
      if (auto id = dyn_cast<gpu::BlockIdOp>(op))
        rewriter.replaceOp(op, launch[dimIndex(id.getDimension())]);
      else if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
        rewriter.replaceOp(op, launch[3 + dimIndex(id.getDimension())]);
      else if (auto dim = dyn_cast<gpu::GridDimOp>(op))
        rewriter.replaceOp(op, launch[6 + dimIndex(dim.getDimension())]);
      else if (auto dim = dyn_cast<gpu::BlockDimOp>(op))
        rewriter.replaceOp(op, launch[9 + dimIndex(dim.getDimension())]);
      else if (isa<gpu::ReturnOp>(op))
        rewriter.replaceOpWithNewOp<func::ReturnOp>(op);
      else if (op->getDialect() &&
               isa<gpu::GPUDialect>(op->getDialect())) {
        op->emitError("'") << op->getName()
                           << "' cannot be emulated one thread at a time";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
    return func;
  }
};

/// `void @traincc_emu_<k>(ptr params, ptr grid, ptr block)`: for every
/// (block, thread) of the launch, in order, `@k(args..., ids..., dims...)`.
void buildEntryPoint(OpBuilder &moduleBuilder, LLVM::LLVMFuncOp kernel) {
  MLIRContext *ctx = moduleBuilder.getContext();
  Location loc = kernel.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i32 = IntegerType::get(ctx, 32);
  auto i64 = IntegerType::get(ctx, 64);
  auto entryType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                               {ptr, ptr, ptr});
  auto entryPoint = LLVM::LLVMFuncOp::create(
      moduleBuilder, loc, ("traincc_emu_" + kernel.getSymName()).str(),
      entryType);
  Block *entry = entryPoint.addEntryBlock(moduleBuilder);
  Block *header = entryPoint.addBlock();
  Block *body = entryPoint.addBlock();
  Block *exit = entryPoint.addBlock();
  header->addArgument(i64, loc);

  OpBuilder b = OpBuilder::atBlockBegin(entry);
  auto constant = [&](OpBuilder &at, int64_t value) -> Value {
    return LLVM::ConstantOp::create(at, loc, i64, at.getI64IntegerAttr(value));
  };
  // grid[0..2], block[0..2] as i64: gx gy gz bx by bz.
  SmallVector<Value> sizes;
  for (Value array : {entry->getArgument(1), entry->getArgument(2)})
    for (int32_t i = 0; i < 3; ++i) {
      Value at = LLVM::GEPOp::create(b, loc, ptr, i32, array,
                                     ArrayRef<LLVM::GEPArg>{i});
      sizes.push_back(LLVM::ZExtOp::create(
          b, loc, i64, LLVM::LoadOp::create(b, loc, i32, at)));
    }
  // Each kernel argument: params[j] points at its value.
  unsigned numArgs = kernel.getNumArguments() - kLaunchIndices;
  SmallVector<Value> args;
  for (unsigned j = 0; j < numArgs; ++j) {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, entry->getArgument(0),
                                     ArrayRef<LLVM::GEPArg>{int32_t(j)});
    Value address = LLVM::LoadOp::create(b, loc, ptr, slot);
    args.push_back(LLVM::LoadOp::create(
        b, loc, kernel.getArgumentTypes()[j], address));
  }
  Value total = constant(b, 1);
  for (Value size : sizes)
    total = LLVM::MulOp::create(b, loc, total, size);
  LLVM::BrOp::create(b, loc, ValueRange{constant(b, 0)}, header);

  b.setInsertionPointToStart(header);
  Value iteration = header->getArgument(0);
  Value more = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ult,
                                    iteration, total);
  LLVM::CondBrOp::create(b, loc, more, body, exit);

  // Threads fastest (x first), then blocks: the order a GPU's lowest ids
  // would run in if it ran one thread at a time.
  b.setInsertionPointToStart(body);
  SmallVector<Value> ids(6);
  Value rest = iteration;
  for (unsigned k : {3u, 4u, 5u, 0u, 1u, 2u}) {
    ids[k] = LLVM::URemOp::create(b, loc, rest, sizes[k]);
    rest = LLVM::UDivOp::create(b, loc, rest, sizes[k]);
  }
  SmallVector<Value> callArgs(args);
  callArgs.append(ids);
  callArgs.append(sizes);
  LLVM::CallOp::create(b, loc, kernel, callArgs);
  Value next = LLVM::AddOp::create(b, loc, iteration, constant(b, 1));
  LLVM::BrOp::create(b, loc, ValueRange{next}, header);

  b.setInsertionPointToStart(exit);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
}

struct EmulationEntryPointsPass
    : public traincc::impl::EmulationEntryPointsPassBase<
          EmulationEntryPointsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::LLVMFuncOp> kernels;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (func->hasAttr(kEmulatedAttr))
        kernels.push_back(func);
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    for (LLVM::LLVMFuncOp kernel : kernels) {
      if (kernel.getNumArguments() < kLaunchIndices) {
        kernel.emitError("not an emulated kernel");
        return signalPassFailure();
      }
      buildEntryPoint(builder, kernel);
    }
  }
};

} // namespace
