//===- SyncBatchNorm.cpp - The compiled steps' BatchNorm collectives ------===//

#include "traincc/runtime/distributed/SyncBatchNorm.h"

#include "traincc/runtime/ModelABI.h"

#include <atomic>
#include <cstdio>

namespace traincc::rt {

namespace {
std::atomic<Communicator *> gBatchNormReplicas{nullptr};
} // namespace

ActiveBatchNormReplicas::ActiveBatchNormReplicas(Communicator &replicas)
    : previous_(gBatchNormReplicas.exchange(&replicas)) {}

ActiveBatchNormReplicas::~ActiveBatchNormReplicas() {
  gBatchNormReplicas.store(previous_);
}

} // namespace traincc::rt

extern "C" void traincc_replica_mean(float *data, int64_t count) {
  using namespace traincc::rt;
  Communicator *replicas = gBatchNormReplicas.load(std::memory_order_acquire);
  if (!replicas || count <= 0)
    return;
  if (Error err = replicas->allReduceSum(
          data, size_t(count), "BatchNorm statistics all-reduce (--sync-bn)")) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: replica %d of %d: %s\n", replicas->rank(),
                 replicas->size(), err.message().c_str());
    std::fflush(stderr);
    replicas->abort(1);
  }
  const float scale = 1.0f / float(replicas->size());
  for (int64_t i = 0; i < count; ++i)
    data[i] *= scale;
}

extern "C" float traincc_replica_count(void) {
  traincc::rt::Communicator *replicas =
      traincc::rt::gBatchNormReplicas.load(std::memory_order_acquire);
  return replicas ? float(replicas->size()) : 1.0f;
}
