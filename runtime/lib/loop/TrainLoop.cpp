//===- TrainLoop.cpp - The training loop ----------------------------------===//

#include "traincc/runtime/loop/TrainLoop.h"

#include "traincc/runtime/exec/Evaluate.h"
#include "traincc/runtime/formats/JsonLog.h"
#include "traincc/runtime/loop/Checkpoint.h"
#include "traincc/runtime/loop/Monitors.h"
#include "traincc/runtime/loop/Progress.h"
#include "traincc/runtime/support/File.h"
#include "traincc/runtime/support/Random.h"
#include "traincc/runtime/support/Signals.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <sys/stat.h>

namespace traincc::rt {

uint64_t microStepSeed(uint64_t seed, uint64_t counter) {
  // The sampler keys its epochs with nthOutput(seed, e + 1); xor-ing a fixed
  // constant into the key gives dropout a stream of its own.
  constexpr uint64_t kDropoutStream = 0x64726f706f757421ull; // "dropout!"
  return SplitMix64::nthOutput(SplitMix64::mix(seed ^ kDropoutStream),
                               counter + 1);
}

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Creates `path` and its missing parents (mkdir -p).
Error makeDirectories(const std::string &path) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    std::string prefix = path.substr(0, slash);
    if (!prefix.empty() && ::mkdir(prefix.c_str(), 0777) != 0 &&
        errno != EEXIST)
      return makeError(prefix, ": cannot create the folder: ",
                       std::strerror(errno));
    if (slash == std::string::npos)
      break;
  }
  struct stat info;
  if (::stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    return makeError(path, ": not a folder");
  return Error::success();
}

std::string numberedPath(const std::string &dir, const char *format,
                         int64_t number) {
  char name[64];
  std::snprintf(name, sizeof(name), format, (long long)number);
  return dir + "/" + name;
}

/// One training run: the sampler, the validation pass, the log, the
/// schedule and the checkpoints around the model's step functions.
class TrainingRun {
public:
  TrainingRun(const ModelInfo &model, StepBackend &backend,
              const TrainingSettings &settings, TrainSampler sampler,
              std::optional<Evaluator> validation,
              std::optional<JsonLinesLog> log, std::FILE *progress,
              MonitorKind monitor, ReplicaSync *replicas)
      : model_(model), backend_(backend), memory_(backend.memory()),
        replicas_(replicas),
        settings_(settings),
        sampler_(std::move(sampler)), validation_(std::move(validation)),
        log_(std::move(log)), progress_(progress), monitor_(monitor),
        schedule_(settings.schedule, monitorMaximizes(monitor)),
        earlyStop_(monitorMaximizes(monitor), settings.minDelta),
        bestCheckpoint_(monitorMaximizes(monitor), 0),
        batch_(sampler_.makeBatch()), seed_(settings.sampler.seed),
        stepsPerEpoch_(sampler_.batchesPerEpoch() / settings.accumSteps) {}

  /// Continues from a checkpoint instead of the model's initial state.
  Error resume(const std::string &path);
  Expected<TrainingOutcome> run();

private:
  /// What one optimizer step did.
  struct StepOutcome {
    std::optional<double> gradNorm; // when measured
    double lossScale = 1; // the scale of this step's gradients
    bool skipped = false; // loss scaling found inf/NaN gradients
  };
  /// Runs K micro-batches and one optimizer step; the loss stays on the
  /// device until finishPendingSteps().
  Error optimizerStep(StepOutcome &outcome);
  /// Reads the losses of the steps run since the last call and does what
  /// each step's loss is for, in step order: the epoch's loss sum, the
  /// progress line, the log record and the divergence check. Called every
  /// step on the CPU or when the log or a live progress line shows each
  /// loss, else (a device without them) every kMaxPendingSteps steps and
  /// before anything that depends on them (checkpoints, interrupts, the
  /// end of an epoch), so that the host does not wait for the device each
  /// step just to hand over its loss.
  Error finishPendingSteps();
  /// Reads the loss scale the next step's gradients get (after a resume,
  /// the checkpoint's).
  Error readLossScale();
  /// Validation, log and progress lines, then the epoch-end decisions and
  /// the epoch checkpoint; `stop` is set by early stopping.
  Error endOfEpoch(EpochSummary &summary, Clock::time_point start,
                   bool &stop);
  double monitoredValue(const EpochSummary &summary) const;
  Error writeCheckpoint(const std::string &path);
  /// The settings a checkpoint of this run records (Checkpoint.h).
  ResumeSettings resumeSettings() const;
  /// Records a checkpoint this run wrote and deletes the oldest of `kind`
  /// beyond --keep-last.
  void rotate(std::vector<std::string> &kind, const std::string &path);
  Expected<TrainingOutcome> interrupted(int signal);
  bool reachedMaxSteps() const {
    return settings_.maxSteps && position_.step >= *settings_.maxSteps;
  }
  bool reachedEpochs() const {
    return settings_.epochs && position_.epoch >= *settings_.epochs;
  }
  /// The signal that stops the run after this step: with replicas, the one
  /// they agreed on in the step's loss all-reduce (agreedSignal_), or after
  /// an epoch in a collective of its own, so that all stop after one step.
  Expected<int> interruptSignal(bool atEpochEnd);
  bool writesOutputs() const { return !replicas_ || rank() == 0; }
  int rank() const { return replicas_ ? replicas_->replicas().rank() : 0; }
  int replicaCount() const {
    return replicas_ ? replicas_->replicas().size() : 1;
  }

