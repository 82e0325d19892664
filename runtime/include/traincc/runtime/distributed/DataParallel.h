//===- DataParallel.h - Keeping replicas in step ----------------*- C++ -*-===//
//
// What data parallelism adds to a step, on the host arena (ModelABI.h):
// * before the run, every replica takes rank 0's whole state arena (the
//   compiled-in weights, --init-from or --resume), as DDP broadcasts the
//   module at construction;
// * between the K micro-steps and apply_step, the gradient accumulators
//   (float32) are summed over the replicas in one buffer and divided by N
//   (on a device with NCCL, in place in device memory: NcclGradients.h):
//   each replica's accumulators hold the gradient of the mean loss of its
//   N-th of the global batch, so their mean is the gradient of the mean
//   loss over the global batch, as one process would compute it;
// * each replica normalises with the statistics of its own slice (DDP
//   semantics) and updates its running statistics from them; before each
//   validation rank 0's are copied to every replica (as DDP's
//   broadcast_buffers leaves them), so that all validate the same model
//   and agree on the epoch's decisions. Rank 0's own trajectory, which it
//   logs, checkpoints and exports, does not depend on when they are
//   copied.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_DISTRIBUTED_DATAPARALLEL_H
#define TRAINCC_RUNTIME_DISTRIBUTED_DATAPARALLEL_H

#include "traincc/runtime/ModelABI.h"
#include "traincc/runtime/distributed/Communicator.h"
#include "traincc/runtime/distributed/NcclGradients.h"
#include "traincc/runtime/exec/StepBackend.h"

#include <vector>

namespace traincc::rt {

class ReplicaSync {
public:
  /// Errors: gradient accumulators that are not float32.
  static Expected<ReplicaSync> create(const traincc_model &model,
                                      Communicator &replicas);

  Communicator &replicas() const { return *replicas_; }

  /// On a device backend, averages gradients in device memory with NCCL
  /// from now on, where every replica can load it (NcclGradients.h);
  /// `note` says why not otherwise.
  Error useDeviceCollectives(StepBackend &backend, double timeoutSeconds,
                             std::string &note);
  /// How gradients are averaged: "in host memory" or "with NCCL ...".
  std::string gradientPath() const;

  /// Averages the backend's gradient accumulators over the replicas: with
  /// NCCL, or in host memory (to the host, all-reduce, back).
  Error averageGradients(StepBackend &backend);
  /// Every replica takes rank 0's arena.
  Error broadcastState(uint8_t *arena);
  /// Every replica takes rank 0's BatchNorm running statistics.
  Error broadcastRunningStatistics(uint8_t *arena);
  /// Fails on every replica unless all passed the same `fingerprint` (a
  /// hash of the model and the settings that must agree).
  Error checkSameRun(uint64_t fingerprint, const std::string &what);

private:
  ReplicaSync(const traincc_model &model, Communicator &replicas)
      : model_(&model), replicas_(&replicas) {}

  const traincc_model *model_;
  Communicator *replicas_;
  std::vector<int32_t> gradients_, runningStats_; // state indices
  std::vector<float> buffer_;
  std::vector<uint8_t> statsBuffer_;
  std::unique_ptr<NcclGradients> nccl_;
};

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_DISTRIBUTED_DATAPARALLEL_H
