//===- WinogradConvolutions.cpp - 3x3 convolutions by Winograd F(2x2,3x3) -===//
//
// A 3x3 stride-1 convolution computes each 2x2 block of outputs from a 4x4
// tile of its input with 16 products per channel pair instead of 36
// (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks"):
//
//   Y = A^T [ (G g G^T) . (B^T d B) ] A
//
// With the filter transform U = G g G^T and the input transform
// V = B^T d B computed once per channel, the products become 16 matrix
// products over the channels, M[xi,nu] = U[xi,nu] x V[xi,nu]: 2.25 times
// fewer multiply-adds than the direct convolution, in the contraction
// kernels the CPU already tiles for registers. The transforms are
// elementwise passes whose cost grows with the channels while the
// products' grows with their square, so only wide layers gain.
//
// The data gradient of a stride-1 convolution is itself one: the output
// gradient, padded by 2 - pad, correlated with the weight flipped and its
// channel axes swapped, which the filter transform reads directly. The
// filter gradient is F(3x3, 2x2): each 2x2 block of output gradients
// correlated with its 4x4 input tile, the 16 products summed over the
// tiles by one contraction.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/Common/KernelCost.h"
#include "traincc/Codegen/Common/LinalgBuilders.h"
#include "traincc/Codegen/Common/WindowGeometry.h"
#include "traincc/Codegen/TrainToLinalg/Passes.h"
#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace traincc {
#define GEN_PASS_DEF_WINOGRADCONVOLUTIONSPASS
#include "traincc/Codegen/TrainToLinalg/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc::codegen;
namespace train = traincc::train;

namespace {

// F(2x2, 3x3): 4x4 input tiles, 2x2 output blocks.
constexpr int64_t kTile = 4, kBlock = 2, kTaps = 3;
// The tile columns the contraction walks per block of images: their
// products' inputs (channels x tiles) stay cached while every output
// channel passes over them.
constexpr int64_t kTilesPerBlock = 512;

// The transforms' loops end with the tile positions (4x4, 2x2 or 3x3),
// marked kKeepLoopOrderAttrName: traincc-unroll-tile-positions unrolls
// them whole, so that the selects below fold to one formula each and a
// tile's loads are shared.

/// `candidates[position]`, for a loop index `position` that the unrolled
/// loop makes a constant.
Value selectByPosition(OpBuilder &b, Location loc, int64_t loop,
                       ArrayRef<Value> candidates) {
  Value position = linalg::IndexOp::create(b, loc, loop);
  Value chosen = candidates.back();
  for (int64_t k = candidates.size() - 2; k >= 0; --k) {
    Value isK = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, position,
        arith::ConstantIndexOp::create(b, loc, k));
    chosen = arith::SelectOp::create(b, loc, isK, candidates[k], chosen);
  }
  return chosen;
}

/// B^T d for one column d[0..3] of a tile: the 4 rows of the transform.
/// F(3x3, 2x2) (the filter gradient's) has the last row negated.
SmallVector<Value> inputRows(OpBuilder &b, Location loc, ArrayRef<Value> d,
                             bool filterGradient) {
  auto add = [&](Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); };
  auto sub = [&](Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); };
  return {sub(d[0], d[2]), add(d[1], d[2]), sub(d[2], d[1]),
          filterGradient ? sub(d[3], d[1]) : sub(d[1], d[3])};
}

/// G' g for one column g[0..1] of a 2x2 block of output gradients, F(3x3,
/// 2x2)'s filter transform: the 4 rows.
SmallVector<Value> gradientRows(OpBuilder &b, Location loc, ArrayRef<Value> g) {
  Value half = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.5));
  auto halve = [&](Value x) { return arith::MulFOp::create(b, loc, x, half); };
  return {g[0], halve(arith::AddFOp::create(b, loc, g[0], g[1])),
          halve(arith::SubFOp::create(b, loc, g[0], g[1])), g[1]};
}

/// A'^T m for one column m[0..3], F(3x3, 2x2)'s output transform: the 3
/// rows of a filter.
SmallVector<Value> filterGradientRows(OpBuilder &b, Location loc,
                                      ArrayRef<Value> m) {
  auto add = [&](Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); };
  auto sub = [&](Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); };
  Value middle = add(m[1], m[2]);
  return {add(m[0], middle), sub(m[1], m[2]), add(middle, m[3])};
}