  const ModelInfo &model_;
  // Steps run on the backend; memory_ is its host arena, current only after
  // backend_.syncStateToHost() (StepBackend.h).
  StepBackend &backend_;
  ModelMemory &memory_;
  ReplicaSync *replicas_; // data parallelism, or null
  int agreedSignal_ = 0;
  const TrainingSettings &settings_;
  TrainSampler sampler_;
  std::optional<Evaluator> validation_;
  std::optional<JsonLinesLog> log_;
  std::FILE *progress_;
  MonitorKind monitor_;
  LearningRateSchedule schedule_;
  ImprovementTracker earlyStop_;
  ImprovementTracker bestCheckpoint_;
  LoopPosition position_;
  MicroBatch batch_;
  std::vector<float> microLosses_;
  /// A step whose loss has not been read yet.
  struct PendingStep {
    StepOutcome outcome; // all but the loss
    int64_t step, epoch, stepInEpoch;
    double lr;
  };
  std::vector<PendingStep> pending_;
  static constexpr size_t kMaxPendingSteps = 64;
  // Only a device runs ahead of the host; the CPU's losses are there at
  // once, so a diverging run stops at its step.
  const bool deferLosses_ = std::strcmp(backend_.name(), "cpu") != 0;
  bool hasLossScaler_ = false;
  uint64_t seed_;
  const int64_t stepsPerEpoch_;
  double lastLearningRate_ = 0;
  // Loss scaling (ModelABI.h): the scale the next step's gradients get, as
  // the last apply_step left it in the arena.
  const bool lossScaling_ =
      model_.abi->loss_scaling != TRAINCC_LOSS_SCALING_NONE;
  float lossScale_ = 1;
  // The epoch in progress.
  bool epochInProgress_ = false;
  int64_t epochSteps_ = 0;
  double epochLossSum_ = 0;
  int64_t epochSkipped_ = 0;
  std::vector<uint8_t> epochStartParams_;
  // Checkpoints written by this run, oldest first.
  std::vector<std::string> epochCheckpoints_, stepCheckpoints_;
  // The live line on a terminal (Progress.h); cleared before other output.
  ProgressDisplay display_{progress_};
};

Error TrainingRun::readLossScale() {
  if (!lossScaling_)
    return Error::success();
  Expected<LossScalerReading> reading = backend_.readLossScaler();
  if (!reading)
    return reading.takeError();
  lossScale_ = reading->scale;
  return Error::success();
}

