//===- Cli.cpp - The trainer's command line -------------------------------===//

#include "traincc/runtime/commands/Cli.h"

#include "traincc/runtime/data/FashionMnist.h"
#include "traincc/runtime/data/Sampler.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <set>

namespace traincc::rt {

const char *commandName(Command command) {
  switch (command) {
  case Command::None:
    return "";
  case Command::Train:
    return "train";
  case Command::Eval:
    return "eval";
  case Command::Predict:
    return "predict";
  case Command::Info:
    return "info";
  case Command::Plot:
    return "plot";
  }
  return "";
}

//===----------------------------------------------------------------------===//
// Numbers
//===----------------------------------------------------------------------===//

Expected<int64_t> parseInteger(const std::string &flag,
                               const std::string &text) {
  int64_t value = 0;
  const char *end = text.data() + text.size();
  std::from_chars_result result = std::from_chars(text.data(), end, value);
  if (text.empty() || result.ptr != end || result.ec == std::errc::invalid_argument)
    return makeError(flag, ": '", text, "' is not an integer");
  if (result.ec != std::errc())
    return makeError(flag, ": '", text, "' is out of range");
  return value;
}

Expected<double> parseReal(const std::string &flag, const std::string &text) {
  double value = 0;
  const char *end = text.data() + text.size();
  std::from_chars_result result = std::from_chars(text.data(), end, value);
  if (text.empty() || result.ptr != end || result.ec == std::errc::invalid_argument)
    return makeError(flag, ": '", text, "' is not a number");
  if (result.ec != std::errc() || !std::isfinite(value))
    return makeError(flag, ": '", text, "' is not a finite number");
  return value;
}

namespace {

/// An integer in [low, high], or an error that says which range.
Expected<int64_t> parseIntegerIn(const std::string &flag,
                                 const std::string &text, int64_t low,
                                 int64_t high, const char *what) {
  Expected<int64_t> value = parseInteger(flag, text);
  if (!value)
    return value;
  if (*value < low || *value > high)
    return makeError(flag, " must be ", what, ", got ", text);
  return value;
}

/// A real number that `accept` approves, or an error that says which range.
Expected<double> parseRealIf(const std::string &flag, const std::string &text,
                             bool (*accept)(double), const char *what) {
  Expected<double> value = parseReal(flag, text);
  if (!value)
    return value;
  if (!accept(*value))
    return makeError(flag, " must be ", what, ", got ", text);
  return value;
}

bool isNonNegative(double v) { return v >= 0; }
bool isPositive(double v) { return v > 0; }
bool isOpenUnit(double v) { return v > 0 && v < 1; }

//===----------------------------------------------------------------------===//
// The flag table
//===----------------------------------------------------------------------===//

enum CommandMask : unsigned {
  kTrain = 1u << 0,
  kEval = 1u << 1,
  kPredict = 1u << 2,
  kInfo = 1u << 3,
  kPlot = 1u << 4,
};

unsigned maskOf(Command command) {
  switch (command) {
  case Command::Train:
    return kTrain;
  case Command::Eval:
    return kEval;
  case Command::Predict:
    return kPredict;
  case Command::Info:
    return kInfo;
  case Command::Plot:
    return kPlot;
  case Command::None:
    break;
  }
  return 0;
}

using ApplyFlag = Error (*)(TrainerOptions &, const std::string &flag,
                            const std::string &value);

struct FlagSpec {
  const char *name;
  const char *alias;   // another spelling, or nullptr
  const char *metavar; // nullptr for switches
  unsigned commands;
  const char *help;
  ApplyFlag apply;
};

template <typename T>
Error storeExpected(std::optional<T> &slot, Expected<T> value) {
  if (!value)
    return value.takeError();
  slot = value.take();
  return Error::success();
}

Error setPath(std::optional<std::string> &slot, const std::string &flag,
              const std::string &value) {
  if (value.empty())
    return makeError(flag, ": empty file name");
  slot = value;
  return Error::success();
}

#define PATH_FLAG(field)                                                       \
  [](TrainerOptions &o, const std::string &f, const std::string &v) {          \
    return setPath(o.field, f, v);                                             \
  }

const FlagSpec kFlags[] = {
    // Data.
    {"--train-x", nullptr, "X.npy", kTrain,
     "training inputs, float32 [N,...], or int64 ids [N,...] for a model "
     "with an integer input (.npy)",
     PATH_FLAG(data.trainX)},
    {"--train-y", nullptr, "Y.npy", kTrain,
     "training labels, int64 [N] (cross-entropy), or float32 targets [N,...] "
     "(mse)",
     PATH_FLAG(data.trainY)},
    {"--val-x", nullptr, "X.npy", kTrain, "validation inputs (with --val-y)",
     PATH_FLAG(data.valX)},
    {"--val-y", nullptr, "Y.npy", kTrain, "validation labels or targets",
     PATH_FLAG(data.valY)},
    {"--val-split", nullptr, "F", kTrain,
     "validate on the last round(N*F) training samples (0 < F < 1)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       Expected<double> value = parseReal(f, v);
       if (value && !(*value > 0 && *value < 1))
         return makeError(f, " must lie strictly between 0 and 1, got ", v);
       return storeExpected(o.data.valSplit, std::move(value));
     }},
    {"--dataset", nullptr, "fashion-mnist[:DIR]", kTrain | kEval,
     "built-in dataset; train: the train split, validating on t10k; "
     "eval: the t10k split (default DIR /usr/share/datasets/fashion-mnist)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       Expected<DatasetSpec> spec = parseDatasetSpec(v);
       if (!spec)
         return spec.takeError();
       o.data.dataset = v;
       return Error::success();
     }},
    {"--x", nullptr, "X.npy", kEval | kPredict,
     "inputs, float32 [N,...] (int64 ids for an integer input)",
     PATH_FLAG(data.evalX)},
    {"--y", nullptr, "Y.npy", kEval, "labels or targets for --x",
     PATH_FLAG(data.evalY)},
    {"-o", "--output", "OUT.npy", kPredict,
     "where predict writes the outputs, float32 [N,...]",
     PATH_FLAG(predictOutput)},
    {"-o", "--output", "CURVES.svg", kPlot,
     "where plot writes the SVG (loss, val accuracy and learning rate "
     "against the optimizer step)",
     PATH_FLAG(plotOutput)},
    // Input pipeline (Augment.h).
    {"--normalize", nullptr, "MEAN,STD|M1,../S1,..",
     kTrain | kEval | kPredict,
     "feed (x - mean) / std: one MEAN,STD pair for every value, or one mean "
     "and std per channel (axis 1 of the input), e.g. 0.49,0.48,0.45/"
     "0.25,0.24,0.26; applied to train, validation, eval and predict inputs "
     "alike (give eval and predict the same values)",
     [](TrainerOptions &o, const std::string &, const std::string &v) {
       Expected<Normalization> value = parseNormalization(v);
       if (!value)
         return value.takeError();
       o.data.normalize = value.take();
       return Error::success();
     }},
    {"--scale", nullptr, nullptr, kTrain | kEval | kPredict,
     "divide uint8 .npy inputs by 255 (to [0,1], as --dataset fashion-mnist "
     "does), before --normalize; uint8 inputs without it are used as they "
     "are, with a warning",
     [](TrainerOptions &o, const std::string &, const std::string &) {
       o.data.scale = true;
       return Error::success();
     }},
    {"--reshape", nullptr, nullptr, kTrain | kEval | kPredict,
     "accept .npy inputs whose sample shape differs from the model's but "
     "holds as many values (e.g. [N,784] for [N,1,28,28]), read in C order",
     [](TrainerOptions &o, const std::string &, const std::string &) {
       o.data.reshape = true;
       return Error::success();
     }},
    {"--augment", nullptr, "hflip,crop[:P]", kTrain,
     "augment training images [N,C,H,W]: hflip mirrors left-right with "
     "probability 1/2; crop pads by P (default 4) with zeros and cuts a "
     "random window of the original size; random choices depend on --seed, "
     "epoch and position only",
     [](TrainerOptions &o, const std::string &, const std::string &v) {
       Expected<Augmentation> value = parseAugmentation(v);
       if (!value)
         return value.takeError();
       o.data.augment = value.take();
       return Error::success();
     }},
    {"--no-prefetch", nullptr, nullptr, kTrain,
     "prepare each micro-batch when it is needed instead of on a background "
     "thread while the previous one runs (same results, for debugging)",
     [](TrainerOptions &o, const std::string &, const std::string &) {
       o.data.prefetch = false;
       return Error::success();
     }},
    // Loop.
    {"--epochs", nullptr, "E", kTrain,
     "passes over the training data (default 1, or unlimited with "
     "--max-steps)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       return storeExpected(o.loop.epochs, parseIntegerIn(f, v, 1, INT32_MAX,
                                                         "a positive integer"));
     }},
    {"--max-steps", nullptr, "S", kTrain,
     "stop after S optimizer steps (the epoch in progress is then "
     "validated and logged)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       return storeExpected(o.loop.maxSteps,
                            parseIntegerIn(f, v, 1, INT64_MAX / 2,
                                           "a positive integer"));
     }},
    {"--lr", nullptr, "F", kTrain,
     "learning rate (default 0.001, torch.optim's for sgd, adam and "
     "adamw)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       Expected<double> value = parseReal(f, v);
       if (value && *value < 0)
         return makeError(f, " must not be negative, got ", v);
       return storeExpected(o.loop.lr, std::move(value));
     }},
    {"--accum-steps", nullptr, "K", kTrain,
     "micro-batches per optimizer step (default: the value given to "
     "traincc)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       return storeExpected(o.loop.accumSteps,
                            parseIntegerIn(f, v, 1, 1 << 20,
                                           "between 1 and 1048576"));
     }},
    {"--seed", nullptr, "S", kTrain,
     "seed of the data order and of dropout (default 0)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       uint64_t value = 0;
       const char *end = v.data() + v.size();
       std::from_chars_result r = std::from_chars(v.data(), end, value);
       if (v.empty() || r.ptr != end || r.ec != std::errc())
         return makeError(f, ": '", v,
                          "' is not an integer between 0 and 2^64-1");
       o.loop.seed = value;
       return Error::success();
     }},
    {"--no-shuffle", nullptr, nullptr, kTrain,
     "visit training samples in file order",
     [](TrainerOptions &o, const std::string &, const std::string &) {
       o.loop.shuffle = false;
       return Error::success();
     }},
    {"--class-weights", nullptr, "W0,W1,..", kTrain,
     "sample with replacement, class c with weight Wc (one per class)",
     [](TrainerOptions &o, const std::string &, const std::string &v) {
       Expected<std::vector<double>> weights = parseClassWeights(v);
       if (!weights)
         return weights.takeError();
       o.loop.classWeights = weights.take();
       return Error::success();
     }},
    // Schedules and epoch-end decisions (Schedule.h).
    {"--schedule", nullptr, "constant|cosine|step|plateau", kTrain,
     "learning-rate schedule over optimizer steps (default constant); "
     "cosine decays to --min-lr over the run's steps, step multiplies by "
     "--gamma every --step-size steps, plateau acts at epoch ends",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       for (ScheduleKind k : {ScheduleKind::Constant, ScheduleKind::Cosine,
                              ScheduleKind::Step, ScheduleKind::Plateau})
         if (v == scheduleKindName(k)) {
           o.loop.schedule = k;
           return Error::success();
         }
       return makeError(f, ": unknown schedule '", v,
                        "' (expected constant, cosine, step or plateau)");
     }},
    {"--warmup-steps", nullptr, "W", kTrain,
     "raise the learning rate linearly over the first W optimizer steps "
     "(step s uses lr*s/W; default 0)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       return storeExpected(o.loop.warmupSteps,
                            parseIntegerIn(f, v, 0, INT64_MAX / 2,
                                           "a non-negative integer"));
     }},
    {"--min-lr", nullptr, "F", kTrain,
     "cosine: the final learning rate; plateau: the lowest one (default 0)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       return storeExpected(
           o.loop.minLr, parseRealIf(f, v, isNonNegative, "non-negative"));
     }},
    {"--step-size", nullptr, "N", kTrain,
     "step: decay every N optimizer steps after warmup (required)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       return storeExpected(o.loop.stepSize,
                            parseIntegerIn(f, v, 1, INT64_MAX / 2,
                                           "a positive integer"));
     }},
    {"--gamma", nullptr, "G", kTrain, "step: the decay factor (default 0.1)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       return storeExpected(o.loop.gamma,
                            parseRealIf(f, v, isPositive, "positive"));
     }},
    {"--plateau-patience", nullptr, "P", kTrain,
     "plateau: reduce the learning rate after more than P epochs without "
     "improvement (default 10)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       return storeExpected(o.loop.plateauPatience,
                            parseIntegerIn(f, v, 0, INT32_MAX,
                                           "a non-negative integer"));
     }},
    {"--plateau-factor", nullptr, "F", kTrain,
     "plateau: multiply the learning rate by F (0 < F < 1, default 0.1)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       return storeExpected(o.loop.plateauFactor,
                            parseRealIf(f, v, isOpenUnit,
                                        "strictly between 0 and 1"));
     }},
    {"--plateau-threshold", nullptr, "T", kTrain,
     "plateau: an epoch improves when it beats the best by the fraction T "
     "(PyTorch threshold_mode 'rel'; default 1e-4)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       return storeExpected(o.loop.plateauThreshold,
                            parseRealIf(f, v, isNonNegative, "non-negative"));
     }},
    {"--cooldown", nullptr, "C", kTrain,
     "plateau: epochs after a reduction in which no epoch counts as bad "
     "(default 0)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       return storeExpected(o.loop.cooldown,
                            parseIntegerIn(f, v, 0, INT32_MAX,
                                           "a non-negative integer"));
     }},
    {"--monitor", nullptr, "val_loss|val_acc", kTrain,
     "the metric of plateau, early stopping and --save-best-only (default "
     "val_loss; train_loss when there is no validation data)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       if (v == "val_loss")
         o.loop.monitor = MonitorKind::ValLoss;
       else if (v == "val_acc")
         o.loop.monitor = MonitorKind::ValAcc;
       else
         return makeError(f, ": unknown metric '", v,
                          "' (expected val_loss or val_acc)");
       return Error::success();
     }},
    {"--early-stop-patience", nullptr, "P", kTrain,
     "stop after P epochs in a row in which the monitored metric did not "
     "improve by more than --min-delta",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       return storeExpected(o.loop.earlyStopPatience,
                            parseIntegerIn(f, v, 1, INT32_MAX,
                                           "a positive integer"));
     }},
    {"--min-delta", nullptr, "D", kTrain,
     "early stopping: the least change that counts as an improvement "
     "(absolute; default 0)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       return storeExpected(
           o.loop.minDelta, parseRealIf(f, v, isNonNegative, "non-negative"));
     }},
    {"--grad-clip-norm", nullptr, "C", kTrain,
     "scale the accumulated gradients down when their global L2 norm "
     "exceeds C (torch.nn.utils.clip_grad_norm_)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       return storeExpected(o.loop.gradClipNorm,
                            parseRealIf(f, v, isPositive, "positive"));
     }},
    // Checkpoints (Checkpoint.h).
    {"--checkpoint-dir", nullptr, "DIR", kTrain,
     "write a checkpoint into DIR after every epoch (epoch-NNNN.ckpt); the "
     "folder is created if needed",
     PATH_FLAG(loop.checkpointDir)},
    {"--checkpoint-every", nullptr, "N", kTrain,
     "also write one every N optimizer steps within an epoch "
     "(step-NNNNNNNN.ckpt)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       return storeExpected(o.loop.checkpointEvery,
                            parseIntegerIn(f, v, 1, INT64_MAX / 2,
                                           "a positive integer"));
     }},
    {"--save-best-only", nullptr, nullptr, kTrain,
     "write an epoch checkpoint only when the monitored metric improved",
     [](TrainerOptions &o, const std::string &, const std::string &) {
       o.loop.saveBestOnly = true;
       return Error::success();
     }},
    {"--keep-last", nullptr, "K", kTrain,
     "delete all but the newest K epoch checkpoints and K step checkpoints "
     "this run wrote (default 3; 0 keeps all)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       return storeExpected(o.loop.keepLast,
                            parseIntegerIn(f, v, 0, INT32_MAX,
                                           "a non-negative integer"));
     }},
    {"--resume", nullptr, "FILE.ckpt", kTrain,
     "continue the run a checkpoint holds, bit for bit as if never "
     "stopped; pass the same options (--epochs and --max-steps count from "
     "the start of the run)",
     PATH_FLAG(loop.resumePath)},
    // Trained weights from a file (Weights.h).
    {"--init-from", nullptr, "FILE.onnx|FILE.ckpt", kTrain,
     "start a new run (fresh optimizer, step 1) from the parameters and "
     "BatchNorm statistics of an export or of a checkpoint of this model, "
     "instead of the compiled-in weights",
     PATH_FLAG(initFromPath)},
    {"--weights", nullptr, "FILE.onnx", kEval | kPredict,
     "use the parameters and BatchNorm statistics of an ONNX file (an "
     "--export, or any model with the same initializer names and shapes) "
     "instead of the compiled-in weights",
     PATH_FLAG(weightsPath)},
    {"--checkpoint", nullptr, "FILE.ckpt", kEval | kPredict,
     "use the parameters and BatchNorm statistics of a checkpoint of this "
     "model instead of the compiled-in weights",
     PATH_FLAG(checkpointPath)},
    // Machine and outputs.
    {"--device", nullptr, "auto|cpu|cuda", kTrain | kEval | kPredict | kInfo,
     "where the steps run (default auto): cuda runs the trainer's CUDA "
     "kernels on GPU 0 (CUDA_VISIBLE_DEVICES picks it; libcuda.so.1 is "
     "loaded at run time), cpu its CPU code, auto cuda when the trainer has "
     "CUDA kernels and a GPU is usable, else cpu",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       if (v == "auto")
         o.device = DeviceChoice::Auto;
       else if (v == "cpu")
         o.device = DeviceChoice::Cpu;
       else if (v == "cuda")
         o.device = DeviceChoice::Cuda;
       else
         return makeError(f, ": unknown device '", v,
                          "' (expected auto, cpu or cuda)");
       return Error::success();
     }},
    {"--threads", nullptr, "T", kTrain | kEval | kPredict,
     "CPU threads (default: the number of hardware threads)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       return storeExpected(o.threads,
                            parseIntegerIn(f, v, 1, 1024, "between 1 and 1024"));
     }},
    {"--log", nullptr, "FILE.jsonl", kTrain,
     "write one JSON line per optimizer step and per epoch",
     PATH_FLAG(loop.logPath)},
    {"--export", nullptr, "FILE.onnx", kTrain,
     "after training, write the model with its trained weights and "
     "BatchNorm in inference mode",
     PATH_FLAG(exportPath)},
    // Data parallelism: launched by mpirun or a torchrun-style environment.
    {"--sync-bn", nullptr, nullptr, kTrain,
     "data-parallel runs: BatchNorm statistics over the global batch of all "
     "replicas (SyncBatchNorm) instead of each replica's own slice (DDP's "
     "default)",
     [](TrainerOptions &o, const std::string &, const std::string &) {
       o.syncBatchNorm = true;
       return Error::success();
     }},
    {"--dist-timeout", nullptr, "SECONDS", kTrain,
     "data-parallel runs: how long a replica waits for the others in a "
     "collective (or the rendezvous) before it stops with an error "
     "(default 300)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       Expected<double> value = parseReal(f, v);
       if (!value)
         return value.takeError();
       if (!(*value > 0 && *value <= 86400))
         return makeError(f, " must lie in (0, 86400] seconds, got ", v);
       o.distTimeout = *value;
       return Error::success();
     }},
    {"--bucket-mb", nullptr, "MB", kTrain,
     "data-parallel runs: largest bucket of the gradient all-reduce in "
     "host memory, in MiB; each starts as soon as it is packed (default "
     "25, as DDP's bucket_cap_mb)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       Expected<double> value = parseReal(f, v);
       if (!value)
         return value.takeError();
       if (!(*value > 0 && *value <= 4096))
         return makeError(f, " must lie in (0, 4096] MiB, got ", v);
       o.bucketMiB = *value;
       return Error::success();
     }},
    {"--no-fold-bn", nullptr, nullptr, kTrain,
     "--export: keep each BatchNormalization after a Conv instead of folding "
     "it into the Conv's weight and bias (for comparison, or to reload the "
     "export with --weights/--init-from)",
     [](TrainerOptions &o, const std::string &, const std::string &) {
       o.exportFoldBatchNorm = false;
       return Error::success();
     }},
};

