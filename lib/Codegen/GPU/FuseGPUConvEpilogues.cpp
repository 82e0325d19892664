//===- FuseGPUConvEpilogues.cpp - elementwise ops after a tiled conv ------===//
//
// In the backward step, a convolution's data gradient is read once, by the
// ReLU mask that turns it into the gradient of the BatchNorm before (with
// the residual's gradient added, and, on the GPU, BatchNorm's backward sums
// in the same kernel as partial sums per image row). Stored by the tiled
// convolution's kernel and loaded back by the mask's, the gradient crosses
// memory twice for nothing: the tiled kernel holds each output in a
// register, and can apply the mask there.
//
// This pass prepares that: it moves the convolution down to the op that
// reads its output (when nothing in between touches the output or writes
// the convolution's inputs), rebuilds that op over the convolution's
// parallel loops, reading the output at the convolution's own indices,
// and marks the convolution (kEpilogueAttrName). The row partials of
// BatchNorm's sums become partials per M tile and channel, the partials
// the tiled kernel's blocks sum in their epilogue, and the sums' second
// stages add those. Every op stays a plain linalg op that means what it
// computes; traincc-tile-gpu-contractions then builds one kernel of the
// pair, or, where its tiling does not match, two.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/Common/BufferUtils.h"
#include "traincc/Codegen/Common/ChannelSums.h"
#include "traincc/Codegen/GPU/Passes.h"

#include "GPUKernelBuilder.h"
#include "GemmView.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/MathExtras.h"

