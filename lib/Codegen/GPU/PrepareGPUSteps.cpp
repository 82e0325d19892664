//===- PrepareGPUSteps.cpp - launch-plan buffers for GPU step functions ---===//
//
// After this pass every buffer a GPU step touches is a function argument
// or a view of one, which is what lets the driver describe the step as a
// table of launches over (buffer, offset) pairs instead of host code. The
// one host code left is the replica mean of --sync-bn: a call on a
// workspace view, between kernels, which the table records as a
// collective that the runtime runs between two segments of launches.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/Common/BufferUtils.h"
#include "traincc/Codegen/GPU/Passes.h"
#include "traincc/runtime/ModelABI.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace traincc {
#define GEN_PASS_DEF_PREPAREGPUSTEPSPASS
#include "traincc/Codegen/GPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

/// Where each step scalar lives in the parameter block (ModelABI.h).
std::optional<int64_t> paramOffset(StringRef name) {
  if (name == "lr")
    return TRAINCC_GPU_PARAM_LR;
  if (name == "grad_scale")
    return TRAINCC_GPU_PARAM_GRAD_SCALE;
  if (name == "step")
    return TRAINCC_GPU_PARAM_STEP;
  if (name == "seed")
    return TRAINCC_GPU_PARAM_SEED;
  return std::nullopt;
}

/// The trainer runtime's replica collectives, as the CPU steps call them
/// (ConvertTrainToLinalgCollectives.cpp).
constexpr llvm::StringLiteral kReplicaMean = "traincc_replica_mean";
constexpr llvm::StringLiteral kReplicaCount = "traincc_replica_count";

/// The temporary whose address `pointer` is: llvm.inttoptr of
/// arith.index_cast of memref.extract_aligned_pointer_as_index of an
/// alloc, as the lowering of synchronized BatchNorm passes it.
memref::AllocOp addressedTemporary(Value pointer) {
  auto toPointer = pointer.getDefiningOp<LLVM::IntToPtrOp>();
  auto cast = toPointer
                  ? toPointer.getArg().getDefiningOp<arith::IndexCastOp>()
                  : nullptr;
  auto extract =
      cast ? cast.getIn()
                 .getDefiningOp<memref::ExtractAlignedPointerAsIndexOp>()
           : nullptr;
  return extract ? extract.getSource().getDefiningOp<memref::AllocOp>()
                 : nullptr;
}

/// Erases `op` and then the producers of its operands that nothing else
/// uses (the address computation of a rewritten call).
void eraseWithDeadProducers(IRRewriter &rewriter, Operation *op) {
  SmallVector<Value> operands(op->getOperands());
  rewriter.eraseOp(op);
  for (Value operand : operands) {
    Operation *def = operand.getDefiningOp();
    if (def && def->use_empty() && isMemoryEffectFree(def))
      eraseWithDeadProducers(rewriter, def);
  }
}

/// Appends a byte-buffer argument marked with its launch-plan role.
BlockArgument addBufferArgument(func::FuncOp func, int64_t bytes,
                                StringRef role) {
  MLIRContext *ctx = func.getContext();
  auto type = MemRefType::get({bytes}, IntegerType::get(ctx, 8));
  unsigned index = func.getNumArguments();
  NamedAttribute attr(StringAttr::get(ctx, "train.gpu_buffer"),
                      StringAttr::get(ctx, role));
  (void)func.insertArgument(index, type, DictionaryAttr::get(ctx, {attr}),
                            func.getLoc());
  return func.getArgument(index);
}

