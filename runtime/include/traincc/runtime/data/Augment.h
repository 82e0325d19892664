//===- Augment.h - Input normalisation and image augmentation ---*- C++ -*-===//
//
// --normalize MEAN,STD | M1,M2,../S1,S2,..
//   Every input value x of channel c becomes (x - mean[c]) / std[c], computed
//   in float32 like torchvision's Normalize, so a trainer fed raw data equals
//   PyTorch fed Normalize'd data bit for bit. The channel is the index along
//   axis 1 of the model's input [N, C, ...]; one pair applies to every value.
//   Applied once when the data is loaded, for train, validation, eval and
//   predict alike.
//
// --augment hflip,crop[:P]   (training only, image inputs [N,C,H,W] or [N,H,W])
//   torchvision's RandomCrop(size, padding=P) then RandomHorizontalFlip(0.5):
//   the image is padded by P (default 4) on every side with the value a raw
//   0 has after --normalize (0 without it), a window of the original size is
//   cut at a random offset, and the result is mirrored left-right with
//   probability 1/2.
//
//   The random choices of a sample are a pure function of (seed, epoch,
//   position in the epoch), so they do not depend on --threads, on prefetching
//   or on where a run was resumed, and a checkpoint needs no extra state:
//     stream  = mix(seed ^ "augment!")            (SplitMix64::mix)
//     key     = SplitMix64::nthOutput(stream, epoch + 1)
//     rng     = SplitMix64(SplitMix64::nthOutput(key, position + 1))
//     flip = rng.next() >> 63; top = rng.below(2P+1); left = rng.below(2P+1)
//   (all three drawn whatever is enabled; below(1) draws nothing). Output
//   pixel (c, y, x) is input pixel (c, y + top - P, x' + left - P) with
//   x' = W-1-x when flipped, else x; outside the input it is the pad value.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_DATA_AUGMENT_H
#define TRAINCC_RUNTIME_DATA_AUGMENT_H

#include "traincc/runtime/support/Error.h"
#include "traincc/runtime/support/Tensor.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace traincc::rt {

struct MicroBatch;

/// --normalize: one mean/std pair, or one per channel.
struct Normalization {
  std::vector<float> mean, std; // same length, std > 0
};

/// Parses "MEAN,STD" or "M1,M2,../S1,S2,.." (locale independent).
Expected<Normalization> parseNormalization(std::string_view text);

/// Normalises `inputs` [N,...] in place. `modelSampleShape` is the model's
/// input without N; per-channel values need as many channels as its first
/// axis. Inputs whose samples do not have the model's element count are left
/// alone (the shape check after loading reports them).
Error normalizeInputs(FloatTensor &inputs, const Normalization &normalization,
                      const std::vector<int64_t> &modelSampleShape);

/// --augment: which augmentations, with their parameters.
struct Augmentation {
  bool hflip = false;
  int64_t cropPadding = 0; // 0: no random crop
  bool enabled() const { return hflip || cropPadding > 0; }
};

/// Parses "hflip", "crop", "crop:P" separated by commas.
Expected<Augmentation> parseAugmentation(std::string_view text);

/// The random choices for one sample.
struct AugmentDraw {
  bool flip = false;
  int64_t top = 0, left = 0; // offsets into the padded image, 0..2P
};

/// Applies an Augmentation to images of one shape.
class ImageAugmenter {
public:
  /// Errors (naming --augment) when the model's sample shape is not [C,H,W]
  /// or [H,W]. `normalization` gives the pad value of each channel.
  static Expected<ImageAugmenter>
  create(const Augmentation &augmentation,
         const std::vector<int64_t> &modelSampleShape,
         const std::optional<Normalization> &normalization);

  int64_t sampleElements() const { return channels_ * height_ * width_; }
  /// The choices for the sample at `position` of epoch `epoch`.
  AugmentDraw draw(uint64_t seed, uint64_t epoch, uint64_t position) const;
  /// Transforms one sample in place; `scratch` holds sampleElements().
  void apply(const AugmentDraw &draw, float *sample, float *scratch) const;
  /// Augments the first batch.realRows rows, row r being sample position
  /// firstPosition + r of the epoch.
  void augmentBatch(MicroBatch &batch, uint64_t seed, uint64_t epoch,
                    uint64_t firstPosition, std::vector<float> &scratch) const;

private:
  Augmentation augmentation_;
  int64_t channels_ = 1, height_ = 0, width_ = 0;
  std::vector<float> padValues_; // per channel
};

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_DATA_AUGMENT_H
