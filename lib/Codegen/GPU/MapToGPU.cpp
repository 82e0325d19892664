//===- MapToGPU.cpp - loop nests of GPU steps as gpu.launch kernels -------===//
//
// The general GPU mapping: one thread per iteration of a loop nest's
// parallel loops, their reduction loops serial inside the thread. Simple and
// always correct; contractions and long reductions were already mapped to
// tiled kernels (TileGPUContractions, MapGPUReductions), whose launches only
// get their values sunk here.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/Common/BufferUtils.h"
#include "traincc/Codegen/GPU/Passes.h"


#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace traincc {
#define GEN_PASS_DEF_MAPTOGPUPASS
#include "traincc/Codegen/GPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;
using traincc::codegen::rootBuffer;

namespace {

/// The function argument a view chain starts from, if any.
BlockArgument rootArgument(Value value) {
  return dyn_cast<BlockArgument>(rootBuffer(value));
}

/// Whether a kernel may recompute `op` itself instead of taking its result
/// as an argument: it is cheap and reads nothing a step writes.
bool isSinkable(Operation *op) {
  if (op->hasTrait<OpTrait::ConstantLike>() ||
      isa<ViewLikeOpInterface, memref::GetGlobalOp>(op))
    return true;
  if (auto load = dyn_cast<memref::LoadOp>(op)) {
    BlockArgument root = rootArgument(load.getMemRef());
    auto func =
        root ? dyn_cast<func::FuncOp>(root.getOwner()->getParentOp()) : nullptr;
    auto role = func ? func.getArgAttrOfType<StringAttr>(root.getArgNumber(),
                                                         "train.gpu_buffer")
                     : nullptr;
    return role && role.getValue() == "params";
  }
  return isPure(op) && op->getNumRegions() == 0 &&
         isa<arith::ArithDialect, math::MathDialect>(op->getDialect());
}

/// Whether a top-level load may be repeated inside the kernels that use
/// its value: nothing writes its buffer between it and the last of them
/// (a counter read, used by the next kernel, then reset).
bool isRepeatableLoad(memref::LoadOp load, Block &body) {
  // The last top-level op that uses the value, through pure arithmetic.
  Operation *last = load;
  SmallVector<Value> worklist = {load.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top)
        return false;
      if (last->isBeforeInBlock(top))
        last = top;
      if (top == user && isPure(user))
        worklist.append(user->result_begin(), user->result_end());
    }
  }
  Value root = rootBuffer(load.getMemRef());
  for (Operation *op = load->getNextNode(); op && op != last->getNextNode();
       op = op->getNextNode()) {
    WalkResult writes = op->walk([&](Operation *inner) {
      if (auto store = dyn_cast<memref::StoreOp>(inner))
        return rootBuffer(store.getMemRef()) == root ? WalkResult::interrupt()
                                                     : WalkResult::advance();
      if (isa<CallOpInterface>(inner))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (writes.wasInterrupted())
      return false;
  }
  return true;
}

struct MapToGPUPass : public traincc::impl::MapToGPUPassBase<MapToGPUPass> {
  using MapToGPUPassBase::MapToGPUPassBase;

  /// Top-level loads that kernels may repeat (isRepeatableLoad).
  llvm::SmallPtrSet<Operation *, 8> repeatableLoads;

  bool canSink(Operation *op) {
    return isSinkable(op) || repeatableLoads.contains(op);
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || func.isPrivate())
        continue;
      SmallVector<Operation *> nests;
      SmallVector<SmallVector<Operation *>> runs;
      if (failed(collectWork(func, nests, runs)))
        return signalPassFailure();
      SmallVector<gpu::LaunchOp> launches;
      for (Operation *nest : nests) {
        // Kernels the tiling passes built need only their values sunk.
        if (auto mapped = dyn_cast<gpu::LaunchOp>(nest)) {
          launches.push_back(mapped);
          continue;
        }
        FailureOr<gpu::LaunchOp> launch = mapNest(nest);
        if (failed(launch))
          return signalPassFailure();
        launches.push_back(*launch);
      }
      for (ArrayRef<Operation *> run : runs)
        launches.push_back(mapRun(run));
      for (gpu::LaunchOp launch : launches)
        if (failed(sinkIntoKernel(launch, func)))
          return signalPassFailure();
    }
  }

  /// The loop nests, and the runs of scalar code between them that touch
  /// memory (what a 0-d linalg op lowers to: load, arithmetic, store); each
  /// becomes a kernel.
  LogicalResult collectWork(func::FuncOp func,
                            SmallVectorImpl<Operation *> &nests,
                            SmallVectorImpl<SmallVector<Operation *>> &runs) {
    SmallVector<Operation *> run;
    llvm::SmallPtrSet<Operation *, 8> inRun;
    auto closeRun = [&]() -> LogicalResult {
      for (Operation *op : run)
        for (Operation *user : op->getUsers())
          if (!inRun.contains(user))
            return user->emitError("a value computed by scalar device code "
                                   "is used outside it");
      bool writes = llvm::any_of(run, [](Operation *op) {
        return !isMemoryEffectFree(op) && !isa<memref::LoadOp>(op);
      });
      if (writes)
        runs.push_back(run);
      else if (!run.empty())
        return run.front()->emitError("unexpected host code in a GPU step");
      run.clear();
      inRun.clear();
      return success();
    };
    for (Operation &op : func.getBody().getOps())
      if (auto load = dyn_cast<memref::LoadOp>(op))
        if (isRepeatableLoad(load, func.getBody().front()))
          repeatableLoads.insert(load);
    for (Operation &op : func.getBody().getOps()) {
      // A replica collective (--sync-bn) stays host code between kernels.
      auto call = dyn_cast<func::CallOp>(op);
      bool collective = call && call.getCallee() == kGPUReplicaMeanFunc;
      if (collective ||
          isa<scf::ParallelOp, scf::ForOp, gpu::LaunchOp, func::ReturnOp>(op)) {
        if (failed(closeRun()))
          return failure();
        if (!collective && !isa<func::ReturnOp>(op))
          nests.push_back(&op);
        continue;
      }
      bool usesRun = llvm::any_of(op.getOperands(), [&](Value operand) {
        return inRun.contains(operand.getDefiningOp());
      });
      if (usesRun || !canSink(&op)) {
        run.push_back(&op);
        inRun.insert(&op);
      }
    }
    return success();
  }

  /// A single-thread kernel running `run` in order.
  gpu::LaunchOp mapRun(ArrayRef<Operation *> run) {
    OpBuilder builder(run.front());
    Location loc = run.front()->getLoc();
    Value one = arith::ConstantIndexOp::create(builder, loc, 1);
    auto launch =
        gpu::LaunchOp::create(builder, loc, one, one, one, one, one, one);
    Block &body = launch.getBody().front();
    OpBuilder end = OpBuilder::atBlockEnd(&body);
    auto terminator = gpu::TerminatorOp::create(end, loc);
    for (Operation *op : run)
      op->moveBefore(terminator);
    return launch;
  }

  /// One launch for one loop nest.
  FailureOr<gpu::LaunchOp> mapNest(Operation *nest) {
    OpBuilder builder(nest);
    Location loc = nest->getLoc();
    auto par = dyn_cast<scf::ParallelOp>(nest);
    SmallVector<int64_t> lower, step, trips;
    int64_t total = 1;
    if (par) {
      if (!par.getInitVals().empty())
        return par.emitError("parallel loops with reductions are not mapped "
                             "to GPU threads yet");
      for (auto [lb, ub, st] :
           llvm::zip(par.getLowerBound(), par.getUpperBound(), par.getStep())) {
        std::optional<int64_t> l = getConstantIntValue(lb);
        std::optional<int64_t> u = getConstantIntValue(ub);
        std::optional<int64_t> s = getConstantIntValue(st);
        if (!l || !u || !s || *s <= 0)
          return par.emitError("a GPU kernel needs static loop bounds");
        lower.push_back(*l);
        step.push_back(*s);
        trips.push_back(std::max<int64_t>(0, llvm::divideCeil(*u - *l, *s)));
        total *= trips.back();
      }
    }
    int64_t threads = std::clamp<int64_t>(total, 1, blockSize);
    int64_t blocks = std::max<int64_t>(1, llvm::divideCeil(total, threads));
    auto index = [&](OpBuilder &b, int64_t value) -> Value {
      return arith::ConstantIndexOp::create(b, loc, value);
    };
    Value one = index(builder, 1);
    auto launch =
        gpu::LaunchOp::create(builder, loc, index(builder, blocks), one, one,
                              index(builder, threads), one, one);
    OpBuilder body = OpBuilder::atBlockBegin(&launch.getBody().front());
    if (!par) {
      body.clone(*nest);
    } else {
      // iteration = blockIdx.x * threads + threadIdx.x, delinearized into
      // the nest's induction variables (last one fastest, as the loops
      // nest).
      Value iteration = arith::AddIOp::create(
          body, loc,
          arith::MulIOp::create(body, loc, launch.getBlockIds().x,
                                index(body, threads)),
          launch.getThreadIds().x);
      Value inRange = arith::CmpIOp::create(
          body, loc, arith::CmpIPredicate::ult, iteration, index(body, total));
      auto guard = scf::IfOp::create(body, loc, inRange, false);
      OpBuilder inner = guard.getThenBodyBuilder();
      IRMapping mapping;
      Value rest = iteration;
      for (int64_t dim = trips.size() - 1; dim >= 0; --dim) {
        Value trip = index(inner, trips[dim]);
        Value position =
            dim == 0
                ? rest
                : arith::RemUIOp::create(inner, loc, rest, trip).getResult();
        if (dim != 0)
          rest = arith::DivUIOp::create(inner, loc, rest, trip);
        Value iv = arith::AddIOp::create(
            inner, loc, index(inner, lower[dim]),
            arith::MulIOp::create(inner, loc, position,
                                  index(inner, step[dim])));
        mapping.map(par.getInductionVars()[dim], iv);
      }
      for (Operation &op : par.getBody()->without_terminator())
        inner.clone(op, mapping);
    }
    gpu::TerminatorOp::create(body, loc);
    nest->erase();
    return launch;
  }

  /// Clones into the kernel everything it uses from the function except
  /// the function's arguments, so that those are its only operands.
  LogicalResult sinkIntoKernel(gpu::LaunchOp launch, func::FuncOp func) {
    llvm::SetVector<Value> usedAbove;
    getUsedValuesDefinedAbove(launch.getBody(), usedAbove);
    OpBuilder builder = OpBuilder::atBlockBegin(&launch.getBody().front());
    IRMapping mapping;
    std::function<LogicalResult(Value)> materialize =
        [&](Value value) -> LogicalResult {
      if (mapping.contains(value) || isa<BlockArgument>(value))
        return success();
      Operation *def = value.getDefiningOp();
      if (!canSink(def))
        return def->emitError("a GPU kernel uses this value computed on the "
                              "host; only constants, views and step "
                              "parameters can be");
      for (Value operand : def->getOperands())
        if (failed(materialize(operand)))
          return failure();
      builder.clone(*def, mapping);
      return success();
    };
    for (Value value : usedAbove)
      if (failed(materialize(value)))
        return failure();
    // One walk of the kernel, not one walk of each value's uses: the
    // constants and views a step's kernels share have uses in all of them.
    launch.getBody().walk([&](Operation *op) {
      for (OpOperand &operand : op->getOpOperands())
        if (Value inside = mapping.lookupOrNull(operand.get()))
          operand.set(inside);
    });
    return success();
  }
};

} // namespace
