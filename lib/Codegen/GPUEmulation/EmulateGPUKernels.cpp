//===- EmulateGPUKernels.cpp - GPU kernels as CPU code, for tests ---------===//
//
// The kernels traincc generates run on the CPU, under the fake CUDA driver,
// from the same launch plans: the whole GPU path is testable on a machine
// without a GPU. A kernel that never synchronises its threads computes the
// same thing when its threads run one after another; one that uses
// workgroup (shared) memory or barriers runs the threads of each block as
// cooperative fibers that the fake driver switches at every barrier.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/GPUEmulation/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

namespace traincc {
#define GEN_PASS_DEF_GPUKERNELSTOCPUPASS
#define GEN_PASS_DEF_EMULATIONENTRYPOINTSPASS
#include "traincc/Codegen/GPUEmulation/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

constexpr llvm::StringLiteral kEmulatedAttr = "traincc.emulated_kernel";
/// On an emulated kernel whose threads synchronise: the byte size of each
/// workgroup buffer, which it takes after its own arguments. Its entry point
/// runs the threads of a block as fibers.
constexpr llvm::StringLiteral kCooperativeAttr = "traincc.cooperative_kernel";
/// What `gpu.barrier` becomes: calls the driver's barrier hook.
constexpr llvm::StringLiteral kBarrierFunc = "traincc_emu.barrier";
/// Function pointers the fake driver sets after dlopen (the two libraries
/// cannot see each other's symbols).
constexpr llvm::StringLiteral kBarrierHook = "traincc_emu_barrier_hook";
constexpr llvm::StringLiteral kRunBlockHook = "traincc_emu_run_block_hook";
/// Block id, thread id, grid size, block size; x, y, z each.
constexpr unsigned kLaunchIndices = 12;
/// Alignment of each workgroup buffer in a block's shared area.
constexpr int64_t kSharedAlign = 64;

unsigned dimIndex(gpu::Dimension dim) { return static_cast<unsigned>(dim); }

/// `type` in the default memory space if it is a memref in a GPU one.
Type withoutGPUSpace(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !isa_and_nonnull<gpu::AddressSpaceAttr>(
                     memref.getMemorySpace()))
    return type;
  return MemRefType::get(memref.getShape(), memref.getElementType(),
                         memref.getLayout());
}

/// Whether a buffer of this type can live in a block's shared area (or on
/// the stack) and be passed as a bare pointer.
bool isStaticBuffer(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.hasStaticShape() && memref.getLayout().isIdentity();
}

