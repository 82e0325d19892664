//===- ConvertTrainToLinalgLinearAlgebra.cpp - conv, BN, gemm, matmul -----===//
//
// The ops that contract: convolution and the matrix products, plus
// BatchNorm (in inference form), which sits next to convolution in every
// network and will be folded into it later. Contractions accumulate in
// `accumulatorType` (f32 for f16/bf16) into an accumulator that starts at the
// bias, and round to the element type once at the end.
//
//===----------------------------------------------------------------------===//

#include "ConvertTrainToLinalg.h"

#include "traincc/Codegen/Common/KernelCost.h"
#include "traincc/Codegen/Common/WindowGeometry.h"

#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace traincc::codegen;
namespace train = traincc::train;

namespace {

/// The starting accumulator of a contraction with result `shape`: `bias`
/// (times `scale`) broadcast over it, or zeros.
Value initialAccumulator(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                         Type accType, Value bias, AffineMap biasMap,
                         double scale = 1.0) {
  if (!bias)
    return zeroTensor(b, loc, shape, accType);
  Value init = tensor::EmptyOp::create(b, loc, shape, accType);
  MLIRContext *context = b.getContext();
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{bias},
             ValueRange{init},
             ArrayRef<AffineMap>{biasMap, AffineMap::getMultiDimIdentityMap(
                                              shape.size(), context)},
             iteratorTypes(shape.size()),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value value = convertFloat(nb, nloc, args[0], accType);
               if (scale != 1.0)
                 value = arith::MulFOp::create(
                     nb, nloc, value, floatConstant(nb, nloc, accType, scale));
               linalg::YieldOp::create(nb, nloc, value);
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

/// An N-d grouped convolution as a `linalg.generic` over grouped views:
/// input N x G x C/G x spatial..., weight G x M/G x C/G x kernel...,
/// accumulator N x G x M/G x out... . Splitting the channel axes keeps every
/// indexing map a projection plus strided window sums, which tiling and
/// vectorisation understand.
Value buildGroupedConv(OpBuilder &b, Location loc, Value input, Value weight,
                       Value init, int64_t groups, const WindowGeometry &g) {
  MLIRContext *context = b.getContext();
  RankedTensorType initType = tensorType(init);
  int64_t rank = initType.getRank();
  int64_t spatial = g.spatial();

  // Axis 1 of the input and the accumulator, axis 0 of the weight, split
  // into groups.
  SmallVector<ReassociationIndices> channelSplit = splitAxis(rank, 1);
  RankedTensorType groupedInit = splitGroups(initType, 1, groups);
  Value inputG = tensor::ExpandShapeOp::create(
      b, loc, splitGroups(tensorType(input), 1, groups), input, channelSplit);
  Value weightG = tensor::ExpandShapeOp::create(
      b, loc, splitGroups(tensorType(weight), 0, groups), weight,
      splitAxis(rank, 0));
  Value initG =
      tensor::ExpandShapeOp::create(b, loc, groupedInit, init, channelSplit);

  // Loops: n, g, m, out_0.. (parallel), c, k_0.. (reduction).
  auto dim = [&](int64_t i) { return getAffineDimExpr(i, context); };
  AffineExpr n = dim(0), gr = dim(1), m = dim(2), c = dim(3 + spatial);
  SmallVector<AffineExpr> inputExprs = {n, gr, c}, weightExprs = {gr, m, c},
                          outputExprs = {n, gr, m};
  for (int64_t i = 0; i < spatial; ++i) {
    AffineExpr out = dim(3 + i), k = dim(4 + spatial + i);
    inputExprs.push_back(g.windowRead(out, k, i));
    weightExprs.push_back(k);
    outputExprs.push_back(out);
  }
  Value result = buildGroupedContraction(b, loc, inputG, weightG, initG,
                                         spatial, inputExprs, weightExprs,
                                         outputExprs, multiplyAccumulate);
  traincc::setKernelClass(result.getDefiningOp(), TRAINCC_KERNEL_CONV_FORWARD);
  return tensor::CollapseShapeOp::create(b, loc, initType, result,
                                         channelSplit);
}

struct ConvLowering : OpConversionPattern<train::ConvOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    Type elementType = resultType.getElementType();
    Type accType = accumulatorType(elementType);
    WindowGeometry g(tensorType(adaptor.getInput()).getShape(),
                     resultType.getShape(),
                     tensorType(adaptor.getWeight()).getShape().drop_front(2),
                     op.getStrides(), op.getDilations(), op.getPads());

    SmallVector<int64_t> low, high;
    g.ownPads(low, high);
    Value input = padTensor(rewriter, loc, adaptor.getInput(), low, high,
                            rewriter.getFloatAttr(elementType, 0.0));

    // The bias (one per output channel, axis 1) starts the accumulator.
    Value init = initialAccumulator(
        rewriter, loc, resultType.getShape(), accType, adaptor.getBias(),
        channelMap(resultType.getRank(), rewriter.getContext()));

    int64_t groups = op.getGroups();
    Value result;
    if (g.spatial() == 2 && groups == 1) {
      result = linalg::Conv2DNchwFchwOp::create(
                   rewriter, loc, TypeRange{init.getType()},
                   ValueRange{input, adaptor.getWeight()}, ValueRange{init},
                   rewriter.getI64TensorAttr(op.getStrides()),
                   rewriter.getI64TensorAttr(op.getDilations()))
                   .getResult(0);
    } else {
      result = buildGroupedConv(rewriter, loc, input, adaptor.getWeight(), init,
                                groups, g);
    }
    rewriter.replaceOp(op,
                       convertElementType(rewriter, loc, result, elementType));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// BatchNorm (inference form)
//===----------------------------------------------------------------------===//

/// y = (x - mean) * (scale / sqrt(var + eps)) + bias with the running
/// statistics. The per-channel factor is computed once, on the C-vector.
struct BatchNormLowering : OpConversionPattern<train::BatchNormOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::BatchNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    Type elementType = resultType.getElementType();
    double epsilon = op.getEpsilon().convertToDouble();
    RankedTensorType channelType = tensorType(adaptor.getScale());

    Value factor = buildElementwise(
        rewriter, loc, ValueRange{adaptor.getScale(), adaptor.getRunningVar()},
        channelType.getShape(), elementType,
        [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
          Value eps = floatConstant(b, nloc, elementType, epsilon);
          Value var = arith::AddFOp::create(b, nloc, args[1], eps);
          Value stddev = math::SqrtOp::create(b, nloc, var);
          return arith::DivFOp::create(b, nloc, args[0], stddev);
        });

    MLIRContext *context = rewriter.getContext();
    int64_t rank = resultType.getRank();
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
    AffineMap channel = channelMap(rank, context);
    Value init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                         elementType);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{resultType},
            ValueRange{adaptor.getInput(), adaptor.getRunningMean(), factor,
                       adaptor.getBias()},
            ValueRange{init},
            ArrayRef<AffineMap>{identity, channel, channel, channel, identity},
            iteratorTypes(rank),
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              Value centred = arith::SubFOp::create(b, nloc, args[0], args[1]);
              Value scaled = arith::MulFOp::create(b, nloc, centred, args[2]);
              linalg::YieldOp::create(
                  b, nloc,
                  arith::AddFOp::create(b, nloc, scaled, args[3]).getResult());
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Gemm and MatMul
//===----------------------------------------------------------------------===//

/// The `indexing_maps` attribute of a `linalg.matmul` over loops (m, n, k)
/// that reads A (`transA`) and B (`transB`) transposed.
NamedAttribute transposedMaps(OpBuilder &b, bool transA, bool transB) {
  MLIRContext *context = b.getContext();
  AffineExpr m = getAffineDimExpr(0, context), n = getAffineDimExpr(1, context),
             k = getAffineDimExpr(2, context);
  auto map = [&](AffineExpr i, AffineExpr j) {
    return AffineMapAttr::get(AffineMap::get(3, 0, {i, j}, context));
  };
  return b.getNamedAttr(
      "indexing_maps",
      b.getArrayAttr({transA ? map(k, m) : map(m, k),
                      transB ? map(n, k) : map(k, n), map(m, n)}));
}

/// The Gemm epilogue alpha * product + beta * c (`c` may be null), in the
/// product's (accumulator) type, rounded to `element`.
Value scaleAndAddBias(OpBuilder &b, Location loc, Value product, Value c,
                      double alpha, double beta, Type element) {
  Type accType = tensorType(product).getElementType();
  SmallVector<Value> inputs = {product};
  if (c)
    inputs.push_back(c);
  return buildElementwise(
      b, loc, inputs, tensorType(product).getShape(), element,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value value = arith::MulFOp::create(
            nb, nloc, args[0], floatConstant(nb, nloc, accType, alpha));
        if (args.size() > 1) {
          Value bias = arith::MulFOp::create(
              nb, nloc, convertFloat(nb, nloc, args[1], accType),
              floatConstant(nb, nloc, accType, beta));
          value = arith::AddFOp::create(nb, nloc, value, bias);
        }
        return convertFloat(nb, nloc, value, element);
      });
}

