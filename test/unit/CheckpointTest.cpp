//===- CheckpointTest.cpp - Checkpoint files, monitors, log lines ---------===//

#include "TestUtil.h"

#include "traincc/runtime/formats/JsonLog.h"
#include "traincc/runtime/loop/Checkpoint.h"
#include "traincc/runtime/loop/Monitors.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace traincc::rt;
using namespace traincc::rt::test;
using ::testing::HasSubstr;

namespace {

/// A descriptor with a parameter, its gradient and a running mean.
struct TinyModel {
  int64_t ioShape[2] = {2, 2};
  int64_t wShape[1] = {3};
  traincc_state_tensor state[3];
  uint8_t initial[192] = {};
  traincc_model model;

  static void micro(uint8_t *, uint8_t *, const void *, const void *, float,
                    uint64_t, float *) {}
  static void apply(uint8_t *, uint8_t *, float, int64_t) {}
  static void eval(uint8_t *, uint8_t *, const void *, const void *, void *,
                   float *) {}

  TinyModel() {
    std::memset(&model, 0, sizeof(model));
    state[0] = {"w", TRAINCC_STATE_TRAINABLE, TRAINCC_DTYPE_F32, 1, wShape,
                0, 12, -1, -1};
    state[1] = {"w.grad", TRAINCC_STATE_GRADIENT, TRAINCC_DTYPE_F32, 1,
                wShape, 64, 12, 0, -1};
    state[2] = {"bn.running_mean", TRAINCC_STATE_RUNNING_MEAN,
                TRAINCC_DTYPE_F32, 1, wShape, 128, 12, -1, -1};
    model.abi_version = TRAINCC_ABI_VERSION;
    model.loss_scale_state = model.found_inf_state = -1;
    model.model_name = "tiny";
    model.micro_batch = 2;
    model.accum_steps = 1;
    model.num_classes = 2;
    model.input = {"x", TRAINCC_DTYPE_F32, 2, ioShape};
    model.target = {"y", TRAINCC_DTYPE_I64, 1, ioShape};
    model.output = {"o", TRAINCC_DTYPE_F32, 2, ioShape};
    model.num_state = 3;
    model.state = state;
    model.state_bytes = sizeof(initial);
    model.initial_state = initial;
    model.micro_step = micro;
    model.apply_step = apply;
    model.eval_step = eval;
  }
  float *floats(uint8_t *arena, int index) {
    return reinterpret_cast<float *>(arena + state[index].offset);
  }
};

RunState sampleState() {
  RunState s;
  s.position = {17, 16, 2, 34};
  s.epochInProgress = true;
  s.epochSteps = 5;
  s.epochLossSum = 1.0 / 3.0;
  s.epochSkipped = 2;
  s.epochStartParams = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  s.lastLearningRate = 0.0125;
  s.schedule = {0.025, std::numeric_limits<double>::infinity(), 2, 1, 3};
  s.earlyStop = {0.75, 2, 1};
  s.bestCheckpoint = {-std::numeric_limits<double>::infinity(), 0, 0};
  s.loader.seed = 7;
  s.loader.epoch = 2;
  s.loader.nextBatch = 10;
  s.loader.datasetSize = 100;
  s.loader.microBatch = 2;
  ResumeSettings settings;
  settings.seed = 7;
  settings.accumSteps = 3;
  settings.learningRate = 0.05;
  settings.maxSteps = 40;
  settings.schedule.kind = ScheduleKind::Plateau;
  settings.schedule.warmupSteps = 4;
  settings.schedule.plateauFactor = 0.5;
  settings.monitor = MonitorKind::ValAcc;
  s.settings = settings;
  return s;
}

// Tests that everything written comes back bit for bit.
TEST(Checkpoint, RoundTrips) {
  TinyModel tiny;
  TempDir dir;
  std::vector<uint8_t> arena(192);
  for (size_t i = 0; i < arena.size(); ++i)
    arena[i] = uint8_t(i * 7 + 1);
  RunState saved = sampleState();
  std::string path = dir.file("a.ckpt");
  EXPECT_NO_ERROR(saveCheckpoint(path, tiny.model, arena.data(), saved));
  std::vector<uint8_t> restored(192, 0);
  Expected<RunState> loaded =
      loadCheckpoint(path, tiny.model, restored.data());
  ASSERT_OK(loaded);
  EXPECT_EQ(restored, arena);
  EXPECT_EQ(loaded->position.step, 17);
  EXPECT_EQ(loaded->position.appliedSteps, 16);
  EXPECT_EQ(loaded->position.epoch, 2);
  EXPECT_EQ(loaded->position.microBatchesRun, 34u);
  EXPECT_TRUE(loaded->epochInProgress);
  EXPECT_EQ(loaded->epochSteps, 5);
  EXPECT_EQ(loaded->epochLossSum, 1.0 / 3.0);
  EXPECT_EQ(loaded->epochSkipped, 2);
  EXPECT_EQ(loaded->epochStartParams, saved.epochStartParams);
  EXPECT_EQ(loaded->lastLearningRate, 0.0125);
  EXPECT_EQ(loaded->schedule.plateauLr, 0.025);
  EXPECT_EQ(loaded->schedule.best, std::numeric_limits<double>::infinity());
  EXPECT_EQ(loaded->schedule.badEpochs, 2);
  EXPECT_EQ(loaded->schedule.cooldownLeft, 1);
  EXPECT_EQ(loaded->schedule.epochsSeen, 3);
  EXPECT_EQ(loaded->earlyStop.best, 0.75);
  EXPECT_EQ(loaded->earlyStop.bestEpoch, 2);
  EXPECT_EQ(loaded->earlyStop.badEpochs, 1);
  EXPECT_EQ(loaded->bestCheckpoint.best,
            -std::numeric_limits<double>::infinity());
  EXPECT_EQ(loaded->loader.nextBatch, 10u);
  EXPECT_EQ(loaded->loader.seed, 7u);
  ASSERT_TRUE(loaded->settings.has_value());
  EXPECT_EQ(loaded->settings->seed, 7u);
  EXPECT_EQ(loaded->settings->accumSteps, 3);
  EXPECT_EQ(loaded->settings->learningRate, 0.05);
  EXPECT_FALSE(loaded->settings->epochs.has_value());
  EXPECT_EQ(loaded->settings->maxSteps, std::optional<int64_t>(40));
  EXPECT_EQ(loaded->settings->schedule.kind, ScheduleKind::Plateau);
  EXPECT_EQ(loaded->settings->schedule.warmupSteps, 4);
  EXPECT_EQ(loaded->settings->schedule.plateauFactor, 0.5);
  EXPECT_EQ(loaded->settings->monitor, MonitorKind::ValAcc);
  // Written atomically: no temporary file is left.
  EXPECT_EQ(runCommand("ls " + dir.path() + " | grep -q tmp"), 1);
}

// Tests that a checkpoint without the settings section (written before it
// existed) still loads, its settings unknown.
TEST(Checkpoint, LoadsCheckpointsWithoutSettings) {
  TinyModel tiny;
  TempDir dir;
  std::vector<uint8_t> arena(192, 5);
  RunState saved = sampleState();
  saved.settings.reset();
  std::string path = dir.file("old.ckpt");
  EXPECT_NO_ERROR(saveCheckpoint(path, tiny.model, arena.data(), saved));
  EXPECT_EQ(readFile(path).find("SETS"), std::string::npos);
  Expected<RunState> loaded = loadCheckpoint(path, tiny.model, arena.data());
  ASSERT_OK(loaded);
  EXPECT_FALSE(loaded->settings.has_value());
  EXPECT_EQ(loaded->loader.seed, 7u);
}

// Tests what resuming with other settings means: errors for the seed, the
// accumulation and the schedule (only the options of the schedule in use),
// warnings naming both values for --lr, --epochs and --max-steps.
TEST(Checkpoint, ComparesResumeSettings) {
  ResumeSettings saved = *sampleState().settings;
  Expected<std::vector<std::string>> same =
      compareResumeSettings(saved, saved);
  ASSERT_OK(same);
  EXPECT_TRUE(same->empty());

  auto errorWith = [&](auto change) {
    ResumeSettings given = saved;
    change(given);
    return errorOf(compareResumeSettings(saved, given));
  };
  EXPECT_EQ(errorWith([](ResumeSettings &s) { s.seed = 8; }),
            "the checkpoint was written with --seed 7, this run has --seed "
            "8: resume with --seed 7 (the data order and dropout continue "
            "from it)");
  EXPECT_THAT(errorWith([](ResumeSettings &s) { s.accumSteps = 1; }),
              HasSubstr("written with --accum-steps 3, this run has "
                        "--accum-steps 1: resume with --accum-steps 3"));
  EXPECT_THAT(errorWith([](ResumeSettings &s) {
                s.schedule.kind = ScheduleKind::Cosine;
              }),
              HasSubstr("--schedule plateau, this run has --schedule cosine"));
  EXPECT_THAT(
      errorWith([](ResumeSettings &s) { s.schedule.warmupSteps = 0; }),
      HasSubstr("--warmup-steps 4, this run has --warmup-steps 0"));
  EXPECT_THAT(
      errorWith([](ResumeSettings &s) { s.schedule.plateauFactor = 0.1; }),
      HasSubstr("--plateau-factor 0.5, this run has --plateau-factor 0.1"));
  EXPECT_THAT(errorWith([](ResumeSettings &s) { s.schedule.cooldown = 2; }),
              HasSubstr("--cooldown 0, this run has --cooldown 2"));
  EXPECT_THAT(
      errorWith([](ResumeSettings &s) { s.monitor = MonitorKind::ValLoss; }),
      HasSubstr("--monitor val_acc, this run has --monitor val_loss"));

  // Options of another schedule kind do not matter.
  ResumeSettings given = saved;
  given.schedule.gamma = 0.5;
  given.schedule.stepSize = 9;
  EXPECT_EQ(errorOf(compareResumeSettings(saved, given)), "<no error>");
  ResumeSettings step = saved;
  step.schedule.kind = ScheduleKind::Step;
  given = step;
  given.schedule.gamma = 0.5;
  EXPECT_THAT(errorOf(compareResumeSettings(step, given)),
              HasSubstr("--gamma 0.1, this run has --gamma 0.5"));

  given = saved;
  given.learningRate = 0.1;
  given.epochs = 5;
  given.maxSteps.reset();
  Expected<std::vector<std::string>> warnings =
      compareResumeSettings(saved, given);
  ASSERT_OK(warnings);
  EXPECT_EQ(*warnings,
            (std::vector<std::string>{
                "the checkpoint was written with --lr 0.05, this run has --lr "
                "0.1: continuing with --lr 0.1",
                "the checkpoint was written with no --epochs, this run has "
                "--epochs 5: continuing with --epochs 5",
                "the checkpoint was written with --max-steps 40, this run has "
                "no --max-steps: continuing with no --max-steps"}));
}

// Tests that every truncation and every single-bit flip is refused with an
// error (never a crash, never a silent load), and the arena is untouched.
TEST(Checkpoint, RefusesEveryDamagedFile) {
  TinyModel tiny;
  TempDir dir;
  std::vector<uint8_t> arena(192, 3);
  std::string path = dir.file("a.ckpt");
  ASSERT_FALSE(saveCheckpoint(path, tiny.model, arena.data(), sampleState())
                   .failed());
  std::string good = readFile(path);
  std::string damaged = dir.file("d.ckpt");
  for (size_t size = 0; size < good.size(); size += 7) {
    writeFile(damaged, good.substr(0, size));
    std::vector<uint8_t> out(192, 0);
    EXPECT_FALSE(loadCheckpoint(damaged, tiny.model, out.data()).ok())
        << size;
    EXPECT_EQ(out, std::vector<uint8_t>(192, 0));
  }
  for (size_t at = 0; at < good.size(); ++at) {
    std::string bad = good;
    bad[at] ^= 0x04;
    writeFile(damaged, bad);
    std::vector<uint8_t> out(192, 0);
    Expected<RunState> result = loadCheckpoint(damaged, tiny.model, out.data());
    ASSERT_FALSE(result.ok()) << "bit flip at " << at << " went unnoticed";
  }
  writeFile(damaged, good.substr(0, good.size() - 1));
  EXPECT_THAT(errorOf(loadCheckpoint(damaged, tiny.model, arena.data())),
              HasSubstr("the checkpoint is truncated: its header says"));
  std::string flipped = good;
  flipped[100] ^= 1;
  writeFile(damaged, flipped);
  EXPECT_THAT(errorOf(loadCheckpoint(damaged, tiny.model, arena.data())),
              HasSubstr("checksum mismatch"));
}

// Tests that a checkpoint of another model or layout is refused by name.
TEST(Checkpoint, RefusesOtherModels) {
  TinyModel tiny;
  TempDir dir;
  std::vector<uint8_t> arena(192, 1);
  std::string path = dir.file("a.ckpt");
  ASSERT_FALSE(saveCheckpoint(path, tiny.model, arena.data(), sampleState())
                   .failed());
  TinyModel renamed;
  renamed.model.model_name = "other";
  EXPECT_THAT(errorOf(loadCheckpoint(path, renamed.model, arena.data())),
              HasSubstr("the checkpoint belongs to model 'tiny', this trainer "
                        "trains 'other'"));
  TinyModel moved;
  moved.state[2].offset = 140;
  std::string layout = errorOf(loadCheckpoint(path, moved.model, arena.data()));
  EXPECT_THAT(layout, HasSubstr("the state layout differs: tensor 2 is "
                                "'bn.running_mean' ("));
  EXPECT_THAT(layout, HasSubstr("float32 [3] at offset 128, 12 bytes) in the "
                                "checkpoint but 'bn.running_mean' ("));
  EXPECT_THAT(layout, HasSubstr("at offset 140, 12 bytes) in this trainer"));
  TinyModel fewer;
  fewer.model.num_state = 2;
  EXPECT_THAT(errorOf(loadCheckpoint(path, fewer.model, arena.data())),
              HasSubstr("the checkpoint has 3 state tensors, this trainer 2"));
}

// Tests the monitors on a hand-made arena: global gradient norm, clipping
// to exactly C (clip_grad_norm_), parameter change, running-stat summary.
TEST(Monitors, NormClipChangeAndSummary) {
  TinyModel tiny;
  std::vector<uint8_t> arena(192, 0);
  float *w = tiny.floats(arena.data(), 0), *g = tiny.floats(arena.data(), 1),
        *rm = tiny.floats(arena.data(), 2);
  g[0] = 3;
  g[1] = 0;
  g[2] = 4;
  EXPECT_DOUBLE_EQ(gradientNorm(tiny.model, arena.data()), 5.0);
  EXPECT_EQ(clipGradients(tiny.model, arena.data(), 5.0, 10.0), 1.0);
  EXPECT_EQ(g[0], 3.0f);
  double factor = clipGradients(tiny.model, arena.data(), 5.0, 1.0);
  EXPECT_DOUBLE_EQ(factor, 1.0 / (5.0 + 1e-6));
  EXPECT_NEAR(gradientNorm(tiny.model, arena.data()), 1.0, 1e-6);
  EXPECT_NO_ERROR(checkGradientsClippable(tiny.model));

  std::vector<uint8_t> before = snapshotTrainable(tiny.model, arena.data());
  EXPECT_EQ(before.size(), 12u);
  w[0] = 1;
  w[2] = -2;
  auto change = parameterChange(tiny.model, arena.data(), before);
  ASSERT_EQ(change.size(), 1u);
  EXPECT_EQ(change[0].first, "w");
  EXPECT_DOUBLE_EQ(change[0].second, std::sqrt(5.0));

  rm[0] = 1;
  rm[1] = -4;
  rm[2] = 0;
  auto summary = runningStatSummaries(tiny.model, arena.data());
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(summary[0].name, "bn.running_mean");
  EXPECT_DOUBLE_EQ(summary[0].mean, -1.0);
  EXPECT_DOUBLE_EQ(summary[0].maxAbs, 4.0);

  tiny.state[1].dtype = TRAINCC_DTYPE_F16;
  tiny.state[1].bytes = 6;
  EXPECT_THAT(errorOf(checkGradientsClippable(tiny.model)),
              HasSubstr("gradient tensor 'w.grad' is float16"));
}

// Tests the monitor fields and the early_stop event in the log lines.
TEST(Monitors, FormatsLogFields) {
  StepRecord step{3, 1, 0.5, 0.1, 1, false};
  step.gradNorm = 2.5;
  EXPECT_EQ(formatLogLine(step),
            "{\"event\":\"step\",\"step\":3,\"epoch\":1,\"loss\":0.5,"
            "\"lr\":0.1,\"loss_scale\":1,\"skipped\":false,"
            "\"grad_norm\":2.5}\n");
  EpochRecord epoch{2, 0.25, {}, {}, 0.01, 1.5};
  epoch.paramChange = {{"a\"b", 0.5}, {"c", 1.0}};
  epoch.bnStats = std::vector<TensorSummary>{{"bn.running_var", 1.0, 2.0}};
  EXPECT_EQ(formatLogLine(epoch),
            "{\"event\":\"epoch\",\"epoch\":2,\"train_loss\":0.25,"
            "\"lr\":0.01,\"seconds\":1.5,\"param_change\":{\"a\\\"b\":0.5,"
            "\"c\":1},\"bn_stats\":{\"bn.running_var\":{\"mean\":1,"
            "\"max_abs\":2}}}\n");
  epoch.paramChange->clear();
  epoch.bnStats->clear();
  EXPECT_THAT(formatLogLine(epoch),
              HasSubstr("\"param_change\":{},\"bn_stats\":{}}"));
  EXPECT_EQ(formatLogLine(EarlyStopRecord{7, 4, 0.125, "val_loss"}),
            "{\"event\":\"early_stop\",\"epoch\":7,\"best_epoch\":4,"
            "\"best\":0.125,\"monitor\":\"val_loss\"}\n");
  EXPECT_EQ(formatJsonString("a\\b\n\x01"), "\"a\\\\b\\u000a\\u0001\"");
}

} // namespace
