//===- DataParallel.cpp - Keeping the replicas of a model in step ---------===//

#include "traincc/runtime/distributed/DataParallel.h"
#include "traincc/runtime/exec/CudaDriver.h"
#include "traincc/runtime/exec/StepBackend.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>

namespace traincc::rt {

namespace {

size_t floatsOf(const traincc_state_tensor &t) {
  return size_t(t.bytes / sizeof(float));
}

/// "25 MiB", "1.5 KiB": a bucket's size for the start line.
std::string formatBucket(size_t floats) {
  double bytes = double(floats * sizeof(float));
  const char *unit = "bytes";
  for (const char *next : {"KiB", "MiB", "GiB"}) {
    if (bytes < 1024)
      break;
    bytes /= 1024;
    unit = next;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g %s", bytes, unit);
  return text;
}

} // namespace

Error allReduceInBuckets(Communicator &replicas, float *data, size_t count,
                         size_t bucketFloats,
                         const std::function<void(size_t, size_t)> &fill,
                         const std::function<void(size_t, size_t)> &drain,
                         const char *what) {
  struct Bucket {
    Communicator::Request request;
    size_t begin, end;
  };
  std::deque<Bucket> inFlight;
  bucketFloats = std::max<size_t>(bucketFloats, 1);
  for (size_t begin = 0; begin < count; begin += bucketFloats) {
    size_t end = std::min(count, begin + bucketFloats);
    fill(begin, end);
    Expected<Communicator::Request> request =
        replicas.startAllReduceSum(data + begin, end - begin, what);
    if (!request)
      return request.takeError();
    inFlight.push_back({*request, begin, end});
    // Drain what has finished meanwhile, without waiting.
    while (!inFlight.empty()) {
      Expected<bool> done = replicas.testRequest(inFlight.front().request);
      if (!done)
        return done.takeError();
      if (!*done)
        break;
      drain(inFlight.front().begin, inFlight.front().end);
      inFlight.pop_front();
    }
  }
  for (; !inFlight.empty(); inFlight.pop_front()) {
    if (Error err = replicas.waitRequest(inFlight.front().request))
      return err;
    drain(inFlight.front().begin, inFlight.front().end);
  }
  return Error::success();
}

Expected<ReplicaSync> ReplicaSync::create(const traincc_model &model,
                                          Communicator &replicas,
                                          double bucketMiB) {
  ReplicaSync sync(model, replicas);
  sync.bucketFloats_ = std::max<size_t>(
      1, size_t(bucketMiB * 1024 * 1024 / double(sizeof(float))));
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
  sync.buffer_.reserve(total);
  sync.totalFloats_ = total;
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

void ReplicaSync::synchronizeBatchNorm(StepBackend &backend) {
  static constexpr const char *kWhat =
      "BatchNorm statistics all-reduce (--sync-bn)";
  int replicas = replicas_->size();
  DeviceArena device = backend.deviceArena();
  if (!device.state)
    return; // the CPU steps call traincc_replica_mean
  if (NcclGradients *nccl = nccl_.get()) {
    backend.setReplicaMean(
        [nccl](unsigned long long data, size_t count) {
          return nccl->mean(data, count, kWhat);
        },
        replicas);
    return;
  }
  Communicator *communicator = replicas_;
  auto values = std::make_shared<std::vector<float>>();
  backend.setReplicaMean(
      [device, communicator, values](unsigned long long data,
                                     size_t count) -> Error {
        const CudaDriver &d = *device.driver;
        auto stream = static_cast<cuda::CUstream>(device.stream);
        values->resize(count);
        // Into pageable memory: returns once the kernels before it and
        // the copy are done.
        if (Error err = d.check(d.cuMemcpyDtoHAsync(values->data(), data,
                                                     count * sizeof(float),
                                                     stream),
                                "cuMemcpyDtoHAsync_v2(BatchNorm statistics)"))
          return err;
        if (Error err = d.check(d.cuStreamSynchronize(stream),
                                "cuStreamSynchronize"))
          return err;
        if (Error err = communicator->allReduceSum(values->data(), count,
                                                   kWhat))
          return err;
        const float scale = 1.0f / float(communicator->size());
        for (float &value : *values)
          value *= scale;
        // From pageable memory: staged before the call returns.
        return d.check(d.cuMemcpyHtoDAsync(data, values->data(),
                                           count * sizeof(float), stream),
                       "cuMemcpyHtoDAsync_v2(BatchNorm statistics)");
      },
      replicas);
}

std::string ReplicaSync::gradientPath() const {
  if (nccl_)
    return strCat("with ", nccl_->description());
  size_t buckets = (totalFloats_ + bucketFloats_ - 1) / bucketFloats_;
  return strCat("in host memory (", buckets, buckets == 1 ? " bucket" : " buckets",
                " of up to ", formatBucket(bucketFloats_), ")");
}

Error ReplicaSync::averageGradients(StepBackend &backend) {
  if (nccl_)
    return nccl_->average();
  if (Error err = backend.syncGradientsToHost())
    return err;
  uint8_t *arena = backend.memory().state.data();
  // The accumulators, one after another, as one flat vector: `visit`
  // calls body(tensor's floats, flat position) for the pieces of
  // [begin, end).
  auto visit = [&](size_t begin, size_t end, auto body) {
    size_t at = 0;
    for (int32_t s : gradients_) {
      const traincc_state_tensor &t = model_->state[s];
      size_t size = floatsOf(t);
      size_t from = std::max(begin, at), to = std::min(end, at + size);
      if (from < to)
        body(reinterpret_cast<float *>(arena + t.offset) + (from - at), from,
             to - from);
      at += size;
      if (at >= end)
        break;
    }
  };
  const size_t total = totalFloats_;
  buffer_.resize(total);
  const float scale = 1.0f / float(replicas_->size());
  if (Error err = allReduceInBuckets(
          *replicas_, buffer_.data(), total, bucketFloats_,
          [&](size_t begin, size_t end) {
            visit(begin, end, [&](float *g, size_t at, size_t n) {
              std::copy(g, g + n, buffer_.data() + at);
            });
          },
          [&](size_t begin, size_t end) {
            visit(begin, end, [&](float *g, size_t at, size_t n) {
              for (size_t i = 0; i < n; ++i)
                g[i] = buffer_[at + i] * scale;
            });
          },
          "gradient all-reduce"))
    return err;
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