/// G g for one column g[0..2] of a filter: the 4 rows of the transform.
SmallVector<Value> filterRows(OpBuilder &b, Location loc, ArrayRef<Value> g) {
  Value half = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.5));
  auto add = [&](Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); };
  auto sub = [&](Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); };
  auto halve = [&](Value x) { return arith::MulFOp::create(b, loc, x, half); };
  Value outer = add(g[0], g[2]);
  return {g[0], halve(add(outer, g[1])), halve(sub(outer, g[1])), g[2]};
}

/// A^T m for one column m[0..3] of a tile's products: the 2 rows.
SmallVector<Value> outputRows(OpBuilder &b, Location loc, ArrayRef<Value> m) {
  auto add = [&](Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); };
  auto sub = [&](Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); };
  return {add(add(m[0], m[1]), m[2]), sub(sub(m[1], m[2]), m[3])};
}

/// A parallel `linalg.generic` of `loops` loops writing a new tensor of
/// `shape` through `outputMap`, marked to keep its loop order.
Value buildTransform(OpBuilder &b, Location loc, ValueRange inputs,
                     ArrayRef<AffineMap> inputMaps, ArrayRef<int64_t> shape,
                     AffineMap outputMap,
                     function_ref<Value(OpBuilder &, Location, ValueRange)>
                         body) {
  Value init = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(outputMap);
  auto op = linalg::GenericOp::create(
      b, loc, init.getType(), inputs, ValueRange{init}, maps,
      iteratorTypes(outputMap.getNumDims()),
      [&](OpBuilder &b, Location loc, ValueRange args) {
        linalg::YieldOp::create(b, loc, body(b, loc, args.drop_back()));
      });
  op->setAttr(kKeepLoopOrderAttrName, b.getUnitAttr());
  return op.getResult(0);
}

/// What the lowering of one convolution needs: the padded input (its
/// channels the contraction's, its rows and columns each output's plus 2),
/// the weight as stored, read as `o, i, r, s` or (data gradient) as
/// `i, o, 2 - r, 2 - s`, the bias (or null) and the output type.
struct WinogradConv {
  Value padded, weight, bias;
  bool flipWeight;
  RankedTensorType resultType;
};

/// U[xi, nu, o, i] = (G g G^T)[xi, nu] of the 3x3 filter g = w'[o, i].
/// Loops: o, i, xi, nu.
Value filterTransform(OpBuilder &b, Location loc, const WinogradConv &conv,
                      int64_t outChannels, int64_t inChannels) {
  MLIRContext *context = b.getContext();
  AffineExpr o = getAffineDimExpr(0, context), i = getAffineDimExpr(1, context),
             xi = getAffineDimExpr(2, context), nu = getAffineDimExpr(3, context);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (int64_t r = 0; r < kTaps; ++r)
    for (int64_t s = 0; s < kTaps; ++s) {
      inputs.push_back(conv.weight);
      SmallVector<AffineExpr> exprs =
          conv.flipWeight
              ? SmallVector<AffineExpr>{i, o, b.getAffineConstantExpr(2 - r),
                                        b.getAffineConstantExpr(2 - s)}
              : SmallVector<AffineExpr>{o, i, b.getAffineConstantExpr(r),
                                        b.getAffineConstantExpr(s)};
      maps.push_back(AffineMap::get(4, 0, exprs, context));
    }
  return buildTransform(
      b, loc, inputs, maps, {kTile, kTile, outChannels, inChannels},
      AffineMap::get(4, 0, {xi, nu, o, i}, context),
      [&](OpBuilder &b, Location loc, ValueRange g) {
        // Rows xi of G g, column by column, then the columns nu of (G g) G^T.
        SmallVector<Value> row;
        for (int64_t s = 0; s < kTaps; ++s)
          row.push_back(selectByPosition(
              b, loc, 2,
              filterRows(b, loc, {g[s], g[kTaps + s], g[2 * kTaps + s]})));
        return selectByPosition(b, loc, 3, filterRows(b, loc, row));
      });
}

