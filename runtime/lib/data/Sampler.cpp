//===- Sampler.cpp - Training data order and micro-batches ----------------===//

#include "traincc/runtime/data/Sampler.h"

#include "support/ByteOrder.h"
#include "traincc/runtime/support/Random.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace traincc::rt {

namespace {

constexpr char kStateMagic[8] = {'T', 'C', 'C', 'L', 'D', 'R', '0', '1'};

uint64_t hashWeights(const std::vector<double> &weights) {
  uint64_t hash = 0xCBF29CE484222325ull; // FNV-1a 64
  for (double w : weights) {
    uint64_t bits;
    std::memcpy(&bits, &w, sizeof(bits));
    for (int i = 0; i < 8; ++i) {
      hash ^= (bits >> (8 * i)) & 0xFF;
      hash *= 0x100000001B3ull;
    }
  }
  return hash;
}

const char *modeName(SamplingMode mode) {
  switch (mode) {
  case SamplingMode::Sequential:
    return "no shuffling";
  case SamplingMode::Shuffle:
    return "shuffling";
  case SamplingMode::Weighted:
    return "class-weighted sampling";
  }
  return "unknown sampling";
}

} // namespace

//===----------------------------------------------------------------------===//
// LoaderState
//===----------------------------------------------------------------------===//

std::vector<unsigned char> LoaderState::serialize() const {
  std::vector<unsigned char> out(kSerializedSize);
  std::memcpy(out.data(), kStateMagic, 8);
  uint64_t fields[8] = {uint64_t(mode), seed,        epoch,      nextBatch,
                        epochRngState,  datasetSize, microBatch, weightsHash};
  for (int i = 0; i < 8; ++i)
    storeLittleEndian64(out.data() + 8 + 8 * i, fields[i]);
  return out;
}

Expected<LoaderState> LoaderState::deserialize(const unsigned char *data,
                                               int64_t size) {
  if (size != kSerializedSize || !data)
    return makeError("data loader state: expected ", kSerializedSize,
                     " bytes, got ", size);
  if (std::memcmp(data, kStateMagic, 8) != 0)
    return makeError("data loader state: bad magic");
  uint64_t fields[8];
  for (int i = 0; i < 8; ++i)
    fields[i] = loadLittleEndian64(data + 8 + 8 * i);
  if (fields[0] > uint64_t(SamplingMode::Weighted))
    return makeError("data loader state: unknown sampling mode ", fields[0]);
  LoaderState state;
  state.mode = SamplingMode(fields[0]);
  state.seed = fields[1];
  state.epoch = fields[2];
  state.nextBatch = fields[3];
  state.epochRngState = fields[4];
  state.datasetSize = fields[5];
  state.microBatch = fields[6];
  state.weightsHash = fields[7];
  return state;
}

//===----------------------------------------------------------------------===//
// Class weights
//===----------------------------------------------------------------------===//

Expected<std::vector<double>> parseClassWeights(std::string_view text) {
  std::vector<double> weights;
  size_t pos = 0;
  while (true) {
    size_t comma = text.find(',', pos);
    std::string_view item = text.substr(pos, comma == std::string_view::npos
                                                 ? std::string_view::npos
                                                 : comma - pos);
    double value = 0;
    const char *end = item.data() + item.size();
    std::from_chars_result result = std::from_chars(item.data(), end, value);
    if (item.empty() || result.ec != std::errc() || result.ptr != end)
      return makeError("--class-weights: '", item,
                       "' is not a number (expected W0,W1,...)");
    if (!std::isfinite(value) || value < 0)
      return makeError("--class-weights: weight ", value, " of class ",
                       int64_t(weights.size()),
                       " must be finite and non-negative");
    weights.push_back(value);
    if (comma == std::string_view::npos)
      break;
    pos = comma + 1;
  }
  return weights;
}

//===----------------------------------------------------------------------===//
// TrainSampler
//===----------------------------------------------------------------------===//

