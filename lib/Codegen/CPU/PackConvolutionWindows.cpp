//===- PackConvolutionWindows.cpp - im2col where rows are short -----------===//
//
// traincc-vectorize-contractions puts a row of outputs (or of a filter
// gradient's terms) in a vector. A convolution's rows are as long as its
// output is wide: 4 for the last stage of a CIFAR ResNet, a quarter of a
// 16-lane vector; and a strided convolution reads its input with a stride,
// which leaves it scalar. Copying the input windows into a buffer indexed
// [.., kh, kw, oh, ow] (im2col) makes oh and ow neighbours in memory in
// that buffer as in the output: traincc-collapse-contiguous-loops then
// merges them into one loop of oh * ow, full vectors, unit stride. The copy
// reads each input element kh * kw times, against the c (hundreds of)
// multiply-adds each packed element feeds.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/CPU/Passes.h"

#include "AffineStride.h"
#include "MultiplyAdd.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace traincc {
#define GEN_PASS_DEF_PACKCONVOLUTIONWINDOWSPASS
#include "traincc/Codegen/CPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;

using traincc::cpu::isMultiplyAdd;
using traincc::cpu::strideOf;

namespace {

/// The loops of a window index `a * o + k` (or `a * o`, constants aside):
/// the output position `o` and, if there is one, the kernel offset `k`.
struct WindowIndex {
  unsigned spatial;
  std::optional<unsigned> kernel;
  int64_t stride;
};

/// The loops `expr` adds up, each with its coefficient, if it is such a sum.
std::optional<SmallVector<std::pair<unsigned, int64_t>>>
termsOf(AffineExpr expr, unsigned numLoops) {
  SmallVector<std::pair<unsigned, int64_t>> terms;
  for (unsigned dim = 0; dim < numLoops; ++dim) {
    if (!expr.isFunctionOfDim(dim))
      continue;
    std::optional<int64_t> stride = strideOf(expr, dim);
    if (!stride || *stride == 0)
      return std::nullopt;
    terms.push_back({dim, *stride});
  }
  return terms;
}

/// `op`'s input read through windows, the window indices of its map and
/// the loops of its plain indices; nothing if `op` is not a convolution
/// whose other operands are read plainly.
struct Windowed {
  unsigned input;
  SmallVector<unsigned> plain;
  SmallVector<WindowIndex> windows;
};

std::optional<Windowed> findWindowedInput(linalg::GenericOp op) {
  std::optional<Windowed> found;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (unsigned i = 0; i < 2; ++i) {
    AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(i));
    if (map.isProjectedPermutation())
      continue;
    if (found)
      return std::nullopt;
    Windowed windowed{i, {}, {}};
    for (AffineExpr expr : map.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
        windowed.plain.push_back(dim.getPosition());
        continue;
      }
      auto terms = termsOf(expr, op.getNumLoops());
      if (!terms || terms->empty() || terms->size() > 2)
        return std::nullopt;
      // Of `s * o + k` (or `o - k + p`: a data gradient's flipped
      // kernel), the output position is the loop with a positive stride,
      // the strided one, or the one with the larger range: packing is
      // correct either way, only the length of the rows it makes differs.
      auto [first, firstStride] = (*terms)[0];
      if (terms->size() == 1) {
        if (firstStride < 0)
          return std::nullopt;
        windowed.windows.push_back({first, std::nullopt, firstStride});
        continue;
      }
      auto [second, secondStride] = (*terms)[1];
      bool firstIsSpatial;
      if ((firstStride > 0) != (secondStride > 0))
        firstIsSpatial = firstStride > 0;
      else if (firstStride < 0)
        return std::nullopt;
      else
        firstIsSpatial = secondStride == 1 && (firstStride != 1 ||
                                               ranges[first] >= ranges[second]);
      if (firstIsSpatial)
        windowed.windows.push_back({first, second, firstStride});
      else
        windowed.windows.push_back({second, first, secondStride});
    }
    found = windowed;
  }
  if (!found || found->windows.empty())
    return std::nullopt;
  return found;
}

