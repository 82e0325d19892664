//===- AugmentTest.cpp - --normalize, --augment and prefetching -----------===//
//
// Pinned draws come from augment_reference.py, an independent Python
// implementation of the rules in Augment.h. Pixel results are checked
// against the torchvision definition spelled out literally (pad, cut the
// window, mirror), not against the index arithmetic the runtime uses.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "traincc/runtime/data/Augment.h"
#include "traincc/runtime/data/Prefetch.h"
#include "traincc/runtime/data/Sampler.h"

#include <set>

using namespace traincc::rt;
using namespace traincc::rt::test;
using ::testing::HasSubstr;

namespace {

/// torchvision's RandomCrop(padding=p) then RandomHorizontalFlip, written
/// out: a zero-padded copy (pad value per channel), the window at (top,
/// left), then the mirror.
std::vector<float> reference(const std::vector<float> &image, int64_t c,
                             int64_t h, int64_t w, int64_t p,
                             const AugmentDraw &d,
                             const std::vector<float> &pad) {
  int64_t ph = h + 2 * p, pw = w + 2 * p;
  std::vector<float> padded(size_t(c * ph * pw));
  for (int64_t k = 0; k < c; ++k)
    for (int64_t y = 0; y < ph; ++y)
      for (int64_t x = 0; x < pw; ++x) {
        bool inside = y >= p && y < p + h && x >= p && x < p + w;
        padded[size_t((k * ph + y) * pw + x)] =
            inside ? image[size_t((k * h + y - p) * w + x - p)]
                   : pad[size_t(k)];
      }
  std::vector<float> out(size_t(c * h * w));
  for (int64_t k = 0; k < c; ++k)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        out[size_t((k * h + y) * w + x)] =
            padded[size_t((k * ph + y + d.top) * pw + x + d.left)];
  if (d.flip)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w / 2; ++x)
          std::swap(out[size_t((k * h + y) * w + x)],
                    out[size_t((k * h + y) * w + w - 1 - x)]);
  return out;
}

ImageAugmenter augmenter(const Augmentation &a,
                         const std::vector<int64_t> &shape,
                         const std::optional<Normalization> &n = {}) {
  Expected<ImageAugmenter> result = ImageAugmenter::create(a, shape, n);
  EXPECT_TRUE(bool(result)) << errorOf(result);
  return result.take();
}

/// n images [n,c,h,w] of distinct values, labelled i % 3.
Dataset images(int64_t n, int64_t c, int64_t h, int64_t w) {
  FloatTensor x;
  x.shape = {n, c, h, w};
  x.source = "img.npy";
  for (int64_t i = 0; i < n * c * h * w; ++i)
    x.data.push_back(float(i % 1000) + 0.5f);
  Int64Tensor y;
  y.shape = {n};
  y.source = "lbl.npy";
  for (int64_t i = 0; i < n; ++i)
    y.data.push_back(i % 3);
  Expected<Dataset> data = Dataset::withLabels(x, y, 3);
  EXPECT_TRUE(bool(data)) << errorOf(data);
  return data.take();
}

/// Every micro-batch's inputs of `epochs` epochs.
std::vector<std::vector<float>> run(TrainSampler &s, int epochs) {
  std::vector<std::vector<float>> batches;
  MicroBatch batch = s.makeBatch();
  for (int e = 0; e < epochs; ++e) {
    while (true) {
      Expected<bool> more = s.next(batch);
      EXPECT_TRUE(bool(more)) << errorOf(more);
      if (!more || !*more)
        break;
      batches.push_back(batch.inputs);
    }
    s.startNextEpoch();
  }
  return batches;
}

} // namespace

// Tests the --normalize parser: one pair, per-channel lists, and errors.
TEST(AugmentTest, ParsesNormalization) {
  Expected<Normalization> one = parseNormalization("0.1307,0.3081");
  ASSERT_OK(one);
  EXPECT_EQ(one->mean, (std::vector<float>{0.1307f}));
  EXPECT_EQ(one->std, (std::vector<float>{0.3081f}));
  Expected<Normalization> three = parseNormalization("0.4,0.5,0.6/1,2,4");
  ASSERT_OK(three);
  EXPECT_EQ(three->mean, (std::vector<float>{0.4f, 0.5f, 0.6f}));
  EXPECT_EQ(three->std, (std::vector<float>{1, 2, 4}));
  ASSERT_OK(parseNormalization("0.5/0.25"));
  EXPECT_THAT(errorOf(parseNormalization("0.5")),
              HasSubstr("expected MEAN,STD (two numbers)"));
  EXPECT_THAT(errorOf(parseNormalization("1,2,3")),
              HasSubstr("expected MEAN,STD"));
  EXPECT_THAT(errorOf(parseNormalization("1,2/3")),
              HasSubstr("2 means but 1 standard deviations"));
  EXPECT_THAT(errorOf(parseNormalization("0.5,0")),
              HasSubstr("standard deviation 0 must be positive"));
  EXPECT_THAT(errorOf(parseNormalization("0.5,-1")),
              HasSubstr("must be positive"));
  EXPECT_THAT(errorOf(parseNormalization("0.5,1e-50")),
              HasSubstr("must be positive")); // zero in float32
  for (const char *bad : {"", "a,1", "1,,2", "1,nan", "1,inf", "/", "1/"})
    EXPECT_THAT(errorOf(parseNormalization(bad)),
                HasSubstr("is not a finite number"))
        << bad;
}

