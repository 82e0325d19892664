//===- TrainLoop.h - The training loop --------------------------*- C++ -*-===//
//
// Semantics (DESIGN.md sections 4 and 5):
// * Each epoch the sampler hands out floor(N / B) micro-batches of B rows.
//   Every K of them (K = --accum-steps, default the model's) form one
//   optimizer step: micro_step(grad_scale = 1/K) on each, then
//   apply_step(lr, step) with steps counted from 1. The step's loss is the
//   mean of its K micro-batch losses.
// * A trailing group of fewer than K micro-batches at the end of an epoch
//   is DROPPED (not run, not stepped): every optimizer step sees exactly
//   K micro-batches, so its gradient is exactly that of a K*B batch. Those
//   samples are not lost for good: the next epoch reshuffles.
// * --max-steps S ends training after optimizer step S; the epoch in
//   progress is then validated and logged like a complete one.
// * After every epoch: validation over every validation sample
//   (Evaluator), one "epoch" log line, one progress line on stdout.
// * micro_step's rng_seed is microStepSeed(--seed, c) for the c-th
//   micro-batch of the run (counted from 0), so dropout masks depend on
//   the seed and the position in the run only.
// * A non-finite step loss stops training with an error (models without
//   loss scaling have no way to skip such a step).
//
// The loop is split so that later features slot in without reshaping it:
// the learning rate comes from LearningRateSchedule (per step) and may be
// adjusted at epoch ends (plateau); LoopPosition is everything a checkpoint
// must add to the state arena and the sampler's LoaderState; endOfEpoch()
// is where plateau, early stopping and checkpoints will act.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_TRAINLOOP_H
#define TRAINCC_RUNTIME_TRAINLOOP_H

#include "traincc/runtime/Cli.h"
#include "traincc/runtime/DataSources.h"
#include "traincc/runtime/Model.h"
#include "traincc/runtime/Sampler.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace traincc::rt {

/// The rng_seed of the `counter`-th micro-batch of a run: the
/// (counter+1)-th SplitMix64 output of a stream keyed by the seed, distinct
/// from the streams the sampler draws epoch orders from.
uint64_t microStepSeed(uint64_t seed, uint64_t counter);

/// The loop's settings, with model-dependent defaults resolved.
struct TrainingSettings {
  int64_t accumSteps = 1;
  double learningRate = 0.01;
  std::optional<int64_t> epochs;   // unset: until maxSteps
  std::optional<int64_t> maxSteps; // unset: until epochs
  SamplerOptions sampler;
  std::optional<std::string> logPath;
};

/// Defaults: --accum-steps from the model, --lr 0.01 (sgd) or 0.001
/// (adam/adamw), one epoch unless --max-steps is given.
TrainingSettings resolveTrainingSettings(const TrainerOptions &options,
                                         const ModelInfo &model);

/// The learning rate of each optimizer step. Constant for now; warmup and
/// cosine/step decay will be functions of the step here, and plateau
/// reduction a factor set at epoch ends.
class LearningRateSchedule {
public:
  explicit LearningRateSchedule(double base) : base_(base) {}
  double at(int64_t step) const { return base_; }

private:
  double base_;
};

/// Where the run is; with the state arena and the sampler's LoaderState
/// this is what a checkpoint will hold.
struct LoopPosition {
  int64_t step = 0;              // optimizer steps done
  int64_t epoch = 0;             // epochs finished
  uint64_t microBatchesRun = 0;  // micro_step calls so far (dropout seeds)
};

/// What one finished (or cut-short) epoch measured.
struct EpochSummary {
  int64_t epoch = 0;
  int64_t steps = 0;
  double trainLoss = 0;
  std::optional<double> valLoss, valAccuracy;
  double learningRate = 0;
  double seconds = 0;
};

/// Trains `memory` in place on `data`; progress lines go to `progress`.
Error runTraining(const ModelInfo &model, ModelMemory &memory,
                  TrainingData data, const TrainingSettings &settings,
                  std::FILE *progress);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_TRAINLOOP_H
