//===- VectorizeContractions.cpp - register-tiled multiply-adds -----------===//
//
// Convolutions and matmuls are linalg.generic ops whose body is
// `out + a * b` (f32, or bf16/f16 widened to f32: mixed precision). Left to
// LLVM, each output's sum is one chain of dependent adds, the short
// innermost loops of small convolutions (a 14-wide row) end up scalar and
// fully unrolled, and every multiply-add loads both of its operands. Here
// each such op becomes an explicit loop nest over 1-D vectors along its
// innermost loop (already the contiguous one,
// traincc-order-loops-for-vectorization), with a register tile of
// outputs computed together:
//
//  * innermost loop parallel (forward convolutions, data gradients): a
//    vector of outputs stays in registers across all reduction loops; each
//    lane adds its products in the scalar loop nest's order, one fused
//    multiply-add (one rounding) per product;
//  * innermost loop a reduction along which both inputs are contiguous
//    (filter gradients, a matmul's K): a vector of partial sums runs across
//    all the reduction loops and is summed once at the end (a blocked sum:
//    other rounding at the last bits, as reassoc already allows). With
//    AVX512-BF16, bf16 pairs go through `vdpbf16ps` (x86vector.avx512.dot).
//
// The tile is an outer product where the loops allow it: outputs along a
// loop that one input does not move with share that input's load, outputs
// along a loop the other does not move with share the other's (output
// channels x rows for a convolution, output channels x filter columns for
// its filter gradient). Rows shorter than a vector, and the tail of longer
// ones, use masked loads whose masked-off lanes read zero. Which outputs
// share a tile does not depend on the threads' ranges, so results stay
// the same for any thread count.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/CPU/Passes.h"
#include "traincc/Codegen/Common/LinalgBuilders.h"
#include "traincc/Codegen/Common/ChannelSums.h"

#include "AffineStride.h"
#include "ChannelSums.h"
#include "MultiplyAdd.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/bit.h"

#include <tuple>

