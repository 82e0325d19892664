//===- Cli.h - The trainer's command line -----------------------*- C++ -*-===//
//
//   trainer train|eval|predict|info [options]      (docs/ARCHITECTURE.md)
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

#ifndef TRAINCC_RUNTIME_COMMANDS_CLI_H
#define TRAINCC_RUNTIME_COMMANDS_CLI_H

#include "traincc/runtime/data/DataSources.h"
#include "traincc/runtime/exec/StepBackend.h"
#include "traincc/runtime/loop/TrainingSettings.h"
#include "traincc/runtime/support/Error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace traincc::rt {

enum class Command { None, Train, Eval, Predict, Info, Plot };

/// "train", "eval", ...
const char *commandName(Command command);

/// Everything the command line can say. Unset optionals mean "not given";
/// defaults that depend on the model (learning rate, accumulation steps) are
/// resolved by the command that uses them. The flags of one layer are that
/// layer's own struct, so that the layer does not depend on this one.
struct TrainerOptions {
  Command command = Command::None;
  /// `--help` (alone: the command list; after a command: its flags).
  bool help = false;

  /// Data and input pipeline (DataSources.h).
  DataOptions data;
  std::optional<std::string> predictOutput; // predict -o
  // plot RUN.jsonl -o CURVES.svg (Plot.h).
  std::optional<std::string> plotLog, plotOutput;

  /// Loop, schedules, checkpoints and --log (TrainingSettings.h).
  LoopOptions loop;

  // Machine and outputs.
  DeviceChoice device = DeviceChoice::Auto; // StepBackend.h
  std::optional<int64_t> threads;
  std::optional<std::string> exportPath;
  bool exportFoldBatchNorm = true; // --no-fold-bn (OnnxExport.h)

  // Weights from a file instead of the compiled-in ones (Weights.h):
  // eval/predict --weights or --checkpoint, train --init-from.
  std::optional<std::string> weightsPath, checkpointPath, initFromPath;

  // Data parallelism (Communicator.h, DataParallel.h).
  bool syncBatchNorm = false; // --sync-bn
  double distTimeout = 300;   // --dist-timeout, seconds
  double bucketMiB = 25;      // --bucket-mb
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

#endif // TRAINCC_RUNTIME_COMMANDS_CLI_H
