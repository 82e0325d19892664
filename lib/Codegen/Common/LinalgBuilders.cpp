//===- LinalgBuilders.cpp - small linalg/tensor IR builders ---------------===//

#include "traincc/Codegen/Common/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;

namespace traincc::codegen {

RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

Type accumulatorType(Type elementType) {
  if (elementType.isF16() || elementType.isBF16())
    return Float32Type::get(elementType.getContext());
  return elementType;
}

Value floatConstant(OpBuilder &b, Location loc, Type type, double value) {
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
}

Value floatTensorConstant(OpBuilder &b, Location loc, RankedTensorType type,
                          ArrayRef<double> values) {
  const llvm::fltSemantics &semantics =
      cast<FloatType>(type.getElementType()).getFloatSemantics();
  SmallVector<APFloat> elements;
  for (double value : values) {
    APFloat element(value);
    bool losesInfo;
    element.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
    elements.push_back(element);
  }
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(type, elements));
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

Value zeroTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                 Type elementType) {
  return filledTensor(b, loc, shape, b.getFloatAttr(elementType, 0.0));
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

Value buildWidenedElementwise(OpBuilder &b, Location loc, ValueRange inputs,
                              ArrayRef<int64_t> resultShape, Type accType,
                              Type resultElement, ScalarBodyFn body) {
  return buildElementwise(
      b, loc, inputs, resultShape, resultElement,
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        SmallVector<Value> wide;
        for (Value arg : args)
          wide.push_back(convertFloat(nb, nloc, arg, accType));
        return convertFloat(nb, nloc, body(nb, nloc, wide), resultElement);
      });
}

Value buildPointwise(OpBuilder &b, Location loc, ValueRange inputs,
                     ArrayRef<AffineMap> maps, ArrayRef<int64_t> shape,
                     Type element, ScalarBodyFn body) {
  SmallVector<AffineMap> allMaps(maps);
  allMaps.push_back(
      AffineMap::getMultiDimIdentityMap(shape.size(), b.getContext()));
  Value init = tensor::EmptyOp::create(b, loc, shape, element);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
             allMaps, iteratorTypes(shape.size()),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc,
                                       body(nb, nloc, args.drop_back()));
             })
      .getResult(0);
}

AffineMap channelMap(int64_t rank, MLIRContext *context) {
  return AffineMap::get(rank, 0, getAffineDimExpr(1, context), context);
}

AffineMap keptAxesMap(int64_t rank, ArrayRef<int64_t> axes,
                      MLIRContext *context) {
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rank; ++i)
    if (!llvm::is_contained(axes, i))
      exprs.push_back(getAffineDimExpr(i, context));
  return AffineMap::get(rank, 0, exprs, context);
}

void reductionLoops(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes,
                    SmallVectorImpl<utils::IteratorType> &iterators,
                    SmallVectorImpl<int64_t> &keptShape) {
  for (int64_t i = 0, rank = shape.size(); i < rank; ++i) {
    bool reduced = llvm::is_contained(axes, i);
    iterators.push_back(reduced ? utils::IteratorType::reduction
                                : utils::IteratorType::parallel);
    if (!reduced)
      keptShape.push_back(shape[i]);
  }
}

Value sumOver(OpBuilder &b, Location loc, ValueRange inputs,
              ArrayRef<AffineMap> maps, ArrayRef<int64_t> shape,
              ArrayRef<int64_t> axes, Type accType, ScalarBodyFn term) {
  MLIRContext *context = b.getContext();
  int64_t rank = shape.size();
  SmallVector<int64_t> keptShape;
  SmallVector<utils::IteratorType> iterators;
  reductionLoops(shape, axes, iterators, keptShape);
  Value init = zeroTensor(b, loc, keptShape, accType);
  SmallVector<AffineMap> allMaps(maps);
  allMaps.push_back(keptAxesMap(rank, axes, context));
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
             allMaps, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value value = term(nb, nloc, args.drop_back());
               linalg::YieldOp::create(
                   nb, nloc,
                   arith::AddFOp::create(nb, nloc, args.back(), value)
                       .getResult());
             })
      .getResult(0);
}

Value sumElements(OpBuilder &b, Location loc, Value input,
                  ArrayRef<int64_t> axes, Type accType) {
  ArrayRef<int64_t> shape = tensorType(input).getShape();
  return sumOver(
      b, loc, input,
      AffineMap::getMultiDimIdentityMap(shape.size(), b.getContext()), shape,
      axes, accType, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        return convertFloat(nb, nloc, args[0], accType);
      });
}

void multiplyAccumulate(OpBuilder &b, Location loc, ValueRange args) {
  Type accType = args[2].getType();
  Value lhs = convertFloat(b, loc, args[0], accType);
  Value rhs = convertFloat(b, loc, args[1], accType);
  Value product = arith::MulFOp::create(b, loc, lhs, rhs);
  linalg::YieldOp::create(
      b, loc, arith::AddFOp::create(b, loc, args[2], product).getResult());
}

void accumulate(OpBuilder &b, Location loc, ValueRange args) {
  Type accType = args.back().getType();
  linalg::YieldOp::create(
      b, loc,
      arith::AddFOp::create(b, loc, args.back(),
                            convertFloat(b, loc, args[0], accType))
          .getResult());
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
