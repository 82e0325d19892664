//===- MapGPUReductions.cpp - block-wide tree reductions ------------------===//
//
// One thread per output sums a long reduction serially and leaves the GPU
// idle when there are few outputs (BatchNorm statistics: one per channel
// over N*H*W values; bias gradients; row maxima over a long row). Here a
// whole block computes one output: each thread folds a strided share of the
// terms with the op's own body, then the block combines the threads'
// partials in shared memory, halving the active threads between barriers.
// The combination order is fixed, so results are deterministic.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/GPU/Passes.h"

#include "GPUKernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/MathExtras.h"

namespace traincc {
#define GEN_PASS_DEF_MAPGPUREDUCTIONSPASS
#include "traincc/Codegen/GPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;
using namespace traincc::gpu_kernels;

namespace {

/// The associative step of a body `yield combine(out, f(ins))`: the
/// combining op, which of its operands is `out`, and its identity.
struct Combiner {
  Operation *op;
  unsigned outOperand;
  TypedAttr identity;

  /// `combine(acc, value)`, with `acc` where the body has `out`.
  Value apply(OpBuilder &b, Value acc, Value value) const {
    IRMapping mapping;
    mapping.map(op->getOperand(outOperand), acc);
    mapping.map(op->getOperand(1 - outOperand), value);
    return b.clone(*op, mapping)->getResult(0);
  }
};

/// The identity of the floating-point combining op `op`, if it is one of
/// the associative and commutative ones.
TypedAttr identityOf(Operation *op, FloatType type) {
  const llvm::fltSemantics &semantics = type.getFloatSemantics();
  if (isa<arith::AddFOp>(op))
    return FloatAttr::get(type, llvm::APFloat::getZero(semantics));
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op))
    return FloatAttr::get(type, llvm::APFloat::getInf(semantics, true));
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(op))
    return FloatAttr::get(type, llvm::APFloat::getInf(semantics, false));
  return {};
}

/// Matches a body that folds one term into `out` with an associative op:
/// `out` is used once, by the op whose result the body yields. Bodies that
/// read loop positions (`linalg.index`) are left alone.
std::optional<Combiner> matchCombiner(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (!body.getOps<linalg::IndexOp>().empty())
    return std::nullopt;
  BlockArgument out = body.getArguments().back();
  auto type = dyn_cast<FloatType>(out.getType());
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (!type || yield.getValues().size() != 1 || !out.hasOneUse())
    return std::nullopt;
  Operation *combine = yield.getValues().front().getDefiningOp();
  if (!combine || combine->getBlock() != &body ||
      combine->getNumOperands() != 2 || combine->getNumResults() != 1 ||
      combine->getResult(0).getType() != type)
    return std::nullopt;
  TypedAttr identity = identityOf(combine, type);
  if (!identity)
    return std::nullopt;
  for (unsigned i = 0; i < 2; ++i)
    if (combine->getOperand(i) == out)
      return Combiner{combine, i, identity};
  return std::nullopt;
}

/// The loops of a reduction, split into output (parallel) and term
/// (reduction) loops, each in loop order.
struct ReductionShape {
  SmallVector<unsigned> outputDims, termDims;
  SmallVector<int64_t> outputSizes, termSizes;
  int64_t outputs = 1, terms = 1;
};

ReductionShape shapeOf(linalg::GenericOp op) {
  ReductionShape shape;
  for (auto [dim, range, iterator] :
       llvm::enumerate(op.getStaticLoopRanges(), op.getIteratorTypesArray())) {
    if (linalg::isParallelIterator(iterator)) {
      shape.outputDims.push_back(dim);
      shape.outputSizes.push_back(range);
      shape.outputs *= range;
    } else {
      shape.termDims.push_back(dim);
      shape.termSizes.push_back(range);
      shape.terms *= range;
    }
  }
  return shape;
}

/// Whether `map` reads any loop of `dims`.
bool usesAny(AffineMap map, ArrayRef<unsigned> dims) {
  return llvm::any_of(dims, [&](unsigned dim) {
    return map.isFunctionOfDim(dim);
  });
}

