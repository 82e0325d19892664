//===- DataParallel.cpp - Keeping the replicas of a model in step ---------===//

#include "traincc/runtime/distributed/DataParallel.h"
#include "traincc/runtime/exec/StepBackend.h"

#include <algorithm>
#include <cstring>

namespace traincc::rt {

namespace {

size_t floatsOf(const traincc_state_tensor &t) {
  return size_t(t.bytes / sizeof(float));
}

} // namespace

Expected<ReplicaSync> ReplicaSync::create(const traincc_model &model,
                                          Communicator &replicas) {
  ReplicaSync sync(model, replicas);
  size_t total = 0;
  for (int32_t s = 0; s < model.num_state; ++s) {
    const traincc_state_tensor &t = model.state[s];
    if (t.kind == TRAINCC_STATE_RUNNING_MEAN ||
        t.kind == TRAINCC_STATE_RUNNING_VAR)
      sync.runningStats_.push_back(s);
    if (t.kind != TRAINCC_STATE_GRADIENT)
      continue;
    if (t.dtype != TRAINCC_DTYPE_F32)
      return makeError("data-parallel training: gradient accumulator '", t.name,
                       "' is not float32");
    sync.gradients_.push_back(s);
    total += floatsOf(t);
  }
  sync.buffer_.reserve(total + 16);
  return sync;
}

Error ReplicaSync::useDeviceCollectives(StepBackend &backend,
                                        double timeoutSeconds,
                                        std::string &note) {
  DeviceArena device = backend.deviceArena();
  if (!device.state)
    return Error::success();
  // Runs of adjacent gradient tensors, one all-reduce each.
  NcclGradients::Ranges ranges = gradientByteRanges(*model_);
  Expected<std::unique_ptr<NcclGradients>> nccl = NcclGradients::open(
      *replicas_, device, std::move(ranges), timeoutSeconds, note);
  if (!nccl)
    return nccl.takeError();
  nccl_ = nccl.take();
  return Error::success();
}

std::string ReplicaSync::gradientPath() const {
  return nccl_ ? strCat("with ", nccl_->description()) : "in host memory";
}

Error ReplicaSync::averageGradients(StepBackend &backend) {
  if (nccl_)
    return nccl_->average();
  if (Error err = backend.syncGradientsToHost())
    return err;
  uint8_t *arena = backend.memory().state.data();
  buffer_.clear();
  for (int32_t s : gradients_) {
    const traincc_state_tensor &t = model_->state[s];
    const float *g = reinterpret_cast<const float *>(arena + t.offset);
    buffer_.insert(buffer_.end(), g, g + floatsOf(t));
  }
  if (Error err = replicas_->allReduceSum(buffer_.data(), buffer_.size(),
                                          "gradient all-reduce"))
    return err;
  const float scale = 1.0f / float(replicas_->size());
  size_t at = 0;
  for (int32_t s : gradients_) {
    const traincc_state_tensor &t = model_->state[s];
    float *g = reinterpret_cast<float *>(arena + t.offset);
    for (size_t i = 0, e = floatsOf(t); i < e; ++i)
      g[i] = buffer_[at + i] * scale;
    at += floatsOf(t);
  }
  return backend.syncGradientsToDevice();
}

Error ReplicaSync::broadcastState(uint8_t *arena) {
  return replicas_->broadcast(arena, size_t(model_->state_bytes), 0,
                              "broadcast of rank 0's model state");
}

Error ReplicaSync::broadcastRunningStatistics(uint8_t *arena) {
  if (runningStats_.empty())
    return Error::success();
  statsBuffer_.clear();
  for (int32_t s : runningStats_) {
    const traincc_state_tensor &t = model_->state[s];
    statsBuffer_.insert(statsBuffer_.end(), arena + t.offset,
                        arena + t.offset + t.bytes);
  }
  if (Error err = replicas_->broadcast(statsBuffer_.data(), statsBuffer_.size(),
                                       0, "broadcast of BatchNorm statistics"))
    return err;
  size_t at = 0;
  for (int32_t s : runningStats_) {
    const traincc_state_tensor &t = model_->state[s];
    std::memcpy(arena + t.offset, statsBuffer_.data() + at, t.bytes);
    at += t.bytes;
  }
  return Error::success();
}

Error ReplicaSync::checkSameRun(uint64_t fingerprint, const std::string &what) {
  uint64_t root = fingerprint;
  if (Error err = replicas_->broadcast(&root, sizeof(root), 0,
                                       "start-up consistency check"))
    return err;
  float differing = root != fingerprint ? 1.0f : 0.0f;
  if (Error err =
          replicas_->allReduceSum(&differing, 1, "start-up consistency check"))
    return err;
  if (differing > 0)
    return makeError(int64_t(differing), " of ", replicas_->size(),
                     " replicas differ from rank 0 in ", what,
                     "; every replica must run the same trainer with the "
                     "same options");
  return Error::success();
}

} // namespace traincc::rt
