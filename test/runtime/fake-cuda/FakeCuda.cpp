//===- FakeCuda.cpp - A CUDA driver that runs on the CPU, for tests -------===//
//
// libtraincc-fake-cuda.so exports the driver entry points the trainer
// runtime loads (runtime/include/traincc/runtime/exec/CudaDriver.h), so that
// the CUDA backend is tested without a GPU (TRAINCC_LIBCUDA=<this library>):
//
// * Device memory is host memory, filled with 0xff bytes (NaN floats) when
//   allocated, as real device memory is not zeroed. Copies and kernel
//   pointer arguments are checked against the live allocations.
// * Streams are queues that run only when the runtime waits on them
//   (stream or event synchronize, a cross-stream wait, a copy to pageable
//   memory, a free): a missing wait or a pinned buffer reused too early
//   gives wrong numbers instead of passing by luck.
//   TRAINCC_FAKE_CUDA_STREAMS=sync runs every operation when enqueued.
// * Modules are text: fake PTX or "FAKECUBIN sm_XY" followed by `.entry`
//   declarations; the PTX JIT fails (with a log) when its `.target` is
//   newer than the device, a cubin loads only on its own architecture.
//   cuModuleGetFunction finds kernels that the module declares and
//   FakeKernels.cpp implements.
// * Graphs record launches during stream capture and replay them.
// * Failures: TRAINCC_FAKE_CUDA_FAIL=call[@n][,...] makes the n-th (or
//   every) call of an entry point fail (out of memory for allocations,
//   INVALID_PTX with a log for module loads, LAUNCH_FAILED for launches);
//   TRAINCC_FAKE_CUDA_FAIL_KERNEL=name makes that kernel fail when it runs
//   (asynchronously, and stickily as on a real device);
//   TRAINCC_FAKE_CUDA_DEVICES=0 means no device;
//   TRAINCC_FAKE_CUDA_REJECT=cubin[,ptx] plays a driver older than the
//   toolkit: it refuses every cubin (INVALID_IMAGE) and with `ptx` every
//   PTX too (UNSUPPORTED_PTX_VERSION, with a JIT log).
// * Device: TRAINCC_FAKE_CUDA_CC (default 9.0), TRAINCC_FAKE_CUDA_MEMORY
//   (bytes, default 80 GiB), TRAINCC_FAKE_CUDA_MAX_THREADS (per block,
//   default 1024) and TRAINCC_FAKE_CUDA_MAX_SHARED (dynamic shared memory
//   per block with the opt-in, default 227 KiB); launches over them fail.
// * TRAINCC_FAKE_CUDA_EMULATION=LIB.so: kernels not implemented in
//   FakeKernels.cpp are looked up in LIB as `traincc_emu_<name>`, the
//   kernels traincc generates compiled for the CPU (`traincc
//   --emit=cuda-emulation`). Kernels without barriers or shared memory run
//   one thread at a time; the others (marked by the library) run the
//   threads of each block as fibers (ucontext, one 256 KiB stack per
//   thread, mapped once and reused) through two hooks the library exports
//   as function pointers and this driver sets after dlopen
//   (traincc_emu_run_block_hook, traincc_emu_barrier_hook): every fiber
//   runs until it reaches a barrier or returns, and when all wait at the
//   barrier the next round starts. Threads that return while others wait
//   at a barrier (a deadlock on a GPU) fail the kernel (LAUNCH_FAILED,
//   sticky), with a message naming it on stderr.
// * TRAINCC_FAKE_CUDA_STATS=FILE appends counters at exit (module kind,
//   graph captures and launches, kernels run, the most device bytes
//   allocated at once, bytes copied each way, host
//   waits on streams and events, resources still alive).
//
// Single-threaded, like the runtime's use of the driver.
//
//===----------------------------------------------------------------------===//

#include "FakeKernels.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace {

using CUresult = int;
using CUdeviceptr = unsigned long long;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
constexpr CUresult CUDA_ERROR_INVALID_IMAGE = 200;
constexpr CUresult CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
constexpr CUresult CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
constexpr CUresult CUDA_ERROR_INVALID_HANDLE = 400;
constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
constexpr CUresult CUDA_ERROR_ILLEGAL_ADDRESS = 700;
constexpr CUresult CUDA_ERROR_LAUNCH_FAILED = 719;
constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900;
constexpr CUresult CUDA_ERROR_UNKNOWN = 999;

