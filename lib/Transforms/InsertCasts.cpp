//===- InsertCasts.cpp - mixed precision ----------------------------------===//
//
// Decides the element type every op of @loss and @eval_step computes in
// (the table is in Passes.td and the README) and inserts the conversions
// that make the operands agree. It runs before autodiff so that the
// backward pass inherits the forward's types through the casts' own
// gradient rule.
//
//===----------------------------------------------------------------------===//

#include "traincc/Dialect/Train/IR/TrainOps.h"
#include "traincc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

namespace traincc {
#define GEN_PASS_DEF_INSERTCASTSPASS
#include "traincc/Transforms/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

/// What element type an op computes in.
enum class Placement {
  Low,       // contractions: every float operand in the low type
  F32,       // numerically sensitive: every float operand in f32
  BatchNorm, // f32 arithmetic on the input as it is (an f16/bf16 input is
             // read and the result written in its type), f32 statistics
  Follow,  // the type of its operands (f32 wins a mix with an activation)
  Keep,    // not a computation on floats (state, constants, reads)
};

Placement placementOf(Operation *op) {
  if (isa<train::ConvOp, train::GemmOp, train::MatMulOp>(op))
    return Placement::Low;
  if (isa<train::BNApplyOp, train::BNStatsOp>(op))
    return Placement::BatchNorm;
  if (isa<train::BatchNormOp, train::SoftmaxOp, train::LogSoftmaxOp,
          train::SoftmaxCrossEntropyOp, train::MSEOp, train::ReduceSumOp>(op))
    return Placement::F32;
  if (isa<train::ReadParamOp, train::ConstantOp, train::DropoutMaskOp,
          train::CastOp, func::ReturnOp>(op) ||
      op->getNumResults() == 0)
    return Placement::Keep;
  return Placement::Follow;
}

bool isFloatTensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && isa<FloatType>(type.getElementType());
}

Type elementTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

RankedTensorType withElementType(Type type, Type element) {
  return cast<RankedTensorType>(type).clone(element);
}

/// Values whose type a mixed operation may change freely: parameters,
/// constants and dropout masks, which PyTorch's autocast also converts
/// rather than promote the activation.
bool isWeightLike(Value value) {
  return isa_and_present<train::ReadParamOp, train::ConstantOp,
                         train::DropoutMaskOp>(value.getDefiningOp());
}

class CastInserter {
public:
  CastInserter(ModuleOp module, FloatType low) : module(module), low(low) {}

