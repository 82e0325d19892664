//===- ConvertTrainToLinalgWindowGradients.cpp - conv and pool backward ---===//
//
// Gradients of window ops by their input scatter each output position's
// value back over its window. Scatters do not fit linalg's indexing maps, so
// they are turned into gathers: the output-shaped values are first spread
// into a zero tensor ("zero insertion": position o lands at o * stride, the
// whole shifted by (kernel - 1) * dilation - pad_begin and cropped to
// input + (kernel - 1) * dilation), after which input position i gathers
// from i + (kernel - 1 - k) * dilation for every kernel offset k: a
// forward-style stride-1 window op with a flipped kernel. Every map stays
// affine, so tiling and vectorisation treat these like forward convolutions.
//
// conv_backward_data is that gather against the weight with the channel
// axes swapped; strided (dilation 1), it is instead one gather per residue
// class of the input positions, each with only the kernel offsets that
// reach it (the spread form would multiply zeros in all but 1/stride^2 of
// its products). conv_backward_filter is a plain correlation of the padded
// input with the output gradient. max_pool_backward first finds each
// window's winner (the first maximum in row-major window order, never a
// padded position: PyTorch's rule), routes the gradient to it per kernel
// offset, then gathers; avg_pool_backward divides by the forward's counts
// and gathers.
//
//===----------------------------------------------------------------------===//

#include "ConvertTrainToLinalg.h"

#include "traincc/Codegen/Common/KernelCost.h"
#include "traincc/Codegen/Common/WindowGeometry.h"

#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace traincc::codegen;
namespace train = traincc::train;

