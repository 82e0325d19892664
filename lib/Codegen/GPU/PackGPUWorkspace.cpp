//===- PackGPUWorkspace.cpp - temporaries that share workspace memory -----===//
//
// traincc-prepare-gpu-steps gives every temporary of a step its own range
// of the workspace. Once the step is a sequence of kernels, which run one
// after another on one stream, a temporary is live only from the first
// kernel that touches it to the last one, and temporaries whose lives do
// not overlap can share memory. Packing them here, at kernel granularity,
// is exact: no later pass reorders or fuses the launches.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/Common/BufferUtils.h"
#include "traincc/Codegen/GPU/Passes.h"


#include "mlir/IR/Matchers.h"
#include "llvm/ADT/MapVector.h"

namespace traincc {
#define GEN_PASS_DEF_PACKGPUWORKSPACEPASS
#include "traincc/Codegen/GPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

/// One temporary: its planned offset identifies it; its life is the range
/// of launches (indices in the function body) that view it.
struct Temporary {
  int64_t bytes = 0;
  int64_t first = 0, last = 0;
  int64_t packedOffset = 0;

  int64_t alignedBytes() const {
    return llvm::alignTo(std::max<int64_t>(bytes, 1), kGPUWorkspaceAlignment);
  }
};

/// The workspace argument of a prepared step function, if any.
BlockArgument workspaceArgument(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments()) {
    auto role =
        func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "train.gpu_buffer");
    if (role && role.getValue() == "workspace")
      return arg;
  }
  return nullptr;
}

struct PackGPUWorkspacePass
    : public traincc::impl::PackGPUWorkspacePassBase<PackGPUWorkspacePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && !func.isPrivate())
        if (failed(pack(func)))
          return signalPassFailure();
  }

  LogicalResult pack(func::FuncOp func) {
    BlockArgument workspace = workspaceArgument(func);
    if (!workspace)
      return success();
    // Each view of the workspace, by the top-level op it is in.
    llvm::MapVector<int64_t, Temporary> temporaries;
    SmallVector<memref::ViewOp> views;
    int64_t position = 0;
    for (Operation &top : func.getBody().front()) {
      WalkResult walk = top.walk([&](memref::ViewOp view) {
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
            temporaries.try_emplace(offset.getSExtValue(), Temporary());
        Temporary &t = it->second;
        t.bytes = std::max(t.bytes, bytes);
        if (inserted)
          t.first = position;
        t.last = position;
        views.push_back(view);
        return WalkResult::advance();
      });
      if (walk.wasInterrupted())
        return failure();
      // A view at the top level is not a use: only the kernels touch
      // memory, and they carry their own copies of the views they use.
      if (!isa<memref::ViewOp, arith::ConstantOp>(top))
        ++position;
    }
    int64_t workspaceBytes = assignOffsets(temporaries);

    OpBuilder builder(func.getContext());
    for (memref::ViewOp view : views) {
      APInt offset;
      (void)matchPattern(view.getByteShift(), m_ConstantInt(&offset));
      builder.setInsertionPoint(view);
      Operation *old = view.getByteShift().getDefiningOp();
      view.getByteShiftMutable().assign(arith::ConstantIndexOp::create(
          builder, view.getLoc(),
          temporaries[offset.getSExtValue()].packedOffset));
      if (old->use_empty())
        old->erase();
    }
    auto type = MemRefType::get({std::max<int64_t>(workspaceBytes, 1)},
                                builder.getI8Type());
    workspace.setType(type);
    SmallVector<Type> inputs(func.getArgumentTypes());
    inputs[workspace.getArgNumber()] = type;
    func.setType(builder.getFunctionType(inputs, func.getResultTypes()));
    func->setAttr("train.workspace_bytes",
                  builder.getI64IntegerAttr(workspaceBytes));
    return success();
  }

  /// First fit in order of first use: each temporary takes the lowest
  /// aligned offset where it overlaps no temporary alive at the same time.
  /// Returns the workspace size.
  int64_t assignOffsets(llvm::MapVector<int64_t, Temporary> &temporaries) {
    SmallVector<Temporary *> order;
    for (auto &[offset, t] : temporaries)
      order.push_back(&t);
    llvm::stable_sort(order, [](const Temporary *a, const Temporary *b) {
      return a->first < b->first;
    });
    int64_t size = 0;
    SmallVector<Temporary *> placed;
    for (Temporary *t : order) {
      // The ranges of the placed temporaries that overlap t's life, by
      // offset.
      SmallVector<std::pair<int64_t, int64_t>> busy;
      for (Temporary *other : placed)
        if (other->last >= t->first && other->first <= t->last)
          busy.push_back({other->packedOffset,
                          other->packedOffset + other->alignedBytes()});
      llvm::sort(busy);
      int64_t candidate = 0;
      for (auto [begin, end] : busy) {
        if (candidate + t->alignedBytes() <= begin)
          break;
        candidate = std::max(candidate, end);
      }
      t->packedOffset = candidate;
      size = std::max(size, candidate + t->alignedBytes());
      placed.push_back(t);
    }
    return size;
  }
};

} // namespace
