//===- TrainLoop.h - The training loop --------------------------*- C++ -*-===//
//
// Semantics (docs/ARCHITECTURE.md, "Training semantics" and
// "Command-line contracts"):
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
// * Loss scaling (ModelABI.h): after each apply_step the loop reads
//   found_inf and the new scale. A step with inf/NaN gradients is skipped:
//   it counts as a step (logged with "skipped":true, counted in the epoch
//   line) but not as an applied one. Each step logs as loss_scale the
//   scale its gradients were computed with.
// * Between the K micro-steps and apply_step the loop measures the global
//   gradient norm (logged as grad_norm) and, with --grad-clip-norm C,
//   clips the gradients to norm C (Monitors.h); with loss scaling, both of
//   the unscaled gradients.
// * The learning rate of each step comes from LearningRateSchedule
//   (Schedule.h), indexed by applied optimizer steps. At each epoch end,
//   after validation and the epoch log line: plateau reduction, early
//   stopping, then the epoch checkpoint (Checkpoint.h), all acting on the
//   monitored metric.
// * --checkpoint-every N also checkpoints after every N-th step that does
//   not end an epoch; --resume continues from any checkpoint exactly where
//   it was written, so the rest of the run is bit-identical.
// * SIGINT/SIGTERM (Signals.h): the loop finishes the step in progress,
//   writes a checkpoint and returns the signal in TrainingOutcome.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_LOOP_TRAINLOOP_H
#define TRAINCC_RUNTIME_LOOP_TRAINLOOP_H

#include "traincc/runtime/data/DataSources.h"
#include "traincc/runtime/distributed/DataParallel.h"
#include "traincc/runtime/exec/StepBackend.h"
#include "traincc/runtime/loop/TrainingSettings.h"
#include "traincc/runtime/support/Model.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace traincc::rt {

/// The rng_seed of the `counter`-th micro-batch of a run: the
/// (counter+1)-th SplitMix64 output of a stream keyed by the seed, distinct
/// from the streams the sampler draws epoch orders from.
uint64_t microStepSeed(uint64_t seed, uint64_t counter);

/// What one finished (or cut-short) epoch measured.
struct EpochSummary {
  int64_t epoch = 0;
  int64_t steps = 0;
  int64_t skippedSteps = 0; // of `steps`, skipped by loss scaling
  double trainLoss = 0;
  std::optional<double> valLoss, valAccuracy;
  double learningRate = 0;
  double seconds = 0;
};

/// How a run that did not fail ended.
struct TrainingOutcome {
  /// SIGINT or SIGTERM when a signal interrupted the run (a checkpoint was
  /// written to `checkpoint`); 0 when it ran to its end.
  int signal = 0;
  std::string checkpoint;
};

/// Trains the backend's state in place on `data` (from --resume's
/// checkpoint when given); progress lines go to `progress`. On return the
/// host arena (backend.memory()) holds the final state.
///
/// With `replicas` (data parallelism, DataParallel.h) this process is one
/// replica: its sampler hands out its slice of every global micro-batch,
/// the gradients are averaged over the replicas before each apply_step,
/// the logged losses are the replicas' mean, a signal stops every replica
/// after the same step, and only rank 0 writes the log and checkpoints.
Expected<TrainingOutcome> runTraining(const ModelInfo &model,
                                      StepBackend &backend, TrainingData data,
                                      const TrainingSettings &settings,
                                      std::FILE *progress,
                                      ReplicaSync *replicas = nullptr);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_LOOP_TRAINLOOP_H
