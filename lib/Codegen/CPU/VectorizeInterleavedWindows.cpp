//===- VectorizeInterleavedWindows.cpp - pooling rows as vector shuffles --===//
//
// Max pooling with 2x2 windows and stride 2 reads (and its gradient
// writes) input rows as `2 * ow + kw`: each output lane's elements are
// every other element of the row. LLVM vectorizes such loops with gathers
// and scatters, or not at all when the row is short (14 outputs), and the
// pooling kernels became a third of the example CNN's step once the
// convolutions were fast. Here such an op walks the row in chunks: one
// contiguous (masked) load of `kw * lanes` elements per operand, split into
// its `kw` phases by shuffles; the body runs once per phase on vectors; an
// output written the same way is interleaved back by shuffles and stored
// contiguously. A short reduction outside the window row (the window's
// height) is unrolled inside each chunk, so that its sums stay in
// registers; the other loops walk the buffers in memory order, except that
// output rows that overlap within a vector are visited even ones first.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/CPU/Passes.h"

#include "AffineStride.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace traincc {
#define GEN_PASS_DEF_VECTORIZEINTERLEAVEDWINDOWSPASS
#include "traincc/Codegen/CPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;

using traincc::cpu::strideOf;

namespace {

/// How an operand moves with the vector loop `v` and the window loop `k`.
enum class Walk {
  Invariant,   // along neither
  AlongVector, // contiguously along v, not along k
  AlongWindow, // contiguously along k, not along v
  Interleaved, // one row: `len(k) * v + k`
};

/// How many elements `operand`'s memory moves when loop `dim` steps by one,
/// if that is a fixed number (through its map and its buffer's strides).
std::optional<int64_t> elementStride(linalg::GenericOp op, OpOperand &operand,
                                     unsigned dim) {
  auto type = cast<MemRefType>(operand.get().getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return std::nullopt;
  AffineMap map = op.getMatchingIndexingMap(&operand);
  int64_t total = 0;
  for (unsigned i = 0; i < map.getNumResults(); ++i) {
    std::optional<int64_t> step = strideOf(map.getResult(i), dim);
    if (!step)
      return std::nullopt;
    if (*step == 0)
      continue;
    if (ShapedType::isDynamic(strides[i]))
      return std::nullopt;
    total += *step * strides[i];
  }
  return total;
}

struct Plan {
  unsigned vector, window;
  int64_t windowLength;
  SmallVector<Walk> walks; // per operand
};

/// `apply`'s expression over its operands (symbols after the dimensions)
/// as `constant + sum(coefficients[i] * operand i)`, if it is linear.
std::optional<std::pair<int64_t, SmallVector<int64_t>>>
linearForm(affine::AffineApplyOp apply) {
  AffineMap map = apply.getAffineMap();
  if (map.getNumResults() != 1)
    return std::nullopt;
  MLIRContext *context = apply.getContext();
  unsigned numDims = map.getNumDims(), numOperands = map.getNumInputs();
  SmallVector<AffineExpr> dims, symbols, zeros;
  for (unsigned i = 0; i < numDims; ++i)
    dims.push_back(getAffineDimExpr(i, context));
  for (unsigned i = 0; i < map.getNumSymbols(); ++i)
    symbols.push_back(getAffineDimExpr(numDims + i, context));
  AffineExpr expr = map.getResult(0).replaceDimsAndSymbols(dims, symbols);
  SmallVector<int64_t> coefficients;
  for (unsigned i = 0; i < numOperands; ++i) {
    std::optional<int64_t> c = strideOf(expr, i);
    if (!c)
      return std::nullopt;
    coefficients.push_back(*c);
    zeros.push_back(getAffineConstantExpr(0, context));
  }
  auto constant =
      dyn_cast<AffineConstantExpr>(expr.replaceDimsAndSymbols(zeros, {}));
  // strideOf is exact only for sums and constant multiples.
  if (!constant || !expr.isPureAffine())
    return std::nullopt;
  return std::make_pair(constant.getValue(), coefficients);
}

/// Body ops that apply lane by lane to vectors.
bool isVectorizableBody(linalg::GenericOp op) {
  for (Operation &inner : op.getRegion().front().without_terminator()) {
    if (isa<linalg::IndexOp>(inner))
      continue;
    if (auto apply = dyn_cast<affine::AffineApplyOp>(inner)) {
      if (!linearForm(apply))
        return false;
      continue;
    }
    if (!isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()) ||
        !OpTrait::hasElementwiseMappableTraits(&inner) ||
        inner.getNumRegions() != 0)
      return false;
  }
  return true;
}

std::optional<Plan> analyze(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() == 0 ||
      !isVectorizableBody(op))
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands())
    if (!isa<MemRefType>(operand.get().getType()))
      return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto iterators = op.getIteratorTypesArray();
  unsigned numLoops = op.getNumLoops();
  for (unsigned v = 0; v < numLoops; ++v) {
    if (!linalg::isParallelIterator(iterators[v]))
      continue;
    for (unsigned k = 0; k < numLoops; ++k) {
      if (k == v || ShapedType::isDynamic(ranges[k]) || ranges[k] < 2 ||
          ranges[k] > 4)
        continue;
      // The window loop runs innermost: a reduction keeps its order only
      // if no other reduction loop came after it.
      if (linalg::isReductionIterator(iterators[k]) &&
          llvm::any_of(llvm::seq(k + 1, numLoops), [&](unsigned later) {
            return linalg::isReductionIterator(iterators[later]);
          }))
        continue;
      Plan plan{v, k, ranges[k], {}};
      bool interleaves = false, fits = true;
      for (OpOperand &operand : op->getOpOperands()) {
        std::optional<int64_t> alongV = elementStride(op, operand, v);
        std::optional<int64_t> alongK = elementStride(op, operand, k);
        Walk walk;
        if (!alongV || !alongK)
          fits = false;
        else if (*alongV == 0 && *alongK == 0)
          walk = Walk::Invariant;
        else if (*alongV == 1 && *alongK == 0)
          walk = Walk::AlongVector;
        else if (*alongV == 0 && *alongK == 1)
          walk = Walk::AlongWindow;
        else if (*alongV == ranges[k] && *alongK == 1)
          walk = Walk::Interleaved;
        else
          fits = false;
        if (!fits)
          break;
        interleaves |= walk == Walk::Interleaved;
        // An output is written once per lane and window offset, or is a
        // reduction over the window.
        if (op.isDpsInit(&operand) &&
            !(walk == Walk::Interleaved ||
              (walk == Walk::AlongVector &&
               linalg::isReductionIterator(iterators[k])))) {
          fits = false;
          break;
        }
        plan.walks.push_back(walk);
      }
      if (fits && interleaves)
        return plan;
    }
  }
  return std::nullopt;
}