#undef PATH_FLAG

/// The flag called `name` that `command` accepts, else the first one
/// called so (for the "not accepted" error).
const FlagSpec *findFlag(const std::string &name, Command command) {
  const FlagSpec *found = nullptr;
  for (const FlagSpec &spec : kFlags)
    if (name == spec.name || (spec.alias && name == spec.alias)) {
      if (spec.commands & maskOf(command))
        return &spec;
      if (!found)
        found = &spec;
    }
  return found;
}

Command commandFromName(const std::string &name) {
  for (Command c :
       {Command::Train, Command::Eval, Command::Predict, Command::Info,
        Command::Plot})
    if (name == commandName(c))
      return c;
  return Command::None;
}

/// Flags that only mean something with another flag.
Error checkTrainingLoopFlags(const LoopOptions &o) {
  const ScheduleKind k = o.schedule;
  const char *name = scheduleKindName(k);
  if (k == ScheduleKind::Step && !o.stepSize)
    return makeError("--schedule step needs --step-size N");
  if (k != ScheduleKind::Step && (o.stepSize || o.gamma))
    return makeError(o.stepSize ? "--step-size" : "--gamma",
                     " applies to --schedule step only, not ", name);
  if (k != ScheduleKind::Plateau &&
      (o.plateauPatience || o.plateauFactor || o.plateauThreshold ||
       o.cooldown))
    return makeError(o.plateauPatience    ? "--plateau-patience"
                     : o.plateauFactor    ? "--plateau-factor"
                     : o.plateauThreshold ? "--plateau-threshold"
                                          : "--cooldown",
                     " applies to --schedule plateau only, not ", name);
  if (o.minLr && k != ScheduleKind::Cosine && k != ScheduleKind::Plateau)
    return makeError("--min-lr applies to --schedule cosine or plateau "
                     "only, not ",
                     name);
  if (o.minDelta && !o.earlyStopPatience)
    return makeError("--min-delta needs --early-stop-patience");
  if (o.monitor && k != ScheduleKind::Plateau && !o.earlyStopPatience &&
      !o.saveBestOnly)
    return makeError("--monitor needs --schedule plateau, "
                     "--early-stop-patience or --save-best-only");
  if (!o.checkpointDir && (o.checkpointEvery || o.saveBestOnly || o.keepLast))
    return makeError(o.checkpointEvery ? "--checkpoint-every"
                     : o.saveBestOnly  ? "--save-best-only"
                                       : "--keep-last",
                     " needs --checkpoint-dir");
  return Error::success();
}