namespace traincc {
#define GEN_PASS_DEF_VECTORIZECONTRACTIONSPASS
#include "traincc/Codegen/CPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;

using traincc::cpu::isLowPrecision;
using traincc::cpu::isMultiplyAdd;
using traincc::cpu::Access;
using traincc::cpu::accessOf;
using traincc::cpu::strideOf;

namespace {

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

/// A loop along which neighbouring outputs are computed together, each in
/// its own accumulator; `stride` is its place in the accumulator index.
struct Jam {
  unsigned dim;
  int64_t factor;
  int64_t stride;
};

/// The largest divisor of `size` that is at most `limit`. A loop of
/// dynamic length (a thread's share of the channels) gets the largest power
/// of two, which most often divides it, and its remainder runs apart.
int64_t largestDivisor(int64_t size, int64_t limit) {
  if (ShapedType::isDynamic(size))
    return limit < 1 ? 1 : int64_t(llvm::bit_floor(uint64_t(limit)));
  for (int64_t d = std::min(size, limit); d > 1; --d)
    if (size % d == 0)
      return d;
  return 1;
}

/// The register tile: the outputs computed together. Best is an outer
/// product: along one loop the first input does not move (one load serves
/// all its outputs), along another the second, so that each step loads
/// `fa + fb` values for `fa * fb` multiply-adds. `innerVectors` (innermost
/// loop parallel, else 0) is the innermost loop's length in vectors:
/// neighbouring vectors along it can be a side of the tile too. Among the
/// tiles that fit in `maxAccumulators`, the one with the fewest loads per
/// multiply-add; then the one that loads the fewest bytes (an input that
/// moves with the innermost loop is loaded as a whole vector, one that
/// does not as one broadcast element: on AVX2, a 4x4 ResNet stage's tile
/// of 4 output channels x 2 vectors reads half the vectors per multiply-add
/// that 2 x 4 read, and its L2 keeps up); then the one along the innermost
/// loop's vectors, which lie next to each other in memory, where
/// neighbours along an outer loop (other images) stream as many separate
/// blocks through the cache; then the larger tile. Without such a pair of
/// loops, neighbours along the last outer parallel loop still accumulate
/// side by side, so that one's adds do not wait for the previous one's.
SmallVector<Jam> chooseTile(linalg::GenericOp op, ArrayRef<unsigned> parallel,
                            ArrayRef<int64_t> loopSizes, int64_t innerVectors,
                            int64_t maxAccumulators) {
  AffineMap in0 = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap in1 = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  // Loops along which input 0 (shares0) or input 1 (shares1) does not
  // move while the other does: the last outer one, and the innermost.
  SmallVector<unsigned, 2> shares0, shares1;
  std::optional<unsigned> outer0, outer1;
  for (unsigned dim : parallel) {
    if (loopSizes[dim] == 1)
      continue;
    bool reads0 = in0.isFunctionOfDim(dim), reads1 = in1.isFunctionOfDim(dim);
    if (!reads0 && reads1)
      outer0 = dim;
    if (reads0 && !reads1)
      outer1 = dim;
  }
  if (outer0)
    shares0.push_back(*outer0);
  if (outer1)
    shares1.push_back(*outer1);
  SmallVector<int64_t> sizes(loopSizes);
  unsigned inner = op.getNumLoops() - 1;
  if (innerVectors > 1) {
    sizes[inner] = innerVectors;
    bool reads0 = in0.isFunctionOfDim(inner), reads1 = in1.isFunctionOfDim(inner);
    if (!reads0 && reads1)
      shares0.push_back(inner);
    if (reads0 && !reads1)
      shares1.push_back(inner);
  }
  if (!shares0.empty() && !shares1.empty()) {
    // A step loads `fb` values of input 0 and `fa` of input 1; a vector
    // weighs twice a broadcast element.
    double bytes0 = in0.isFunctionOfDim(inner) ? 2.0 : 1.0;
    double bytes1 = in1.isFunctionOfDim(inner) ? 2.0 : 1.0;
    auto cost = [&](unsigned dimA, int64_t fa, unsigned dimB, int64_t fb) {
      double product = double(fa * fb);
      bool alongInner = (dimA == inner && fa > 1) || (dimB == inner && fb > 1);
      return std::make_tuple(double(fa + fb) / product,
                             (fa * bytes1 + fb * bytes0) / product,
                             !alongInner, -product);
    };
    unsigned bestDimA = shares0.front(), bestDimB = shares1.front();
    int64_t bestA = 1, bestB = 1;
    for (unsigned dimA : shares0) {
      for (unsigned dimB : shares1) {
        // At most one loop of dynamic length in the tile: one remainder
        // nest.
        bool oneSide = ShapedType::isDynamic(sizes[dimA]) &&
                       ShapedType::isDynamic(sizes[dimB]);
        for (int64_t fa = 1; fa <= maxAccumulators; ++fa) {
          if (largestDivisor(sizes[dimA], fa) != fa)
            continue;
          int64_t fb =
              oneSide ? 1 : largestDivisor(sizes[dimB], maxAccumulators / fa);
          if (cost(dimA, fa, dimB, fb) <
              cost(bestDimA, bestA, bestDimB, bestB)) {
            std::tie(bestDimA, bestA, bestDimB, bestB) =
                std::make_tuple(dimA, fa, dimB, fb);
          }
        }
      }
    }
    SmallVector<Jam> tile;
    if (bestA > 1)
      tile.push_back({bestDimA, bestA, 1});
    if (bestB > 1)
      tile.push_back({bestDimB, bestB, bestA});
    return tile;
  }
  if (parallel.empty() && shares0.empty() && shares1.empty())
    return {};
  unsigned dim = !shares1.empty()   ? shares1.front()
                 : !shares0.empty() ? shares0.front()
                                    : parallel.back();
  int64_t factor = largestDivisor(sizes[dim], 8);
  if (factor == 1)
    return {};
  return {Jam{dim, factor, 1}};
}

struct Vectorizer {
  linalg::GenericOp op;
  int64_t width;     // f32 lanes
  bool dotBF16;      // x86vector.avx512.dot for a bf16 reduction
  bool reduceInner;  // innermost loop is a reduction
  Type inputType;    // f32, or bf16/f16 widened to f32
  unsigned numLoops;
  int64_t maxAccumulators;
  int64_t cacheBytes; // inputs one reduction block may read
  // traincc.zero_init: the output was not filled; true (i1) in the first
  // reduction block, whose sums start from +0.0 (null when filled).
  Value firstBlock;
  // traincc.channel_sums: true (i1) in the last reduction block, whose
  // outputs are final.
  Value lastBlock;

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
    auto vectorType = VectorType::get({lanes}, inputType);
    if (accessOf(op.getMatchingIndexingMap(&operand), numLoops - 1) ==
        Access::Invariant) {
      // Broadcast, then widened as a vector: a scalar f16 load and
      // vcvtph2ps would merge into (and so wait for) an unrelated register
      // (vpinsrw), an accumulator's, which serialises the accumulations.
      Value scalar = memref::LoadOp::create(b, loc, base, at);
      return vector::BroadcastOp::create(b, loc, vectorType, scalar);
    }
    Value zero = arith::ConstantOp::create(
        b, loc, vectorType,
        DenseElementsAttr::get(vectorType, b.getFloatAttr(inputType, 0.0)));
    return vector::MaskedLoadOp::create(b, loc, vectorType, base, at, mask,
                                        zero);
  }

  Value widen(OpBuilder &b, Location loc, Value value) {
    if (cast<VectorType>(value.getType()).getElementType().isF32())
      return value;
    auto type = VectorType::get(cast<VectorType>(value.getType()).getShape(),
                                b.getF32Type());
    return arith::ExtFOp::create(b, loc, type, value);
  }

