//===- VectorizeLowPrecisionContractions.cpp - bf16/f16 dot products ------===//
//
// Mixed precision makes convolutions and matmuls read bf16/f16 operands and
// accumulate in f32: `out += extf(a) * extf(b)`. Left to LLVM, the widening
// conversions (scalar vcvtph2ps, or bf16's integer shifts) and the short
// innermost loops of small convolutions (a 14-wide row) leave these loop
// nests scalar and fully unrolled. Here each such linalg.generic becomes an
// explicit loop nest over 1-D vectors along its innermost loop (already the
// contiguous one, traincc-order-loops-for-vectorization):
//
//  * innermost loop parallel (forward convolutions, data gradients): a
//    vector of outputs stays in registers across all reduction loops; each
//    lane adds its products in the scalar loop nest's order, so the results
//    are those of the scalar code, bit for bit;
//  * innermost loop a reduction along which both inputs are contiguous
//    (filter gradients, a matmul's K): a vector of partial sums runs across
//    all the reduction loops and is summed once at the end (a blocked sum:
//    other rounding at the last bits, as reassoc already allows). With
//    AVX512-BF16, bf16 pairs go through `vdpbf16ps` (x86vector.avx512.dot).
//
// Rows shorter than a vector, and the tail of longer ones, use masked loads
// whose masked-off lanes read zero.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/CPU/Passes.h"

#include "AffineStride.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/PatternMatch.h"

namespace traincc {
#define GEN_PASS_DEF_VECTORIZELOWPRECISIONCONTRACTIONSPASS
#include "traincc/Codegen/CPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;

using traincc::cpu::strideOf;

namespace {

bool isLowPrecision(Type type) { return type.isF16() || type.isBF16(); }

/// How an operand's indexing map moves with loop `dim`: not at all, by one
/// element along its last (unit-stride) dimension, or otherwise.
enum class Access { Invariant, Contiguous, Other };

Access accessOf(AffineMap map, unsigned dim) {
  unsigned last = map.getNumResults();
  Access access = Access::Invariant;
  for (unsigned i = 0; i < last; ++i) {
    std::optional<int64_t> stride = strideOf(map.getResult(i), dim);
    if (stride && *stride == 0)
      continue;
    if (i + 1 != last || !stride || *stride != 1)
      return Access::Other;
    access = Access::Contiguous;
  }
  return access;
}

/// Whether `type`'s innermost stride is one (identity or strided layout).
bool unitInnermostStride(MemRefType type) {
  if (type.getRank() == 0)
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  return strides.back() == 1;
}

/// The body `yield(out + extf(in0) * extf(in1))` (operands in any order),
/// with bf16/f16 inputs of one type and an f32 output.
bool isWideningMulAdd(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !op.hasPureBufferSemantics())
    return false;
  Block &body = op.getRegion().front();
  Type a = body.getArgument(0).getType(), b = body.getArgument(1).getType();
  if (!isLowPrecision(a) || a != b || !body.getArgument(2).getType().isF32())
    return false;
  if (body.getOperations().size() != 5)
    return false;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value out = body.getArgument(2);
  Value product = add.getLhs() == out ? add.getRhs() : add.getLhs();
  if (add.getLhs() != out && add.getRhs() != out)
    return false;
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return false;
  auto lhs = mul.getLhs().getDefiningOp<arith::ExtFOp>();
  auto rhs = mul.getRhs().getDefiningOp<arith::ExtFOp>();
  if (!lhs || !rhs)
    return false;
  Value x = lhs.getIn(), y = rhs.getIn();
  return (x == body.getArgument(0) && y == body.getArgument(1)) ||
         (x == body.getArgument(1) && y == body.getArgument(0));
}

struct Vectorizer {
  linalg::GenericOp op;
  int64_t width;     // f32 lanes
  bool dotBF16;      // x86vector.avx512.dot for a bf16 reduction
  bool reduceInner;  // innermost loop is a reduction
  Type lowType;
  unsigned numLoops;

