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
// contiguously.
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

    SmallVector<unsigned> outer;
    SmallVector<Value> lbs, ubs, steps;
    for (unsigned dim = 0; dim < numLoops; ++dim) {
      if (dim == plan.vector || dim == plan.window)
        continue;
      outer.push_back(dim);
      lbs.push_back(zero);
      ubs.push_back(getValueOrCreateConstantIndexOp(b, loc, ranges[dim].size));
      steps.push_back(one);
    }
    lbs.push_back(zero);
    ubs.push_back(
        getValueOrCreateConstantIndexOp(b, loc, ranges[plan.vector].size));
    steps.push_back(lanesValue);
    Value vectorSize = ubs.back();

    scf::buildLoopNest(b, loc, lbs, ubs, steps, [&](OpBuilder &b, Location loc,
                                                    ValueRange loopIvs) {
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

      // Each operand's values for window offset `phase`: vectors, or
      // scalars for those that do not move along the vector loop.
      unsigned numOperands = op->getNumOperands();
      SmallVector<SmallVector<Value>> values(numOperands);
      SmallVector<Value> at(numOperands);
      for (OpOperand &operand : op->getOpOperands()) {
        unsigned i = operand.getOperandNumber();
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
      }

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
            Value total = broadcast(
                arith::ConstantIndexOp::create(b, loc, constant));
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
            mapping.map(constant.getResult(),
                        b.clone(inner)->getResult(0));
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
          Value result = broadcast(mapping.lookupOrDefault(yield.getOperand(o)));
          if (plan.walks[numInputs + o] == Walk::Interleaved)
            written[o].push_back(result);
          else
            carried[o] = result;
        }
      }
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
    });
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