Expected<TrainSampler> TrainSampler::create(const Dataset &data,
                                            const SamplerOptions &options) {
  if (options.microBatch < 1)
    return makeError("micro-batch size must be at least 1, got ",
                     options.microBatch);
  if (options.replicas < 1 || options.replica < 0 ||
      options.replica >= options.replicas)
    return makeError("internal error: replica ", options.replica, " of ",
                     options.replicas);
  const int64_t globalBatch = options.microBatch * options.replicas;
  if (data.size() < globalBatch)
    return makeError(data.inputSource(), ": ", data.size(),
                     " training samples are fewer than one micro-batch of ",
                     globalBatch,
                     options.replicas > 1
                         ? strCat(" (", options.replicas, " replicas x ",
                                  options.microBatch, ")")
                         : std::string());
  TrainSampler sampler(data);
  sampler.microBatch_ = options.microBatch;
  sampler.batchesPerEpoch_ = data.size() / globalBatch;
  sampler.replicas_ = uint64_t(options.replicas);
  sampler.replica_ = uint64_t(options.replica);
  sampler.state_.seed = options.seed;
  sampler.state_.datasetSize = uint64_t(data.size());
  sampler.state_.microBatch = uint64_t(globalBatch);
  sampler.state_.mode =
      options.shuffle ? SamplingMode::Shuffle : SamplingMode::Sequential;

  if (!options.classWeights.empty()) {
    if (data.targetKind() != TargetKind::ClassLabels)
      return makeError("--class-weights needs class labels, ",
                       data.inputSource(), " has none");
    const std::vector<double> &weights = options.classWeights;
    if (int64_t(weights.size()) != data.numClasses())
      return makeError("--class-weights: ", int64_t(weights.size()),
                       " weights for ", data.numClasses(), " classes");
    sampler.classMembers_.assign(weights.size(), {});
    for (int64_t i = 0; i < data.size(); ++i)
      sampler.classMembers_[size_t(data.label(i))].push_back(i);
    double total = 0;
    for (size_t c = 0; c < weights.size(); ++c) {
      if (!std::isfinite(weights[c]) || weights[c] < 0)
        return makeError("--class-weights: weight ", weights[c], " of class ",
                         int64_t(c), " must be finite and non-negative");
      total += weights[c] * double(sampler.classMembers_[c].size());
      sampler.classMassPrefix_.push_back(total);
    }
    if (!(total > 0) || !std::isfinite(total))
      return makeError("--class-weights: no class has both a positive "
                       "weight and samples");
    sampler.classWeights_ = weights;
    sampler.state_.mode = SamplingMode::Weighted;
    sampler.state_.weightsHash = hashWeights(weights);
  }
  if (options.augmentation.enabled()) {
    Expected<ImageAugmenter> augmenter = ImageAugmenter::create(
        options.augmentation, options.imageShape, options.normalization);
    if (!augmenter)
      return augmenter.takeError();
    if (augmenter->sampleElements() != data.sampleElements())
      return makeError("--augment: images of ", augmenter->sampleElements(),
                       " values, but ", data.inputSource(), " has samples of ",
                       data.sampleElements());
    sampler.scratch_.assign(size_t(augmenter->sampleElements()), 0.f);
    sampler.augmenter_ = augmenter.take();
  }
  sampler.prefetch_ = options.prefetch;
  sampler.state_.epochRngState = SplitMix64::nthOutput(options.seed, 1);
  sampler.buildEpochOrder();
  return sampler;
}

void TrainSampler::buildEpochOrder() {
  int64_t n = data_.size();
  order_.resize(size_t(n));
  SplitMix64 rng(state_.epochRngState);
  switch (state_.mode) {
  case SamplingMode::Sequential:
  case SamplingMode::Shuffle:
    for (int64_t i = 0; i < n; ++i)
      order_[size_t(i)] = i;
    if (state_.mode == SamplingMode::Shuffle)
      for (int64_t i = n - 1; i >= 1; --i)
        std::swap(order_[size_t(i)],
                  order_[size_t(rng.below(uint64_t(i) + 1))]);
    break;
  case SamplingMode::Weighted: {
    double total = classMassPrefix_.back();
    size_t lastWithMass = 0;
    for (size_t c = 0; c < classMassPrefix_.size(); ++c)
      if (classWeights_[c] > 0 && !classMembers_[c].empty())
        lastWithMass = c;
    for (int64_t i = 0; i < n; ++i) {
      double u = rng.unit() * total;
      // First class whose running sum exceeds u; zero-mass classes repeat
      // the previous sum and are never chosen. Rounding can at most push u
      // to `total`, which goes to the last class with mass.
      size_t c = 0;
      while (c < lastWithMass && !(u < classMassPrefix_[c]))
        ++c;
      const std::vector<int64_t> &members = classMembers_[c];
      order_[size_t(i)] = members[size_t(rng.below(members.size()))];
    }
    break;
  }
  }
}

