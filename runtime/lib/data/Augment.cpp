//===- Augment.cpp - Input normalisation and image augmentation -----------===//

#include "traincc/runtime/data/Augment.h"

#include "traincc/runtime/data/Dataset.h"
#include "traincc/runtime/support/Random.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <string>

namespace traincc::rt {

namespace {

/// "1,2.5,3" as doubles; `what` names the list in errors.
Expected<std::vector<double>> parseNumberList(std::string_view text,
                                              const char *flag,
                                              const char *expected) {
  std::vector<double> values;
  size_t pos = 0;
  while (true) {
    size_t comma = text.find(',', pos);
    std::string_view item = text.substr(
        pos, comma == std::string_view::npos ? std::string_view::npos
                                             : comma - pos);
    double value = 0;
    const char *end = item.data() + item.size();
    std::from_chars_result result = std::from_chars(item.data(), end, value);
    if (item.empty() || result.ec != std::errc() || result.ptr != end ||
        !std::isfinite(value))
      return makeError(flag, ": '", item, "' is not a finite number (expected ",
                       expected, ")");
    values.push_back(value);
    if (comma == std::string_view::npos)
      break;
    pos = comma + 1;
  }
  return values;
}

/// "[N,1,28,28]" for the model's sample shape [1,28,28].
std::string modelInputShape(const std::vector<int64_t> &sampleShape) {
  std::string shape = formatShape(sampleShape);
  return sampleShape.empty() ? "[N]" : "[N," + shape.substr(1);
}

} // namespace

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

Expected<Normalization> parseNormalization(std::string_view text) {
  constexpr const char *kFlag = "--normalize";
  constexpr const char *kForm = "MEAN,STD or M1,M2,../S1,S2,..";
  Normalization result;
  std::vector<double> means, stds;
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) {
    Expected<std::vector<double>> pair = parseNumberList(text, kFlag, kForm);
    if (!pair)
      return pair.takeError();
    if (pair->size() != 2)
      return makeError(kFlag, ": expected MEAN,STD (two numbers) or "
                              "M1,M2,../S1,S2,.., got '",
                       text, "'");
    means = {(*pair)[0]};
    stds = {(*pair)[1]};
  } else {
    Expected<std::vector<double>> m =
        parseNumberList(text.substr(0, slash), kFlag, kForm);
    if (!m)
      return m.takeError();
    Expected<std::vector<double>> s =
        parseNumberList(text.substr(slash + 1), kFlag, kForm);
    if (!s)
      return s.takeError();
    if (m->size() != s->size())
      return makeError(kFlag, ": ", int64_t(m->size()), " means but ",
                       int64_t(s->size()), " standard deviations");
    means = m.take();
    stds = s.take();
  }
  for (size_t c = 0; c < means.size(); ++c) {
    // Values are used in float32, as torchvision's Normalize does.
    float mean = float(means[c]), std = float(stds[c]);
    if (!std::isfinite(mean) || !std::isfinite(std) || !(std > 0))
      return makeError(kFlag, ": the standard deviation ", stds[c],
                       " must be positive and the mean ", means[c],
                       " finite in float32");
    result.mean.push_back(mean);
    result.std.push_back(std);
  }
  return result;
}

