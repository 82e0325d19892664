//===- TrainerTest.cpp - Command line, model descriptor, loop helpers -----===//
//
// The trainer's behaviour as a program is tested in test/runtime/*.test;
// these tests cover the library pieces below it.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "traincc/runtime/commands/Cli.h"
#include "traincc/runtime/exec/Evaluate.h"
#include "traincc/runtime/loop/TrainLoop.h"
#include "traincc/runtime/support/Model.h"
#include "traincc/runtime/support/Random.h"

#include <cmath>
#include <cstring>
#include <set>

using namespace traincc::rt;
using namespace traincc::rt::test;
using ::testing::HasSubstr;

namespace {

Expected<TrainerOptions> parse(std::vector<const char *> args) {
  args.insert(args.begin(), "trainer");
  return parseCommandLine(int(args.size()), args.data());
}

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

// Tests that numbers must be the whole argument, locale free.
TEST(Cli, ParsesNumbersStrictly) {
  EXPECT_EQ(*parseInteger("--epochs", "12"), 12);
  EXPECT_EQ(*parseInteger("--epochs", "-3"), -3);
  for (const char *bad : {"", "+1", " 1", "1 ", "0x10", "1e3", "1.0", "12a"})
    EXPECT_THAT(errorOf(parseInteger("--epochs", bad)),
                HasSubstr("is not an integer"))
        << bad;
  EXPECT_THAT(errorOf(parseInteger("--epochs", "99999999999999999999")),
              HasSubstr("is out of range"));
  EXPECT_EQ(*parseReal("--lr", "0.1"), 0.1);
  EXPECT_EQ(*parseReal("--lr", "1e-3"), 1e-3);
  EXPECT_EQ(*parseReal("--lr", "5"), 5.0);
  for (const char *bad : {"", "abc", "0.1x", ",5", "0,5"})
    EXPECT_THAT(errorOf(parseReal("--lr", bad)), HasSubstr("is not a number"))
        << bad;
  for (const char *bad : {"inf", "nan", "1e400"})
    EXPECT_THAT(errorOf(parseReal("--lr", bad)),
                HasSubstr("is not a finite number"))
        << bad;
}

// Tests that a full train command line fills every option, with values
// given as the next argument or after '='.
TEST(Cli, ParsesTrainOptions) {
  Expected<TrainerOptions> o = parse(
      {"train", "--train-x", "x.npy", "--train-y=y.npy", "--val-split", "0.2",
       "--epochs", "3", "--max-steps=100", "--lr", "0.05", "--accum-steps",
       "4", "--seed", "18446744073709551615", "--no-shuffle",
       "--class-weights", "1,2.5,0", "--threads", "2", "--device", "cpu",
       "--log", "log.jsonl", "--export", "out.onnx"});
  ASSERT_OK(o);
  EXPECT_EQ(o->command, Command::Train);
  EXPECT_FALSE(o->help);
  EXPECT_EQ(*o->data.trainX, "x.npy");
  EXPECT_EQ(*o->data.trainY, "y.npy");
  EXPECT_EQ(*o->data.valSplit, 0.2);
  EXPECT_EQ(*o->loop.epochs, 3);
  EXPECT_EQ(*o->loop.maxSteps, 100);
  EXPECT_EQ(*o->loop.lr, 0.05);
  EXPECT_EQ(*o->loop.accumSteps, 4);
  EXPECT_EQ(o->loop.seed, UINT64_MAX);
  EXPECT_FALSE(o->loop.shuffle);
  EXPECT_EQ(o->loop.classWeights, (std::vector<double>{1, 2.5, 0}));
  EXPECT_EQ(*o->threads, 2);
  EXPECT_EQ(o->device, DeviceChoice::Cpu);
  EXPECT_EQ(*o->loop.logPath, "log.jsonl");
  EXPECT_EQ(*o->exportPath, "out.onnx");
}

// Tests the other commands and the two spellings of predict's output.
TEST(Cli, ParsesOtherCommands) {
  Expected<TrainerOptions> eval = parse({"eval", "--dataset", "fashion-mnist"});
  ASSERT_OK(eval);
  EXPECT_EQ(eval->command, Command::Eval);
  EXPECT_EQ(*eval->data.dataset, "fashion-mnist");
  Expected<TrainerOptions> predict =
      parse({"predict", "--x", "x.npy", "--output", "p.npy"});
  ASSERT_OK(predict);
  EXPECT_EQ(*predict->predictOutput, "p.npy");
  Expected<TrainerOptions> info = parse({"info"});
  ASSERT_OK(info);
  EXPECT_EQ(info->command, Command::Info);
  Expected<TrainerOptions> help = parse({"train", "--epochs", "2", "-h"});
  ASSERT_OK(help);
  EXPECT_TRUE(help->help);
  EXPECT_EQ(help->command, Command::Train);
  // --help skips the checks between flags: "train --help" needs no data.
  ASSERT_OK(parse({"train", "--help"}));
  Expected<TrainerOptions> top = parse({"--help"});
  ASSERT_OK(top);
  EXPECT_EQ(top->command, Command::None);
}

// Tests that each command's help lists exactly the flags it accepts.
TEST(Cli, HelpListsTheFlagsOfEachCommand) {
  std::string train = helpText("trainer", Command::Train);
  for (const char *flag :
       {"--train-x X.npy", "--train-y Y.npy", "--val-x", "--val-y",
        "--val-split F", "--dataset fashion-mnist[:DIR]", "--epochs E",
        "--max-steps S", "--lr F", "--accum-steps K", "--seed S",
        "--no-shuffle", "--class-weights W0,W1,..", "--device auto|cpu|cuda",
        "--threads T", "--log FILE.jsonl", "--export FILE.onnx", "--help"})
    EXPECT_THAT(train, HasSubstr(flag));
  EXPECT_THAT(train, ::testing::Not(HasSubstr("--x X.npy")));
  std::string predict = helpText("trainer", Command::Predict);
  EXPECT_THAT(predict, HasSubstr("-o, --output OUT.npy"));
  EXPECT_THAT(predict, ::testing::Not(HasSubstr("--epochs")));
  for (const std::string &text : {train, predict, helpText("t", Command::None)})
    for (size_t start = 0, end; start < text.size(); start = end + 1) {
      end = text.find('\n', start);
      EXPECT_LE(end - start, 79u) << text.substr(start, end - start);
    }
}

//===----------------------------------------------------------------------===//
// Model descriptor
//===----------------------------------------------------------------------===//

/// A small valid descriptor: [4,3] -> [4,2] cross-entropy, one parameter
/// with its gradient.
struct FakeModel {
  int64_t inputShape[2] = {4, 3};
  int64_t targetShape[1] = {4};
  int64_t outputShape[2] = {4, 2};
  int64_t weightShape[2] = {2, 3};
  traincc_state_tensor state[2];
  uint8_t initial[128] = {};
  traincc_model model;