Error TrainingRun::optimizerStep(StepOutcome &outcome) {
  const traincc_model &abi = *model_.abi;
  const float gradScale = 1.0f / float(settings_.accumSteps);
  const void *target = nullptr;
  if (!batch_.labels.empty())
    target = batch_.labels.data();
  else if (!batch_.targets.empty())
    target = batch_.targets.data();
  // On a device, micro-step k runs while the sampler fills batch k+1.
  for (int64_t k = 0; k < settings_.accumSteps; ++k) {
    Expected<bool> filled = sampler_.next(batch_);
    if (!filled)
      return filled.takeError();
    if (!*filled)
      return makeError("internal error: the epoch ran out of micro-batches");
    if (Error err = backend_.microStep(
            batch_.inputData(), target, gradScale,
            microStepSeed(seed_, position_.microBatchesRun *
                                         uint64_t(replicaCount()) +
                                     uint64_t(rank()))))
      return err;
    ++position_.microBatchesRun;
  }
  // The mean of the replicas' gradients, before anything reads them.
  if (replicas_)
    if (Error err = replicas_->averageGradients(backend_))
      return err;
  outcome.gradNorm.reset();
  outcome.lossScale = lossScaling_ ? double(lossScale_) : 1.0;
  if (log_ || settings_.gradClipNorm) {
    // The monitors read (and clipping writes) the gradients on the host.
    if (Error err = backend_.syncGradientsToHost())
      return err;
    // With loss scaling the accumulators hold the gradients times the
    // scale until apply_step unscales them: the norm is of the unscaled
    // gradients, and scaling the scaled ones by clip_grad_norm_'s factor
    // from it is GradScaler's unscale_, clip, step (inf/NaN norms give
    // NaN gradients, which apply_step skips).
    double norm =
        gradientNorm(abi, memory_.state.data()) / outcome.lossScale;
    if (settings_.gradClipNorm) {
      clipGradients(abi, memory_.state.data(), norm, *settings_.gradClipNorm);
      if (Error err = backend_.syncGradientsToDevice())
        return err;
    }
    outcome.gradNorm = norm;
  }
  // A step that loss scaling skips is logged, not applied: the schedule and
  // apply_step's step count (Adam's bias correction) only advance for
  // applied steps.
  int64_t applied = position_.appliedSteps + 1;
  lastLearningRate_ = schedule_.at(applied);
  if (Error err = backend_.applyStep(float(lastLearningRate_), applied))
    return err;
  outcome.skipped = false;
  if (lossScaling_) {
    Expected<LossScalerReading> reading = backend_.readLossScaler();
    if (!reading)
      return reading.takeError();
    outcome.skipped = reading->foundInf;
    lossScale_ = reading->scale;
  }
  if (!outcome.skipped)
    position_.appliedSteps = applied;
  ++position_.step;
  return Error::success();
}

Expected<int> TrainingRun::interruptSignal(bool atEpochEnd) {
  if (!replicas_)
    return InterruptGuard::pendingSignal();
  if (!atEpochEnd)
    return agreedSignal_;
  float flag = InterruptGuard::pendingSignal() ? 1.0f : 0.0f;
  if (Error err =
          replicas_->replicas().allReduceSum(&flag, 1, "end-of-epoch signal"))
    return err;
  if (flag == 0)
    return 0;
  return InterruptGuard::pendingSignal() ? InterruptGuard::pendingSignal()
                                         : SIGTERM;
}

Error TrainingRun::finishPendingSteps() {
  if (pending_.empty())
    return Error::success();
  microLosses_.clear();
  if (Error err = backend_.collectLosses(microLosses_))
    return err;
  const size_t k = size_t(settings_.accumSteps);
  if (microLosses_.size() != pending_.size() * k)
    return makeError("internal error: ", microLosses_.size(),
                     " micro-step losses for ", pending_.size(),
                     " steps of ", k);
  if (replicas_) {
    // The loss of a global micro-batch: the mean of its slices' losses;
    // whether any replica was signalled rides along.
    microLosses_.push_back(InterruptGuard::pendingSignal() ? 1.0f : 0.0f);
    if (Error err = replicas_->replicas().allReduceSum(
            microLosses_.data(), microLosses_.size(), "loss all-reduce"))
      return err;
    const bool signalled = microLosses_.back() > 0;
    microLosses_.pop_back();
    for (float &loss : microLosses_)
      loss /= float(replicaCount());
    agreedSignal_ = 0;
    if (signalled)
      agreedSignal_ = InterruptGuard::pendingSignal()
                          ? InterruptGuard::pendingSignal()
                          : SIGTERM;
  }
  for (size_t i = 0; i < pending_.size(); ++i) {
    PendingStep &p = pending_[i];
    double lossSum = 0;
    for (size_t j = 0; j < k; ++j)
      lossSum += microLosses_[i * k + j];
    const double loss = lossSum / double(settings_.accumSteps);
    epochLossSum_ += loss;
    display_.step(p.stepInEpoch, loss);
    if (log_) {
      StepRecord record;
      record.step = p.step;
      record.epoch = p.epoch;
      record.loss = loss;
      record.lr = p.lr;
      record.lossScale = p.outcome.lossScale;
      record.skipped = p.outcome.skipped;
      record.gradNorm = p.outcome.gradNorm;
      if (Error err = log_->write(record))
        return err;
    }
    if (!std::isfinite(loss) && !hasLossScaler_)
      return makeError("training diverged: the loss of step ", p.step,
                       " (epoch ", p.epoch, ") is ", loss,
                       "; try a smaller --lr");
  }
  pending_.clear();
  return Error::success();
}