namespace {

/// Zeros of `value`'s leading axes by the spread sizes, with `value`'s
/// trailing spatial axes (the forward output's) inserted at
/// spreadOffset + o * stride; positions that fall outside are cropped.
Value spread(OpBuilder &b, Location loc, Value value, const WindowGeometry &g) {
  MLIRContext *context = b.getContext();
  RankedTensorType type = tensorType(value);
  int64_t lead = type.getRank() - g.spatial();
  SmallVector<int64_t> shape(type.getShape().take_front(lead));
  SmallVector<int64_t> sourceOffsets(lead, 0), sizes(shape),
      targetOffsets(lead, 0), strides(lead, 1);
  bool empty = false;
  for (int64_t i = 0; i < g.spatial(); ++i) {
    int64_t offset = g.spreadOffset(i), stride = g.strides[i];
    int64_t size = g.spreadSize(i);
    int64_t first =
        std::max<int64_t>(0, llvm::divideCeilSigned(-offset, stride));
    int64_t last = std::min<int64_t>(
        g.output[i] - 1, llvm::divideFloorSigned(size - 1 - offset, stride));
    empty |= last < first;
    shape.push_back(size);
    sourceOffsets.push_back(first);
    sizes.push_back(std::max<int64_t>(0, last - first + 1));
    targetOffsets.push_back(offset + first * stride);
    strides.push_back(stride);
  }
  Value zeros = zeroTensor(b, loc, shape, type.getElementType());
  if (empty)
    return zeros;
  Value source = value;
  if (ArrayRef<int64_t>(sizes) != type.getShape())
    source = tensor::ExtractSliceOp::create(
        b, loc, value, getAsIndexOpFoldResult(context, sourceOffsets),
        getAsIndexOpFoldResult(context, sizes),
        getAsIndexOpFoldResult(context, SmallVector<int64_t>(sizes.size(), 1)));
  return tensor::InsertSliceOp::create(
      b, loc, source, zeros, getAsIndexOpFoldResult(context, targetOffsets),
      getAsIndexOpFoldResult(context, sizes),
      getAsIndexOpFoldResult(context, strides));
}

/// acc + a * b in the accumulator's type. Kept apart from the shared
/// `multiplyAccumulate`: its two conversions are arguments of one call, so
/// they are created in the order the compiler evaluates arguments, and the
/// IR of existing trainers has that order.
void convMultiplyAccumulate(OpBuilder &b, Location loc, ValueRange args) {
  Type accType = args[2].getType();
  Value product =
      arith::MulFOp::create(b, loc, convertFloat(b, loc, args[0], accType),
                            convertFloat(b, loc, args[1], accType));
  linalg::YieldOp::create(
      b, loc, arith::AddFOp::create(b, loc, args[2], product).getResult());
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

/// A convolution gradient of `resultType`: the grouped contraction of the
/// grouped views `lhs` and `rhs` (read through the expressions of its loops)
/// summed from zero in the accumulator type into the view of the result with
/// axis `groupAxis` split into groups, collapsed back and rounded to the
/// result's element type once.
Value buildConvGradient(OpBuilder &b, Location loc, RankedTensorType resultType,
                        int64_t groupAxis, int64_t groups, Value lhs, Value rhs,
                        ArrayRef<AffineExpr> lhsExprs,
                        ArrayRef<AffineExpr> rhsExprs,
                        ArrayRef<AffineExpr> outExprs,
                        traincc_kernel_class kind) {
  Type element = resultType.getElementType();
  Type accType = accumulatorType(element);
  auto sumType = RankedTensorType::get(resultType.getShape(), accType);
  int64_t rank = resultType.getRank();
  Value init = zeroTensor(
      b, loc, splitGroups(sumType, groupAxis, groups).getShape(), accType);
  Value result =
      buildGroupedContraction(b, loc, lhs, rhs, init,
                              /*spatial=*/rank - 2, lhsExprs, rhsExprs,
                              outExprs, convMultiplyAccumulate);
  traincc::setKernelClass(result.getDefiningOp(), kind);
  result = tensor::CollapseShapeOp::create(b, loc, sumType, result,
                                           splitAxis(rank, groupAxis));
  return convertElementType(b, loc, result, element);
}

/// One residue class of a strided data gradient along one axis: the input
/// positions x = stride * a + residue (a < count) receive products only
/// from the kernel offsets k = stride * j + first (j < taps), each from
/// output position a + shift - j.
struct StridePhase {
  int64_t first, taps, shift, count;
};

/// The phases of axis `i` (stride > 1, dilation 1): for x + pad - k to be
/// a multiple of the stride, k must be congruent to x + pad.
SmallVector<StridePhase> stridePhases(const WindowGeometry &g, int64_t i) {
  int64_t stride = g.strides[i], pad = g.padBegin[i];
  SmallVector<StridePhase> phases;
  for (int64_t residue = 0; residue < stride; ++residue) {
    int64_t first = (residue + pad) % stride;
    int64_t taps = first < g.kernel[i]
                       ? llvm::divideCeil(g.kernel[i] - first, stride)
                       : 0;
    int64_t count = residue < g.input[i]
                        ? llvm::divideCeil(g.input[i] - residue, stride)
                        : 0;
    phases.push_back({first, taps, (residue + pad - first) / stride, count});
  }
  return phases;
}

/// dx of a strided convolution (dilation 1), one stride-1 contraction per
/// residue class of the input positions (stride^2 of them in 2-D), each
/// with only the kernel offsets that reach it, written into its strided
/// slice of dx: the spread form multiplies zeros in all but 1/stride^2 of
/// its products. dx[n, g, c, s * a + r] = sum over m, j of
///   pad(dy)[n, g, m, a + shift - j + low] * w[g, m, c, s * j + first].
Value convBackwardDataByPhases(OpBuilder &b, Location loc,
                               RankedTensorType resultType, Value grad,
                               Value weight, int64_t groups,
                               const WindowGeometry &g) {
  MLIRContext *context = b.getContext();
  int64_t spatial = g.spatial(), rank = resultType.getRank();
  SmallVector<SmallVector<StridePhase>> phases;
  // dy padded so that every phase's reads stay in bounds (zeros outside).
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (int64_t i = 0; i < spatial; ++i) {
    phases.push_back(stridePhases(g, i));
    for (const StridePhase &phase : phases.back()) {
      if (phase.taps == 0 || phase.count == 0)
        continue;
      low[2 + i] = std::max(low[2 + i], phase.taps - 1 - phase.shift);
      high[2 + i] = std::max(high[2 + i], phase.count - 1 + phase.shift -
                                              (g.output[i] - 1));
    }
  }
  Type element = resultType.getElementType();
  Value padded = padTensor(b, loc, grad, low, high,
                           b.getFloatAttr(tensorType(grad).getElementType(),
                                          0.0));
  Value gradG = tensor::ExpandShapeOp::create(
      b, loc, splitGroups(tensorType(padded), 1, groups), padded,
      splitAxis(rank, 1));
  RankedTensorType weightType = tensorType(weight);
  Value result = zeroTensor(b, loc, resultType.getShape(), element);
  auto dim = [&](int64_t i) { return getAffineDimExpr(i, context); };
  // Every combination of one phase per axis.
  SmallVector<int64_t> residues(spatial, 0);
  while (true) {
    bool empty = false;
    SmallVector<int64_t> phaseShape(resultType.getShape().take_front(2));
    SmallVector<int64_t> weightOffsets(2, 0), weightSizes(
                                                  weightType.getShape().take_front(2)),
        weightStrides(rank, 1), outOffsets(2, 0), outStrides(2, 1);
    for (int64_t i = 0; i < spatial; ++i) {
      const StridePhase &phase = phases[i][residues[i]];
      empty |= phase.taps == 0 || phase.count == 0;
      phaseShape.push_back(phase.count);
      weightOffsets.push_back(phase.first);
      weightSizes.push_back(phase.taps);
      weightStrides[2 + i] = g.strides[i];
      outOffsets.push_back(residues[i]);
      outStrides.push_back(g.strides[i]);
    }
    if (!empty) {
      // Copied out of the strided slice (a few kernel taps of the weight):
      // the contraction's kernels want operands contiguous along a row.
      Value slice = tensor::ExtractSliceOp::create(
          b, loc, weight, getAsIndexOpFoldResult(context, weightOffsets),
          getAsIndexOpFoldResult(context, weightSizes),
          getAsIndexOpFoldResult(context, weightStrides));
      Value taps =
          linalg::CopyOp::create(
              b, loc, slice,
              tensor::EmptyOp::create(b, loc, weightSizes,
                                      weightType.getElementType())
                  .getResult())
              .getResult(0);
      Value tapsG = tensor::ExpandShapeOp::create(
          b, loc, splitGroups(tensorType(taps), 0, groups), taps,
          splitAxis(rank, 0));
      // Loops: n, g, c, a... (parallel), m, j... (reduction).
      AffineExpr n = dim(0), gr = dim(1), c = dim(2), m = dim(3 + spatial);
      SmallVector<AffineExpr> gradExprs = {n, gr, m}, weightExprs = {gr, m, c},
                              outExprs = {n, gr, c};
      for (int64_t i = 0; i < spatial; ++i) {
        const StridePhase &phase = phases[i][residues[i]];
        AffineExpr a = dim(3 + i), j = dim(4 + spatial + i);
        gradExprs.push_back(a - j + (phase.shift + low[2 + i]));
        weightExprs.push_back(j);
        outExprs.push_back(a);
      }
      auto phaseType = RankedTensorType::get(phaseShape, element);
      Value phaseGrad = buildConvGradient(b, loc, phaseType, /*groupAxis=*/1,
                                          groups, gradG, tapsG, gradExprs,
                                          weightExprs, outExprs,
                                          TRAINCC_KERNEL_CONV_DATA_GRADIENT);
      result = tensor::InsertSliceOp::create(
          b, loc, phaseGrad, result,
          getAsIndexOpFoldResult(context, outOffsets),
          getAsIndexOpFoldResult(context, phaseShape),
          getAsIndexOpFoldResult(context, outStrides));
    }
    // The next combination, the last axis fastest.
    int64_t i = spatial - 1;
    while (i >= 0 && ++residues[i] == g.strides[i])
      residues[i--] = 0;
    if (i < 0)
      break;
  }
  return result;
}

/// dx[n, g, c, i] = sum over m, k of
///   spread(dy)[n, g, m, i + (K - 1 - k) * d] * w[g, m, c, k].
struct ConvBackwardDataLowering
    : OpConversionPattern<train::ConvBackwardDataOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::ConvBackwardDataOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    RankedTensorType resultType = op.getType();
    RankedTensorType weightType = tensorType(adaptor.getWeight());
    int64_t groups = op.getGroups();
    int64_t rank = resultType.getRank();
    SmallVector<int64_t> kernel(weightType.getShape().drop_front(2));
    WindowGeometry g(resultType.getShape(),
                     tensorType(adaptor.getGrad()).getShape(), kernel,
                     op.getStrides(), op.getDilations(), op.getPads());
    int64_t spatial = g.spatial();
    if (llvm::any_of(g.strides, [](int64_t s) { return s > 1; }) &&
        llvm::all_of(g.dilations, [](int64_t d) { return d == 1; })) {
      rewriter.replaceOp(op, convBackwardDataByPhases(
                                 rewriter, loc, resultType, adaptor.getGrad(),
                                 adaptor.getWeight(), groups, g));
      return success();
    }

    Value spreadGrad = spread(rewriter, loc, adaptor.getGrad(), g);
    Value gradG = tensor::ExpandShapeOp::create(
        rewriter, loc, splitGroups(tensorType(spreadGrad), 1, groups),
        spreadGrad, splitAxis(rank, 1));
    Value weightG = tensor::ExpandShapeOp::create(
        rewriter, loc, splitGroups(weightType, 0, groups), adaptor.getWeight(),
        splitAxis(rank, 0));

    // Loops: n, g, c, i... (parallel), m, k... (reduction).
    auto dim = [&](int64_t i) { return getAffineDimExpr(i, context); };
    AffineExpr n = dim(0), gr = dim(1), c = dim(2), m = dim(3 + spatial);
    SmallVector<AffineExpr> gradExprs = {n, gr, m}, weightExprs = {gr, m, c},
                            outExprs = {n, gr, c};
    for (int64_t i = 0; i < spatial; ++i) {
      AffineExpr x = dim(3 + i), k = dim(4 + spatial + i);
      gradExprs.push_back(g.flippedRead(x, k, i));
      weightExprs.push_back(k);
      outExprs.push_back(x);
    }
    rewriter.replaceOp(op, buildConvGradient(rewriter, loc, resultType,
                                             /*groupAxis=*/1, groups, gradG,
                                             weightG, gradExprs, weightExprs,
                                             outExprs,
                                             TRAINCC_KERNEL_CONV_DATA_GRADIENT));
    return success();
  }
};

