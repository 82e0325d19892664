//===- TrainFolders.cpp - folders and canonicalisation patterns -----------===//
//
// Folds that remove no-op data movement and neutral arithmetic, so that the
// graphs exporters produce (identity chains, view-of-view, dropout at 0,
// transposes feeding Gemm) reach training-step construction without ops that
// would need gradient rules for nothing.
//
//===----------------------------------------------------------------------===//

#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace traincc::train;

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult IdentityOp::fold(FoldAdaptor) { return getInput(); }

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  Type from = getInput().getType();
  if (from == getType())
    return getInput();
  // A round trip through a type that holds every value of the source
  // (bf16 -> f32 -> bf16) is exact.
  if (auto widen = getInput().getDefiningOp<CastOp>()) {
    Type source = widen.getInput().getType();
    auto width = [](Type type) {
      return cast<FloatType>(getElementTypeOrSelf(type)).getWidth();
    };
    if (source == getType() && width(from) > width(source))
      return widen.getInput();
  }
  auto constant = dyn_cast_if_present<DenseFPElementsAttr>(adaptor.getInput());
  if (!constant)
    return {};
  const llvm::fltSemantics &semantics =
      cast<FloatType>(getType().getElementType()).getFloatSemantics();
  return constant.mapValues(
      getType().getElementType(), [&](const APFloat &value) {
        APFloat converted = value;
        bool losesInfo;
        converted.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
        return converted.bitcastToAPInt();
      });
}

OpFoldResult DropoutOp::fold(FoldAdaptor) {
  if (getRatio().isZero())
    return getInput();
  return {};
}

/// True when `value` is a splat constant equal to `neutral`.
static bool isSplatOf(Attribute value, double neutral) {
  auto splat = dyn_cast_if_present<SplatElementsAttr>(value);
  if (!splat || !isa<FloatType>(splat.getElementType()))
    return false;
  return splat.getSplatValue<APFloat>().convertToDouble() == neutral;
}

/// x op c -> x when c is the neutral element and does not widen x's shape
/// (a broadcast neutral constant still changes the result type).
static OpFoldResult foldNeutralRhs(Value lhs, Attribute rhsValue,
                                   Type resultType, double neutral) {
  if (lhs.getType() == resultType && isSplatOf(rhsValue, neutral))
    return lhs;
  return {};
}

/// The same for a commutative op, whose neutral constant may stand on
/// either side.
static OpFoldResult foldNeutralOperand(Operation *op, Attribute lhsValue,
                                       Attribute rhsValue, double neutral) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  Type resultType = op->getResult(0).getType();
  if (OpFoldResult folded = foldNeutralRhs(lhs, rhsValue, resultType, neutral))
    return folded;
  return foldNeutralRhs(rhs, lhsValue, resultType, neutral);
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return foldNeutralOperand(*this, adaptor.getLhs(), adaptor.getRhs(), 0.0);
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  return foldNeutralRhs(getLhs(), adaptor.getRhs(), getType(), 0.0);
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return foldNeutralOperand(*this, adaptor.getLhs(), adaptor.getRhs(), 1.0);
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  return foldNeutralRhs(getLhs(), adaptor.getRhs(), getType(), 1.0);
}

/// maximum and minimum: x with itself is x (its gradient, two halves of a
/// tie, is the identity's too), a splat -inf (+inf for minimum) that does
/// not widen the other operand is neutral, and two splat constants fold to
/// one.
static OpFoldResult foldSelect(Operation *op, Attribute lhsValue,
                               Attribute rhsValue, bool isMax) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  Type resultType = op->getResult(0).getType();
  if (lhs == rhs)
    return lhs;
  double neutral = isMax ? -INFINITY : INFINITY;
  if (OpFoldResult folded = foldNeutralRhs(lhs, rhsValue, resultType, neutral))
    return folded;
  if (OpFoldResult folded = foldNeutralRhs(rhs, lhsValue, resultType, neutral))
    return folded;
  auto l = dyn_cast_if_present<SplatElementsAttr>(lhsValue);
  auto r = dyn_cast_if_present<SplatElementsAttr>(rhsValue);
  if (!l || !r || !isa<FloatType>(l.getElementType()))
    return {};
  APFloat a = l.getSplatValue<APFloat>(), b = r.getSplatValue<APFloat>();
  return SplatElementsAttr::get(cast<ShapedType>(resultType),
                                isMax ? llvm::maximum(a, b)
                                      : llvm::minimum(a, b));
}