/// alpha * op(A) * op(B) + beta * C as `linalg.matmul`, the transposes as its
/// indexing maps. With alpha = 1, beta * C starts the accumulator; otherwise
/// an epilogue scales the product and adds it.
struct GemmLowering : OpConversionPattern<train::GemmOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::GemmOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    RankedTensorType resultType = op.getType();
    ArrayRef<int64_t> shape = resultType.getShape();
    Type elementType = resultType.getElementType();
    Type accType = accumulatorType(elementType);
    double alpha = op.getAlpha().convertToDouble();
    double beta = op.getBeta().convertToDouble();
    Value c = adaptor.getC();
    if (c && beta == 0.0)
      c = nullptr;

    Value init;
    if (c && alpha == 1.0)
      init = initialAccumulator(
          rewriter, loc, shape, accType, c,
          broadcastMap(tensorType(c).getShape(), shape, context), beta);
    else
      init = zeroTensor(rewriter, loc, shape, accType);

    SmallVector<NamedAttribute> attrs;
    if (op.getTransA() || op.getTransB())
      attrs.push_back(transposedMaps(rewriter, op.getTransA(), op.getTransB()));
    Value product =
        linalg::MatmulOp::create(rewriter, loc, TypeRange{init.getType()},
                                 ValueRange{adaptor.getA(), adaptor.getB()},
                                 ValueRange{init}, attrs)
            .getResult(0);

    Value result;
    if (alpha == 1.0)
      result = convertElementType(rewriter, loc, product, elementType);
    else
      result =
          scaleAndAddBias(rewriter, loc, product, c, alpha, beta, elementType);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// `value` as a matrix if it is a vector: [1, K] in front (`front`), else
