//===- WindowGeometry.cpp - geometry of convolution and pooling -----------===//

#include "traincc/Codegen/Common/WindowGeometry.h"
#include "traincc/Codegen/Common/LinalgBuilders.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;

namespace traincc::codegen {

WindowGeometry::WindowGeometry(ArrayRef<int64_t> inputShape,
                               ArrayRef<int64_t> outputShape,
                               ArrayRef<int64_t> kernel,
                               ArrayRef<int64_t> strides,
                               ArrayRef<int64_t> dilations,
                               ArrayRef<int64_t> pads)
    : input(inputShape.drop_front(2)), output(outputShape.drop_front(2)),
      kernel(kernel), strides(strides), dilations(dilations),
      padBegin(pads.take_front(kernel.size())),
      padEnd(pads.drop_front(kernel.size())) {}

int64_t WindowGeometry::reachPad(int64_t i) const {
  int64_t reach = (output[i] - 1) * strides[i] + span(i) + 1;
  return std::max<int64_t>(0, reach - input[i] - padBegin[i]);
}

void WindowGeometry::ownPads(SmallVectorImpl<int64_t> &low,
                             SmallVectorImpl<int64_t> &high) const {
  low.assign(2, 0);
  high.assign(2, 0);
  low.append(padBegin.begin(), padBegin.end());
  high.append(padEnd.begin(), padEnd.end());
}

void WindowGeometry::reachPads(SmallVectorImpl<int64_t> &low,
                               SmallVectorImpl<int64_t> &high) const {
  low.assign(2, 0);
  high.assign(2, 0);
  for (int64_t i = 0; i < spatial(); ++i) {
    low.push_back(padBegin[i]);
    high.push_back(reachPad(i));
  }
}

int64_t WindowGeometry::windowCount(int64_t i, int64_t o,
                                    bool countIncludePad) const {
  int64_t start = o * strides[i] - padBegin[i];
  int64_t end = start + kernel[i];
  return countIncludePad
             ? std::min(end, input[i] + padEnd[i]) - start
             : std::min(end, input[i]) - std::max<int64_t>(start, 0);
}

AffineExpr WindowGeometry::windowRead(AffineExpr o, AffineExpr k,
                                      int64_t i) const {
  return o * strides[i] + k * dilations[i];
}

AffineExpr WindowGeometry::flippedRead(AffineExpr x, AffineExpr k,
                                       int64_t i) const {
  return x + (kernel[i] - 1 - k) * dilations[i];
}

SmallVector<AffineMap, 3>
WindowGeometry::windowReductionMaps(MLIRContext *context) const {
  int64_t numLoops = 2 + 2 * spatial();
  auto dim = [&](int64_t i) { return getAffineDimExpr(i, context); };
  SmallVector<AffineExpr> inputExprs = {dim(0), dim(1)}, kernelExprs,
                          outputExprs = {dim(0), dim(1)};
  for (int64_t i = 0; i < spatial(); ++i) {
    AffineExpr out = dim(2 + i), k = dim(2 + spatial() + i);
    inputExprs.push_back(windowRead(out, k, i));
    kernelExprs.push_back(k);
    outputExprs.push_back(out);
  }
  return {AffineMap::get(numLoops, 0, inputExprs, context),
          AffineMap::get(numLoops, 0, kernelExprs, context),
          AffineMap::get(numLoops, 0, outputExprs, context)};
}

RankedTensorType splitGroups(RankedTensorType type, int64_t axis,
                             int64_t groups) {
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] /= groups;
  shape.insert(shape.begin() + axis, groups);
  return RankedTensorType::get(shape, type.getElementType());
}

SmallVector<ReassociationIndices> splitAxis(int64_t rank, int64_t axis) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0, next = 0; i < rank; ++i) {
    if (i == axis) {
      groups.push_back({next, next + 1});
      next += 2;
    } else {
      groups.push_back({next++});
    }
  }
  return groups;
}

Value buildGroupedContraction(OpBuilder &b, Location loc, Value lhs, Value rhs,
                              Value init, int64_t spatial,
                              ArrayRef<AffineExpr> lhsExprs,
                              ArrayRef<AffineExpr> rhsExprs,
                              ArrayRef<AffineExpr> outExprs,
                              ContractionBodyFn body) {
  MLIRContext *context = b.getContext();
  int64_t numLoops = 4 + 2 * spatial;
  SmallVector<AffineMap> maps = {
      AffineMap::get(numLoops, 0, lhsExprs, context),
      AffineMap::get(numLoops, 0, rhsExprs, context),
      AffineMap::get(numLoops, 0, outExprs, context)};
  return linalg::GenericOp::create(b, loc, TypeRange{init.getType()},
                                   ValueRange{lhs, rhs}, ValueRange{init}, maps,
                                   iteratorTypes(3 + spatial, 1 + spatial),
                                   body)
      .getResult(0);
}

} // namespace traincc::codegen
