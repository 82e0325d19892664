//===- PackGPUWorkspace.cpp - temporaries that share workspace memory -----===//
//
// traincc-prepare-gpu-steps gives every temporary of a step its own range
// of the workspace. Once the step is a sequence of kernels, which run one
// after another on one stream, a temporary is live only from the first
// kernel that touches it to the last one, and temporaries whose lives do
// not overlap can share memory. Packing them here, at kernel granularity,
// is exact: no later pass reorders or fuses the launches. The placement is
// the planner the CPU steps use too (MemoryPlan.h).
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/Common/BufferUtils.h"
#include "traincc/Codegen/Common/MemoryPlan.h"
#include "traincc/Codegen/GPU/Passes.h"
#include "traincc/Dialect/Train/IR/TrainOps.h"


#include "mlir/IR/Matchers.h"
#include "llvm/ADT/MapVector.h"

namespace traincc {
#define GEN_PASS_DEF_PACKGPUWORKSPACEPASS
#include "traincc/Codegen/GPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

BlockArgument traincc::gpuWorkspaceArgument(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments()) {
    auto role =
        func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "train.gpu_buffer");
    if (role && role.getValue() == "workspace")
      return arg;
  }
  return nullptr;
}

namespace {

struct PackGPUWorkspacePass
    : public traincc::impl::PackGPUWorkspacePassBase<PackGPUWorkspacePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && !func.isPrivate())
        if (failed(pack(getOperation(), func)))
          return signalPassFailure();
  }

  LogicalResult pack(ModuleOp module, func::FuncOp func) {
    BlockArgument workspace = gpuWorkspaceArgument(func);
    if (!workspace)
      return success();
    // Each view of the workspace, by the top-level op it is in.
    llvm::MapVector<int64_t, codegen::PlannedBuffer> temporaries;
    SmallVector<memref::ViewOp> views;
    // The temporaries each top-level op views, by offset, and its position.
    DenseMap<Operation *, std::pair<int64_t, SmallVector<int64_t>>> uses;
    int64_t position = 0;
    for (Operation &top : func.getBody().front()) {
      uses[&top].first = position;
      // The views a replica collective (--sync-bn) reads and writes are
      // its operands, not nested in it.
      SmallVector<memref::ViewOp> operandViews;
      if (auto call = dyn_cast<func::CallOp>(top))
        for (Value operand : call.getOperands())
          if (auto cast = operand.getDefiningOp<memref::CastOp>())
            if (auto view = cast.getSource().getDefiningOp<memref::ViewOp>())
              operandViews.push_back(view);
      // `rewrite`: whether this view's offset is to be rewritten (the
      // top-level views a call uses are rewritten where they stand).
      auto record = [&](memref::ViewOp view, bool rewrite) {
        if (view.getSource() != workspace)
          return WalkResult::advance();
        APInt offset;
        auto type = view.getType();
        if (!matchPattern(view.getByteShift(), m_ConstantInt(&offset)) ||
            !type.hasStaticShape()) {
          view.emitError("a workspace view needs a constant offset and a "
                         "static shape");
          return WalkResult::interrupt();
        }
        int64_t bytes = codegen::staticByteSize(type);
        auto [it, inserted] =
            temporaries.try_emplace(offset.getSExtValue());
        codegen::PlannedBuffer &t = it->second;
        t.bytes = std::max(t.bytes, bytes);
        if (inserted)
          t.first = position;
        t.last = position;
        if (rewrite)
          views.push_back(view);
        uses[&top].second.push_back(offset.getSExtValue());
        return WalkResult::advance();
      };
      WalkResult walk = top.walk(
          [&](memref::ViewOp view) { return record(view, true); });
      for (memref::ViewOp view : operandViews)
        if (record(view, false).wasInterrupted())
          return failure();
      if (walk.wasInterrupted())
        return failure();
      // A view at the top level is not a use: only the kernels touch
      // memory, and they carry their own copies of the views they use.
      if (!isa<memref::ViewOp, arith::ConstantOp>(top))
        ++position;
    }
    std::optional<int64_t> backward =
        backwardStart(module, func, temporaries, uses);
    SmallVector<codegen::PlannedBuffer> buffers;
    for (auto &entry : temporaries)
      buffers.push_back(entry.second);
    int64_t workspaceBytes =
        codegen::planArena(buffers, kGPUWorkspaceAlignment);
    for (auto [entry, planned] : llvm::zip(temporaries, buffers))
      entry.second.offset = planned.offset;

    OpBuilder builder(func.getContext());
    for (memref::ViewOp view : views) {
      APInt offset;
      (void)matchPattern(view.getByteShift(), m_ConstantInt(&offset));
      builder.setInsertionPoint(view);
      Operation *old = view.getByteShift().getDefiningOp();
      view.getByteShiftMutable().assign(arith::ConstantIndexOp::create(
          builder, view.getLoc(),
          temporaries[offset.getSExtValue()].offset));
      if (old->use_empty())
        old->erase();
    }
    auto type = MemRefType::get({std::max<int64_t>(workspaceBytes, 1)},
                                builder.getI8Type());
    workspace.setType(type);
    SmallVector<Type> inputs(func.getArgumentTypes());
    inputs[workspace.getArgNumber()] = type;
    func.setType(builder.getFunctionType(inputs, func.getResultTypes()));
    func->setAttr(codegen::kWorkspaceBytesAttrName,
                  builder.getI64IntegerAttr(workspaceBytes));
    if (backward)
      func->setAttr(codegen::kSavedBytesAttrName,
                    builder.getI64IntegerAttr(codegen::bytesLiveAcross(
                        buffers, *backward, kGPUWorkspaceAlignment)));
    return success();
  }

  /// As traincc-plan-step-memory decides it on the CPU: for a step that
  /// accumulates gradients, the launch where the loss starts, from which
  /// on the backward pass runs. The loss reaches its out-parameter through
  /// a copy kernel from one temporary (whose first launch starts the loss)
  /// or is written there directly.
  std::optional<int64_t> backwardStart(
      ModuleOp module, func::FuncOp func,
      llvm::MapVector<int64_t, codegen::PlannedBuffer> &temporaries,
      DenseMap<Operation *, std::pair<int64_t, SmallVector<int64_t>>> &uses) {
    Value loss = codegen::lossOfGradientStep(module, func);
    if (!loss)
      return std::nullopt;
    Block &body = func.getBody().front();
    Operation *first = nullptr, *last = nullptr;
    for (Operation *user : loss.getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!first || top->isBeforeInBlock(first))
        first = top;
      if (!last || last->isBeforeInBlock(top))
        last = top;
    }
    if (!first)
      return std::nullopt;
    auto &[lastPosition, lastViews] = uses[last];
    if (llvm::SmallDenseSet<int64_t>(lastViews.begin(), lastViews.end())
            .size() == 1)
      return temporaries[lastViews.front()].first;
    return uses[first].first;
  }
};

} // namespace
