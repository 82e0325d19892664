//===- Evaluate.cpp - Evaluation-mode passes over a dataset ---------------===//

#include "traincc/runtime/exec/Evaluate.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace traincc::rt {

int64_t argmaxRow(const float *values, int64_t count) {
  int64_t best = -1;
  for (int64_t i = 0; i < count; ++i) {
    if (std::isnan(values[i]))
      continue;
    if (best < 0 || values[i] > values[best])
      best = i;
  }
  return best;
}

Expected<Evaluator> Evaluator::create(const ModelInfo &model, Dataset data) {
  switch (model.abi->loss) {
  case TRAINCC_LOSS_CROSS_ENTROPY:
    if (data.targetKind() != TargetKind::ClassLabels)
      return makeError(data.inputSource(),
                       ": evaluation needs class labels");
    break;
  case TRAINCC_LOSS_MSE:
    if (data.targetKind() != TargetKind::Values)
      return makeError(data.inputSource(), ": evaluation needs targets");
    break;
  default:
    return makeError("the model computes its own loss (--loss output), "
                     "which has no per-sample value to evaluate");
  }
  Evaluator evaluator(model, std::move(data));
  evaluator.batch_ = evaluator.data_.makeBatch(model.microBatch);
  evaluator.outputs_.assign(
      size_t(model.microBatch * model.outputSampleElements), 0.f);
  evaluator.losses_.assign(size_t(model.microBatch), 0.f);
  return evaluator;
}

Expected<EvaluationResult> Evaluator::run(StepBackend &backend,
                                          const EvaluationShard &shard) {
  bool labels = data_.targetKind() == TargetKind::ClassLabels;
  const int64_t n = data_.size();
  const bool sharded = shard.count > 1;
  if (sharded)
    samples_.assign(size_t(labels ? 2 * n : n), 0.f);
  double lossSum = 0;
  int64_t correct = 0;
  for (int64_t b = 0, e = evalBatchCount(data_, batch_.rows); b < e; ++b) {
    if (sharded && b % shard.count != shard.index)
      continue;
    if (Error err = fillEvalBatch(data_, b, batch_))
      return err;
    const void *target = labels ? static_cast<const void *>(batch_.labels.data())
                                : batch_.targets.data();
    if (Error err = backend.evalStep(batch_.inputData(), target,
                                     outputs_.data(), losses_.data()))
      return err;
    for (int64_t row = 0; row < batch_.realRows; ++row) {
      bool hit =
          labels &&
          argmaxRow(outputs_.data() + row * model_.outputSampleElements,
                    model_.outputSampleElements) == batch_.labels[size_t(row)];
      if (sharded) {
        int64_t sample = b * batch_.rows + row;
        samples_[size_t(sample)] = losses_[size_t(row)];
        if (labels)
          samples_[size_t(n + sample)] = hit ? 1.f : 0.f;
        continue;
      }
      lossSum += losses_[size_t(row)];
      correct += hit;
    }
  }
  if (sharded) {
    if (Error err = shard.sumOverReplicas(samples_))
      return err;
    // In sample order, as one process sums them.
    for (int64_t sample = 0; sample < n; ++sample)
      lossSum += samples_[size_t(sample)];
    if (labels)
      for (int64_t sample = 0; sample < n; ++sample)
        correct += samples_[size_t(n + sample)] > 0.5f;
  }
  EvaluationResult result;
  result.samples = n;
  result.loss = lossSum / double(result.samples);
  if (labels)
    result.accuracy = double(correct) / double(result.samples);
  return result;
}

Expected<FloatTensor> predictAll(const ModelInfo &model, StepBackend &backend,
                                 const Dataset &data) {
  FloatTensor result;
  result.shape.push_back(data.size());
  result.shape.insert(result.shape.end(), model.outputSampleShape.begin(),
                      model.outputSampleShape.end());
  int64_t rowElements = model.outputSampleElements;
  if (data.size() > INT64_MAX / 8 / rowElements)
    return makeError(data.inputSource(), ": ", data.size(),
                     " samples give too many outputs");
  result.data.resize(size_t(data.size() * rowElements));
  MicroBatch batch = data.makeBatch(model.microBatch);
  std::vector<float> outputs(size_t(model.microBatch * rowElements));
  // No targets, no losses (ModelABI.h allows null; the generated eval_step
  // and the CUDA backend substitute their own).
  for (int64_t b = 0, e = evalBatchCount(data, batch.rows); b < e; ++b) {
    if (Error err = fillEvalBatch(data, b, batch))
      return err;
    if (Error err = backend.evalStep(batch.inputData(), nullptr,
                                     outputs.data(), nullptr))
      return err;
    std::memcpy(result.data.data() + b * batch.rows * rowElements,
                outputs.data(),
                sizeof(float) * size_t(batch.realRows * rowElements));
  }
  return result;
}

} // namespace traincc::rt
