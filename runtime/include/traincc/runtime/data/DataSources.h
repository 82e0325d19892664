//===- DataSources.h - The data a command line names, fitted to the model -===//
//
// Loads the files or built-in dataset the flags name and checks them against
// the model before any step runs: the per-sample input shape, labels for
// cross-entropy (int64, within the class count), float targets for mse (as
// many values as the model's target). Every error names the flag and the
// file.
//
// Input shape: an .npy input must have the model's per-sample shape, up to
// dimensions of size 1 ([N,28,28] or [N,28,28,1] feed [N,1,28,28]: the values
// lie in the same order). Any other shape with as many values per sample
// (e.g. [N,784] for [N,1,28,28]) is an error unless --reshape is given,
// because reading it in C order is right for flattened images but silently
// wrong for channels-last [N,H,W,C] data, which needs a transpose. A shape
// with another value count is always an error. Built-in datasets reshape
// freely (their layout is known).
//
// Integer inputs: a model whose input is int64 (token ids that an embedding
// looks up) reads int64 files (int32 and uint8 widened; float files are an
// error), and every id must lie in [0, rows) of the table it indexes, which
// the trainer knows from compile time (ModelABI.h id_limit): an id outside
// is an error naming the file, sample and element. --scale, --normalize,
// --augment and --dataset (images) do not apply to ids and are errors.
//
// Input values: --scale divides uint8 inputs by 255 (torchvision's ToTensor,
// what --dataset fashion-mnist does); uint8 inputs without it are used as
// they are (0..255) with a warning, and --scale on inputs of another type is
// an error. Then --normalize. Both are applied here, as the data is loaded,
// so that training, validation, eval and predict all see the same values.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_DATA_DATASOURCES_H
#define TRAINCC_RUNTIME_DATA_DATASOURCES_H

#include "traincc/runtime/data/Augment.h"
#include "traincc/runtime/data/Dataset.h"
#include "traincc/runtime/data/Sampler.h"
#include "traincc/runtime/support/Model.h"

#include <cstdio>
#include <optional>
#include <string>

namespace traincc::rt {

/// The data flags as given (unset: not given). The command line (Cli.h)
/// fills them and checks which go together; the loaders below read them.
struct DataOptions {
  std::optional<std::string> trainX, trainY, valX, valY;
  std::optional<double> valSplit;
  std::optional<std::string> dataset;      // --dataset as given
  std::optional<std::string> evalX, evalY; // eval/predict --x/--y
  // Input pipeline (Augment.h, Prefetch.h).
  std::optional<Normalization> normalize; // train, eval, predict
  bool scale = false;   // --scale: uint8 inputs / 255 (train, eval, predict)
  bool reshape = false; // --reshape: inputs of another shape, same count
  Augmentation augment;                   // train only
  bool prefetch = true;                   // --no-prefetch
  /// Where warnings about the data go (uint8 inputs without --scale).
  std::FILE *warnings = stderr;
};

struct TrainingData {
  Dataset train;
  std::optional<Dataset> validation;
};

/// `train`: --train-x/--train-y with --val-x/--val-y or --val-split, or
/// --dataset (train split, validation on t10k).
Expected<TrainingData> loadTrainingData(const DataOptions &options,
                                        const ModelInfo &model);
/// `eval`: --x/--y, or --dataset (its t10k split).
Expected<Dataset> loadEvaluationData(const DataOptions &options,
                                     const ModelInfo &model);
/// `predict`: --x alone.
Expected<Dataset> loadPredictionInputs(const DataOptions &options,
                                       const ModelInfo &model);

/// The sampler settings of the input pipeline: --augment (on the model's
/// input shape, padding after --normalize) and --no-prefetch.
void configureSampler(SamplerOptions &sampler, const DataOptions &options,
                      const ModelInfo &model);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_DATA_DATASOURCES_H
