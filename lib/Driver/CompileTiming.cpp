//===- CompileTiming.cpp - traincc --timing -------------------------------===//

#include "CompileTiming.h"

#include "mlir/IR/Verifier.h"
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

CompileTiming::CompileTiming(bool enabled, std::string printIRAfter,
                             bool verifyEach)
    : enabled_(enabled), printIRAfter_(std::move(printIRAfter)),
      verifyEach_(verifyEach) {
  // A tree: each stage, then its passes, slowest first within a level.
  for (mlir::DefaultTimingManager *manager : {&manager_, &backgroundManager_})
    manager->setDisplayMode(mlir::DefaultTimingManager::DisplayMode::Tree);
  manager_.setEnabled(enabled);
  root_ = manager_.getRootScope();
}

mlir::TimingScope &CompileTiming::backgroundRoot() {
  if (enabled_ && !backgroundManager_.isEnabled()) {
    backgroundManager_.setEnabled(true);
    backgroundRoot_ = backgroundManager_.getRootScope();
  }
  return backgroundRoot_;
}

CompileStage::CompileStage(CompileTiming &timing, llvm::StringRef name,
                           bool background)
    : enabled_(timing.enabled()), printIRAfter_(timing.printIRAfter()),
      verifyEach_(timing.verifyEach()), name_(name.str()),
      scope_((background ? timing.backgroundRoot() : timing.root())
                 .nest(name_)),
      start_(std::chrono::steady_clock::now()) {}

CompileStage::~CompileStage() {
  if (!enabled_)
    return;
  std::chrono::duration<double> seconds =
      std::chrono::steady_clock::now() - start_;
  // One write: a stage on another thread may end at the same time.
  std::string line;
  llvm::raw_string_ostream(line)
      << "traincc: timing: " << name_ << ": "
      << llvm::format("%.3f", seconds.count()) << " s, peak RSS "
      << llvm::format("%.0f", peakResidentMB()) << " MB\n";
  llvm::errs() << line;
}

void CompileStage::time(mlir::PassManager &pm) {
  pm.enableVerifier(verifyEach_);
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

mlir::LogicalResult CompileStage::run(mlir::PassManager &pm,
                                      mlir::Operation *op) {
  if (mlir::failed(pm.run(op)))
    return mlir::failure();
  if (verifyEach_ || mlir::succeeded(mlir::verify(op)))
    return mlir::success();
  return op->emitError("the compiler produced invalid IR in the stage '")
         << name_ << "' (traincc --verify-each names the pass)";
}