struct PrepareGPUStepsPass
    : public traincc::impl::PrepareGPUStepsPassBase<PrepareGPUStepsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || func.isPrivate())
        continue;
      if (failed(prepare(func)))
        return signalPassFailure();
    }
    // The CPU steps' declarations, now unused.
    for (StringRef name : {kReplicaMean, kReplicaCount})
      if (auto declaration = module.lookupSymbol<func::FuncOp>(name))
        if (declaration.isExternal() &&
            SymbolTable::symbolKnownUseEmpty(declaration, module))
          declaration.erase();
  }

  /// `@traincc_gpu_replica_mean(memref<?xf32>)`, declared once.
  func::FuncOp gpuReplicaMean(OpBuilder &builder, ModuleOp module) {
    if (auto existing = module.lookupSymbol<func::FuncOp>(kGPUReplicaMeanFunc))
      return existing;
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(module.getBody());
    auto type = MemRefType::get({ShapedType::kDynamic}, builder.getF32Type());
    auto function =
        func::FuncOp::create(builder, module.getLoc(), kGPUReplicaMeanFunc,
                             builder.getFunctionType({type}, {}));
    function.setPrivate();
    return function;
  }

  /// The replica collectives of synchronized BatchNorm: the count from the
  /// parameter block, the mean as a call on the temporary itself (still an
  /// alloc here, a workspace view once the plan is made).
  LogicalResult prepareCollectives(func::FuncOp func, Value params,
                                   IRRewriter &rewriter) {
    SmallVector<func::CallOp> calls;
    func.walk([&](func::CallOp call) {
      if (call.getCallee() == kReplicaMean || call.getCallee() == kReplicaCount)
        calls.push_back(call);
    });
    for (func::CallOp call : calls) {
      rewriter.setInsertionPoint(call);
      Location loc = call.getLoc();
      if (call.getCallee() == kReplicaCount) {
        Value at = arith::ConstantIndexOp::create(rewriter, loc,
                                                  TRAINCC_GPU_PARAM_REPLICAS);
        Value view = memref::ViewOp::create(
            rewriter, loc, MemRefType::get({}, rewriter.getF32Type()), params,
            at, ValueRange{});
        rewriter.replaceOpWithNewOp<memref::LoadOp>(call, view, ValueRange{});
        continue;
      }
      memref::AllocOp buffer = call.getNumOperands() == 2
                                   ? addressedTemporary(call.getOperand(0))
                                   : nullptr;
      std::optional<int64_t> count =
          call.getNumOperands() == 2 ? getConstantIntValue(call.getOperand(1))
                                     : std::nullopt;
      MemRefType type = buffer ? buffer.getType() : MemRefType();
      if (!buffer || !count || !type.getElementType().isF32() ||
          !type.hasStaticShape() || type.getNumElements() != *count)
        return call.emitError("a GPU step can only average (--sync-bn) the "
                              "whole of a float32 temporary of constant size");
      Value values = memref::CastOp::create(
          rewriter, loc,
          MemRefType::get({ShapedType::kDynamic}, rewriter.getF32Type()),
          buffer);
      func::CallOp::create(rewriter, loc,
                           gpuReplicaMean(rewriter, getOperation()),
                           ValueRange{values});
      eraseWithDeadProducers(rewriter, call);
    }
    return success();
  }

  LogicalResult prepare(func::FuncOp func) {
    IRRewriter rewriter(func.getContext());
    Location loc = func.getLoc();

    // The workspace plan: one range per temporary, in program order.
    SmallVector<memref::AllocOp> allocs;
    int64_t workspaceBytes = 0;
    DenseMap<Operation *, int64_t> offsets;
    WalkResult walk = func.walk([&](memref::AllocOp alloc) {
      MemRefType type = alloc.getType();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
          !type.getElementType().isIntOrFloat()) {
        alloc.emitError("a GPU step needs temporaries of static shape, "
                        "found ")
            << type;
        return WalkResult::interrupt();
      }
      int64_t bytes = codegen::staticByteSize(type);
      offsets[alloc] = workspaceBytes;
      workspaceBytes +=
          llvm::alignTo(std::max<int64_t>(bytes, 1), kGPUWorkspaceAlignment);
      allocs.push_back(alloc);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    BlockArgument workspace = addBufferArgument(
        func, std::max<int64_t>(workspaceBytes, 1), "workspace");
    BlockArgument params =
        addBufferArgument(func, TRAINCC_GPU_PARAM_BYTES, "params");
    func->setAttr("train.workspace_bytes",
                  rewriter.getI64IntegerAttr(workspaceBytes));
    if (failed(prepareCollectives(func, params, rewriter)))
      return failure();

    for (memref::AllocOp alloc : allocs) {
      rewriter.setInsertionPoint(alloc);
      Value offset = arith::ConstantIndexOp::create(rewriter, alloc.getLoc(),
                                                    offsets[alloc]);
      rewriter.replaceOpWithNewOp<memref::ViewOp>(
          alloc, alloc.getType(), workspace, offset, ValueRange{});
    }
    SmallVector<memref::DeallocOp> deallocs;
    func.walk([&](memref::DeallocOp dealloc) { deallocs.push_back(dealloc); });
    for (memref::DeallocOp dealloc : deallocs)
      rewriter.eraseOp(dealloc);

    // Step scalars come from the parameter block.
    rewriter.setInsertionPointToStart(&func.getBody().front());
    for (BlockArgument arg : func.getArguments()) {
      if (!arg.getType().isIntOrFloat())
        continue;
      auto name =
          func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "train.name");
      std::optional<int64_t> offset =
          name ? paramOffset(name.getValue()) : std::nullopt;
      if (!offset)
        return func.emitError("GPU steps take no scalar argument ")
               << (name ? name.getValue() : StringRef("(unnamed)"));
      Value at = arith::ConstantIndexOp::create(rewriter, loc, *offset);
      Value view = memref::ViewOp::create(rewriter, loc,
                                          MemRefType::get({}, arg.getType()),
                                          params, at, ValueRange{});
      Value value = memref::LoadOp::create(rewriter, loc, view, ValueRange{});
      rewriter.replaceAllUsesExcept(arg, value, value.getDefiningOp());
    }

    // Copies become kernels too.
    SmallVector<memref::CopyOp> copies;
    func.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                  copy.getTarget());
    }
    return success();
  }
};

} // namespace