double TrainingRun::monitoredValue(const EpochSummary &summary) const {
  switch (monitor_) {
  case MonitorKind::ValLoss:
    return summary.valLoss.value_or(NAN);
  case MonitorKind::ValAcc:
    return summary.valAccuracy.value_or(NAN);
  case MonitorKind::TrainLoss:
    break;
  }
  return summary.trainLoss;
}

Error TrainingRun::endOfEpoch(EpochSummary &summary, Clock::time_point start,
                              bool &stop) {
  display_.clear();
  const traincc_model &abi = *model_.abi;
  if (replicas_) {
    // Each replica's running statistics follow its own slices; all
    // validate (and rank 0 logs and saves) with rank 0's, as DDP's
    // broadcast of rank 0's buffers leaves them.
    if (Error err = backend_.syncStateToHost())
      return err;
    if (Error err =
            replicas_->broadcastRunningStatistics(memory_.state.data()))
      return err;
    if (Error err = backend_.syncStateToDevice())
      return err;
  }
  if (validation_) {
    // Data-parallel: each replica evaluates its share of the batches.
    EvaluationShard shard;
    if (replicas_) {
      shard.index = rank();
      shard.count = replicas_->replicas().size();
      shard.sumOverReplicas = [this](std::vector<float> &values) {
        return replicas_->replicas().allReduceSum(
            values.data(), values.size(), "validation metrics all-reduce");
      };
    }
    Expected<EvaluationResult> result = validation_->run(backend_, shard);
    if (!result)
      return result.takeError().withContext("validation");
    summary.valLoss = result->loss;
    summary.valAccuracy = result->accuracy;
  }
  // The log, the epoch checkpoint and the caller (export) read the arena.
  if (Error err = backend_.syncStateToHost())
    return err;
  summary.learningRate = lastLearningRate_;
  summary.seconds = secondsSince(start);
  if (log_) {
    EpochRecord record;
    record.epoch = summary.epoch;
    record.trainLoss = summary.trainLoss;
    record.valLoss = summary.valLoss;
    record.valAcc = summary.valAccuracy;
    record.lr = summary.learningRate;
    record.seconds = summary.seconds;
    record.paramChange =
        parameterChange(abi, memory_.state.data(), epochStartParams_);
    record.bnStats = runningStatSummaries(abi, memory_.state.data());
    if (Error err = log_->write(record))
      return err;
  }
  std::string line = strCat("epoch ", summary.epoch);
  if (settings_.epochs)
    line += strCat("/", *settings_.epochs);
  char numbers[160];
  std::snprintf(numbers, sizeof(numbers), ": train_loss %.4f", summary.trainLoss);
  line += numbers;
  if (summary.valLoss) {
    std::snprintf(numbers, sizeof(numbers), ", val_loss %.4f", *summary.valLoss);
    line += numbers;
  }
  if (summary.valAccuracy) {
    std::snprintf(numbers, sizeof(numbers), ", val_acc %.4f",
                  *summary.valAccuracy);
    line += numbers;
  }
  std::snprintf(numbers, sizeof(numbers), ", %lld steps", (long long)summary.steps);
  line += numbers;
  if (summary.skippedSteps > 0) {
    std::snprintf(numbers, sizeof(numbers), " (%lld skipped: inf/NaN gradients)",
                  (long long)summary.skippedSteps);
    line += numbers;
  }
  std::snprintf(numbers, sizeof(numbers), ", %.2fs\n", summary.seconds);
  line += numbers;
  std::fputs(line.c_str(), progress_);

  // The decisions, all on the same metric.
  const double metric = monitoredValue(summary);
  const char *metricName = monitorName(monitor_);
  if (schedule_.endOfEpoch(metric))
    std::fprintf(progress_,
                 "%s has not improved for more than %lld epochs: learning "
                 "rate reduced to %s\n",
                 metricName, (long long)settings_.schedule.plateauPatience,
                 formatDouble(schedule_.state().plateauLr).c_str());
  earlyStop_.update(summary.epoch, metric);
  bool improved = bestCheckpoint_.update(summary.epoch, metric);
  if (settings_.earlyStopPatience &&
      earlyStop_.state().badEpochs >= *settings_.earlyStopPatience) {
    stop = true;
    const EarlyStopState &s = earlyStop_.state();
    if (log_) {
      EarlyStopRecord record{summary.epoch, s.bestEpoch, s.best, metricName};
      if (Error err = log_->write(record))
        return err;
    }
    std::fprintf(progress_,
                 "early stopping after epoch %lld: %s has not improved by "
                 "more than %s for %lld epochs (best %.4f at epoch %lld)\n",
                 (long long)summary.epoch, metricName,
                 formatDouble(settings_.minDelta).c_str(),
                 (long long)s.badEpochs, s.best, (long long)s.bestEpoch);
  }
  if (settings_.checkpointDir && (!settings_.saveBestOnly || improved)) {
    std::string path =
        numberedPath(*settings_.checkpointDir, "epoch-%04lld.ckpt",
                     summary.epoch);
    if (Error err = writeCheckpoint(path))
      return err;
    rotate(epochCheckpoints_, path);
  }
  std::fflush(progress_);
  return Error::success();
}

