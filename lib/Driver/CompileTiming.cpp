//===- CompileTiming.cpp - traincc --timing -------------------------------===//

#include "CompileTiming.h"

#include "mlir/Pass/Pass.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/resource.h>

using namespace traincc;

namespace {

/// The process's peak resident size so far, in MB (getrusage: KiB on Linux).
double peakResidentMB() {
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
  return usage.ru_maxrss * 1024.0 / 1e6;
}

} // namespace

CompileTiming::CompileTiming(bool enabled, std::string printIRAfter)
    : enabled_(enabled), printIRAfter_(std::move(printIRAfter)) {
  manager_.setEnabled(enabled);
  // A tree: each stage, then its passes, slowest first within a level.
  manager_.setDisplayMode(mlir::DefaultTimingManager::DisplayMode::Tree);
  root_ = manager_.getRootScope();
}

CompileStage::CompileStage(CompileTiming &timing, llvm::StringRef name)
    : enabled_(timing.enabled()), printIRAfter_(timing.printIRAfter()),
      name_(name.str()),
      scope_(timing.root().nest(name_)),
      start_(std::chrono::steady_clock::now()) {}

CompileStage::~CompileStage() {
  if (!enabled_)
    return;
  std::chrono::duration<double> seconds =
      std::chrono::steady_clock::now() - start_;
  llvm::errs() << "traincc: timing: " << name_ << ": "
               << llvm::format("%.3f", seconds.count()) << " s, peak RSS "
               << llvm::format("%.0f", peakResidentMB()) << " MB\n";
}

void CompileStage::time(mlir::PassManager &pm) {
  if (enabled_)
    pm.enableTiming(scope_);
  if (printIRAfter_.empty())
    return;
  std::string argument = printIRAfter_;
  pm.enableIRPrinting(
      [](mlir::Pass *, mlir::Operation *) { return false; },
      [argument](mlir::Pass *pass, mlir::Operation *) {
        return pass->getArgument() == argument;
      },
      /*printModuleScope=*/false, /*printAfterOnlyOnChange=*/false,
      /*printAfterOnlyOnFailure=*/false, llvm::errs(),
      mlir::OpPrintingFlags().elideLargeElementsAttrs(16));
}
