//===- LowerState.cpp - parameters as arguments, updates as linalg --------===//
//
// Turns the symbol-addressed state of the step functions into SSA form that
// bufferization understands: parameters become tensor arguments, every
// update a destination-passing linalg op on the parameter's current value,
// and final values are returned. Bufferizing function boundaries then maps
// each argument to a buffer in the state arena and performs the updates in
// place.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/Common/LinalgBuilders.h"

#include "traincc/Codegen/Common/Passes.h"
#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

namespace traincc {
#define GEN_PASS_DEF_LOWERSTATEPASS
#include "traincc/Codegen/Common/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;
namespace tr = traincc::train;
// Scalar helpers shared with the compute lowering.
using traincc::codegen::convertFloat;
using traincc::codegen::floatConstant;

namespace {

/// Builds one elementwise linalg.generic over tensors of one shape:
/// `inputs` are read, scalars broadcast, `outputs` are the destinations.
/// `body` gets the block arguments (inputs, scalars, outputs in order) and
/// returns one value per output.
using BodyFn = function_ref<SmallVector<Value>(OpBuilder &, Location,
                                               ArrayRef<Value>)>;
SmallVector<Value> buildElementwise(OpBuilder &builder, Location loc,
                                    ValueRange inputs, ValueRange scalars,
                                    ValueRange outputs, BodyFn body) {
  auto type = cast<RankedTensorType>(outputs.front().getType());
  MLIRContext *context = builder.getContext();
  AffineMap identity = builder.getMultiDimIdentityMap(type.getRank());
  AffineMap scalarMap = AffineMap::get(type.getRank(), 0, {}, context);
  SmallVector<AffineMap> maps;
  SmallVector<Value> ins(inputs);
  maps.append(inputs.size(), identity);
  ins.append(scalars.begin(), scalars.end());
  maps.append(scalars.size(), scalarMap);
  maps.append(outputs.size(), identity);
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      builder, loc, TypeRange(outputs), ins, outputs, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        linalg::YieldOp::create(b, l, body(b, l, llvm::to_vector(args)));
      });
  return SmallVector<Value>(generic.getResults());
}

/// The state of one function being rewritten: the current value of every
/// parameter it touches.
class StateRewriter {
public:
  StateRewriter(func::FuncOp func, ModuleOp module)
      : func(func), module(module), builder(func.getContext()) {}

  LogicalResult run();

private:
  Value current(FlatSymbolRefAttr symbol) {
    return values.lookup(symbol.getAttr());
  }
  void update(FlatSymbolRefAttr symbol, Value value) {
    values[symbol.getAttr()] = value;
    written.insert(symbol.getAttr());
  }
  Type elementTypeOf(FlatSymbolRefAttr symbol) {
    return cast<RankedTensorType>(current(symbol).getType()).getElementType();
  }

  LogicalResult lower(Operation *op);
  void lowerAccumulate(tr::AccumulateOp op);
  void lowerRunningUpdate(tr::BNRunningUpdateOp op);
  void lowerSGD(tr::SGDUpdateOp op);
  void lowerAdam(tr::AdamUpdateOp op);

  func::FuncOp func;
  ModuleOp module;
  OpBuilder builder;
  llvm::MapVector<StringAttr, Value> values;
  llvm::SetVector<StringAttr> written;
};

/// Symbols of the parameters `op` reads or writes.
SmallVector<FlatSymbolRefAttr> stateSymbols(Operation *op) {
  SmallVector<FlatSymbolRefAttr> symbols;
  for (NamedAttribute attr : op->getAttrs())
    if (auto symbol = dyn_cast<FlatSymbolRefAttr>(attr.getValue()))
      symbols.push_back(symbol);
  return symbols;
}

bool isStateOp(Operation *op) {
  return isa<tr::ReadParamOp, tr::AccumulateOp, tr::AssignOp, tr::ZeroOp,
             tr::BNRunningUpdateOp, tr::SGDUpdateOp, tr::AdamUpdateOp>(op);
}

