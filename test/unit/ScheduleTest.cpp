//===- ScheduleTest.cpp - Learning-rate schedules, epoch-end decisions ----===//
//
// PyTorch parity of whole sequences is tested in test/runtime/schedules.test
// (against torch itself); these tests pin the edge cases.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "traincc/runtime/commands/Cli.h"
#include "traincc/runtime/loop/Schedule.h"

#include <cmath>
#include <limits>

using namespace traincc::rt;
using namespace traincc::rt::test;
using ::testing::HasSubstr;

namespace {

ScheduleOptions options(ScheduleKind kind, double lr = 0.1) {
  ScheduleOptions o;
  o.kind = kind;
  o.baseLr = lr;
  return o;
}

// Tests linear warmup: step s of W uses lr * s / W, then the main schedule.
TEST(Schedule, WarmupIsLinearFromZero) {
  ScheduleOptions o = options(ScheduleKind::Constant, 0.4);
  o.warmupSteps = 4;
  LearningRateSchedule s(o, false);
  EXPECT_DOUBLE_EQ(s.at(1), 0.1);
  EXPECT_DOUBLE_EQ(s.at(2), 0.2);
  EXPECT_DOUBLE_EQ(s.at(4), 0.4);
  EXPECT_DOUBLE_EQ(s.at(5), 0.4);
  EXPECT_DOUBLE_EQ(s.at(1000), 0.4);
}

// Tests cosine: starts at lr after warmup, half way at the midpoint, stays
// at min-lr once the run's steps are used up.
TEST(Schedule, CosineDecaysToMinLrOverTheRun) {
  ScheduleOptions o = options(ScheduleKind::Cosine, 1.0);
  o.warmupSteps = 2;
  o.totalSteps = 12; // 10 cosine steps, t = 0..9
  o.minLr = 0.1;
  LearningRateSchedule s(o, false);
  EXPECT_DOUBLE_EQ(s.at(2), 1.0);
  EXPECT_DOUBLE_EQ(s.at(3), 1.0);                // t = 0
  EXPECT_NEAR(s.at(8), 0.55, 1e-15);             // t = 5 = T/2
  EXPECT_GT(s.at(12), 0.1);                      // last step: t = 9
  EXPECT_DOUBLE_EQ(s.at(13), 0.1);               // beyond the run
  for (int64_t step = 3; step < 12; ++step)
    EXPECT_GT(s.at(step), s.at(step + 1)) << step;
  // Warmup as long as the run: no division by zero.
  o.warmupSteps = 12;
  LearningRateSchedule all(o, false);
  EXPECT_DOUBLE_EQ(all.at(12), 1.0);
  EXPECT_DOUBLE_EQ(all.at(13), 1.0);
  EXPECT_DOUBLE_EQ(all.at(14), 0.1);
}

// Tests step decay: gamma^floor(t / N) over steps after warmup.
TEST(Schedule, StepDecayCountsStepsAfterWarmup) {
  ScheduleOptions o = options(ScheduleKind::Step, 1.0);
  o.warmupSteps = 1;
  o.stepSize = 3;
  o.gamma = 0.5;
  LearningRateSchedule s(o, false);
  EXPECT_DOUBLE_EQ(s.at(1), 1.0);
  EXPECT_DOUBLE_EQ(s.at(2), 1.0); // t = 0
  EXPECT_DOUBLE_EQ(s.at(4), 1.0); // t = 2
  EXPECT_DOUBLE_EQ(s.at(5), 0.5); // t = 3
  EXPECT_DOUBLE_EQ(s.at(8), 0.25);
}

// Tests ReduceLROnPlateau: reduction after MORE than patience bad epochs,
// relative threshold, cooldown, min_lr and the 1e-8 rule, and other
// schedules ignoring epoch ends.
TEST(Schedule, PlateauFollowsPyTorch) {
  ScheduleOptions o = options(ScheduleKind::Plateau, 1.0);
  o.plateauPatience = 1;
  o.plateauFactor = 0.5;
  o.plateauThreshold = 0.1;
  o.cooldown = 1;
  o.minLr = 0.3;
  LearningRateSchedule s(o, /*maximize=*/false);
  EXPECT_FALSE(s.endOfEpoch(10)); // best 10
  EXPECT_FALSE(s.endOfEpoch(9.5)); // not < 10 * 0.9: bad 1
  EXPECT_TRUE(s.endOfEpoch(9.5));  // bad 2 > 1: reduce
  EXPECT_DOUBLE_EQ(s.at(100), 0.5);
  EXPECT_FALSE(s.endOfEpoch(9.5)); // cooldown: not counted
  EXPECT_EQ(s.state().badEpochs, 0);
  EXPECT_FALSE(s.endOfEpoch(9.5)); // bad 1
  EXPECT_TRUE(s.endOfEpoch(9.5));  // 0.25 clamps to min 0.3
  EXPECT_DOUBLE_EQ(s.at(100), 0.3);
  for (int i = 0; i < 6; ++i)
    EXPECT_FALSE(s.endOfEpoch(9.5)); // at min: no more reductions
  EXPECT_DOUBLE_EQ(s.at(100), 0.3);
  EXPECT_FALSE(s.endOfEpoch(8.0)); // improvement resets
  EXPECT_DOUBLE_EQ(s.state().best, 8.0);
  // A NaN metric is a bad epoch, as in torch.
  EXPECT_FALSE(s.endOfEpoch(NAN));
  EXPECT_EQ(s.state().badEpochs, 1);

  // Mode max, and warmup on top of the reduced rate.
  o.warmupSteps = 2;
  o.plateauPatience = 0;
  o.cooldown = 0;
  o.minLr = 0;
  LearningRateSchedule acc(o, /*maximize=*/true);
  EXPECT_FALSE(acc.endOfEpoch(0.5));
  EXPECT_FALSE(acc.endOfEpoch(0.6)); // > 0.5 * 1.1
  EXPECT_TRUE(acc.endOfEpoch(0.62)); // not > 0.66
  EXPECT_DOUBLE_EQ(acc.at(1), 0.25);
  EXPECT_DOUBLE_EQ(acc.at(3), 0.5);

  LearningRateSchedule constant(options(ScheduleKind::Constant), false);
  for (int i = 0; i < 20; ++i)
    EXPECT_FALSE(constant.endOfEpoch(1.0));
  EXPECT_DOUBLE_EQ(constant.at(1), 0.1);
}

// Tests that restoring a plateau state continues its decisions.
TEST(Schedule, RestoresPlateauState) {
  ScheduleOptions o = options(ScheduleKind::Plateau, 1.0);
  o.plateauPatience = 2;
  LearningRateSchedule a(o, false), b(o, false);
  for (double m : {5.0, 5.0, 5.0})
    a.endOfEpoch(m);
  b.restore(a.state());
  EXPECT_EQ(a.endOfEpoch(5.0), b.endOfEpoch(5.0));
  EXPECT_DOUBLE_EQ(b.at(1), 0.1);
  EXPECT_DOUBLE_EQ(a.at(1), b.at(1));
}

// Tests the early-stopping improvement rule (Keras): strictly better by
// more than min_delta, absolute, in either direction.
TEST(Schedule, ImprovementNeedsMoreThanMinDelta) {
  ImprovementTracker loss(/*maximize=*/false, 0.1);
  EXPECT_TRUE(loss.update(1, 1.0));
  EXPECT_FALSE(loss.update(2, 0.95)); // only 0.05 better
  EXPECT_FALSE(loss.update(3, 0.9));  // exactly 0.1: not more
  EXPECT_EQ(loss.state().badEpochs, 2);
  EXPECT_TRUE(loss.update(4, 0.85));
  EXPECT_EQ(loss.state().bestEpoch, 4);
  EXPECT_EQ(loss.state().badEpochs, 0);
  EXPECT_FALSE(loss.update(5, NAN));

  ImprovementTracker acc(/*maximize=*/true, 0);
  EXPECT_TRUE(acc.update(1, 0.5));
  EXPECT_FALSE(acc.update(2, 0.5)); // equal is not better
  EXPECT_TRUE(acc.update(3, 0.51));
  EXPECT_DOUBLE_EQ(acc.state().best, 0.51);
}

Expected<TrainerOptions> parse(std::vector<const char *> args) {
  args.insert(args.begin(), "trainer");
  args.insert(args.begin() + 1, "train");
  args.insert(args.begin() + 2, "--train-x=x.npy");
  return parseCommandLine(int(args.size()), args.data());
}

// Tests that the loop-feature flags parse into the options.
TEST(Schedule, ParsesLoopFlags) {
  Expected<TrainerOptions> o = parse(
      {"--schedule", "plateau", "--warmup-steps", "10", "--min-lr", "1e-5",
       "--plateau-patience", "2", "--plateau-factor", "0.5",
       "--plateau-threshold", "0.01", "--cooldown", "1", "--monitor",
       "val_acc", "--early-stop-patience", "4", "--min-delta", "0.001",
       "--grad-clip-norm", "1.5", "--checkpoint-dir", "ck",
       "--checkpoint-every", "100", "--save-best-only", "--keep-last", "0",
       "--resume", "ck/epoch-0001.ckpt"});
  ASSERT_OK(o);
  EXPECT_EQ(o->loop.schedule, ScheduleKind::Plateau);
  EXPECT_EQ(*o->loop.warmupSteps, 10);
  EXPECT_EQ(*o->loop.minLr, 1e-5);
  EXPECT_EQ(*o->loop.plateauPatience, 2);
  EXPECT_EQ(*o->loop.plateauFactor, 0.5);
  EXPECT_EQ(*o->loop.plateauThreshold, 0.01);
  EXPECT_EQ(*o->loop.cooldown, 1);
  EXPECT_EQ(*o->loop.monitor, MonitorKind::ValAcc);
  EXPECT_EQ(*o->loop.earlyStopPatience, 4);
  EXPECT_EQ(*o->loop.minDelta, 0.001);
  EXPECT_EQ(*o->loop.gradClipNorm, 1.5);
  EXPECT_EQ(*o->loop.checkpointDir, "ck");
  EXPECT_EQ(*o->loop.checkpointEvery, 100);
  EXPECT_TRUE(o->loop.saveBestOnly);
  EXPECT_EQ(*o->loop.keepLast, 0);
  EXPECT_EQ(*o->loop.resumePath, "ck/epoch-0001.ckpt");

  Expected<TrainerOptions> step =
      parse({"--schedule", "step", "--step-size", "5", "--gamma", "0.3"});
  ASSERT_OK(step);
  EXPECT_EQ(*step->loop.stepSize, 5);
  EXPECT_EQ(*step->loop.gamma, 0.3);
  EXPECT_THAT(errorOf(parse({"--save-best-only"})),
              HasSubstr("--save-best-only needs --checkpoint-dir"));
  EXPECT_THAT(errorOf(parse({"--checkpoint-every", "0"})),
              HasSubstr("--checkpoint-every must be a positive integer"));
  EXPECT_THAT(errorOf(parse({"--schedule", "cosine", "--step-size", "3"})),
              HasSubstr("--step-size applies to --schedule step only"));
}

} // namespace
