//===- KernelProfile.cpp - the timers of traincc --profile-kernels --------===//

#include "traincc/runtime/support/KernelProfile.h"

#include "traincc/runtime/ModelABI.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <vector>

namespace traincc::rt {

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char *kStepNames[] = {"micro_step", "apply_step",
                                      "eval_step"};
constexpr int kSteps = 3;

constexpr const char *kClassNames[TRAINCC_KERNEL_CLASS_COUNT] = {
    "conv forward", "conv data gradient", "conv filter gradient",
    "matmul",       "pooling",            "reduction",
    "elementwise",  "copy and fill"};

struct KernelTotal {
  int32_t kernelClass = TRAINCC_KERNEL_ELEMENTWISE;
  int64_t flops = 0, bytes = 0;
  double seconds = 0;
  uint64_t calls = 0; // timed calls: the first one is left out
  bool seen = false;

  double secondsPerCall() const { return calls ? seconds / calls : 0; }
};

/// The whole calls of one step function, kernels and all.
struct StepCalls {
  double seconds = 0;
  uint64_t calls = 0; // timed calls: the first one is left out
  bool seen = false;
};

struct Profile {
  std::mutex mutex;
  std::vector<KernelTotal> steps[kSteps];
  StepCalls stepCalls[kSteps];
};

Profile &profile() {
  static Profile instance;
  return instance;
}

thread_local Clock::time_point kernelStart;

double rate(double amount, double seconds) {
  return seconds > 0 ? amount / seconds * 1e-9 : 0;
}

/// How many of each step's slowest kernels to list: TRAINCC_SLOWEST_KERNELS
/// (0: all, to compare two builds kernel by kernel), else 8. A value that is
/// not a count is named on `out` and the default kept.
size_t slowestKernelsToList(std::FILE *out) {
  const char *count = std::getenv("TRAINCC_SLOWEST_KERNELS");
  if (!count)
    return 8;
  char *end = nullptr;
  unsigned long value = std::strtoul(count, &end, 10);
  if (end == count || *end != '\0' || count[0] == '-') {
    std::fprintf(out,
                 "warning: TRAINCC_SLOWEST_KERNELS='%s' is not a count of "
                 "kernels (0 lists all); listing 8\n",
                 count);
    return 8;
  }
  return value;
}

/// `listed`: how many of the slowest kernels to print, 0 for all.
void printStep(std::FILE *out, const char *name,
               const std::vector<KernelTotal> &kernels,
               const StepCalls &stepCalls, size_t listed) {
  struct ClassTotal {
    unsigned kernels = 0;
    double seconds = 0, flops = 0, bytes = 0;
  } classes[TRAINCC_KERNEL_CLASS_COUNT];
  double total = 0;
  uint64_t calls = 0;
  for (const KernelTotal &kernel : kernels) {
    if (!kernel.calls)
      continue;
    ClassTotal &c = classes[kernel.kernelClass];
    ++c.kernels;
    c.seconds += kernel.secondsPerCall();
    c.flops += double(kernel.flops);
    c.bytes += double(kernel.bytes);
    total += kernel.secondsPerCall();
    calls = std::max(calls, kernel.calls);
  }
  std::fprintf(out,
               "%s: %zu kernels, %.3f ms per call (%llu calls timed)\n"
               "  %-22s %7s %10s %7s %9s %9s\n",
               name, kernels.size(), total * 1e3, (unsigned long long)calls,
               "class", "kernels", "ms/call", "share", "GFLOP/s", "GB/s");
  for (int k = 0; k < TRAINCC_KERNEL_CLASS_COUNT; ++k) {
    const ClassTotal &c = classes[k];
    if (!c.kernels)
      continue;
    std::fprintf(out, "  %-22s %7u %10.3f %6.1f%% %9.1f %9.1f\n",
                 kClassNames[k], c.kernels, c.seconds * 1e3,
                 total > 0 ? 100 * c.seconds / total : 0,
                 rate(c.flops, c.seconds), rate(c.bytes, c.seconds));
  }
  if (stepCalls.calls) {
    double step = stepCalls.seconds / double(stepCalls.calls);
    std::fprintf(out,
                 "  outside kernels: %.3f ms per call (%.1f%% of the whole "
                 "call's %.3f ms)\n",
                 (step - total) * 1e3,
                 step > 0 ? 100 * (step - total) / step : 0, step * 1e3);
  }
  std::vector<size_t> order(kernels.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return kernels[a].secondsPerCall() > kernels[b].secondsPerCall();
  });
  if (listed == 0)
    listed = order.size();
  std::fprintf(out, "  slowest kernels (numbered as in traincc --report):\n");
  for (size_t i = 0; i < std::min<size_t>(order.size(), listed); ++i) {
    const KernelTotal &kernel = kernels[order[i]];
    if (!kernel.calls)
      break;
    double seconds = kernel.secondsPerCall();
    std::fprintf(out, "  %5zu  %-22s %10.3f %6.1f%% %9.1f %9.1f\n", order[i],
                 kClassNames[kernel.kernelClass], seconds * 1e3,
                 total > 0 ? 100 * seconds / total : 0,
                 rate(double(kernel.flops), seconds),
                 rate(double(kernel.bytes), seconds));
  }
}

} // namespace

bool printKernelProfile(std::FILE *out) {
  Profile &p = profile();
  std::lock_guard<std::mutex> lock(p.mutex);
  bool printed = false;
  size_t listed = 0;
  for (int step = 0; step < kSteps; ++step) {
    const std::vector<KernelTotal> &kernels = p.steps[step];
    if (std::none_of(kernels.begin(), kernels.end(),
                     [](const KernelTotal &k) { return k.calls > 0; }))
      continue;
    if (!printed) {
      std::fprintf(out, "kernel times (traincc --profile-kernels; the first "
                        "call of each kernel is left out):\n");
      listed = slowestKernelsToList(out);
    }
    printed = true;
    printStep(out, kStepNames[step], kernels, p.stepCalls[step], listed);
  }
  return printed;
}

void recordStepCall(int step, double seconds) {
  if (step < 0 || step >= kSteps)
    return;
  Profile &p = profile();
  std::lock_guard<std::mutex> lock(p.mutex);
  StepCalls &calls = p.stepCalls[step];
  if (calls.seen) {
    calls.seconds += seconds;
    ++calls.calls;
  }
  calls.seen = true;
}

} // namespace traincc::rt

extern "C" void traincc_kernel_timer_start(void) {
  traincc::rt::kernelStart = traincc::rt::Clock::now();
}

extern "C" void traincc_kernel_timer_stop(int32_t step, int32_t index,
                                          int32_t kernel_class, int64_t flops,
                                          int64_t bytes) {
  using namespace traincc::rt;
  double seconds =
      std::chrono::duration<double>(Clock::now() - kernelStart).count();
  // Generated code passes constants; anything else is not a kernel of ours.
  if (step < 0 || step >= kSteps || index < 0 || kernel_class < 0 ||
      kernel_class >= TRAINCC_KERNEL_CLASS_COUNT)
    return;
  Profile &p = profile();
  std::lock_guard<std::mutex> lock(p.mutex);
  std::vector<KernelTotal> &kernels = p.steps[step];
  if (size_t(index) >= kernels.size())
    kernels.resize(size_t(index) + 1);
  KernelTotal &kernel = kernels[index];
  kernel.kernelClass = kernel_class;
  kernel.flops = flops;
  kernel.bytes = bytes;
  if (kernel.seen) {
    kernel.seconds += seconds;
    ++kernel.calls;
  }
  kernel.seen = true;
}
