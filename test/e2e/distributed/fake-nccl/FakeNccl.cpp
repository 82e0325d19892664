//===- FakeNccl.cpp - An NCCL for the fake CUDA driver, for tests ---------===//
//
// libtraincc-fake-nccl.so exports the NCCL entry points the runtime loads
// (runtime/include/traincc/runtime/distributed/NcclGradients.h), so that
// data-parallel CUDA trainers run on the fake CUDA driver
// (test/runtime/fake-cuda, TRAINCC_LIBCUDA) with TRAINCC_LIBNCCL=<this>:
//
// * Device memory is the fake driver's, i.e. host memory. A collective
//   first runs the work queued on its stream (the fake driver's
//   cuStreamSynchronize), then runs at once: each rank copies its buffer
//   into its slot of a POSIX shared-memory segment named by the unique id,
//   waits for the others, and sums the slots in rank order (every rank
//   gets the same bits), dividing by the rank count for ncclAvg.
// * Calls inside ncclGroupStart/End run at ncclGroupEnd, as NCCL defines.
// * A rank that does not arrive within TRAINCC_FAKE_NCCL_TIMEOUT seconds
//   (default 10) makes the collective give up and the communicator report
//   ncclRemoteError from ncclCommGetAsyncError, as NCCL's watchdog does
//   when a peer dies; the call itself returns ncclSuccess (NCCL's calls
//   only enqueue).
// * TRAINCC_FAKE_NCCL_FAIL=call makes every call of that entry point fail
//   with ncclSystemError.
// * TRAINCC_FAKE_NCCL_LOG=FILE appends one line per call,
//   "rank R: call args", for tests of the call sequence.
//
//===----------------------------------------------------------------------===//

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

enum Result {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
};
constexpr int kFloat32 = 7, kSum = 0, kAvg = 4;
constexpr size_t kSlotBytes = size_t(64) << 20; // per rank; mapped lazily

struct UniqueId {
  char bytes[128];
};

struct Shared {
  std::atomic<int> arrived;
  std::atomic<int> generation;
};

struct Comm {
  int rank = 0, nranks = 1;
  Shared *shared = nullptr;
  char *slots = nullptr;
  size_t mapped = 0;
  int asyncError = ncclSuccess;
};

struct PendingReduce {
  const void *send;
  void *recv;
  size_t count;
  int op;
  Comm *comm;
  void *stream;
};

int groupDepth = 0;
std::vector<PendingReduce> group;

void log(const Comm *comm, const std::string &line) {
  const char *path = std::getenv("TRAINCC_FAKE_NCCL_LOG");
  if (!path || !*path)
    return;
  std::string text =
      (comm ? "rank " + std::to_string(comm->rank) + ": " : std::string()) +
      line + "\n";
  int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd >= 0) {
    (void)!::write(fd, text.data(), text.size());
    ::close(fd);
  }
}

bool shouldFail(const char *call) {
  const char *names = std::getenv("TRAINCC_FAKE_NCCL_FAIL");
  if (!names)
    return false;
  std::string list = std::string(",") + names + ",";
  return list.find(std::string(",") + call + ",") != std::string::npos;
}

double timeoutSeconds() {
  const char *text = std::getenv("TRAINCC_FAKE_NCCL_TIMEOUT");
  return text && *text ? std::atof(text) : 10.0;
}

/// Waits until all ranks arrive; false after the timeout.
bool barrier(Comm &c) {
  Shared &s = *c.shared;
  const int generation = s.generation.load();
  if (s.arrived.fetch_add(1) + 1 == c.nranks) {
    s.arrived.store(0);
    s.generation.fetch_add(1);
    return true;
  }
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(timeoutSeconds()));
  while (s.generation.load() == generation) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  return true;
}

/// The fake CUDA driver's cuStreamSynchronize: runs what the stream holds.
int synchronize(void *stream) {
  const char *path = std::getenv("TRAINCC_LIBCUDA");
  void *driver = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  auto *sync = driver ? reinterpret_cast<int (*)(void *)>(
                            dlsym(driver, "cuStreamSynchronize"))
                      : nullptr;
  return sync ? sync(stream) : 0;
}

void runReduce(const PendingReduce &r) {
  Comm &c = *r.comm;
  if (c.asyncError != ncclSuccess)
    return;
  if (synchronize(r.stream) != 0) {
    c.asyncError = ncclUnhandledCudaError;
    return;
  }
  const size_t bytes = r.count * sizeof(float);
  std::memcpy(c.slots + size_t(c.rank) * kSlotBytes, r.send, bytes);
  if (!barrier(c)) {
    c.asyncError = ncclRemoteError;
    return;
  }
  auto *out = static_cast<float *>(r.recv);
  for (size_t i = 0; i < r.count; ++i) {
    float sum = 0;
    for (int k = 0; k < c.nranks; ++k)
      sum += reinterpret_cast<const float *>(c.slots +
                                             size_t(k) * kSlotBytes)[i];
    out[i] = r.op == kAvg ? sum / float(c.nranks) : sum;
  }
  // Nobody overwrites a slot before all have read it.
  if (!barrier(c))
    c.asyncError = ncclRemoteError;
}

} // namespace

