//===- PrepareGPUSteps.cpp - launch-plan buffers for GPU step functions ---===//
//
// After this pass every buffer a GPU step touches is a function argument
// or a view of one, which is what lets the driver describe the step as a
// table of launches over (buffer, offset) pairs instead of host code.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/Common/BufferUtils.h"
#include "traincc/Codegen/GPU/Passes.h"
#include "traincc/runtime/ModelABI.h"


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
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || func.isPrivate())
        continue;
      if (failed(prepare(func)))
        return signalPassFailure();
    }
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
