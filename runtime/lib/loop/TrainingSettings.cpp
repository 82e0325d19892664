//===- TrainingSettings.cpp - What the training loop is told --------------===//

#include "traincc/runtime/loop/TrainingSettings.h"

namespace traincc::rt {

TrainingSettings resolveTrainingSettings(const LoopOptions &options,
                                         const DataOptions &data,
                                         const ModelInfo &model) {
  TrainingSettings settings;
  settings.accumSteps = options.accumSteps.value_or(model.abi->accum_steps);
  // torch.optim's default for SGD, Adam and AdamW alike.
  settings.learningRate = options.lr.value_or(1e-3);
  settings.maxSteps = options.maxSteps;
  settings.epochs = options.epochs;
  if (!settings.epochs && !settings.maxSteps)
    settings.epochs = 1;
  settings.sampler.microBatch = model.microBatch;
  settings.sampler.shuffle = options.shuffle;
  settings.sampler.seed = options.seed;
  settings.sampler.classWeights = options.classWeights;
  configureSampler(settings.sampler, data, model); // --augment, prefetch
  settings.logPath = options.logPath;

  ScheduleOptions &schedule = settings.schedule;
  schedule.kind = options.schedule;
  schedule.baseLr = settings.learningRate;
  schedule.warmupSteps = options.warmupSteps.value_or(0);
  schedule.minLr = options.minLr.value_or(0);
  schedule.stepSize = options.stepSize.value_or(1);
  schedule.gamma = options.gamma.value_or(0.1);
  // PyTorch ReduceLROnPlateau's defaults.
  schedule.plateauPatience = options.plateauPatience.value_or(10);
  schedule.plateauFactor = options.plateauFactor.value_or(0.1);
  schedule.plateauThreshold = options.plateauThreshold.value_or(1e-4);
  schedule.cooldown = options.cooldown.value_or(0);
  settings.monitor = options.monitor.value_or(MonitorKind::ValLoss);
  settings.earlyStopPatience = options.earlyStopPatience;
  settings.minDelta = options.minDelta.value_or(0);
  settings.gradClipNorm = options.gradClipNorm;

  settings.checkpointDir = options.checkpointDir;
  settings.checkpointEvery = options.checkpointEvery;
  settings.saveBestOnly = options.saveBestOnly;
  settings.keepLast = options.keepLast.value_or(3);
  settings.resumePath = options.resumePath;
  return settings;
}

} // namespace traincc::rt
