//===- PoolBeforeRelu.cpp - max pooling moved before its ReLU -------------===//
//
// max_pool(relu(x)) == relu(max_pool(x)) for every window, and the
// gradients agree too (Passes.td has the argument), so the ReLU can run on
// the pooled tensor. Done on the forward graph, before autodiff, the
// rewrite shapes the backward pass as well: the pooling's input is then the
// BatchNorm's output, which the CPU fusion computes inside the window pass,
// and the ReLU mask is taken on the pooled gradient.
//
//===----------------------------------------------------------------------===//

#include "traincc/Dialect/Train/IR/TrainOps.h"
#include "traincc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace traincc {
#define GEN_PASS_DEF_POOLBEFORERELUPASS
#include "traincc/Transforms/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

/// Rewrites `pool` of a ReLU that it alone reads into the ReLU of a pooling
/// of the ReLU's input; returns whether it did.
bool poolBeforeRelu(train::MaxPoolOp pool) {
  auto relu = pool.getInput().getDefiningOp<train::ReluOp>();
  if (!relu || !relu.getResult().hasOneUse())
    return false;
  OpBuilder builder(pool);
  auto pooled = train::MaxPoolOp::create(
      builder, pool.getLoc(), pool.getType(), relu.getInput(),
      pool.getKernelShapeAttr(), pool.getStridesAttr(), pool.getPadsAttr(),
      pool.getDilationsAttr(), pool.getCeilModeAttr());
  auto activated =
      train::ReluOp::create(builder, relu.getLoc(), pooled.getResult());
  pool.replaceAllUsesWith(activated.getResult());
  pool.erase();
  relu.erase();
  return true;
}

struct PoolBeforeReluPass
    : public traincc::impl::PoolBeforeReluPassBase<PoolBeforeReluPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<train::MaxPoolOp> poolings;
    getOperation().walk(
        [&](train::MaxPoolOp pool) { poolings.push_back(pool); });
    for (train::MaxPoolOp pool : poolings)
      poolBeforeRelu(pool);
  }
};

} // namespace
