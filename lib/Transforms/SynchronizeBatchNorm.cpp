//===- SynchronizeBatchNorm.cpp - traincc --sync-bn -----------------------===//
//
// Marks rather than rewrites: what a synchronized statistic is depends on
// the replicas, which only the trainer knows, so the collectives appear at
// lowering (ConvertTrainToLinalg: calls into the runtime), and until then
// the Train ops keep their shape and their gradient rule.
//
//===----------------------------------------------------------------------===//

#include "traincc/Dialect/Train/IR/TrainOps.h"
#include "traincc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace traincc {
#define GEN_PASS_DEF_SYNCHRONIZEBATCHNORMPASS
#include "traincc/Transforms/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

struct SynchronizeBatchNormPass
    : public traincc::impl::SynchronizeBatchNormPassBase<
          SynchronizeBatchNormPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto step = module.lookupSymbol<func::FuncOp>("micro_step");
    if (!step) {
      module.emitError("--sync-bn: no @micro_step (run after autodiff)");
      return signalPassFailure();
    }
    // ExplicitTrainingMode's correction for the biased convention counts
    // one replica's values.
    auto convention =
        module->getAttrOfType<StringAttr>("train.bn_running_variance");
    if (convention && convention.getValue() == "biased") {
      module.emitError("--sync-bn: this model's BatchNorm keeps a biased "
                       "running variance (its producer's convention), which "
                       "synchronised statistics do not support");
      return signalPassFailure();
    }
    // The runtime averages float32 vectors (the statistics of f32, f16 and
    // bf16 activations).
    WalkResult walk = step.walk([](Operation *op) {
      if (auto stats = dyn_cast<train::BNStatsOp>(op)) {
        if (!stats.getMean().getType().getElementType().isF32()) {
          stats.emitError("--sync-bn: synchronised statistics must be f32, "
                          "got ")
              << stats.getMean().getType();
          return WalkResult::interrupt();
        }
        stats.setSynchronized(true);
      } else if (auto backward = dyn_cast<train::BatchNormBackwardOp>(op)) {
        backward.setSynchronized(true);
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    // The unbiased variance counts every replica's values.
    module.walk([](train::BNRunningUpdateOp update) {
      OpBuilder builder(update);
      Location loc = update.getLoc();
      Value replicas = train::ReplicaCountOp::create(
          builder, loc, RankedTensorType::get({}, builder.getF32Type()));
      Value batches = update.getBatches();
      if (batches) {
        if (batches.getType() != replicas.getType())
          replicas = train::CastOp::create(builder, loc, batches.getType(),
                                           replicas);
        batches = train::MulOp::create(builder, loc, batches, replicas);
      } else {
        batches = replicas;
      }
      update.getBatchesMutable().assign(batches);
    });
  }
};

} // namespace
