//===- LegalizeConditionals.cpp - comparisons and Where -------------------===//
//
// Equal, Less, LessOrEqual, Greater, GreaterOrEqual and Where. On constants
// (the integer shape sub-graphs PyTorch exports, attention masks) they
// fold. On computed float data they become train.compare and train.select:
// `torch.where(x > 0, x, 0.1 * x)`, or `masked_fill` of a computed tensor
// by a constant mask, trains, the gradient of Where going to the operand
// it picked. Comparisons of computed integer data, and Where choosing
// between computed integers, stay unsupported, with an error that says so.
//
//===----------------------------------------------------------------------===//

#include "LegalizeUtils.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

namespace {

std::optional<train::ComparePredicate> predicateOf(StringRef opType) {
  return llvm::StringSwitch<std::optional<train::ComparePredicate>>(opType)
      .Case("Equal", train::ComparePredicate::Eq)
      .Case("Less", train::ComparePredicate::Lt)
      .Case("LessOrEqual", train::ComparePredicate::Le)
      .Case("Greater", train::ComparePredicate::Gt)
      .Case("GreaterOrEqual", train::ComparePredicate::Ge)
      .Default(std::nullopt);
}

/// `lhs` `predicate` `rhs` for a three-way comparison result (NaN is
/// unordered: every predicate is false).
bool holds(train::ComparePredicate predicate, std::optional<int> order) {
  if (!order)
    return false;
  switch (predicate) {
  case train::ComparePredicate::Eq:
    return *order == 0;
  case train::ComparePredicate::Lt:
    return *order < 0;
  case train::ComparePredicate::Le:
    return *order <= 0;
  case train::ComparePredicate::Gt:
    return *order > 0;
  case train::ComparePredicate::Ge:
    return *order >= 0;
  }
  return false;
}

/// Folds a comparison of two constants of one element type (integers as
/// signed, bools as 0/1).
FailureOr<DenseElementsAttr> foldComparison(const ONNXNode &node,
                                            train::ComparePredicate predicate,
                                            DenseElementsAttr lhs,
                                            DenseElementsAttr rhs) {
  FailureOr<ConstantBroadcast> broadcast = broadcastConstants(node, lhs, rhs);
  if (failed(broadcast))
    return failure();
  SmallVector<bool> values;
  if (isa<FloatType>(lhs.getElementType())) {
    auto l = llvm::to_vector(lhs.getValues<APFloat>());
    auto r = llvm::to_vector(rhs.getValues<APFloat>());
    for (auto [li, ri] : llvm::zip_equal(broadcast->lhsIndices,
                                         broadcast->rhsIndices)) {
      std::optional<int> order;
      switch (l[li].compare(r[ri])) {
      case APFloat::cmpLessThan:
        order = -1;
        break;
      case APFloat::cmpEqual:
        order = 0;
        break;
      case APFloat::cmpGreaterThan:
        order = 1;
        break;
      case APFloat::cmpUnordered:
        break;
      }
      values.push_back(holds(predicate, order));
    }
  } else {
    bool isBool = lhs.getElementType().isInteger(1);
    auto l = llvm::to_vector(lhs.getValues<APInt>());
    auto r = llvm::to_vector(rhs.getValues<APInt>());
    for (auto [li, ri] : llvm::zip_equal(broadcast->lhsIndices,
                                         broadcast->rhsIndices)) {
      const APInt &a = l[li], &b = r[ri];
      int order = isBool ? int(a.getZExtValue()) - int(b.getZExtValue())
                         : (a.slt(b) ? -1 : (a == b ? 0 : 1));
      values.push_back(holds(predicate, order));
    }
  }
  auto type = RankedTensorType::get(broadcast->shape,
                                    IntegerType::get(node.getLoc().getContext(), 1));
  return DenseElementsAttr::get(type, values);
}

LogicalResult legalizeComparison(const ONNXNode &node,
                                 RewriterBase &rewriter) {
  train::ComparePredicate predicate = *predicateOf(node.getOpType());
  DenseElementsAttr lhs = node.getConstantInput(0);
  DenseElementsAttr rhs = node.getConstantInput(1);
  if (lhs && rhs) {
    if (lhs.getElementType() != rhs.getElementType()) {
      node.emitError() << "operands must share one element type, got "
                       << lhs.getElementType() << " and "
                       << rhs.getElementType();
      return failure();
    }
    FailureOr<DenseElementsAttr> folded =
        foldComparison(node, predicate, lhs, rhs);
    if (failed(folded))
      return failure();
    FailureOr<Value> constant = createNodeConstant(node, rewriter, *folded);
    return failed(constant) ? failure()
                            : finishNode(node, rewriter, *constant);
  }
  RankedTensorType lhsType = node.getInputType(0);
  RankedTensorType rhsType = node.getInputType(1);
  if (!lhsType || !rhsType ||
      !isFloatElementType(lhsType.getElementType()) ||
      !isFloatElementType(rhsType.getElementType())) {
    node.emitError() << "comparison of computed data is supported for float "
                        "tensors only";
    return failure();
  }
  FailureOr<Value> lhsValue = getFloatInput(node, 0, "A");
  FailureOr<Value> rhsValue = getFloatInput(node, 1, "B");
  if (failed(lhsValue) || failed(rhsValue))
    return failure();
  FailureOr<Value> compare = createInferred<train::CompareOp>(
      node, rewriter, predicate, *lhsValue, *rhsValue);
  return failed(compare) ? failure() : finishNode(node, rewriter, *compare);
}

/// Where on three constants, folded.
LogicalResult foldWhere(const ONNXNode &node, RewriterBase &rewriter,
                        DenseElementsAttr cond, DenseElementsAttr x,
                        DenseElementsAttr y) {
  if (!cond.getElementType().isSignlessInteger(1) ||
      x.getElementType() != y.getElementType()) {
    node.emitError() << "expects a bool condition and two values of one type";
    return failure();
  }
  FailureOr<SmallVector<int64_t>> shape =
      train::broadcastShapes(cond.getType().getShape(), x.getType().getShape());
  if (succeeded(shape))
    shape = train::broadcastShapes(*shape, y.getType().getShape());
  if (failed(shape)) {
    node.emitError() << "input shapes do not broadcast";
    return failure();
  }
  if (failed(checkFoldSize(node, *shape)))
    return failure();
  auto type = RankedTensorType::get(*shape, x.getElementType());
  SmallVector<int64_t> condIndices =
      broadcastIndices(cond.getType().getShape(), *shape);
  auto conds = llvm::to_vector(cond.getValues<bool>());
  // Pick from each side as if broadcast, then choose per element.
  auto xs = llvm::to_vector(
      pickElements(x, type, broadcastIndices(x.getType().getShape(), *shape))
          .getValues<Attribute>());
  auto ys = llvm::to_vector(
      pickElements(y, type, broadcastIndices(y.getType().getShape(), *shape))
          .getValues<Attribute>());
  SmallVector<Attribute> values;
  for (auto [i, condIndex] : llvm::enumerate(condIndices))
    values.push_back(conds[condIndex] ? xs[i] : ys[i]);
  FailureOr<Value> constant = createNodeConstant(
      node, rewriter, DenseElementsAttr::get(type, values));
  return failed(constant) ? failure() : finishNode(node, rewriter, *constant);
}

LogicalResult legalizeWhere(const ONNXNode &node, RewriterBase &rewriter) {
  DenseElementsAttr cond = node.getConstantInput(0);
  DenseElementsAttr x = node.getConstantInput(1);
  DenseElementsAttr y = node.getConstantInput(2);
  if (cond && x && y)
    return foldWhere(node, rewriter, cond, x, y);
  FailureOr<RankedTensorType> condType =
      getStaticInputType(node, 0, "condition");
  if (failed(condType))
    return failure();
  if (!condType->getElementType().isSignlessInteger(1)) {
    node.emitError() << "input 0 (condition) must be a bool tensor, got "
                     << *condType;
    return failure();
  }
  RankedTensorType xType = node.getInputType(1);
  RankedTensorType yType = node.getInputType(2);
  if (!xType || !yType || !isFloatElementType(xType.getElementType()) ||
      !isFloatElementType(yType.getElementType())) {
    node.emitError() << "Where on computed data is supported between float "
                        "tensors only";
    return failure();
  }
  FailureOr<Value> xValue = getFloatInput(node, 1, "X");
  FailureOr<Value> yValue = getFloatInput(node, 2, "Y");
  if (failed(xValue) || failed(yValue))
    return failure();
  FailureOr<Value> select = createInferred<train::SelectOp>(
      node, rewriter, node.getInput(0), *xValue, *yValue);
  return failed(select) ? failure() : finishNode(node, rewriter, *select);
}

} // namespace

void onnx_import::addConditionalHandlers(HandlerTable &table) {
  for (StringRef opType :
       {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"})
    table[opType] = legalizeComparison;
  table["Where"] = legalizeWhere;
}
