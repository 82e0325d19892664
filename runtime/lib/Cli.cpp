//===- Cli.cpp - The trainer's command line -------------------------------===//

#include "traincc/runtime/Cli.h"

#include "traincc/runtime/FashionMnist.h"
#include "traincc/runtime/Sampler.h"

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

//===----------------------------------------------------------------------===//
// The flag table
//===----------------------------------------------------------------------===//

enum CommandMask : unsigned {
  kTrain = 1u << 0,
  kEval = 1u << 1,
  kPredict = 1u << 2,
  kInfo = 1u << 3,
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
     "training inputs, float32 [N,...] (.npy)", PATH_FLAG(trainX)},
    {"--train-y", nullptr, "Y.npy", kTrain,
     "training labels, int64 [N] (cross-entropy), or float32 targets [N,...] "
     "(mse)",
     PATH_FLAG(trainY)},
    {"--val-x", nullptr, "X.npy", kTrain, "validation inputs (with --val-y)",
     PATH_FLAG(valX)},
    {"--val-y", nullptr, "Y.npy", kTrain, "validation labels or targets",
     PATH_FLAG(valY)},
    {"--val-split", nullptr, "F", kTrain,
     "validate on the last round(N*F) training samples (0 < F < 1)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       Expected<double> value = parseReal(f, v);
       if (value && !(*value > 0 && *value < 1))
         return makeError(f, " must lie strictly between 0 and 1, got ", v);
       return storeExpected(o.valSplit, std::move(value));
     }},
    {"--dataset", nullptr, "fashion-mnist[:DIR]", kTrain | kEval,
     "built-in dataset; train: the train split, validating on t10k; "
     "eval: the t10k split (default DIR /usr/share/datasets/fashion-mnist)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       Expected<DatasetSpec> spec = parseDatasetSpec(v);
       if (!spec)
         return spec.takeError();
       o.dataset = v;
       return Error::success();
     }},
    {"--x", nullptr, "X.npy", kEval | kPredict, "inputs, float32 [N,...]",
     PATH_FLAG(evalX)},
    {"--y", nullptr, "Y.npy", kEval, "labels or targets for --x",
     PATH_FLAG(evalY)},
    {"-o", "--output", "OUT.npy", kPredict,
     "where predict writes the outputs, float32 [N,...]",
     PATH_FLAG(predictOutput)},
    // Loop.
    {"--epochs", nullptr, "E", kTrain,
     "passes over the training data (default 1, or unlimited with "
     "--max-steps)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       return storeExpected(
           o.epochs, parseIntegerIn(f, v, 1, INT32_MAX, "a positive integer"));
     }},
    {"--max-steps", nullptr, "S", kTrain,
     "stop after S optimizer steps (the epoch in progress is then "
     "validated and logged)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       return storeExpected(o.maxSteps, parseIntegerIn(f, v, 1, INT64_MAX / 2,
                                                       "a positive integer"));
     }},
    {"--lr", nullptr, "F", kTrain,
     "learning rate (default 0.01 for sgd, 0.001 for adam/adamw)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       Expected<double> value = parseReal(f, v);
       if (value && *value < 0)
         return makeError(f, " must not be negative, got ", v);
       return storeExpected(o.lr, std::move(value));
     }},
    {"--accum-steps", nullptr, "K", kTrain,
     "micro-batches per optimizer step (default: the value given to "
     "traincc)",
     [](TrainerOptions &o, const std::string &f, const std::string &v) {
       return storeExpected(o.accumSteps, parseIntegerIn(f, v, 1, 1 << 20,
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
       o.seed = value;
       return Error::success();
     }},
    {"--no-shuffle", nullptr, nullptr, kTrain,
     "visit training samples in file order",
     [](TrainerOptions &o, const std::string &, const std::string &) {
       o.shuffle = false;
       return Error::success();
     }},
    {"--class-weights", nullptr, "W0,W1,..", kTrain,
     "sample with replacement, class c with weight Wc (one per class)",
     [](TrainerOptions &o, const std::string &, const std::string &v) {
       Expected<std::vector<double>> weights = parseClassWeights(v);
       if (!weights)
         return weights.takeError();
       o.classWeights = weights.take();
       return Error::success();
     }},
    // Machine and outputs.
    {"--device", nullptr, "auto|cpu|cuda", kTrain | kEval | kPredict | kInfo,
     "where the steps run (default auto)",
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
     "write one JSON line per optimizer step and per epoch", PATH_FLAG(logPath)},
    {"--export", nullptr, "FILE.onnx", kTrain,
     "after training, write the model with its trained weights and "
     "BatchNorm in inference mode",
     PATH_FLAG(exportPath)},
};

#undef PATH_FLAG

const FlagSpec *findFlag(const std::string &name) {
  for (const FlagSpec &spec : kFlags)
    if (name == spec.name || (spec.alias && name == spec.alias))
      return &spec;
  return nullptr;
}

Command commandFromName(const std::string &name) {
  for (Command c :
       {Command::Train, Command::Eval, Command::Predict, Command::Info})
    if (name == commandName(c))
      return c;
  return Command::None;
}

/// Relations between flags of one command.
Error checkCombinations(const TrainerOptions &o) {
  switch (o.command) {
  case Command::Train:
    if (o.dataset && (o.trainX || o.trainY))
      return makeError("--dataset cannot be combined with --train-x/--train-y");
    if (!o.dataset && !o.trainX)
      return makeError("train needs data: --train-x X.npy --train-y Y.npy, "
                       "or --dataset fashion-mnist[:DIR]");
    if (o.trainY && !o.trainX)
      return makeError("--train-y needs --train-x");
    if (o.dataset && (o.valX || o.valY || o.valSplit))
      return makeError("--dataset validates on its t10k split; it cannot be "
                       "combined with --val-x, --val-y or --val-split");
    if (o.valY && !o.valX)
      return makeError("--val-y needs --val-x");
    if (o.valSplit && (o.valX || o.valY))
      return makeError("--val-split cannot be combined with --val-x/--val-y");
    return Error::success();
  case Command::Eval:
    if (o.dataset && (o.evalX || o.evalY))
      return makeError("--dataset cannot be combined with --x/--y");
    if (!o.dataset && !o.evalX)
      return makeError("eval needs data: --x X.npy --y Y.npy, or --dataset "
                       "fashion-mnist[:DIR]");
    if (o.evalY && !o.evalX)
      return makeError("--y needs --x");
    return Error::success();
  case Command::Predict:
    if (!o.evalX)
      return makeError("predict needs --x X.npy");
    if (!o.predictOutput)
      return makeError("predict needs -o OUT.npy");
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
    return makeError("no command given (train, eval, predict or info; see "
                     "--help)");
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
                     "' (expected train, eval, predict or info; see --help)");
  std::string command = commandName(options.command);

  std::set<const FlagSpec *> seen;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      options.help = true;
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
    const FlagSpec *spec = findFlag(name);
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
        "            compile-time options\n\n"
        "Run '", program, " <command> --help' for the options of a command.\n");

  std::string text = strCat("usage: ", program, " ", commandName(command),
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
  return text;
}

} // namespace traincc::rt
