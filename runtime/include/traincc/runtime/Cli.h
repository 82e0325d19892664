//===- Cli.h - The trainer's command line -----------------------*- C++ -*-===//
//
//   trainer train|eval|predict|info [options]      (DESIGN.md section 5)
//
// Every flag is declared once in a table (Cli.cpp) with its value, its help
// text and the commands that accept it; parsing and `--help` both read that
// table. Flags take their value as the next argument or after '='
// ("--lr 0.1", "--lr=0.1"). A flag given twice, a flag the command does not
// take, a missing value or a malformed number is an error that names the
// flag. Relations between flags (which data flags go together) are checked
// here too; whether files exist and fit the model is checked when they are
// loaded.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_CLI_H
#define TRAINCC_RUNTIME_CLI_H

#include "traincc/runtime/Augment.h"
#include "traincc/runtime/Error.h"
#include "traincc/runtime/Schedule.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace traincc::rt {

enum class Command { None, Train, Eval, Predict, Info, Plot };

/// "train", "eval", ...
const char *commandName(Command command);

enum class DeviceChoice { Auto, Cpu, Cuda };

/// Everything the command line can say. Unset optionals mean "not given";
/// defaults that depend on the model (learning rate, accumulation steps) are
/// resolved by the command that uses them.
struct TrainerOptions {
  Command command = Command::None;
  /// `--help` (alone: the command list; after a command: its flags).
  bool help = false;

  // Data.
  std::optional<std::string> trainX, trainY, valX, valY;
  std::optional<double> valSplit;
  std::optional<std::string> dataset; // --dataset as given
  std::optional<std::string> evalX, evalY; // eval/predict --x/--y
  std::optional<std::string> predictOutput; // predict -o
  // Input pipeline (Augment.h, Prefetch.h).
  std::optional<Normalization> normalize; // train, eval, predict
  Augmentation augment;                   // train only
  bool prefetch = true;                   // --no-prefetch
  // plot RUN.jsonl -o CURVES.svg (Plot.h).
  std::optional<std::string> plotLog, plotOutput;

  // Loop.
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

  // Machine and outputs.
  DeviceChoice device = DeviceChoice::Auto;
  std::optional<int64_t> threads;
  std::optional<std::string> logPath;
  std::optional<std::string> exportPath;
};

/// Parses argv[1..argc) (argv[0] is the program). On success the options
/// are consistent: e.g. train has exactly one source of training data.
Expected<TrainerOptions> parseCommandLine(int argc, const char *const *argv);

/// The text `--help` prints: the command list when `command` is None, else
/// the usage and every flag of that command. `program` is argv[0]'s name.
std::string helpText(const std::string &program, Command command);

/// Number parsing shared with tests: the whole text must be the number
/// (locale independent, no leading '+', no surrounding spaces).
Expected<int64_t> parseInteger(const std::string &flag,
                               const std::string &text);
Expected<double> parseReal(const std::string &flag, const std::string &text);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_CLI_H