struct GPUKernelsToCPUPass
    : public traincc::impl::GPUKernelsToCPUPassBase<GPUKernelsToCPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> kernelModules(
        module.getOps<gpu::GPUModuleOp>());
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    DataLayout layout(module);
    SmallVector<Operation *> keep;
    bool barriers = false;
    for (gpu::GPUModuleOp kernels : kernelModules) {
      for (Operation &op : kernels.getBodyRegion().front()) {
        auto kernel = dyn_cast<gpu::GPUFuncOp>(op);
        if (!kernel) {
          keep.push_back(builder.clone(op));
          continue;
        }
        FailureOr<func::FuncOp> emulated =
            emulate(builder, layout, kernel, barriers);
        if (failed(emulated))
          return signalPassFailure();
        keep.push_back(*emulated);
      }
    }
    if (barriers) {
      auto barrier = func::FuncOp::create(
          builder, module.getLoc(), kBarrierFunc,
          builder.getFunctionType({}, {}));
      barrier.setPrivate();
      keep.push_back(barrier);
    }
    // Only the kernels (and the globals they use) are compiled.
    llvm::SmallPtrSet<Operation *, 16> kept(keep.begin(), keep.end());
    for (Operation &op : llvm::make_early_inc_range(module.getOps()))
      if (!kept.contains(&op))
        op.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }

  FailureOr<func::FuncOp> emulate(OpBuilder &builder, DataLayout &layout,
                                  gpu::GPUFuncOp kernel, bool &barriers) {
    bool cooperative = !kernel.getWorkgroupAttributions().empty();
    kernel.walk([&](gpu::BarrierOp) { cooperative = true; });
    barriers |= cooperative;
    SmallVector<Type> types(kernel.getArgumentTypes());
    SmallVector<int64_t> sharedBytes;
    for (BlockArgument buffer : kernel.getWorkgroupAttributions()) {
      if (!isStaticBuffer(buffer.getType()))
        return kernel.emitError("workgroup buffers of dynamic shape or "
                                "layout cannot be emulated");
      auto type = cast<MemRefType>(buffer.getType());
      sharedBytes.push_back(
          int64_t(layout.getTypeSize(type.getElementType())) *
          type.getNumElements());
      types.push_back(withoutGPUSpace(type));
    }
    for (BlockArgument buffer : kernel.getPrivateAttributions())
      if (!isStaticBuffer(buffer.getType()))
        return kernel.emitError("private buffers of dynamic shape or "
                                "layout cannot be emulated");
    types.append(kLaunchIndices, builder.getIndexType());
    auto func = func::FuncOp::create(builder, kernel.getLoc(),
                                     kernel.getName(),
                                     builder.getFunctionType(types, {}));
    func->setAttr(kEmulatedAttr, builder.getUnitAttr());
    if (cooperative)
      func->setAttr(kCooperativeAttr,
                    builder.getDenseI64ArrayAttr(sharedBytes));
    IRMapping mapping;
    kernel.getBody().cloneInto(&func.getBody(), mapping);
    Block &entry = func.getBody().front();
    // Private buffers: one per thread, on the thread's stack.
    unsigned firstPrivate = kernel.getNumArguments() +
                            kernel.getNumWorkgroupAttributions();
    unsigned numPrivate = kernel.getNumPrivateAttributions();
    OpBuilder atEntry = OpBuilder::atBlockBegin(&entry);
    for (unsigned i = 0; i < numPrivate; ++i) {
      BlockArgument buffer = entry.getArgument(firstPrivate + i);
      auto type = cast<MemRefType>(withoutGPUSpace(buffer.getType()));
      buffer.replaceAllUsesWith(
          memref::AllocaOp::create(atEntry, kernel.getLoc(), type));
    }
    entry.eraseArguments(firstPrivate, numPrivate);
    SmallVector<Value> launch;
    for (unsigned i = 0; i < kLaunchIndices; ++i)
      launch.push_back(entry.addArgument(builder.getIndexType(),
                                         kernel.getLoc()));
    // Workgroup and private memory are plain host memory.
    func.walk([](Block *block) {
      for (BlockArgument arg : block->getArguments())
        arg.setType(withoutGPUSpace(arg.getType()));
    });
    func.walk([](Operation *op) {
      for (OpResult result : op->getResults())
        result.setType(withoutGPUSpace(result.getType()));
    });

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
      else if (isa<gpu::BarrierOp>(op))
        rewriter.replaceOpWithNewOp<func::CallOp>(op, kBarrierFunc,
                                                  TypeRange{}, ValueRange{});
      else if (isa<gpu::ReturnOp>(op))
        rewriter.replaceOpWithNewOp<func::ReturnOp>(op);
      else if (op->getDialect() &&
               isa<gpu::GPUDialect>(op->getDialect())) {
        op->emitError("'") << op->getName() << "' cannot be emulated";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
    return func;
  }
};

/// Reads grid[0..2] and block[0..2] as i64: gx gy gz bx by bz.
SmallVector<Value> loadSizes(OpBuilder &b, Location loc, Value grid,
                             Value block) {
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i32 = IntegerType::get(ctx, 32);
  auto i64 = IntegerType::get(ctx, 64);
  SmallVector<Value> sizes;
  for (Value array : {grid, block})
    for (int32_t i = 0; i < 3; ++i) {
      Value at = LLVM::GEPOp::create(b, loc, ptr, i32, array,
                                     ArrayRef<LLVM::GEPArg>{i});
      sizes.push_back(LLVM::ZExtOp::create(
          b, loc, i64, LLVM::LoadOp::create(b, loc, i32, at)));
    }
  return sizes;
}

/// Each kernel argument as cuLaunchKernel reads it: params[j] points at it.
SmallVector<Value> loadArgs(OpBuilder &b, Location loc, Value params,
                            TypeRange types) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  SmallVector<Value> args;
  for (auto [j, type] : llvm::enumerate(types)) {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, params,
                                     ArrayRef<LLVM::GEPArg>{int32_t(j)});
    Value address = LLVM::LoadOp::create(b, loc, ptr, slot);
    args.push_back(LLVM::LoadOp::create(b, loc, type, address));
  }
  return args;
}