  /// acc + a * c, rounded once (a and c widened unless dotBF16).
  Value multiplyAdd(OpBuilder &b, Location loc, Value a, Value c, Value acc) {
    if (dotBF16)
      // Differs from f32 multiply-adds: each lane adds two products before
      // accumulating (one rounding for both) and vdpbf16ps treats denormal
      // inputs and results as zero and always rounds to nearest even.
      return x86vector::DotBF16Op::create(b, loc, acc.getType(), acc, a, c);
    return vector::FMAOp::create(b, loc, a, c, acc);
  }

  void rewrite(RewriterBase &rewriter) {
    OpBuilder &b = rewriter;
    b.setInsertionPoint(op);
    Location loc = op.getLoc();
    unsigned inner = numLoops - 1;
    auto iterators = op.getIteratorTypesArray();
    SmallVector<unsigned> parallel;
    for (unsigned dim = 0; dim < inner; ++dim)
      if (linalg::isParallelIterator(iterators[dim]))
        parallel.push_back(dim);
    SmallVector<int64_t> staticRanges = op.getStaticLoopRanges();
    int64_t innerVectors =
        reduceInner || ShapedType::isDynamic(staticRanges[inner])
            ? 0
            : llvm::divideCeil(staticRanges[inner], width);
    SmallVector<Jam> tile = chooseTile(op, parallel, staticRanges,
                                       innerVectors, maxAccumulators);
    SmallVector<Range> ranges =
        cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc);
    SmallVector<Value> lower(numLoops), upper(numLoops);
    for (unsigned dim = 0; dim < numLoops; ++dim) {
      lower[dim] = arith::ConstantIndexOp::create(b, loc, 0);
      upper[dim] = getValueOrCreateConstantIndexOp(b, loc, ranges[dim].size);
    }
    // The outermost reduction loop in blocks whose inputs stay in the
    // cache while every output tile walks them (see reductionBlock).
    if (std::optional<std::pair<unsigned, int64_t>> blocking =
            reductionBlock(staticRanges)) {
      auto [dim, block] = *blocking;
      Value blockSize = arith::ConstantIndexOp::create(b, loc, block);
      auto blocks = scf::ForOp::create(b, loc, lower[dim], upper[dim],
                                       blockSize);
      b.setInsertionPointToStart(blocks.getBody());
      Value start = blocks.getInductionVar();
      upper[dim] = arith::MinSIOp::create(
          b, loc, arith::AddIOp::create(b, loc, start, blockSize), upper[dim]);
      lower[dim] = start;
    }
    if (op->hasAttr(traincc::kZeroInitAttrName))
      firstBlock = isEdgeBlock(b, loc, staticRanges, lower, /*last=*/false);
    if (op->hasAttr(traincc::cpu::kChannelSumsAttrName))
      lastBlock = isEdgeBlock(b, loc, staticRanges, upper, /*last=*/true);
    // A tile along a loop of dynamic length (a thread's range) covers the
    // multiples of its factor; the rest runs without that side of the tile.
    auto dynamicJam = llvm::find_if(tile, [&](const Jam &jam) {
      return ShapedType::isDynamic(staticRanges[jam.dim]);
    });
    if (dynamicJam == tile.end()) {
      emitNest(b, loc, tile, lower, upper);
    } else {
      unsigned dim = dynamicJam->dim;
      Value size = upper[dim];
      Value factor = arith::ConstantIndexOp::create(b, loc, dynamicJam->factor);
      Value whole = arith::SubIOp::create(
          b, loc, size, arith::RemSIOp::create(b, loc, size, factor));
      upper[dim] = whole;
      emitNest(b, loc, tile, lower, upper);
      SmallVector<Jam> rest;
      int64_t stride = 1;
      for (const Jam &jam : tile) {
        if (jam.dim == dim)
          continue;
        rest.push_back({jam.dim, jam.factor, stride});
        stride *= jam.factor;
      }
      lower[dim] = whole;
      upper[dim] = size;
      emitNest(b, loc, rest, lower, upper);
    }
    rewriter.eraseOp(op);
  }

  /// Elements of input `operand` that one block of `block` steps of loop
  /// `dim` reads while the other loops run: its whole extent along indices
  /// that do not move with `dim`, the block's share along those that do,
  /// and one step of `outer` (the outermost parallel loop: what one of its
  /// iterations reads is all that needs to stay cached for the next tile;
  /// an input that does not move with it is reused by all of them). A
  /// dimension of dynamic size other than `outer`'s counts as 16.
  int64_t blockElements(OpOperand &operand, unsigned dim, int64_t block,
                        int64_t range, std::optional<unsigned> outer) {
    auto type = cast<MemRefType>(operand.get().getType());
    AffineMap map = op.getMatchingIndexingMap(&operand);
    int64_t elements = 1;
    for (auto [size, expr] : llvm::zip(type.getShape(), map.getResults())) {
      int64_t extent = ShapedType::isDynamic(size) ? 16 : size;
      if (outer && expr.isFunctionOfDim(*outer))
        extent = 1;
      else if (expr.isFunctionOfDim(dim))
        extent = std::max<int64_t>(1, extent * block / range);
      elements *= extent;
    }
    return elements;
  }