/// The 4x4 transform R t R^T of every `size` x `size` tile t =
/// source[block * images + image, c, 2 th.., 2 tw..], with `rows` giving
/// R's 4 rows from one column of t: a tensor
/// [xi, nu, block, c, image, th, tw]. Loops: block, c, image, th, tw, xi,
/// nu.
Value tileTransform(
    OpBuilder &b, Location loc, Value source, int64_t size, int64_t blocks,
    int64_t images, int64_t tileRows, int64_t tileColumns,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ArrayRef<Value>)>
        rows) {
  MLIRContext *context = b.getContext();
  auto dim = [&](int64_t d) { return getAffineDimExpr(d, context); };
  AffineExpr block = dim(0), c = dim(1), image = dim(2), th = dim(3),
             tw = dim(4), xi = dim(5), nu = dim(6);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (int64_t row = 0; row < size; ++row)
    for (int64_t column = 0; column < size; ++column) {
      inputs.push_back(source);
      maps.push_back(AffineMap::get(7, 0,
                                    {block * images + image, c,
                                     th * kBlock + row, tw * kBlock + column},
                                    context));
    }
  int64_t channels = tensorType(source).getDimSize(1);
  return buildTransform(
      b, loc, inputs, maps,
      {kTile, kTile, blocks, channels, images, tileRows, tileColumns},
      AffineMap::get(7, 0, {xi, nu, block, c, image, th, tw}, context),
      [&](OpBuilder &b, Location loc, ValueRange t) {
        SmallVector<Value> rowsOfColumns;
        for (int64_t column = 0; column < size; ++column) {
          SmallVector<Value> values;
          for (int64_t row = 0; row < size; ++row)
            values.push_back(t[row * size + column]);
          rowsOfColumns.push_back(
              selectByPosition(b, loc, 5, rows(b, loc, values)));
        }
        return selectByPosition(b, loc, 6, rows(b, loc, rowsOfColumns));
      });
}

/// V[xi, nu, block, i, image, th, tw] = (B^T d B)[xi, nu] of the 4x4 tile
/// d = padded[block * images + image, i, 2 th.., 2 tw..] (B'^T d B' for
/// the filter gradient).
Value inputTransform(OpBuilder &b, Location loc, Value padded, int64_t blocks,
                     int64_t images, int64_t tileRows, int64_t tileColumns,
                     bool filterGradient = false) {
  return tileTransform(b, loc, padded, kTile, blocks, images, tileRows,
                       tileColumns,
                       [&](OpBuilder &b, Location loc, ArrayRef<Value> d) {
                         return inputRows(b, loc, d, filterGradient);
                       });
}

/// M[x, block, o, t] = sum_i U[x, o, i] V[x, block, i, t] for the 16 tile
/// positions x.
Value tileProducts(OpBuilder &b, Location loc, Value filter, Value data,
                   traincc_kernel_class kind) {
  MLIRContext *context = b.getContext();
  auto dim = [&](int64_t d) { return getAffineDimExpr(d, context); };
  // Loops: x, block, o (parallel), i (reduction), t (parallel): a block's
  // inputs are reused by every output channel, the tiles walk
  // contiguously innermost as the register tiles want.
  AffineExpr x = dim(0), block = dim(1), o = dim(2), i = dim(3), t = dim(4);
  RankedTensorType filterType = tensorType(filter), dataType = tensorType(data);
  Value init = zeroTensor(b, loc,
                          {filterType.getDimSize(0), dataType.getDimSize(1),
                           filterType.getDimSize(1), dataType.getDimSize(3)},
                          b.getF32Type());
  auto product = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{filter, data}, ValueRange{init},
      ArrayRef<AffineMap>{AffineMap::get(5, 0, {x, o, i}, context),
                          AffineMap::get(5, 0, {x, block, i, t}, context),
                          AffineMap::get(5, 0, {x, block, o, t}, context)},
      ArrayRef<utils::IteratorType>{
          utils::IteratorType::parallel, utils::IteratorType::parallel,
          utils::IteratorType::parallel, utils::IteratorType::reduction,
          utils::IteratorType::parallel},
      multiplyAccumulate);
  traincc::setKernelClass(product, kind);
  product->setAttr(kCacheBlockedAttrName, b.getUnitAttr());
  return product.getResult(0);
}

