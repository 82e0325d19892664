//===- HoistWorkspaceViews.cpp - workspace offsets as kernel arguments ----===//
//
// A kernel that views the workspace at a constant offset carries that
// offset in its code, so the same loop nest in two repeated blocks of a
// network, whose temporaries the packing put at different offsets, makes
// two kernels that differ in nothing else: resnet50's 807 launches needed
// 732 kernels. With the views made before the launch, the offset moves
// into the launch plan's (workspace, offset) argument, and the kernels of
// repeated blocks are equal and compiled once.
//
// A launch's views are hoisted together or not at all: a kernel that still
// took the whole workspace would alias the views it is given, which
// traincc-annotate-kernel-pointers declares not to alias. For the same
// reason, views at overlapping ranges (one temporary seen with two types)
// stay inside.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/Common/BufferUtils.h"
#include "traincc/Codegen/GPU/Passes.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/MapVector.h"

namespace traincc {
#define GEN_PASS_DEF_HOISTWORKSPACEVIEWSPASS
#include "traincc/Codegen/GPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

/// A hoistable view: its byte offset and the type it views.
using ViewKey = std::pair<int64_t, Type>;

/// The launch's views of `workspace` by offset and type, or nothing when
/// one of them cannot be a plan argument (not a constant, aligned offset
/// with a static shape), when the launch uses the workspace otherwise, or
/// when two differently typed views overlap.
std::optional<llvm::MapVector<ViewKey, SmallVector<memref::ViewOp>>>
hoistableViews(gpu::LaunchOp launch, Value workspace) {
  llvm::MapVector<ViewKey, SmallVector<memref::ViewOp>> views;
  bool hoistable = true;
  launch.getBody().walk([&](Operation *op) {
    if (!llvm::is_contained(op->getOperands(), workspace))
      return WalkResult::advance();
    auto view = dyn_cast<memref::ViewOp>(op);
    APInt offset;
    if (!view || view.getSource() != workspace ||
        !matchPattern(view.getByteShift(), m_ConstantInt(&offset)) ||
        !view.getType().hasStaticShape() ||
        offset.getSExtValue() % kGPUKernelPointerAlignment != 0) {
      hoistable = false;
      return WalkResult::interrupt();
    }
    views[{offset.getSExtValue(), view.getType()}].push_back(view);
    return WalkResult::advance();
  });
  if (!hoistable)
    return std::nullopt;
  SmallVector<std::pair<int64_t, int64_t>> ranges;
  for (auto &[key, list] : views)
    ranges.push_back(
        {key.first, key.first + codegen::staticByteSize(
                                    cast<ShapedType>(key.second))});
  llvm::sort(ranges);
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second)
      return std::nullopt;
  return views;
}

struct HoistWorkspaceViewsPass
    : public traincc::impl::HoistWorkspaceViewsPassBase<
          HoistWorkspaceViewsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      BlockArgument workspace = gpuWorkspaceArgument(func);
      if (!workspace)
        continue;
      for (auto launch : func.getBody().front().getOps<gpu::LaunchOp>())
        if (auto views = hoistableViews(launch, workspace))
          hoist(launch, workspace, *views);
    }
  }

  void hoist(gpu::LaunchOp launch, Value workspace,
             llvm::MapVector<ViewKey, SmallVector<memref::ViewOp>> &views) {
    OpBuilder builder(launch);
    for (auto &[key, list] : views) {
      Location loc = list.front().getLoc();
      Value offset = arith::ConstantIndexOp::create(builder, loc, key.first);
      Value hoisted = memref::ViewOp::create(
          builder, loc, cast<MemRefType>(key.second), workspace, offset,
          ValueRange());
      for (memref::ViewOp view : list) {
        Operation *shift = view.getByteShift().getDefiningOp();
        view.replaceAllUsesWith(hoisted);
        view.erase();
        // A constant left behind would still tell the kernels apart.
        if (shift && shift->use_empty() &&
            launch->isProperAncestor(shift))
          shift->erase();
      }
    }
  }
};

} // namespace
