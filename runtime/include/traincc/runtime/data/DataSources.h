//===- DataSources.h - The data a command line names, fitted to the model -===//
//
// Loads the files or built-in dataset the flags name and checks them against
// the model before any step runs: the per-sample input shape (any shape with
// as many values as the model's input without its batch axis: C-order data
// reshapes for free), labels for cross-entropy (int64, within the class
// count), float targets for mse (as many values as the model's target).
// Every error names the flag and the file. --normalize is applied here, as
// the data is loaded, so that training, validation, eval and predict all
// see the same transformed inputs.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_DATA_DATASOURCES_H
#define TRAINCC_RUNTIME_DATA_DATASOURCES_H

#include "traincc/runtime/data/Augment.h"
#include "traincc/runtime/data/Dataset.h"
#include "traincc/runtime/data/Sampler.h"
#include "traincc/runtime/support/Model.h"

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
  Augmentation augment;                   // train only
  bool prefetch = true;                   // --no-prefetch
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
