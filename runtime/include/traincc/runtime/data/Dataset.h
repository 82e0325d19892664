//===- Dataset.h - Samples and their labels or targets ----------*- C++ -*-===//
//
// A Dataset is N samples of float32 inputs [N, ...], or of int64 ids [N, ...]
// for a model whose input is integer (token ids an embedding looks up), with,
// per sample, a class label (int64, checked against the number of classes),
// a float32 target row, or nothing (predict). Storage is shared and
// immutable, so slices (validation split, copies held by batchers) cost
// nothing. The batch holds the samples in the model's input type, so the
// step functions read them as they are.
//
// Validation split (--val-split F): the LAST round(N * F) samples, in file
// order, before any shuffling (Keras's validation_split convention). The
// split therefore does not depend on --seed, and changing the seed never
// moves a sample between training and validation.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_DATA_DATASET_H
#define TRAINCC_RUNTIME_DATA_DATASET_H

#include "traincc/runtime/support/Error.h"
#include "traincc/runtime/support/Tensor.h"

#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace traincc::rt {

enum class TargetKind {
  None,        // inputs only (predict)
  ClassLabels, // int64 [N] in [0, numClasses)
  Values,      // float32 [N, ...] (MSE)
};

/// Rows of a micro-batch, reused from step to step (allocated once).
struct MicroBatch {
  int64_t rows = 0;
  /// Rows holding real samples; the rest are padding (evaluation only):
  /// zero inputs, label 0, zero targets, sample index -1.
  int64_t realRows = 0;
  std::vector<float> inputs;    // rows * sampleElements (float inputs)
  std::vector<int64_t> inputIds; // rows * sampleElements (integer inputs)
  std::vector<int64_t> labels;  // rows (ClassLabels)
  std::vector<float> targets;   // rows * targetElements (Values)
  std::vector<int64_t> indices; // dataset index of each row, -1 for padding

  /// The rows as the step functions take them (float32 or int64).
  const void *inputData() const {
    return inputIds.empty() ? static_cast<const void *>(inputs.data())
                            : static_cast<const void *>(inputIds.data());
  }
};

/// Samples as a file holds them for the model: float32 values, or int64 ids
/// when the model's input is integer.
using InputTensor = std::variant<FloatTensor, Int64Tensor>;

class Dataset {
public:
  /// Inputs [N, ...] with class labels [N]; every label must lie in
  /// [0, numClasses). Non-finite inputs are rejected.
  static Expected<Dataset> withLabels(InputTensor inputs, Int64Tensor labels,
                                      int64_t numClasses);
  /// Inputs [N, ...] with float targets [N, ...].
  static Expected<Dataset> withTargets(InputTensor inputs,
                                       FloatTensor targets);
  /// Inputs only.
  static Expected<Dataset> inputsOnly(InputTensor inputs);

  int64_t size() const { return count_; }
  TargetKind targetKind() const { return kind_; }
  int64_t numClasses() const { return numClasses_; }
  /// Shape of one sample (the input shape without N).
  const std::vector<int64_t> &sampleShape() const { return sampleShape_; }
  int64_t sampleElements() const { return sampleElements_; }
  /// Shape of one target row ({} for labels and for None).
  const std::vector<int64_t> &targetShape() const { return targetShape_; }
  int64_t targetElements() const { return targetElements_; }
  /// Where the inputs came from, for messages.
  const std::string &inputSource() const;

  /// True when the samples are int64 ids (inputIdRow), else float32
  /// (inputRow).
  bool integerInputs() const { return ids_ != nullptr; }
  const float *inputRow(int64_t index) const;
  const int64_t *inputIdRow(int64_t index) const;
  int64_t label(int64_t index) const;
  const float *targetRow(int64_t index) const;

  /// Samples [begin, begin + count) sharing this dataset's storage; an error
  /// when the range does not lie inside the dataset.
  Expected<Dataset> slice(int64_t begin, int64_t count) const;
  /// (training, validation) with the last round(N * fraction) samples as
  /// validation; 0 < fraction < 1 and both parts non-empty.
  Expected<std::pair<Dataset, Dataset>> splitValidation(double fraction) const;

  /// Accepts a model whose per-sample input shape has as many elements as
  /// ours (C-order data reshapes for free, e.g. [1,28,28] into [784]).
  Error checkSampleShape(const std::vector<int64_t> &modelSampleShape) const;
  /// Same for target rows against the model's per-sample output shape.
  Error checkTargetShape(const std::vector<int64_t> &modelTargetShape) const;

  /// How many samples carry each label (ClassLabels only, else empty).
  std::vector<int64_t> classCounts() const;

  /// A batch buffer of `rows` rows shaped for this dataset.
  MicroBatch makeBatch(int64_t rows) const;
  /// Copies the samples `indices[0..count)` into the first rows of `batch`
  /// and pads the remaining rows. Errors on a bad index or a batch that was
  /// not made for this dataset.
  Error fillBatch(const int64_t *indices, int64_t count,
                  MicroBatch &batch) const;

private:
  Dataset() = default;
  static Expected<Dataset> fromInputs(InputTensor inputs);

  std::shared_ptr<const FloatTensor> inputs_; // float inputs, or
  std::shared_ptr<const Int64Tensor> ids_;    // integer inputs
  std::shared_ptr<const Int64Tensor> labels_;
  std::shared_ptr<const FloatTensor> targets_;
  TargetKind kind_ = TargetKind::None;
  int64_t numClasses_ = 0;
  int64_t begin_ = 0; // first row of the shared storage
  int64_t count_ = 0;
  std::vector<int64_t> sampleShape_;
  int64_t sampleElements_ = 0;
  std::vector<int64_t> targetShape_;
  int64_t targetElements_ = 0;
};

/// Number of evaluation batches of `rows` rows covering every sample
/// (the last one padded): ceil(N / rows).
int64_t evalBatchCount(const Dataset &data, int64_t rows);
/// Fills evaluation batch `batchIndex` (samples in file order) and sets
/// batch.realRows to the number of real samples in it.
Error fillEvalBatch(const Dataset &data, int64_t batchIndex, MicroBatch &batch);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_DATA_DATASET_H