Value i64Constant(OpBuilder &b, Location loc, int64_t value) {
  return LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                  b.getI64IntegerAttr(value));
}

/// Splits the linear `index` into x, y, z over the sizes `nx`, `ny` (x
/// fastest, as CUDA numbers threads).
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value index,
                               Value nx, Value ny) {
  Value x = LLVM::URemOp::create(b, loc, index, nx);
  Value rest = LLVM::UDivOp::create(b, loc, index, nx);
  Value y = LLVM::URemOp::create(b, loc, rest, ny);
  Value z = LLVM::UDivOp::create(b, loc, rest, ny);
  return {x, y, z};
}

/// Types of the kernel's own arguments (before its workgroup buffers and
/// launch indices).
TypeRange kernelArgTypes(LLVM::LLVMFuncOp kernel, unsigned numShared) {
  return kernel.getArgumentTypes().drop_back(kLaunchIndices + numShared);
}

/// Builds `void @name(ptr params, ptr grid, ptr block)` as a counted loop:
/// `prologue(b, entry, sizes)` runs first, given the six launch sizes (grid
/// x, y, z, block x, y, z), and returns the trip count; `body(b, i)` runs
/// for each i from 0 and returns whether to go on (null: always).
void buildLaunchLoop(
    OpBuilder &moduleBuilder, Location loc, StringRef name,
    function_ref<Value(OpBuilder &, Block *, ArrayRef<Value>)> prologue,
    function_ref<Value(OpBuilder &, Value)> body) {
  MLIRContext *ctx = moduleBuilder.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto entryPoint = LLVM::LLVMFuncOp::create(
      moduleBuilder, loc, name,
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                  {ptr, ptr, ptr}));
  Block *entry = entryPoint.addEntryBlock(moduleBuilder);
  Block *header = entryPoint.addBlock();
  Block *loop = entryPoint.addBlock();
  Block *exit = entryPoint.addBlock();
  header->addArgument(IntegerType::get(ctx, 64), loc);

  OpBuilder b = OpBuilder::atBlockBegin(entry);
  SmallVector<Value> sizes =
      loadSizes(b, loc, entry->getArgument(1), entry->getArgument(2));
  Value count = prologue(b, entry, sizes);
  LLVM::BrOp::create(b, loc, ValueRange{i64Constant(b, loc, 0)}, header);

  b.setInsertionPointToStart(header);
  Value iteration = header->getArgument(0);
  Value more = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ult,
                                    iteration, count);
  LLVM::CondBrOp::create(b, loc, more, loop, exit);

  b.setInsertionPointToStart(loop);
  Value goOn = body(b, iteration);
  Value next = LLVM::AddOp::create(b, loc, iteration, i64Constant(b, loc, 1));
  if (goOn)
    LLVM::CondBrOp::create(b, loc, goOn, header, ValueRange{next}, exit,
                           ValueRange{});
  else
    LLVM::BrOp::create(b, loc, ValueRange{next}, header);

  b.setInsertionPointToStart(exit);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
}

/// `void @traincc_emu_<k>(ptr params, ptr grid, ptr block)`: for every
/// (block, thread) of the launch, in order, `@k(args..., ids..., dims...)`.
void buildEntryPoint(OpBuilder &moduleBuilder, LLVM::LLVMFuncOp kernel) {
  Location loc = kernel.getLoc();
  SmallVector<Value> sizes, args;
  buildLaunchLoop(
      moduleBuilder, loc, ("traincc_emu_" + kernel.getSymName()).str(),
      [&](OpBuilder &b, Block *entry, ArrayRef<Value> launchSizes) {
        sizes.assign(launchSizes.begin(), launchSizes.end());
        args = loadArgs(b, loc, entry->getArgument(0),
                        kernelArgTypes(kernel, 0));
        Value total = i64Constant(b, loc, 1);
        for (Value size : sizes)
          total = LLVM::MulOp::create(b, loc, total, size);
        return total;
      },
      [&](OpBuilder &b, Value iteration) -> Value {
        // Threads fastest (x first), then blocks: the order a GPU's lowest
        // ids would run in if it ran one thread at a time.
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
        return nullptr;
      });
}

