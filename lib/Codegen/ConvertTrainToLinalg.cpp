//===- ConvertTrainToLinalg.cpp - Train forward ops -> linalg -------------===//
//
// The pass and the IR builders its per-family pattern files share. Tensors
// keep their types through this stage, so the conversion needs no type
// converter: the target only says which Train ops must go.
//
//===----------------------------------------------------------------------===//

#include "ConvertTrainToLinalg.h"

#include "traincc/Codegen/Passes.h"
#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Transforms/DialectConversion.h"

namespace traincc {
#define GEN_PASS_DEF_CONVERTTRAINTOLINALGPASS
#include "traincc/Codegen/Passes.h.inc"
} // namespace traincc

using namespace mlir;

namespace traincc::codegen {

Type accumulatorType(Type elementType) {
  if (elementType.isF16() || elementType.isBF16())
    return Float32Type::get(elementType.getContext());
  return elementType;
}

Value floatConstant(OpBuilder &b, Location loc, Type type, double value) {
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
}

TypedAttr negativeInfinity(Type type) {
  const llvm::fltSemantics &semantics =
      cast<FloatType>(type).getFloatSemantics();
  return FloatAttr::get(type, APFloat::getInf(semantics, /*Negative=*/true));
}

Value convertFloat(OpBuilder &b, Location loc, Value value, Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  unsigned fromWidth = cast<FloatType>(from).getWidth();
  unsigned toWidth = cast<FloatType>(to).getWidth();
  if (fromWidth < toWidth)
    return arith::ExtFOp::create(b, loc, to, value);
  if (fromWidth > toWidth)
    return arith::TruncFOp::create(b, loc, to, value);
  // f16 <-> bf16: through f32, which holds both exactly.
  Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
  return arith::TruncFOp::create(b, loc, to, wide);
}

Value filledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   TypedAttr value) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, value.getType());
  Value scalar = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, ValueRange{scalar}, ValueRange{empty})
      .getResult(0);
}

AffineMap broadcastMap(ArrayRef<int64_t> operandShape,
                       ArrayRef<int64_t> resultShape, MLIRContext *context) {
  int64_t offset = resultShape.size() - operandShape.size();
  SmallVector<AffineExpr> exprs;
  for (auto [axis, size] : llvm::enumerate(operandShape)) {
    int64_t resultAxis = offset + axis;
    if (size == 1 && resultShape[resultAxis] != 1)
      exprs.push_back(getAffineConstantExpr(0, context));
    else
      exprs.push_back(getAffineDimExpr(resultAxis, context));
  }
  return AffineMap::get(resultShape.size(), 0, exprs, context);
}

SmallVector<utils::IteratorType> iteratorTypes(unsigned parallel,
                                               unsigned reduction) {
  SmallVector<utils::IteratorType> types(parallel,
                                         utils::IteratorType::parallel);
  types.append(reduction, utils::IteratorType::reduction);
  return types;
}

Value buildElementwise(OpBuilder &b, Location loc, ValueRange inputs,
                       ArrayRef<int64_t> resultShape, Type resultElement,
                       ScalarBodyFn body) {
  MLIRContext *context = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value input : inputs)
    maps.push_back(
        broadcastMap(cast<RankedTensorType>(input.getType()).getShape(),
                     resultShape, context));
  maps.push_back(
      AffineMap::getMultiDimIdentityMap(resultShape.size(), context));
  Value init = tensor::EmptyOp::create(b, loc, resultShape, resultElement);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
      iteratorTypes(resultShape.size()),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value result = body(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, result);
      });
  return generic.getResult(0);
}

Value convertElementType(OpBuilder &b, Location loc, Value value,
                         Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == elementType)
    return value;
  return buildElementwise(b, loc, value, type.getShape(), elementType,
                          [&](OpBuilder &nb, Location nloc, ValueRange args) {
                            return convertFloat(nb, nloc, args[0], elementType);
                          });
}

Value padTensor(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> low,
                ArrayRef<int64_t> high, TypedAttr padValue) {
  if (llvm::all_of(low, [](int64_t p) { return p == 0; }) &&
      llvm::all_of(high, [](int64_t p) { return p == 0; }))
    return input;
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape(type.getShape());
  for (size_t i = 0; i < shape.size(); ++i)
    shape[i] += low[i] + high[i];
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  Value scalar = arith::ConstantOp::create(b, loc, padValue);
  return tensor::PadOp::create(b, loc, resultType, input,
                               getAsIndexOpFoldResult(b.getContext(), low),
                               getAsIndexOpFoldResult(b.getContext(), high),
                               scalar)
      .getResult();
}