  static void micro(uint8_t *, uint8_t *, const void *, const void *, float,
                    uint64_t, float *) {}
  static void apply(uint8_t *, uint8_t *, float, int64_t) {}
  static void eval(uint8_t *, uint8_t *, const void *, const void *, void *,
                   float *) {}

  FakeModel() {
    std::memset(&model, 0, sizeof(model));
    state[0] = {"w", TRAINCC_STATE_TRAINABLE, TRAINCC_DTYPE_F32, 2,
                weightShape, 0, 24, -1, -1};
    state[1] = {"w.grad", TRAINCC_STATE_GRADIENT, TRAINCC_DTYPE_F32, 2,
                weightShape, 64, 24, 0, -1};
    initial[0] = 42;
    model.abi_version = TRAINCC_ABI_VERSION;
    model.loss_scale_state = model.found_inf_state = -1;
    model.model_name = "fake";
    model.micro_batch = 4;
    model.accum_steps = 1;
    model.num_classes = 2;
    model.input = {"x", TRAINCC_DTYPE_F32, 2, inputShape};
    model.target = {"y", TRAINCC_DTYPE_I64, 1, targetShape};
    model.output = {"logits", TRAINCC_DTYPE_F32, 2, outputShape};
    model.num_state = 2;
    model.state = state;
    model.state_bytes = 128;
    model.initial_state = initial;
    model.workspace_bytes = 0;
    model.micro_step = micro;
    model.apply_step = apply;
    model.eval_step = eval;
  }
};

// Tests that a valid descriptor passes and its derived facts.
TEST(Model, InspectsAValidDescriptor) {
  FakeModel fake;
  Expected<ModelInfo> info = inspectModel(&fake.model);
  ASSERT_OK(info);
  EXPECT_EQ(info->inputSampleShape, (std::vector<int64_t>{3}));
  EXPECT_EQ(info->outputSampleElements, 2);
  EXPECT_EQ(info->trainableParameters, 6);
  EXPECT_EQ(info->frozenParameters, 0);
  EXPECT_TRUE(info->crossEntropy());
  EXPECT_THAT(errorOf(inspectModel(nullptr)), HasSubstr("returned null"));
}

// Tests that each kind of broken descriptor is reported, not used.
TEST(Model, RejectsBrokenDescriptors) {
  struct Case {
    void (*mutate)(FakeModel &);
    std::string message;
  };
  const Case cases[] = {
      {[](FakeModel &f) { f.model.abi_version = 99; },
       "model ABI version 99, this runtime implements version " +
           std::to_string(TRAINCC_ABI_VERSION)},
      {[](FakeModel &f) { f.model.apply_step = nullptr; },
       "a step function pointer is null"},
      {[](FakeModel &f) { f.model.micro_batch = 0; }, "micro-batch 0"},
      {[](FakeModel &f) { f.inputShape[0] = 5; },
       "input 'x' has shape [5,3], but the micro-batch is 4"},
      {[](FakeModel &f) { f.inputShape[1] = -1; },
       "input 'x' has dimension -1"},
      {[](FakeModel &f) { f.model.input.dtype = TRAINCC_DTYPE_F16; },
       "input 'x' is float16; the runtime feeds float32 or int64 inputs"},
      {[](FakeModel &f) { f.model.input.id_limit = 5; },
       "input 'x' (float32) has id limit 5"},
      {[](FakeModel &f) { f.model.num_classes = 3; },
       "cross-entropy over 3 classes, but output 'logits' has 2 values"},
      {[](FakeModel &f) { f.model.target.dtype = TRAINCC_DTYPE_F32; },
       "cross-entropy target 'y' is y float32 [4]; expected int64 [4]"},
      {[](FakeModel &f) { f.state[1].offset = 120; },
       "state tensor 1 'w.grad' at offset 120 (24 bytes) does not fit the "
       "128-byte state arena"},
      {[](FakeModel &f) { f.state[0].bytes = 20; },
       "state tensor 0 'w' holds 20 bytes, its shape [2,3] of float32 needs "
       "24"},
      {[](FakeModel &f) { f.state[1].owner = 7; },
       "state tensor 1 'w.grad' has owner 7"},
      {[](FakeModel &f) { f.state[0].kind = 42; },
       "state tensor 0 'w' has unknown kind 42"},
      {[](FakeModel &f) { f.model.initial_state = nullptr; },
       "initial_state is null"},
      {[](FakeModel &f) { f.state[0].source = 1; },
       "state tensor 0 'w' has source 1"},
      {[](FakeModel &f) {
         f.state[1].kind = TRAINCC_STATE_WEIGHT_COPY;
         f.state[1].owner = -1;
         f.state[1].source = 1;
       },
       "state tensor 1 'w.grad' has source 1"},
      {[](FakeModel &f) {
         f.state[1].kind = TRAINCC_STATE_STEP_BACKUP;
         f.state[1].owner = -1;
         f.state[1].source = 0;
         f.state[1].dtype = TRAINCC_DTYPE_I64;
         f.state[1].bytes = 48;
       },
       "state tensor 1 'w.grad' (int64 [2,3]) cannot copy state tensor 0 "
       "(float32 [2,3])"},
      {[](FakeModel &f) {
         f.model.num_initial_runs = 1;
         f.model.initial_runs = nullptr;
       },
       "table of 1 initial runs is missing"},
      {[](FakeModel &f) {
         static const traincc_initial_run outside[] = {{100, 40}};
         f.model.num_initial_runs = 1;
         f.model.initial_runs = outside;
       },
       "initial run 0 (40 bytes at 100) is not after the previous one inside "
       "the 128-byte arena"},
      {[](FakeModel &f) {
         static const traincc_initial_run overlapping[] = {{0, 24}, {16, 8}};
         f.model.num_initial_runs = 2;
         f.model.initial_runs = overlapping;
       },
       "initial run 1 (8 bytes at 16) is not after the previous one"},
      {[](FakeModel &f) { f.model.precision = 3; }, "unknown precision 3"},
      {[](FakeModel &f) { f.model.found_inf_state = 0; },
       "found_inf_state is 0 without loss scaling"},
      {[](FakeModel &f) {
         f.model.loss_scaling = TRAINCC_LOSS_SCALING_DYNAMIC;
         f.model.found_inf_state = 0;
       },
       "loss_scale_state is -1 for a model of 2 state tensors"},
      {[](FakeModel &f) {
         f.model.loss_scaling = TRAINCC_LOSS_SCALING_STATIC;
         f.model.loss_scale_state = f.model.found_inf_state = 0;
       },
       "loss_scale_state names 'w' (trainable float32 [2,3]); expected a "
       "loss-scaler float32 scalar"},
  };
  for (const Case &c : cases) {
    FakeModel fake;
    c.mutate(fake);
    std::string error = errorOf(inspectModel(&fake.model));
    EXPECT_THAT(error, HasSubstr("invalid model descriptor 'fake': "));
    EXPECT_THAT(error, HasSubstr(c.message));
  }
}

// Tests the run's memory: 64-byte aligned, the arena a copy of
// initial_state, a valid workspace pointer even for zero bytes.
TEST(Model, AllocatesAlignedMemory) {
  FakeModel fake;
  Expected<ModelMemory> memory = ModelMemory::create(fake.model);
  ASSERT_OK(memory);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(memory->state.data()) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(memory->workspace.data()) % 64, 0u);
  ASSERT_NE(memory->workspace.data(), nullptr);
  EXPECT_EQ(memory->state.size(), 128u);
  EXPECT_EQ(std::memcmp(memory->state.data(), fake.initial, 128), 0);
  EXPECT_NE(memory->state.data(), fake.initial);
}