/// What a cooperative entry point hands its thread thunk: the launch and
/// the block being run.
enum ContextField { kParams, kGrid, kBlock, kShared, kBlockX };

/// For a kernel whose threads synchronise: the same entry point, but each
/// block's threads run as fibers of the driver's run-block hook, over one
/// shared area per block:
///   for each block (x fastest):
///     fill the shared area with 0xff (NaN floats: shared memory is not
///       initialised on a GPU either);
///     if (traincc_emu_run_block_hook(@traincc_emu_<k>.thread, &context,
///                                    threads) != 0) return;
/// `@traincc_emu_<k>.thread(ptr context, i64 thread)` computes the ids and
/// calls the kernel, the shared buffers at their offsets in the area.
void buildCooperativeEntryPoint(OpBuilder &moduleBuilder,
                                LLVM::LLVMFuncOp kernel,
                                ArrayRef<int64_t> sharedBytes,
                                LLVM::GlobalOp runBlockHook) {
  MLIRContext *ctx = moduleBuilder.getContext();
  Location loc = kernel.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i8 = IntegerType::get(ctx, 8);
  auto i32 = IntegerType::get(ctx, 32);
  auto i64 = IntegerType::get(ctx, 64);
  auto voidType = LLVM::LLVMVoidType::get(ctx);
  auto contextType = LLVM::LLVMStructType::getLiteral(
      ctx, {ptr, ptr, ptr, ptr, i64, i64, i64});
  SmallVector<int64_t> offsets;
  int64_t areaBytes = 0;
  for (int64_t bytes : sharedBytes) {
    offsets.push_back(areaBytes);
    areaBytes += llvm::alignTo(bytes, kSharedAlign);
  }
  auto field = [&](OpBuilder &b, Value context, int32_t index) -> Value {
    return LLVM::GEPOp::create(b, loc, ptr, contextType, context,
                               ArrayRef<LLVM::GEPArg>{0, index});
  };

  // The thunk: one thread of the current block.
  std::string name = ("traincc_emu_" + kernel.getSymName()).str();
  auto thunk = LLVM::LLVMFuncOp::create(
      moduleBuilder, loc, name + ".thread",
      LLVM::LLVMFunctionType::get(voidType, {ptr, i64}),
      LLVM::Linkage::Internal);
  {
    Block *entry = thunk.addEntryBlock(moduleBuilder);
    OpBuilder b = OpBuilder::atBlockBegin(entry);
    Value context = entry->getArgument(0);
    auto load = [&](Type type, int32_t index) -> Value {
      return LLVM::LoadOp::create(b, loc, type, field(b, context, index));
    };
    Value params = load(ptr, kParams);
    SmallVector<Value> sizes =
        loadSizes(b, loc, load(ptr, kGrid), load(ptr, kBlock));
    SmallVector<Value> callArgs = loadArgs(
        b, loc, params, kernelArgTypes(kernel, sharedBytes.size()));
    Value area = load(ptr, kShared);
    for (int64_t offset : offsets)
      callArgs.push_back(
          LLVM::GEPOp::create(b, loc, ptr, i8, area,
                              ArrayRef<LLVM::GEPArg>{int32_t(offset)}));
    for (int32_t k = 0; k < 3; ++k)
      callArgs.push_back(load(i64, kBlockX + k));
    callArgs.append(
        delinearize(b, loc, entry->getArgument(1), sizes[3], sizes[4]));
    callArgs.append(sizes);
    LLVM::CallOp::create(b, loc, kernel, callArgs);
    LLVM::ReturnOp::create(b, loc, ValueRange{});
  }

  Value context, area, threads;
  SmallVector<Value> sizes;
  buildLaunchLoop(
      moduleBuilder, loc, name,
      [&](OpBuilder &b, Block *entry, ArrayRef<Value> launchSizes) {
        sizes.assign(launchSizes.begin(), launchSizes.end());
        context = LLVM::AllocaOp::create(b, loc, ptr, contextType,
                                         i64Constant(b, loc, 1));
        area = areaBytes
                   ? LLVM::AllocaOp::create(b, loc, ptr, i8,
                                            i64Constant(b, loc, areaBytes),
                                            kSharedAlign)
                         .getResult()
                   : LLVM::ZeroOp::create(b, loc, ptr).getResult();
        for (int32_t k = 0; k < 3; ++k)
          LLVM::StoreOp::create(b, loc, entry->getArgument(k),
                                field(b, context, kParams + k));
        LLVM::StoreOp::create(b, loc, area, field(b, context, kShared));
        threads = LLVM::MulOp::create(
            b, loc, LLVM::MulOp::create(b, loc, sizes[3], sizes[4]),
            sizes[5]);
        return LLVM::MulOp::create(
            b, loc, LLVM::MulOp::create(b, loc, sizes[0], sizes[1]),
            sizes[2]);
      },
      [&](OpBuilder &b, Value iteration) -> Value {
        SmallVector<Value> blockIds =
            delinearize(b, loc, iteration, sizes[0], sizes[1]);
        for (int32_t k = 0; k < 3; ++k)
          LLVM::StoreOp::create(b, loc, blockIds[k],
                                field(b, context, kBlockX + k));
        if (areaBytes)
          LLVM::MemsetOp::create(
              b, loc, area,
              LLVM::ConstantOp::create(b, loc, i8, b.getI8IntegerAttr(-1)),
              i64Constant(b, loc, areaBytes), /*isVolatile=*/false);
        Value hook = LLVM::LoadOp::create(
            b, loc, ptr, LLVM::AddressOfOp::create(b, loc, runBlockHook));
        auto hookType = LLVM::LLVMFunctionType::get(i32, {ptr, ptr, i64});
        Value status =
            LLVM::CallOp::create(
                b, loc, hookType,
                ValueRange{hook, LLVM::AddressOfOp::create(b, loc, thunk),
                           context, threads})
                .getResult();
        // A failed block (a deadlock the driver reported) ends the launch.
        return LLVM::ICmpOp::create(
            b, loc, LLVM::ICmpPredicate::eq, status,
            LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(0)));
      });
}

