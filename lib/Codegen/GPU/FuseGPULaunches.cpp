//===- FuseGPULaunches.cpp - fewer, larger kernels per GPU step -----------===//
//
// After traincc-map-to-gpu a step is a sequence of gpu.launch ops whose
// bodies reach memory only through the function's arguments (and the
// workspace slices of its temporaries). Which launches depend on which is
// therefore exact: two launches conflict when one writes a byte range of an
// argument the other reads or writes. The pass moves each launch up past
// launches it does not conflict with and merges it into an earlier one:
//
//   * side by side (a new range of blocks) when it conflicts with nothing
//     in that launch: one kernel over the union of both grids;
//   * after one part in the same threads, when each thread reads only
//     what the same thread of that part stored (copies into padded
//     buffers);
//   * after it, separated by a barrier, when both run on a single block
//     and it depends on one part only: the per-channel arithmetic of
//     BatchNorm, the last steps of the loss, small accumulations.
//
// A single launch that joined a merged launch only because nothing stopped
// it earlier (a fill) may move further up to make room.
//
// Merging is greedy and in program order (the launch goes to the latest
// earlier kernel it may join), so the kernels still run in an order every
// dependency allows. Launches with 2-D or 3-D grids or blocks, dynamic
// shared memory or several blocks in their body stay as they are.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/Common/BufferUtils.h"
#include "traincc/Codegen/GPU/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

#include <limits>

namespace traincc {
#define GEN_PASS_DEF_FUSEGPULAUNCHESPASS
#include "traincc/Codegen/GPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

/// A byte range of a function argument (the whole argument unless it is a
/// workspace slice at a constant offset).
struct ByteRange {
  Value root;
  int64_t begin = 0;
  int64_t end = std::numeric_limits<int64_t>::max();

  bool overlaps(const ByteRange &other) const {
    return root == other.root && begin < other.end && other.begin < end;
  }
};

/// What a kernel (or a top-level op) reads and writes in the function's
/// arguments. `unknown`: something it touches could not be traced, so it
/// conflicts with everything.
struct Footprint {
  SmallVector<ByteRange> reads, writes;
  bool unknown = false;

  void append(const Footprint &other) {
    llvm::append_range(reads, other.reads);
    llvm::append_range(writes, other.writes);
    unknown |= other.unknown;
  }

  bool conflictsWith(const Footprint &other) const {
    if (unknown || other.unknown)
      return true;
    auto any = [](ArrayRef<ByteRange> a, ArrayRef<ByteRange> b) {
      return llvm::any_of(a, [&](const ByteRange &x) {
        return llvm::any_of(b, [&](const ByteRange &y) { return x.overlaps(y); });
      });
    };
    return any(writes, other.reads) || any(writes, other.writes) ||
           any(reads, other.writes);
  }
};

/// The argument range `value` (a memref) views; std::nullopt for memory
/// of the kernel's own (workgroup or private buffers, allocas), failure
/// if it cannot be traced.
FailureOr<std::optional<ByteRange>> rangeOf(Value value, Operation *kernel) {
  while (true) {
    if (auto view = value.getDefiningOp<memref::ViewOp>()) {
      auto root = dyn_cast<BlockArgument>(view.getSource());
      APInt shift;
      auto type = view.getType();
      if (root && isa<func::FuncOp>(root.getOwner()->getParentOp()) &&
          matchPattern(view.getByteShift(), m_ConstantInt(&shift)) &&
          type.hasStaticShape()) {
        int64_t begin = shift.getSExtValue();
        return std::optional<ByteRange>(ByteRange{
            root, begin, begin + codegen::staticByteSize(type)});
      }
      value = view.getSource();
      continue;
    }
    if (auto view = value.getDefiningOp<ViewLikeOpInterface>()) {
      value = view.getViewSource();
      continue;
    }
    break;
  }
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (isa<func::FuncOp>(owner))
      return std::optional<ByteRange>(ByteRange{arg});
    if (kernel->isAncestor(owner))
      return std::optional<ByteRange>();
    return failure();
  }
  Operation *def = value.getDefiningOp();
  if (def && kernel->isProperAncestor(def) &&
      isa<memref::AllocaOp, memref::AllocOp>(def))
    return std::optional<ByteRange>();
  // Constant globals are read only.
  if (isa_and_nonnull<memref::GetGlobalOp>(def))
    return std::optional<ByteRange>();
  return failure();
}

