//===- KernelProfile.h - the timers of traincc --profile-kernels -*- C++ -*-===//
//
// A trainer compiled with `traincc --profile-kernels` calls
// traincc_kernel_timer_start/stop (ModelABI.h) around every CPU kernel of
// its step functions. The runtime adds up each kernel's time, leaving out
// its first call (the first touch of the workspace's pages and of the
// caches), and the trainer prints the totals by kernel class when it
// exits. The step functions run on one thread at a time (the kernels
// inside them use the thread pool), so a kernel's time is the wall time of
// all threads working on it.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_SUPPORT_KERNELPROFILE_H
#define TRAINCC_RUNTIME_SUPPORT_KERNELPROFILE_H

#include <cstdio>

namespace traincc::rt {

/// Prints, for each step function whose kernels were timed, the time per
/// call, GFLOP/s and GB/s of each kernel class and the slowest kernels.
/// Prints nothing (and returns false) when no kernel was timed twice.
bool printKernelProfile(std::FILE *out);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_SUPPORT_KERNELPROFILE_H
