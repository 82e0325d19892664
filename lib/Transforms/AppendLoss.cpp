//===- AppendLoss.cpp - @forward -> @loss and @eval_step ------------------===//

#include "traincc/Dialect/Train/IR/TrainOps.h"
#include "traincc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace traincc {
#define GEN_PASS_DEF_APPENDLOSSPASS
#include "traincc/Transforms/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

/// The loss the user asked for, checked against the model's first output.
FailureOr<LossKind> chooseLoss(func::FuncOp forward, LossKind requested) {
  if (forward.getNumResults() == 0)
    return forward.emitError("@forward has no output to train on");
  auto output = dyn_cast<RankedTensorType>(forward.getResultTypes().front());
  if (!output || !isa<FloatType>(output.getElementType()))
    return forward.emitError("the first output must be a float tensor, got ")
           << forward.getResultTypes().front();
  bool scalar = output.getNumElements() == 1 && output.getRank() <= 1;
  LossKind kind = requested;
  if (requested == LossKind::Auto)
    kind = scalar ? LossKind::Output
           : output.getRank() == 2 && output.getDimSize(1) > 1
               ? LossKind::CrossEntropy
               : LossKind::MSE;

  if (kind == LossKind::CrossEntropy && output.getRank() != 2)
    return forward.emitError("cross-entropy needs [N, C] logits, the first "
                             "output is ")
           << output;
  if (kind == LossKind::Output && !scalar)
    return forward.emitError("--loss output needs a scalar first output, got ")
           << output;
  if (kind != LossKind::Output && output.getRank() == 0)
    return forward.emitError("a loss over samples needs a batch axis, the "
                             "first output is ")
           << output;
  return kind;
}

/// Warns when cross-entropy (which applies softmax to its input) trains an
/// output that already is a softmax: the loss would see softmax(softmax(x)),
/// whose gradients nearly vanish. A final LogSoftmax is harmless
/// (log_softmax(log_softmax(x)) = log_softmax(x): PyTorch's LogSoftmax and
/// NLLLoss), so it gets no warning.
void warnDoubleSoftmax(func::FuncOp forward, LossKind kind) {
  if (kind != LossKind::CrossEntropy)
    return;
  auto ret = cast<func::ReturnOp>(forward.getBody().back().getTerminator());
  auto softmax = ret.getOperand(0).getDefiningOp<train::SoftmaxOp>();
  if (!softmax)
    return;
  softmax.emitWarning(
      "the model's output is a Softmax and the cross-entropy loss applies "
      "softmax again (it takes logits, like torch.nn.CrossEntropyLoss); "
      "remove the final Softmax from the model before exporting it, or "
      "train with --loss mse");
}

/// Clones @forward as `name`, adding a `target` argument unless `kind` needs
/// none.
func::FuncOp cloneWithTarget(func::FuncOp forward, StringRef name,
                             LossKind kind) {
  func::FuncOp clone = forward.clone();
  clone.setSymName(name);
  OpBuilder builder(forward);
  builder.insert(clone);
  if (kind == LossKind::Output)
    return clone;
  auto output = cast<RankedTensorType>(forward.getResultTypes().front());
  Type target = kind == LossKind::CrossEntropy
                    ? RankedTensorType::get({output.getDimSize(0)},
                                            builder.getI64Type())
                    : Type(output);
  unsigned index = clone.getNumArguments();
  (void)clone.insertArgument(index, target,
                             builder.getDictionaryAttr(builder.getNamedAttr(
                                 "train.name", builder.getStringAttr("target"))),
                             forward.getLoc());
  return clone;
}

/// The loss of `output` against `target` with the given reduction.
Value buildLoss(OpBuilder &builder, Location loc, LossKind kind, Value output,
                Value target, train::Reduction reduction) {
  switch (kind) {
  case LossKind::CrossEntropy:
    return train::SoftmaxCrossEntropyOp::create(builder, loc, output, target,
                                                reduction);
  case LossKind::MSE:
    return train::MSEOp::create(builder, loc, output, target, reduction);
  case LossKind::Output: {
    auto type = cast<RankedTensorType>(output.getType());
    auto scalar = RankedTensorType::get({}, type.getElementType());
    Value loss = type.getRank() == 0
                     ? output
                     : Value(train::ReshapeOp::create(builder, loc, scalar,
                                                      output));
    return loss;
  }
  case LossKind::Auto:
    break;
  }
  llvm_unreachable("chooseLoss resolves auto");
}