/// One source of weights at most; --init-from starts a run, --resume
/// continues one.
Error checkWeightsFlags(const TrainerOptions &o) {
  if (o.weightsPath && o.checkpointPath)
    return makeError("--weights cannot be combined with --checkpoint: give "
                     "one source of weights");
  if (o.initFromPath && o.loop.resumePath)
    return makeError("--init-from cannot be combined with --resume: --resume "
                     "continues a run with its own weights, --init-from "
                     "starts a new one");
  return Error::success();
}

/// Relations between flags of one command.
Error checkCombinations(const TrainerOptions &o) {
  if (Error err = checkWeightsFlags(o))
    return err;
  switch (o.command) {
  case Command::Train:
    if (o.data.dataset && (o.data.trainX || o.data.trainY))
      return makeError("--dataset cannot be combined with --train-x/--train-y");
    if (!o.data.dataset && !o.data.trainX)
      return makeError("train needs data: --train-x X.npy --train-y Y.npy, "
                       "or --dataset fashion-mnist[:DIR]");
    if (o.data.trainY && !o.data.trainX)
      return makeError("--train-y needs --train-x");
    if (o.data.dataset && (o.data.valX || o.data.valY || o.data.valSplit))
      return makeError("--dataset validates on its t10k split; it cannot be "
                       "combined with --val-x, --val-y or --val-split");
    if (o.data.valY && !o.data.valX)
      return makeError("--val-y needs --val-x");
    if (o.data.valSplit && (o.data.valX || o.data.valY))
      return makeError("--val-split cannot be combined with --val-x/--val-y");
    return checkTrainingLoopFlags(o.loop);
  case Command::Eval:
    if (o.data.dataset && (o.data.evalX || o.data.evalY))
      return makeError("--dataset cannot be combined with --x/--y");
    if (!o.data.dataset && !o.data.evalX)
      return makeError("eval needs data: --x X.npy --y Y.npy, or --dataset "
                       "fashion-mnist[:DIR]");
    if (o.data.evalY && !o.data.evalX)
      return makeError("--y needs --x");
    return Error::success();
  case Command::Predict:
    if (!o.data.evalX)
      return makeError("predict needs --x X.npy");
    if (!o.predictOutput)
      return makeError("predict needs -o OUT.npy");
    return Error::success();
  case Command::Plot:
    if (!o.plotLog)
      return makeError("plot needs the log file: plot RUN.jsonl -o "
                       "CURVES.svg");
    if (!o.plotOutput)
      return makeError("plot needs -o CURVES.svg");
    return Error::success();
  case Command::Info:
  case Command::None:
    return Error::success();
  }
  return Error::success();
}

} // namespace