/// The reduction loops outside `v` and `k` that each chunk unrolls (in
/// their order, the last one varying fastest): all of them, if they are
/// short and static and every output is one vector along `v` (a sum over
/// the window) that they do not move. Their outputs then stay in registers
/// for the whole window instead of being stored and loaded again for each
/// window row (a masked load right after a masked store to the same place
/// waits for the store).
SmallVector<unsigned> unrolledReductions(linalg::GenericOp op,
                                         const Plan &plan) {
  constexpr int64_t kMaxUnrolled = 16;
  SmallVector<unsigned> dims;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto iterators = op.getIteratorTypesArray();
  int64_t product = 1;
  for (unsigned dim = 0; dim < op.getNumLoops(); ++dim) {
    if (dim == plan.vector || dim == plan.window ||
        !linalg::isReductionIterator(iterators[dim]))
      continue;
    if (ShapedType::isDynamic(ranges[dim]))
      return {};
    product *= ranges[dim];
    dims.push_back(dim);
  }
  if (product > kMaxUnrolled)
    return {};
  for (OpOperand &init : op.getDpsInitsMutable())
    if (plan.walks[init.getOperandNumber()] != Walk::AlongVector)
      return {};
  return dims;
}

/// The loops that stay loops around the chunks (all but `v`, `k` and the
/// `unrolled` ones), outermost first: the ones that move the operands'
/// memory farthest per step (summed over the operands) outermost, so that
/// the chunks walk the buffers in order. A 7-wide pooling row came with
/// the channels innermost (traincc-order-loops-for-vectorization puts a
/// loop of at least a vector's trip count there); every chunk then jumped
/// a channel's plane in each operand, and the 7x7 pooling fused with its
/// winner search took 2.6 times as long as the two apart. Reduction
/// loops keep their order among themselves, so that sums add in the same
/// order; if sorting would change it, the loops keep theirs.
SmallVector<unsigned> outerLoops(linalg::GenericOp op, const Plan &plan,
                                 ArrayRef<unsigned> unrolled) {
  SmallVector<unsigned> dims;
  for (unsigned dim = 0; dim < op.getNumLoops(); ++dim)
    if (dim != plan.vector && dim != plan.window &&
        !llvm::is_contained(unrolled, dim))
      dims.push_back(dim);
  llvm::DenseMap<unsigned, int64_t> span;
  for (unsigned dim : dims) {
    for (OpOperand &operand : op->getOpOperands()) {
      std::optional<int64_t> stride = elementStride(op, operand, dim);
      if (!stride)
        return dims;
      span[dim] += std::abs(*stride);
    }
  }
  SmallVector<unsigned> sorted(dims);
  llvm::stable_sort(sorted,
                    [&](unsigned a, unsigned b) { return span[a] > span[b]; });
  auto iterators = op.getIteratorTypesArray();
  auto reductions = [&](ArrayRef<unsigned> order) {
    SmallVector<unsigned> found;
    for (unsigned dim : order)
      if (linalg::isReductionIterator(iterators[dim]))
        found.push_back(dim);
    return found;
  };
  if (reductions(sorted) != reductions(dims))
    return dims;
  return sorted;
}