namespace traincc {
#define GEN_PASS_DEF_FUSEGPUCONVEPILOGUESPASS
#include "traincc/Codegen/GPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc::gpu_kernels;
using traincc::codegen::accessesBuffer;
using traincc::codegen::addsIntoOutput;
using traincc::codegen::onlyReadsBuffer;
using traincc::codegen::rootBuffer;

namespace {

/// For each dimension of `view`, a chain of collapse_shapes and
/// expand_shapes of `buffer` (static shapes), its index as an affine
/// expression of the indices of `buffer`: a collapsed dimension is the
/// row-major position of its group, an expanded one a digit of its
/// source's (as a matmul's [B*T, N] output read as [B, T, N]).
std::optional<SmallVector<AffineExpr>> indicesInBuffer(Value view,
                                                       Value buffer) {
  MLIRContext *context = view.getContext();
  unsigned bufferRank = cast<MemRefType>(buffer.getType()).getRank();
  if (view == buffer)
    return llvm::map_to_vector(
        llvm::seq<unsigned>(0, bufferRank),
        [&](unsigned dim) { return getAffineDimExpr(dim, context); });
  if (auto collapse = view.getDefiningOp<memref::CollapseShapeOp>()) {
    std::optional<SmallVector<AffineExpr>> source =
        indicesInBuffer(collapse.getSrc(), buffer);
    if (!source || !collapse.getSrcType().hasStaticShape())
      return std::nullopt;
    ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
    SmallVector<AffineExpr> indices;
    for (const ReassociationIndices &group :
         collapse.getReassociationIndices()) {
      AffineExpr index = getAffineConstantExpr(0, context);
      for (int64_t member : group)
        index = index * shape[member] + (*source)[member];
      indices.push_back(simplifyAffineExpr(index, bufferRank, 0));
    }
    return indices;
  }
  if (auto expand = view.getDefiningOp<memref::ExpandShapeOp>()) {
    std::optional<SmallVector<AffineExpr>> source =
        indicesInBuffer(expand.getSrc(), buffer);
    if (!source || !expand.getResultType().hasStaticShape())
      return std::nullopt;
    ArrayRef<int64_t> shape = expand.getResultType().getShape();
    SmallVector<AffineExpr> indices(shape.size());
    for (auto [sourceDim, group] :
         llvm::enumerate(expand.getReassociationIndices())) {
      int64_t inner = 1;
      for (int64_t member : llvm::reverse(group)) {
        AffineExpr index = (*source)[sourceDim].floorDiv(inner);
        if (member != group.front())
          index = index % shape[member];
        indices[member] = simplifyAffineExpr(index, bufferRank, 0);
        inner *= shape[member];
      }
    }
    return indices;
  }
  return std::nullopt;
}

/// A convolution, the op that reads its output, and how that op's loops
/// and sums become the epilogue's.
struct Plan {
  linalg::LinalgOp conv;
  GemmView view;
  linalg::GenericOp consumer;
  /// The consumer's input that reads the convolution's output.
  unsigned outputInput = 0;
  /// The convolution's parallel loops, and each one's position among them.
  SmallVector<unsigned> parallel;
  DenseMap<unsigned, unsigned> position;
  /// For each loop of the consumer, its expression over the epilogue's
  /// loops (the convolution's parallel loops).
  SmallVector<AffineExpr> loops;
  /// The consumer's sum outputs: each one's zero fill and second stage.
  struct Sum {
    unsigned output;
    linalg::FillOp fill;
    linalg::GenericOp stage;
  };
  SmallVector<Sum> sums;
  /// The convolution's loop of the sums' channel.
  unsigned channel = 0;
};

/// The zero fill that last wrote `buffer` before `op`, with nothing in
/// between accessing it; null if there is none.
linalg::FillOp zeroFillBefore(Operation *op, Value buffer) {
  Value root = rootBuffer(buffer);
  for (Operation *at = op->getPrevNode(); at; at = at->getPrevNode()) {
    auto fill = dyn_cast<linalg::FillOp>(at);
    if (fill && fill.getOutputs().front() == buffer) {
      FloatAttr value;
      if (matchPattern(fill.getInputs().front(), m_Constant(&value)) &&
          value.getValue().isZero())
        return fill;
      return nullptr;
    }
    if (accessesBuffer(at, root))
      return nullptr;
  }
  return nullptr;
}

/// The channel sum that reads all of `buffer` after `op` and is its last
/// reader; null if another op accesses it first or after.
linalg::GenericOp lastChannelSum(Operation *op, Value buffer) {
  Value root = rootBuffer(buffer);
  linalg::GenericOp stage;
  for (Operation *at = op->getNextNode(); at; at = at->getNextNode()) {
    if (!accessesBuffer(at, root))
      continue;
    auto generic = dyn_cast<linalg::GenericOp>(at);
    if (stage || !generic || !traincc::codegen::isChannelSum(generic) ||
        generic.getDpsInputOperand(0)->get() != buffer)
      return nullptr;
    stage = generic;
  }
  return stage;
}

/// Whether the buffer `root` is a temporary of the step: an allocation,
/// which nothing outside the function reads.
bool isTemporary(Value root) {
  return root.getDefiningOp<memref::AllocOp>() != nullptr;
}

/// How the sum output `index` of `plan.consumer` becomes channel partials,
/// or failure: its buffer is a temporary filled with zeros before the
/// consumer and read once after it, by a channel sum, and its second
/// index is the channel, the convolution's one N loop.
LogicalResult planSum(Plan &plan, unsigned index) {
  linalg::GenericOp consumer = plan.consumer;
  OpOperand *init = consumer.getDpsInitOperand(index);
  Value buffer = init->get();
  AffineMap map = consumer.getMatchingIndexingMap(init);
  if (!addsIntoOutput(consumer, index) || !isTemporary(rootBuffer(buffer)) ||
      !map.isProjectedPermutation() || map.getNumResults() < 2)
    return failure();
  linalg::FillOp fill = zeroFillBefore(consumer, buffer);
  linalg::GenericOp stage = lastChannelSum(consumer, buffer);
  if (!fill || !stage)
    return failure();
  auto channel =
      dyn_cast<AffineDimExpr>(plan.loops[map.getDimPosition(1)]);
  if (!channel || plan.view.n.size() != 1 ||
      plan.parallel[channel.getPosition()] != plan.view.n.front() ||
      plan.view.size(plan.view.batch) != 1)
    return failure();
  unsigned convLoop = plan.parallel[channel.getPosition()];
  if (!plan.sums.empty() && plan.channel != convLoop)
    return failure();
  plan.channel = convLoop;
  plan.sums.push_back({index, fill, stage});
  return success();
}

/// The consumer of `conv`'s output `plan` can become the epilogue of, with
/// its loops and sums mapped; failure where it cannot.
LogicalResult planConsumer(Plan &plan, linalg::GenericOp consumer) {
  linalg::LinalgOp conv = plan.conv;
  Value output = conv.getDpsInitOperand(0)->get();
  Value root = rootBuffer(output);
  if (!consumer.hasPureBufferSemantics() || consumer.hasIndexSemantics() ||
      !hasStaticShapes(consumer))
    return failure();
  std::optional<unsigned> reader;
  for (OpOperand *input : consumer.getDpsInputOperands())
    if (rootBuffer(input->get()) == root) {
      if (reader)
        return failure();
      reader = input->getOperandNumber();
    }
  if (!reader)
    return failure();
  plan.consumer = consumer;
  plan.outputInput = *reader;
  OpOperand &read = consumer->getOpOperand(*reader);
  AffineMap readMap = consumer.getMatchingIndexingMap(&read);
  std::optional<SmallVector<AffineExpr>> indices =
      indicesInBuffer(read.get(), output);
  if (!readMap.isPermutation() || !indices)
    return failure();

  // The consumer's loops as the convolution's parallel loops: the
  // output's dimension d is the loop its map puts there (0 for a loop of
  // one iteration, as a grouped convolution's one group).
  MLIRContext *context = conv.getContext();
  AffineMap outMap = conv.getMatchingIndexingMap(conv.getDpsInitOperand(0));
  SmallVector<AffineExpr> outputDims = llvm::map_to_vector(
      outMap.getResults(), [&](AffineExpr result) {
        unsigned loop = cast<AffineDimExpr>(result).getPosition();
        if (plan.view.ranges[loop] == 1)
          return getAffineConstantExpr(0, context);
        return getAffineDimExpr(plan.position.lookup(loop), context);
      });
  plan.loops.resize(consumer.getNumLoops());
  for (unsigned dim = 0; dim < readMap.getNumResults(); ++dim)
    plan.loops[readMap.getDimPosition(dim)] = simplifyAffineExpr(
        (*indices)[dim].replaceDims(outputDims), plan.parallel.size(), 0);

  // Each of the kernel's threads writes the outputs at its own positions:
  // no output may be one of the convolution's inputs or the consumer's,
  // but an output it updates in place at the same indices.
  SmallVector<Value> convInputs = llvm::map_to_vector(
      conv.getDpsInputs(), [](Value input) { return rootBuffer(input); });
  for (OpOperand &init : consumer.getDpsInitsMutable()) {
    Value initRoot = rootBuffer(init.get());
    if (initRoot == root || llvm::is_contained(convInputs, initRoot))
      return failure();
    for (OpOperand *input : consumer.getDpsInputOperands())
      if (rootBuffer(input->get()) == initRoot &&
          (input->get() != init.get() ||
           consumer.getMatchingIndexingMap(input) !=
               consumer.getMatchingIndexingMap(&init)))
        return failure();
    AffineMap map = consumer.getMatchingIndexingMap(&init);
    if (map.isPermutation())
      continue;
    if (failed(planSum(plan, init.getOperandNumber() -
                                 consumer.getNumDpsInputs())))
      return failure();
  }
  // Without sums, every loop must be parallel; with them, every loop the
  // partials do not index is one of their reductions.
  if (plan.sums.empty() &&
      consumer.getNumParallelLoops() != consumer.getNumLoops())
    return failure();
  return success();
}

/// The plan for `conv`: the op that next reads its output, if the
/// convolution can move down to it and it can become its epilogue.
std::optional<Plan> planEpilogue(linalg::LinalgOp conv, int64_t minWork) {
  std::optional<GemmView> view = analyzeContraction(conv);
  if (!view || !worthTiling(*view, minWork) || splitsAlongK(conv) ||
      conv->hasAttr(kChannelPartialsAttrName))
    return std::nullopt;
  Value root = rootBuffer(conv.getDpsInitOperand(0)->get());
  if (!isTemporary(root))
    return std::nullopt;
  Plan plan;
  plan.conv = conv;
  plan.view = *view;
  for (auto [dim, iterator] : llvm::enumerate(conv.getIteratorTypesArray()))
    if (linalg::isParallelIterator(iterator)) {
      plan.position[dim] = plan.parallel.size();
      plan.parallel.push_back(dim);
    }
  SmallVector<Value> inputs = llvm::map_to_vector(
      conv.getDpsInputs(), [](Value input) { return rootBuffer(input); });
  Operation *at = conv->getNextNode();
  for (; at; at = at->getNextNode()) {
    auto generic = dyn_cast<linalg::GenericOp>(at);
    if (generic && llvm::any_of(generic.getDpsInputs(), [&](Value input) {
          return rootBuffer(input) == root;
        }))
      break;
    // The convolution moves down past `at`; not between another marked
    // convolution and its epilogue.
    if (at->hasAttr(kEpilogueAttrName) || accessesBuffer(at, root) ||
        llvm::any_of(inputs, [&](Value input) {
          return !onlyReadsBuffer(at, input);
        }))
      return std::nullopt;
  }
  if (!at || failed(planConsumer(plan, cast<linalg::GenericOp>(at))))
    return std::nullopt;
  // The consumer is the output's last reader.
  for (Operation *after = at->getNextNode(); after;
       after = after->getNextNode())
    if (accessesBuffer(after, root))
      return std::nullopt;
  return plan;
}

/// `map` over the consumer's loops, over the epilogue's.
AffineMap overEpilogueLoops(const Plan &plan, AffineMap map) {
  return map.replaceDimsAndSymbols(plan.loops, {}, plan.parallel.size(), 0);
}

void fuse(Plan &plan) {
  linalg::LinalgOp conv = plan.conv;
  linalg::GenericOp consumer = plan.consumer;
  MLIRContext *context = conv.getContext();
  Location loc = consumer.getLoc();
  Value output = conv.getDpsInitOperand(0)->get();

  // The convolution, and the fill of its output right before it (the
  // tiled kernel starts its accumulators from that constant), move down
  // to the consumer; the partials are filled before them.
  Operation *fill = conv->getPrevNode();
  while (fill && isMemoryEffectFree(fill))
    fill = fill->getPrevNode();
  auto outputFill = dyn_cast_or_null<linalg::FillOp>(fill);
  conv->moveBefore(consumer);
  if (outputFill && outputFill.getOutputs().front() == output)
    outputFill->moveBefore(conv);
  else
    outputFill = nullptr;
  Operation *first = outputFill ? outputFill.getOperation()
                                : conv.getOperation();
  OpBuilder b(first);
  int64_t sizeM = plan.view.size(plan.view.m);
  int64_t tiles =
      sizeM > kMaxGemmTile ? llvm::divideCeil(sizeM, kMaxGemmTile) : 1;
  auto partialsType =
      MemRefType::get({tiles, plan.view.ranges[plan.channel]}, b.getF32Type());
  AffineMap partialsMap = overParallelLoops(
      conv, channelPartialsMap(plan.view, plan.channel, context));
  DenseMap<unsigned, Value> partials;
  Value zero;
  if (!plan.sums.empty())
    zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  for (const Plan::Sum &sum : plan.sums) {
    Value buffer = memref::AllocOp::create(b, loc, partialsType);
    linalg::FillOp::create(b, loc, zero, buffer);
    partials[sum.output] = buffer;
  }

  // The consumer over the convolution's parallel loops, reading its
  // output at its indices.
  SmallVector<Value> inputs = {output};
  SmallVector<AffineMap> maps = {overParallelLoops(
      conv, conv.getMatchingIndexingMap(conv.getDpsInitOperand(0)))};
  for (OpOperand *input : consumer.getDpsInputOperands()) {
    if (input->getOperandNumber() == plan.outputInput)
      continue;
    inputs.push_back(input->get());
    maps.push_back(
        overEpilogueLoops(plan, consumer.getMatchingIndexingMap(input)));
  }
  SmallVector<Value> inits;
  for (OpOperand &init : consumer.getDpsInitsMutable()) {
    unsigned index = init.getOperandNumber() - consumer.getNumDpsInputs();
    if (Value buffer = partials.lookup(index)) {
      inits.push_back(buffer);
      maps.push_back(partialsMap);
      continue;
    }
    inits.push_back(init.get());
    maps.push_back(
        overEpilogueLoops(plan, consumer.getMatchingIndexingMap(&init)));
  }
  // With sums, every loop but the channel's adds into the same partials.
  SmallVector<utils::IteratorType> iterators(plan.parallel.size(),
                                             utils::IteratorType::parallel);
  if (!plan.sums.empty())
    for (unsigned loop = 0; loop < iterators.size(); ++loop)
      if (plan.parallel[loop] != plan.channel)
        iterators[loop] = utils::IteratorType::reduction;

  b.setInsertionPoint(consumer);
  Block &body = consumer.getRegion().front();
  auto epilogue = linalg::GenericOp::create(
      b, loc, TypeRange{}, inputs, inits, maps, iterators,
      [&](OpBuilder &nb, Location, ValueRange args) {
        IRMapping mapping;
        mapping.map(body.getArgument(plan.outputInput), args[0]);
        unsigned next = 1;
        for (BlockArgument arg : body.getArguments())
          if (arg.getArgNumber() != plan.outputInput)
            mapping.map(arg, args[next++]);
        for (Operation &nested : body)
          nb.clone(nested, mapping);
      });
  for (NamedAttribute attr : consumer->getDiscardableAttrs())
    epilogue->setAttr(attr.getName(), attr.getValue());
  conv->setAttr(kEpilogueAttrName, UnitAttr::get(context));

  // Each sum's second stage adds the tiles' partials; the row partials go.
  SmallVector<Value> rows = llvm::map_to_vector(
      plan.sums, [&](const Plan::Sum &sum) {
        return consumer.getDpsInitOperand(sum.output)->get();
      });
  consumer->erase();
  for (auto [sum, buffer] : llvm::zip(plan.sums, rows)) {
    traincc::codegen::replaceChannelSum(sum.stage, partials[sum.output]);
    sum.fill->erase();
    if (auto alloc = buffer.getDefiningOp<memref::AllocOp>())
      if (alloc->use_empty())
        alloc->erase();
  }
}

struct FuseGPUConvEpiloguesPass
    : public traincc::impl::FuseGPUConvEpiloguesPassBase<
          FuseGPUConvEpiloguesPass> {
  using FuseGPUConvEpiloguesPassBase::FuseGPUConvEpiloguesPassBase;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> convs =
        stepContractionCandidates(getOperation());
    // One at a time: each fusion moves ops that the next plan looks at,
    // and erases a consumer that may be on the list.
    DenseSet<Operation *> erased;
    for (linalg::LinalgOp conv : convs) {
      if (erased.contains(conv))
        continue;
      if (std::optional<Plan> plan = planEpilogue(conv, minWork)) {
        erased.insert(plan->consumer);
        for (const Plan::Sum &sum : plan->sums)
          erased.insert(sum.stage);
        fuse(*plan);
      }
    }
  }
};

} // namespace