Expected<TrainerOptions> parseCommandLine(int argc, const char *const *argv) {
  TrainerOptions options;
  if (argc < 2)
    return makeError("no command given (train, eval, predict, info or plot; "
                     "see --help)");
  std::string first = argv[1];
  if (first == "--help" || first == "-h") {
    options.help = true;
    if (argc > 2)
      return makeError("unexpected argument '", argv[2], "' after ", first);
    return options;
  }
  options.command = commandFromName(first);
  if (options.command == Command::None)
    return makeError("unknown command '", first,
                     "' (expected train, eval, predict, info or plot; see "
                     "--help)");
  std::string command = commandName(options.command);

  std::set<const FlagSpec *> seen;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      options.help = true;
      continue;
    }
    // plot's one operand: the log file.
    if (options.command == Command::Plot && !options.plotLog &&
        !arg.empty() && arg[0] != '-') {
      options.plotLog = arg;
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-')
      return makeError("unexpected argument '", arg, "' (", command,
                       " takes only options; see '", command, " --help')");
    std::string name = arg, value;
    bool inlineValue = false;
    size_t equals = arg.find('=');
    if (arg.rfind("--", 0) == 0 && equals != std::string::npos) {
      name = arg.substr(0, equals);
      value = arg.substr(equals + 1);
      inlineValue = true;
    }
    const FlagSpec *spec = findFlag(name, options.command);
    if (!spec)
      return makeError("unknown option '", name, "' (see '", command,
                       " --help')");
    if (!(spec->commands & maskOf(options.command)))
      return makeError("option ", spec->name, " is not accepted by '", command,
                       "' (see '", command, " --help')");
    if (!seen.insert(spec).second)
      return makeError("option ", spec->name, " is given twice");
    if (!spec->metavar) {
      if (inlineValue)
        return makeError("option ", spec->name, " takes no value");
    } else if (!inlineValue) {
      if (i + 1 >= argc)
        return makeError("option ", spec->name, " needs a value (",
                         spec->metavar, ")");
      value = argv[++i];
    }
    if (Error err = spec->apply(options, spec->name, value))
      return err;
  }
  if (options.help)
    return options;
  if (Error err = checkCombinations(options))
    return err;
  return options;
}

