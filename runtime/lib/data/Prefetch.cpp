//===- Prefetch.cpp - Preparing the next training micro-batch ahead -------===//

#include "traincc/runtime/data/Prefetch.h"

#include <algorithm>
#include <system_error>

namespace traincc::rt {

Error prepareTrainingBatch(const Dataset &data,
                           const ImageAugmenter *augmenter, uint64_t seed,
                           const int64_t *indices, int64_t count,
                           uint64_t epoch, uint64_t firstPosition,
                           MicroBatch &batch, std::vector<float> &scratch) {
  if (Error err = data.fillBatch(indices, count, batch))
    return err;
  if (augmenter)
    augmenter->augmentBatch(batch, seed, epoch, firstPosition, scratch);
  return Error::success();
}

BatchPrefetcher::BatchPrefetcher(Dataset data,
                                 std::optional<ImageAugmenter> augmenter,
                                 int64_t rows)
    : data_(std::move(data)), augmenter_(std::move(augmenter)),
      buffer_(data_.makeBatch(rows)) {
  indices_.assign(size_t(rows), 0);
  if (augmenter_)
    scratch_.assign(size_t(augmenter_->sampleElements()), 0.f);
}

std::unique_ptr<BatchPrefetcher>
BatchPrefetcher::start(Dataset data, std::optional<ImageAugmenter> augmenter,
                       int64_t rows) {
  std::unique_ptr<BatchPrefetcher> prefetcher(
      new BatchPrefetcher(std::move(data), std::move(augmenter), rows));
  try {
    BatchPrefetcher *p = prefetcher.get();
    prefetcher->worker_ = std::thread([p] { p->workerLoop(); });
  } catch (const std::system_error &) {
    return nullptr; // no thread to spare: the sampler works synchronously
  }
  return prefetcher;
}

BatchPrefetcher::~BatchPrefetcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (worker_.joinable())
    worker_.join();
}

void BatchPrefetcher::workerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || phase_ == Phase::Pending; });
    if (stopping_)
      return;
    phase_ = Phase::Running;
    lock.unlock();
    Error result = prepareTrainingBatch(
        data_, augmenter_ ? &*augmenter_ : nullptr, seed_, indices_.data(),
        count_, epoch_, batchIndex_ * uint64_t(buffer_.rows), buffer_,
        scratch_);
    lock.lock();
    result_ = std::move(result);
    phase_ = Phase::Done;
    changed_.notify_all();
  }
}

void BatchPrefetcher::submit(const int64_t *indices, int64_t count,
                             uint64_t seed, uint64_t epoch,
                             uint64_t batchIndex) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return phase_ != Phase::Running; });
    count_ = std::min<int64_t>(count, int64_t(indices_.size()));
    std::copy(indices, indices + count_, indices_.begin());
    seed_ = seed;
    epoch_ = epoch;
    batchIndex_ = batchIndex;
    result_ = Error::success();
    phase_ = Phase::Pending;
  }
  changed_.notify_all();
}

bool BatchPrefetcher::holds(uint64_t seed, uint64_t epoch,
                            uint64_t batchIndex) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return phase_ != Phase::Idle && seed_ == seed && epoch_ == epoch &&
         batchIndex_ == batchIndex;
}

Error BatchPrefetcher::take(MicroBatch &out) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (phase_ == Phase::Idle)
    return makeError("internal error: no prefetched micro-batch to take");
  changed_.wait(lock, [&] { return phase_ == Phase::Done; });
  phase_ = Phase::Idle;
  if (result_)
    return std::move(result_);
  if (out.inputs.size() != buffer_.inputs.size() ||
      out.inputIds.size() != buffer_.inputIds.size() ||
      out.labels.size() != buffer_.labels.size() ||
      out.targets.size() != buffer_.targets.size() ||
      out.indices.size() != buffer_.indices.size())
    return makeError("internal error: batch buffers do not match ",
                     data_.inputSource());
  std::copy(buffer_.inputs.begin(), buffer_.inputs.end(), out.inputs.begin());
  std::copy(buffer_.inputIds.begin(), buffer_.inputIds.end(),
            out.inputIds.begin());
  std::copy(buffer_.labels.begin(), buffer_.labels.end(), out.labels.begin());
  std::copy(buffer_.targets.begin(), buffer_.targets.end(),
            out.targets.begin());
  std::copy(buffer_.indices.begin(), buffer_.indices.end(),
            out.indices.begin());
  out.realRows = buffer_.realRows;
  return Error::success();
}

void BatchPrefetcher::cancel() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (phase_ == Phase::Pending) {
    phase_ = Phase::Idle;
    return;
  }
  changed_.wait(lock, [&] { return phase_ != Phase::Running; });
  phase_ = Phase::Idle;
}

} // namespace traincc::rt