OpFoldResult MaximumOp::fold(FoldAdaptor adaptor) {
  return foldSelect(*this, adaptor.getLhs(), adaptor.getRhs(), /*isMax=*/true);
}

OpFoldResult MinimumOp::fold(FoldAdaptor adaptor) {
  return foldSelect(*this, adaptor.getLhs(), adaptor.getRhs(),
                    /*isMax=*/false);
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // Reshaping a constant only relabels its elements.
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput()))
    return dense.reshape(getType());
  return {};
}

namespace {

/// reshape(reshape(x)) -> reshape(x): only the final shape matters.
struct ComposeReshapes : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto producer = op.getInput().getDefiningOp<ReshapeOp>();
    if (!producer)
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(),
                                           producer.getInput());
    return success();
  }
};

/// flatten is a reshape whose shape was computed from its axis.
struct FlattenToReshape : OpRewritePattern<FlattenOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FlattenOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), op.getInput());
    return success();
  }
};

/// transpose(transpose(x, p), q) -> transpose(x, p o q).
struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto producer = op.getInput().getDefiningOp<TransposeOp>();
    if (!producer)
      return failure();
    SmallVector<int64_t> perm;
    for (int64_t axis : op.getPerm())
      perm.push_back(producer.getPerm()[axis]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, producer.getInput(), perm);
    return success();
  }
};

/// transpose(u(transpose(x, p)), q) -> u(transpose(transpose(x, p), q)) for
/// a unary elementwise u used once, which ComposeTransposes then composes
/// (and folds away when q undoes p): converters from NHWC frameworks
/// (tf2onnx) wrap each ReLU between a NCHW convolution or BatchNorm and a
/// NCHW pooling in such a pair.
struct SinkTransposeThroughUnary : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    Operation *unary = op.getInput().getDefiningOp();
    if (!unary || !unary->hasTrait<OpTrait::Elementwise>() ||
        unary->getNumOperands() != 1 || unary->getNumResults() != 1 ||
        !unary->hasOneUse() ||
        unary->getOperand(0).getType() != unary->getResult(0).getType() ||
        !unary->getOperand(0).getDefiningOp<TransposeOp>())
      return failure();
    Value moved = TransposeOp::create(rewriter, op.getLoc(),
                                      unary->getOperand(0), op.getPerm());
    Operation *sunk = rewriter.clone(*unary);
    sunk->setOperand(0, moved);
    sunk->getResult(0).setType(op.getType());
    rewriter.replaceOp(op, sunk->getResults());
    return success();
  }
};

/// gemm(transpose(A), B) -> gemm(A, B) with trans_a flipped, and likewise
/// for B: exporters (tf2onnx in particular) spell a transposed operand as a
/// separate Transpose node.
struct FoldTransposeIntoGemm : OpRewritePattern<GemmOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GemmOp op,
                                PatternRewriter &rewriter) const override {
    // The identity permutation may not have folded away yet.
    auto swapsAxes = [](Value value) {
      auto transpose = value.getDefiningOp<TransposeOp>();
      return transpose && transpose.getPerm()[0] == 1 ? transpose
                                                      : TransposeOp();
    };
    TransposeOp transposeA = swapsAxes(op.getA());
    TransposeOp transposeB = swapsAxes(op.getB());
    if (!transposeA && !transposeB)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      if (transposeA) {
        op.getAMutable().assign(transposeA.getInput());
        op.setTransA(!op.getTransA());
      }
      if (transposeB) {
        op.getBMutable().assign(transposeB.getInput());
        op.setTransB(!op.getTransB());
      }
    });
    return success();
  }
};

} // namespace

void GemmOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                         MLIRContext *context) {
  patterns.add<FoldTransposeIntoGemm>(context);
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<ComposeReshapes>(context);
}

void FlattenOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<FlattenToReshape>(context);
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  for (auto [index, axis] : llvm::enumerate(getPerm()))
    if (static_cast<int64_t>(index) != axis)
      return {};
  return getInput();
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<ComposeTransposes, SinkTransposeThroughUnary>(context);
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1)
    return getInputs().front();
  return {};
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  RankedTensorType input = getInput().getType();
  for (int64_t i = 0; i < input.getRank(); ++i)
    if (getStarts()[i] != 0 || getSteps()[i] != 1 ||
        getEnds()[i] != input.getDimSize(i))
      return {};
  return getInput();
}