/// dw[g, m, c, k] = sum over n, o of
///   pad(x)[n, g, c, o * s + k * d] * dy[n, g, m, o].
struct ConvBackwardFilterLowering
    : OpConversionPattern<train::ConvBackwardFilterOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::ConvBackwardFilterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    RankedTensorType resultType = op.getType();
    RankedTensorType inputType = tensorType(adaptor.getInput());
    Type element = resultType.getElementType();
    int64_t groups = op.getGroups();
    int64_t rank = resultType.getRank();
    SmallVector<int64_t> kernel(resultType.getShape().drop_front(2));
    WindowGeometry g(inputType.getShape(),
                     tensorType(adaptor.getGrad()).getShape(), kernel,
                     op.getStrides(), op.getDilations(), op.getPads());
    int64_t spatial = g.spatial();

    SmallVector<int64_t> low, high;
    g.ownPads(low, high);
    Value input = padTensor(rewriter, loc, adaptor.getInput(), low, high,
                            rewriter.getFloatAttr(element, 0.0));
    Value inputG = tensor::ExpandShapeOp::create(
        rewriter, loc, splitGroups(tensorType(input), 1, groups), input,
        splitAxis(rank, 1));
    Value gradG = tensor::ExpandShapeOp::create(
        rewriter, loc, splitGroups(tensorType(adaptor.getGrad()), 1, groups),
        adaptor.getGrad(), splitAxis(rank, 1));

    // Loops: g, m, c, k... (parallel), n, o... (reduction).
    auto dim = [&](int64_t i) { return getAffineDimExpr(i, context); };
    AffineExpr gr = dim(0), m = dim(1), c = dim(2), n = dim(3 + spatial);
    SmallVector<AffineExpr> inputExprs = {n, gr, c}, gradExprs = {n, gr, m},
                            outExprs = {gr, m, c};
    for (int64_t i = 0; i < spatial; ++i) {
      AffineExpr k = dim(3 + i), o = dim(4 + spatial + i);
      inputExprs.push_back(g.windowRead(o, k, i));
      gradExprs.push_back(o);
      outExprs.push_back(k);
    }
    rewriter.replaceOp(op,
                       buildConvGradient(rewriter, loc, resultType,
                                         /*groupAxis=*/0, groups, inputG, gradG,
                                         inputExprs, gradExprs, outExprs,
                                         TRAINCC_KERNEL_CONV_FILTER_GRADIENT));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// dx[n, c, i] = sum over k of spreadK[n, c, k..., i + (K - 1 - k) * d]