/// The footprint of `op` and everything nested in it.
Footprint footprintOf(Operation *op) {
  Footprint footprint;
  op->walk([&](Operation *inner) {
    if (isa<gpu::BarrierOp>(inner))
      return;
    auto effects = dyn_cast<MemoryEffectOpInterface>(inner);
    if (!effects) {
      if (!inner->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        footprint.unknown = true;
      return;
    }
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (MemoryEffects::EffectInstance &instance : instances) {
      bool read = isa<MemoryEffects::Read>(instance.getEffect());
      bool write = isa<MemoryEffects::Write>(instance.getEffect());
      if (!read && !write)
        continue;
      Value value = instance.getValue();
      if (!value || !isa<BaseMemRefType>(value.getType())) {
        footprint.unknown = true;
        continue;
      }
      FailureOr<std::optional<ByteRange>> range = rangeOf(value, op);
      if (failed(range)) {
        footprint.unknown = true;
        continue;
      }
      if (!*range)
        continue;
      (write ? footprint.writes : footprint.reads).push_back(**range);
    }
  });
  return footprint;
}

/// A launch that may be merged: a 1-D grid of 1-D blocks of constant
/// sizes, one block of body, no dynamic shared memory, nothing async.
struct Kernel {
  gpu::LaunchOp launch;
  int64_t grid = 1, block = 1;
  bool barriers = false;
  Footprint footprint;
  /// As a later stage of a lane: whether a barrier goes before it (false
  /// when each of its threads reads only what the same thread of the
  /// stage before wrote).
  bool afterBarrier = true;
  /// Bytes of its workgroup buffers.
  int64_t sharedBytes = 0;
};

/// Static shared memory a block may have on every CUDA GPU; merged
/// launches keep the workgroup buffers of all their parts.
constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;

/// Whether `a` (in `first`'s body) and `b` (in `next`'s) compute the same
/// value from the same block and thread indices: the same pure ops on
/// equivalent operands.
bool equivalent(Value a, Value b, gpu::LaunchOp first, gpu::LaunchOp next) {
  auto argA = dyn_cast<BlockArgument>(a);
  auto argB = dyn_cast<BlockArgument>(b);
  if (argA || argB)
    return argA && argB && argA.getOwner() == &first.getBody().front() &&
           argB.getOwner() == &next.getBody().front() &&
           argA.getArgNumber() == argB.getArgNumber();
  Operation *opA = a.getDefiningOp();
  Operation *opB = b.getDefiningOp();
  if (opA->getName() != opB->getName() ||
      opA->getAttrDictionary() != opB->getAttrDictionary() || !isPure(opA) ||
      opA->getNumRegions() != 0 ||
      opA->getNumOperands() != opB->getNumOperands() ||
      cast<OpResult>(a).getResultNumber() != cast<OpResult>(b).getResultNumber())
    return false;
  for (auto [x, y] : llvm::zip(opA->getOperands(), opB->getOperands()))
    if (!equivalent(x, y, first, next))
      return false;
  return true;
}

/// The guard of a one-thread-per-output kernel (traincc-map-to-gpu): the
/// only op of its body with a region, `scf.if (iteration < total)`, and
/// `total`.
std::optional<std::pair<scf::IfOp, int64_t>> outputGuard(gpu::LaunchOp launch) {
  scf::IfOp guard;
  for (Operation &op : launch.getBody().front().without_terminator()) {
    if (op.getNumRegions() == 0 && isPure(&op))
      continue;
    auto branch = dyn_cast<scf::IfOp>(op);
    if (!branch || guard)
      return std::nullopt;
    guard = branch;
  }
  auto compare = guard ? guard.getCondition().getDefiningOp<arith::CmpIOp>()
                       : nullptr;
  std::optional<int64_t> total =
      compare ? getConstantIntValue(compare.getRhs()) : std::nullopt;
  if (!total || compare.getPredicate() != arith::CmpIPredicate::ult)
    return std::nullopt;
  return std::make_pair(guard, *total);
}

/// Whether `next` may run right after `first` in the same threads without
/// a barrier: the same grid and blocks, both one thread per output under
/// the same guard, `next` writes nothing `first` touches, and every value
/// it loads from what `first` writes is the one element the same thread
/// stored there (each thread of `first` stores one element of that
/// buffer, which has as many elements as there are threads).
bool readsOnlyOwnWrites(const Kernel &first, const Kernel &next) {
  if (first.grid != next.grid || first.block != next.block ||
      first.barriers || next.barriers || first.footprint.unknown ||
      next.footprint.unknown)
    return false;
  auto guardA = outputGuard(first.launch);
  auto guardB = outputGuard(next.launch);
  if (!guardA || !guardB || guardA->second != guardB->second ||
      !equivalent(guardA->first.getCondition(), guardB->first.getCondition(),
                  first.launch, next.launch))
    return false;
  Footprint firstWrites;
  firstWrites.writes = first.footprint.writes;
  Footprint nextWrites;
  nextWrites.writes = next.footprint.writes;
  if (nextWrites.conflictsWith(first.footprint))
    return false;
  SmallVector<memref::StoreOp> stores;
  gpu::LaunchOp firstLaunch = first.launch, nextLaunch = next.launch;
  firstLaunch.walk([&](memref::StoreOp store) { stores.push_back(store); });
  // Every read of `next` that overlaps a write of `first` is a load that
  // matches all of `first`'s stores into that range.
  WalkResult walk = nextLaunch.walk([&](Operation *op) {
    Footprint reads = footprintOf(op);
    if (op->getNumRegions() != 0 || !reads.conflictsWith(firstWrites))
      return WalkResult::advance();
    auto load = dyn_cast<memref::LoadOp>(op);
    if (!load || reads.unknown || reads.reads.size() != 1 ||
        !load.getMemRefType().hasStaticShape() ||
        load.getMemRefType().getNumElements() != guardA->second)
      return WalkResult::interrupt();
    ByteRange range = reads.reads.front();
    bool matched = false;
    for (memref::StoreOp store : stores) {
      FailureOr<std::optional<ByteRange>> stored =
          rangeOf(store.getMemRef(), firstLaunch);
      if (failed(stored) || !*stored || !(*stored)->overlaps(range))
        continue;
      if ((*stored)->begin != range.begin || (*stored)->end != range.end ||
          store.getMemRefType() != load.getMemRefType() ||
          !llvm::all_of(llvm::zip(store.getIndices(), load.getIndices()),
                        [&](auto pair) {
                          return equivalent(std::get<0>(pair),
                                            std::get<1>(pair), firstLaunch,
                                            nextLaunch);
                        }))
        return WalkResult::interrupt();
      matched = true;
    }
    return matched ? WalkResult::advance() : WalkResult::interrupt();
  });
  return !walk.wasInterrupted();
}

std::optional<Kernel> asMergeable(gpu::LaunchOp launch) {
  auto constant = [](Value value) { return getConstantIntValue(value); };
  std::optional<int64_t> gx = constant(launch.getGridSizeX());
  std::optional<int64_t> bx = constant(launch.getBlockSizeX());
  for (Value unit : {launch.getGridSizeY(), launch.getGridSizeZ(),
                     launch.getBlockSizeY(), launch.getBlockSizeZ()})
    if (constant(unit) != 1)
      return std::nullopt;
  if (!gx || !bx || launch.getDynamicSharedMemorySize() ||
      !launch.getAsyncDependencies().empty() || launch.getAsyncToken() ||
      launch.hasClusterSize() || !launch.getBody().hasOneBlock())
    return std::nullopt;
  // Its operands are the function's arguments only (traincc-map-to-gpu
  // sank the rest), so it may run wherever an earlier launch was.
  llvm::SetVector<Value> usedAbove;
  getUsedValuesDefinedAbove(launch.getBody(), usedAbove);
  if (!llvm::all_of(usedAbove, [](Value value) {
        auto arg = dyn_cast<BlockArgument>(value);
        return arg && isa<func::FuncOp>(arg.getOwner()->getParentOp());
      }))
    return std::nullopt;
  Kernel kernel{launch, *gx, *bx};
  kernel.barriers =
      launch.getBody().walk([](gpu::BarrierOp) { return WalkResult::interrupt(); })
          .wasInterrupted();
  kernel.footprint = footprintOf(launch);
  for (BlockArgument buffer : launch.getWorkgroupAttributions()) {
    auto type = dyn_cast<MemRefType>(buffer.getType());
    if (!type || !type.hasStaticShape())
      return std::nullopt;
    kernel.sharedBytes += codegen::staticByteSize(type);
  }
  return kernel;
}

/// Kernels that run one after another on the same blocks, a barrier
/// between each two.
struct Lane {
  SmallVector<Kernel, 1> stages;
  Footprint footprint;

  int64_t grid() const { return stages.front().grid; }
};

/// One launch of the result: kernels side by side (lanes), or an op that
/// stays as it is (`fixed`).
struct Slot {
  Operation *fixed = nullptr;
  SmallVector<Lane, 1> lanes;
  Footprint footprint;

  int64_t block() const {
    int64_t block = 1;
    for (const Lane &lane : lanes)
      for (const Kernel &stage : lane.stages)
        block = std::max(block, stage.block);
    return block;
  }

  /// Whether every kernel can run in blocks of the size the slot would
  /// have with `kernel` added: a kernel with barriers must have all the
  /// block's threads (the others run under `threadIdx < their size`), and
  /// the workgroup buffers of all must fit in static shared memory.
  bool blockFits(const Kernel &kernel) const {
    int64_t shared = kernel.sharedBytes;
    for (const Lane &lane : lanes)
      for (const Kernel &stage : lane.stages)
        shared += stage.sharedBytes;
    if (shared > kMaxStaticSharedBytes)
      return false;
    int64_t block = std::max(this->block(), kernel.block);
    if (kernel.barriers && kernel.block != block)
      return false;
    for (const Lane &lane : lanes)
      for (const Kernel &stage : lane.stages)
        if (stage.barriers && stage.block != block)
          return false;
    return true;
  }

  void addLane(Kernel kernel) {
    footprint.append(kernel.footprint);
    Lane lane;
    lane.footprint = kernel.footprint;
    lane.stages.push_back(std::move(kernel));
    lanes.push_back(std::move(lane));
  }

  /// Whether `kernel` may join as a new lane.
  bool acceptsLane(const Kernel &kernel, int64_t maxLanes) const {
    return !fixed && (int64_t)lanes.size() < maxLanes && blockFits(kernel) &&
           !footprint.conflictsWith(kernel.footprint);
  }

  /// The lane `kernel` may run after (behind a barrier): the only lane it
  /// conflicts with, one block wide like `kernel`.
  Lane *laneToFollow(const Kernel &kernel) {
    if (fixed || kernel.grid != 1 || !blockFits(kernel))
      return nullptr;
    Lane *follow = nullptr;
    for (Lane &lane : lanes) {
      if (!lane.footprint.conflictsWith(kernel.footprint))
        continue;
      if (follow || lane.grid() != 1)
        return nullptr;
      follow = &lane;
    }
    return follow;
  }

  /// The lane whose last stage `kernel` may follow in the same threads
  /// (readsOnlyOwnWrites): in it `kernel` conflicts with that stage only.
  /// `kernel` may conflict with one other lane too (a fill of the buffer
  /// it writes, placed side by side with its producer), if that lane is a
  /// single kernel that is not the slot's first: its index is returned in
  /// `evict`, for the caller to move it to an earlier launch.
  std::optional<size_t> laneToChain(const Kernel &kernel,
                                    std::optional<size_t> &evict) {
    evict.reset();
    if (fixed || !blockFits(kernel))
      return std::nullopt;
    std::optional<size_t> chain;
    for (auto [index, lane] : llvm::enumerate(lanes)) {
      if (!lane.footprint.conflictsWith(kernel.footprint))
        continue;
      bool follows =
          !chain &&
          llvm::none_of(ArrayRef(lane.stages).drop_back(),
                        [&](const Kernel &stage) {
                          return stage.footprint.conflictsWith(
                              kernel.footprint);
                        }) &&
          readsOnlyOwnWrites(lane.stages.back(), kernel);
      if (follows) {
        chain = index;
        continue;
      }
      if (evict || index == 0 || lane.stages.size() != 1)
        return std::nullopt;
      evict = index;
    }
    return chain;
  }

  /// Takes lane `index` out (its kernel moves to another launch).
  Kernel removeLane(size_t index) {
    Kernel kernel = std::move(lanes[index].stages.front());
    lanes.erase(lanes.begin() + index);
    footprint = Footprint();
    for (const Lane &lane : lanes)
      footprint.append(lane.footprint);
    return kernel;
  }

  size_t kernels() const {
    size_t count = 0;
    for (const Lane &lane : lanes)
      count += lane.stages.size();
    return count;
  }
};

Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// Replaces the slot's kernels by one launch where the first of them was.
void materialize(Slot &slot) {
  gpu::LaunchOp anchor = slot.lanes.front().stages.front().launch;
  Location loc = anchor.getLoc();
  OpBuilder builder(anchor);
  int64_t grid = 0;
  SmallVector<Type> workgroup, privates;
  for (Lane &lane : slot.lanes) {
    grid += lane.grid();
    for (Kernel &stage : lane.stages) {
      for (BlockArgument arg : stage.launch.getWorkgroupAttributions())
        workgroup.push_back(arg.getType());
      for (BlockArgument arg : stage.launch.getPrivateAttributions())
        privates.push_back(arg.getType());
    }
  }
  int64_t block = slot.block();
  Value one = indexConstant(builder, loc, 1);
  auto launch = gpu::LaunchOp::create(
      builder, loc, indexConstant(builder, loc, grid), one, one,
      indexConstant(builder, loc, block), one, one, /*dynamicShared=*/nullptr,
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{}, workgroup,
      privates);
  OpBuilder body = OpBuilder::atBlockBegin(&launch.getBody().front());
  Value blockId = launch.getBlockIds().x;
  Value threadId = launch.getThreadIds().x;
  Value zero = indexConstant(body, loc, 0);
  Value unit = indexConstant(body, loc, 1);
  unsigned nextWorkgroup = 0, nextPrivate = 0;
  int64_t offset = 0;
  for (Lane &lane : slot.lanes) {
    OpBuilder laneBuilder = body;
    Value laneBlockId = blockId;
    if (slot.lanes.size() > 1) {
      // Blocks [offset, offset + grid) run this lane: a condition uniform
      // over each block, so the lane's barriers stay legal.
      Value begin = indexConstant(body, loc, offset);
      Value end = indexConstant(body, loc, offset + lane.grid());
      Value inLane = arith::AndIOp::create(
          body, loc,
          arith::CmpIOp::create(body, loc, arith::CmpIPredicate::uge, blockId,
                                begin),
          arith::CmpIOp::create(body, loc, arith::CmpIPredicate::ult, blockId,
                                end));
      auto branch = scf::IfOp::create(body, loc, inLane, false);
      laneBuilder = branch.getThenBodyBuilder();
      laneBlockId = arith::SubIOp::create(laneBuilder, loc, blockId, begin);
    }
    for (auto [index, stage] : llvm::enumerate(lane.stages)) {
      if (index > 0 && stage.afterBarrier)
        gpu::BarrierOp::create(laneBuilder, loc);
      OpBuilder stageBuilder = laneBuilder;
      if (stage.block < block) {
        Value active = arith::CmpIOp::create(
            laneBuilder, loc, arith::CmpIPredicate::ult, threadId,
            indexConstant(laneBuilder, loc, stage.block));
        stageBuilder =
            scf::IfOp::create(laneBuilder, loc, active, false).getThenBodyBuilder();
      }
      gpu::LaunchOp old = stage.launch;
      IRMapping mapping;
      mapping.map(old.getBlockIds().x, laneBlockId);
      mapping.map(old.getBlockIds().y, zero);
      mapping.map(old.getBlockIds().z, zero);
      mapping.map(old.getThreadIds().x, threadId);
      mapping.map(old.getThreadIds().y, zero);
      mapping.map(old.getThreadIds().z, zero);
      mapping.map(old.getGridSize().x,
                  indexConstant(stageBuilder, loc, stage.grid));
      mapping.map(old.getGridSize().y, unit);
      mapping.map(old.getGridSize().z, unit);
      mapping.map(old.getBlockSize().x,
                  indexConstant(stageBuilder, loc, stage.block));
      mapping.map(old.getBlockSize().y, unit);
      mapping.map(old.getBlockSize().z, unit);
      for (BlockArgument arg : old.getWorkgroupAttributions())
        mapping.map(arg, launch.getWorkgroupAttributions()[nextWorkgroup++]);
      for (BlockArgument arg : old.getPrivateAttributions())
        mapping.map(arg, launch.getPrivateAttributions()[nextPrivate++]);
      for (Operation &op : old.getBody().front().without_terminator())
        stageBuilder.clone(op, mapping);
    }
    offset += lane.grid();
  }
  gpu::TerminatorOp::create(body, loc);
  for (Lane &lane : slot.lanes)
    for (Kernel &stage : lane.stages)
      stage.launch.erase();
}

struct FuseGPULaunchesPass
    : public traincc::impl::FuseGPULaunchesPassBase<FuseGPULaunchesPass> {
  using FuseGPULaunchesPassBase::FuseGPULaunchesPassBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && !func.isPrivate())
        fuse(func);
  }

  void fuse(func::FuncOp func) {
    std::vector<Slot> slots;
    for (Operation &op : func.getBody().front().without_terminator()) {
      auto launch = dyn_cast<gpu::LaunchOp>(op);
      if (!launch && isMemoryEffectFree(&op))
        continue;
      std::optional<Kernel> kernel =
          launch ? asMergeable(launch) : std::nullopt;
      if (!kernel) {
        Slot fixed;
        fixed.fixed = &op;
        fixed.footprint = footprintOf(&op);
        slots.push_back(std::move(fixed));
        continue;
      }
      if (!place(slots, *kernel)) {
        Slot slot;
        slot.addLane(std::move(*kernel));
        slots.push_back(std::move(slot));
      }
    }
    for (Slot &slot : slots)
      if (!slot.fixed && slot.kernels() > 1)
        materialize(slot);
  }

  /// Merges `kernel` into the latest slot it may join without passing a
  /// slot it conflicts with; false if there is none.
  bool place(std::vector<Slot> &slots, Kernel &kernel) {
    for (size_t at = slots.size(); at-- > 0;) {
      Slot &slot = slots[at];
      if (slot.acceptsLane(kernel, maxLanes)) {
        slot.addLane(std::move(kernel));
        return true;
      }
      if (!slot.footprint.conflictsWith(kernel.footprint))
        continue;
      std::optional<size_t> evict;
      std::optional<size_t> chain = slot.laneToChain(kernel, evict);
      if (chain && evict) {
        // The other lane moves to an earlier launch, if one takes it.
        std::optional<size_t> target =
            earlierSlot(slots, at, slot.lanes[*evict].stages.front());
        if (target) {
          slots[*target].addLane(slot.removeLane(*evict));
          if (*evict < *chain)
            --*chain;
        } else {
          chain.reset();
        }
      }
      if (!chain && makeRoom(slots, at, kernel)) {
        slots[at].addLane(std::move(kernel));
        return true;
      }
      Lane *lane = nullptr;
      if (chain) {
        kernel.afterBarrier = false;
        lane = &slot.lanes[*chain];
      } else {
        lane = slot.laneToFollow(kernel);
      }
      if (lane) {
        slot.footprint.append(kernel.footprint);
        lane->footprint.append(kernel.footprint);
        lane->stages.push_back(std::move(kernel));
        return true;
      }
      return false;
    }
    return false;
  }

  /// Whether `kernel` may join slot `at` as a new lane once the one lane it
  /// conflicts with there (a single kernel, not the slot's first: a fill
  /// placed there only because nothing stopped it earlier) moves to an
  /// earlier slot; moves it if so.
  bool makeRoom(std::vector<Slot> &slots, size_t at, const Kernel &kernel) {
    Slot &slot = slots[at];
    if (slot.fixed || (int64_t)slot.lanes.size() > maxLanes ||
        !slot.blockFits(kernel))
      return false;
    std::optional<size_t> evict;
    for (auto [index, lane] : llvm::enumerate(slot.lanes)) {
      if (!lane.footprint.conflictsWith(kernel.footprint))
        continue;
      if (evict || index == 0 || lane.stages.size() != 1)
        return false;
      evict = index;
    }
    if (!evict)
      return false;
    std::optional<size_t> target =
        earlierSlot(slots, at, slot.lanes[*evict].stages.front());
    if (!target)
      return false;
    slots[*target].addLane(slot.removeLane(*evict));
    return true;
  }

  /// The latest slot before `before` that takes `kernel` as a new lane
  /// without it passing a slot it conflicts with.
  std::optional<size_t> earlierSlot(std::vector<Slot> &slots, size_t before,
                                    const Kernel &kernel) {
    for (size_t at = before; at-- > 0;) {
      if (slots[at].acceptsLane(kernel, maxLanes))
        return at;
      if (slots[at].footprint.conflictsWith(kernel.footprint))
        return std::nullopt;
    }
    return std::nullopt;
  }
};

} // namespace
