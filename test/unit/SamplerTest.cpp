//===- SamplerTest.cpp - Random generator, data order, resume -------------===//
//
// Pinned sequences below come from sampler_reference.py, an independent
// Python implementation of the rules in Sampler.h: if these tests pass, the
// C++ order equals the documented one on this platform, and the rules use
// only integer arithmetic and IEEE double operations, so it equals it
// everywhere.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "traincc/runtime/data/Sampler.h"
#include "traincc/runtime/support/Random.h"

#include <algorithm>
#include <set>

using namespace traincc::rt;
using namespace traincc::rt::test;
using ::testing::HasSubstr;

namespace {

/// n samples [n,1] holding their index, labelled by `labelOf`.
Dataset dataset(int64_t n, int64_t classes,
                const std::vector<int64_t> &labelList = {}) {
  FloatTensor x;
  x.shape = {n, 1};
  x.source = "x.npy";
  Int64Tensor y;
  y.shape = {n};
  y.source = "y.npy";
  for (int64_t i = 0; i < n; ++i) {
    x.data.push_back(float(i));
    y.data.push_back(labelList.empty() ? i % classes : labelList[i]);
  }
  Expected<Dataset> data = Dataset::withLabels(x, y, classes);
  EXPECT_TRUE(bool(data)) << errorOf(data);
  return data.take();
}

TrainSampler sampler(const Dataset &data, const SamplerOptions &options) {
  Expected<TrainSampler> s = TrainSampler::create(data, options);
  EXPECT_TRUE(bool(s)) << errorOf(s);
  return s.take();
}

/// The sample indices of the remaining batches of the current epoch.
std::vector<int64_t> drainEpoch(TrainSampler &s) {
  std::vector<int64_t> seen;
  MicroBatch batch = s.makeBatch();
  while (true) {
    Expected<bool> more = s.next(batch);
    EXPECT_TRUE(bool(more)) << errorOf(more);
    if (!more || !*more)
      break;
    EXPECT_EQ(batch.realRows, s.microBatch());
    for (int64_t row = 0; row < batch.rows; ++row) {
      EXPECT_EQ(batch.inputs[row], float(batch.indices[row]));
      seen.push_back(batch.indices[row]);
    }
  }
  return seen;
}

} // namespace

// Tests SplitMix64 against the reference outputs for seed 1234567.
TEST(RandomTest, SplitMix64MatchesReference) {
  SplitMix64 rng(1234567);
  std::vector<uint64_t> got;
  for (int i = 0; i < 5; ++i)
    got.push_back(rng.next());
  EXPECT_EQ(got, (std::vector<uint64_t>{
                     6457827717110365317ull, 3203168211198807973ull,
                     9817491932198370423ull, 4593380528125082431ull,
                     16408922859458223821ull}));
  EXPECT_EQ(SplitMix64::nthOutput(1234567, 3), 9817491932198370423ull);
}