Error normalizeInputs(FloatTensor &inputs, const Normalization &normalization,
                      const std::vector<int64_t> &modelSampleShape) {
  int64_t channels = int64_t(normalization.mean.size());
  if (channels != 1 &&
      (modelSampleShape.empty() || channels != modelSampleShape[0]))
    return makeError("--normalize: ", channels,
                     " per-channel values, but the model's input ",
                     modelInputShape(modelSampleShape), " has ",
                     modelSampleShape.empty() ? int64_t(1)
                                              : modelSampleShape[0],
                     " channels along axis 1");
  int64_t sampleElements = 1;
  for (int64_t d : modelSampleShape)
    sampleElements *= d;
  int64_t rowElements = 1;
  for (size_t i = 1; i < inputs.shape.size(); ++i)
    rowElements *= inputs.shape[i];
  // Samples that do not fit the model are left alone: the shape check that
  // follows loading reports them with the flag and file.
  if (inputs.shape.empty() || sampleElements < 1 ||
      rowElements != sampleElements ||
      inputs.numElements() != inputs.shape[0] * rowElements)
    return Error::success();
  int64_t inner = channels == 1 ? sampleElements : sampleElements / channels;
  float *data = inputs.data.data();
  for (int64_t i = 0, e = inputs.numElements(); i < e; ++i) {
    int64_t c = channels == 1 ? 0 : (i / inner) % channels;
    // Two float32 operations, like torch's sub_(mean).div_(std).
    float centred = data[i] - normalization.mean[size_t(c)];
    data[i] = centred / normalization.std[size_t(c)];
  }
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Augmentation
//===----------------------------------------------------------------------===//

Expected<Augmentation> parseAugmentation(std::string_view text) {
  constexpr const char *kFlag = "--augment";
  Augmentation result;
  bool seenFlip = false, seenCrop = false;
  size_t pos = 0;
  while (true) {
    size_t comma = text.find(',', pos);
    std::string_view item = text.substr(
        pos, comma == std::string_view::npos ? std::string_view::npos
                                             : comma - pos);
    if (item == "hflip") {
      if (seenFlip)
        return makeError(kFlag, ": hflip is given twice");
      seenFlip = true;
      result.hflip = true;
    } else if (item == "crop" || item.rfind("crop:", 0) == 0) {
      if (seenCrop)
        return makeError(kFlag, ": crop is given twice");
      seenCrop = true;
      result.cropPadding = 4;
      if (item.size() > 4) {
        std::string_view number = item.substr(5);
        int64_t padding = 0;
        const char *end = number.data() + number.size();
        std::from_chars_result r =
            std::from_chars(number.data(), end, padding);
        if (number.empty() || r.ec != std::errc() || r.ptr != end ||
            padding < 1 || padding > 4096)
          return makeError(kFlag, ": crop:P needs a padding P between 1 and "
                                  "4096, got '",
                           number, "'");
        result.cropPadding = padding;
      }
    } else {
      return makeError(kFlag, ": unknown augmentation '", item,
                       "' (expected hflip, crop or crop:P)");
    }
    if (comma == std::string_view::npos)
      break;
    pos = comma + 1;
  }
  return result;
}

Expected<ImageAugmenter>
ImageAugmenter::create(const Augmentation &augmentation,
                       const std::vector<int64_t> &modelSampleShape,
                       const std::optional<Normalization> &normalization) {
  ImageAugmenter augmenter;
  augmenter.augmentation_ = augmentation;
  const std::vector<int64_t> &s = modelSampleShape;
  if (s.size() == 3) {
    augmenter.channels_ = s[0];
    augmenter.height_ = s[1];
    augmenter.width_ = s[2];
  } else if (s.size() == 2) {
    augmenter.height_ = s[0];
    augmenter.width_ = s[1];
  } else {
    return makeError("--augment needs image inputs [N,C,H,W] or [N,H,W]; the "
                     "model's input is ",
                     modelInputShape(s));
  }
  if (augmenter.channels_ < 1 || augmenter.height_ < 1 || augmenter.width_ < 1)
    return makeError("--augment: the model's input ", modelInputShape(s),
                     " holds no pixels");
  // Padding is black in the raw data (torchvision crops before Normalize):
  // after --normalize a raw 0 reads (0 - mean) / std.
  augmenter.padValues_.assign(size_t(augmenter.channels_), 0.f);
  if (normalization) {
    size_t given = normalization->mean.size();
    if (given != 1 && int64_t(given) != augmenter.channels_)
      return makeError("--normalize: ", int64_t(given),
                       " per-channel values for ", augmenter.channels_,
                       " channels");
    for (int64_t c = 0; c < augmenter.channels_; ++c) {
      size_t k = given == 1 ? 0 : size_t(c);
      float zero = 0.f;
      float centred = zero - normalization->mean[k];
      augmenter.padValues_[size_t(c)] = centred / normalization->std[k];
    }
  }
  return augmenter;
}

AugmentDraw ImageAugmenter::draw(uint64_t seed, uint64_t epoch,
                                 uint64_t position) const {
  // Keyed like the dropout stream (TrainLoop.cpp), with its own constant.
  constexpr uint64_t kAugmentStream = 0x6175676d656e7421ull; // "augment!"
  uint64_t stream = SplitMix64::mix(seed ^ kAugmentStream);
  uint64_t key = SplitMix64::nthOutput(stream, epoch + 1);
  SplitMix64 rng(SplitMix64::nthOutput(key, position + 1));
  AugmentDraw d;
  d.flip = (rng.next() >> 63) != 0;
  uint64_t span = uint64_t(2 * augmentation_.cropPadding + 1);
  d.top = int64_t(rng.below(span));
  d.left = int64_t(rng.below(span));
  if (!augmentation_.hflip)
    d.flip = false;
  return d;
}

void ImageAugmenter::apply(const AugmentDraw &draw, float *sample,
                           float *scratch) const {
  const int64_t p = augmentation_.cropPadding;
  const int64_t h = height_, w = width_;
  const bool flip = draw.flip && augmentation_.hflip;
  if (!flip && draw.top == p && draw.left == p)
    return; // the identity
  const size_t plane = size_t(h * w);
  std::memcpy(scratch, sample, sizeof(float) * plane * size_t(channels_));
  for (int64_t c = 0; c < channels_; ++c) {
    const float *in = scratch + size_t(c) * plane;
    float *out = sample + size_t(c) * plane;
    const float pad = padValues_[size_t(c)];
    for (int64_t y = 0; y < h; ++y) {
      int64_t sy = y + draw.top - p;
      float *row = out + y * w;
      if (sy < 0 || sy >= h) {
        for (int64_t x = 0; x < w; ++x)
          row[x] = pad;
        continue;
      }
      const float *src = in + sy * w;
      for (int64_t x = 0; x < w; ++x) {
        int64_t sx = (flip ? w - 1 - x : x) + draw.left - p;
        row[x] = sx < 0 || sx >= w ? pad : src[sx];
      }
    }
  }
}

void ImageAugmenter::augmentBatch(MicroBatch &batch, uint64_t seed,
                                  uint64_t epoch, uint64_t firstPosition,
                                  std::vector<float> &scratch) const {
  const int64_t elements = sampleElements();
  if (int64_t(scratch.size()) < elements)
    scratch.resize(size_t(elements));
  for (int64_t row = 0; row < batch.realRows; ++row)
    apply(draw(seed, epoch, firstPosition + uint64_t(row)),
          batch.inputs.data() + row * elements, scratch.data());
}

} // namespace traincc::rt
