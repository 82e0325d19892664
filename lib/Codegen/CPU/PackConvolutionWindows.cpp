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
#include "llvm/ADT/SmallVectorExtras.h"

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

    if (packInPanels(rewriter, op, windowed, loops, trailing))
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

  /// A filter gradient (its output innermost along the packed buffer's
  /// `trailing` loops: input channels and kernel offsets, K of them) packed
  /// in panels of P = 4 vectors of K: the buffer indexed [K / P, the other
  /// loops of `loops`..., P], the contraction over (panel, its own loops
  /// but `trailing`..., lane) writing dw viewed as [.., K / P, P]. Packed
  /// plainly, the vectorizer's tile of dw walks all of K for each group of
  /// output channels, so one image's packed input (295 KB in a 4x4 ResNet
  /// stage) is all a block of the cache holds: dw goes through memory once
  /// per image. Per panel, the images' P-wide rows are next to each other;
  /// the vectorizer puts the panel loop outermost and blocks a dozen images
  /// in the cache, and dw goes through memory a dozen times less often
  /// (Zen 4, one thread: 82 -> 92 GFLOP/s on the 512-channel stage's
  /// filter gradient). Each output still adds its terms in the same order.
  /// False (nothing changed) where K is not a multiple of P or a loop of
  /// `trailing` is an output position or moves another input.
  bool packInPanels(RewriterBase &rewriter, linalg::GenericOp op,
                    const Windowed &windowed, ArrayRef<unsigned> loops,
                    ArrayRef<unsigned> trailing) {
    if (trailing.empty())
      return false;
    for (const WindowIndex &window : windowed.windows)
      if (llvm::is_contained(trailing, window.spatial))
        return false;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t panel = 4 * vectorWidth;
    int64_t width = 1;
    for (unsigned loop : trailing)
      width *= ranges[loop];
    if (width <= panel || width % panel != 0)
      return false;
    OpOperand &input = *op.getDpsInputOperand(windowed.input);
    OpOperand &other = *op.getDpsInputOperand(1 - windowed.input);
    OpOperand &output = *op.getDpsInitOperand(0);
    AffineMap otherMap = op.getMatchingIndexingMap(&other);
    AffineMap outputMap = op.getMatchingIndexingMap(&output);
    auto outputType = cast<MemRefType>(output.get().getType());
    if (llvm::any_of(trailing,
                     [&](unsigned loop) {
                       return otherMap.isFunctionOfDim(loop);
                     }) ||
        !outputType.getLayout().isIdentity() ||
        outputMap.getNumResults() <= trailing.size())
      return false;

    MLIRContext *context = op.getContext();
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    // The copy's loops: panel, the packed buffer's other loops, lane.
    SmallVector<unsigned> outer;
    for (unsigned loop : loops)
      if (!llvm::is_contained(trailing, loop))
        outer.push_back(loop);
    unsigned copyLoops = outer.size() + 2;
    SmallVector<int64_t> shape = {width / panel};
    for (unsigned loop : outer)
      shape.push_back(ranges[loop]);
    shape.push_back(panel);
    Type element = cast<MemRefType>(input.get().getType()).getElementType();
    Value packed = memref::AllocOp::create(
        rewriter, loc, MemRefType::get(shape, element));
    SmallVector<AffineExpr> toCopyLoops(op.getNumLoops(),
                                        getAffineConstantExpr(0, context));
    for (auto [position, loop] : llvm::enumerate(outer))
      toCopyLoops[loop] = getAffineDimExpr(position + 1, context);
    // Each trailing loop's index is a digit of panel * P + lane, in the
    // mixed radix of their ranges (dw's layout).
    AffineExpr flat = getAffineDimExpr(0, context) * panel +
                      getAffineDimExpr(copyLoops - 1, context);
    int64_t below = width;
    for (unsigned loop : trailing) {
      below /= ranges[loop];
      AffineExpr digit = flat.floorDiv(below);
      toCopyLoops[loop] = loop == trailing.front() ? digit
                                                   : digit % ranges[loop];
    }
    AffineMap readMap = op.getMatchingIndexingMap(&input).replaceDimsAndSymbols(
        toCopyLoops, {}, copyLoops, 0);
    linalg::GenericOp::create(
        rewriter, loc, ValueRange{input.get()}, ValueRange{packed},
        ArrayRef<AffineMap>{
            readMap, AffineMap::getMultiDimIdentityMap(copyLoops, context)},
        SmallVector<utils::IteratorType>(copyLoops,
                                         utils::IteratorType::parallel),
        [](OpBuilder &b, Location loc, ValueRange args) {
          linalg::YieldOp::create(b, loc, args[0]);
        });

    // The contraction's loops: panel, its own but `trailing` in order, lane.
    SmallVector<unsigned> kept;
    for (unsigned loop = 0; loop < op.getNumLoops(); ++loop)
      if (!llvm::is_contained(trailing, loop))
        kept.push_back(loop);
    unsigned numLoops = kept.size() + 2;
    SmallVector<AffineExpr> renumber(op.getNumLoops(),
                                     getAffineConstantExpr(0, context));
    for (auto [position, loop] : llvm::enumerate(kept))
      renumber[loop] = getAffineDimExpr(position + 1, context);
    AffineExpr panelDim = getAffineDimExpr(0, context);
    AffineExpr laneDim = getAffineDimExpr(numLoops - 1, context);
    SmallVector<AffineExpr> packedExprs = {panelDim};
    for (unsigned loop : outer)
      packedExprs.push_back(renumber[loop]);
    packedExprs.push_back(laneDim);
    // dw viewed with its trailing axes as [K / P, P].
    unsigned lead = outputMap.getNumResults() - trailing.size();
    SmallVector<ReassociationIndices> collapse;
    for (unsigned axis = 0; axis < lead; ++axis)
      collapse.push_back({int64_t(axis)});
    collapse.push_back({});
    for (unsigned axis = lead; axis < outputMap.getNumResults(); ++axis)
      collapse.back().push_back(axis);
    Value flatOutput =
        memref::CollapseShapeOp::create(rewriter, loc, output.get(), collapse);
    SmallVector<ReassociationIndices> expand;
    for (unsigned axis = 0; axis < lead; ++axis)
      expand.push_back({int64_t(axis)});
    expand.push_back({int64_t(lead), int64_t(lead) + 1});
    SmallVector<int64_t> panelShape(outputType.getShape().take_front(lead));
    panelShape.append({width / panel, panel});
    Value panelOutput = memref::ExpandShapeOp::create(
        rewriter, loc, MemRefType::get(panelShape, outputType.getElementType()),
        flatOutput, expand);
    SmallVector<AffineExpr> outputExprs;
    for (AffineExpr expr : outputMap.getResults().take_front(lead))
      outputExprs.push_back(expr.replaceDims(renumber));
    outputExprs.append({panelDim, laneDim});

    SmallVector<Value> inputs(2);
    SmallVector<AffineMap> maps(3);
    inputs[windowed.input] = packed;
    maps[windowed.input] = AffineMap::get(numLoops, 0, packedExprs, context);
    inputs[1 - windowed.input] = other.get();
    maps[1 - windowed.input] = AffineMap::get(
        numLoops, 0,
        llvm::map_to_vector(otherMap.getResults(),
                            [&](AffineExpr expr) {
                              return expr.replaceDims(renumber);
                            }),
        context);
    maps[2] = AffineMap::get(numLoops, 0, outputExprs, context);
    auto iterators = op.getIteratorTypesArray();
    SmallVector<utils::IteratorType> newIterators = {
        utils::IteratorType::parallel};
    for (unsigned loop : kept)
      newIterators.push_back(iterators[loop]);
    newIterators.push_back(utils::IteratorType::parallel);
    auto blocked = linalg::GenericOp::create(
        rewriter, loc, TypeRange{}, inputs, ValueRange{panelOutput}, maps,
        newIterators);
    rewriter.inlineRegionBefore(op.getRegion(), blocked.getRegion(),
                                blocked.getRegion().end());
    for (NamedAttribute attr : op->getDiscardableAttrs())
      blocked->setAttr(attr.getName(), attr.getValue());
    rewriter.eraseOp(op);
    rewriter.setInsertionPointAfter(blocked);
    memref::DeallocOp::create(rewriter, loc, packed);
    return true;
  }
};

} // namespace