// Tests bounded draws: pinned values, range and rough uniformity.
TEST(RandomTest, BelowIsUnbiasedAndPinned) {
  SplitMix64 rng(99);
  std::vector<uint64_t> got;
  for (int i = 0; i < 8; ++i)
    got.push_back(rng.below(10));
  EXPECT_EQ(got, (std::vector<uint64_t>{2, 0, 8, 1, 1, 2, 6, 7}));
  EXPECT_EQ(SplitMix64(5).below(uint64_t(1) << 63), 3567305580077179309ull);
  EXPECT_EQ(SplitMix64(5).below(1), 0u);
  std::vector<int> counts(7, 0);
  SplitMix64 many(2024);
  for (int i = 0; i < 70000; ++i)
    ++counts[many.below(7)];
  for (int c : counts)
    EXPECT_NEAR(c, 10000, 500);
  for (int i = 0; i < 1000; ++i) {
    double u = many.unit();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

// Tests the shuffled order: pinned, a permutation, fresh per epoch.
TEST(SamplerTest, ShufflesReproducibly) {
  Dataset data = dataset(10, 3);
  SamplerOptions options;
  options.microBatch = 5;
  options.seed = 42;
  TrainSampler s = sampler(data, options);
  EXPECT_EQ(s.batchesPerEpoch(), 2);
  EXPECT_EQ(s.epochOrder(),
            (std::vector<int64_t>{1, 7, 2, 5, 6, 4, 0, 9, 8, 3}));
  EXPECT_EQ(drainEpoch(s), s.epochOrder());
  EXPECT_TRUE(s.epochFinished());
  s.startNextEpoch();
  EXPECT_EQ(s.epoch(), 1u);
  EXPECT_EQ(s.epochOrder(),
            (std::vector<int64_t>{0, 8, 6, 5, 1, 3, 7, 4, 2, 9}));
  options.seed = 43;
  EXPECT_NE(sampler(data, options).epochOrder(),
            (std::vector<int64_t>{1, 7, 2, 5, 6, 4, 0, 9, 8, 3}));
  // Large N: still a permutation.
  Dataset big = dataset(1000, 10);
  TrainSampler b = sampler(big, options);
  std::vector<int64_t> sorted = b.epochOrder();
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 1000; ++i)
    ASSERT_EQ(sorted[i], i);
}

// Tests --no-shuffle and that the last partial micro-batch is dropped.
TEST(SamplerTest, SequentialDropsPartialBatch) {
  Dataset data = dataset(10, 3);
  SamplerOptions options;
  options.microBatch = 3;
  options.shuffle = false;
  TrainSampler s = sampler(data, options);
  EXPECT_EQ(s.batchesPerEpoch(), 3);
  EXPECT_EQ(drainEpoch(s), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  MicroBatch batch = s.makeBatch();
  Expected<bool> more = s.next(batch);
  ASSERT_OK(more);
  EXPECT_FALSE(*more);
  s.startNextEpoch();
  EXPECT_EQ(drainEpoch(s), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
}

// Tests class-weighted sampling with replacement: pinned, zero weights never
// drawn, frequencies following weight * count.
TEST(SamplerTest, SamplesByClassWeight) {
  Dataset data = dataset(10, 3, {0, 1, 2, 0, 1, 2, 0, 1, 2, 2});
  SamplerOptions options;
  options.microBatch = 5;
  options.seed = 7;
  options.classWeights = {1.0, 0.0, 3.0};
  TrainSampler s = sampler(data, options);
  EXPECT_EQ(s.state().mode, SamplingMode::Weighted);
  EXPECT_EQ(s.epochOrder(),
            (std::vector<int64_t>{8, 8, 2, 9, 2, 5, 0, 9, 5, 9}));

  // Class 0: weight 1, 300 samples; class 2: weight 3, 100 samples; so both
  // carry half of the mass. Class 1 has weight 0.
  std::vector<int64_t> labelList;
  for (int64_t i = 0; i < 1000; ++i)
    labelList.push_back(i < 300 ? 0 : i < 900 ? 1 : 2);
  Dataset skewed = dataset(1000, 3, labelList);
  TrainSampler w = sampler(skewed, options);
  int64_t perClass[3] = {0, 0, 0};
  for (int epoch = 0; epoch < 20; ++epoch) {
    for (int64_t index : w.epochOrder())
      ++perClass[skewed.label(index)];
    w.startNextEpoch();
  }
  EXPECT_EQ(perClass[1], 0);
  EXPECT_NEAR(double(perClass[0]) / 20000, 0.5, 0.02);
  EXPECT_NEAR(double(perClass[2]) / 20000, 0.5, 0.02);
}

// Tests every sampler configuration error.
TEST(SamplerTest, RejectsBadOptions) {
  Dataset data = dataset(10, 3);
  SamplerOptions options;
  options.microBatch = 0;
  EXPECT_THAT(errorOf(TrainSampler::create(data, options)),
              HasSubstr("micro-batch size must be at least 1"));
  options.microBatch = 11;
  EXPECT_THAT(errorOf(TrainSampler::create(data, options)),
              HasSubstr("x.npy: 10 training samples are fewer than one "
                        "micro-batch of 11"));
  options.microBatch = 2;
  options.classWeights = {1, 2};
  EXPECT_THAT(errorOf(TrainSampler::create(data, options)),
              HasSubstr("2 weights for 3 classes"));
  options.classWeights = {1, -2, 1};
  EXPECT_THAT(errorOf(TrainSampler::create(data, options)),
              HasSubstr("weight -2 of class 1 must be finite"));
  options.classWeights = {0, 0, 0};
  EXPECT_THAT(errorOf(TrainSampler::create(data, options)),
              HasSubstr("no class has both a positive weight and samples"));
  // A weighted class without samples does not count.
  options.classWeights = {0, 0, 1};
  Dataset noClass2 = dataset(4, 3, {0, 1, 0, 1});
  EXPECT_THAT(errorOf(TrainSampler::create(noClass2, options)),
              HasSubstr("no class has both"));
  FloatTensor x;
  x.shape = {4, 1};
  x.data = {1, 2, 3, 4};
  x.source = "p.npy";
  Expected<Dataset> unlabeled = Dataset::inputsOnly(x);
  ASSERT_OK(unlabeled);
  EXPECT_THAT(errorOf(TrainSampler::create(*unlabeled, options)),
              HasSubstr("--class-weights needs class labels, p.npy has none"));
}

// Tests the --class-weights parser.
TEST(SamplerTest, ParsesClassWeights) {
  Expected<std::vector<double>> w = parseClassWeights("1,0.5,2e-1,0");
  ASSERT_OK(w);
  EXPECT_EQ(*w, (std::vector<double>{1, 0.5, 0.2, 0}));
  for (const char *bad : {"", "1,,2", "a", "1 ,2", "1,", "0x10"})
    EXPECT_THAT(errorOf(parseClassWeights(bad)), HasSubstr("is not a number"))
        << bad;
  EXPECT_THAT(
      errorOf(parseClassWeights("1,-1")),
      HasSubstr("weight -1 of class 1 must be finite and non-negative"));
  EXPECT_THAT(errorOf(parseClassWeights("inf")), HasSubstr("must be finite"));
  EXPECT_THAT(errorOf(parseClassWeights("nan")), HasSubstr("must be finite"));
}

// Tests that a sampler restored mid-epoch from serialised state continues
// exactly like the uninterrupted one, across the epoch boundary too.
TEST(SamplerTest, ResumesBitIdentically) {
  for (bool weighted : {false, true}) {
    Dataset data = dataset(23, 4);
    SamplerOptions options;
    options.microBatch = 4;
    options.seed = 2024;
    if (weighted)
      options.classWeights = {1, 2, 0.5, 1};
    TrainSampler original = sampler(data, options);
    drainEpoch(original);
    original.startNextEpoch();
    MicroBatch batch = original.makeBatch();
    ASSERT_OK(original.next(batch));
    ASSERT_OK(original.next(batch));
    std::vector<unsigned char> saved = original.state().serialize();
    ASSERT_EQ(int64_t(saved.size()), LoaderState::kSerializedSize);

    std::vector<int64_t> expected = drainEpoch(original);
    original.startNextEpoch();
    std::vector<int64_t> expectedNext = drainEpoch(original);

    options.seed = 1; // The checkpoint's seed wins.
    TrainSampler resumed = sampler(data, options);
    Expected<LoaderState> state =
        LoaderState::deserialize(saved.data(), int64_t(saved.size()));
    ASSERT_OK(state);
    EXPECT_NO_ERROR(resumed.restore(*state));
    EXPECT_EQ(resumed.epoch(), 1u);
    EXPECT_EQ(resumed.nextBatchIndex(), 2);
    EXPECT_EQ(drainEpoch(resumed), expected) << "weighted=" << weighted;
    resumed.startNextEpoch();
    EXPECT_EQ(drainEpoch(resumed), expectedNext) << "weighted=" << weighted;
  }
}

// Tests that foreign or damaged loader states are refused.
TEST(SamplerTest, RejectsMismatchedState) {
  Dataset data = dataset(20, 4);
  SamplerOptions options;
  options.microBatch = 4;
  TrainSampler s = sampler(data, options);
  LoaderState good = s.state();

  LoaderState other = good;
  other.datasetSize = 21;
  EXPECT_THAT(errorOf(s.restore(other)),
              HasSubstr("written for 21 training samples, this run has 20"));
  other = good;
  other.microBatch = 5;
  EXPECT_THAT(errorOf(s.restore(other)), HasSubstr("micro-batch 5"));
  other = good;
  other.mode = SamplingMode::Sequential;
  EXPECT_THAT(errorOf(s.restore(other)),
              HasSubstr("written with no shuffling, this run uses shuffling"));
  other = good;
  other.weightsHash = 1;
  EXPECT_THAT(errorOf(s.restore(other)), HasSubstr("other --class-weights"));
  other = good;
  other.nextBatch = 6;
  EXPECT_THAT(errorOf(s.restore(other)), HasSubstr("micro-batch 6 of 5"));
  other = good;
  other.epochRngState ^= 1;
  EXPECT_THAT(errorOf(s.restore(other)), HasSubstr("generator state"));

  std::vector<unsigned char> bytes = good.serialize();
  EXPECT_THAT(errorOf(LoaderState::deserialize(bytes.data(), 71)),
              HasSubstr("expected 72 bytes, got 71"));
  bytes[0] = 'X';
  EXPECT_THAT(errorOf(LoaderState::deserialize(bytes.data(), 72)),
              HasSubstr("bad magic"));
  bytes = good.serialize();
  bytes[8] = 9;
  EXPECT_THAT(errorOf(LoaderState::deserialize(bytes.data(), 72)),
              HasSubstr("unknown sampling mode 9"));
  EXPECT_THAT(errorOf(LoaderState::deserialize(nullptr, 72)),
              HasSubstr("expected 72 bytes"));
}