LogicalResult StateRewriter::run() {
  // One leading argument per parameter, in first-use order.
  SmallVector<FlatSymbolRefAttr> used;
  llvm::SmallDenseSet<StringAttr> seen;
  func.walk([&](Operation *op) {
    if (!isStateOp(op))
      return;
    for (FlatSymbolRefAttr symbol : stateSymbols(op))
      if (seen.insert(symbol.getAttr()).second)
        used.push_back(symbol);
  });
  if (used.empty())
    return success();
  for (auto [index, symbol] : llvm::enumerate(used)) {
    auto param = module.lookupSymbol<tr::ParamOp>(symbol.getAttr());
    if (!param)
      return func.emitError("no train.param named ") << symbol;
    (void)func.insertArgument(
        index, param.getType(),
        builder.getDictionaryAttr(
            builder.getNamedAttr("train.state", symbol)),
        param.getLoc());
    values[symbol.getAttr()] = func.getArgument(index);
  }

  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (isStateOp(op))
      ops.push_back(op);
  });
  for (Operation *op : ops)
    if (failed(lower(op)))
      return failure();

  // Final values of written parameters become results.
  auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
  SmallVector<Value> results(ret.getOperands());
  SmallVector<Type> resultTypes(func.getResultTypes());
  SmallVector<DictionaryAttr> resultAttrs;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    resultAttrs.push_back(func.getResultAttrDict(i)
                              ? func.getResultAttrDict(i)
                              : builder.getDictionaryAttr({}));
  for (StringAttr name : written) {
    results.push_back(values[name]);
    resultTypes.push_back(values[name].getType());
    resultAttrs.push_back(builder.getDictionaryAttr(builder.getNamedAttr(
        "train.state", FlatSymbolRefAttr::get(name))));
  }
  builder.setInsertionPoint(ret);
  func::ReturnOp::create(builder, ret.getLoc(), results);
  ret.erase();
  func.setFunctionType(
      builder.getFunctionType(func.getArgumentTypes(), resultTypes));
  func.setAllResultAttrs(resultAttrs);
  return success();
}

LogicalResult StateRewriter::lower(Operation *op) {
  builder.setInsertionPoint(op);
  Location loc = op->getLoc();
  if (auto read = dyn_cast<tr::ReadParamOp>(op)) {
    read.replaceAllUsesWith(current(read.getParamAttr()));
  } else if (auto accumulate = dyn_cast<tr::AccumulateOp>(op)) {
    lowerAccumulate(accumulate);
  } else if (auto assign = dyn_cast<tr::AssignOp>(op)) {
    Value dest = current(assign.getBufferAttr());
    update(assign.getBufferAttr(),
           linalg::CopyOp::create(builder, loc, assign.getValue(), dest)
               .getResult(0));
  } else if (auto zero = dyn_cast<tr::ZeroOp>(op)) {
    Value dest = current(zero.getBufferAttr());
    Value zeroValue = arith::ConstantOp::create(
        builder, loc,
        builder.getZeroAttr(cast<RankedTensorType>(dest.getType())
                                .getElementType()));
    update(zero.getBufferAttr(),
           linalg::FillOp::create(builder, loc, zeroValue, dest).getResult(0));
  } else if (auto running = dyn_cast<tr::BNRunningUpdateOp>(op)) {
    lowerRunningUpdate(running);
  } else if (auto sgd = dyn_cast<tr::SGDUpdateOp>(op)) {
    lowerSGD(sgd);
  } else if (auto adam = dyn_cast<tr::AdamUpdateOp>(op)) {
    lowerAdam(adam);
  } else {
    return op->emitError("unexpected state op");
  }
  op->erase();
  return success();
}

void StateRewriter::lowerAccumulate(tr::AccumulateOp op) {
  Location loc = op.getLoc();
  Type element = elementTypeOf(op.getBufferAttr());
  Value scale = convertFloat(builder, loc, op.getScale(), element);
  update(op.getBufferAttr(),
         buildElementwise(
             builder, loc, {op.getValue()}, {scale},
             {current(op.getBufferAttr())},
             [](OpBuilder &b, Location l, ArrayRef<Value> args) {
               // buffer + scale * value
               Value scaled = arith::MulFOp::create(b, l, args[1], args[0]);
               return SmallVector<Value>{
                   arith::AddFOp::create(b, l, args[2], scaled)};
             })
             .front());
}