/// where `spreadK` is the spread of per-kernel-offset contributions
/// [N, C, K..., O...] (max pooling), or of [N, C, O...] values shared by
/// every offset (average pooling, `perOffset` false).
Value gatherWindows(OpBuilder &b, Location loc, Value spreadValues,
                    bool perOffset, const WindowGeometry &g,
                    RankedTensorType resultType) {
  MLIRContext *context = b.getContext();
  int64_t spatial = g.spatial();
  Type element = resultType.getElementType();
  Type accType = accumulatorType(element);
  Value init = zeroTensor(b, loc, resultType.getShape(), accType);
  // Loops: n, c, i... (parallel), k... (reduction).
  int64_t numLoops = 2 + 2 * spatial;
  auto dim = [&](int64_t i) { return getAffineDimExpr(i, context); };
  SmallVector<AffineExpr> spreadExprs = {dim(0), dim(1)}, kernelExprs,
                          outExprs = {dim(0), dim(1)};
  for (int64_t i = 0; i < spatial; ++i)
    kernelExprs.push_back(dim(2 + spatial + i));
  if (perOffset)
    llvm::append_range(spreadExprs, kernelExprs);
  for (int64_t i = 0; i < spatial; ++i) {
    AffineExpr x = dim(2 + i), k = dim(2 + spatial + i);
    spreadExprs.push_back(g.flippedRead(x, k, i));
    outExprs.push_back(x);
  }
  SmallVector<Value> inputs = {spreadValues};
  SmallVector<AffineMap> maps = {
      AffineMap::get(numLoops, 0, spreadExprs, context)};
  if (!perOffset) {
    // A kernel-shaped operand gives the k loops their extent, as in the
    // named pooling ops; its elements are never read.
    inputs.push_back(tensor::EmptyOp::create(b, loc, g.kernel, accType));
    maps.push_back(AffineMap::get(numLoops, 0, kernelExprs, context));
  }
  maps.push_back(AffineMap::get(numLoops, 0, outExprs, context));
  Value result =
      linalg::GenericOp::create(b, loc, TypeRange{init.getType()}, inputs,
                                ValueRange{init}, maps,
                                iteratorTypes(2 + spatial, spatial), accumulate)
          .getResult(0);
  return convertElementType(b, loc, result, element);
}