  /// Indices into `operand` at the loop indices `ivs`.
  SmallVector<Value> indices(OpBuilder &b, Location loc, OpOperand &operand,
                             ArrayRef<Value> ivs) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    SmallVector<Value> result;
    for (AffineExpr expr : map.getResults())
      result.push_back(affine::AffineApplyOp::create(
          b, loc, AffineMap::get(numLoops, 0, expr), ivs));
    return result;
  }

  /// `lanes` elements of input `operand` from loop indices `ivs` on (the
  /// masked-off ones zero), or the one it reads, broadcast, when it does
  /// not move with the innermost loop.
  Value readInput(OpBuilder &b, Location loc, OpOperand &operand,
                  ArrayRef<Value> ivs, Value mask, int64_t lanes) {
    Value base = operand.get();
    SmallVector<Value> at = indices(b, loc, operand, ivs);
    auto lowVector = VectorType::get({lanes}, lowType);
    if (accessOf(op.getMatchingIndexingMap(&operand), numLoops - 1) ==
        Access::Invariant) {
      // Broadcast, then widened as a vector: a scalar f16 load and
      // vcvtph2ps would merge into (and so wait for) an unrelated register
      // (vpinsrw), an accumulator's, which serialises the accumulations.
      Value scalar = memref::LoadOp::create(b, loc, base, at);
      return vector::BroadcastOp::create(b, loc, lowVector, scalar);
    }
    Value zero = arith::ConstantOp::create(
        b, loc, lowVector,
        DenseElementsAttr::get(lowVector, b.getFloatAttr(lowType, 0.0)));
    return vector::MaskedLoadOp::create(b, loc, lowVector, base, at, mask,
                                        zero);
  }

  Value widen(OpBuilder &b, Location loc, Value value) {
    if (cast<VectorType>(value.getType()).getElementType().isF32())
      return value;
    auto type = VectorType::get(cast<VectorType>(value.getType()).getShape(),
                                b.getF32Type());
    return arith::ExtFOp::create(b, loc, type, value);
  }

  /// acc + a * b for one step of the innermost loop starting at `ivs`.
  Value accumulate(OpBuilder &b, Location loc, ArrayRef<Value> ivs,
                   Value chunkSize, Value acc) {
    int64_t lanes = dotBF16 ? 2 * width : width;
    Value mask = vector::CreateMaskOp::create(
        b, loc, VectorType::get({lanes}, b.getI1Type()), chunkSize);
    Value a = readInput(b, loc, *op.getDpsInputOperand(0), ivs, mask, lanes);
    Value c = readInput(b, loc, *op.getDpsInputOperand(1), ivs, mask, lanes);
    if (dotBF16)
      // Differs from f32 multiply-adds: each lane adds two products before
      // accumulating (one rounding for both) and vdpbf16ps treats denormal
      // inputs and results as zero and always rounds to nearest even.
      return x86vector::DotBF16Op::create(b, loc, acc.getType(), acc, a, c);
    Value product = arith::MulFOp::create(b, loc, widen(b, loc, a),
                                          widen(b, loc, c));
    return arith::AddFOp::create(b, loc, acc, product);
  }

  /// How many neighbouring outputs along `dim` (static size `size`) to
  /// compute together: each has its own accumulator, so that the adds of
  /// one do not wait for the previous ones (one chain is latency-bound),
  /// and the operand they share is loaded once.
  static int64_t jamFactor(int64_t size) {
    if (ShapedType::isDynamic(size) || size <= 1)
      return 1;
    if (size <= 8)
      return size;
    for (int64_t factor : {8, 6, 4, 2})
      if (size % factor == 0)
        return factor;
    return 1;
  }

