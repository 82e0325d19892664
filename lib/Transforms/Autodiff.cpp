//===- Autodiff.cpp - @loss -> @micro_step --------------------------------===//
//
// The reverse sweep: ops are visited last to first, and each op with an
// adjoint on one of its results applies its own rule (GradientOpInterface,
// implemented beside the ops in the dialect).
//
//===----------------------------------------------------------------------===//

#include "traincc/Dialect/Train/IR/TrainOps.h"
#include "traincc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace traincc {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "traincc/Transforms/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

/// The trainable parameter a read gives the value of: the parameter read,
/// or, for its low-precision copy (mixed precision), the master weight.
train::ParamOp trainedParam(train::ReadParamOp read, ModuleOp module) {
  auto param = module.lookupSymbol<train::ParamOp>(read.getParamAttr());
  if (param && param.getKind() == train::ParamKind::WeightCopy)
    param = module.lookupSymbol<train::ParamOp>(param.getSourceAttr());
  if (param && param.getKind() == train::ParamKind::Trainable)
    return param;
  return train::ParamOp();
}

/// Values that depend on a trainable parameter: the only ones whose
/// gradient is worth computing.
DenseSet<Value> findActiveValues(func::FuncOp func, ModuleOp module) {
  DenseSet<Value> active;
  func.walk([&](Operation *op) {
    bool isActive = false;
    if (auto read = dyn_cast<train::ReadParamOp>(op)) {
      isActive = static_cast<bool>(trainedParam(read, module));
    } else {
      isActive = llvm::any_of(op->getOperands(), [&](Value operand) {
        return active.contains(operand);
      });
    }
    if (isActive)
      active.insert(op->getResults().begin(), op->getResults().end());
  });
  return active;
}

/// Emits the gradient of `op`'s operands from the adjoints of its results;
/// fails (with a diagnostic on `op`) when it has none of its own.
LogicalResult emitGradient(Operation *op, train::GradientEmitter &emitter) {
  // Leaves: parameters, constants and dropout masks have no operand to
  // differentiate.
  if (isa<train::ConstantOp, train::ReadParamOp, train::DropoutMaskOp>(op))
    return success();
  // Ops none of whose results reach the loss, and state updates (running
  // statistics, accumulators), which produce no value.
  if (llvm::none_of(op->getResults(),
                    [&](Value result) { return emitter.getGradient(result); }))
    return success();
  auto rule = dyn_cast<train::GradientOpInterface>(op);
  if (!rule)
    return op->emitError("no gradient rule for '") << op->getName() << "'";
  return rule.emitGradient(emitter);
}

struct AutodiffPass : public traincc::impl::AutodiffPassBase<AutodiffPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto lossFunc = module.lookupSymbol<func::FuncOp>("loss");
    if (!lossFunc || lossFunc.getNumResults() != 1 ||
        !lossFunc.getBody().hasOneBlock()) {
      module.emitError("expected a single-block @loss function with one "
                       "result (run traincc-append-loss first)");
      return signalPassFailure();
    }
    OpBuilder builder(lossFunc);
    func::FuncOp step = lossFunc.clone();
    step.setSymName("micro_step");
    builder.insert(step);

    // grad_scale goes before the trailing seed, if there is one.
    unsigned scaleIndex = step.getNumArguments();
    if (scaleIndex > 0 && step.getArgumentTypes().back().isInteger(64))
      --scaleIndex;
    (void)step.insertArgument(
        scaleIndex, builder.getF32Type(),
        builder.getDictionaryAttr(builder.getNamedAttr(
            "train.name", builder.getStringAttr("grad_scale"))),
        step.getLoc());
    Value gradScale = step.getArgument(scaleIndex);
    step.setResultAttr(0, "train.name", builder.getStringAttr("loss"));

    Block &body = step.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    Value loss = ret.getOperand(0);
    auto lossType = dyn_cast<RankedTensorType>(loss.getType());
    if (!lossType || lossType.getRank() != 0) {
      step.emitError("the loss must be a scalar tensor, got ")
          << loss.getType();
      step.erase();
      return signalPassFailure();
    }

    DenseSet<Value> active = findActiveValues(step, module);
    builder.setInsertionPoint(ret);
    train::GradientEmitter emitter(builder, active);
    if (active.contains(loss))
      emitter.addGradient(loss, emitter.scalar(ret.getLoc(),
                                               lossType.getElementType(), 1.0));
    // Loss scaling: the backward pass starts from the scaled loss divided
    // by K, and the step reports the loss itself; the gradients then need
    // no 1/K when they are accumulated.
    Value accumulateScale = gradScale;
    if (auto scaled = loss.getDefiningOp<train::ScaleLossOp>()) {
      scaled.getFactorMutable().assign(gradScale);
      ret.setOperand(0, scaled.getLoss());
      accumulateScale = arith::ConstantOp::create(
          builder, ret.getLoc(), builder.getF32FloatAttr(1.0f));
    }

    SmallVector<Operation *> forwardOps;
    for (Operation &op : body.without_terminator())
      forwardOps.push_back(&op);
    for (Operation *op : llvm::reverse(forwardOps))
      if (failed(emitGradient(op, emitter))) {
        step.erase();
        return signalPassFailure();
      }

    // One accumulation per parameter, summing the gradients of all its
    // reads.
    // The gradient by a weight's low-precision copy is the weight's, in the
    // weight's type.
    llvm::MapVector<StringAttr, Value> paramGradients;
    for (Operation *op : forwardOps) {
      auto read = dyn_cast<train::ReadParamOp>(op);
      if (!read || !active.contains(read.getResult()))
        continue;
      Value gradient = emitter.getGradient(read.getResult());
      if (!gradient)
        continue;
      train::ParamOp param = trainedParam(read, module);
      if (gradient.getType() != param.getType())
        gradient = train::CastOp::create(builder, read.getLoc(),
                                         param.getType(), gradient);
      Value &slot = paramGradients[param.getSymNameAttr()];
      slot = slot ? Value(train::AddOp::create(builder, read.getLoc(), slot,
                                               gradient))
                  : gradient;
    }
    for (auto &[name, gradient] : paramGradients) {
      auto param = module.lookupSymbol<train::ParamOp>(name);
      std::string gradName = (name.getValue() + ".grad").str();
      {
        OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPointAfter(param);
        train::ParamOp::create(builder, param.getLoc(), gradName,
                               train::ParamKind::Gradient,
                               param.getType(), ElementsAttr(),
                               /*source=*/FlatSymbolRefAttr());
      }
      train::AccumulateOp::create(
          builder, ret.getLoc(),
          FlatSymbolRefAttr::get(builder.getContext(), gradName), gradient,
          accumulateScale);
    }
    lossFunc.erase();
  }
};

} // namespace