struct PackConvolutionWindowsPass
    : public traincc::impl::PackConvolutionWindowsPassBase<
          PackConvolutionWindowsPass> {
  using PackConvolutionWindowsPassBase::PackConvolutionWindowsPassBase;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isMultiplyAdd(op) && op.hasPureBufferSemantics())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops)
      if (std::optional<Windowed> windowed = findWindowedInput(op))
        pack(rewriter, op, *windowed);
  }

  void pack(RewriterBase &rewriter, linalg::GenericOp op,
            const Windowed &windowed) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return;
    // Worth it where rows fill at most half a vector, or are read with a
    // stride; within the size limit.
    const WindowIndex &row = windowed.windows.back();
    if (row.stride == 1 && ranges[row.spatial] * 2 > vectorWidth)
      return;
    // The packed buffer's loops: the plain ones, the kernel offsets, then
    // the output positions, so that those end up innermost and in the
    // order of the output's.
    SmallVector<unsigned> loops(windowed.plain);
    for (const WindowIndex &window : windowed.windows)
      if (window.kernel)
        loops.push_back(*window.kernel);
    for (const WindowIndex &window : windowed.windows)
      loops.push_back(window.spatial);
    // Innermost go the loops along which the output is innermost, in its
    // order: the output positions of a convolution or a data gradient (as
    // above), but a filter gradient's input channels and kernel offsets.
    // The filter gradient then keeps a vector of its outputs in registers
    // (the windows' positions become a reduction outside it) instead of
    // summing a vector's lanes for every output.
    if (llvm::any_of(loops, [&](unsigned loop) {
          return llvm::count(loops, loop) != 1;
        }))
      return;
    AffineMap outputMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    SmallVector<unsigned> trailing;
    for (AffineExpr expr : llvm::reverse(outputMap.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim || !llvm::is_contained(loops, dim.getPosition()))
        break;
      trailing.insert(trailing.begin(), dim.getPosition());
    }
    if (!trailing.empty()) {
      SmallVector<unsigned> reordered;
      for (unsigned loop : loops)
        if (!llvm::is_contained(trailing, loop))
          reordered.push_back(loop);
      llvm::append_range(reordered, trailing);
      loops = reordered;
    }
    SmallVector<int64_t> shape;
    int64_t elements = 1;
    for (unsigned loop : loops) {
      shape.push_back(ranges[loop]);
      elements *= ranges[loop];
    }
    OpOperand &input = *op.getDpsInputOperand(windowed.input);
    auto inputType = cast<MemRefType>(input.get().getType());
    Type element = inputType.getElementType();
    if (elements * (element.getIntOrFloatBitWidth() / 8) > maxBytes)
      return;

    MLIRContext *context = op.getContext();
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    auto packedType = MemRefType::get(shape, element);
    Value packed = memref::AllocOp::create(rewriter, loc, packedType);
    // The copy: loops in the packed order, reading the input through its
    // window map rewritten over them.
    SmallVector<AffineExpr> toCopyLoops(
        op.getNumLoops(), getAffineConstantExpr(0, context));
    for (auto [position, loop] : llvm::enumerate(loops))
      toCopyLoops[loop] = getAffineDimExpr(position, context);
    AffineMap windowMap = op.getMatchingIndexingMap(&input);
    AffineMap readMap =
        windowMap.replaceDimsAndSymbols(toCopyLoops, {}, loops.size(), 0);
    AffineMap identity =
        AffineMap::getMultiDimIdentityMap(loops.size(), context);
    linalg::GenericOp::create(
        rewriter, loc, ValueRange{input.get()}, ValueRange{packed},
        ArrayRef<AffineMap>{readMap, identity},
        SmallVector<utils::IteratorType>(loops.size(),
                                         utils::IteratorType::parallel),
        [](OpBuilder &b, Location loc, ValueRange args) {
          linalg::YieldOp::create(b, loc, args[0]);
        });
    // The contraction reads the packed buffer plainly.
    SmallVector<AffineExpr> packedExprs;
    for (unsigned loop : loops)
      packedExprs.push_back(getAffineDimExpr(loop, context));
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    maps[windowed.input] =
        AffineMap::get(op.getNumLoops(), 0, packedExprs, context);
    rewriter.modifyOpInPlace(op, [&] {
      input.set(packed);
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    rewriter.setInsertionPointAfter(op);
    memref::DeallocOp::create(rewriter, loc, packed);
  }
};

} // namespace