// Tests that with initial runs the blob holds only their bytes, back to
// back, and the arena is zero outside them (what traincc emits: the
// gradients and optimizer state stay out of the trainer).
TEST(Model, CopiesInitialRunsIntoAZeroArena) {
  FakeModel fake;
  static const traincc_initial_run runs[] = {{8, 4}, {64, 3}};
  const uint8_t blob[] = {1, 2, 3, 4, 5, 6, 7};
  fake.model.initial_state = blob;
  fake.model.num_initial_runs = 2;
  fake.model.initial_runs = runs;
  ASSERT_OK(inspectModel(&fake.model));
  Expected<ModelMemory> memory = ModelMemory::create(fake.model);
  ASSERT_OK(memory);
  uint8_t expected[128] = {};
  std::memcpy(expected + 8, blob, 4);
  std::memcpy(expected + 64, blob + 4, 3);
  EXPECT_EQ(std::memcmp(memory->state.data(), expected, 128), 0);
  EXPECT_EQ(initialStateAt(fake.model, 65, 2), blob + 5);
  EXPECT_EQ(initialStateAt(fake.model, 10, 4), nullptr); // crosses the end
  EXPECT_EQ(initialStateAt(fake.model, 32, 4), nullptr); // starts at zero
}

//===----------------------------------------------------------------------===//
// Loop helpers
//===----------------------------------------------------------------------===//