Error TrainingRun::writeCheckpoint(const std::string &path) {
  // The replicas hold the same state; rank 0 writes it.
  if (!writesOutputs())
    return Error::success();
  display_.clear();
  RunState state;
  state.position = position_;
  state.epochInProgress = epochInProgress_;
  state.epochSteps = epochSteps_;
  state.epochLossSum = epochLossSum_;
  state.epochSkipped = epochSkipped_;
  state.lastLearningRate = lastLearningRate_;
  state.schedule = schedule_.state();
  state.earlyStop = earlyStop_.state();
  state.bestCheckpoint = bestCheckpoint_.state();
  state.loader = sampler_.state();
  state.settings = resumeSettings();
  // Lend the snapshot rather than copy it.
  if (epochInProgress_)
    state.epochStartParams.swap(epochStartParams_);
  Error err = backend_.syncStateToHost();
  if (!err)
    err = saveCheckpoint(path, *model_.abi, memory_.state.data(), state);
  if (epochInProgress_)
    state.epochStartParams.swap(epochStartParams_);
  if (err)
    return std::move(err).withContext("checkpoint");
  std::fprintf(progress_, "checkpoint: %s\n", path.c_str());
  return Error::success();
}

ResumeSettings TrainingRun::resumeSettings() const {
  ResumeSettings s;
  s.seed = settings_.sampler.seed;
  s.accumSteps = settings_.accumSteps;
  s.learningRate = settings_.learningRate;
  s.epochs = settings_.epochs;
  s.maxSteps = settings_.maxSteps;
  s.schedule = settings_.schedule;
  s.monitor = monitor_;
  return s;
}

void TrainingRun::rotate(std::vector<std::string> &kind,
                         const std::string &path) {
  if (!writesOutputs())
    return;
  kind.erase(std::remove(kind.begin(), kind.end(), path), kind.end());
  kind.push_back(path);
  while (settings_.keepLast > 0 && int64_t(kind.size()) > settings_.keepLast) {
    if (std::remove(kind.front().c_str()) != 0)
      std::fprintf(progress_, "warning: cannot delete old checkpoint %s: %s\n",
                   kind.front().c_str(), std::strerror(errno));
    kind.erase(kind.begin());
  }
}

Expected<TrainingOutcome> TrainingRun::interrupted(int signal) {
  std::string path = settings_.checkpointDir
                         ? *settings_.checkpointDir + "/interrupted.ckpt"
                         : std::string("interrupted.ckpt");
  if (Error err = writeCheckpoint(path))
    return err;
  std::fprintf(progress_,
               "interrupted by %s after optimizer step %lld (epoch %lld); to "
               "continue, run the same command with --resume %s\n",
               signalName(signal), (long long)position_.step,
               (long long)(position_.epoch + (epochInProgress_ ? 1 : 0)),
               path.c_str());
  std::fflush(progress_);
  if (log_)
    if (Error err = log_->close())
      return err;
  return TrainingOutcome{signal, path};
}

