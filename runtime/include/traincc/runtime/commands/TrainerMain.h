//===- TrainerMain.h - The trainer executable's entry point -----*- C++ -*-===//
//
// main() of every trainer is runTrainerMain(argc, argv, traincc_get_model()):
// parse the command line, check the model descriptor, run the command.
// Results go to stdout; errors to stderr as "<program>: error: <message>"
// with exit code 1. `--help` exits 0.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_COMMANDS_TRAINERMAIN_H
#define TRAINCC_RUNTIME_COMMANDS_TRAINERMAIN_H

#include "traincc/runtime/commands/Cli.h"
#include "traincc/runtime/support/Model.h"

#include <cstdio>

namespace traincc::rt {

/// The commands, for callers that already hold parsed options and a
/// checked model. Each writes its results to `out`.
Error runTrainCommand(const TrainerOptions &options, const ModelInfo &model,
                      std::FILE *out);
Error runEvalCommand(const TrainerOptions &options, const ModelInfo &model,
                     std::FILE *out);
Error runPredictCommand(const TrainerOptions &options, const ModelInfo &model,
                        std::FILE *out);
Error runInfoCommand(const TrainerOptions &options, const ModelInfo &model,
                     std::FILE *out);

/// The whole program; returns the exit status.
int runTrainerMain(int argc, char **argv, const traincc_model *model);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_COMMANDS_TRAINERMAIN_H
