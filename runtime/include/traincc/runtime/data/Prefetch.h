//===- Prefetch.h - Preparing the next micro-batch ahead --------*- C++ -*-===//
//
// While the model runs micro-batch i, a background thread gathers (and
// augments) micro-batch i+1 into a buffer of its own; the sampler copies it
// into the caller's batch when asked for it (a sequential copy, far cheaper
// than the random-access gather and augmentation it hides), so the caller's
// buffers never change address under the step functions.
//
// Both paths, prefetched and synchronous, run prepareTrainingBatch(), a pure
// function of the job, so prefetching never changes results. The thread is
// owned by the BatchPrefetcher: its destructor lets a job in progress finish
// (one micro-batch) and joins, so errors and early exits neither hang nor
// leak it.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_DATA_PREFETCH_H
#define TRAINCC_RUNTIME_DATA_PREFETCH_H

#include "traincc/runtime/data/Augment.h"
#include "traincc/runtime/data/Dataset.h"

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace traincc::rt {

/// Fills `batch` with the samples indices[0..count) and augments them (when
/// `augmenter` is set), row r being position firstPosition + r of `epoch`.
/// `scratch` holds one sample for the augmenter.
Error prepareTrainingBatch(const Dataset &data,
                           const ImageAugmenter *augmenter, uint64_t seed,
                           const int64_t *indices, int64_t count,
                           uint64_t epoch, uint64_t firstPosition,
                           MicroBatch &batch, std::vector<float> &scratch);

/// One background thread preparing one micro-batch at a time.
class BatchPrefetcher {
public:
  /// The thread starts here; nullptr when it cannot be created (the caller
  /// then prepares batches itself).
  static std::unique_ptr<BatchPrefetcher>
  start(Dataset data, std::optional<ImageAugmenter> augmenter, int64_t rows);
  ~BatchPrefetcher();
  BatchPrefetcher(const BatchPrefetcher &) = delete;
  BatchPrefetcher &operator=(const BatchPrefetcher &) = delete;

  /// Starts preparing micro-batch `batchIndex` of `epoch` from the `count`
  /// sample indices (copied); drops a result nobody took.
  void submit(const int64_t *indices, int64_t count, uint64_t seed,
              uint64_t epoch, uint64_t batchIndex);
  /// True when the last job submitted and not yet taken is this one.
  bool holds(uint64_t seed, uint64_t epoch, uint64_t batchIndex) const;
  /// Waits for the job and copies its batch into `out` (made for the same
  /// dataset and row count).
  Error take(MicroBatch &out);
  /// Waits for a job in progress, if any, and forgets it.
  void cancel();

private:
  BatchPrefetcher(Dataset data, std::optional<ImageAugmenter> augmenter,
                  int64_t rows);
  void workerLoop();

  enum class Phase { Idle, Pending, Running, Done };

  const Dataset data_;
  const std::optional<ImageAugmenter> augmenter_;
  MicroBatch buffer_;          // written by the worker while Running
  std::vector<float> scratch_; // the worker's
  std::vector<int64_t> indices_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  Phase phase_ = Phase::Idle; // guarded by mutex_
  bool stopping_ = false;     // guarded by mutex_
  // The job, guarded by mutex_ (the worker reads it while Running, when
  // nobody else writes it).
  int64_t count_ = 0;
  uint64_t seed_ = 0, epoch_ = 0, batchIndex_ = 0;
  Error result_;
  std::thread worker_; // last: started once everything above exists
};

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_DATA_PREFETCH_H