Error TrainingRun::resume(const std::string &path) {
  Expected<RunState> state =
      loadCheckpoint(path, *model_.abi, memory_.state.data());
  if (!state)
    return state.takeError().withContext("--resume");
  if (Error err = backend_.syncStateToDevice())
    return err;
  if (Error err = sampler_.restore(state->loader))
    return std::move(err).withContext(strCat("--resume: ", path));
  // A checkpoint written before settings were recorded (no SETS section)
  // still knows its seed.
  ResumeSettings given = resumeSettings();
  ResumeSettings saved = given;
  if (state->settings)
    saved = *state->settings;
  else
    saved.seed = state->loader.seed;
  Expected<std::vector<std::string>> warnings =
      compareResumeSettings(saved, given);
  if (!warnings)
    return warnings.takeError().withContext(strCat("--resume: ", path));
  for (const std::string &warning : *warnings)
    std::fprintf(stderr, "warning: --resume: %s: %s\n", path.c_str(),
                 warning.c_str());
  if (state->epochInProgress) {
    size_t expected = snapshotTrainable(*model_.abi, memory_.state.data()).size();
    if (state->epochStartParams.size() != expected)
      return makeError("--resume: ", path, ": the parameter snapshot holds ",
                       int64_t(state->epochStartParams.size()),
                       " bytes, the model's trainable tensors ",
                       int64_t(expected));
    // Mid-epoch, each step done consumed K micro-batches.
    uint64_t consumed = uint64_t(state->epochSteps * settings_.accumSteps);
    if (state->loader.nextBatch != consumed)
      return makeError("--resume: ", path, ": the checkpoint was written ",
                       state->epochSteps, " optimizer steps and ",
                       state->loader.nextBatch,
                       " micro-batches into its epoch; with --accum-steps ",
                       settings_.accumSteps,
                       " it can only continue at an epoch end");
  }
  position_ = state->position;
  epochInProgress_ = state->epochInProgress;
  epochSteps_ = state->epochSteps;
  epochLossSum_ = state->epochLossSum;
  epochSkipped_ = state->epochSkipped;
  epochStartParams_ = std::move(state->epochStartParams);
  lastLearningRate_ = state->lastLearningRate;
  // A plateau's reductions so far carry over to a changed --lr.
  if (saved.learningRate != given.learningRate && saved.learningRate > 0)
    state->schedule.plateauLr *= given.learningRate / saved.learningRate;
  schedule_.restore(state->schedule);
  earlyStop_.restore(state->earlyStop);
  bestCheckpoint_.restore(state->bestCheckpoint);
  // Dropout seeds follow the interrupted run's seed, like the data order.
  seed_ = state->loader.seed;
  std::fprintf(progress_, "resuming from %s: %lld optimizer steps done, ",
               path.c_str(), (long long)position_.step);
  if (epochInProgress_)
    std::fprintf(progress_, "%lld of %lld in epoch %lld\n",
                 (long long)epochSteps_, (long long)stepsPerEpoch_,
                 (long long)position_.epoch + 1);
  else
    std::fprintf(progress_, "%lld epochs finished\n",
                 (long long)position_.epoch);
  return Error::success();
}