/// Whether the chunks visit the steps of the innermost of the `outer` loops
/// even ones first, then odd ones: when a sum's output, loaded and stored
/// once per chunk, moves by less than the chunks of one step span (the
/// next 7-wide output row, in vectors of 8), the next step's load overlaps
/// the masked store just made and waits for it (a masked store does not
/// forward to a load); two steps apart, they do not overlap.
bool alternatesSteps(linalg::GenericOp op, const Plan &plan,
                     ArrayRef<unsigned> outer, int64_t lanes) {
  if (outer.empty())
    return false;
  unsigned dim = outer.back();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamic(ranges[dim]) || ranges[dim] < 3 ||
      ShapedType::isDynamic(ranges[plan.vector]) ||
      !linalg::isParallelIterator(op.getIteratorTypesArray()[dim]))
    return false;
  int64_t span = llvm::divideCeil(ranges[plan.vector], lanes) * lanes;
  return llvm::any_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
    if (plan.walks[init.getOperandNumber()] != Walk::AlongVector)
      return false;
    std::optional<int64_t> stride = elementStride(op, init, dim);
    return stride && *stride > 0 && *stride < span;
  });
}

struct Vectorizer {
  linalg::GenericOp op;
  Plan plan;
  int64_t lanes;

  /// Element `indices` of `operand` as one offset into its flat view.
  Value flatOffset(OpBuilder &b, Location loc, Value offset,
                   ArrayRef<Value> strides, OpOperand &operand,
                   ArrayRef<Value> ivs) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    Value total = offset;
    for (auto [i, expr] : llvm::enumerate(map.getResults())) {
      Value index = affine::AffineApplyOp::create(
          b, loc, AffineMap::get(map.getNumDims(), 0, expr), ivs);
      total = arith::AddIOp::create(
          b, loc, total, arith::MulIOp::create(b, loc, index, strides[i]));
    }
    return total;
  }

  static SmallVector<int64_t> phaseLanes(int64_t phase, int64_t length,
                                         int64_t lanes) {
    SmallVector<int64_t> mask;
    for (int64_t i = 0; i < lanes; ++i)
      mask.push_back(i * length + phase);
    return mask;
  }

  void rewrite(RewriterBase &rewriter) {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    b.setInsertionPoint(op);
    unsigned numLoops = op.getNumLoops();
    int64_t length = plan.windowLength;
    SmallVector<Range> ranges =
        cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value lanesValue = arith::ConstantIndexOp::create(b, loc, lanes);
    Value lengthValue = arith::ConstantIndexOp::create(b, loc, length);

    // Every operand as a flat 1-D view of its elements, with its strides.
    SmallVector<Value> flat;
    SmallVector<Value> offsets;
    SmallVector<SmallVector<Value>> strides;
    for (OpOperand &operand : op->getOpOperands()) {
      auto metadata =
          memref::ExtractStridedMetadataOp::create(b, loc, operand.get());
      auto type = cast<MemRefType>(operand.get().getType());
      auto flatType = MemRefType::get(
          {ShapedType::kDynamic}, type.getElementType(),
          StridedLayoutAttr::get(b.getContext(), 0, {1}));
      // The view starts at the allocation's base; offsets carry the rest.
      Value span = arith::ConstantIndexOp::create(b, loc, 1);
      for (auto [size, stride] :
           llvm::zip(metadata.getSizes(), metadata.getStrides()))
        span = arith::AddIOp::create(
            b, loc, span,
            arith::MulIOp::create(
                b, loc, arith::SubIOp::create(b, loc, size, one), stride));
      span = arith::AddIOp::create(b, loc, span, metadata.getOffset());
      flat.push_back(memref::ReinterpretCastOp::create(
          b, loc, flatType, metadata.getBaseBuffer(),
          OpFoldResult(b.getIndexAttr(0)), ArrayRef<OpFoldResult>{span},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)}));
      offsets.push_back(metadata.getOffset());
      strides.push_back(SmallVector<Value>(metadata.getStrides()));
    }

    SmallVector<unsigned> unrolled = unrolledReductions(op, plan);
    SmallVector<unsigned> outer = outerLoops(op, plan, unrolled);
    SmallVector<Value> lbs, ubs, steps;
    for (unsigned dim : outer) {
      lbs.push_back(zero);
      ubs.push_back(getValueOrCreateConstantIndexOp(b, loc, ranges[dim].size));
      steps.push_back(one);
    }
    lbs.push_back(zero);
    ubs.push_back(
        getValueOrCreateConstantIndexOp(b, loc, ranges[plan.vector].size));
    steps.push_back(lanesValue);
    Value vectorSize = ubs.back();

    auto chunk = [&](OpBuilder &b, Location loc, ValueRange loopIvs) {
      SmallVector<Value> ivs(numLoops, zero);
      for (auto [dim, iv] : llvm::zip(outer, loopIvs.drop_back()))
        ivs[dim] = iv;
      Value start = loopIvs.back();
      ivs[plan.vector] = start;
      Value count = arith::MinSIOp::create(
          b, loc, lanesValue, arith::SubIOp::create(b, loc, vectorSize, start));
      Value laneMask = vector::CreateMaskOp::create(
          b, loc, VectorType::get({lanes}, b.getI1Type()), count);
      Value rowMask = vector::CreateMaskOp::create(
          b, loc, VectorType::get({lanes * length}, b.getI1Type()),
          arith::MulIOp::create(b, loc, count, lengthValue).getResult());

      // Each operand's values for window offset `phase` at the current
      // `ivs`: vectors, or scalars for those that do not move along the
      // vector loop.
      unsigned numOperands = op->getNumOperands();
      SmallVector<SmallVector<Value>> values(numOperands);
      SmallVector<Value> at(numOperands);
      auto loadOperand = [&](OpOperand &operand) {
        unsigned i = operand.getOperandNumber();
        values[i].clear();
        Type element = cast<MemRefType>(operand.get().getType())
                           .getElementType();
        at[i] = flatOffset(b, loc, offsets[i], strides[i], operand, ivs);
        auto vectorOf = [&](int64_t n) {
          return VectorType::get({n}, element);
        };
        Value pad = arith::ConstantOp::create(
            b, loc, vectorOf(lanes * length),
            DenseElementsAttr::get(vectorOf(lanes * length),
                                   b.getZeroAttr(element)));
        switch (plan.walks[i]) {
        case Walk::Invariant:
          values[i].assign(length, memref::LoadOp::create(
                                       b, loc, flat[i], ValueRange{at[i]}));
          break;
        case Walk::AlongWindow:
          for (int64_t phase = 0; phase < length; ++phase)
            values[i].push_back(memref::LoadOp::create(
                b, loc, flat[i],
                ValueRange{arith::AddIOp::create(
                    b, loc, at[i],
                    arith::ConstantIndexOp::create(b, loc, phase))}));
          break;
        case Walk::AlongVector:
          values[i].assign(
              length,
              vector::MaskedLoadOp::create(
                  b, loc, vectorOf(lanes), flat[i], ValueRange{at[i]},
                  laneMask,
                  arith::ConstantOp::create(
                      b, loc, vectorOf(lanes),
                      DenseElementsAttr::get(vectorOf(lanes),
                                             b.getZeroAttr(element)))));
          break;
        case Walk::Interleaved: {
          Value row = vector::MaskedLoadOp::create(
              b, loc, vectorOf(lanes * length), flat[i], ValueRange{at[i]},
              rowMask, pad);
          for (int64_t phase = 0; phase < length; ++phase)
            values[i].push_back(vector::ShuffleOp::create(
                b, loc, row, row, phaseLanes(phase, length, lanes)));
          break;
        }
        }
      };
      // Outputs once per chunk: the unrolled loops do not move them.
      for (OpOperand &init : op.getDpsInitsMutable())
        loadOperand(init);

      // The body once per window offset, on vectors; a reduction over the
      // window carries its outputs from one offset to the next.
      Block &body = op.getRegion().front();
      unsigned numInputs = op.getNumDpsInputs();
      SmallVector<Value> carried;
      for (unsigned o = 0; o < op.getNumDpsInits(); ++o)
        carried.push_back(values[numInputs + o][0]);
      SmallVector<SmallVector<Value>> written(op.getNumDpsInits());
      Value laneSteps = vector::StepOp::create(
          b, loc, VectorType::get({lanes}, b.getIndexType()));
      auto broadcast = [&](Value value) -> Value {
        if (isa<VectorType>(value.getType()))
          return value;
        return vector::BroadcastOp::create(
            b, loc, VectorType::get({lanes}, value.getType()), value);
      };
      // Every point of the unrolled loops in their order, the last one
      // varying fastest (once, with none).
      SmallVector<int64_t> point(unrolled.size(), 0);
      SmallVector<int64_t> loopRanges = op.getStaticLoopRanges();
      auto nextPoint = [&]() {
        for (int64_t j = static_cast<int64_t>(unrolled.size()) - 1; j >= 0;
             --j) {
          if (++point[j] < loopRanges[unrolled[j]])
            return true;
          point[j] = 0;
        }
        return false;
      };
      do {
        for (auto [dim, value] : llvm::zip(unrolled, point))
          ivs[dim] = arith::ConstantIndexOp::create(b, loc, value);
        for (OpOperand *input : op.getDpsInputOperands())
          loadOperand(*input);
        for (int64_t phase = 0; phase < length; ++phase) {
          IRMapping mapping;
          for (unsigned i = 0; i < numInputs; ++i)
            mapping.map(body.getArgument(i), values[i][phase]);
          for (unsigned o = 0; o < op.getNumDpsInits(); ++o)
            mapping.map(body.getArgument(numInputs + o),
                        plan.walks[numInputs + o] == Walk::Interleaved
                            ? values[numInputs + o][phase]
                            : carried[o]);
          for (Operation &inner : body.without_terminator()) {
            if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
              unsigned dim = index.getDim();
              Value result;
              if (dim == plan.vector)
                result = arith::AddIOp::create(
                    b, loc, laneSteps,
                    vector::BroadcastOp::create(b, loc, laneSteps.getType(),
                                                start));
              else if (dim == plan.window)
                result = arith::ConstantIndexOp::create(b, loc, phase);
              else
                result = ivs[dim];
              mapping.map(index.getResult(), result);
              continue;
            }
            if (auto apply = dyn_cast<affine::AffineApplyOp>(inner)) {
              auto [constant, coefficients] = *linearForm(apply);
              bool anyVector = llvm::any_of(apply.getOperands(), [&](Value v) {
                return isa<VectorType>(mapping.lookupOrDefault(v).getType());
              });
              if (!anyVector) {
                mapping.map(apply.getResult(),
                            b.clone(inner, mapping)->getResult(0));
                continue;
              }
              Value total =
                  broadcast(arith::ConstantIndexOp::create(b, loc, constant));
              for (auto [operand, coefficient] :
                   llvm::zip(apply.getOperands(), coefficients)) {
                if (coefficient == 0)
                  continue;
                Value term = broadcast(mapping.lookupOrDefault(operand));
                if (coefficient != 1)
                  term = arith::MulIOp::create(
                      b, loc, term,
                      broadcast(
                          arith::ConstantIndexOp::create(b, loc, coefficient)));
                total = arith::AddIOp::create(b, loc, total, term);
              }
              mapping.map(apply.getResult(), total);
              continue;
            }
            if (auto constant = dyn_cast<arith::ConstantOp>(inner)) {
              mapping.map(constant.getResult(), b.clone(inner)->getResult(0));
              continue;
            }
            SmallVector<Value> operands;
            for (Value operand : inner.getOperands())
              operands.push_back(broadcast(mapping.lookupOrDefault(operand)));
            SmallVector<Type> types;
            for (Type type : inner.getResultTypes())
              types.push_back(VectorType::get({lanes}, type));
            OperationState state(loc, inner.getName(), operands, types,
                                 inner.getAttrs());
            Operation *vectorized = b.create(state);
            mapping.map(inner.getResults(), vectorized->getResults());
          }
          auto yield = cast<linalg::YieldOp>(body.getTerminator());
          for (unsigned o = 0; o < op.getNumDpsInits(); ++o) {
            Value result =
                broadcast(mapping.lookupOrDefault(yield.getOperand(o)));
            if (plan.walks[numInputs + o] == Walk::Interleaved)
              written[o].push_back(result);
            else
              carried[o] = result;
          }
        }
      } while (nextPoint());
      for (unsigned o = 0; o < op.getNumDpsInits(); ++o) {
        unsigned i = numInputs + o;
        if (plan.walks[i] != Walk::Interleaved) {
          vector::MaskedStoreOp::create(b, loc, flat[i], ValueRange{at[i]},
                                        laneMask, carried[o]);
          continue;
        }
        // Phases side by side, then each lane's phases next to each other.
        Value all = written[o][0];
        for (int64_t phase = 1; phase < length; ++phase) {
          int64_t have = lanes * phase;
          SmallVector<int64_t> concat;
          for (int64_t j = 0; j < have + lanes; ++j)
            concat.push_back(j);
          all = vector::ShuffleOp::create(b, loc, all, written[o][phase],
                                          concat);
        }
        SmallVector<int64_t> order;
        for (int64_t j = 0; j < lanes * length; ++j)
          order.push_back((j % length) * lanes + j / length);
        Value row = vector::ShuffleOp::create(b, loc, all, all, order);
        vector::MaskedStoreOp::create(b, loc, flat[i], ValueRange{at[i]},
                                      rowMask, row);
      }
    };
    if (!alternatesSteps(op, plan, outer, lanes)) {
      scf::buildLoopNest(b, loc, lbs, ubs, steps, chunk);
    } else {
      // The innermost outer loop's even steps, then its odd ones.
      unsigned last = outer.size() - 1;
      Value two = arith::ConstantIndexOp::create(b, loc, 2);
      scf::buildLoopNest(
          b, loc, ArrayRef(lbs).take_front(last),
          ArrayRef(ubs).take_front(last), ArrayRef(steps).take_front(last),
          [&](OpBuilder &b, Location loc, ValueRange outerIvs) {
            auto parity = scf::ForOp::create(b, loc, zero, two, one);
            b.setInsertionPointToStart(parity.getBody());
            auto step = scf::ForOp::create(b, loc, parity.getInductionVar(),
                                           ubs[last], two);
            b.setInsertionPointToStart(step.getBody());
            auto chunks =
                scf::ForOp::create(b, loc, zero, vectorSize, lanesValue);
            b.setInsertionPointToStart(chunks.getBody());
            SmallVector<Value> ivs(outerIvs);
            ivs.append({step.getInductionVar(), chunks.getInductionVar()});
            chunk(b, loc, ivs);
          });
    }
    rewriter.eraseOp(op);
  }
};

struct VectorizeInterleavedWindowsPass
    : public traincc::impl::VectorizeInterleavedWindowsPassBase<
          VectorizeInterleavedWindowsPass> {
  using VectorizeInterleavedWindowsPassBase::
      VectorizeInterleavedWindowsPassBase;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, Plan>> found;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<Plan> plan = analyze(op))
        found.push_back({op, *plan});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, plan] : found) {
      // Short rows (a 7-wide pooling output) take narrower vectors.
      int64_t size = op.getStaticLoopRanges()[plan.vector];
      int64_t lanes = vectorWidth;
      if (!ShapedType::isDynamic(size))
        while (lanes > 4 && lanes / 2 >= size)
          lanes /= 2;
      Vectorizer{op, plan, lanes}.rewrite(rewriter);
    }
  }
};

} // namespace
