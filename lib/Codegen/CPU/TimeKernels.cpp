//===- TimeKernels.cpp - timer calls around each kernel of a step ---------===//
//
// Why per kernel and not per outlined function: the report's numbering of
// kernels is the one users read (`traincc --report`), and its FLOPs and
// bytes are known exactly only here, on the bufferized linalg ops; later
// passes pack, tile and outline them into functions that no longer say
// which convolution gradient they compute.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/CPU/Passes.h"
#include "traincc/Codegen/Common/KernelCost.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace traincc {
#define GEN_PASS_DEF_TIMEKERNELSPASS
#include "traincc/Codegen/CPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kSteps[] = {"micro_step", "apply_step",
                                          "eval_step"};
constexpr llvm::StringLiteral kTimerStart = "traincc_kernel_timer_start";
constexpr llvm::StringLiteral kTimerStop = "traincc_kernel_timer_stop";

/// The declaration of runtime function `name`, added once.
func::FuncOp declareRuntimeFunction(ModuleOp module, StringRef name,
                                    TypeRange arguments) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto function = func::FuncOp::create(
      builder, module.getLoc(), name,
      builder.getFunctionType(arguments, TypeRange{}));
  function.setPrivate();
  return function;
}

struct TimeKernelsPass
    : public traincc::impl::TimeKernelsPassBase<TimeKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Builder types(module.getContext());
    Type i32 = types.getI32Type(), i64 = types.getI64Type();
    func::FuncOp start = declareRuntimeFunction(module, kTimerStart, {});
    func::FuncOp stop =
        declareRuntimeFunction(module, kTimerStop, {i32, i32, i32, i64, i64});
    for (auto [stepIndex, name] : llvm::enumerate(kSteps)) {
      auto step = module.lookupSymbol<func::FuncOp>(name);
      if (!step || step.isExternal())
        continue;
      // The kernels first: inserting calls while walking would visit them.
      SmallVector<Operation *> kernels;
      step.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (!traincc::isLoopNestKernel(op))
          return WalkResult::advance();
        kernels.push_back(op);
        return WalkResult::skip();
      });
      for (auto [index, kernel] : llvm::enumerate(kernels)) {
        traincc::KernelCost cost = traincc::loopNestCost(kernel);
        Location loc = kernel->getLoc();
        OpBuilder b(kernel);
        func::CallOp::create(b, loc, start, ValueRange{});
        b.setInsertionPointAfter(kernel);
        auto constant = [&](Type type, int64_t value) -> Value {
          return arith::ConstantOp::create(b, loc,
                                           b.getIntegerAttr(type, value));
        };
        func::CallOp::create(
            b, loc, stop,
            ValueRange{constant(i32, stepIndex), constant(i32, index),
                       constant(i32, traincc::kernelClassOf(kernel)),
                       constant(i64, cost.flops), constant(i64, cost.bytes)});
      }
    }
  }
};

} // namespace