struct ErrorText {
  CUresult code;
  const char *name, *text;
};
const ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
     "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
     "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
     "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE",
     "device kernel image is invalid"},
    {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX",
     "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE",
     "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED",
     "unspecified launch failure"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

struct Module;

/// A traincc kernel compiled for the CPU: cuLaunchKernel's arguments.
using EmulatedKernel = void (*)(void **params, const uint32_t *grid,
                                const uint32_t *block);

/// The hooks an emulation library with cooperative kernels exports (see
/// traincc-emulation-entry-points): run one block's threads as fibers
/// (nonzero: the block failed, stop the launch), and wait at a barrier.
using ThreadThunk = void (*)(void *context, uint64_t thread);
using RunBlockHook = int32_t (*)(ThreadThunk thunk, void *context,
                                 uint64_t threads);
using BarrierHook = void (*)();

/// Runs the threads of a block as fibers that switch at barriers.
class FiberBlock {
public:
  FiberBlock() = default;
  FiberBlock(const FiberBlock &) = delete;
  FiberBlock &operator=(const FiberBlock &) = delete;
  ~FiberBlock() {
    for (Fiber &f : fibers)
      munmap(f.stack, kStackBytes);
  }

  /// Runs `thunk(context, t)` for t < threads to completion, in rounds
  /// separated by barriers; an empty string, or what went wrong.
  std::string run(ThreadThunk thunk, void *context, uint64_t threads) {
    if (threads > 1024)
      return "more than 1024 threads in a block";
    this->thunk = thunk;
    this->context = context;
    size_t page = size_t(sysconf(_SC_PAGESIZE));
    while (fibers.size() < threads) {
      void *stack = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (stack == MAP_FAILED)
        return "cannot map a fiber stack";
      // A guard page: a stack overflow faults instead of corrupting.
      mprotect(stack, page, PROT_NONE);
      fibers.push_back({});
      fibers.back().stack = stack;
      // Once per fiber: getcontext is a system call (the signal mask), and
      // makecontext below resets what a thread left in the context.
      getcontext(&fibers.back().context);
    }
    for (uint64_t t = 0; t < threads; ++t) {
      Fiber &f = fibers[t];
      f.context.uc_stack.ss_sp = static_cast<char *>(f.stack) + page;
      f.context.uc_stack.ss_size = kStackBytes - page;
      f.context.uc_link = &scheduler; // where a returning thread goes
      makecontext(&f.context, reinterpret_cast<void (*)()>(&fiberMain), 1,
                  int(t));
      f.state = Fiber::Runnable;
    }
    for (int round = 1;; ++round) {
      for (uint64_t t = 0; t < threads; ++t) {
        if (fibers[t].state != Fiber::Runnable)
          continue;
        current = int(t);
        // Back here when the thread waits at a barrier or returns.
        swapcontext(&scheduler, &fibers[t].context);
      }
      current = -1;
      uint64_t waiting = 0;
      for (uint64_t t = 0; t < threads; ++t)
        if (fibers[t].state == Fiber::AtBarrier) {
          fibers[t].state = Fiber::Runnable;
          ++waiting;
        }
      if (waiting == 0)
        return "";
      if (waiting != threads)
        return std::to_string(threads - waiting) + " of " +
               std::to_string(threads) +
               " threads returned while the others wait at barrier " +
               std::to_string(round) + " (a deadlock on a GPU)";
    }
  }

  /// Called by the running thread: waits until every thread of the block
  /// reaches a barrier.
  void barrier() {
    if (current < 0)
      return; // not in a block (cannot happen with traincc's entry points)
    Fiber &f = fibers[size_t(current)];
    f.state = Fiber::AtBarrier;
    swapcontext(&f.context, &scheduler);
  }

private:
  static constexpr size_t kStackBytes = 256 << 10;
  struct Fiber {
    enum State { Runnable, AtBarrier, Done } state = Done;
    ucontext_t context;
    void *stack = nullptr;
  };

  static void fiberMain(int thread);

  // A deque: a ucontext_t points into itself, so fibers must not move.
  std::deque<Fiber> fibers;
  ucontext_t scheduler;
  int current = -1;
  ThreadThunk thunk = nullptr;
  void *context = nullptr;
};

struct Function {
  Module *module = nullptr;
  std::string name;
  std::vector<int> paramSizes; // from the module's .entry declaration
  const fakecuda::KernelDef *def = nullptr;
  EmulatedKernel emulated = nullptr;
  int maxDynamicShared = 48 * 1024;
};

struct Module {
  std::map<std::string, Function> functions;
};

struct Launch {
  Function *function = nullptr;
  fakecuda::KernelArgs args;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
};

struct Graph {
  std::vector<Launch> launches;
};

struct Stream {
  struct Op {
    uint64_t seq;
    std::function<CUresult()> run;
  };
  std::deque<Op> queue;
  uint64_t nextSeq = 1;
  Graph *capture = nullptr; // capturing into this graph
};

struct Event {
  Stream *stream = nullptr;
  uint64_t seq = 0;
  double seconds = 0;
};

struct FailRule {
  std::string call;
  long nth = 0; // 0: every call
};

/// The fake device and everything alive on it.
struct Fake {
  bool initialized = false;
  bool lazy = true;
  int devices = 1;
  int ccMajor = 9, ccMinor = 0;
  uint64_t memoryLimit = 80ull << 30;
  int maxThreads = 1024, maxSharedOptIn = 227 * 1024;
  std::vector<FailRule> failRules;
  std::map<std::string, long> callCounts;
  std::string failKernel;
  bool rejectCubin = false, rejectPtx = false; // TRAINCC_FAKE_CUDA_REJECT
  CUresult sticky = CUDA_SUCCESS;

  std::map<uintptr_t, size_t> deviceMemory, pinnedMemory;
  uint64_t deviceBytes = 0;
  std::set<Stream *> streams;
  std::set<Event *> events;
  std::set<Module *> modules;
  std::set<Graph *> graphs, graphExecs;
  int contextsRetained = 0;
  void *emulation = nullptr; // TRAINCC_FAKE_CUDA_EMULATION
  FiberBlock fibers;          // runs the blocks of cooperative kernels
  const Launch *running = nullptr; // the emulated launch being run
  uint64_t blocksRun = 0;          // of `running`
  std::string blockFailure;        // of `running`, from the fibers

  // Counters for TRAINCC_FAKE_CUDA_STATS.
  std::vector<std::string> moduleKinds;
  long captures = 0, graphLaunches = 0, eagerLaunches = 0, kernelsRun = 0;
  long streamSyncs = 0, eventSyncs = 0; // host waits
  long allocations = 0, pinnedAllocations = 0;
  uint64_t peakDeviceBytes = 0; // most bytes allocated at once
  uint64_t bytesToDevice = 0, bytesToHost = 0;

  Fake() {
    if (const char *s = std::getenv("TRAINCC_FAKE_CUDA_STREAMS"))
      lazy = std::strcmp(s, "sync") != 0;
    if (const char *s = std::getenv("TRAINCC_FAKE_CUDA_DEVICES"))
      devices = std::atoi(s);
    if (const char *s = std::getenv("TRAINCC_FAKE_CUDA_CC"))
      std::sscanf(s, "%d.%d", &ccMajor, &ccMinor);
    if (const char *s = std::getenv("TRAINCC_FAKE_CUDA_MEMORY"))
      memoryLimit = std::strtoull(s, nullptr, 10);
    if (const char *s = std::getenv("TRAINCC_FAKE_CUDA_FAIL_KERNEL"))
      failKernel = s;
    if (const char *s = std::getenv("TRAINCC_FAKE_CUDA_MAX_THREADS"))
      maxThreads = std::atoi(s);
    if (const char *s = std::getenv("TRAINCC_FAKE_CUDA_MAX_SHARED"))
      maxSharedOptIn = std::atoi(s);
    if (const char *s = std::getenv("TRAINCC_FAKE_CUDA_REJECT")) {
      rejectCubin = std::strstr(s, "cubin") != nullptr;
      rejectPtx = std::strstr(s, "ptx") != nullptr;
    }
    if (const char *s = std::getenv("TRAINCC_FAKE_CUDA_EMULATION")) {
      emulation = dlopen(s, RTLD_NOW | RTLD_LOCAL);
      if (!emulation) {
        std::fprintf(stderr, "fake CUDA: cannot load %s: %s\n", s,
                     dlerror());
        std::abort();
      }
      installHooks();
    }
    if (const char *s = std::getenv("TRAINCC_FAKE_CUDA_FAIL")) {
      std::string spec = s;
      size_t start = 0;
      while (start <= spec.size()) {
        size_t comma = spec.find(',', start);
        std::string item = spec.substr(start, comma - start);
        if (!item.empty()) {
          FailRule rule;
          size_t at = item.find('@');
          rule.call = item.substr(0, at);
          if (at != std::string::npos)
            rule.nth = std::atol(item.c_str() + at + 1);
          failRules.push_back(rule);
        }
        if (comma == std::string::npos)
          break;
        start = comma + 1;
      }
    }
  }

  ~Fake() {
    const char *path = std::getenv("TRAINCC_FAKE_CUDA_STATS");
    if (!path || !*path)
      return;
    std::FILE *f = std::fopen(path, "a");
    if (!f)
      return;
    for (const std::string &kind : moduleKinds)
      std::fprintf(f, "fake-cuda: module loaded from %s\n", kind.c_str());
    std::fprintf(f, "fake-cuda: graphs captured: %ld\n", captures);
    std::fprintf(f, "fake-cuda: graph launches: %ld\n", graphLaunches);
    std::fprintf(f, "fake-cuda: eager kernel launches: %ld\n", eagerLaunches);
    std::fprintf(f, "fake-cuda: kernels run: %ld\n", kernelsRun);
    std::fprintf(f, "fake-cuda: device allocations: %ld, pinned: %ld\n",
                 allocations, pinnedAllocations);
    std::fprintf(f, "fake-cuda: peak device bytes: %llu\n",
                 (unsigned long long)peakDeviceBytes);
    std::fprintf(f,
                 "fake-cuda: bytes copied: %llu to the device, %llu to the "
                 "host\n",
                 (unsigned long long)bytesToDevice,
                 (unsigned long long)bytesToHost);
    std::fprintf(f,
                 "fake-cuda: host waits: %ld cuStreamSynchronize, %ld "
                 "cuEventSynchronize\n",
                 streamSyncs, eventSyncs);
    std::fprintf(f,
                 "fake-cuda: alive at exit: %zu device buffers, %zu pinned "
                 "buffers, %zu streams, %zu events, %zu modules, %zu graphs, "
                 "%zu graph execs, %d contexts\n",
                 deviceMemory.size(), pinnedMemory.size(), streams.size(),
                 events.size(), modules.size(), graphs.size(),
                 graphExecs.size(), contextsRetained);
    std::fclose(f);
  }

  /// Points the emulation library's hooks (if it has cooperative kernels)
  /// at this driver's fibers.
  void installHooks();

  /// Whether this call of `call` is to fail (TRAINCC_FAKE_CUDA_FAIL).
  bool shouldFail(const char *call) {
    long count = ++callCounts[call];
    for (const FailRule &rule : failRules)
      if (rule.call == call && (rule.nth == 0 || rule.nth == count))
        return true;
    return false;
  }

  /// Whether [pointer, pointer + bytes) lies in one device allocation.
  bool isDevice(uintptr_t pointer, size_t bytes) const {
    auto it = deviceMemory.upper_bound(pointer);
    if (it == deviceMemory.begin())
      return false;
    --it;
    return pointer >= it->first && pointer + bytes <= it->first + it->second;
  }
  bool isPinned(const void *pointer, size_t bytes) const {
    uintptr_t p = uintptr_t(pointer);
    auto it = pinnedMemory.upper_bound(p);
    if (it == pinnedMemory.begin())
      return false;
    --it;
    return p >= it->first && p + bytes <= it->first + it->second;
  }

  /// Runs `stream`'s operations up to sequence number `seq`.
  CUresult runUntil(Stream *stream, uint64_t seq) {
    while (!stream->queue.empty() && stream->queue.front().seq <= seq) {
      Stream::Op op = std::move(stream->queue.front());
      stream->queue.pop_front();
      if (sticky != CUDA_SUCCESS)
        continue; // a failed device runs nothing more
      if (CUresult r = op.run())
        sticky = r;
    }
    return sticky;
  }
  CUresult runAll() {
    for (Stream *s : streams)
      runUntil(s, UINT64_MAX);
    return sticky;
  }
  /// Queues `op` on `stream` (or runs it now in sync mode); returns its
  /// sequence number.
  uint64_t enqueue(Stream *stream, std::function<CUresult()> op) {
    uint64_t seq = stream->nextSeq++;
    stream->queue.push_back({seq, std::move(op)});
    if (!lazy)
      runUntil(stream, seq);
    return seq;
  }

  CUresult runKernel(const Launch &launch) {
    const Function &f = *launch.function;
    if (f.name == failKernel)
      return CUDA_ERROR_LAUNCH_FAILED;
    if (f.emulated) {
      // traincc's kernels take device pointers only.
      std::vector<uint64_t> slots = launch.args.slots;
      std::vector<void *> params;
      for (uint64_t &slot : slots) {
        if (!isDevice(uintptr_t(slot), 1))
          return CUDA_ERROR_ILLEGAL_ADDRESS;
        params.push_back(&slot);
      }
      running = &launch;
      blocksRun = 0;
      blockFailure.clear();
      f.emulated(params.data(), launch.grid, launch.block);
      running = nullptr;
      ++kernelsRun;
      if (!blockFailure.empty()) {
        std::fprintf(stderr, "fake CUDA: kernel '%s': %s\n", f.name.c_str(),
                     blockFailure.c_str());
        return CUDA_ERROR_LAUNCH_FAILED;
      }
      return CUDA_SUCCESS;
    }
    const char *signature = f.def->signature;
    for (size_t i = 0; signature[i]; ++i)
      if (signature[i] == 'p' && !isDevice(uintptr_t(launch.args.slots[i]), 1))
        return CUDA_ERROR_ILLEGAL_ADDRESS;
    f.def->run(launch.args);
    ++kernelsRun;
    return CUDA_SUCCESS;
  }
};

Fake &fake() {
  static Fake instance;
  return instance;
}

void FiberBlock::fiberMain(int thread) {
  FiberBlock &self = fake().fibers;
  self.thunk(self.context, uint64_t(thread));
  self.fibers[size_t(thread)].state = Fiber::Done;
}

int32_t runBlockHook(ThreadThunk thunk, void *context, uint64_t threads) {
  Fake &F = fake();
  uint64_t block = F.blocksRun++;
  std::string error = F.fibers.run(thunk, context, threads);
  if (error.empty())
    return 0;
  if (const Launch *launch = F.running) {
    uint64_t x = block % launch->grid[0];
    uint64_t y = block / launch->grid[0] % launch->grid[1];
    uint64_t z = block / launch->grid[0] / launch->grid[1];
    error = "block (" + std::to_string(x) + ", " + std::to_string(y) + ", " +
            std::to_string(z) + "): " + error;
  }
  F.blockFailure = error;
  return 1;
}

void barrierHook() { fake().fibers.barrier(); }

void Fake::installHooks() {
  if (auto *hook = reinterpret_cast<RunBlockHook *>(
          dlsym(emulation, "traincc_emu_run_block_hook")))
    *hook = &runBlockHook;
  if (auto *hook = reinterpret_cast<BarrierHook *>(
          dlsym(emulation, "traincc_emu_barrier_hook")))
    *hook = &barrierHook;
}

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Parses the `.entry NAME(.param .TYPE name, ...)` declarations of a
/// module's text.
std::map<std::string, std::vector<int>> parseEntries(const std::string &text) {
  std::map<std::string, std::vector<int>> entries;
  for (size_t at = text.find(".entry "); at != std::string::npos;
       at = text.find(".entry ", at + 1)) {
    size_t open = text.find('(', at);
    size_t close = text.find(')', open);
    if (open == std::string::npos || close == std::string::npos)
      break;
    size_t nameStart = at + 7;
    std::string name = text.substr(nameStart, open - nameStart);
    while (!name.empty() && name.back() == ' ')
      name.pop_back();
    std::vector<int> sizes;
    std::string params = text.substr(open + 1, close - open - 1);
    for (size_t p = params.find(".param "); p != std::string::npos;
         p = params.find(".param ", p + 1)) {
      std::string type = params.substr(p + 7, 4);
      sizes.push_back(type.find("32") != std::string::npos ? 4 : 8);
    }
    entries[name] = sizes;
  }
  return entries;
}

/// Writes `message` into the JIT log buffer option of cuModuleLoadDataEx.
void writeLog(unsigned count, const int *options, void **values, int bufferOpt,
              int sizeOpt, const std::string &message) {
  char *buffer = nullptr;
  size_t size = 0;
  int sizeIndex = -1;
  for (unsigned i = 0; i < count; ++i) {
    if (options[i] == bufferOpt)
      buffer = static_cast<char *>(values[i]);
    if (options[i] == sizeOpt) {
      size = size_t(reinterpret_cast<uintptr_t>(values[i]));
      sizeIndex = int(i);
    }
  }
  if (!buffer || size == 0)
    return;
  size_t n = std::min(size - 1, message.size());
  std::memcpy(buffer, message.data(), n);
  buffer[n] = '\0';
  values[sizeIndex] = reinterpret_cast<void *>(uintptr_t(n + 1));
}

} // namespace

