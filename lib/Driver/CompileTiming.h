//===- CompileTiming.h - traincc --timing ------------------------*- C++ -*-===//
//
// Where a compile's time and memory go: each stage (import, training step,
// GPU and CPU code generation, LLVM, link) prints its wall time and the
// process's peak resident size when it ends, and MLIR's timing manager
// prints every pass's time under its stage when the compile ends. All of it
// on standard error, only with --timing; without it the scopes cost
// nothing.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_LIB_DRIVER_COMPILETIMING_H
#define TRAINCC_LIB_DRIVER_COMPILETIMING_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

#include <chrono>
#include <string>

namespace traincc {

/// The timers of one compile.
class CompileTiming {
public:
  /// `printIRAfter`: a pass argument whose output each stage's pass
  /// managers print (empty: none).
  /// `verifyEach`: verify after every pass rather than once per run.
  explicit CompileTiming(bool enabled, std::string printIRAfter = "",
                         bool verifyEach = false);

  bool enabled() const { return enabled_; }
  const std::string &printIRAfter() const { return printIRAfter_; }
  bool verifyEach() const { return verifyEach_; }
  mlir::TimingScope &root() { return root_; }
  /// The root of the stages that run on a second thread beside the others
  /// (the GPU code generation): their time overlaps the main thread's, so
  /// they get a report of their own, printed after the main one.
  /// Started on first use (by one thread), so that a compile without such
  /// stages prints no empty report.
  mlir::TimingScope &backgroundRoot();

private:
  bool enabled_;
  std::string printIRAfter_;
  bool verifyEach_;
  // Destroyed (and printed) in reverse order: the main report first.
  mlir::DefaultTimingManager backgroundManager_;
  mlir::TimingScope backgroundRoot_;
  mlir::DefaultTimingManager manager_;
  mlir::TimingScope root_;
};

/// One stage of a compile: its passes are timed under it, and its end
/// prints "traincc: timing: NAME: S s, peak RSS M MB".
class CompileStage {
public:
  /// `background`: the stage runs beside the main thread's stages (see
  /// CompileTiming::backgroundRoot).
  CompileStage(CompileTiming &timing, llvm::StringRef name,
               bool background = false);
  ~CompileStage();
  CompileStage(const CompileStage &) = delete;
  CompileStage &operator=(const CompileStage &) = delete;

  /// Times `pm`'s passes under this stage (and prints the IR after the
  /// pass named by the compile's printIRAfter).
  void time(mlir::PassManager &pm);

  /// Runs `pm` (set up by time()) on `op`. Unless the compile verifies
  /// after every pass, the result is verified once here: a pass that broke
  /// the IR still stops the compile with the verifier's message.
  mlir::LogicalResult run(mlir::PassManager &pm, mlir::Operation *op);

private:
  bool enabled_;
  std::string printIRAfter_;
  bool verifyEach_;
  std::string name_;
  mlir::TimingScope scope_;
  std::chrono::steady_clock::time_point start_;
};

} // namespace traincc

#endif // TRAINCC_LIB_DRIVER_COMPILETIMING_H
