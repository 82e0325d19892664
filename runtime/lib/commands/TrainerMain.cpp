//===- TrainerMain.cpp - The trainer executable's entry point -------------===//

#include "traincc/runtime/commands/TrainerMain.h"

#include "traincc/runtime/formats/Plot.h"
#include "traincc/runtime/support/File.h"
#include "traincc/runtime/support/KernelProfile.h"
#include "traincc/runtime/support/Signals.h"

#include <cstdio>

namespace traincc::rt {

namespace {

Error runCommand(const TrainerOptions &options, const ModelInfo &model) {
  switch (options.command) {
  case Command::Train:
    return runTrainCommand(options, model, stdout);
  case Command::Eval:
    return runEvalCommand(options, model, stdout);
  case Command::Predict:
    return runPredictCommand(options, model, stdout);
  case Command::Info:
    return runInfoCommand(options, model, stdout);
  case Command::Plot:
    return plotTrainingLog(*options.plotLog, *options.plotOutput, stdout);
  case Command::None:
    break;
  }
  return makeError("no command given (see --help)");
}

} // namespace

int runTrainerMain(int argc, char **argv, const traincc_model *model) {
  std::string program = argc > 0 && argv[0] ? baseName(argv[0]) : "trainer";
  auto fail = [&](const Error &err) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s\n", program.c_str(),
                 err.message().c_str());
    return 1;
  };
  Expected<TrainerOptions> options = parseCommandLine(argc, argv);
  if (!options)
    return fail(options.error());
  if (options->help) {
    std::fputs(helpText(program, options->command).c_str(), stdout);
    return 0;
  }
  Expected<ModelInfo> info = inspectModel(model);
  if (!info)
    return fail(info.error());
  Error err = runCommand(*options, *info);
  // Before an error, which is the last line a user reads.
  std::fflush(stdout);
  printKernelProfile(stderr);
  if (err)
    return fail(err);
  if (std::fflush(stdout) != 0)
    return fail(makeError("cannot write to standard output"));
  // Training stopped by SIGINT/SIGTERM (after writing a checkpoint).
  return interruptedExitStatus();
}

} // namespace traincc::rt
