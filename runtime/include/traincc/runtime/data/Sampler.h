//===- Sampler.h - Training data order and micro-batches --------*- C++ -*-===//
//
// The order in which training samples are visited, defined exactly so that
// a run is bit-identical on every platform and after a resume:
//
// * Epoch e (counted from 0) draws from its own SplitMix64 generator whose
//   state starts at SplitMix64::nthOutput(seed, e + 1), i.e. the (e+1)-th
//   output of a SplitMix64 seeded with --seed. Any epoch's order can thus be
//   rebuilt from (seed, epoch) alone.
// * Shuffle (default): Fisher-Yates over 0..N-1 starting from the identity:
//     for i = N-1 down to 1: j = below(i + 1); swap(order[i], order[j])
// * --no-shuffle: 0..N-1 every epoch.
// * --class-weights W0,W1,..: N draws with replacement per epoch (PyTorch's
//   WeightedRandomSampler with num_samples = N), sample i having weight
//   W[label i]. Each draw picks a class c with probability
//   W[c]*count[c] / sum_k W[k]*count[k] (u = unit() against the running sums
//   of W[k]*count[k] in double), then a sample of that class uniformly
//   (below(count[c]), samples of a class in file order).
// * The epoch's order is cut into floor(N / B) micro-batches of B samples;
//   the last partial micro-batch is dropped (shapes are static).
// * --augment transforms each sample after it is gathered, as a pure
//   function of (seed, epoch, position in the epoch) (Augment.h).
// * Unless SamplerOptions::prefetch is off, the next micro-batch of the
//   epoch is prepared on a background thread while the caller uses the
//   current one (Prefetch.h); results are identical either way. state()
//   always describes what the caller has been handed, never the prefetch.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_DATA_SAMPLER_H
#define TRAINCC_RUNTIME_DATA_SAMPLER_H

#include "traincc/runtime/data/Augment.h"
#include "traincc/runtime/data/Dataset.h"
#include "traincc/runtime/data/Prefetch.h"
#include "traincc/runtime/support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace traincc::rt {

enum class SamplingMode : uint32_t {
  Sequential = 0,
  Shuffle = 1,
  Weighted = 2
};

struct SamplerOptions {
  int64_t microBatch = 1;
  bool shuffle = true;
  uint64_t seed = 0;
  /// One weight per class (finite, >= 0, not all zero); empty = unweighted.
  /// Weighted sampling needs class labels and ignores `shuffle`.
  std::vector<double> classWeights;
  /// --augment, applied to images of the model's per-sample input shape
  /// `imageShape`, padding with the value a raw 0 has after `normalization`.
  Augmentation augmentation;
  std::vector<int64_t> imageShape;
  std::optional<Normalization> normalization;
  /// Prepare the next micro-batch on a background thread (--no-prefetch
  /// turns it off; results are the same).
  bool prefetch = true;
  /// Data parallelism (distributed/DataParallel.h): the epoch's order is
  /// cut into global micro-batches of `replicas` x microBatch samples, and
  /// this sampler hands out slice `replica` of each, so that the replicas
  /// together see the order of one process with the global micro-batch.
  int64_t replicas = 1, replica = 0;
};

/// Where the training data stream is: everything a checkpoint needs to
/// continue with the same samples in the same order.
struct LoaderState {
  SamplingMode mode = SamplingMode::Shuffle;
  uint64_t seed = 0;
  uint64_t epoch = 0;         // current epoch, from 0
  uint64_t nextBatch = 0;     // next micro-batch within the epoch
  uint64_t epochRngState = 0; // generator state the epoch's order came from
  uint64_t datasetSize = 0;
  uint64_t microBatch = 0;    // the global one: replicas x micro-batch
  uint64_t weightsHash = 0; // FNV-1a of the class weights' bit patterns

  static constexpr int64_t kSerializedSize = 72;
  /// Fixed little-endian layout: "TCCLDR01", then the fields above as
  /// 8-byte integers (mode widened), in this order.
  std::vector<unsigned char> serialize() const;
  static Expected<LoaderState> deserialize(const unsigned char *data,
                                           int64_t size);
};

/// Parses "--class-weights 1,0.5,2" (locale independent).
Expected<std::vector<double>> parseClassWeights(std::string_view text);

/// Hands out the training micro-batches epoch after epoch.
class TrainSampler {
public:
  /// Errors: micro-batch < 1, fewer samples than one micro-batch, weights
  /// without labels, a weight count other than the class count, negative or
  /// non-finite weights, no class with both weight and samples, or an
  /// augmentation the input shape does not allow.
  static Expected<TrainSampler> create(const Dataset &data,
                                       const SamplerOptions &options);

  int64_t microBatch() const { return microBatch_; }
  int64_t batchesPerEpoch() const { return batchesPerEpoch_; }
  uint64_t epoch() const { return state_.epoch; }
  int64_t nextBatchIndex() const { return int64_t(state_.nextBatch); }
  bool epochFinished() const { return nextBatchIndex() >= batchesPerEpoch_; }
  /// The sample indices of the current epoch, in visiting order.
  const std::vector<int64_t> &epochOrder() const { return order_; }

  /// A batch buffer of microBatch() rows.
  MicroBatch makeBatch() const { return data_.makeBatch(microBatch_); }
  /// Fills the next micro-batch of the epoch; false (batch untouched) once
  /// the epoch is exhausted.
  Expected<bool> next(MicroBatch &batch);
  /// Moves to the start of the next epoch.
  void startNextEpoch();

  LoaderState state() const { return state_; }
  /// Continues from a saved state; errors when it belongs to another
  /// dataset size, micro-batch, sampling mode or set of class weights.
  Error restore(const LoaderState &saved);

private:
  TrainSampler(Dataset data) : data_(std::move(data)) {}
  void buildEpochOrder();
  /// Where micro-batch `k` of the epoch starts in its order, in units of
  /// micro-batches: this replica's slice of global micro-batch k.
  uint64_t sliceOf(uint64_t k) const { return k * replicas_ + replica_; }

  Dataset data_;
  int64_t microBatch_ = 1;
  int64_t batchesPerEpoch_ = 0;
  uint64_t replicas_ = 1, replica_ = 0;
  std::vector<double> classWeights_;
  /// Weighted mode: samples of each class in file order, and the running
  /// sums of weight * count per class.
  std::vector<std::vector<int64_t>> classMembers_;
  std::vector<double> classMassPrefix_;
  LoaderState state_;
  std::vector<int64_t> order_;
  std::optional<ImageAugmenter> augmenter_;
  std::vector<float> scratch_; // one sample, for synchronous augmentation
  bool prefetch_ = true;
  /// Started with the first prefetch; holds the next micro-batch.
  std::unique_ptr<BatchPrefetcher> prefetcher_;
};

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_DATA_SAMPLER_H
