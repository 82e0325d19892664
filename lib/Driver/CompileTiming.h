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
  explicit CompileTiming(bool enabled, std::string printIRAfter = "");

  bool enabled() const { return enabled_; }
  const std::string &printIRAfter() const { return printIRAfter_; }
  mlir::TimingScope &root() { return root_; }

private:
  bool enabled_;
  std::string printIRAfter_;
  mlir::DefaultTimingManager manager_;
  mlir::TimingScope root_;
};

/// One stage of a compile: its passes are timed under it, and its end
/// prints "traincc: timing: NAME: S s, peak RSS M MB".
class CompileStage {
public:
  CompileStage(CompileTiming &timing, llvm::StringRef name);
  ~CompileStage();
  CompileStage(const CompileStage &) = delete;
  CompileStage &operator=(const CompileStage &) = delete;

  /// Times `pm`'s passes under this stage (and prints the IR after the
  /// pass named by the compile's printIRAfter).
  void time(mlir::PassManager &pm);

private:
  bool enabled_;
  std::string printIRAfter_;
  std::string name_;
  mlir::TimingScope scope_;
  std::chrono::steady_clock::time_point start_;
};

} // namespace traincc

#endif // TRAINCC_LIB_DRIVER_COMPILETIMING_H