/// [K, 1].
Value promoteVector(OpBuilder &b, Location loc, Value value, bool front) {
  RankedTensorType type = tensorType(value);
  if (type.getRank() != 1)
    return value;
  SmallVector<int64_t> shape = {1, type.getDimSize(0)};
  if (!front)
    std::swap(shape[0], shape[1]);
  return reshapeTensor(b, loc, value,
                       RankedTensorType::get(shape, type.getElementType()));
}

/// The operands of a numpy matmul after vector promotion: batch axes, then
/// rows x inner and inner x cols.
struct MatMulShapes {
  ArrayRef<int64_t> lhsBatch, rhsBatch;
  SmallVector<int64_t> batch;
  int64_t rows, inner, cols, batchSize;
  Type element, accType;

  /// The accumulator of batch... x rows x cols.
  RankedTensorType fullType() const {
    SmallVector<int64_t> shape(batch);
    shape.append({rows, cols});
    return RankedTensorType::get(shape, accType);
  }
};

/// (batch..., rows) x inner times inner x cols, when B has no batch axes.
Value buildFoldedMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                        const MatMulShapes &s) {
  Value lhs2 = reshapeTensor(
      b, loc, lhs,
      RankedTensorType::get({s.batchSize * s.rows, s.inner}, s.element));
  Value init = zeroTensor(b, loc, {s.batchSize * s.rows, s.cols}, s.accType);
  return linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                                  ValueRange{lhs2, rhs}, ValueRange{init})
      .getResult(0);
}

/// One batch axis of matrices, when both operands have the same batch axes.
Value buildBatchMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                       const MatMulShapes &s) {
  Value lhs3 = reshapeTensor(
      b, loc, lhs,
      RankedTensorType::get({s.batchSize, s.rows, s.inner}, s.element));
  Value rhs3 = reshapeTensor(
      b, loc, rhs,
      RankedTensorType::get({s.batchSize, s.inner, s.cols}, s.element));
  Value init = zeroTensor(b, loc, {s.batchSize, s.rows, s.cols}, s.accType);
  return linalg::BatchMatmulOp::create(b, loc, TypeRange{init.getType()},
                                       ValueRange{lhs3, rhs3}, ValueRange{init})
      .getResult(0);
}