Expected<bool> TrainSampler::next(MicroBatch &batch) {
  if (epochFinished())
    return false;
  const uint64_t current = sliceOf(state_.nextBatch);
  if (prefetcher_ && prefetcher_->holds(state_.seed, state_.epoch, current)) {
    if (Error err = prefetcher_->take(batch))
      return err;
  } else {
    if (prefetcher_)
      prefetcher_->cancel();
    const int64_t *indices = order_.data() + int64_t(current) * microBatch_;
    if (Error err = prepareTrainingBatch(
            data_, augmenter_ ? &*augmenter_ : nullptr, state_.seed, indices,
            microBatch_, state_.epoch, current * uint64_t(microBatch_), batch,
            scratch_))
      return err;
  }
  ++state_.nextBatch;
  // The next micro-batch of this epoch is prepared while the caller runs
  // this one; startNextEpoch() starts on the first one of the next epoch.
  if (prefetch_ && !epochFinished()) {
    if (!prefetcher_) {
      prefetcher_ = BatchPrefetcher::start(data_, augmenter_, microBatch_);
      prefetch_ = prefetcher_ != nullptr;
    }
    if (prefetcher_)
      prefetcher_->submit(order_.data() + sliceOf(state_.nextBatch) *
                                              uint64_t(microBatch_),
                          microBatch_, state_.seed, state_.epoch,
                          sliceOf(state_.nextBatch));
  }
  return true;
}

void TrainSampler::startNextEpoch() {
  if (prefetcher_)
    prefetcher_->cancel();
  ++state_.epoch;
  state_.nextBatch = 0;
  state_.epochRngState = SplitMix64::nthOutput(state_.seed, state_.epoch + 1);
  buildEpochOrder();
  // The loop validates and checkpoints before it asks for this batch.
  if (prefetcher_)
    prefetcher_->submit(order_.data() + sliceOf(0) * uint64_t(microBatch_),
                        microBatch_, state_.seed, state_.epoch, sliceOf(0));
}

Error TrainSampler::restore(const LoaderState &saved) {
  const LoaderState &now = state_;
  if (saved.datasetSize != now.datasetSize)
    return makeError("resume: the checkpoint was written for ",
                     saved.datasetSize, " training samples, this run has ",
                     now.datasetSize);
  if (saved.microBatch != now.microBatch)
    return makeError("resume: the checkpoint was written with micro-batch ",
                     saved.microBatch, ", this run uses ", now.microBatch,
                     replicas_ > 1 ? strCat(" (", replicas_, " replicas x ",
                                            microBatch_, ")")
                                   : std::string());
  if (saved.mode != now.mode)
    return makeError("resume: the checkpoint was written with ",
                     modeName(saved.mode), ", this run uses ",
                     modeName(now.mode));
  if (saved.weightsHash != now.weightsHash)
    return makeError("resume: the checkpoint was written with other "
                     "--class-weights");
  if (saved.nextBatch > uint64_t(batchesPerEpoch_))
    return makeError("resume: data loader state is corrupt (micro-batch ",
                     saved.nextBatch, " of ", batchesPerEpoch_, ")");
  if (saved.epoch == UINT64_MAX ||
      saved.epochRngState != SplitMix64::nthOutput(saved.seed, saved.epoch + 1))
    return makeError("resume: data loader state is corrupt (its generator "
                     "state does not belong to seed ",
                     saved.seed, ", epoch ", saved.epoch, ")");
  // The checkpoint's seed is taken over (TrainingRun::resume refuses a run
  // with another --seed): resuming continues the data order exactly.
  if (prefetcher_)
    prefetcher_->cancel();
  state_ = saved;
  buildEpochOrder();
  return Error::success();
}

} // namespace traincc::rt
