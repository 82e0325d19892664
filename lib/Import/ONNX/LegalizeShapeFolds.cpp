//===- LegalizeShapeFolds.cpp - Mod, Not and ScatterND on constants -------===//
//
// Ops that exporters emit only where a model computes constants from static
// shapes: swin's shifted-window attention mask is built at run time from
// the feature map's size (Mod for the padding, ScatterND writing each
// window region's id into a zero tensor, Not of Equal for the mask). With
// static shapes every input is a constant, and the ops fold; on computed
// data they are reported as unsupported uses, except a ScatterND of
// constant updates (a masked overwrite).
//
//===----------------------------------------------------------------------===//

#include "LegalizeUtils.h"

#include <cmath>

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

namespace {

/// Inputs 0..count-1 as constants; else an error naming the first input
/// that is computed.
/// Mod with broadcasting. fmod=0 (integers only): the remainder takes the
/// divisor's sign, as Python's %; fmod=1: C's fmod, the dividend's sign.
LogicalResult legalizeMod(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<SmallVector<DenseElementsAttr>> inputs =
      requireConstantInputs(node, 2);
  if (failed(inputs))
    return failure();
  DenseElementsAttr lhs = (*inputs)[0], rhs = (*inputs)[1];
  Type element = lhs.getElementType();
  bool fmod = node.getInt("fmod", 0) != 0;
  bool isFloat = isa<FloatType>(element);
  if (isFloat && !fmod) {
    node.emitError() << "fmod=0 is defined for integers only; float "
                        "inputs need fmod=1";
    return failure();
  }
  FailureOr<ConstantBroadcast> broadcast = broadcastConstants(node, lhs, rhs);
  if (failed(broadcast))
    return failure();
  const SmallVector<int64_t> &lhsIndices = broadcast->lhsIndices;
  const SmallVector<int64_t> &rhsIndices = broadcast->rhsIndices;
  auto type = RankedTensorType::get(broadcast->shape, element);
  if (isFloat) {
    auto l = llvm::to_vector(lhs.getValues<APFloat>());
    auto r = llvm::to_vector(rhs.getValues<APFloat>());
    SmallVector<APFloat> values;
    for (auto [li, ri] : llvm::zip_equal(lhsIndices, rhsIndices)) {
      APFloat a = l[li];
      (void)a.mod(r[ri]);
      values.push_back(a);
    }
    return finishWithConstant(node, rewriter,
                              DenseElementsAttr::get(type, values));
  }
  auto l = llvm::to_vector(lhs.getValues<APInt>());
  auto r = llvm::to_vector(rhs.getValues<APInt>());
  SmallVector<APInt> values;
  for (auto [li, ri] : llvm::zip_equal(lhsIndices, rhsIndices)) {
    const APInt &a = l[li], &b = r[ri];
    if (b.isZero()) {
      node.emitError() << "integer Mod by zero";
      return failure();
    }
    APInt rem = a.srem(b);
    // srem takes the dividend's sign; Python's % the divisor's.
    if (!fmod && !rem.isZero() && rem.isNegative() != b.isNegative())
      rem += b;
    values.push_back(rem);
  }
  return finishWithConstant(node, rewriter,
                            DenseElementsAttr::get(type, values));
}

LogicalResult legalizeNot(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<SmallVector<DenseElementsAttr>> inputs =
      requireConstantInputs(node, 1);
  if (failed(inputs))
    return failure();
  DenseElementsAttr input = (*inputs)[0];
  if (!input.getElementType().isSignlessInteger(1)) {
    node.emitError() << "expects a bool input, got " << input.getElementType();
    return failure();
  }
  SmallVector<bool> values;
  for (bool value : input.getValues<bool>())
    values.push_back(!value);
  return finishWithConstant(node, rewriter,
                            DenseElementsAttr::get(input.getType(), values));
}

/// ScatterND (reduction none): a copy of data where each index tuple of
/// indices' last axis addresses a slice that takes the matching update.
/// Constant data folds. Computed data (swin_v2 zeroes the key third of a
/// copy of each qkv bias) with constant indices and updates becomes
/// data * keep + written: keep is 0 on the written slices and 1 elsewhere,
/// written holds the updates there and 0 elsewhere, so the gradient reaches
/// data everywhere except where it was overwritten.
LogicalResult legalizeScatterND(const ONNXNode &node, RewriterBase &rewriter) {
  std::optional<StringRef> reduction = node.getString("reduction");
  if (reduction && *reduction != "none") {
    node.emitError() << "reduction '" << *reduction
                     << "' is not supported (only 'none')";
    return failure();
  }
  DenseElementsAttr constantData = node.getConstantInput(0);
  RankedTensorType dataType;
  Value computedData;
  if (constantData) {
    dataType = cast<RankedTensorType>(constantData.getType());
  } else {
    FailureOr<Value> data = getFloatInput(node, 0, "data");
    if (failed(data))
      return failure();
    computedData = *data;
    dataType = cast<RankedTensorType>(computedData.getType());
  }
  DenseElementsAttr updates = node.getConstantInput(2);
  if (!updates) {
    node.emitError() << "ScatterND of computed updates (input 2) is not "
                        "supported; only constant updates";
    return failure();
  }
  std::optional<SmallVector<int64_t>> indices = node.getConstantInts(1);
  ArrayRef<int64_t> dataShape = dataType.getShape();
  RankedTensorType indicesType = node.getInputType(1);
  if (!indices || !indicesType || indicesType.getRank() == 0) {
    node.emitError() << "input 1 (indices) must be a constant integer tensor "
                        "of rank at least 1";
    return failure();
  }
  ArrayRef<int64_t> indicesShape = indicesType.getShape();
  int64_t depth = indicesShape.back();
  if (depth < 1 || depth > static_cast<int64_t>(dataShape.size())) {
    node.emitError() << "indices' last dimension " << depth
                     << " must be in [1, " << dataShape.size() << "]";
    return failure();
  }
  // updates' shape: indices.shape[:-1] + data.shape[depth:].
  SmallVector<int64_t> expected(indicesShape.drop_back());
  llvm::append_range(expected, dataShape.drop_front(depth));
  if (updates.getType().getShape() != ArrayRef<int64_t>(expected) ||
      updates.getElementType() != dataType.getElementType()) {
    node.emitError() << "updates of type " << updates.getType()
                     << " do not match data " << dataType << " and indices "
                     << train::shapeString(indicesShape);
    return failure();
  }
  if (failed(checkFoldSize(node, dataShape)))
    return failure();
  SmallVector<int64_t> strides = getStrides(dataShape);
  int64_t sliceSize = 1;
  for (int64_t dim : dataShape.drop_front(depth))
    sliceSize *= dim;
  Type element = dataType.getElementType();
  SmallVector<Attribute> values;
  if (constantData)
    values = llvm::to_vector(constantData.getValues<Attribute>());
  else
    values.assign(dataType.getNumElements(), rewriter.getZeroAttr(element));
  SmallVector<Attribute> keep;
  if (!constantData)
    keep.assign(dataType.getNumElements(),
                rewriter.getFloatAttr(element, 1.0));
  auto newValues = llvm::to_vector(updates.getValues<Attribute>());
  int64_t tuples = static_cast<int64_t>(indices->size()) / depth;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    for (int64_t d = 0; d < depth; ++d) {
      int64_t index = (*indices)[t * depth + d];
      if (index < 0)
        index += dataShape[d];
      if (index < 0 || index >= dataShape[d]) {
        node.emitError() << "index " << (*indices)[t * depth + d]
                         << " is out of range for axis " << d << " of size "
                         << dataShape[d];
        return failure();
      }
      offset += index * strides[d];
    }
    for (int64_t i = 0; i < sliceSize; ++i) {
      values[offset + i] = newValues[t * sliceSize + i];
      if (!constantData)
        keep[offset + i] = rewriter.getZeroAttr(element);
    }
  }
  DenseElementsAttr written = DenseElementsAttr::get(dataType, values);
  if (constantData)
    return finishWithConstant(node, rewriter, written);
  Location loc = node.getLoc();
  Value kept = train::MulOp::create(
      rewriter, loc, dataType, computedData,
      createConstant(rewriter, loc, DenseElementsAttr::get(dataType, keep)));
  return finishNode(node, rewriter,
                    train::AddOp::create(rewriter, loc, dataType, kept,
                                         createConstant(rewriter, loc,
                                                        written)));
}

} // namespace

void onnx_import::addShapeFoldHandlers(HandlerTable &table) {
  table["Mod"] = legalizeMod;
  table["Not"] = legalizeNot;
  table["ScatterND"] = legalizeScatterND;
}