/// A `linalg.generic` whose maps broadcast the batch axes of each operand.
Value buildBroadcastMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                           const MatMulShapes &s) {
  MLIRContext *context = b.getContext();
  // Loops: batch..., m, n (parallel), k (reduction).
  int64_t numBatch = s.batch.size();
  int64_t numLoops = numBatch + 3;
  auto dim = [&](int64_t i) { return getAffineDimExpr(i, context); };
  auto operandMap = [&](ArrayRef<int64_t> operandBatch, AffineExpr i,
                        AffineExpr j) {
    AffineMap batchMap = broadcastMap(operandBatch, s.batch, context);
    SmallVector<AffineExpr> exprs(batchMap.getResults());
    exprs.append({i, j});
    return AffineMap::get(numLoops, 0, exprs, context);
  };
  AffineExpr m = dim(numBatch), n = dim(numBatch + 1), k = dim(numBatch + 2);
  SmallVector<AffineExpr> outputExprs;
  for (int64_t i = 0; i < numBatch; ++i)
    outputExprs.push_back(dim(i));
  outputExprs.append({m, n});
  RankedTensorType fullType = s.fullType();
  Value init = zeroTensor(b, loc, fullType.getShape(), s.accType);
  return linalg::GenericOp::create(
             b, loc, TypeRange{fullType}, ValueRange{lhs, rhs},
             ValueRange{init},
             ArrayRef<AffineMap>{
                 operandMap(s.lhsBatch, m, k), operandMap(s.rhsBatch, k, n),
                 AffineMap::get(numLoops, 0, outputExprs, context)},
             iteratorTypes(numBatch + 2, 1), multiplyAccumulate)
      .getResult(0);
}

/// Numpy matmul. Vector operands are promoted to matrices (and the promoted
/// axis dropped again at the end). Named ops where the batch axes allow:
/// `linalg.matmul` when B has no batch axes (A's batch axes fold into its
/// rows), `linalg.batch_matmul` when the batch axes agree (folded into one);
/// a `linalg.generic` with broadcasting maps otherwise.
struct MatMulLowering : OpConversionPattern<train::MatMulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::MatMulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    MatMulShapes s;
    s.element = resultType.getElementType();
    s.accType = accumulatorType(s.element);

    Value lhs = promoteVector(rewriter, loc, adaptor.getLhs(), /*front=*/true);
    Value rhs = promoteVector(rewriter, loc, adaptor.getRhs(), /*front=*/false);
    ArrayRef<int64_t> lhsShape = tensorType(lhs).getShape();
    ArrayRef<int64_t> rhsShape = tensorType(rhs).getShape();
    s.lhsBatch = lhsShape.drop_back(2);
    s.rhsBatch = rhsShape.drop_back(2);
    s.rows = lhsShape[lhsShape.size() - 2];
    s.inner = lhsShape.back();
    s.cols = rhsShape.back();
    FailureOr<SmallVector<int64_t>> batch =
        train::broadcastShapes(s.lhsBatch, s.rhsBatch);
    if (failed(batch))
      return rewriter.notifyMatchFailure(op, "batch axes do not broadcast");
    s.batch = *batch;
    s.batchSize = 1;
    for (int64_t size : s.batch)
      s.batchSize *= size;

    Value product;
    if (s.rhsBatch.empty())
      product = buildFoldedMatmul(rewriter, loc, lhs, rhs, s);
    else if (s.lhsBatch == s.rhsBatch)
      product = buildBatchMatmul(rewriter, loc, lhs, rhs, s);
    else
      product = buildBroadcastMatmul(rewriter, loc, lhs, rhs, s);
    product = reshapeTensor(rewriter, loc, product, s.fullType());
    product = convertElementType(rewriter, loc, product, s.element);
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, product, resultType));
    return success();
  }
};

} // namespace

void traincc::codegen::populateLinearAlgebraPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ConvLowering, BatchNormLowering, GemmLowering, MatMulLowering>(
      patterns.getContext());
}