// Tests that normalisation is float32 (x - mean) / std per channel along
// axis 1 of the model's input, whatever shape the data file has.
TEST(AugmentTest, NormalizesPerChannel) {
  FloatTensor x;
  x.shape = {2, 12}; // data [N,12] for a model input [N,3,2,2]
  for (int i = 0; i < 24; ++i)
    x.data.push_back(0.1f * float(i));
  FloatTensor original = x;
  Normalization n{{0.1f, 0.2f, 0.3f}, {0.7f, 0.5f, 0.3f}};
  EXPECT_NO_ERROR(normalizeInputs(x, n, {3, 2, 2}));
  for (int i = 0; i < 24; ++i) {
    int c = (i % 12) / 4;
    float expected = (original.data[i] - n.mean[c]) / n.std[c];
    EXPECT_EQ(x.data[i], expected) << i; // bit for bit
  }
  FloatTensor y = original;
  Normalization single{{0.5f}, {0.25f}};
  EXPECT_NO_ERROR(normalizeInputs(y, single, {3, 2, 2}));
  EXPECT_EQ(y.data[5], (original.data[5] - 0.5f) / 0.25f);
  EXPECT_THAT(errorOf(normalizeInputs(y, n, {1, 28, 28})),
              HasSubstr("3 per-channel values, but the model's input "
                        "[N,1,28,28] has 1 channels"));
  EXPECT_THAT(errorOf(normalizeInputs(y, n, {})),
              HasSubstr("the model's input [N] has 1 channels"));
}

// Tests the --augment parser.
TEST(AugmentTest, ParsesAugmentation) {
  Expected<Augmentation> both = parseAugmentation("hflip,crop");
  ASSERT_OK(both);
  EXPECT_TRUE(both->hflip);
  EXPECT_EQ(both->cropPadding, 4);
  Expected<Augmentation> crop = parseAugmentation("crop:2");
  ASSERT_OK(crop);
  EXPECT_FALSE(crop->hflip);
  EXPECT_EQ(crop->cropPadding, 2);
  EXPECT_THAT(errorOf(parseAugmentation("rotate")),
              HasSubstr("unknown augmentation 'rotate' (expected hflip, "
                        "crop or crop:P)"));
  EXPECT_THAT(errorOf(parseAugmentation("")),
              HasSubstr("unknown augmentation ''"));
  EXPECT_THAT(errorOf(parseAugmentation("hflip,hflip")),
              HasSubstr("hflip is given twice"));
  for (const char *bad : {"crop:", "crop:0", "crop:-1", "crop:x", "crop:5000"})
    EXPECT_THAT(errorOf(parseAugmentation(bad)),
                HasSubstr("needs a padding P between 1 and 4096"))
        << bad;
}

// Tests that the draws are the documented pure function of (seed, epoch,
// position): pinned against augment_reference.py, balanced, and covering
// every offset.
TEST(AugmentTest, DrawsArePinnedAndBalanced) {
  ImageAugmenter a = augmenter({true, 4}, {1, 8, 8});
  struct Pin {
    uint64_t seed, epoch, position;
    bool flip;
    int64_t top, left;
  };
  const Pin pins[] = {{0, 0, 0, false, 0, 0},
                      {0, 0, 1, false, 0, 7},
                      {0, 1, 0, false, 8, 7},
                      {7, 3, 12, true, 4, 0},
                      {UINT64_MAX, 5, 1000, false, 2, 0}};
  for (const Pin &pin : pins) {
    AugmentDraw d = a.draw(pin.seed, pin.epoch, pin.position);
    EXPECT_EQ(d.flip, pin.flip) << pin.seed << " " << pin.position;
    EXPECT_EQ(d.top, pin.top) << pin.seed << " " << pin.position;
    EXPECT_EQ(d.left, pin.left) << pin.seed << " " << pin.position;
  }
  int flips = 0;
  std::set<int64_t> tops, lefts;
  for (uint64_t i = 0; i < 4000; ++i) {
    AugmentDraw d = a.draw(3, i / 1000, i % 1000);
    flips += d.flip;
    tops.insert(d.top);
    lefts.insert(d.left);
  }
  EXPECT_NEAR(flips, 2000, 150);
  EXPECT_EQ(tops.size(), 9u);
  EXPECT_EQ(lefts.size(), 9u);
  // hflip off: never flipped, same offsets.
  ImageAugmenter cropOnly = augmenter({false, 4}, {1, 8, 8});
  AugmentDraw d = cropOnly.draw(7, 3, 12);
  EXPECT_FALSE(d.flip);
  EXPECT_EQ(d.top, 4);
  EXPECT_EQ(d.left, 0);
}