Expected<TrainingOutcome> TrainingRun::run() {
  InterruptGuard interrupts;
  for (int32_t i = 0; i < model_.abi->num_state; ++i)
    hasLossScaler_ |= model_.abi->state[i].kind == TRAINCC_STATE_LOSS_SCALER;
  // The scale of the first step's gradients: the compiled initial scale, or
  // where the resumed run left it (the checkpoint holds the whole arena).
  if (Error err = readLossScale())
    return err;

  bool stop = false;
  // A resumed epoch in progress is finished even when the limits are met.
  while (!stop &&
         (epochInProgress_ || (!reachedEpochs() && !reachedMaxSteps()))) {
    Clock::time_point start = Clock::now();
    if (!epochInProgress_) {
      epochInProgress_ = true;
      epochSteps_ = 0;
      epochLossSum_ = 0;
      epochSkipped_ = 0;
      if (Error err = backend_.syncStateToHost())
        return err;
      epochStartParams_ = snapshotTrainable(*model_.abi, memory_.state.data());
    }
    display_.startEpoch(position_.epoch + 1, settings_.epochs, stepsPerEpoch_);
    while (epochSteps_ < stepsPerEpoch_ && !reachedMaxSteps()) {
      StepOutcome outcome;
      if (Error err = optimizerStep(outcome))
        return err;
      ++epochSteps_;
      epochSkipped_ += outcome.skipped ? 1 : 0;
      pending_.push_back({outcome, position_.step, position_.epoch + 1,
                          epochSteps_, lastLearningRate_});
      // Replicas reduce their losses together, hence every step.
      if (log_ || display_.live() || !deferLosses_ || replicas_ ||
          pending_.size() >= kMaxPendingSteps)
        if (Error err = finishPendingSteps())
          return err;
      Expected<int> signal = interruptSignal(false);
      if (!signal)
        return signal.takeError();
      if (*signal) {
        if (Error err = finishPendingSteps())
          return err;
        return interrupted(*signal);
      }
      if (settings_.checkpointDir && settings_.checkpointEvery &&
          position_.step % *settings_.checkpointEvery == 0 &&
          epochSteps_ < stepsPerEpoch_ && !reachedMaxSteps()) {
        if (Error err = finishPendingSteps())
          return err;
        // Steps that end an epoch get the epoch checkpoint instead.
        std::string path = numberedPath(*settings_.checkpointDir,
                                        "step-%08lld.ckpt", position_.step);
        if (Error err = writeCheckpoint(path))
          return err;
        rotate(stepCheckpoints_, path);
      }
    }
    if (Error err = finishPendingSteps())
      return err;
    EpochSummary summary;
    summary.epoch = position_.epoch + 1;
    summary.steps = epochSteps_;
    summary.skippedSteps = epochSkipped_;
    summary.trainLoss =
        epochSteps_ ? epochLossSum_ / double(epochSteps_) : double(NAN);
    ++position_.epoch;
    epochInProgress_ = false;
    // The trailing partial group, if any, is dropped here. The next epoch's
    // order is drawn before the epoch checkpoint, which resumes there.
    sampler_.startNextEpoch();
    if (Error err = endOfEpoch(summary, start, stop))
      return err;
    Expected<int> signal = interruptSignal(true);
    if (!signal)
      return signal.takeError();
    if (*signal)
      return interrupted(*signal);
  }
  if (!stop && reachedMaxSteps())
    std::fprintf(progress_, "stopped after %lld optimizer steps (--max-steps)\n",
                 (long long)position_.step);
  if (log_)
    if (Error err = log_->close())
      return err;
  return TrainingOutcome{};
}

} // namespace