/// Y[block * images + image, o, 2 th + p, 2 tw + q] =
///   (A^T M A)[p, q] of M[.., block, o, image, th, tw] (+ bias[o]).
/// Loops: block, image, o, th, tw, p, q.
Value outputTransform(OpBuilder &b, Location loc, Value products, Value bias,
                      RankedTensorType resultType) {
  MLIRContext *context = b.getContext();
  auto dim = [&](int64_t d) { return getAffineDimExpr(d, context); };
  AffineExpr block = dim(0), image = dim(1), o = dim(2), th = dim(3),
             tw = dim(4), p = dim(5), q = dim(6);
  RankedTensorType productType = tensorType(products);
  int64_t blocks = productType.getDimSize(2),
          images = productType.getDimSize(4),
          channels = resultType.getDimSize(1),
          tileRows = productType.getDimSize(5),
          tileColumns = productType.getDimSize(6);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (int64_t xi = 0; xi < kTile; ++xi)
    for (int64_t nu = 0; nu < kTile; ++nu) {
      inputs.push_back(products);
      maps.push_back(AffineMap::get(
          7, 0,
          {b.getAffineConstantExpr(xi), b.getAffineConstantExpr(nu), block, o,
           image, th, tw},
          context));
    }
  if (bias) {
    inputs.push_back(bias);
    maps.push_back(AffineMap::get(7, 0, o));
  }
  Value blocksOut = buildTransform(
      b, loc, inputs, maps,
      {blocks, images, channels, tileRows, kBlock, tileColumns, kBlock},
      AffineMap::get(7, 0, {block, image, o, th, p, tw, q}, context),
      [&](OpBuilder &b, Location loc, ValueRange args) {
        SmallVector<Value> row;
        for (int64_t nu = 0; nu < kTile; ++nu)
          row.push_back(selectByPosition(
              b, loc, 5,
              outputRows(b, loc,
                         {args[nu], args[kTile + nu], args[2 * kTile + nu],
                          args[3 * kTile + nu]})));
        Value sum = selectByPosition(b, loc, 6, outputRows(b, loc, row));
        if (bias)
          sum = arith::AddFOp::create(b, loc, sum, args.back());
        return sum;
      });
  return tensor::CollapseShapeOp::create(
      b, loc, resultType, blocksOut,
      ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3, 4}, {5, 6}});
}

/// Images per block of tiles: as many as fill kTilesPerBlock tiles, a
/// divisor of the batch.
int64_t imagesPerBlock(int64_t batch, int64_t tilesPerImage) {
  int64_t images =
      std::clamp<int64_t>(kTilesPerBlock / tilesPerImage, 1, batch);
  while (batch % images != 0)
    --images;
  return images;
}

/// The whole convolution: transforms, the 16 products, the output
/// transform.
Value buildWinogradConv(OpBuilder &b, Location loc, const WinogradConv &conv,
                        traincc_kernel_class kind) {
  RankedTensorType resultType = conv.resultType;
  int64_t batch = resultType.getDimSize(0),
          outChannels = resultType.getDimSize(1),
          inChannels = tensorType(conv.padded).getDimSize(1),
          tileRows = resultType.getDimSize(2) / kBlock,
          tileColumns = resultType.getDimSize(3) / kBlock;
  int64_t images = imagesPerBlock(batch, tileRows * tileColumns);
  int64_t blocks = batch / images, tiles = images * tileRows * tileColumns;
  int64_t positions = kTile * kTile;
  Value filter = tensor::CollapseShapeOp::create(
      b, loc,
      RankedTensorType::get({positions, outChannels, inChannels},
                            b.getF32Type()),
      filterTransform(b, loc, conv, outChannels, inChannels),
      ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
  Value data = tensor::CollapseShapeOp::create(
      b, loc,
      RankedTensorType::get({positions, blocks, inChannels, tiles},
                            b.getF32Type()),
      inputTransform(b, loc, conv.padded, blocks, images, tileRows,
                     tileColumns),
      ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}, {4, 5, 6}});
  Value products = tileProducts(b, loc, filter, data, kind);
  Value productTiles = tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get({kTile, kTile, blocks, outChannels, images,
                             tileRows, tileColumns},
                            b.getF32Type()),
      products, ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}, {4, 5, 6}});
  return outputTransform(b, loc, productTiles, conv.bias, resultType);
}