/// `value * factor + offset` on indices, without the trivial steps.
Value scaleAndShift(OpBuilder &b, Location loc, Value value, int64_t factor,
                    int64_t offset) {
  if (factor != 1)
    value = arith::MulIOp::create(
        b, loc, value, arith::ConstantIndexOp::create(b, loc, factor));
  if (offset != 0)
    value = arith::AddIOp::create(
        b, loc, value, arith::ConstantIndexOp::create(b, loc, offset));
  return value;
}

/// Row-major flat index of the kernel offset held by loops
/// `firstLoop`... of the enclosing linalg op, as i32.
Value flatKernelIndex(OpBuilder &b, Location loc, const WindowGeometry &g,
                      int64_t firstLoop) {
  Value flat = linalg::IndexOp::create(b, loc, firstLoop);
  for (int64_t i = 1; i < g.spatial(); ++i)
    flat = arith::AddIOp::create(
        b, loc, scaleAndShift(b, loc, flat, g.kernel[i], 0),
        linalg::IndexOp::create(b, loc, firstLoop + i));
  return arith::IndexCastOp::create(b, loc, b.getI32Type(), flat);
}

/// Whether the window element at output loops `2...` and kernel loops
/// `2 + spatial...` is a real input element, not padding: only tested on
/// axes that have padding.
Value isRealPosition(OpBuilder &b, Location loc, const WindowGeometry &g) {
  Value real = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  for (int64_t i = 0; i < g.spatial(); ++i) {
    if (g.padBegin[i] == 0 && g.reachPad(i) == 0)
      continue;
    // o * stride + k * dilation - pad_begin in [0, input).
    Value position = arith::AddIOp::create(
        b, loc,
        scaleAndShift(b, loc, linalg::IndexOp::create(b, loc, 2 + i),
                      g.strides[i], -g.padBegin[i]),
        scaleAndShift(b, loc,
                      linalg::IndexOp::create(b, loc, 2 + g.spatial() + i),
                      g.dilations[i], 0));
    Value above =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, position,
                              arith::ConstantIndexOp::create(b, loc, 0));
    Value below = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::slt, position,
        arith::ConstantIndexOp::create(b, loc, g.input[i]));
    real = arith::AndIOp::create(b, loc, real,
                                 arith::AndIOp::create(b, loc, above, below));
  }
  return real;
}