Expected<TrainingOutcome> runTraining(const ModelInfo &model,
                                      StepBackend &backend, TrainingData data,
                                      const TrainingSettings &settings,
                                      std::FILE *progress,
                                      ReplicaSync *replicas) {
  int64_t trainSamples = data.train.size();
  SamplerOptions samplerOptions = settings.sampler;
  const bool writesOutputs = !replicas || replicas->replicas().rank() == 0;
  if (replicas) {
    samplerOptions.replicas = replicas->replicas().size();
    samplerOptions.replica = replicas->replicas().rank();
  }
  Expected<TrainSampler> sampler =
      TrainSampler::create(data.train, samplerOptions);
  if (!sampler)
    return sampler.takeError();
  int64_t microBatches = sampler->batchesPerEpoch();
  if (microBatches < settings.accumSteps)
    return makeError("--accum-steps ", settings.accumSteps, ": ", trainSamples,
                     " training samples make only ", microBatches,
                     " micro-batches of ", model.microBatch,
                     " per epoch, fewer than one optimizer step needs");

  std::optional<Evaluator> validation;
  int64_t validationSamples = 0;
  if (data.validation) {
    validationSamples = data.validation->size();
    Expected<Evaluator> evaluator =
        Evaluator::create(model, std::move(*data.validation));
    if (!evaluator)
      return evaluator.takeError().withContext("validation");
    validation.emplace(evaluator.take());
  }

  // The metric of plateau, early stopping and --save-best-only.
  const bool monitorUsed = settings.schedule.kind == ScheduleKind::Plateau ||
                           settings.earlyStopPatience || settings.saveBestOnly;
  MonitorKind monitor = settings.monitor;
  if (monitor == MonitorKind::ValAcc && !model.crossEntropy())
    return makeError("--monitor val_acc: the model's ",
                     lossKindName(model.abi->loss),
                     " loss has no accuracy; monitor val_loss");
  if (!validation)
    monitor = MonitorKind::TrainLoss;

  if (settings.gradClipNorm)
    if (Error err = checkGradientsClippable(*model.abi))
      return err;
  // A checkpoint folder that cannot be written should fail now, not after
  // the first epoch.
  if (settings.checkpointDir && writesOutputs) {
    if (Error err = makeDirectories(*settings.checkpointDir))
      return std::move(err).withContext("--checkpoint-dir");
    Expected<AtomicFileWriter> probe =
        AtomicFileWriter::create(*settings.checkpointDir + "/interrupted.ckpt");
    if (!probe)
      return probe.takeError().withContext("--checkpoint-dir");
  }

  std::optional<JsonLinesLog> log;
  if (settings.logPath && writesOutputs) {
    // A resumed run continues its log.
    Expected<JsonLinesLog> opened = JsonLinesLog::open(
        *settings.logPath, settings.resumePath.has_value());
    if (!opened)
      return opened.takeError().withContext("--log");
    log.emplace(opened.take());
  }

  int64_t stepsPerEpoch = microBatches / settings.accumSteps;
  std::fprintf(progress,
               "training on %lld samples: %lld optimizer steps per epoch, "
               "each %lld micro-batch%s of %lld",
               (long long)trainSamples, (long long)stepsPerEpoch,
               (long long)settings.accumSteps,
               settings.accumSteps == 1 ? "" : "es",
               (long long)model.microBatch);
  if (validationSamples)
    std::fprintf(progress, "; validating on %lld samples",
                 (long long)validationSamples);
  std::fputs("\n", progress);
  if (replicas)
    std::fprintf(progress,
                 "data-parallel: %d replicas over %s; each step's global "
                 "micro-batch of %lld is %d slices of %lld; gradients "
                 "averaged %s%s\n",
                 replicas->replicas().size(),
                 replicas->replicas().description().c_str(),
                 (long long)(model.microBatch * replicas->replicas().size()),
                 replicas->replicas().size(), (long long)model.microBatch,
                 replicas->gradientPath().c_str(),
                 traincc_replica_count() > 1
                     ? "; BatchNorm statistics over the global batch "
                       "(--sync-bn)"
                     : "");
  if (monitorUsed && monitor != settings.monitor)
    std::fprintf(progress,
                 "no validation data: monitoring train_loss instead of %s\n",
                 monitorName(settings.monitor));

  // Cosine decays over the whole run.
  TrainingSettings resolved = settings;
  int64_t total = INT64_MAX;
  if (settings.epochs)
    total = *settings.epochs * stepsPerEpoch;
  if (settings.maxSteps)
    total = std::min(total, *settings.maxSteps);
  resolved.schedule.totalSteps = total;

  TrainingRun run(model, backend, resolved, sampler.take(),
                  std::move(validation), std::move(log), progress, monitor,
                  replicas);
  if (settings.resumePath)
    if (Error err = run.resume(*settings.resumePath))
      return err;
  if (replicas) {
    // Every replica must run the same model on the same data with the same
    // loop; then they start from rank 0's state.
    uint64_t fingerprint = 0xCBF29CE484222325ull;
    auto mix = [&](uint64_t value) {
      fingerprint = (fingerprint ^ value) * 0x100000001B3ull;
    };
    mix(model.abi->state_bytes);
    mix(uint64_t(model.abi->num_state));
    mix(uint64_t(trainSamples));
    mix(uint64_t(validationSamples));
    mix(settings.sampler.seed);
    mix(uint64_t(settings.accumSteps));
    mix(uint64_t(total));
    mix(settings.resumePath.has_value());
    // With --sync-bn every micro_step meets the others in collectives.
    mix(uint64_t(traincc_replica_count()));
    if (Error err = replicas->checkSameRun(
            fingerprint, "the model, data sizes, --seed, --accum-steps, "
                         "--epochs/--max-steps, --resume or --sync-bn"))
      return err;
    if (Error err = backend.syncStateToHost())
      return err;
    if (Error err = replicas->broadcastState(backend.memory().state.data()))
      return err;
    if (Error err = backend.syncStateToDevice())
      return err;
  }
  return run.run();
}

} // namespace traincc::rt