  /// The outermost reduction loop and its block size, when the inputs that
  /// all of its iterations read do not fit in `cacheBytes`. Without
  /// blocking, each output tile streams every input through the cache
  /// (ResNet filter gradients: the whole batch's activations once per four
  /// output channels). With it, a block's inputs stay cached while the
  /// tiles walk them; the outputs (or, innermost loop a reduction, their
  /// lanes' sums) are added to memory once per block. Blocks follow each
  /// other in the scalar order, so a vector of outputs rounds as before;
  /// a partial sum per block changes where a reduction's lanes are summed.
  std::optional<std::pair<unsigned, int64_t>>
  reductionBlock(ArrayRef<int64_t> ranges) {
    // Its producer laid the inputs out in blocks that stay cached while
    // the outer parallel loops hold still (the Winograd products).
    if (op->hasAttr(traincc::codegen::kCacheBlockedAttrName))
      return std::nullopt;
    auto iterators = op.getIteratorTypesArray();
    unsigned inner = numLoops - 1;
    std::optional<unsigned> outermost;
    int64_t innerSteps = 1; // vector steps of the other reduction loops
    for (unsigned dim = 0; dim < numLoops; ++dim) {
      if (!linalg::isReductionIterator(iterators[dim]))
        continue;
      if (ShapedType::isDynamic(ranges[dim]))
        return std::nullopt;
      if (!outermost && dim != inner) {
        outermost = dim;
        continue;
      }
      innerSteps *= dim == inner ? llvm::divideCeil(ranges[dim], width)
                                 : ranges[dim];
    }
    if (!outermost)
      return std::nullopt;
    std::optional<unsigned> outerParallel;
    for (unsigned dim = 0; dim < inner && !outerParallel; ++dim)
      if (linalg::isParallelIterator(iterators[dim]) && ranges[dim] != 1)
        outerParallel = dim;
    int64_t range = ranges[*outermost];
    int64_t elementBytes = inputType.getIntOrFloatBitWidth() / 8;
    auto bytes = [&](int64_t block) {
      int64_t total = 0;
      for (OpOperand *input : op.getDpsInputOperands())
        total += blockElements(*input, *outermost, block, range,
                               outerParallel);
      return total * elementBytes;
    };
    if (bytes(range) <= cacheBytes)
      return std::nullopt;
    int64_t block = 1;
    while (block < range && bytes(block + 1) <= cacheBytes)
      ++block;
    // Summing a reduction's lanes costs about as much as a dozen steps:
    // blocks of at least 32 vector steps.
    if (reduceInner)
      block = std::max<int64_t>(block, llvm::divideCeil(32, innerSteps));
    if (block >= range)
      return std::nullopt;
    // Equal blocks where possible.
    int64_t count = llvm::divideCeil(range, block);
    return std::make_pair(*outermost, llvm::divideCeil(range, count));
  }