  void run(func::FuncOp func) {
    converted.clear();
    for (Operation &op : llvm::make_early_inc_range(func.getOps()))
      place(&op);
    // Reads of master weights that only contractions used.
    for (Operation &op : llvm::make_early_inc_range(func.getOps()))
      if (isa<train::ReadParamOp>(op) && op.use_empty())
        op.erase();
  }

private:
  void place(Operation *op) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      auto func = cast<func::FuncOp>(ret->getParentOp());
      for (OpOperand &operand : ret->getOpOperands()) {
        Type declared = func.getResultTypes()[operand.getOperandNumber()];
        if (isFloatTensor(operand.get()))
          operand.set(convert(operand.get(), getElementTypeOrSelf(declared),
                              op));
      }
      return;
    }
    Placement placement = placementOf(op);
    // State updates take the f32 statistics BatchNorm computes; the rest
    // has no float operand to place.
    if (placement == Placement::Keep)
      return;
    SmallVector<OpOperand *> floats;
    for (OpOperand &operand : op->getOpOperands())
      if (isFloatTensor(operand.get()))
        floats.push_back(&operand);
    if (floats.empty())
      return;
    Type inputType = elementTypeOf(floats.front()->get());
    if (placement == Placement::BatchNorm) {
      // The input as it is, so that the backward pass keeps the f16/bf16
      // activation; statistics, scale and bias in f32.
      if (inputType != low && inputType != f32())
        return;
      for (OpOperand *operand : ArrayRef(floats).drop_front())
        operand->set(convert(operand->get(), f32(), op));
      retype(op, inputType);
      return;
    }
    Type target = targetType(placement, floats);
    if (!target)
      return;
    for (OpOperand *operand : floats)
      operand->set(convert(operand->get(), target, op));
    retype(op, target);
  }

  /// The element type `op`'s float operands take.
  Type targetType(Placement placement, ArrayRef<OpOperand *> floats) {
    switch (placement) {
    case Placement::Low:
      return low;
    case Placement::F32:
      return f32();
    case Placement::BatchNorm:
    case Placement::Follow:
      break;
    case Placement::Keep:
      return Type();
    }
    // f64 (gradient checks) is left alone.
    bool anyLow = false, anyActivationF32 = false, anyOther = false;
    for (OpOperand *operand : floats) {
      Type type = elementTypeOf(operand->get());
      if (type == low)
        anyLow = true;
      else if (type == f32())
        anyActivationF32 |= !isWeightLike(operand->get());
      else
        anyOther = true;
    }
    if (anyOther || !anyLow)
      return Type();
    return anyActivationF32 ? f32() : Type(low);
  }

  /// Sets the result types of `op`, whose operands now have `element`
  /// type, from its type inference or, for ops that name their result
  /// type, by keeping the shape.
  void retype(Operation *op, Type element) {
    if (auto infer = dyn_cast<InferTypeOpInterface>(op)) {
      SmallVector<Type> types;
      if (succeeded(infer.inferReturnTypes(
              op->getContext(), op->getLoc(), op->getOperands(),
              op->getAttrDictionary(), op->getPropertiesStorage(),
              op->getRegions(), types))) {
        for (auto [result, type] : llvm::zip(op->getResults(), types))
          result.setType(type);
        return;
      }
    }
    for (Value result : op->getResults())
      if (isFloatTensor(result))
        result.setType(withElementType(result.getType(), element));
  }

  /// `value` in element type `element`: itself, a read of a parameter's
  /// weight copy, or a cast placed after its definition (shared by every
  /// user that needs the same type).
  Value convert(Value value, Type element, Operation *user) {
    if (elementTypeOf(value) == element)
      return value;
    auto key = std::make_pair(value, element);
    if (Value known = converted.lookup(key))
      return known;
    OpBuilder builder(user->getContext());
    if (Operation *def = value.getDefiningOp())
      builder.setInsertionPointAfter(def);
    else
      builder.setInsertionPointToStart(
          cast<BlockArgument>(value).getOwner());
    Type type = withElementType(value.getType(), element);
    Value result;
    auto read = value.getDefiningOp<train::ReadParamOp>();
    if (read && element == low)
      result = train::ReadParamOp::create(builder, read.getLoc(), type,
                                          weightCopyOf(read));
    else
      result = train::CastOp::create(builder, value.getLoc(), type, value);
    converted[key] = result;
    return result;
  }

  /// The `weight_copy` parameter of the parameter `read` reads, declared
  /// after it on first use with the rounded initial value.
  FlatSymbolRefAttr weightCopyOf(train::ReadParamOp read) {
    auto param = module.lookupSymbol<train::ParamOp>(read.getParamAttr());
    std::string name =
        (param.getSymName() + (low.isBF16() ? ".bf16" : ".f16")).str();
    if (!module.lookupSymbol<train::ParamOp>(name)) {
      OpBuilder builder(param);
      builder.setInsertionPointAfter(param);
      RankedTensorType type = withElementType(param.getType(), low);
      ElementsAttr initial;
      if (auto values = dyn_cast_if_present<DenseFPElementsAttr>(
              param.getInitialValueAttr()))
        initial = values.mapValues(low, [&](const APFloat &value) {
          APFloat rounded = value;
          bool losesInfo;
          rounded.convert(low.getFloatSemantics(),
                          APFloat::rmNearestTiesToEven, &losesInfo);
          return rounded.bitcastToAPInt();
        });
      train::ParamOp::create(builder, param.getLoc(), name,
                             train::ParamKind::WeightCopy, type, initial,
                             FlatSymbolRefAttr::get(param.getSymNameAttr()));
    }
    return FlatSymbolRefAttr::get(module.getContext(), name);
  }

  Type f32() { return Float32Type::get(module.getContext()); }

  ModuleOp module;
  FloatType low;
  DenseMap<std::pair<Value, Type>, Value> converted;
};

struct InsertCastsPass
    : public traincc::impl::InsertCastsPassBase<InsertCastsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Builder b(module.getContext());
    FloatType low;
    switch (precision) {
    case Precision::FP32:
      return;
    case Precision::FP16:
      low = b.getF16Type();
      break;
    case Precision::BF16:
      low = b.getBF16Type();
      break;
    }
    CastInserter inserter(module, low);
    for (StringRef name : {"loss", "eval_step"})
      if (auto func = module.lookupSymbol<func::FuncOp>(name))
        inserter.run(func);
  }
};

} // namespace