struct MapGPUReductionsPass
    : public traincc::impl::MapGPUReductionsPassBase<MapGPUReductionsPass> {
  using MapGPUReductionsPassBase::MapGPUReductionsPassBase;

  void runOnOperation() override {
    if (blockSize < 2 || blockSize > 1024 || !llvm::isPowerOf2_64(blockSize)) {
      getOperation().emitError("traincc-map-gpu-reductions: block-size must "
                               "be a power of two from 2 to 1024");
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::GenericOp, Combiner>> candidates;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || func.isPrivate())
        continue;
      for (auto op : func.getBody().front().getOps<linalg::GenericOp>())
        if (std::optional<Combiner> combiner = select(op))
          candidates.push_back({op, *combiner});
    }
    for (auto [op, combiner] : candidates)
      mapToBlocks(op, combiner);
  }

  /// The combiner of `op` if it is a long reduction with few outputs on
  /// static buffers.
  std::optional<Combiner> select(linalg::GenericOp op) {
    if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
        op.getNumReductionLoops() == 0 || !hasStaticShapes(op))
      return std::nullopt;
    ReductionShape shape = shapeOf(op);
    AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    if (!outMap.isProjectedPermutation() || usesAny(outMap, shape.termDims))
      return std::nullopt;
    // One block per output: the grid's x size bounds the outputs too.
    int64_t mostOutputs = std::min<int64_t>(maxOutputs, (int64_t(1) << 31) - 1);
    if (shape.outputs < 1 || shape.outputs > mostOutputs ||
        shape.terms < minReduction)
      return std::nullopt;
    return matchCombiner(op);
  }

  /// Replaces `op` by a launch of one block per output:
  ///
  ///   acc = identity
  ///   for t = tid; t < terms; t += threads: acc = body(ins[t], acc)
  ///   shared[tid] = acc; barrier
  ///   for s = threads/2 .. 2: if tid < s: shared[tid] =
  ///                               combine(shared[tid], shared[tid + s])
  ///                           barrier
  ///   if tid == 0: out = combine(out, combine(shared[0], shared[1]))
  void mapToBlocks(linalg::GenericOp op, const Combiner &combiner) {
    Location loc = op.getLoc();
    ReductionShape shape = shapeOf(op);
    std::optional<Value> initFill = takeInitFill(op);
    int64_t threads = std::min<int64_t>(
        blockSize, llvm::PowerOf2Ceil(std::max<int64_t>(shape.terms, 2)));
    OpBuilder builder(op);
    gpu::LaunchOp launch =
        createLaunch(builder, loc, {shape.outputs, 1, 1}, threads);
    Type element = combiner.identity.getType();
    Value shared = addSharedBuffer(launch, {threads}, element);
    OpBuilder b(launch.getBody().front().getTerminator());
    Value tid = launch.getThreadIds().x;
    Value zero = indexConstant(b, loc, 0);

    // The loop positions of this block's output; the term loops are filled
    // in per term.
    SmallVector<Value> ivs(op.getNumLoops(), zero);
    for (auto [dim, position] :
         llvm::zip(shape.outputDims, delinearize(b, loc, launch.getBlockIds().x,
                                                 shape.outputSizes)))
      ivs[dim] = position;

    // Inputs that do not vary along the terms (a per-channel mean) are read
    // once.
    SmallVector<Value> invariant(op.getNumDpsInputs());
    for (OpOperand *input : op.getDpsInputOperands()) {
      unsigned i = input->getOperandNumber();
      if (!isa<MemRefType>(input->get().getType()))
        invariant[i] = input->get();
      else if (!usesAny(op.getMatchingIndexingMap(input), shape.termDims))
        invariant[i] = loadOperand(b, loc, op, *input, ivs);
    }

    Value identity = arith::ConstantOp::create(b, loc, combiner.identity);
    auto strided = scf::ForOp::create(
        b, loc, tid, indexConstant(b, loc, shape.terms),
        indexConstant(b, loc, threads), ValueRange{identity},
        [&](OpBuilder &lb, Location at, Value term, ValueRange acc) {
          SmallVector<Value> termIvs(ivs);
          for (auto [dim, position] :
               llvm::zip(shape.termDims,
                         delinearize(lb, at, term, shape.termSizes)))
            termIvs[dim] = position;
          SmallVector<Value> args;
          for (OpOperand *input : op.getDpsInputOperands()) {
            Value value = invariant[input->getOperandNumber()];
            args.push_back(value ? value
                                 : loadOperand(lb, at, op, *input, termIvs));
          }
          args.push_back(acc.front());
          scf::YieldOp::create(lb, at, inlineBody(lb, op, args).front());
        });
    memref::StoreOp::create(b, loc, strided.getResult(0), shared, tid);
    gpu::BarrierOp::create(b, loc);

    // Halve the active threads per level; every thread reaches every
    // barrier.
    for (int64_t stride = threads / 2; stride > 1; stride /= 2) {
      Value active = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           tid,
                                           indexConstant(b, loc, stride));
      auto level = scf::IfOp::create(b, loc, active);
      OpBuilder lb = level.getThenBodyBuilder();
      Value other = arith::AddIOp::create(lb, loc, tid,
                                          indexConstant(lb, loc, stride));
      Value mine = memref::LoadOp::create(lb, loc, shared, tid);
      Value theirs = memref::LoadOp::create(lb, loc, shared, other);
      memref::StoreOp::create(lb, loc, combiner.apply(lb, mine, theirs), shared,
                              tid);
      gpu::BarrierOp::create(b, loc);
    }

    // Thread 0 combines the last two partials with the output's value.
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                        zero);
    auto last = scf::IfOp::create(b, loc, first);
    OpBuilder lb = last.getThenBodyBuilder();
    Value mine = memref::LoadOp::create(lb, loc, shared, zero);
    Value theirs =
        memref::LoadOp::create(lb, loc, shared, indexConstant(lb, loc, 1));
    Value total = combiner.apply(lb, mine, theirs);
    OpOperand *init = op.getDpsInitOperand(0);
    SmallVector<Value> outIndices = operandIndices(lb, loc, op, *init, ivs);
    Value old = initFill ? *initFill
                         : memref::LoadOp::create(lb, loc, init->get(),
                                                  outIndices)
                               .getResult();
    memref::StoreOp::create(lb, loc, combiner.apply(lb, old, total),
                            init->get(), outIndices);
    op.erase();
  }
};

} // namespace
