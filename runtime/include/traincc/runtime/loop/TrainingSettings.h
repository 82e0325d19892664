//===- TrainingSettings.h - What the training loop is told ------*- C++ -*-===//
//
// LoopOptions are the loop's flags as given (unset optionals mean "not
// given"); the command line (Cli.h) fills them and checks which go together.
// TrainingSettings are what runTraining works from: the same with the
// defaults that depend on the model resolved. Neither knows the command
// line, so the loop can be driven without one (tests, other front ends).
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_LOOP_TRAININGSETTINGS_H
#define TRAINCC_RUNTIME_LOOP_TRAININGSETTINGS_H

#include "traincc/runtime/data/DataSources.h"
#include "traincc/runtime/data/Sampler.h"
#include "traincc/runtime/loop/Schedule.h"
#include "traincc/runtime/support/Model.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace traincc::rt {

/// The flags of `train` that the loop reads.
struct LoopOptions {
  std::optional<int64_t> epochs;
  std::optional<int64_t> maxSteps;
  std::optional<double> lr;
  std::optional<int64_t> accumSteps;
  uint64_t seed = 0;
  bool shuffle = true;
  std::vector<double> classWeights;

  // Schedules, early stopping, gradient clipping (Schedule.h).
  ScheduleKind schedule = ScheduleKind::Constant;
  std::optional<int64_t> warmupSteps;
  std::optional<double> minLr;
  std::optional<int64_t> stepSize;
  std::optional<double> gamma;
  std::optional<int64_t> plateauPatience;
  std::optional<double> plateauFactor;
  std::optional<double> plateauThreshold;
  std::optional<int64_t> cooldown;
  std::optional<MonitorKind> monitor; // val_loss or val_acc
  std::optional<int64_t> earlyStopPatience;
  std::optional<double> minDelta;
  std::optional<double> gradClipNorm;

  // Checkpoints (Checkpoint.h).
  std::optional<std::string> checkpointDir;
  std::optional<int64_t> checkpointEvery;
  bool saveBestOnly = false;
  std::optional<int64_t> keepLast;
  std::optional<std::string> resumePath;

  std::optional<std::string> logPath; // --log (JsonLog.h)
};

/// The loop's settings, with model-dependent defaults resolved.
struct TrainingSettings {
  int64_t accumSteps = 1;
  double learningRate = 0.01;
  std::optional<int64_t> epochs;   // unset: until maxSteps
  std::optional<int64_t> maxSteps; // unset: until epochs
  SamplerOptions sampler;
  std::optional<std::string> logPath;

  /// totalSteps is filled in by runTraining (it needs the data size).
  ScheduleOptions schedule;
  /// The metric asked for; runTraining falls back to train_loss without
  /// validation data.
  MonitorKind monitor = MonitorKind::ValLoss;
  std::optional<int64_t> earlyStopPatience;
  double minDelta = 0;
  std::optional<double> gradClipNorm;

  std::optional<std::string> checkpointDir;
  std::optional<int64_t> checkpointEvery;
  bool saveBestOnly = false;
  int64_t keepLast = 3; // 0: keep all
  std::optional<std::string> resumePath;
};

/// Defaults: --accum-steps from the model, --lr 0.001 (torch.optim's for
/// sgd, adam and adamw), one epoch unless --max-steps is given. The sampler also
/// takes the input pipeline's settings from `data` (--augment, --normalize,
/// --no-prefetch).
TrainingSettings resolveTrainingSettings(const LoopOptions &options,
                                         const DataOptions &data,
                                         const ModelInfo &model);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_LOOP_TRAININGSETTINGS_H
