//===- KernelProfile.h - the timers of traincc --profile-kernels -*- C++
//-*-===//
//
// A trainer compiled with `traincc --profile-kernels` calls
// traincc_kernel_timer_start/stop (ModelABI.h) around every CPU kernel of
// its step functions. The runtime adds up each kernel's time, leaving out
// its first call (the first touch of the workspace's pages and of the
// caches), and the trainer prints the totals by kernel class when it
// exits. The step functions run on one thread at a time (the kernels
// inside them use the thread pool), so a kernel's time is the wall time of
// all threads working on it. The CPU backend also times each whole step
// call, so the table shows the time spent outside the kernels (thread
// hand-offs, the step's own scalar code, timer overhead).
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_SUPPORT_KERNELPROFILE_H
#define TRAINCC_RUNTIME_SUPPORT_KERNELPROFILE_H

#include <chrono>
#include <cstdio>

namespace traincc::rt {

/// Prints, for each step function whose kernels were timed, the time per
/// call, GFLOP/s and GB/s of each kernel class and the slowest kernels.
/// Prints nothing (and returns false) when no kernel was timed twice.
bool printKernelProfile(std::FILE *out);

/// Adds one call of step function `step` (0 micro_step, 1 apply_step,
/// 2 eval_step) that took `seconds`; the first call is left out, as for
/// the kernels. Cheap enough to call for every step of every trainer: it is
/// only printed when the kernels were timed too.
void recordStepCall(int step, double seconds);

/// Times its own lifetime as one call of a step function.
class StepCallTimer {
public:
  explicit StepCallTimer(int step)
      : step_(step), start_(std::chrono::steady_clock::now()) {}
  ~StepCallTimer() {
    recordStepCall(step_, std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start_)
                              .count());
  }
  StepCallTimer(const StepCallTimer &) = delete;
  StepCallTimer &operator=(const StepCallTimer &) = delete;

private:
  int step_;
  std::chrono::steady_clock::time_point start_;
};

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_SUPPORT_KERNELPROFILE_H