/// Each kernel offset's share of the gradient, [N, C, K..., O...]: the
/// output gradient where that offset won the window (`winners`), else zero.
Value buildShares(OpBuilder &b, Location loc, Value grad, Value winners,
                  AffineMap sourceMap, ArrayRef<int64_t> shape,
                  const WindowGeometry &g) {
  Type element = tensorType(grad).getElementType();
  Value init = tensor::EmptyOp::create(b, loc, shape, element);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{grad, winners},
             ValueRange{init},
             ArrayRef<AffineMap>{sourceMap, sourceMap,
                                 AffineMap::getMultiDimIdentityMap(
                                     shape.size(), b.getContext())},
             iteratorTypes(shape.size()),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value offset = flatKernelIndex(nb, nloc, g, 2);
               Value won = arith::CmpIOp::create(
                   nb, nloc, arith::CmpIPredicate::eq, offset, args[1]);
               linalg::YieldOp::create(
                   nb, nloc,
                   arith::SelectOp::create(
                       nb, nloc, won, args[0],
                       floatConstant(nb, nloc, element, 0.0))
                       .getResult());
             })
      .getResult(0);
}

/// The winner of each window of the forward `input`, the flat kernel offset
/// of its first maximum, as an i32 tensor of the output's `shape`: loops
/// n, c, o... (parallel), k... (reduction). The comparison (larger value,
/// then smaller offset) is order-independent, so the reduction may run in
/// any order.
Value findWinners(OpBuilder &rewriter, Location loc, Value input, Type element,
                  ArrayRef<int64_t> shape, const WindowGeometry &g) {
  MLIRContext *context = rewriter.getContext();
  int64_t spatial = g.spatial();
  SmallVector<int64_t> low, high;
  g.reachPads(low, high);
  Value padded =
      padTensor(rewriter, loc, input, low, high, negativeInfinity(element));
  SmallVector<AffineMap, 3> maps = g.windowReductionMaps(context);
  maps.push_back(maps.back());
  Value kernel = tensor::EmptyOp::create(rewriter, loc, g.kernel, element);
  Value maxInit = filledTensor(rewriter, loc, shape, negativeInfinity(element));
  Value winnerInit = filledTensor(
      rewriter, loc, shape,
      rewriter.getI32IntegerAttr(std::numeric_limits<int32_t>::max()));
  auto argmax = linalg::GenericOp::create(
      rewriter, loc, TypeRange{maxInit.getType(), winnerInit.getType()},
      ValueRange{padded, kernel}, ValueRange{maxInit, winnerInit}, maps,
      iteratorTypes(2 + spatial, spatial),
      [&](OpBuilder &b, Location nloc, ValueRange args) {
        Value x = args[0], max = args[2], winner = args[3];
        Value offset = flatKernelIndex(b, nloc, g, 2 + spatial);
        Value real = isRealPosition(b, nloc, g);
        Value greater =
            arith::CmpFOp::create(b, nloc, arith::CmpFPredicate::OGT, x, max);
        Value tie = arith::AndIOp::create(
            b, nloc,
            arith::CmpFOp::create(b, nloc, arith::CmpFPredicate::OEQ, x, max),
            arith::CmpIOp::create(b, nloc, arith::CmpIPredicate::slt, offset,
                                  winner));
        Value wins = arith::AndIOp::create(
            b, nloc, real, arith::OrIOp::create(b, nloc, greater, tie));
        linalg::YieldOp::create(
            b, nloc,
            ValueRange{arith::SelectOp::create(b, nloc, wins, x, max),
                       arith::SelectOp::create(b, nloc, wins, offset, winner)});
      });
  return argmax.getResult(1);
}