// Tests the pixels: one literal case, then every draw of a 2-channel image
// against the padded-window-mirror definition, with normalised padding.
TEST(AugmentTest, CropsAndFlipsLikeTorchvision) {
  // 1x3x4 image 1..12, P = 1, window at top 0, left 2, mirrored.
  ImageAugmenter small = augmenter({true, 1}, {1, 3, 4});
  std::vector<float> image = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  std::vector<float> scratch(12);
  small.apply({true, 0, 2}, image.data(), scratch.data());
  // Window rows -1..1, columns 1..4 of the image: [0 0 0 0; 2 3 4 0;
  // 6 7 8 0], mirrored.
  EXPECT_EQ(image, (std::vector<float>{0, 0, 0, 0, 0, 4, 3, 2, 0, 8, 7, 6}));

  const int64_t c = 2, h = 3, w = 5, p = 2;
  Normalization n{{0.5f, 0.25f}, {2.f, 0.5f}};
  ImageAugmenter a = augmenter({true, p}, {c, h, w}, n);
  std::vector<float> pad = {(0.f - 0.5f) / 2.f, (0.f - 0.25f) / 0.5f};
  std::vector<float> source(size_t(c * h * w));
  for (size_t i = 0; i < source.size(); ++i)
    source[i] = float(i) + 1;
  std::vector<float> work(source.size());
  for (int flip = 0; flip < 2; ++flip)
    for (int64_t top = 0; top <= 2 * p; ++top)
      for (int64_t left = 0; left <= 2 * p; ++left) {
        AugmentDraw d{flip == 1, top, left};
        std::vector<float> out = source;
        a.apply(d, out.data(), work.data());
        EXPECT_EQ(out, reference(source, c, h, w, p, d, pad))
            << flip << " " << top << " " << left;
      }
  // [H,W] images are one channel.
  ImageAugmenter flat = augmenter({true, 0}, {3, 4});
  std::vector<float> row = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  flat.apply({true, 0, 0}, row.data(), scratch.data());
  EXPECT_EQ(row, (std::vector<float>{4, 3, 2, 1, 8, 7, 6, 5, 12, 11, 10, 9}));
}

// Tests the shape errors.
TEST(AugmentTest, RejectsNonImages) {
  EXPECT_THAT(errorOf(ImageAugmenter::create({true, 0}, {784}, {})),
              HasSubstr("--augment needs image inputs [N,C,H,W] or [N,H,W]; "
                        "the model's input is [N,784]"));
  EXPECT_THAT(errorOf(ImageAugmenter::create({true, 0}, {1, 2, 3, 4}, {})),
              HasSubstr("the model's input is [N,1,2,3,4]"));
  EXPECT_THAT(errorOf(ImageAugmenter::create({true, 0}, {0, 2, 3}, {})),
              HasSubstr("holds no pixels"));
  Normalization n{{0.1f, 0.2f}, {1.f, 1.f}};
  EXPECT_THAT(errorOf(ImageAugmenter::create({true, 0}, {3, 2, 2}, n)),
              HasSubstr("--normalize: 2 per-channel values for 3 channels"));
  Dataset data = images(8, 1, 2, 2);
  SamplerOptions options;
  options.microBatch = 2;
  options.augmentation = {true, 1};
  options.imageShape = {1, 2, 3};
  EXPECT_THAT(errorOf(TrainSampler::create(data, options)),
              HasSubstr("--augment: images of 6 values, but img.npy has "
                        "samples of 4"));
}