/// A zero-initialised, exported function pointer the fake driver sets.
LLVM::GlobalOp buildHook(OpBuilder &moduleBuilder, Location loc,
                         StringRef name) {
  MLIRContext *ctx = moduleBuilder.getContext();
  return LLVM::GlobalOp::create(
      moduleBuilder, loc, LLVM::LLVMPointerType::get(ctx),
      /*isConstant=*/false, LLVM::Linkage::External, name,
      LLVM::ZeroAttr::get(ctx));
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
    LLVM::GlobalOp runBlockHook;
    for (LLVM::LLVMFuncOp kernel : kernels) {
      auto shared =
          kernel->getAttrOfType<DenseI64ArrayAttr>(kCooperativeAttr);
      size_t numShared = shared ? shared.size() : 0;
      if (kernel.getNumArguments() < kLaunchIndices + numShared) {
        kernel.emitError("not an emulated kernel");
        return signalPassFailure();
      }
      if (!shared) {
        buildEntryPoint(builder, kernel);
        continue;
      }
      if (!runBlockHook)
        runBlockHook = buildHook(builder, module.getLoc(), kRunBlockHook);
      buildCooperativeEntryPoint(builder, kernel, shared.asArrayRef(),
                                 runBlockHook);
    }
    // `gpu.barrier` became a call of this; it calls the driver's hook.
    auto barrier = module.lookupSymbol<LLVM::LLVMFuncOp>(kBarrierFunc);
    if (barrier && barrier.isExternal()) {
      Location loc = barrier.getLoc();
      LLVM::GlobalOp hook = buildHook(builder, loc, kBarrierHook);
      barrier.setLinkage(LLVM::Linkage::Internal);
      barrier->removeAttr(SymbolTable::getVisibilityAttrName());
      OpBuilder b = OpBuilder::atBlockBegin(barrier.addEntryBlock(builder));
      auto ptr = LLVM::LLVMPointerType::get(&getContext());
      Value function = LLVM::LoadOp::create(
          b, loc, ptr, LLVM::AddressOfOp::create(b, loc, hook));
      LLVM::CallOp::create(
          b, loc,
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(&getContext()),
                                      {}),
          ValueRange{function});
      LLVM::ReturnOp::create(b, loc, ValueRange{});
    }
  }
};

} // namespace