//===----------------------------------------------------------------------===//
// Filter gradient: F(3x3, 2x2)
//===----------------------------------------------------------------------===//
//
// dw[o, i, r, s] = sum over images and 2x2 blocks of output gradients of
//   sum_{a, b} dy[2 th + a, 2 tw + b] x[2 th + a + r, 2 tw + b + s]:
// per block, a 3x3 correlation of the 4x4 input tile with the 2x2 block,
// Winograd F(3x3, 2x2): A'^T [(G' dy G'^T) . (B'^T x B')] A'. Summed over
// the blocks first, the products become 16 contractions over the tiles.

/// U'[xi, nu, block, o, image, th, tw] = (G' g G'^T)[xi, nu] of the 2x2
/// block g of output gradients.
Value gradientTransform(OpBuilder &b, Location loc, Value grad, int64_t blocks,
                        int64_t images, int64_t tileRows, int64_t tileColumns) {
  return tileTransform(b, loc, grad, kBlock, blocks, images, tileRows,
                       tileColumns, gradientRows);
}

/// M[x, o, i] = sum over blocks and tiles of U'[x, block, o, t]
/// V'[x, block, i, t]. The vectorizer blocks the reduction over `block`
/// so that a block's tiles stay cached while every (o, i) tile walks them.
Value tileGradientProducts(OpBuilder &b, Location loc, Value gradients,
                           Value data) {
  MLIRContext *context = b.getContext();
  auto dim = [&](int64_t d) { return getAffineDimExpr(d, context); };
  AffineExpr x = dim(0), o = dim(1), i = dim(2), block = dim(3), t = dim(4);
  RankedTensorType gradType = tensorType(gradients), dataType = tensorType(data);
  Value init = zeroTensor(
      b, loc,
      {gradType.getDimSize(0), gradType.getDimSize(2), dataType.getDimSize(2)},
      b.getF32Type());
  auto product = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{gradients, data}, ValueRange{init},
      ArrayRef<AffineMap>{AffineMap::get(5, 0, {x, block, o, t}, context),
                          AffineMap::get(5, 0, {x, block, i, t}, context),
                          AffineMap::get(5, 0, {x, o, i}, context)},
      ArrayRef<utils::IteratorType>{
          utils::IteratorType::parallel, utils::IteratorType::parallel,
          utils::IteratorType::parallel, utils::IteratorType::reduction,
          utils::IteratorType::reduction},
      multiplyAccumulate);
  traincc::setKernelClass(product, TRAINCC_KERNEL_CONV_FILTER_GRADIENT);
  return product.getResult(0);
}

/// dw[o, i, r, s] = (A'^T M A')[r, s] of M[.., o, i]. Loops: o, i, r, s.
Value filterGradientTransform(OpBuilder &b, Location loc, Value products,
                              RankedTensorType resultType) {
  MLIRContext *context = b.getContext();
  auto dim = [&](int64_t d) { return getAffineDimExpr(d, context); };
  AffineExpr o = dim(0), i = dim(1);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (int64_t xi = 0; xi < kTile; ++xi)
    for (int64_t nu = 0; nu < kTile; ++nu) {
      inputs.push_back(products);
      maps.push_back(AffineMap::get(
          4, 0, {b.getAffineConstantExpr(xi), b.getAffineConstantExpr(nu), o, i},
          context));
    }
  return buildTransform(
      b, loc, inputs, maps, resultType.getShape(),
      AffineMap::getMultiDimIdentityMap(4, context),
      [&](OpBuilder &b, Location loc, ValueRange m) {
        SmallVector<Value> row;
        for (int64_t nu = 0; nu < kTile; ++nu)
          row.push_back(selectByPosition(
              b, loc, 2,
              filterGradientRows(b, loc,
                                 {m[nu], m[kTile + nu], m[2 * kTile + nu],
                                  m[3 * kTile + nu]})));
        return selectByPosition(b, loc, 3, filterGradientRows(b, loc, row));
      });
}

