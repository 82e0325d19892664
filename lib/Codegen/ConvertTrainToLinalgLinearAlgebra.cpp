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

#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace traincc::codegen;
namespace train = traincc::train;

namespace {

RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// The multiply-accumulate body of a contraction: acc + a * b with both
/// factors converted to the accumulator's type.
void buildMultiplyAccumulate(OpBuilder &b, Location loc, ValueRange args) {
  Type accType = args[2].getType();
  Value lhs = convertFloat(b, loc, args[0], accType);
  Value rhs = convertFloat(b, loc, args[1], accType);
  Value product = arith::MulFOp::create(b, loc, lhs, rhs);
  linalg::YieldOp::create(
      b, loc, arith::AddFOp::create(b, loc, args[2], product).getResult());
}

/// The starting accumulator of a contraction with result `shape`: `bias`
/// (times `scale`) broadcast over it, or zeros.
Value initialAccumulator(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                         Type accType, Value bias, AffineMap biasMap,
                         double scale = 1.0) {
  if (!bias)
    return filledTensor(b, loc, shape, b.getFloatAttr(accType, 0.0));
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
                       Value init, int64_t groups, ArrayRef<int64_t> strides,
                       ArrayRef<int64_t> dilations) {
  MLIRContext *context = b.getContext();
  RankedTensorType inputType = tensorType(input);
  RankedTensorType weightType = tensorType(weight);
  RankedTensorType initType = tensorType(init);
  int64_t spatial = inputType.getRank() - 2;

  // [[0], [1, 2], [3], ...] splits axis 1 of the input and the accumulator;
  // [[0, 1], [2], ...] splits axis 0 of the weight.
  SmallVector<ReassociationIndices> channelSplit = {{0}, {1, 2}};
  SmallVector<ReassociationIndices> filterSplit = {{0, 1}};
  for (int64_t i = 0; i < spatial; ++i)
    channelSplit.push_back({3 + i});
  for (int64_t i = 0; i <= spatial; ++i)
    filterSplit.push_back({2 + i});
  // `type` with axis `axis` split into groups x size / groups.
  auto grouped = [&](RankedTensorType type, int64_t axis) {
    SmallVector<int64_t> shape(type.getShape());
    shape[axis] /= groups;
    shape.insert(shape.begin() + axis, groups);
    return RankedTensorType::get(shape, type.getElementType());
  };
  RankedTensorType groupedInit = grouped(initType, 1);
  Value inputG = tensor::ExpandShapeOp::create(b, loc, grouped(inputType, 1),
                                               input, channelSplit);
  Value weightG = tensor::ExpandShapeOp::create(b, loc, grouped(weightType, 0),
                                                weight, filterSplit);
  Value initG =
      tensor::ExpandShapeOp::create(b, loc, groupedInit, init, channelSplit);

  // Loops: n, g, m, out_0.. (parallel), c, k_0.. (reduction).
  int64_t numLoops = 4 + 2 * spatial;
  auto dim = [&](int64_t i) { return getAffineDimExpr(i, context); };
  AffineExpr n = dim(0), g = dim(1), m = dim(2), c = dim(3 + spatial);
  SmallVector<AffineExpr> inputExprs = {n, g, c}, weightExprs = {g, m, c},
                          outputExprs = {n, g, m};
  for (int64_t i = 0; i < spatial; ++i) {
    AffineExpr out = dim(3 + i), k = dim(4 + spatial + i);
    inputExprs.push_back(out * strides[i] + k * dilations[i]);
    weightExprs.push_back(k);
    outputExprs.push_back(out);
  }
  SmallVector<AffineMap> maps = {
      AffineMap::get(numLoops, 0, inputExprs, context),
      AffineMap::get(numLoops, 0, weightExprs, context),
      AffineMap::get(numLoops, 0, outputExprs, context)};
  Value result =
      linalg::GenericOp::create(b, loc, TypeRange{groupedInit},
                                ValueRange{inputG, weightG}, ValueRange{initG},
                                maps, iteratorTypes(3 + spatial, 1 + spatial),
                                buildMultiplyAccumulate)
          .getResult(0);
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
    int64_t spatial = resultType.getRank() - 2;
    ArrayRef<int64_t> pads = op.getPads();

    SmallVector<int64_t> low(2, 0), high(2, 0);
    low.append(pads.begin(), pads.begin() + spatial);
    high.append(pads.begin() + spatial, pads.end());
    Value input = padTensor(rewriter, loc, adaptor.getInput(), low, high,
                            rewriter.getFloatAttr(elementType, 0.0));

    // The bias (one per output channel, axis 1) starts the accumulator.
    AffineMap biasMap =
        AffineMap::get(resultType.getRank(), 0, rewriter.getAffineDimExpr(1),
                       rewriter.getContext());
    Value init = initialAccumulator(rewriter, loc, resultType.getShape(),
                                    accType, adaptor.getBias(), biasMap);

    int64_t groups = op.getGroups();
    Value result;
    if (spatial == 2 && groups == 1) {
      result = linalg::Conv2DNchwFchwOp::create(
                   rewriter, loc, TypeRange{init.getType()},
                   ValueRange{input, adaptor.getWeight()}, ValueRange{init},
                   rewriter.getI64TensorAttr(op.getStrides()),
                   rewriter.getI64TensorAttr(op.getDilations()))
                   .getResult(0);
    } else {
      result = buildGroupedConv(rewriter, loc, input, adaptor.getWeight(), init,
                                groups, op.getStrides(), op.getDilations());
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
    AffineMap channel =
        AffineMap::get(rank, 0, getAffineDimExpr(1, context), context);
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
      init = filledTensor(rewriter, loc, shape,
                          rewriter.getFloatAttr(accType, 0.0));

    // Loops (m, n, k).
    AffineExpr m = getAffineDimExpr(0, context),
               n = getAffineDimExpr(1, context),
               k = getAffineDimExpr(2, context);
    SmallVector<NamedAttribute> attrs;
    if (op.getTransA() || op.getTransB()) {
      auto map = [&](AffineExpr i, AffineExpr j) {
        return AffineMapAttr::get(AffineMap::get(3, 0, {i, j}, context));
      };
      attrs.push_back(rewriter.getNamedAttr(
          "indexing_maps",
          rewriter.getArrayAttr({op.getTransA() ? map(k, m) : map(m, k),
                                 op.getTransB() ? map(n, k) : map(k, n),
                                 map(m, n)})));
    }
    Value product =
        linalg::MatmulOp::create(rewriter, loc, TypeRange{init.getType()},
                                 ValueRange{adaptor.getA(), adaptor.getB()},
                                 ValueRange{init}, attrs)
            .getResult(0);

    Value result;
    if (alpha == 1.0) {
      result = convertElementType(rewriter, loc, product, elementType);
    } else {
      SmallVector<Value> inputs = {product};
      if (c)
        inputs.push_back(c);
      result = buildElementwise(
          rewriter, loc, inputs, shape, elementType,
          [&](OpBuilder &b, Location nloc, ValueRange args) {
            Value value = arith::MulFOp::create(
                b, nloc, args[0], floatConstant(b, nloc, accType, alpha));
            if (args.size() > 1) {
              Value bias = arith::MulFOp::create(
                  b, nloc, convertFloat(b, nloc, args[1], accType),
                  floatConstant(b, nloc, accType, beta));
              value = arith::AddFOp::create(b, nloc, value, bias);
            }
            return convertFloat(b, nloc, value, elementType);
          });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

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
    MLIRContext *context = rewriter.getContext();
    RankedTensorType resultType = op.getType();
    Type elementType = resultType.getElementType();
    Type accType = accumulatorType(elementType);

    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    auto promote = [&](Value value, bool front) {
      RankedTensorType type = tensorType(value);
      if (type.getRank() != 1)
        return value;
      SmallVector<int64_t> shape = {1, type.getDimSize(0)};
      if (!front)
        std::swap(shape[0], shape[1]);
      return reshapeTensor(rewriter, loc, value,
                           RankedTensorType::get(shape, type.getElementType()));
    };
    lhs = promote(lhs, /*front=*/true);
    rhs = promote(rhs, /*front=*/false);
    ArrayRef<int64_t> lhsShape = tensorType(lhs).getShape();
    ArrayRef<int64_t> rhsShape = tensorType(rhs).getShape();
    ArrayRef<int64_t> lhsBatch = lhsShape.drop_back(2);
    ArrayRef<int64_t> rhsBatch = rhsShape.drop_back(2);
    int64_t rows = lhsShape[lhsShape.size() - 2];
    int64_t inner = lhsShape.back();
    int64_t cols = rhsShape.back();
    FailureOr<SmallVector<int64_t>> batch =
        train::broadcastShapes(lhsBatch, rhsBatch);
    if (failed(batch))
      return rewriter.notifyMatchFailure(op, "batch axes do not broadcast");
    int64_t batchSize = 1;
    for (int64_t size : *batch)
      batchSize *= size;
    SmallVector<int64_t> fullShape(*batch);
    fullShape.append({rows, cols});
    auto fullType = RankedTensorType::get(fullShape, accType);
    auto withElement = [](ArrayRef<int64_t> shape, Type type) {
      return RankedTensorType::get(shape, type);
    };

    Value product;
    if (rhsBatch.empty()) {
      // (batch..., rows) x inner  times  inner x cols.
      Value lhs2 =
          reshapeTensor(rewriter, loc, lhs,
                        withElement({batchSize * rows, inner}, elementType));
      Value init = filledTensor(rewriter, loc, {batchSize * rows, cols},
                                rewriter.getFloatAttr(accType, 0.0));
      product =
          linalg::MatmulOp::create(rewriter, loc, TypeRange{init.getType()},
                                   ValueRange{lhs2, rhs}, ValueRange{init})
              .getResult(0);
    } else if (lhsBatch == rhsBatch) {
      Value lhs3 =
          reshapeTensor(rewriter, loc, lhs,
                        withElement({batchSize, rows, inner}, elementType));
      Value rhs3 =
          reshapeTensor(rewriter, loc, rhs,
                        withElement({batchSize, inner, cols}, elementType));
      Value init = filledTensor(rewriter, loc, {batchSize, rows, cols},
                                rewriter.getFloatAttr(accType, 0.0));
      product = linalg::BatchMatmulOp::create(
                    rewriter, loc, TypeRange{init.getType()},
                    ValueRange{lhs3, rhs3}, ValueRange{init})
                    .getResult(0);
    } else {
      // Loops: batch..., m, n (parallel), k (reduction).
      int64_t numBatch = batch->size();
      int64_t numLoops = numBatch + 3;
      auto dim = [&](int64_t i) { return getAffineDimExpr(i, context); };
      auto operandMap = [&](ArrayRef<int64_t> operandBatch, AffineExpr i,
                            AffineExpr j) {
        AffineMap batchMap = broadcastMap(operandBatch, *batch, context);
        SmallVector<AffineExpr> exprs(batchMap.getResults());
        exprs.append({i, j});
        return AffineMap::get(numLoops, 0, exprs, context);
      };
      AffineExpr m = dim(numBatch), n = dim(numBatch + 1),
                 k = dim(numBatch + 2);
      SmallVector<AffineExpr> outputExprs;
      for (int64_t i = 0; i < numBatch; ++i)
        outputExprs.push_back(dim(i));
      outputExprs.append({m, n});
      Value init = filledTensor(rewriter, loc, fullShape,
                                rewriter.getFloatAttr(accType, 0.0));
      product = linalg::GenericOp::create(
                    rewriter, loc, TypeRange{fullType}, ValueRange{lhs, rhs},
                    ValueRange{init},
                    ArrayRef<AffineMap>{
                        operandMap(lhsBatch, m, k), operandMap(rhsBatch, k, n),
                        AffineMap::get(numLoops, 0, outputExprs, context)},
                    iteratorTypes(numBatch + 2, 1), buildMultiplyAccumulate)
                    .getResult(0);
    }
    product = reshapeTensor(rewriter, loc, product, fullType);
    product = convertElementType(rewriter, loc, product, elementType);
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