/// Groups the axes of two static shapes with equal element counts into the
/// finest common blocks: `source` axes `sourceGroups[i]` hold the same
/// elements as `target` axes `targetGroups[i]`. Fails on zero-size axes and
/// rank-0 shapes, where blocks are not well defined.
static LogicalResult
commonBlocks(ArrayRef<int64_t> source, ArrayRef<int64_t> target,
             SmallVectorImpl<ReassociationIndices> &sourceGroups,
             SmallVectorImpl<ReassociationIndices> &targetGroups) {
  if (source.empty() || target.empty() || llvm::is_contained(source, 0) ||
      llvm::is_contained(target, 0))
    return failure();
  size_t i = 0, j = 0;
  while (i < source.size() || j < target.size()) {
    ReassociationIndices sourceGroup, targetGroup;
    int64_t sourceSize = 1, targetSize = 1;
    if (i < source.size()) {
      sourceGroup.push_back(i);
      sourceSize *= source[i++];
    }
    if (j < target.size()) {
      targetGroup.push_back(j);
      targetSize *= target[j++];
    }
    while (sourceSize != targetSize) {
      if (sourceSize < targetSize && i < source.size()) {
        sourceGroup.push_back(i);
        sourceSize *= source[i++];
      } else if (sourceSize > targetSize && j < target.size()) {
        targetGroup.push_back(j);
        targetSize *= target[j++];
      } else {
        return failure();
      }
    }
    // Trailing size-1 axes of one shape join the last block.
    if (sourceGroup.empty() || targetGroup.empty()) {
      if (sourceGroups.empty())
        return failure();
      llvm::append_range(sourceGroups.back(), sourceGroup);
      llvm::append_range(targetGroups.back(), targetGroup);
      continue;
    }
    sourceGroups.push_back(sourceGroup);
    targetGroups.push_back(targetGroup);
  }
  return success();
}

Value reshapeTensor(OpBuilder &b, Location loc, Value input,
                    RankedTensorType resultType) {
  auto inputType = cast<RankedTensorType>(input.getType());
  if (inputType.getShape() == resultType.getShape())
    return input;
  // A rank-0 side has no groups: every axis of the other side has size 1.
  if (resultType.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, resultType, input,
                                           ArrayRef<ReassociationIndices>{});
  if (inputType.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, resultType, input,
                                         ArrayRef<ReassociationIndices>{});
  // Collapse each common block of axes to one axis, then expand it into the
  // result's axes; either step disappears when it would do nothing.
  SmallVector<ReassociationIndices> sourceGroups, targetGroups;
  if (succeeded(commonBlocks(inputType.getShape(), resultType.getShape(),
                             sourceGroups, targetGroups))) {
    SmallVector<int64_t> blockShape;
    for (const ReassociationIndices &group : targetGroups) {
      int64_t size = 1;
      for (int64_t axis : group)
        size *= resultType.getDimSize(axis);
      blockShape.push_back(size);
    }
    auto blockType =
        RankedTensorType::get(blockShape, inputType.getElementType());
    Value blocks = input;
    if (blockType != inputType)
      blocks = tensor::CollapseShapeOp::create(b, loc, blockType, input,
                                               sourceGroups);
    if (blockType == resultType)
      return blocks;
    return tensor::ExpandShapeOp::create(b, loc, resultType, blocks,
                                         targetGroups);
  }
  auto shapeType =
      RankedTensorType::get({resultType.getRank()}, b.getI64Type());
  Value shape = arith::ConstantOp::create(
      b, loc, DenseIntElementsAttr::get(shapeType, resultType.getShape()));
  return tensor::ReshapeOp::create(b, loc, resultType, input, shape);
}

} // namespace traincc::codegen

namespace {

struct ConvertTrainToLinalgPass
    : public traincc::impl::ConvertTrainToLinalgPassBase<
          ConvertTrainToLinalgPass> {
  void runOnOperation() override {
    using namespace traincc::train;
    MLIRContext *context = &getContext();
    ConversionTarget target(*context);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect>();
    // Every forward compute op must go; parameters, their reads and the
    // import scaffolding are not this pass's business.
    target.addIllegalOp<
        ConvOp, BatchNormOp, GemmOp, MatMulOp, AddOp, SubOp, MulOp, DivOp,
        MaximumOp, MinimumOp, ReluOp, LeakyReluOp, ClipOp, SigmoidOp, TanhOp,
        DropoutOp, SoftmaxOp, LogSoftmaxOp, MaxPoolOp, AvgPoolOp,
        GlobalAvgPoolOp, ReshapeOp, FlattenOp, TransposeOp, ConcatOp, SliceOp,
        IdentityOp, ConstantOp>();
    // Losses, gradients and the explicit training-mode ops; the ops that
    // touch persistent state (accumulate, optimizer updates, running
    // statistics) are left to state lowering.
    target.addIllegalOp<
        SoftmaxCrossEntropyOp, SoftmaxCrossEntropyBackwardOp, MSEOp,
        MSEBackwardOp, ReduceSumOp, SumToOp, BroadcastToOp,
        ConvBackwardDataOp, ConvBackwardFilterOp, BatchNormBackwardOp,
        ReluBackwardOp, LeakyReluBackwardOp, ClipBackwardOp,
        SigmoidBackwardOp, TanhBackwardOp, SoftmaxBackwardOp,
        LogSoftmaxBackwardOp, MaxPoolBackwardOp, AvgPoolBackwardOp,
        SliceBackwardOp, BNStatsOp, BNApplyOp, DropoutMaskOp>();

    RewritePatternSet patterns(context);
    traincc::codegen::populateLinearAlgebraPatterns(patterns);
    traincc::codegen::populateElementwisePatterns(patterns);
    traincc::codegen::populatePoolingPatterns(patterns);
    traincc::codegen::populateDataMovementPatterns(patterns);
    traincc::codegen::populateGradientPatterns(patterns);
    traincc::codegen::populateWindowGradientPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