/// The whole filter gradient from the padded input and the output gradient.
Value buildWinogradFilterGradient(OpBuilder &b, Location loc, Value padded,
                                  Value grad, RankedTensorType resultType) {
  RankedTensorType gradType = tensorType(grad);
  int64_t batch = gradType.getDimSize(0), outChannels = gradType.getDimSize(1),
          inChannels = tensorType(padded).getDimSize(1),
          tileRows = gradType.getDimSize(2) / kBlock,
          tileColumns = gradType.getDimSize(3) / kBlock;
  int64_t images = imagesPerBlock(batch, tileRows * tileColumns);
  int64_t blocks = batch / images, tiles = images * tileRows * tileColumns;
  int64_t positions = kTile * kTile;
  SmallVector<ReassociationIndices> blocked = {{0, 1}, {2}, {3}, {4, 5, 6}};
  Value gradients = tensor::CollapseShapeOp::create(
      b, loc,
      RankedTensorType::get({positions, blocks, outChannels, tiles},
                            b.getF32Type()),
      gradientTransform(b, loc, grad, blocks, images, tileRows, tileColumns),
      blocked);
  Value data = tensor::CollapseShapeOp::create(
      b, loc,
      RankedTensorType::get({positions, blocks, inChannels, tiles},
                            b.getF32Type()),
      inputTransform(b, loc, padded, blocks, images, tileRows, tileColumns,
                     /*filterGradient=*/true),
      blocked);
  Value products = tensor::ExpandShapeOp::create(
      b, loc,
      RankedTensorType::get({kTile, kTile, outChannels, inChannels},
                            b.getF32Type()),
      tileGradientProducts(b, loc, gradients, data),
      ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
  return filterGradientTransform(b, loc, products, resultType);
}

/// Whether a convolution of these operands gains from Winograd: f32, 2-D,
/// one group, 3x3, stride and dilation 1, static shapes, an even number of
/// output rows and columns, and at least `minChannels` channels on both
/// sides.
bool qualifies(RankedTensorType input, RankedTensorType weight,
               RankedTensorType result, ArrayRef<int64_t> strides,
               ArrayRef<int64_t> dilations, int64_t groups,
               int64_t minChannels) {
  auto f32 = [](RankedTensorType type) {
    return type.getElementType().isF32() && type.hasStaticShape() &&
           type.getRank() == 4;
  };
  if (!f32(input) || !f32(weight) || !f32(result) || groups != 1)
    return false;
  if (weight.getDimSize(2) != kTaps || weight.getDimSize(3) != kTaps ||
      llvm::any_of(strides, [](int64_t s) { return s != 1; }) ||
      llvm::any_of(dilations, [](int64_t d) { return d != 1; }))
    return false;
  return result.getDimSize(2) % kBlock == 0 &&
         result.getDimSize(3) % kBlock == 0 &&
         weight.getDimSize(0) >= minChannels &&
         weight.getDimSize(1) >= minChannels;
}

/// `input` zero-padded by the forward convolution's own pads, as it reads
/// it (the output's rows and columns plus 2 for a 3x3 kernel).
Value padForwardInput(OpBuilder &b, Location loc, Value input,
                      ArrayRef<int64_t> outputShape, ArrayRef<int64_t> kernel,
                      ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                      ArrayRef<int64_t> pads) {
  WindowGeometry g(tensorType(input).getShape(), outputShape, kernel, strides,
                   dilations, pads);
  SmallVector<int64_t> low, high;
  g.ownPads(low, high);
  return padTensor(b, loc, input, low, high, b.getF32FloatAttr(0.0));
}

struct WinogradConvolutionsPass
    : public traincc::impl::WinogradConvolutionsPassBase<
          WinogradConvolutionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (minChannels <= 0)
      return;
    SmallVector<Operation *> convs;
    getOperation().walk([&](Operation *op) {
      // A recomputed op's lowering carries marks that keep CSE off it; the
      // direct lowering knows them.
      if (op->hasAttr("train.recomputed"))
        return;
      if (isa<train::ConvOp, train::ConvBackwardDataOp,
              train::ConvBackwardFilterOp>(op))
        convs.push_back(op);
    });
    for (Operation *op : convs) {
      OpBuilder b(op);
      if (auto conv = dyn_cast<train::ConvOp>(op))
        rewriteForward(b, conv);
      else if (auto filter = dyn_cast<train::ConvBackwardFilterOp>(op))
        rewriteFilterGradient(b, filter);
      else
        rewriteDataGradient(b, cast<train::ConvBackwardDataOp>(op));
    }
  }

  void rewriteForward(OpBuilder &b, train::ConvOp op) {
    RankedTensorType input = tensorType(op.getInput()),
                     weight = tensorType(op.getWeight()), result = op.getType();
    if (!qualifies(input, weight, result, op.getStrides(), op.getDilations(),
                   op.getGroups(), minChannels))
      return;
    Location loc = op.getLoc();
    WinogradConv conv{padForwardInput(b, loc, op.getInput(), result.getShape(),
                                      weight.getShape().drop_front(2),
                                      op.getStrides(), op.getDilations(),
                                      op.getPads()),
                      op.getWeight(), op.getBias(), /*flipWeight=*/false,
                      result};
    op.replaceAllUsesWith(
        buildWinogradConv(b, loc, conv, TRAINCC_KERNEL_CONV_FORWARD));
    op.erase();
  }

  void rewriteFilterGradient(OpBuilder &b, train::ConvBackwardFilterOp op) {
    RankedTensorType input = tensorType(op.getInput()),
                     grad = tensorType(op.getGrad()), result = op.getType();
    if (!qualifies(input, result, grad, op.getStrides(), op.getDilations(),
                   op.getGroups(), minChannels))
      return;
    Location loc = op.getLoc();
    Value padded = padForwardInput(b, loc, op.getInput(), grad.getShape(),
                                   result.getShape().drop_front(2),
                                   op.getStrides(), op.getDilations(),
                                   op.getPads());
    op.replaceAllUsesWith(
        buildWinogradFilterGradient(b, loc, padded, op.getGrad(), result));
    op.erase();
  }

  void rewriteDataGradient(OpBuilder &b, train::ConvBackwardDataOp op) {
    RankedTensorType grad = tensorType(op.getGrad()),
                     weight = tensorType(op.getWeight()), result = op.getType();
    // As a convolution: input dy (the weight's axis 0 its channels), output
    // dx (axis 1).
    auto swapped = RankedTensorType::get(
        {weight.getDimSize(1), weight.getDimSize(0), weight.getDimSize(2),
         weight.getDimSize(3)},
        weight.getElementType());
    if (!qualifies(grad, swapped, result, op.getStrides(), op.getDilations(),
                   op.getGroups(), minChannels))
      return;
    WindowGeometry g(result.getShape(), grad.getShape(),
                     weight.getShape().drop_front(2), op.getStrides(),
                     op.getDilations(), op.getPads());
    // dx[x] = sum_r dy[x + r - (2 - padBegin)] w[2 - r]: dy padded by
    // 2 - pad on each side (a larger pad would need cropping).
    SmallVector<int64_t> low(2, 0), high(2, 0);
    for (int64_t i = 0; i < 2; ++i) {
      low.push_back(kTaps - 1 - g.padBegin[i]);
      high.push_back(kTaps - 1 - g.padEnd[i]);
    }
    if (llvm::any_of(low, [](int64_t p) { return p < 0; }) ||
        llvm::any_of(high, [](int64_t p) { return p < 0; }))
      return;
    Location loc = op.getLoc();
    WinogradConv conv{padTensor(b, loc, op.getGrad(), low, high,
                                b.getF32FloatAttr(0.0)),
                      op.getWeight(), Value(), /*flipWeight=*/true, result};
    op.replaceAllUsesWith(
        buildWinogradConv(b, loc, conv, TRAINCC_KERNEL_CONV_DATA_GRADIENT));
    op.erase();
  }
};

} // namespace
