//===- SyncBatchNorm.h - BatchNorm statistics over the replicas -*- C++ -*-===//
//
// A trainer compiled with `traincc --sync-bn` computes its BatchNorm
// statistics through two runtime functions (ModelABI.h): the CPU
// micro_step passes each per-channel vector (the slice's mean, its mean
// squared deviation from the global mean, the backward pass's sums of dy
// and dy * (x - mean)) to traincc_replica_mean, and counts values for the
// running variance with traincc_replica_count. While an
// ActiveBatchNormReplicas is alive (the trainer's --sync-bn in a
// data-parallel run) they average over its replicas, which all hold equal
// slices, so the statistics are the global batch's (SyncBatchNorm);
// otherwise they change nothing and the count is 1 (per-replica BatchNorm,
// DDP's default). The GPU steps do the same through their launch plans'
// collectives (ReplicaSync::synchronizeBatchNorm, GpuExecutor.h).
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_DISTRIBUTED_SYNCBATCHNORM_H
#define TRAINCC_RUNTIME_DISTRIBUTED_SYNCBATCHNORM_H

#include "traincc/runtime/distributed/Communicator.h"

namespace traincc::rt {

/// Routes the compiled steps' BatchNorm collectives to `replicas` while
/// alive. The C ABI has no context argument, so this is one process-wide
/// pointer, like ActiveThreadPool's. A collective that fails reports the
/// error and ends every replica (Communicator::abort): the step functions
/// cannot return errors.
class ActiveBatchNormReplicas {
public:
  explicit ActiveBatchNormReplicas(Communicator &replicas);
  ~ActiveBatchNormReplicas();
  ActiveBatchNormReplicas(const ActiveBatchNormReplicas &) = delete;
  ActiveBatchNormReplicas &operator=(const ActiveBatchNormReplicas &) = delete;

private:
  Communicator *previous_;
};

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_DISTRIBUTED_SYNCBATCHNORM_H