void StateRewriter::lowerRunningUpdate(tr::BNRunningUpdateOp op) {
  Location loc = op.getLoc();
  Type element = elementTypeOf(op.getRunningMeanAttr());
  double momentum = op.getMomentum().convertToDouble();
  // n / (n - 1) turns the biased batch variance into the unbiased one.
  Value count = floatConstant(builder, loc, element, double(op.getCount()));
  if (Value batches = op.getBatches()) {
    Value n = tensor::ExtractOp::create(builder, loc, batches, ValueRange{});
    count = arith::MulFOp::create(builder, loc, count,
                                  convertFloat(builder, loc, n, element));
  }
  Value one = floatConstant(builder, loc, element, 1.0);
  Value correction = arith::DivFOp::create(
      builder, loc, count, arith::SubFOp::create(builder, loc, count, one));
  Value keep = floatConstant(builder, loc, element, 1.0 - momentum);
  Value take = floatConstant(builder, loc, element, momentum);
  SmallVector<Value> updated = buildElementwise(
      builder, loc, {op.getMean(), op.getVariance()},
      {keep, take, correction},
      {current(op.getRunningMeanAttr()), current(op.getRunningVarAttr())},
      [](OpBuilder &b, Location l, ArrayRef<Value> args) {
        Value mean = args[0], var = args[1], keep = args[2], take = args[3];
        Value correction = args[4], runningMean = args[5],
              runningVar = args[6];
        Value newMean = arith::AddFOp::create(
            b, l, arith::MulFOp::create(b, l, keep, runningMean),
            arith::MulFOp::create(b, l, take, mean));
        Value unbiased = arith::MulFOp::create(b, l, var, correction);
        Value newVar = arith::AddFOp::create(
            b, l, arith::MulFOp::create(b, l, keep, runningVar),
            arith::MulFOp::create(b, l, take, unbiased));
        return SmallVector<Value>{newMean, newVar};
      });
  update(op.getRunningMeanAttr(), updated[0]);
  update(op.getRunningVarAttr(), updated[1]);
}

void StateRewriter::lowerSGD(tr::SGDUpdateOp op) {
  Location loc = op.getLoc();
  Type element = elementTypeOf(op.getParamAttr());
  Value lr = convertFloat(builder, loc, op.getLr(), element);
  Value weightDecay = floatConstant(builder, loc, element,
                                    op.getWeightDecay().convertToDouble());
  FlatSymbolRefAttr bufferSymbol = op.getMomentumBufferAttr();
  if (!bufferSymbol) {
    update(op.getParamAttr(),
           buildElementwise(
               builder, loc, {current(op.getGradAttr())}, {lr, weightDecay},
               {current(op.getParamAttr())},
               [](OpBuilder &b, Location l, ArrayRef<Value> args) {
                 Value grad = args[0], lr = args[1], decay = args[2],
                       param = args[3];
                 Value d = arith::AddFOp::create(
                     b, l, grad, arith::MulFOp::create(b, l, decay, param));
                 return SmallVector<Value>{arith::SubFOp::create(
                     b, l, param, arith::MulFOp::create(b, l, lr, d))};
               })
               .front());
    return;
  }
  // PyTorch starts the momentum buffer as the first step's gradient.
  Value one = arith::ConstantOp::create(builder, loc,
                                        builder.getI64IntegerAttr(1));
  Value firstStep = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                          op.getStep(), one);
  Value momentum = floatConstant(builder, loc, element,
                                 op.getMomentum().convertToDouble());
  Value damp = floatConstant(builder, loc, element,
                             1.0 - op.getDampening().convertToDouble());
  bool nesterov = op.getNesterov();
  SmallVector<Value> updated = buildElementwise(
      builder, loc, {current(op.getGradAttr())},
      {lr, weightDecay, momentum, damp, firstStep},
      {current(op.getParamAttr()), current(bufferSymbol)},
      [nesterov](OpBuilder &b, Location l, ArrayRef<Value> args) {
        Value grad = args[0], lr = args[1], decay = args[2],
              momentum = args[3], damp = args[4], first = args[5],
              param = args[6], buffer = args[7];
        Value d = arith::AddFOp::create(
            b, l, grad, arith::MulFOp::create(b, l, decay, param));
        Value continued = arith::AddFOp::create(
            b, l, arith::MulFOp::create(b, l, momentum, buffer),
            arith::MulFOp::create(b, l, damp, d));
        Value newBuffer = arith::SelectOp::create(b, l, first, d, continued);
        Value direction =
            nesterov ? Value(arith::AddFOp::create(
                           b, l, d,
                           arith::MulFOp::create(b, l, momentum, newBuffer)))
                     : newBuffer;
        Value newParam = arith::SubFOp::create(
            b, l, param, arith::MulFOp::create(b, l, lr, direction));
        return SmallVector<Value>{newParam, newBuffer};
      });
  update(op.getParamAttr(), updated[0]);
  update(bufferSymbol, updated[1]);
}