// The guard every entry point starts with: injected failures, then the
// sticky error of a failed kernel.
#define FAKE_ENTRY(call, failure)                                              \
  Fake &F = fake();                                                            \
  if (F.shouldFail(call))                                                      \
    return failure;                                                            \
  if (F.sticky != CUDA_SUCCESS)                                                \
    return F.sticky;

extern "C" {

CUresult cuGetErrorName(CUresult error, const char **name) {
  for (const ErrorText &e : kErrors)
    if (e.code == error) {
      *name = e.name;
      return CUDA_SUCCESS;
    }
  *name = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char **text) {
  for (const ErrorText &e : kErrors)
    if (e.code == error) {
      *text = e.text;
      return CUDA_SUCCESS;
    }
  *text = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuInit(unsigned) {
  FAKE_ENTRY("cuInit", CUDA_ERROR_UNKNOWN)
  if (F.devices < 1)
    return CUDA_ERROR_NO_DEVICE;
  F.initialized = true;
  return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *version) {
  *version = 12040;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count) {
  FAKE_ENTRY("cuDeviceGetCount", CUDA_ERROR_UNKNOWN)
  if (!F.initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  *count = F.devices;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(int *device, int ordinal) {
  FAKE_ENTRY("cuDeviceGet", CUDA_ERROR_UNKNOWN)
  if (ordinal < 0 || ordinal >= F.devices)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int length, int) {
  FAKE_ENTRY("cuDeviceGetName", CUDA_ERROR_UNKNOWN)
  std::snprintf(name, size_t(length), "Fake CUDA Device");
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, int) {
  FAKE_ENTRY("cuDeviceGetAttribute", CUDA_ERROR_UNKNOWN)
  switch (attribute) {
  case 1: // MAX_THREADS_PER_BLOCK
    *value = F.maxThreads;
    return CUDA_SUCCESS;
  case 2: // MAX_BLOCK_DIM_X
  case 3: // MAX_BLOCK_DIM_Y
    *value = std::min(F.maxThreads, 1024);
    return CUDA_SUCCESS;
  case 4: // MAX_BLOCK_DIM_Z
    *value = std::min(F.maxThreads, 64);
    return CUDA_SUCCESS;
  case 5: // MAX_GRID_DIM_X
    *value = 2147483647;
    return CUDA_SUCCESS;
  case 6: // MAX_GRID_DIM_Y
  case 7: // MAX_GRID_DIM_Z
    *value = 65535;
    return CUDA_SUCCESS;
  case 8: // MAX_SHARED_MEMORY_PER_BLOCK
    *value = std::min(F.maxSharedOptIn, 48 * 1024);
    return CUDA_SUCCESS;
  case 97: // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    *value = F.maxSharedOptIn;
    return CUDA_SUCCESS;
  case 16: // MULTIPROCESSOR_COUNT
    *value = 132;
    return CUDA_SUCCESS;
  case 75: // COMPUTE_CAPABILITY_MAJOR
    *value = F.ccMajor;
    return CUDA_SUCCESS;
  case 76: // COMPUTE_CAPABILITY_MINOR
    *value = F.ccMinor;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, int) {
  FAKE_ENTRY("cuDeviceTotalMem_v2", CUDA_ERROR_UNKNOWN)
  *bytes = size_t(F.memoryLimit);
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(void **context, int) {
  FAKE_ENTRY("cuDevicePrimaryCtxRetain", CUDA_ERROR_OUT_OF_MEMORY)
  static int token;
  *context = &token;
  ++F.contextsRetained;
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(int) {
  Fake &F = fake();
  F.runAll();
  --F.contextsRetained;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(void *) {
  FAKE_ENTRY("cuCtxSetCurrent", CUDA_ERROR_UNKNOWN)
  return CUDA_SUCCESS;
}

CUresult cuModuleLoadDataEx(Module **module, const void *image,
                            unsigned numOptions, int *options,
                            void **optionValues) {
  enum { kInfoLog = 3, kInfoLogSize = 4, kErrorLog = 5, kErrorLogSize = 6 };
  Fake &F = fake();
  auto fail = [&](CUresult code, const std::string &log) {
    writeLog(numOptions, options, optionValues, kErrorLog, kErrorLogSize, log);
    return code;
  };
  if (F.shouldFail("cuModuleLoadDataEx"))
    return fail(CUDA_ERROR_INVALID_PTX,
                "ptxas fatal   : fake JIT failure injected by "
                "TRAINCC_FAKE_CUDA_FAIL=cuModuleLoadDataEx\n");
  if (F.sticky)
    return F.sticky;
  std::string text = static_cast<const char *>(image);
  std::string kind;
  int device = F.ccMajor * 10 + F.ccMinor;
  if (text.rfind("FAKECUBIN sm_", 0) == 0) {
    if (F.rejectCubin)
      return CUDA_ERROR_INVALID_IMAGE;
    if (std::atoi(text.c_str() + 13) != device)
      return CUDA_ERROR_NO_BINARY_FOR_GPU;
    kind = "cubin " + text.substr(10, text.find('\n') - 10);
  } else {
    size_t target = text.find(".target sm_");
    if (target == std::string::npos)
      return fail(CUDA_ERROR_INVALID_PTX,
                  "ptxas application ptx input: fatal   : no .target\n");
    int wanted = std::atoi(text.c_str() + target + 11);
    if (F.rejectPtx)
      return fail(CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
                  "ptxas application ptx input, line 1; fatal   : Unsupported "
                  ".version; current version is '8.4'\n");
    if (wanted > device) {
      int line = 1;
      for (size_t i = 0; i < target; ++i)
        line += text[i] == '\n';
      return fail(CUDA_ERROR_INVALID_PTX,
                  "ptxas application ptx input, line " + std::to_string(line) +
                      "; fatal   : SM version specified by .target is higher "
                      "than default SM version assumed\n");
    }
    kind = "PTX (JIT for sm_" + std::to_string(device) + ")";
  }
  auto m = std::make_unique<Module>();
  for (auto &[name, sizes] : parseEntries(text)) {
    Function &f = m->functions[name];
    f.module = m.get();
    f.name = name;
    f.paramSizes = sizes;
    f.def = fakecuda::findKernel(name.c_str());
    if (!f.def && F.emulation)
      f.emulated = reinterpret_cast<EmulatedKernel>(
          dlsym(F.emulation, ("traincc_emu_" + name).c_str()));
  }
  writeLog(numOptions, options, optionValues, kInfoLog, kInfoLogSize,
           "fake JIT: " + std::to_string(m->functions.size()) + " kernels\n");
  F.moduleKinds.push_back(kind);
  *module = m.get();
  F.modules.insert(m.release());
  return CUDA_SUCCESS;
}

CUresult cuModuleUnload(Module *module) {
  Fake &F = fake();
  F.runAll();
  if (!F.modules.erase(module))
    return CUDA_ERROR_INVALID_HANDLE;
  delete module;
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(Function **function, Module *module,
                             const char *name) {
  FAKE_ENTRY("cuModuleGetFunction", CUDA_ERROR_NOT_FOUND)
  if (!F.modules.count(module))
    return CUDA_ERROR_INVALID_HANDLE;
  auto it = module->functions.find(name);
  // Declared by the module and implemented here (with as many parameters)
  // or in the emulation library.
  if (it == module->functions.end() ||
      (!it->second.emulated &&
       (!it->second.def || std::strlen(it->second.def->signature) !=
                               it->second.paramSizes.size())))
    return CUDA_ERROR_NOT_FOUND;
  *function = &it->second;
  return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(Function *function, int attribute, int value) {
  FAKE_ENTRY("cuFuncSetAttribute", CUDA_ERROR_INVALID_VALUE)
  if (attribute != 8 || value > F.maxSharedOptIn)
    return CUDA_ERROR_INVALID_VALUE;
  function->maxDynamicShared = value;
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  FAKE_ENTRY("cuMemAlloc_v2", CUDA_ERROR_OUT_OF_MEMORY)
  if (bytes == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (bytes > F.memoryLimit - F.deviceBytes)
    return CUDA_ERROR_OUT_OF_MEMORY;
  size_t rounded = (bytes + 255) / 256 * 256;
  void *memory = std::aligned_alloc(256, rounded);
  if (!memory)
    return CUDA_ERROR_OUT_OF_MEMORY;
  std::memset(memory, 0xff, rounded); // device memory is not zeroed
  F.deviceMemory[uintptr_t(memory)] = bytes;
  F.deviceBytes += bytes;
  F.peakDeviceBytes = std::max<uint64_t>(F.peakDeviceBytes, F.deviceBytes);
  ++F.allocations;
  *pointer = CUdeviceptr(uintptr_t(memory));
  return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr pointer) {
  Fake &F = fake();
  F.runAll(); // frees wait for the device, as cuMemFree does
  auto it = F.deviceMemory.find(uintptr_t(pointer));
  if (it == F.deviceMemory.end())
    return CUDA_ERROR_INVALID_VALUE;
  F.deviceBytes -= it->second;
  F.deviceMemory.erase(it);
  std::free(reinterpret_cast<void *>(uintptr_t(pointer)));
  return CUDA_SUCCESS;
}

CUresult cuMemHostAlloc(void **pointer, size_t bytes, unsigned) {
  FAKE_ENTRY("cuMemHostAlloc", CUDA_ERROR_OUT_OF_MEMORY)
  void *memory = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!memory)
    return CUDA_ERROR_OUT_OF_MEMORY;
  F.pinnedMemory[uintptr_t(memory)] = bytes;
  ++F.pinnedAllocations;
  *pointer = memory;
  return CUDA_SUCCESS;
}

CUresult cuMemFreeHost(void *pointer) {
  Fake &F = fake();
  F.runAll();
  if (!F.pinnedMemory.erase(uintptr_t(pointer)))
    return CUDA_ERROR_INVALID_VALUE;
  std::free(pointer);
  return CUDA_SUCCESS;
}

CUresult cuMemsetD8Async(CUdeviceptr pointer, unsigned char value,
                         size_t bytes, Stream *stream) {
  FAKE_ENTRY("cuMemsetD8Async", CUDA_ERROR_UNKNOWN)
  if (!F.streams.count(stream) || stream->capture)
    return stream && stream->capture ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
                                     : CUDA_ERROR_INVALID_HANDLE;
  if (!F.isDevice(uintptr_t(pointer), bytes))
    return CUDA_ERROR_INVALID_VALUE;
  F.enqueue(stream, [=] {
    std::memset(reinterpret_cast<void *>(uintptr_t(pointer)), value, bytes);
    return CUDA_SUCCESS;
  });
  return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr destination, const void *source,
                              size_t bytes, Stream *stream) {
  FAKE_ENTRY("cuMemcpyHtoDAsync_v2", CUDA_ERROR_UNKNOWN)
  if (!F.streams.count(stream) || stream->capture)
    return stream && stream->capture ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
                                     : CUDA_ERROR_INVALID_HANDLE;
  if (!F.isDevice(uintptr_t(destination), bytes))
    return CUDA_ERROR_INVALID_VALUE;
  F.bytesToDevice += bytes;
  void *to = reinterpret_cast<void *>(uintptr_t(destination));
  if (F.isPinned(source, bytes)) {
    // DMA from pinned memory: reads the source when it runs.
    F.enqueue(stream, [=] {
      std::memcpy(to, source, bytes);
      return CUDA_SUCCESS;
    });
  } else {
    // Pageable memory is staged before the call returns.
    auto staged = std::make_shared<std::vector<uint8_t>>(
        static_cast<const uint8_t *>(source),
        static_cast<const uint8_t *>(source) + bytes);
    F.enqueue(stream, [=] {
      std::memcpy(to, staged->data(), bytes);
      return CUDA_SUCCESS;
    });
  }
  return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoHAsync_v2(void *destination, CUdeviceptr source,
                              size_t bytes, Stream *stream) {
  FAKE_ENTRY("cuMemcpyDtoHAsync_v2", CUDA_ERROR_UNKNOWN)
  if (!F.streams.count(stream) || stream->capture)
    return stream && stream->capture ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
                                     : CUDA_ERROR_INVALID_HANDLE;
  if (!F.isDevice(uintptr_t(source), bytes))
    return CUDA_ERROR_INVALID_VALUE;
  F.bytesToHost += bytes;
  const void *from = reinterpret_cast<const void *>(uintptr_t(source));
  uint64_t seq = F.enqueue(stream, [=] {
    std::memcpy(destination, from, bytes);
    return CUDA_SUCCESS;
  });
  // Into pageable memory the copy is finished when the call returns.
  if (!F.isPinned(destination, bytes))
    return F.runUntil(stream, seq);
  return CUDA_SUCCESS;
}

CUresult cuStreamCreate(Stream **stream, unsigned) {
  FAKE_ENTRY("cuStreamCreate", CUDA_ERROR_OUT_OF_MEMORY)
  *stream = new Stream();
  F.streams.insert(*stream);
  return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(Stream *stream) {
  Fake &F = fake();
  if (!F.streams.count(stream))
    return CUDA_ERROR_INVALID_HANDLE;
  F.runAll(); // other streams may wait on this one
  F.streams.erase(stream);
  delete stream;
  return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(Stream *stream) {
  FAKE_ENTRY("cuStreamSynchronize", CUDA_ERROR_UNKNOWN)
  ++F.streamSyncs;
  if (!F.streams.count(stream))
    return CUDA_ERROR_INVALID_HANDLE;
  return F.runUntil(stream, UINT64_MAX);
}

CUresult cuStreamWaitEvent(Stream *stream, Event *event, unsigned) {
  FAKE_ENTRY("cuStreamWaitEvent", CUDA_ERROR_UNKNOWN)
  if (!F.streams.count(stream) || !F.events.count(event))
    return CUDA_ERROR_INVALID_HANDLE;
  // Waits for the event's latest record as of now.
  Stream *other = event->stream;
  uint64_t seq = event->seq;
  if (other && other != stream)
    F.enqueue(stream, [&F, other, seq] { return F.runUntil(other, seq); });
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(Function *function, unsigned gridX, unsigned gridY,
                        unsigned gridZ, unsigned blockX, unsigned blockY,
                        unsigned blockZ, unsigned sharedBytes, Stream *stream,
                        void **kernelParams, void **extra) {
  FAKE_ENTRY("cuLaunchKernel", CUDA_ERROR_LAUNCH_FAILED)
  if (!function || !F.streams.count(stream) || extra)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!gridX || !gridY || !gridZ || !blockX || !blockY || !blockZ ||
      blockX * blockY * blockZ > unsigned(F.maxThreads) || gridY > 65535 ||
      gridZ > 65535 ||
      int(sharedBytes) > function->maxDynamicShared)
    return CUDA_ERROR_INVALID_VALUE;
  Launch launch;
  launch.function = function;
  launch.grid[0] = gridX, launch.grid[1] = gridY, launch.grid[2] = gridZ;
  launch.block[0] = blockX, launch.block[1] = blockY, launch.block[2] = blockZ;
  // The arguments are copied now, by the sizes the module declares.
  for (size_t i = 0; i < function->paramSizes.size(); ++i) {
    uint64_t slot = 0;
    std::memcpy(&slot, kernelParams[i], size_t(function->paramSizes[i]));
    launch.args.slots.push_back(slot);
  }
  if (stream->capture) {
    stream->capture->launches.push_back(std::move(launch));
    return CUDA_SUCCESS;
  }
  ++F.eagerLaunches;
  F.enqueue(stream, [&F, launch] { return F.runKernel(launch); });
  return CUDA_SUCCESS;
}

CUresult cuStreamBeginCapture_v2(Stream *stream, int) {
  FAKE_ENTRY("cuStreamBeginCapture_v2", CUDA_ERROR_UNKNOWN)
  if (!F.streams.count(stream) || stream->capture)
    return CUDA_ERROR_INVALID_VALUE;
  stream->capture = new Graph();
  return CUDA_SUCCESS;
}

CUresult cuStreamEndCapture(Stream *stream, Graph **graph) {
  Fake &F = fake();
  if (!F.streams.count(stream) || !stream->capture)
    return CUDA_ERROR_INVALID_VALUE;
  *graph = stream->capture;
  stream->capture = nullptr;
  F.graphs.insert(*graph);
  ++F.captures;
  return F.shouldFail("cuStreamEndCapture") ? CUDA_ERROR_UNKNOWN
                                            : CUDA_SUCCESS;
}

CUresult cuGraphInstantiateWithFlags(Graph **exec, Graph *graph,
                                     unsigned long long) {
  FAKE_ENTRY("cuGraphInstantiateWithFlags", CUDA_ERROR_OUT_OF_MEMORY)
  if (!F.graphs.count(graph))
    return CUDA_ERROR_INVALID_HANDLE;
  *exec = new Graph(*graph);
  F.graphExecs.insert(*exec);
  return CUDA_SUCCESS;
}

CUresult cuGraphLaunch(Graph *exec, Stream *stream) {
  FAKE_ENTRY("cuGraphLaunch", CUDA_ERROR_LAUNCH_FAILED)
  if (!F.graphExecs.count(exec) || !F.streams.count(stream))
    return CUDA_ERROR_INVALID_HANDLE;
  ++F.graphLaunches;
  F.enqueue(stream, [&F, exec] {
    for (const Launch &launch : exec->launches)
      if (CUresult r = F.runKernel(launch))
        return r;
    return CUDA_SUCCESS;
  });
  return CUDA_SUCCESS;
}

CUresult cuGraphExecDestroy(Graph *exec) {
  Fake &F = fake();
  F.runAll();
  if (!F.graphExecs.erase(exec))
    return CUDA_ERROR_INVALID_HANDLE;
  delete exec;
  return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(Graph *graph) {
  Fake &F = fake();
  if (!F.graphs.erase(graph))
    return CUDA_ERROR_INVALID_HANDLE;
  delete graph;
  return CUDA_SUCCESS;
}

CUresult cuEventCreate(Event **event, unsigned) {
  FAKE_ENTRY("cuEventCreate", CUDA_ERROR_OUT_OF_MEMORY)
  *event = new Event();
  F.events.insert(*event);
  return CUDA_SUCCESS;
}

CUresult cuEventRecord(Event *event, Stream *stream) {
  FAKE_ENTRY("cuEventRecord", CUDA_ERROR_UNKNOWN)
  if (!F.events.count(event) || !F.streams.count(stream))
    return CUDA_ERROR_INVALID_HANDLE;
  event->stream = stream;
  event->seq = F.enqueue(stream, [event] {
    event->seconds = now();
    return CUDA_SUCCESS;
  });
  return CUDA_SUCCESS;
}

CUresult cuEventSynchronize(Event *event) {
  FAKE_ENTRY("cuEventSynchronize", CUDA_ERROR_UNKNOWN)
  ++F.eventSyncs;
  if (!F.events.count(event))
    return CUDA_ERROR_INVALID_HANDLE;
  if (!event->stream)
    return CUDA_SUCCESS;
  return F.runUntil(event->stream, event->seq);
}

CUresult cuEventElapsedTime(float *milliseconds, Event *start, Event *end) {
  FAKE_ENTRY("cuEventElapsedTime", CUDA_ERROR_UNKNOWN)
  if (!F.events.count(start) || !F.events.count(end))
    return CUDA_ERROR_INVALID_HANDLE;
  *milliseconds = float((end->seconds - start->seconds) * 1000);
  return CUDA_SUCCESS;
}

CUresult cuEventDestroy_v2(Event *event) {
  Fake &F = fake();
  F.runAll(); // queued records write to the event
  if (!F.events.erase(event))
    return CUDA_ERROR_INVALID_HANDLE;
  delete event;
  return CUDA_SUCCESS;
}

} // extern "C"
