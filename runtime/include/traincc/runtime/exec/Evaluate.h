//===- Evaluate.h - Evaluation-mode passes over a dataset -------*- C++ -*-===//
//
// Validation, `eval` and `predict` run eval_step over every sample in file
// order, micro_batch rows at a time; the last batch is padded with zero rows
// whose outputs and losses are ignored. The loss is the mean of the
// per-sample losses over the real rows; the accuracy (cross-entropy models)
// is the fraction of rows whose largest output (the first one on ties, as
// torch.argmax) is the label. A NaN output never counts as correct.
//
// Data-parallel validation shards the batches: replica r of N evaluates
// batches r, r + N, ...; the per-sample losses and hits are then summed over
// the replicas in vectors that are zero where another replica evaluated
// (exact sums), and every replica reduces them in sample order as one
// process would, so the metrics are the single-process ones, bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_EXEC_EVALUATE_H
#define TRAINCC_RUNTIME_EXEC_EVALUATE_H

#include "traincc/runtime/data/Dataset.h"
#include "traincc/runtime/exec/StepBackend.h"
#include "traincc/runtime/support/Model.h"

#include <functional>
#include <optional>
#include <vector>

namespace traincc::rt {

struct EvaluationResult {
  double loss = 0;
  std::optional<double> accuracy; // cross-entropy only
  int64_t samples = 0;
};

/// Index of the largest of `count` values; the first on ties, NaN ignored
/// (-1 when all are NaN).
int64_t argmaxRow(const float *values, int64_t count);

/// Which batches a replica evaluates, and how its results meet the others'.
struct EvaluationShard {
  int index = 0, count = 1;
  /// Sums the vector element-wise over the replicas, in place (every
  /// replica gets the same bits).
  std::function<Error(std::vector<float> &)> sumOverReplicas;
};

/// Evaluates one dataset repeatedly (once per epoch) with buffers allocated
/// once.
class Evaluator {
public:
  /// Errors when the dataset lacks what the model's loss needs (labels for
  /// cross-entropy, targets for mse) or the model has no per-sample loss.
  static Expected<Evaluator> create(const ModelInfo &model, Dataset data);

  /// eval_step on `backend`, with the state it holds; with a shard, only
  /// its batches, and the result is the whole dataset's.
  Expected<EvaluationResult> run(StepBackend &backend,
                                 const EvaluationShard &shard = {});

private:
  Evaluator(const ModelInfo &model, Dataset data)
      : model_(model), data_(std::move(data)) {}

  ModelInfo model_;
  Dataset data_;
  MicroBatch batch_;
  std::vector<float> outputs_;
  std::vector<float> losses_;
  std::vector<float> samples_; // sharded: per-sample losses, then hits
};

/// The model's outputs for every sample of `data`: float32
/// [N, output shape without the batch axis].
Expected<FloatTensor> predictAll(const ModelInfo &model, StepBackend &backend,
                                 const Dataset &data);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_EXEC_EVALUATE_H
