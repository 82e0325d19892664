//===- TrainLoop.cpp - The training loop ----------------------------------===//

#include "traincc/runtime/TrainLoop.h"

#include "traincc/runtime/Evaluate.h"
#include "traincc/runtime/JsonLog.h"
#include "traincc/runtime/Random.h"

#include <chrono>
#include <cmath>

namespace traincc::rt {

uint64_t microStepSeed(uint64_t seed, uint64_t counter) {
  // The sampler keys its epochs with nthOutput(seed, e + 1); xor-ing a fixed
  // constant into the key gives dropout a stream of its own.
  constexpr uint64_t kDropoutStream = 0x64726f706f757421ull; // "dropout!"
  return SplitMix64::nthOutput(SplitMix64::mix(seed ^ kDropoutStream),
                               counter + 1);
}

TrainingSettings resolveTrainingSettings(const TrainerOptions &options,
                                         const ModelInfo &model) {
  TrainingSettings settings;
  settings.accumSteps = options.accumSteps.value_or(model.abi->accum_steps);
  settings.learningRate = options.lr.value_or(
      model.abi->optimizer == TRAINCC_OPTIMIZER_SGD ? 0.01 : 0.001);
  settings.maxSteps = options.maxSteps;
  settings.epochs = options.epochs;
  if (!settings.epochs && !settings.maxSteps)
    settings.epochs = 1;
  settings.sampler.microBatch = model.microBatch;
  settings.sampler.shuffle = options.shuffle;
  settings.sampler.seed = options.seed;
  settings.sampler.classWeights = options.classWeights;
  settings.logPath = options.logPath;
  return settings;
}

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// One training run: the sampler, the validation pass and the log around
/// the model's step functions.
class TrainingRun {
public:
  TrainingRun(const ModelInfo &model, ModelMemory &memory,
              const TrainingSettings &settings, TrainSampler sampler,
              std::optional<Evaluator> validation,
              std::optional<JsonLinesLog> log, std::FILE *progress)
      : model_(model), memory_(memory), settings_(settings),
        sampler_(std::move(sampler)), validation_(std::move(validation)),
        log_(std::move(log)), progress_(progress),
        schedule_(settings.learningRate), batch_(sampler_.makeBatch()) {}

  Error run();

private:
  /// Runs K micro-batches and one optimizer step; sets `loss` to the mean
  /// micro-batch loss.
  Error optimizerStep(double &loss);
  /// Validation, log and progress line of a finished epoch.
  Error endOfEpoch(EpochSummary &summary, Clock::time_point start);
  bool reachedMaxSteps() const {
    return settings_.maxSteps && position_.step >= *settings_.maxSteps;
  }
  bool reachedEpochs() const {
    return settings_.epochs && position_.epoch >= *settings_.epochs;
  }

  const ModelInfo &model_;
  ModelMemory &memory_;
  const TrainingSettings &settings_;
  TrainSampler sampler_;
  std::optional<Evaluator> validation_;
  std::optional<JsonLinesLog> log_;
  std::FILE *progress_;
  LearningRateSchedule schedule_;
  LoopPosition position_;
  MicroBatch batch_;
  double lastLearningRate_ = 0;
};

Error TrainingRun::optimizerStep(double &loss) {
  const traincc_model &abi = *model_.abi;
  const float gradScale = 1.0f / float(settings_.accumSteps);
  const void *target = nullptr;
  if (!batch_.labels.empty())
    target = batch_.labels.data();
  else if (!batch_.targets.empty())
    target = batch_.targets.data();
  double lossSum = 0;
  for (int64_t k = 0; k < settings_.accumSteps; ++k) {
    Expected<bool> filled = sampler_.next(batch_);
    if (!filled)
      return filled.takeError();
    if (!*filled)
      return makeError("internal error: the epoch ran out of micro-batches");
    float microLoss = 0;
    abi.micro_step(memory_.state.data(), memory_.workspace.data(),
                   batch_.inputs.data(), target, gradScale,
                   microStepSeed(settings_.sampler.seed,
                                 position_.microBatchesRun),
                   &microLoss);
    ++position_.microBatchesRun;
    lossSum += microLoss;
  }
  int64_t step = position_.step + 1;
  lastLearningRate_ = schedule_.at(step);
  abi.apply_step(memory_.state.data(), memory_.workspace.data(),
                 float(lastLearningRate_), step);
  position_.step = step;
  loss = lossSum / double(settings_.accumSteps);
  return Error::success();
}

Error TrainingRun::endOfEpoch(EpochSummary &summary, Clock::time_point start) {
  if (validation_) {
    Expected<EvaluationResult> result = validation_->run(memory_);
    if (!result)
      return result.takeError().withContext("validation");
    summary.valLoss = result->loss;
    summary.valAccuracy = result->accuracy;
  }
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
  std::snprintf(numbers, sizeof(numbers), ", %lld steps, %.2fs\n",
                (long long)summary.steps, summary.seconds);
  line += numbers;
  std::fputs(line.c_str(), progress_);
  std::fflush(progress_);
  // Plateau reduction, early stopping and checkpoints act here.
  return Error::success();
}

Error TrainingRun::run() {
  const int64_t stepsPerEpoch =
      sampler_.batchesPerEpoch() / settings_.accumSteps;
  bool hasLossScaler = false;
  for (int32_t i = 0; i < model_.abi->num_state; ++i)
    hasLossScaler |= model_.abi->state[i].kind == TRAINCC_STATE_LOSS_SCALER;

  while (!reachedEpochs() && !reachedMaxSteps()) {
    Clock::time_point start = Clock::now();
    EpochSummary summary;
    summary.epoch = position_.epoch + 1;
    double lossSum = 0;
    for (int64_t i = 0; i < stepsPerEpoch && !reachedMaxSteps(); ++i) {
      double loss = 0;
      if (Error err = optimizerStep(loss))
        return err;
      lossSum += loss;
      ++summary.steps;
      if (log_) {
        StepRecord record;
        record.step = position_.step;
        record.epoch = summary.epoch;
        record.loss = loss;
        record.lr = lastLearningRate_;
        if (Error err = log_->write(record))
          return err;
      }
      if (!std::isfinite(loss) && !hasLossScaler)
        return makeError("training diverged: the loss of step ",
                         position_.step, " (epoch ", summary.epoch, ") is ",
                         loss, "; try a smaller --lr");
    }
    summary.trainLoss = lossSum / double(summary.steps);
    ++position_.epoch;
    if (Error err = endOfEpoch(summary, start))
      return err;
    // The trailing partial group, if any, is dropped here.
    sampler_.startNextEpoch();
  }
  if (reachedMaxSteps())
    std::fprintf(progress_, "stopped after %lld optimizer steps (--max-steps)\n",
                 (long long)position_.step);
  if (log_)
    if (Error err = log_->close())
      return err;
  return Error::success();
}

} // namespace

Error runTraining(const ModelInfo &model, ModelMemory &memory,
                  TrainingData data, const TrainingSettings &settings,
                  std::FILE *progress) {
  int64_t trainSamples = data.train.size();
  Expected<TrainSampler> sampler =
      TrainSampler::create(data.train, settings.sampler);
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

  std::optional<JsonLinesLog> log;
  if (settings.logPath) {
    Expected<JsonLinesLog> opened = JsonLinesLog::open(*settings.logPath, false);
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

  TrainingRun run(model, memory, settings, sampler.take(),
                  std::move(validation), std::move(log), progress);
  return run.run();
}

} // namespace traincc::rt
