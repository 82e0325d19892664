//===- TrainerFlags.cpp - the trainer's flags, recognised by traincc ------===//
//
// `traincc --lr 0.1` is a common slip: the learning rate, the data and the
// run length are the trainer's flags, not the compiler's. traincc does not
// link the runtime, so the trainer's flag names are listed here; the test
// test/Driver/trainer-flags.test checks this list against the flag table of
// runtime/lib/commands/Cli.cpp, so a flag added there fails it until it is
// added here.
//
//===----------------------------------------------------------------------===//

#include "traincc/Driver/Compile.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

using namespace traincc;

namespace {

struct TrainerFlag {
  llvm::StringLiteral name;
  /// The trainer command that takes it, for the example in the message.
  llvm::StringLiteral command;
};

/// Every flag of the trainer's table that traincc does not have itself
/// (--accum-steps is both: traincc's sets the trainer's default).
constexpr TrainerFlag kTrainerFlags[] = {
    {"train-x", "train"},
    {"train-y", "train"},
    {"val-x", "train"},
    {"val-y", "train"},
    {"val-split", "train"},
    {"dataset", "train"},
    {"x", "eval"},
    {"y", "eval"},
    {"normalize", "train"},
    {"scale", "train"},
    {"reshape", "train"},
    {"augment", "train"},
    {"no-prefetch", "train"},
    {"epochs", "train"},
    {"max-steps", "train"},
    {"lr", "train"},
    {"seed", "train"},
    {"no-shuffle", "train"},
    {"class-weights", "train"},
    {"schedule", "train"},
    {"warmup-steps", "train"},
    {"min-lr", "train"},
    {"step-size", "train"},
    {"gamma", "train"},
    {"plateau-patience", "train"},
    {"plateau-factor", "train"},
    {"plateau-threshold", "train"},
    {"cooldown", "train"},
    {"monitor", "train"},
    {"early-stop-patience", "train"},
    {"min-delta", "train"},
    {"grad-clip-norm", "train"},
    {"checkpoint-dir", "train"},
    {"checkpoint-every", "train"},
    {"save-best-only", "train"},
    {"keep-last", "train"},
    {"resume", "train"},
    {"init-from", "train"},
    {"weights", "eval"},
    {"checkpoint", "eval"},
    {"device", "train"},
    {"threads", "train"},
    {"log", "train"},
    {"export", "train"},
    {"no-fold-bn", "train"},
    {"dist-timeout", "train"},
    {"bucket-mb", "train"},
};

} // namespace

bool traincc::rejectTrainerFlags(llvm::ArrayRef<const char *> arguments) {
  for (size_t index = 0; index < arguments.size(); ++index) {
    llvm::StringRef argument = arguments[index];
    if (argument == "--")
      break;
    if (!argument.consume_front("-"))
      continue;
    argument.consume_front("-");
    auto [name, value] = argument.split('=');
    for (const TrainerFlag &flag : kTrainerFlags) {
      if (name != flag.name)
        continue;
      std::string example = "--" + name.str();
      if (argument.contains('='))
        example += " " + value.str();
      else if (index + 1 < arguments.size() &&
               !llvm::StringRef(arguments[index + 1]).starts_with("-"))
        example += " " + std::string(arguments[index + 1]);
      llvm::errs() << "traincc: error: --" << name
                   << " is a flag of the trainer (./trainer " << flag.command
                   << " " << example << "), not of traincc\n";
      return false;
    }
  }
  return true;
}