  /// Whether the reduction block is the first (`last` false: its `bounds`
  /// are the lower ones, the blocked loop of reductionBlock's at its start)
  /// or the last (`bounds` upper, the blocked loop at its end); always true
  /// without blocking.
  Value isEdgeBlock(OpBuilder &b, Location loc, ArrayRef<int64_t> ranges,
                    ArrayRef<Value> bounds, bool last) {
    std::optional<std::pair<unsigned, int64_t>> blocking =
        reductionBlock(ranges);
    if (!blocking)
      return arith::ConstantIntOp::create(b, loc, 1, 1);
    int64_t edge = last ? ranges[blocking->first] : 0;
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                 bounds[blocking->first],
                                 arith::ConstantIndexOp::create(b, loc, edge));
  }

  /// The vector of outputs at `at` a tile starts from: loaded (`mask`'s
  /// lanes), or `zero` in the first block of an unfilled output (a masked
  /// load of no lanes where blocks follow: nothing is read).
  Value initialOutputs(OpBuilder &b, Location loc, ValueRange at, Value mask,
                       Value zero) {
    Value buffer = op.getDpsInitOperand(0)->get();
    if (firstBlock && matchPattern(firstBlock, m_One()))
      return zero;
    if (firstBlock) {
      auto maskType = cast<VectorType>(mask.getType());
      Value none = arith::ConstantOp::create(
          b, loc, maskType, DenseElementsAttr::get(maskType, false));
      mask = arith::SelectOp::create(b, loc, firstBlock, none, mask);
    }
    return vector::MaskedLoadOp::create(b, loc, zero.getType(), buffer, at,
                                        mask, zero);
  }

  /// The output at `at` a reduction's sum is added to: loaded, or +0.0 in
  /// the first block of an unfilled output.
  Value initialOutput(OpBuilder &b, Location loc, ValueRange at) {
    Value buffer = op.getDpsInitOperand(0)->get();
    if (firstBlock && matchPattern(firstBlock, m_One()))
      return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
    Value old = memref::LoadOp::create(b, loc, buffer, at);
    if (!firstBlock)
      return old;
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
    return arith::SelectOp::create(b, loc, firstBlock, zero, old);
  }


  /// traincc.channel_sums: adds the tile's stored vectors `accs` (lanes
  /// off in `maskOf(u)` as zero) to the second output at their [n, c]
  /// (ivs at the tile, `select` pointing them at output `u`): the vectors
  /// of one [n, c] first, then their lanes, in a fixed order. With
  /// traincc.channel_moments, `lanesOf(u)` (an index, clamped to [0,
  /// width]) says how many lanes `maskOf(u)` keeps.
  void addChannelSums(OpBuilder &b, Location loc, ArrayRef<Jam> tile,
                      ValueRange accs, function_ref<Value(int64_t)> maskOf,
                      function_ref<Value(int64_t)> lanesOf,
                      function_ref<void(OpBuilder &, Location, int64_t)> select,
                      ArrayRef<Value> ivs) {
    OpOperand &sums = *op.getDpsInitOperand(1);
    AffineMap map = op.getMatchingIndexingMap(&sums);
    auto type = cast<VectorType>(accs.front().getType());
    Value zero = arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, b.getF32FloatAttr(0.0)));
    // By [n, c]: the group's first output, its vectors' sum, its outputs.
    struct Group {
      int64_t first;
      Value sum;
      SmallVector<int64_t> members;
    };
    SmallVector<Group> groups;
    DenseMap<int64_t, unsigned> groupOf;
    for (auto [u, acc] : llvm::enumerate(accs)) {
      int64_t key = 0;
      for (const Jam &jam : tile)
        if (map.isFunctionOfDim(jam.dim))
          key += ((int64_t(u) / jam.stride) % jam.factor) * jam.stride;
      Value lanes = arith::SelectOp::create(b, loc, maskOf(u), acc, zero);
      auto [at, added] = groupOf.try_emplace(key, groups.size());
      if (added) {
        groups.push_back({int64_t(u), lanes, {int64_t(u)}});
        continue;
      }
      Group &group = groups[at->second];
      group.sum = arith::AddFOp::create(b, loc, group.sum, lanes);
      group.members.push_back(u);
    }
    bool moments = op->hasAttr(traincc::cpu::kChannelMomentsAttrName);
    for (const Group &group : groups) {
      select(b, loc, group.first);
      SmallVector<Value> at = indices(b, loc, sums, ivs);
      Value sum = vector::ReductionOp::create(
          b, loc, vector::CombiningKind::ADD, group.sum, Value(),
          arith::FastMathFlags::reassoc);
      Value old = memref::LoadOp::create(b, loc, sums.get(), at);
      memref::StoreOp::create(b, loc,
                              arith::AddFOp::create(b, loc, old, sum),
                              sums.get(), at);
      if (moments)
        mergeMoments(b, loc, group.members, accs, maskOf, lanesOf, sum, old,
                     at);
    }
  }

  /// traincc.channel_moments: merges the moments of the outputs `members`
  /// of one [n, c] (vectors `accs`, lanes `maskOf`/`lanesOf`; their sum
  /// `sum`) into the running ones at `at` (whose sum was `oldSum`), with
  /// Chan et al.'s formula: the tile's squares are taken around its own
  /// mean, and the two means' distance adds its weighted square.
  void mergeMoments(OpBuilder &b, Location loc, ArrayRef<int64_t> members,
                    ValueRange accs, function_ref<Value(int64_t)> maskOf,
                    function_ref<Value(int64_t)> lanesOf, Value sum,
                    Value oldSum, ValueRange at) {
    Value counts = op.getDpsInitOperand(2)->get();
    Value m2 = op.getDpsInitOperand(3)->get();
    auto type = cast<VectorType>(accs.front().getType());
    Value zero = arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, b.getF32FloatAttr(0.0)));
    Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0));
    Value lanes;
    for (int64_t u : members)
      lanes = lanes ? arith::AddIOp::create(b, loc, lanes, lanesOf(u))
                          .getResult()
                    : lanesOf(u);
    Value count = arith::SIToFPOp::create(
        b, loc, b.getF32Type(),
        arith::IndexCastOp::create(b, loc, b.getI64Type(), lanes));
    // Empty groups (vectors past a row's end) divide by one: 0 / 1.
    Value mean = arith::DivFOp::create(
        b, loc, sum, arith::MaximumFOp::create(b, loc, count, one));
    Value means = vector::BroadcastOp::create(b, loc, type, mean);
    Value squares = zero;
    for (int64_t u : members) {
      Value centred = arith::SelectOp::create(
          b, loc, maskOf(u), arith::SubFOp::create(b, loc, accs[u], means),
          zero);
      squares = vector::FMAOp::create(b, loc, centred, centred, squares);
    }
    Value square = vector::ReductionOp::create(
        b, loc, vector::CombiningKind::ADD, squares, Value(),
        arith::FastMathFlags::reassoc);
    Value oldCount = memref::LoadOp::create(b, loc, counts, at);
    Value oldM2 = memref::LoadOp::create(b, loc, m2, at);
    Value newCount = arith::AddFOp::create(b, loc, oldCount, count);
    Value oldMean = arith::DivFOp::create(
        b, loc, oldSum, arith::MaximumFOp::create(b, loc, oldCount, one));
    Value delta = arith::SubFOp::create(b, loc, mean, oldMean);
    // n * n' / (n + n'): zero while either side is empty.
    Value product = arith::MulFOp::create(b, loc, oldCount, count);
    Value weight = arith::DivFOp::create(
        b, loc, product, arith::MaximumFOp::create(b, loc, newCount, one));
    Value both = arith::AddFOp::create(b, loc, oldM2, square);
    Value spread = arith::MulFOp::create(
        b, loc, arith::MulFOp::create(b, loc, delta, delta), weight);
    Value merged = arith::AddFOp::create(b, loc, both, spread);
    memref::StoreOp::create(b, loc, newCount, counts, at);
    memref::StoreOp::create(b, loc, merged, m2, at);
  }

  /// The vector loop nest over [lower, upper) of every loop, `tile`'s
  /// outputs together.
  void emitNest(OpBuilder &b, Location loc, ArrayRef<Jam> tile,
                ArrayRef<Value> lower, ArrayRef<Value> upper) {
    auto iterators = op.getIteratorTypesArray();
    unsigned inner = numLoops - 1;
    Value zeroIndex = arith::ConstantIndexOp::create(b, loc, 0);
    Value oneIndex = arith::ConstantIndexOp::create(b, loc, 1);
    SmallVector<unsigned> parallel, reduction;
    for (unsigned dim = 0; dim < inner; ++dim)
      (linalg::isParallelIterator(iterators[dim]) ? parallel : reduction)
          .push_back(dim);
    int64_t numAccs = 1;
    for (const Jam &jam : tile)
      numAccs *= jam.factor;
    auto jamOf = [&](unsigned dim) -> const Jam * {
      for (const Jam &jam : tile)
        if (jam.dim == dim)
          return &jam;
      return nullptr;
    };

    auto accType = VectorType::get({width}, b.getF32Type());
    int64_t step = dotBF16 ? 2 * width : width;
    Value stepValue = arith::ConstantIndexOp::create(b, loc, step);
    // Neighbouring vectors along the innermost loop in the tile: each
    // unit's offset along it, in vectors.
    const Jam *innerJam = jamOf(inner);
    int64_t innerUnits = innerJam ? innerJam->factor : 1;
    auto innerOffset = [&](int64_t u) {
      return innerJam ? (u / innerJam->stride) % innerJam->factor : 0;
    };
    Value innerSize = upper[inner];
    OpOperand &output = *op.getDpsInitOperand(0);
    Value outBuffer = output.get();
    SmallVector<Value> ivs(numLoops, zeroIndex);

    SmallVector<Value> outerLbs, outerUbs, outerSteps;
    for (unsigned dim : parallel) {
      outerLbs.push_back(lower[dim]);
      outerUbs.push_back(upper[dim]);
      const Jam *jam = jamOf(dim);
      outerSteps.push_back(
          jam ? arith::ConstantIndexOp::create(b, loc, jam->factor).getResult()
              : oneIndex);
    }
    if (!reduceInner) {
      // The chunks of the innermost (parallel) loop, outside the reductions.
      outerLbs.push_back(zeroIndex);
      outerUbs.push_back(innerSize);
      outerSteps.push_back(
          arith::ConstantIndexOp::create(b, loc, step * innerUnits));
    }
    SmallVector<Value> redLbs, redUbs, redSteps;
    for (unsigned dim : reduction) {
      redLbs.push_back(lower[dim]);
      redUbs.push_back(upper[dim]);
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
          if (!reduceInner)
            ivs[inner] = outerIvs.back();
          SmallVector<Value> tileBase;
          for (const Jam &jam : tile)
            tileBase.push_back(ivs[jam.dim]);
          // Points ivs at the `u`th output of the tile.
          auto select = [&](OpBuilder &b, Location loc, int64_t u) {
            for (auto [jam, base] : llvm::zip(tile, tileBase)) {
              int64_t offset = (u / jam.stride) % jam.factor;
              if (jam.dim == inner)
                offset *= step;
              ivs[jam.dim] =
                  offset == 0
                      ? base
                      : arith::AddIOp::create(
                            b, loc, base,
                            arith::ConstantIndexOp::create(b, loc, offset))
                            .getResult();
            }
          };
          // The tile's outputs that read the same element of `operand` as
          // output `u`: they share one load.
          auto loadKey = [&](OpOperand &operand, int64_t u) {
            AffineMap map = op.getMatchingIndexingMap(&operand);
            int64_t key = 0;
            for (const Jam &jam : tile)
              if (map.isFunctionOfDim(jam.dim))
                key += ((u / jam.stride) % jam.factor) * jam.stride;
            return key;
          };
          auto chunkOf = [&](OpBuilder &b, Location loc,
                             Value start) -> Value {
            return arith::MinSIOp::create(
                b, loc, stepValue,
                arith::SubIOp::create(b, loc, innerSize, start));
          };
          SmallVector<Value> inits;
          SmallVector<SmallVector<Value>> outAt;
          // Innermost loop parallel: the mask of each vector along it (a
          // vector past the row's end masks every lane off).
          SmallVector<Value> outMasks;
          // Their lanes kept, clamped to [0, width] (channel moments).
          SmallVector<Value> outLanes;
          Value zero = arith::ConstantOp::create(
              b, loc, accType,
              DenseElementsAttr::get(accType, b.getF32FloatAttr(0.0)));
          if (!reduceInner) {
            for (int64_t unit = 0; unit < innerUnits; ++unit) {
              Value start = ivs[inner];
              if (unit)
                start = arith::AddIOp::create(
                    b, loc, start,
                    arith::ConstantIndexOp::create(b, loc, unit * step));
              Value chunk = chunkOf(b, loc, start);
              outMasks.push_back(vector::CreateMaskOp::create(
                  b, loc, VectorType::get({width}, b.getI1Type()), chunk));
              outLanes.push_back(arith::MaxSIOp::create(b, loc, chunk,
                                                        zeroIndex));
            }
          }
          for (int64_t u = 0; u < numAccs; ++u) {
            if (reduceInner) {
              inits.push_back(zero);
              continue;
            }
            select(b, loc, u);
            outAt.push_back(indices(b, loc, output, ivs));
            inits.push_back(initialOutputs(b, loc, outAt.back(),
                                           outMasks[innerOffset(u)], zero));
          }
          scf::LoopNest nest = scf::buildLoopNest(
              b, loc, redLbs, redUbs, redSteps, inits,
              [&](OpBuilder &b, Location loc, ValueRange redIvs,
                  ValueRange args) -> scf::ValueVector {
                for (auto [dim, iv] : llvm::zip(reduction, redIvs))
                  ivs[dim] = iv;
                int64_t lanes = dotBF16 ? 2 * width : width;
                Value innerMask;
                if (reduceInner) {
                  ivs[inner] = redIvs.back();
                  innerMask = vector::CreateMaskOp::create(
                      b, loc, VectorType::get({lanes}, b.getI1Type()),
                      chunkOf(b, loc, ivs[inner]));
                }
                auto maskOf = [&](int64_t u) {
                  return reduceInner ? innerMask : outMasks[innerOffset(u)];
                };
                DenseMap<std::pair<unsigned, int64_t>, Value> loaded;
                auto input = [&](unsigned i, int64_t u) {
                  OpOperand &operand = *op.getDpsInputOperand(i);
                  Value &value = loaded[{i, loadKey(operand, u)}];
                  if (!value) {
                    select(b, loc, u);
                    value = readInput(b, loc, operand, ivs, maskOf(u), lanes);
                    // vdpbf16ps takes bf16; the multiply-adds widened f32.
                    if (!dotBF16)
                      value = widen(b, loc, value);
                  }
                  return value;
                };
                scf::ValueVector accs;
                for (int64_t u = 0; u < numAccs; ++u) {
                  Value a = input(0, u);
                  Value c = input(1, u);
                  accs.push_back(multiplyAdd(b, loc, a, c, args[u]));
                }
                return accs;
              });
          for (int64_t u = 0; u < numAccs; ++u) {
            Value acc = nest.results[u];
            if (!reduceInner) {
              vector::MaskedStoreOp::create(b, loc, outBuffer, outAt[u],
                                            outMasks[innerOffset(u)], acc);
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
            Value old = initialOutput(b, loc, at);
            Value updated = arith::AddFOp::create(b, loc, old, sum);
            memref::StoreOp::create(b, loc, updated, outBuffer, at);
          }
          if (!reduceInner && lastBlock) {
            for (unsigned dim : reduction)
              ivs[dim] = zeroIndex;
            OpBuilder::InsertionGuard guard(b);
            if (!matchPattern(lastBlock, m_One()))
              b.setInsertionPointToStart(
                  scf::IfOp::create(b, loc, lastBlock).thenBlock());
            addChannelSums(
                b, loc, tile, nest.results,
                [&](int64_t u) { return outMasks[innerOffset(u)]; },
                [&](int64_t u) { return outLanes[innerOffset(u)]; }, select,
                ivs);
          }
          // The innermost reduction loops when they are short (a 3x3
          // kernel, a 32-wide row's two vectors) unrolled, at most 16 steps
          // together: their loop control would cost as many instructions
          // as their loads.
          uint64_t unrolled = 1;
          for (scf::ForOp loop : llvm::reverse(nest.loops)) {
            std::optional<APInt> trips = loop.getStaticTripCount();
            if (!trips || trips->getZExtValue() > 4 ||
                unrolled * trips->getZExtValue() > 16 ||
                failed(loopUnrollFull(loop)))
              break;
            unrolled *= trips->getZExtValue();
          }
        });
  }
};