void StateRewriter::lowerAdam(tr::AdamUpdateOp op) {
  Location loc = op.getLoc();
  Type element = elementTypeOf(op.getParamAttr());
  Type f64 = builder.getF64Type();
  double beta1 = op.getBeta1().convertToDouble();
  double beta2 = op.getBeta2().convertToDouble();
  // Bias corrections in double, as PyTorch computes them in Python floats:
  // step_size = lr / (1 - beta1^t), denominator sqrt(1 - beta2^t).
  Value step = arith::SIToFPOp::create(builder, loc, f64, op.getStep());
  auto correction = [&](double beta) {
    Value power = math::PowFOp::create(
        builder, loc, floatConstant(builder, loc, f64, beta), step);
    return arith::SubFOp::create(builder, loc,
                                 floatConstant(builder, loc, f64, 1.0), power);
  };
  Value lr64 = arith::ExtFOp::create(builder, loc, f64, op.getLr());
  Value stepSize = convertFloat(
      builder, loc, arith::DivFOp::create(builder, loc, lr64, correction(beta1)),
      element);
  Value correction2Sqrt = convertFloat(
      builder, loc, math::SqrtOp::create(builder, loc, correction(beta2)),
      element);
  double decayValue = op.getWeightDecay().convertToDouble();
  // AdamW shrinks the parameter by lr * weight_decay before the update.
  Value shrink = convertFloat(
      builder, loc,
      arith::SubFOp::create(
          builder, loc, floatConstant(builder, loc, f64, 1.0),
          arith::MulFOp::create(
              builder, loc, lr64,
              floatConstant(builder, loc, f64,
                            op.getDecoupled() ? decayValue : 0.0))),
      element);
  Value l2 = floatConstant(builder, loc, element,
                           op.getDecoupled() ? 0.0 : decayValue);
  Value b1 = floatConstant(builder, loc, element, beta1);
  Value b1c = floatConstant(builder, loc, element, 1.0 - beta1);
  Value b2 = floatConstant(builder, loc, element, beta2);
  Value b2c = floatConstant(builder, loc, element, 1.0 - beta2);
  Value eps =
      floatConstant(builder, loc, element, op.getEpsilon().convertToDouble());
  SmallVector<Value> updated = buildElementwise(
      builder, loc, {current(op.getGradAttr())},
      {stepSize, correction2Sqrt, shrink, l2, b1, b1c, b2, b2c, eps},
      {current(op.getParamAttr()), current(op.getExpAvgAttr()),
       current(op.getExpAvgSqAttr())},
      [](OpBuilder &b, Location l, ArrayRef<Value> args) {
        Value grad = args[0], stepSize = args[1], c2 = args[2],
              shrink = args[3], l2 = args[4], b1 = args[5], b1c = args[6],
              b2 = args[7], b2c = args[8], eps = args[9], param = args[10],
              m = args[11], v = args[12];
        Value g = arith::AddFOp::create(b, l, grad,
                                        arith::MulFOp::create(b, l, l2, param));
        Value p = arith::MulFOp::create(b, l, param, shrink);
        Value newM = arith::AddFOp::create(
            b, l, arith::MulFOp::create(b, l, b1, m),
            arith::MulFOp::create(b, l, b1c, g));
        Value newV = arith::AddFOp::create(
            b, l, arith::MulFOp::create(b, l, b2, v),
            arith::MulFOp::create(b, l, b2c, arith::MulFOp::create(b, l, g, g)));
        Value denom = arith::AddFOp::create(
            b, l,
            arith::DivFOp::create(b, l, math::SqrtOp::create(b, l, newV), c2),
            eps);
        Value newP = arith::SubFOp::create(
            b, l, p,
            arith::MulFOp::create(b, l, stepSize,
                                  arith::DivFOp::create(b, l, newM, denom)));
        return SmallVector<Value>{newP, newM, newV};
      });
  update(op.getParamAttr(), updated[0]);
  update(op.getExpAvgAttr(), updated[1]);
  update(op.getExpAvgSqAttr(), updated[2]);
}

struct LowerStatePass : public traincc::impl::LowerStatePassBase<LowerStatePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (!func.isExternal() && failed(StateRewriter(func, module).run()))
        return signalPassFailure();
  }
};

} // namespace