  void rewrite(RewriterBase &rewriter) {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    b.setInsertionPoint(op);
    SmallVector<Range> ranges =
        cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc);
    SmallVector<int64_t> staticRanges = op.getStaticLoopRanges();
    auto iterators = op.getIteratorTypesArray();
    unsigned inner = numLoops - 1;
    Value zeroIndex = arith::ConstantIndexOp::create(b, loc, 0);
    Value oneIndex = arith::ConstantIndexOp::create(b, loc, 1);
    auto size = [&](unsigned dim) {
      return getValueOrCreateConstantIndexOp(b, loc, ranges[dim].size);
    };
    SmallVector<unsigned> parallel, reduction;
    for (unsigned dim = 0; dim < inner; ++dim)
      (linalg::isParallelIterator(iterators[dim]) ? parallel : reduction)
          .push_back(dim);
    // The outputs computed together: neighbours along the last outer
    // parallel loop.
    std::optional<unsigned> jamDim;
    int64_t jam = 1;
    if (!parallel.empty()) {
      jamDim = parallel.back();
      jam = jamFactor(staticRanges[*jamDim]);
    }

    auto accType = VectorType::get({width}, b.getF32Type());
    int64_t step = dotBF16 ? 2 * width : width;
    Value stepValue = arith::ConstantIndexOp::create(b, loc, step);
    Value innerSize = size(inner);
    OpOperand &output = *op.getDpsInitOperand(0);
    Value outBuffer = output.get();
    SmallVector<Value> ivs(numLoops, zeroIndex);

    SmallVector<Value> outerLbs, outerUbs, outerSteps;
    for (unsigned dim : parallel) {
      outerLbs.push_back(zeroIndex);
      outerUbs.push_back(size(dim));
      outerSteps.push_back(dim == jamDim
                               ? arith::ConstantIndexOp::create(b, loc, jam)
                               : oneIndex);
    }
    if (!reduceInner) {
      // The chunks of the innermost (parallel) loop, outside the reductions.
      outerLbs.push_back(zeroIndex);
      outerUbs.push_back(innerSize);
      outerSteps.push_back(stepValue);
    }
    SmallVector<Value> redLbs, redUbs, redSteps;
    for (unsigned dim : reduction) {
      redLbs.push_back(zeroIndex);
      redUbs.push_back(size(dim));
      redSteps.push_back(oneIndex);
    }
    if (reduceInner) {
      redLbs.push_back(zeroIndex);
      redUbs.push_back(innerSize);
      redSteps.push_back(stepValue);
    }