namespace {
/// `text` (whose '\n' are only hints; words are re-flowed) wrapped to
/// `width` columns, continuation lines indented to `indent`.
std::string wrapText(const std::string &text, size_t indent, size_t width) {
  std::string out, word;
  size_t column = indent;
  auto flush = [&] {
    if (word.empty())
      return;
    if (column > indent && column + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else if (column > indent) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    word.clear();
  };
  for (char c : text) {
    if (c == ' ' || c == '\n')
      flush();
    else
      word += c;
  }
  flush();
  return out + "\n";
}
} // namespace

std::string helpText(const std::string &program, Command command) {
  if (command == Command::None)
    return strCat(
        "usage: ", program, " <command> [options]\n\n",
        "A trainer compiled by traincc: one model, its training step and the\n"
        "training loop around it.\n\n"
        "commands:\n"
        "  train     train the model and optionally export it (--export)\n"
        "  eval      loss and accuracy of the model's weights on a dataset\n"
        "  predict   write the model's outputs for every input sample\n"
        "  info      the model's inputs, outputs, parameters, memory and\n"
        "            compile-time options\n"
        "  plot      draw the curves of a --log file as SVG:\n"
        "            plot RUN.jsonl -o curves.svg\n\n"
        "Run '", program, " <command> --help' for the options of a command.\n");

  std::string text = strCat("usage: ", program, " ", commandName(command),
                            command == Command::Plot ? " RUN.jsonl" : "",
                            " [options]\n\noptions:\n");
  constexpr size_t kColumn = 30;
  for (const FlagSpec &spec : kFlags) {
    if (!(spec.commands & maskOf(command)))
      continue;
    std::string left = strCat("  ", spec.name);
    if (spec.alias)
      left += strCat(", ", spec.alias);
    if (spec.metavar)
      left += strCat(" ", spec.metavar);
    if (left.size() + 2 > kColumn)
      left += "\n" + std::string(kColumn, ' ');
    else
      left += std::string(kColumn - left.size(), ' ');
    text += left + wrapText(spec.help, kColumn, 79);
  }
  text += strCat("  --help, -h", std::string(kColumn - 12, ' '),
                 "print this help\n");
  if (command == Command::Train)
    text += "\n" + wrapText(
        "On SIGINT (Ctrl-C) or SIGTERM, train finishes the optimizer step in "
        "progress, writes a checkpoint (into --checkpoint-dir, else "
        "./interrupted.ckpt), says how to resume and exits with status 130 "
        "(SIGINT) or 143 (SIGTERM); a second signal ends it at once.",
        0, 79) + "\n" + wrapText(
        "On a terminal, train keeps a live line per epoch (steps done, "
        "steps/s, ETA, mean loss); otherwise it prints only the per-epoch "
        "lines. '<trainer> plot RUN.jsonl -o curves.svg' draws the --log "
        "file as SVG.",
        0, 79);
  return text;
}

} // namespace traincc::rt