extern "C" {

int ncclGetVersion(int *version) {
  *version = 21803;
  log(nullptr, "ncclGetVersion");
  return ncclSuccess;
}

const char *ncclGetErrorString(int result) {
  switch (result) {
  case ncclSuccess:
    return "no error";
  case ncclUnhandledCudaError:
    return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
  case ncclSystemError:
    return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
  case ncclInvalidArgument:
    return "invalid argument (run with NCCL_DEBUG=WARN for details)";
  case ncclRemoteError:
    return "remote process exited or there was a network error";
  default:
    return "internal error";
  }
}

int ncclGetUniqueId(UniqueId *id) {
  if (shouldFail("ncclGetUniqueId"))
    return ncclSystemError;
  std::memset(id, 0, sizeof(*id));
  std::snprintf(id->bytes, sizeof(id->bytes), "/traincc-fake-nccl-%d-%lld",
                int(::getpid()),
                (long long)std::chrono::steady_clock::now()
                    .time_since_epoch()
                    .count());
  log(nullptr, "ncclGetUniqueId");
  return ncclSuccess;
}

int ncclCommInitRank(Comm **comm, int nranks, UniqueId id, int rank) {
  Comm probe;
  probe.rank = rank;
  log(&probe, "ncclCommInitRank nranks=" + std::to_string(nranks) +
                  " rank=" + std::to_string(rank));
  if (shouldFail("ncclCommInitRank"))
    return ncclSystemError;
  if (nranks < 1 || rank < 0 || rank >= nranks || !id.bytes[0])
    return ncclInvalidArgument;
  auto *c = new Comm();
  c->rank = rank;
  c->nranks = nranks;
  c->mapped = 4096 + size_t(nranks) * kSlotBytes;
  int fd = ::shm_open(id.bytes, O_RDWR | O_CREAT, 0600);
  if (fd < 0 || ::ftruncate(fd, off_t(c->mapped)) != 0) {
    delete c;
    return ncclSystemError;
  }
  void *base =
      ::mmap(nullptr, c->mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) {
    delete c;
    return ncclSystemError;
  }
  c->shared = static_cast<Shared *>(base);
  c->slots = static_cast<char *>(base) + 4096;
  // A fresh segment is zero: arrived 0, generation 0.
  if (!barrier(*c)) {
    ::munmap(base, c->mapped);
    delete c;
    return ncclRemoteError;
  }
  if (rank == 0)
    ::shm_unlink(id.bytes); // all have it mapped
  *comm = c;
  return ncclSuccess;
}

int ncclCommGetAsyncError(Comm *comm, int *result) {
  *result = comm->asyncError;
  return ncclSuccess;
}

void release(Comm *comm) {
  ::munmap(comm->shared, comm->mapped);
  delete comm;
}

int ncclCommDestroy(Comm *comm) {
  log(comm, "ncclCommDestroy");
  release(comm);
  return ncclSuccess;
}

int ncclCommAbort(Comm *comm) {
  log(comm, "ncclCommAbort");
  release(comm);
  return ncclSuccess;
}

int ncclGroupStart() {
  ++groupDepth;
  return ncclSuccess;
}

int ncclGroupEnd() {
  if (groupDepth == 0)
    return ncclInvalidUsage;
  if (--groupDepth > 0)
    return ncclSuccess;
  if (!group.empty())
    log(group.front().comm,
        "ncclGroupEnd: " + std::to_string(group.size()) + " all-reduces");
  std::vector<PendingReduce> run;
  run.swap(group);
  for (const PendingReduce &r : run)
    runReduce(r);
  return ncclSuccess;
}

int ncclAllReduce(const void *send, void *recv, size_t count, int datatype,
                  int op, Comm *comm, void *stream) {
  log(comm, "ncclAllReduce count=" + std::to_string(count) +
                (datatype == kFloat32 ? " float32" : " other-type") +
                (op == kAvg ? " avg" : op == kSum ? " sum" : " other-op"));
  if (shouldFail("ncclAllReduce"))
    return ncclSystemError;
  if (datatype != kFloat32 || (op != kAvg && op != kSum) || !comm ||
      count * sizeof(float) > kSlotBytes)
    return ncclInvalidArgument;
  PendingReduce r{send, recv, count, op, comm, stream};
  if (groupDepth > 0)
    group.push_back(r);
  else
    runReduce(r);
  return ncclSuccess;
}

} // extern "C"