/// Whether the windows tile the input exactly: stride equal to the kernel,
/// no dilation, no padding, and the windows covering every input element,
/// so that each input element belongs to exactly one window.
bool windowsTileInput(const WindowGeometry &g) {
  for (int64_t i = 0; i < g.spatial(); ++i)
    if (g.strides[i] != g.kernel[i] || g.dilations[i] != 1 ||
        g.padBegin[i] != 0 || g.padEnd[i] != 0 ||
        g.output[i] * g.kernel[i] != g.input[i])
      return false;
  return true;
}

/// dx of max pooling whose windows tile the input (windowsTileInput): one
/// elementwise pass writes each input element's gradient, its window's
/// output gradient where it is the window's winner and zero elsewhere,
/// instead of spreading per-offset shares and summing them (which moves
/// several times the input's size). Loops n, c, o..., k... over the input
/// viewed as [N, C, O1, K1, O2, K2, ...]; the values equal the general
/// path's (each element's sum has exactly one nonzero term).
Value tiledMaxPoolGrad(OpBuilder &b, Location loc, Value grad, Value winners,
                       RankedTensorType resultType, const WindowGeometry &g) {
  MLIRContext *context = b.getContext();
  int64_t spatial = g.spatial();
  Type element = resultType.getElementType();
  SmallVector<int64_t> tiledShape(resultType.getShape().take_front(2));
  SmallVector<ReassociationIndices> reassociation = {{0}, {1}};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t first = tiledShape.size();
    tiledShape.append({g.output[i], g.kernel[i]});
    reassociation.push_back({first, first + 1});
  }
  auto dim = [&](int64_t i) { return getAffineDimExpr(i, context); };
  int64_t numLoops = 2 + 2 * spatial;
  SmallVector<AffineExpr> windowExprs = {dim(0), dim(1)},
                          tiledExprs = {dim(0), dim(1)};
  for (int64_t i = 0; i < spatial; ++i) {
    windowExprs.push_back(dim(2 + i));
    tiledExprs.append({dim(2 + i), dim(2 + spatial + i)});
  }
  AffineMap windowMap = AffineMap::get(numLoops, 0, windowExprs, context);
  Value init = tensor::EmptyOp::create(b, loc, tiledShape, element);
  Value tiled =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{grad, winners},
          ValueRange{init},
          ArrayRef<AffineMap>{windowMap, windowMap,
                              AffineMap::get(numLoops, 0, tiledExprs,
                                             context)},
          iteratorTypes(numLoops),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            Value offset = flatKernelIndex(nb, nloc, g, 2 + spatial);
            Value won = arith::CmpIOp::create(
                nb, nloc, arith::CmpIPredicate::eq, offset, args[1]);
            linalg::YieldOp::create(
                nb, nloc,
                arith::SelectOp::create(nb, nloc, won, args[0],
                                        floatConstant(nb, nloc, element, 0.0))
                    .getResult());
          })
          .getResult(0);
  return tensor::CollapseShapeOp::create(b, loc, resultType, tiled,
                                         reassociation);
}