    scf::buildLoopNest(
        b, loc, outerLbs, outerUbs, outerSteps,
        [&](OpBuilder &b, Location loc, ValueRange outerIvs) {
          for (auto [dim, iv] : llvm::zip(parallel, outerIvs))
            ivs[dim] = iv;
          Value jamBase = jamDim ? ivs[*jamDim] : Value();
          // Points ivs at the `u`th output computed together.
          auto select = [&](OpBuilder &b, Location loc, int64_t u) {
            if (jamDim)
              ivs[*jamDim] =
                  u == 0 ? jamBase
                         : arith::AddIOp::create(
                               b, loc, jamBase,
                               arith::ConstantIndexOp::create(b, loc, u))
                               .getResult();
          };
          Value chunkSize;
          auto chunkOf = [&](OpBuilder &b, Location loc, Value start) {
            return arith::MinSIOp::create(
                b, loc, stepValue,
                arith::SubIOp::create(b, loc, innerSize, start));
          };
          SmallVector<Value> inits;
          SmallVector<SmallVector<Value>> outAt;
          Value outMask;
          Value zero = arith::ConstantOp::create(
              b, loc, accType,
              DenseElementsAttr::get(accType, b.getF32FloatAttr(0.0)));
          if (!reduceInner) {
            ivs[inner] = outerIvs.back();
            chunkSize = chunkOf(b, loc, ivs[inner]);
            outMask = vector::CreateMaskOp::create(
                b, loc, VectorType::get({width}, b.getI1Type()), chunkSize);
          }
          for (int64_t u = 0; u < jam; ++u) {
            if (reduceInner) {
              inits.push_back(zero);
              continue;
            }
            select(b, loc, u);
            outAt.push_back(indices(b, loc, output, ivs));
            inits.push_back(vector::MaskedLoadOp::create(
                b, loc, accType, outBuffer, outAt.back(), outMask, zero));
          }
          scf::LoopNest nest = scf::buildLoopNest(
              b, loc, redLbs, redUbs, redSteps, inits,
              [&](OpBuilder &b, Location loc, ValueRange redIvs,
                  ValueRange args) -> scf::ValueVector {
                for (auto [dim, iv] : llvm::zip(reduction, redIvs))
                  ivs[dim] = iv;
                Value chunk = chunkSize;
                if (reduceInner) {
                  ivs[inner] = redIvs.back();
                  chunk = chunkOf(b, loc, ivs[inner]);
                }
                scf::ValueVector accs;
                for (int64_t u = 0; u < jam; ++u) {
                  select(b, loc, u);
                  accs.push_back(accumulate(b, loc, ivs, chunk, args[u]));
                }
                return accs;
              });
          for (int64_t u = 0; u < jam; ++u) {
            Value acc = nest.results[u];
            if (!reduceInner) {
              vector::MaskedStoreOp::create(b, loc, outBuffer, outAt[u],
                                            outMask, acc);
              continue;
            }
            // One sum of the lanes, added to the output's initial value
            // (which does not move with the reduction loops).
            for (unsigned dim : reduction)
              ivs[dim] = zeroIndex;
            ivs[inner] = zeroIndex;
            select(b, loc, u);
            SmallVector<Value> at = indices(b, loc, output, ivs);
            Value sum = vector::ReductionOp::create(
                b, loc, vector::CombiningKind::ADD, acc, Value(),
                arith::FastMathFlags::reassoc);
            Value old = memref::LoadOp::create(b, loc, outBuffer, at);
            Value updated = arith::AddFOp::create(b, loc, old, sum);
            memref::StoreOp::create(b, loc, updated, outBuffer, at);
          }
        });
    rewriter.eraseOp(op);
  }
};

struct VectorizeLowPrecisionContractionsPass
    : public traincc::impl::VectorizeLowPrecisionContractionsPassBase<
          VectorizeLowPrecisionContractionsPass> {
  using VectorizeLowPrecisionContractionsPassBase::
      VectorizeLowPrecisionContractionsPassBase;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isWideningMulAdd(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      unsigned numLoops = op.getNumLoops();
      if (numLoops == 0)
        continue;
      unsigned inner = numLoops - 1;
      if (!llvm::all_of(op->getOperands(), [](Value operand) {
            return unitInnermostStride(cast<MemRefType>(operand.getType()));
          }))
        continue;
      bool reduceInner =
          linalg::isReductionIterator(op.getIteratorTypesArray()[inner]);
      Access out = accessOf(op.getMatchingIndexingMap(op.getDpsInitOperand(0)),
                            inner);
      Access in0 = accessOf(
          op.getMatchingIndexingMap(op.getDpsInputOperand(0)), inner);
      Access in1 = accessOf(
          op.getMatchingIndexingMap(op.getDpsInputOperand(1)), inner);
      if (in0 == Access::Other || in1 == Access::Other)
        continue;
      if (reduceInner ? (out != Access::Invariant ||
                         in0 != Access::Contiguous || in1 != Access::Contiguous)
                      : out != Access::Contiguous)
        continue;
      Type lowType = op.getRegion().front().getArgument(0).getType();
      // Without F16C each f16 lane would widen through a libgcc call.
      if (lowType.isF16() && !f16c)
        continue;
      Vectorizer vectorizer{op,
                            vectorWidth,
                            reduceInner && avx512bf16 && lowType.isBF16(),
                            reduceInner,
                            lowType,
                            numLoops};
      vectorizer.rewrite(rewriter);
    }
  }
};

} // namespace