struct VectorizeContractionsPass
    : public traincc::impl::VectorizeContractionsPassBase<
          VectorizeContractionsPass> {
  using VectorizeContractionsPassBase::
      VectorizeContractionsPassBase;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isMultiplyAdd(op) || traincc::cpu::isMultiplyAddWithChannelSums(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      unsigned numLoops = op.getNumLoops();
      if (numLoops == 0)
        continue;
      unsigned inner = numLoops - 1;
      if (!llvm::all_of(op->getOperands(), [](Value operand) {
            auto type = dyn_cast<MemRefType>(operand.getType());
            return type && unitInnermostStride(type);
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
      if (in0 == Access::Strided || in1 == Access::Strided)
        continue;
      if (reduceInner ? (out != Access::Invariant ||
                         in0 != Access::Contiguous || in1 != Access::Contiguous)
                      : out != Access::Contiguous)
        continue;
      Type inputType = op.getRegion().front().getArgument(0).getType();
      // Without F16C each f16 lane would widen through a libgcc call.
      if (inputType.isF16() && !f16c)
        continue;
      // AVX-512 has 32 vector registers, AVX2 16: room for the tile's
      // accumulators and the vectors each step loads.
      int64_t maxAccumulators = vectorWidth >= 16 ? 16 : 8;
      Vectorizer vectorizer{op,
                            vectorWidth,
                            reduceInner && avx512bf16 && inputType.isBF16(),
                            reduceInner,
                            inputType,
                            numLoops,
                            maxAccumulators,
                            cacheBytes};
      vectorizer.rewrite(rewriter);
    }
    // First: a split op would lose the mark.
    restoreZeroFills();
    splitChannelSums();
  }

  /// The ops marked traincc.channel_sums that were not rewritten above:
  /// the multiply-add alone, then a loop nest that adds its outputs into
  /// the sums (and, with traincc.channel_moments, nests that count them
  /// and sum their squares around the sums' means).
  void splitChannelSums() {
    SmallVector<linalg::GenericOp> marked;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op->hasAttr(traincc::cpu::kChannelSumsAttrName))
        marked.push_back(op);
    });
    for (linalg::GenericOp op : marked) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      MLIRContext *context = op.getContext();
      Value output = op.getDpsInitOperand(0)->get();
      SmallVector<Value> partials;
      for (unsigned i = 1, e = op.getNumDpsInits(); i < e; ++i)
        partials.push_back(op.getDpsInitOperand(i)->get());
      linalg::GenericOp alone = traincc::codegen::dropChannelSumsOutput(
          op, {traincc::cpu::kChannelSumsAttrName,
               traincc::cpu::kChannelMomentsAttrName});
      b.setInsertionPointAfter(alone);
      int64_t rank = cast<MemRefType>(output.getType()).getRank();
      SmallVector<utils::IteratorType> iterators(
          rank, utils::IteratorType::reduction);
      iterators[0] = iterators[1] = utils::IteratorType::parallel;
      AffineMap all = AffineMap::getMultiDimIdentityMap(rank, context);
      AffineMap channel = all.getSubMap({0, 1});
      linalg::GenericOp::create(
          b, loc, TypeRange{}, ValueRange{output}, ValueRange{partials[0]},
          {all, channel}, iterators,
          [](OpBuilder &nb, Location nloc, ValueRange args) {
            linalg::YieldOp::create(
                nb, nloc,
                arith::AddFOp::create(nb, nloc, args[1], args[0]).getResult());
          });
      if (partials.size() == 1)
        continue;
      traincc::codegen::addChannelMomentsNests(b, loc, output, partials[0],
                                               partials[1], partials[2], all,
                                               channel, iterators);
    }
  }

  /// The contractions marked by traincc-absorb-zero-fills that were not
  /// rewritten above get their fill back, of the outputs they compute.
  void restoreZeroFills() {
    getOperation().walk([](linalg::GenericOp op) {
      if (!op->hasAttr(traincc::kZeroInitAttrName))
        return;
      OpBuilder b(op);
      Value zero = arith::ConstantOp::create(b, op.getLoc(),
                                             b.getF32FloatAttr(0.0));
      linalg::FillOp::create(b, op.getLoc(), zero,
                             op.getDpsInitOperand(0)->get());
      op->removeAttr(traincc::kZeroInitAttrName);
    });
  }
};

} // namespace
