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
using traincc::codegen::accumulatorType;
using traincc::codegen::convertFloat;
using traincc::codegen::floatConstant;
using traincc::codegen::iteratorTypes;

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

/// Whether a 0-d f32 flag's value `flag` (a scalar in a generic's body) is
/// set: non-zero, NaN included.
Value isSet(OpBuilder &b, Location loc, Value flag) {
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, flag,
                               floatConstant(b, loc, flag.getType(), 0.0));
}

/// Whether `value` is neither infinite nor NaN.
Value isFinite(OpBuilder &b, Location loc, Value value) {
  const llvm::fltSemantics &semantics =
      cast<FloatType>(value.getType()).getFloatSemantics();
  Value inf = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(value.getType(), APFloat::getInf(semantics)));
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE,
                               math::AbsFOp::create(b, loc, value), inf);
}

/// The results of an update body that keeps the old values when `skip`
/// holds: loss scaling skips a step in the kernel rather than on the host,
/// so that a GPU step stays one fixed launch sequence.
SmallVector<Value> keepIf(OpBuilder &b, Location loc, Value skip,
                          ArrayRef<Value> old, ArrayRef<Value> computed) {
  if (!skip)
    return SmallVector<Value>(computed);
  SmallVector<Value> results;
  for (auto [o, c] : llvm::zip_equal(old, computed))
    results.push_back(arith::SelectOp::create(b, loc, skip, o, c));
  return results;
}

/// `buildElementwise` for an optimizer or statistics update whose first
/// output is the tensor a weight copy mirrors. With `flag` (a 0-d tensor,
/// read in the kernel), every output keeps its old value where the flag is
/// set; with `copy`, the first result, rounded to the copy's element type,
/// is also written to `copy` (the last result). `body` sees neither.
SmallVector<Value> buildUpdate(OpBuilder &builder, Location loc,
                               ValueRange inputs, ValueRange scalars,
                               ValueRange outputs, Value flag, Value copy,
                               BodyFn body) {
  SmallVector<Value> allScalars(scalars), allOutputs(outputs);
  if (flag)
    allScalars.push_back(flag);
  if (copy)
    allOutputs.push_back(copy);
  size_t numIns = inputs.size() + scalars.size();
  return buildElementwise(
      builder, loc, inputs, allScalars, allOutputs,
      [&](OpBuilder &b, Location l, ArrayRef<Value> args) {
        SmallVector<Value> bodyArgs(args.take_front(numIns));
        ArrayRef<Value> old = args.drop_front(numIns + (flag ? 1 : 0));
        llvm::append_range(bodyArgs, old.take_front(outputs.size()));
        SmallVector<Value> computed = body(b, l, bodyArgs);
        if (copy)
          computed.push_back(
              convertFloat(b, l, computed.front(), old.back().getType()));
        Value skip = flag ? isSet(b, l, args[numIns]) : Value();
        return keepIf(b, l, skip, old, computed);
      });
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
  void lowerAssign(tr::AssignOp op);
  void lowerUnscale(tr::UnscaleCheckFiniteOp op);
  void lowerUpdateLossScale(tr::UpdateLossScaleOp op);

  func::FuncOp func;
  ModuleOp module;
  OpBuilder builder;
  llvm::MapVector<StringAttr, Value> values;
  llvm::SetVector<StringAttr> written;
};

/// The gradient buffers of `module`, in declaration order: what
/// unscale_check_finite rewrites.
SmallVector<FlatSymbolRefAttr> gradientSymbols(ModuleOp module) {
  SmallVector<FlatSymbolRefAttr> symbols;
  for (auto param : module.getOps<tr::ParamOp>())
    if (param.getKind() == tr::ParamKind::Gradient)
      symbols.push_back(FlatSymbolRefAttr::get(param.getSymNameAttr()));
  return symbols;
}

/// Symbols of the parameters `op` reads or writes.
SmallVector<FlatSymbolRefAttr> stateSymbols(Operation *op, ModuleOp module) {
  SmallVector<FlatSymbolRefAttr> symbols;
  for (NamedAttribute attr : op->getAttrs())
    if (auto symbol = dyn_cast<FlatSymbolRefAttr>(attr.getValue()))
      symbols.push_back(symbol);
  if (isa<tr::UnscaleCheckFiniteOp>(op))
    llvm::append_range(symbols, gradientSymbols(module));
  return symbols;
}