/// Each window's winner, each kernel offset's share of the gradient, then
/// the gather of the shares into the input's positions (or, for windows
/// that tile the input, one pass: tiledMaxPoolGrad).
struct MaxPoolBackwardLowering : OpConversionPattern<train::MaxPoolBackwardOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::MaxPoolBackwardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    RankedTensorType resultType = op.getType();
    Type element = resultType.getElementType();
    RankedTensorType gradType = tensorType(adaptor.getGrad());
    WindowGeometry g(resultType.getShape(), gradType.getShape(),
                     op.getKernelShape(), op.getStrides(), op.getDilations(),
                     op.getPads());
    int64_t spatial = g.spatial();
    auto dim = [&](int64_t i) { return getAffineDimExpr(i, context); };

    Value winners = findWinners(rewriter, loc, adaptor.getInput(), element,
                                gradType.getShape(), g);
    if (windowsTileInput(g)) {
      rewriter.replaceOp(op, tiledMaxPoolGrad(rewriter, loc, adaptor.getGrad(),
                                              winners, resultType, g));
      return success();
    }

    // Each kernel offset's share: the gradient where it won, else zero.
    // Loops n, c, k..., o... all parallel.
    SmallVector<int64_t> shareShape(gradType.getShape().take_front(2));
    llvm::append_range(shareShape, g.kernel);
    llvm::append_range(shareShape, g.output);
    SmallVector<AffineExpr> sourceExprs = {dim(0), dim(1)};
    for (int64_t i = 0; i < spatial; ++i)
      sourceExprs.push_back(dim(2 + spatial + i));
    AffineMap sourceMap =
        AffineMap::get(2 + 2 * spatial, 0, sourceExprs, context);
    Value shares = buildShares(rewriter, loc, adaptor.getGrad(), winners,
                               sourceMap, shareShape, g);

    Value result =
        gatherWindows(rewriter, loc, spread(rewriter, loc, shares, g),
                      /*perOffset=*/true, g, resultType);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The count of every output position's window (`windowCount`, the
/// product over the spatial axes), as an `accType` tensor of the output's
/// spatial shape.
Value windowCounts(OpBuilder &b, Location loc, const WindowGeometry &g,
                   bool countIncludePad, Type accType) {
  // Row-major over the spatial axes.
  SmallVector<double> counts = {1.0};
  for (int64_t i = 0; i < g.spatial(); ++i) {
    SmallVector<double> next;
    for (double prefix : counts)
      for (int64_t o = 0; o < g.output[i]; ++o)
        next.push_back(
            prefix * static_cast<double>(g.windowCount(i, o, countIncludePad)));
    counts = std::move(next);
  }
  return floatTensorConstant(b, loc, RankedTensorType::get(g.output, accType),
                             counts);
}

/// The gradient divided by each window's count (as the forward lowering
/// counts: real elements, or the window clipped to the padded input with
/// count_include_pad), spread and summed over every kernel offset.
struct AvgPoolBackwardLowering : OpConversionPattern<train::AvgPoolBackwardOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::AvgPoolBackwardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    RankedTensorType resultType = op.getType();
    Type element = resultType.getElementType();
    Type accType = accumulatorType(element);
    RankedTensorType gradType = tensorType(adaptor.getGrad());
    int64_t rank = gradType.getRank();
    SmallVector<int64_t> ones(rank - 2, 1);
    WindowGeometry g(resultType.getShape(), gradType.getShape(),
                     op.getKernelShape(), op.getStrides(), ones, op.getPads());
    int64_t spatial = g.spatial();

    Value countTensor =
        windowCounts(rewriter, loc, g, op.getCountIncludePad(), accType);
    SmallVector<AffineExpr> spatialExprs;
    for (int64_t i = 0; i < spatial; ++i)
      spatialExprs.push_back(getAffineDimExpr(2 + i, context));
    Value init =
        tensor::EmptyOp::create(rewriter, loc, gradType.getShape(), accType);
    Value shares =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{init.getType()},
            ValueRange{adaptor.getGrad(), countTensor}, ValueRange{init},
            ArrayRef<AffineMap>{
                AffineMap::getMultiDimIdentityMap(rank, context),
                AffineMap::get(rank, 0, spatialExprs, context),
                AffineMap::getMultiDimIdentityMap(rank, context)},
            iteratorTypes(rank),
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              linalg::YieldOp::create(
                  b, nloc,
                  arith::DivFOp::create(
                      b, nloc, convertFloat(b, nloc, args[0], accType), args[1])
                      .getResult());
            })
            .getResult(0);
    Value result =
        gatherWindows(rewriter, loc, spread(rewriter, loc, shares, g),
                      /*perOffset=*/false, g, resultType);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void traincc::codegen::populateWindowGradientPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ConvBackwardDataLowering, ConvBackwardFilterLowering,
               MaxPoolBackwardLowering, AvgPoolBackwardLowering>(
      patterns.getContext());
}
