//===- PlanStepMemory.cpp - a step's temporaries in one planned arena -----===//
//
// After bufferization a CPU step allocates each temporary with memref.alloc
// and the deallocation passes free it after its last use: a malloc and a
// free per temporary per step, and a peak that depends on the allocator.
// Shapes are static and a step runs its top-level ops in one fixed order,
// so here every temporary becomes a view of one workspace argument at an
// offset chosen at compile time (codegen::planArena), and temporaries whose
// lives do not overlap share memory. The runtime allocates the workspace
// once (ModelABI.h `workspace_bytes`).
//
// A life is counted in top-level ops of the step: a buffer is alive from
// the op that allocates it to the last top-level op that uses it or a view
// of it. An op's nested regions count as the op, so a loop nest that
// traincc-outline-parallel-loops later splits across threads keeps all
// its buffers for the whole parallel call.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/CPU/Passes.h"
#include "traincc/Codegen/Common/BufferUtils.h"
#include "traincc/Codegen/Common/MemoryPlan.h"
#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/SetVector.h"

namespace traincc {
#define GEN_PASS_DEF_PLANSTEPMEMORYPASS
#include "traincc/Codegen/CPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;
using codegen::kSavedBytesAttrName;
using codegen::kWorkspaceArgAttrName;
using codegen::kWorkspaceBytesAttrName;

namespace {

/// Cache lines, and the widest vector loads the kernels make.
constexpr int64_t kWorkspaceAlignment = 64;

/// One memref.alloc and what the plan needs to know about it.
struct Temporary {
  memref::AllocOp alloc;
  codegen::PlannedBuffer life;
  SmallVector<memref::DeallocOp> deallocs;
};

struct PlanStepMemoryPass
    : public traincc::impl::PlanStepMemoryPassBase<PlanStepMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && !func.isPrivate())
        if (failed(plan(module, func)))
          return signalPassFailure();
  }

  LogicalResult plan(ModuleOp module, func::FuncOp func) {
    Block &body = func.getBody().front();
    DenseMap<Operation *, int64_t> position;
    for (Operation &op : body)
      position[&op] = position.size();
    int64_t end = position.size();
    auto topLevel = [&](Operation *op) {
      return position.lookup(body.findAncestorOpInBlock(*op));
    };

    SmallVector<Temporary> temporaries;
    WalkResult walk = func.walk([&](memref::AllocOp alloc) {
      MemRefType type = alloc.getType();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity()) {
        alloc.emitError("a step's temporaries need a static shape and the "
                        "identity layout, not ")
            << type;
        return WalkResult::interrupt();
      }
      Temporary t;
      t.alloc = alloc;
      t.life.bytes = codegen::staticByteSize(type);
      t.life.first = t.life.last = topLevel(alloc);
      // Every value that may view the allocation: results of ops that take
      // it, and, for a use inside a region, the results of the top-level
      // op around it (an scf.for that yields it).
      llvm::SetVector<Value> aliases;
      aliases.insert(alloc.getResult());
      for (unsigned i = 0; i < aliases.size(); ++i) {
        for (OpOperand &use : aliases[i].getUses()) {
          Operation *user = use.getOwner();
          if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
            t.deallocs.push_back(dealloc);
            continue;
          }
          Operation *top = body.findAncestorOpInBlock(*user);
          // Returned buffers would outlive the step (bufferization turns
          // results into out-parameters, so there are none).
          bool returned =
              top == user && user->hasTrait<OpTrait::ReturnLike>();
          t.life.last =
              std::max(t.life.last, returned ? end : position.lookup(top));
          for (Value result : user->getResults())
            if (isa<BaseMemRefType>(result.getType()))
              aliases.insert(result);
          if (top != user)
            for (Value result : top->getResults())
              if (isa<BaseMemRefType>(result.getType()))
                aliases.insert(result);
        }
      }
      temporaries.push_back(std::move(t));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    if (temporaries.empty())
      return success();

    SmallVector<codegen::PlannedBuffer> buffers;
    for (const Temporary &t : temporaries)
      buffers.push_back(t.life);
    int64_t bytes = codegen::planArena(buffers, kWorkspaceAlignment);
    std::optional<int64_t> backward = backwardStart(module, func, position);

    OpBuilder builder(func.getContext());
    auto type = MemRefType::get({std::max<int64_t>(bytes, 1)},
                                builder.getI8Type());
    unsigned index = func.getNumArguments();
    NamedAttribute role(builder.getStringAttr(kWorkspaceArgAttrName),
                        builder.getUnitAttr());
    if (failed(func.insertArgument(index, type,
                                   builder.getDictionaryAttr({role}),
                                   func.getLoc())))
      return failure();
    Value workspace = func.getArgument(index);
    for (auto [t, planned] : llvm::zip(temporaries, buffers)) {
      for (memref::DeallocOp dealloc : t.deallocs)
        dealloc.erase();
      builder.setInsertionPoint(t.alloc);
      Value offset = arith::ConstantIndexOp::create(builder, t.alloc.getLoc(),
                                                    planned.offset);
      Value view = memref::ViewOp::create(builder, t.alloc.getLoc(),
                                          t.alloc.getType(), workspace, offset,
                                          ValueRange{});
      t.alloc.getResult().replaceAllUsesWith(view);
      t.alloc.erase();
    }
    func->setAttr(kWorkspaceBytesAttrName, builder.getI64IntegerAttr(bytes));
    if (backward)
      func->setAttr(kSavedBytesAttrName,
                    builder.getI64IntegerAttr(codegen::bytesLiveAcross(
                        buffers, *backward, kWorkspaceAlignment)));
    return success();
  }

  /// For a step that accumulates gradients, the position where its backward
  /// pass starts: where the loss (the buffer copied into the `loss`
  /// out-parameter) is allocated or first written; the backward pass
  /// follows the loss.
  std::optional<int64_t>
  backwardStart(ModuleOp module, func::FuncOp func,
                const DenseMap<Operation *, int64_t> &position) {
    Value loss = codegen::lossOfGradientStep(module, func);
    if (!loss)
      return std::nullopt;
    for (Operation *user : loss.getUsers())
      if (auto copy = dyn_cast<memref::CopyOp>(user))
        if (copy.getTarget() == loss)
          loss = codegen::rootBuffer(copy.getSource());
    Block &body = func.getBody().front();
    std::optional<int64_t> first;
    if (Operation *def = loss.getDefiningOp())
      first = position.lookup(body.findAncestorOpInBlock(*def));
    for (Operation *user : loss.getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      if (isa<memref::ViewOp>(user) && top == user)
        continue;
      int64_t at = position.lookup(top);
      if (!first || at < *first)
        first = at;
    }
    return first;
  }
};

} // namespace