// Tests argmax: first maximum on ties (torch.argmax), NaN never wins.
TEST(Evaluate, ArgmaxTakesTheFirstMaximum) {
  const float ties[] = {1, 3, 3, 2};
  EXPECT_EQ(argmaxRow(ties, 4), 1);
  const float withNan[] = {NAN, 1, 5, NAN};
  EXPECT_EQ(argmaxRow(withNan, 4), 2);
  const float allNan[] = {NAN, NAN};
  EXPECT_EQ(argmaxRow(allNan, 2), -1);
}

// Tests that dropout seeds differ between micro-batches and seeds and stay
// out of the sampler's epoch streams.
TEST(TrainLoop, MicroStepSeedsAreDistinct) {
  std::set<uint64_t> seen;
  for (uint64_t seed : {0ull, 1ull, 2ull, 12345ull})
    for (uint64_t counter = 0; counter < 1000; ++counter)
      EXPECT_TRUE(seen.insert(microStepSeed(seed, counter)).second);
  for (uint64_t epoch = 0; epoch < 100; ++epoch)
    EXPECT_FALSE(seen.count(SplitMix64::nthOutput(0, epoch + 1)));
  EXPECT_EQ(microStepSeed(7, 3), microStepSeed(7, 3));
}

// Tests the defaults the loop resolves from the model and the flags.
TEST(TrainLoop, ResolvesDefaults) {
  FakeModel fake;
  fake.model.accum_steps = 3;
  Expected<ModelInfo> info = inspectModel(&fake.model);
  ASSERT_OK(info);
  LoopOptions options;
  DataOptions data;
  TrainingSettings s = resolveTrainingSettings(options, data, *info);
  EXPECT_EQ(s.accumSteps, 3);
  // torch.optim's default learning rate, for SGD as for Adam.
  EXPECT_EQ(s.learningRate, 0.001);
  EXPECT_EQ(*s.epochs, 1);
  EXPECT_FALSE(s.maxSteps);
  EXPECT_EQ(s.sampler.microBatch, 4);
  options.accumSteps = 5;
  options.maxSteps = 10;
  fake.model.optimizer = TRAINCC_OPTIMIZER_ADAM;
  s = resolveTrainingSettings(options, data, *info);
  EXPECT_EQ(s.accumSteps, 5);
  EXPECT_EQ(s.learningRate, 0.001);
  EXPECT_FALSE(s.epochs);
  EXPECT_EQ(*s.maxSteps, 10);
}

} // namespace