bool isStateOp(Operation *op) {
  return isa<tr::ReadParamOp, tr::AccumulateOp, tr::AssignOp, tr::ZeroOp,
             tr::BNRunningUpdateOp, tr::SGDUpdateOp, tr::AdamUpdateOp,
             tr::UnscaleCheckFiniteOp, tr::UpdateLossScaleOp>(op);
}

LogicalResult StateRewriter::run() {
  // One leading argument per parameter, in first-use order.
  SmallVector<FlatSymbolRefAttr> used;
  llvm::SmallDenseSet<StringAttr> seen;
  func.walk([&](Operation *op) {
    if (!isStateOp(op))
      return;
    for (FlatSymbolRefAttr symbol : stateSymbols(op, module))
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
    lowerAssign(assign);
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
  } else if (auto unscale = dyn_cast<tr::UnscaleCheckFiniteOp>(op)) {
    lowerUnscale(unscale);
  } else if (auto scale = dyn_cast<tr::UpdateLossScaleOp>(op)) {
    lowerUpdateLossScale(scale);
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
  SmallVector<Value> updated = buildUpdate(
      builder, loc, {op.getMean(), op.getVariance()},
      {keep, take, correction},
      {current(op.getRunningMeanAttr()), current(op.getRunningVarAttr())},
      op.getSkipIf(), /*copy=*/Value(),
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
  FlatSymbolRefAttr copySymbol = op.getWeightCopyAttr();
  Value copy = copySymbol ? current(copySymbol) : Value();
  if (!bufferSymbol) {
    SmallVector<Value> updated = buildUpdate(
        builder, loc, {current(op.getGradAttr())}, {lr, weightDecay},
        {current(op.getParamAttr())}, op.getSkipIf(), copy,
        [](OpBuilder &b, Location l, ArrayRef<Value> args) {
          Value grad = args[0], lr = args[1], decay = args[2],
                param = args[3];
          Value d = arith::AddFOp::create(
              b, l, grad, arith::MulFOp::create(b, l, decay, param));
          return SmallVector<Value>{arith::SubFOp::create(
              b, l, param, arith::MulFOp::create(b, l, lr, d))};
        });
    update(op.getParamAttr(), updated[0]);
    if (copySymbol)
      update(copySymbol, updated[1]);
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
  SmallVector<Value> updated = buildUpdate(
      builder, loc, {current(op.getGradAttr())},
      {lr, weightDecay, momentum, damp, firstStep},
      {current(op.getParamAttr()), current(bufferSymbol)}, op.getSkipIf(),
      copy, [nesterov](OpBuilder &b, Location l, ArrayRef<Value> args) {
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
  if (copySymbol)
    update(copySymbol, updated[2]);
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
  FlatSymbolRefAttr copySymbol = op.getWeightCopyAttr();
  SmallVector<Value> updated = buildUpdate(
      builder, loc, {current(op.getGradAttr())},
      {stepSize, correction2Sqrt, shrink, l2, b1, b1c, b2, b2c, eps},
      {current(op.getParamAttr()), current(op.getExpAvgAttr()),
       current(op.getExpAvgSqAttr())},
      op.getSkipIf(), copySymbol ? current(copySymbol) : Value(),
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
  if (copySymbol)
    update(copySymbol, updated[3]);
}

void StateRewriter::lowerAssign(tr::AssignOp op) {
  Location loc = op.getLoc();
  Value dest = current(op.getBufferAttr());
  Value flag = op.getOnlyIf();
  if (!flag) {
    update(op.getBufferAttr(),
           linalg::CopyOp::create(builder, loc, op.getValue(), dest)
               .getResult(0));
    return;
  }
  update(op.getBufferAttr(),
         buildElementwise(
             builder, loc, {op.getValue()}, {flag}, {dest},
             [](OpBuilder &b, Location l, ArrayRef<Value> args) {
               return SmallVector<Value>{arith::SelectOp::create(
                   b, l, isSet(b, l, args[1]), args[0], args[2])};
             })
             .front());
}

/// g *= inv in each gradient's own generic, then found_inf = the number of
/// non-finite results, summed across gradients into the flag's buffer and
/// clamped to 1. A sum, not a maximum, so that the GPU's split reductions
/// spread one long gradient over many blocks.
void StateRewriter::lowerUnscale(tr::UnscaleCheckFiniteOp op) {
  Location loc = op.getLoc();
  MLIRContext *context = builder.getContext();
  Type f32 = builder.getF32Type();
  Type f64 = builder.getF64Type();
  // GradScaler: inv_scale = scale.double().reciprocal().float().
  Value scale =
      tensor::ExtractOp::create(builder, loc, current(op.getScaleAttr()),
                                ValueRange{});
  Value inv = arith::TruncFOp::create(
      builder, loc, f32,
      arith::DivFOp::create(builder, loc, floatConstant(builder, loc, f64, 1.0),
                            arith::ExtFOp::create(builder, loc, f64, scale)));
  Value found = linalg::FillOp::create(
                    builder, loc, floatConstant(builder, loc, f32, 0.0),
                    current(op.getFoundInfAttr()))
                    .getResult(0);
  for (FlatSymbolRefAttr symbol : gradientSymbols(module)) {
    Value grad = buildElementwise(
                     builder, loc, {}, {inv}, {current(symbol)},
                     [](OpBuilder &b, Location l, ArrayRef<Value> args) {
                       Value g = args[1];
                       Value wide = convertFloat(b, l, g, accumulatorType(
                                                             g.getType()));
                       Value product = arith::MulFOp::create(
                           b, l, wide,
                           convertFloat(b, l, args[0], wide.getType()));
                       return SmallVector<Value>{
                           convertFloat(b, l, product, g.getType())};
                     })
                     .front();
    update(symbol, grad);
    int64_t rank = cast<RankedTensorType>(grad.getType()).getRank();
    AffineMap maps[] = {builder.getMultiDimIdentityMap(rank),
                        AffineMap::get(rank, 0, {}, context)};
    found = linalg::GenericOp::create(
                builder, loc, TypeRange{found.getType()}, ValueRange{grad},
                ValueRange{found}, maps, iteratorTypes(0, rank),
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value bad = arith::SelectOp::create(
                      b, l, isFinite(b, l, args[0]),
                      floatConstant(b, l, f32, 0.0),
                      floatConstant(b, l, f32, 1.0));
                  linalg::YieldOp::create(
                      b, l,
                      arith::AddFOp::create(b, l, args[1], bad).getResult());
                })
                .getResult(0);
  }
  update(op.getFoundInfAttr(),
         buildElementwise(
             builder, loc, {}, {}, {found},
             [](OpBuilder &b, Location l, ArrayRef<Value> args) {
               return SmallVector<Value>{arith::MinimumFOp::create(
                   b, l, args[0], floatConstant(b, l, args[0].getType(), 1.0))};
             })
             .front());
}

/// PyTorch's _amp_update_scale_, as one 0-d generic (one GPU thread).
void StateRewriter::lowerUpdateLossScale(tr::UpdateLossScaleOp op) {
  Location loc = op.getLoc();
  Type f32 = builder.getF32Type();
  double growth = op.getGrowth().convertToDouble();
  double backoff = op.getBackoff().convertToDouble();
  int64_t interval = op.getInterval();
  SmallVector<Value> updated = buildElementwise(
      builder, loc, {current(op.getFoundInfAttr())}, {},
      {current(op.getScaleAttr()), current(op.getGrowthTrackerAttr())},
      [&](OpBuilder &b, Location l, ArrayRef<Value> args) {
        Value found = args[0], scale = args[1], tracker = args[2];
        Type i64 = tracker.getType();
        Value zero = arith::ConstantOp::create(b, l, b.getIntegerAttr(i64, 0));
        Value backedOff = arith::MulFOp::create(
            b, l, scale, floatConstant(b, l, f32, backoff));
        // No overflow: count the successful steps, grow at the interval.
        Value count = arith::AddIOp::create(
            b, l, tracker,
            arith::ConstantOp::create(b, l, b.getIntegerAttr(i64, 1)));
        Value due = arith::CmpIOp::create(
            b, l, arith::CmpIPredicate::eq, count,
            arith::ConstantOp::create(b, l, b.getIntegerAttr(i64, interval)));
        Value grown =
            arith::MulFOp::create(b, l, scale, floatConstant(b, l, f32, growth));
        Value grownScale = arith::SelectOp::create(
            b, l, isFinite(b, l, grown), grown, scale);
        Value okScale = arith::SelectOp::create(b, l, due, grownScale, scale);
        Value okTracker = arith::SelectOp::create(b, l, due, zero, count);
        Value skip = isSet(b, l, found);
        return SmallVector<Value>{
            arith::SelectOp::create(b, l, skip, backedOff, okScale),
            arith::SelectOp::create(b, l, skip, zero, okTracker)};
      });
  update(op.getScaleAttr(), updated[0]);
  update(op.getGrowthTrackerAttr(), updated[1]);
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