// Tests that the sampler hands out each sample augmented by the draw of its
// position, and that prefetching, resuming mid-epoch and the absence of a
// second thread change nothing, for every sampling mode.
TEST(AugmentTest, SamplerAugmentsReproducibly) {
  Dataset data = images(21, 2, 3, 4);
  for (int mode = 0; mode < 3; ++mode) {
    SamplerOptions options;
    options.microBatch = 4;
    options.seed = 11;
    options.shuffle = mode != 0;
    if (mode == 2)
      options.classWeights = {1, 2, 3};
    options.augmentation = {true, 2};
    options.imageShape = {2, 3, 4};
    options.prefetch = false;
    Expected<TrainSampler> sync = TrainSampler::create(data, options);
    ASSERT_OK(sync);
    options.prefetch = true;
    Expected<TrainSampler> ahead = TrainSampler::create(data, options);
    ASSERT_OK(ahead);

    // Each row is the augmenter applied to the raw sample at its position.
    ImageAugmenter a = augmenter(options.augmentation, options.imageShape);
    MicroBatch batch = sync->makeBatch();
    std::vector<float> scratch(24);
    for (int64_t b = 0; b < sync->batchesPerEpoch(); ++b) {
      Expected<bool> more = sync->next(batch);
      ASSERT_OK(more);
      ASSERT_TRUE(*more);
      for (int64_t row = 0; row < 4; ++row) {
        int64_t index = sync->epochOrder()[size_t(b * 4 + row)];
        EXPECT_EQ(batch.indices[size_t(row)], index);
        std::vector<float> expected(data.inputRow(index),
                                    data.inputRow(index) + 24);
        a.apply(a.draw(11, 0, uint64_t(b * 4 + row)), expected.data(),
                scratch.data());
        EXPECT_EQ(std::vector<float>(batch.inputs.begin() + row * 24,
                                     batch.inputs.begin() + row * 24 + 24),
                  expected)
            << "mode " << mode << " batch " << b << " row " << row;
      }
    }
    sync->startNextEpoch();
    std::vector<std::vector<float>> later = run(*sync, 2);
    std::vector<std::vector<float>> all = run(*ahead, 3);
    ASSERT_EQ(all.size(), 15u);
    EXPECT_EQ(std::vector<std::vector<float>>(all.begin() + 5, all.end()),
              later)
        << "mode " << mode;
    // Another epoch augments differently.
    EXPECT_NE(all[0], all[5]);

    // Resume in the middle of epoch 1 (a prefetched batch is pending in
    // the original), from a fresh sampler and from one mid-way elsewhere.
    Expected<TrainSampler> original = TrainSampler::create(data, options);
    ASSERT_OK(original);
    run(*original, 1);
    MicroBatch tmp = original->makeBatch();
    ASSERT_OK(original->next(tmp));
    ASSERT_OK(original->next(tmp));
    LoaderState saved = original->state();
    for (int fresh = 0; fresh < 2; ++fresh) {
      Expected<TrainSampler> resumed = TrainSampler::create(data, options);
      ASSERT_OK(resumed);
      if (!fresh)
        ASSERT_OK(resumed->next(tmp)); // a prefetch of epoch 0 is pending
      EXPECT_NO_ERROR(resumed->restore(saved));
      std::vector<std::vector<float>> rest = run(*resumed, 2);
      EXPECT_EQ(rest, std::vector<std::vector<float>>(all.begin() + 7,
                                                      all.end()))
          << "mode " << mode << " fresh " << fresh;
    }
  }
}

// Tests that the prefetcher can be dropped at any point (job pending,
// running or done) without hanging, and reports batches that do not fit.
TEST(AugmentTest, PrefetcherShutsDownCleanly) {
  Dataset data = images(64, 1, 8, 8);
  std::vector<int64_t> indices = {5, 6, 7, 8};
  for (int round = 0; round < 50; ++round) {
    std::unique_ptr<BatchPrefetcher> p = BatchPrefetcher::start(
        data, augmenter({true, 4}, {1, 8, 8}), 4);
    ASSERT_TRUE(p != nullptr);
    p->submit(indices.data(), 4, 1, 0, uint64_t(round));
    EXPECT_TRUE(p->holds(1, 0, uint64_t(round)));
    EXPECT_FALSE(p->holds(1, 1, uint64_t(round)));
    if (round % 3 == 1) {
      MicroBatch out = data.makeBatch(4);
      EXPECT_NO_ERROR(p->take(out));
      EXPECT_EQ(out.indices, indices);
      EXPECT_FALSE(p->holds(1, 0, uint64_t(round)));
    } else if (round % 3 == 2) {
      p->cancel();
      EXPECT_FALSE(p->holds(1, 0, uint64_t(round)));
    }
    // Destroyed with the job pending, running or done.
  }
  std::unique_ptr<BatchPrefetcher> p =
      BatchPrefetcher::start(data, std::nullopt, 4);
  MicroBatch wrong = data.makeBatch(3);
  EXPECT_THAT(errorOf(p->take(wrong)),
              HasSubstr("no prefetched micro-batch to take"));
  p->submit(indices.data(), 4, 0, 0, 0);
  EXPECT_THAT(errorOf(p->take(wrong)),
              HasSubstr("batch buffers do not match"));
  std::vector<int64_t> outside = {1, 2, 3, 64};
  p->submit(outside.data(), 4, 0, 0, 1);
  MicroBatch out = data.makeBatch(4);
  EXPECT_THAT(errorOf(p->take(out)), HasSubstr("sample index 64 outside"));
}