struct AppendLossPass
    : public traincc::impl::AppendLossPassBase<AppendLossPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>("forward");
    if (!forward) {
      module.emitError("no @forward function to train");
      return signalPassFailure();
    }
    if (forward.isExternal()) {
      forward.emitError("@forward has no body to train");
      return signalPassFailure();
    }
    FailureOr<LossKind> kind = chooseLoss(forward, loss);
    if (failed(kind))
      return signalPassFailure();
    warnDoubleSoftmax(forward, *kind);

    // @loss: the mean loss of a micro-batch.
    func::FuncOp lossFunc = cloneWithTarget(forward, "loss", *kind);
    auto lossReturn =
        cast<func::ReturnOp>(lossFunc.getBody().back().getTerminator());
    OpBuilder builder(lossReturn);
    Value target = *kind == LossKind::Output ? Value()
                                             : lossFunc.getArguments().back();
    Value meanLoss = buildLoss(builder, lossReturn.getLoc(), *kind,
                               lossReturn.getOperand(0), target,
                               train::Reduction::Mean);
    func::ReturnOp::create(builder, lossReturn.getLoc(), meanLoss);
    lossReturn.erase();
    lossFunc.setFunctionType(builder.getFunctionType(
        lossFunc.getArgumentTypes(), meanLoss.getType()));
    lossFunc.removeResAttrsAttr();

    // @eval_step: the outputs and each sample's loss.
    func::FuncOp evalFunc = cloneWithTarget(forward, "eval_step", *kind);
    auto evalReturn =
        cast<func::ReturnOp>(evalFunc.getBody().back().getTerminator());
    builder.setInsertionPoint(evalReturn);
    Value output = evalReturn.getOperand(0);
    target = *kind == LossKind::Output ? Value()
                                       : evalFunc.getArguments().back();
    Value sampleLosses;
    if (*kind == LossKind::Output) {
      // A model-computed loss has no per-sample values: every sample
      // carries the batch's, so their mean is the batch loss.
      int64_t samples = 1;
      if (forward.getNumArguments() > 0)
        if (auto input =
                dyn_cast<RankedTensorType>(forward.getArgumentTypes()[0]))
          samples = input.getRank() ? input.getDimSize(0) : 1;
      auto losses = RankedTensorType::get(
          {samples},
          cast<RankedTensorType>(output.getType()).getElementType());
      Value scalar = buildLoss(builder, evalReturn.getLoc(), *kind, output,
                               target, train::Reduction::Mean);
      sampleLosses = train::BroadcastToOp::create(builder, evalReturn.getLoc(),
                                                  losses, scalar);
    } else {
      sampleLosses = buildLoss(builder, evalReturn.getLoc(), *kind, output,
                               target, train::Reduction::None);
    }
    SmallVector<Value> results(evalReturn.getOperands());
    results.push_back(sampleLosses);
    func::ReturnOp::create(builder, evalReturn.getLoc(), results);
    evalReturn.erase();
    SmallVector<Type> resultTypes(forward.getResultTypes());
    resultTypes.push_back(sampleLosses.getType());
    SmallVector<DictionaryAttr> resultAttrs;
    for (unsigned i = 0, e = forward.getNumResults(); i < e; ++i)
      resultAttrs.push_back(forward.getResultAttrDict(i)
                                ? forward.getResultAttrDict(i)
                                : builder.getDictionaryAttr({}));
    resultAttrs.push_back(builder.getDictionaryAttr(builder.getNamedAttr(
        "train.name", builder.getStringAttr("loss"))));
    evalFunc.setFunctionType(
        builder.getFunctionType(evalFunc.getArgumentTypes(), resultTypes));
    evalFunc.setAllResultAttrs(resultAttrs);

    module->setAttr("train.loss", builder.getStringAttr(stringifyEnum(*kind)));
    forward.erase();
  }
};

} // namespace
