//===- DataParallel.h - Keeping replicas in step ----------------*- C++ -*-===//
//
// What data parallelism adds to a step, on the host arena (ModelABI.h):
// * before the run, every replica takes rank 0's whole state arena (the
//   compiled-in weights, --init-from or --resume), as DDP broadcasts the
//   module at construction;
// * between the K micro-steps and apply_step, the gradient accumulators
//   (float32) are summed over the replicas and divided by N (on a device
//   with NCCL, in place in device memory: NcclGradients.h). In host
//   memory they go in fixed-size buckets (--bucket-mb, 25 MiB like DDP's
//   bucket_cap_mb): each bucket's all-reduce starts as soon as it is
//   packed, and is unpacked as soon as it is summed, while later buckets
//   are packed and in flight (MPI_Iallreduce; the TCP ring sums each at
//   once). The backward pass itself cannot overlap them: the compiled
//   micro_step adds every gradient in one call and reports none early.
//   each replica's accumulators hold the gradient of the mean loss of its
//   N-th of the global batch, so their mean is the gradient of the mean
//   loss over the global batch, as one process would compute it;
// * with --sync-bn, the steps' BatchNorm statistics are the global
//   batch's (SyncBatchNorm.h; on a device, the launch plans' collectives:
//   synchronizeBatchNorm below); otherwise
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

#include <functional>
#include <vector>

namespace traincc::rt {

/// DDP's default bucket_cap_mb.
constexpr double kDefaultBucketMiB = 25;

/// Sums `count` floats at `data` over the replicas in buckets of at most
/// `bucketFloats`: fill(begin, end) writes a bucket's range, which is then
/// started at once; drain(begin, end) receives each summed range in order,
/// as soon as it is done, while later buckets are filled and in flight.
Error allReduceInBuckets(Communicator &replicas, float *data, size_t count,
                         size_t bucketFloats,
                         const std::function<void(size_t, size_t)> &fill,
                         const std::function<void(size_t, size_t)> &drain,
                         const char *what);

class ReplicaSync {
public:
  /// Errors: gradient accumulators that are not float32.
  static Expected<ReplicaSync> create(const traincc_model &model,
                                      Communicator &replicas,
                                      double bucketMiB = kDefaultBucketMiB);

  Communicator &replicas() const { return *replicas_; }

  /// On a device backend, averages gradients in device memory with NCCL
  /// from now on, where every replica can load it (NcclGradients.h);
  /// `note` says why not otherwise.
  Error useDeviceCollectives(StepBackend &backend, double timeoutSeconds,
                             std::string &note);
  /// --sync-bn on a device backend: its plans' replica collectives average
  /// the BatchNorm statistics over the replicas, with NCCL in device
  /// memory when useDeviceCollectives() found it, else through the host
  /// (to the host, all-reduce, back). Call after useDeviceCollectives().
  void synchronizeBatchNorm(StepBackend &backend);
  /// How gradients are averaged: "in host memory (N buckets of M MiB)" or
  /// "with NCCL ...".
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
  size_t bucketFloats_ = 0, totalFloats_ = 0;
  std::vector<uint8_t> statsBuffer_;
  std::unique_ptr<NcclGradients> nccl_;
};

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_DISTRIBUTED_DATAPARALLEL_H
