//===- NcclGradients.cpp - Gradient averaging in device memory ------------===//

#include "traincc/runtime/distributed/NcclGradients.h"

#include "traincc/runtime/exec/CudaDriver.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <thread>

namespace traincc::rt {

namespace {

// nccl.h's values.
constexpr int kNcclSuccess = 0;
constexpr int kNcclInProgress = 7;
constexpr int kNcclFloat32 = 7;
constexpr int kNcclAvg = 4;
constexpr int kNcclAvgVersion = 21000; // 2.10
constexpr int kCudaSuccess = 0;
constexpr int kCudaNotReady = 600;

struct UniqueId {
  char bytes[128];
};

} // namespace

struct NcclGradients::Library {
  std::string path, description;
  int (*GetVersion)(int *);
  int (*GetUniqueId)(UniqueId *);
  int (*CommInitRank)(void **, int, UniqueId, int);
  int (*CommDestroy)(void *);
  int (*CommAbort)(void *);
  int (*CommGetAsyncError)(void *, int *);
  int (*AllReduce)(const void *, void *, size_t, int, int, void *, void *);
  int (*GroupStart)();
  int (*GroupEnd)();
  const char *(*GetErrorString)(int);
  // The driver's, found in the already loaded driver library: CudaDriver
  // does not bind it, and a driver without it (the fake) is waited on
  // with cuStreamSynchronize.
  int (*StreamQuery)(void *) = nullptr;

  Error check(int result, const char *call) const {
    if (result == kNcclSuccess || result == kNcclInProgress)
      return Error::success();
    return makeError("NCCL: ", call, " failed: ", GetErrorString(result),
                     " (", result, ")");
  }
};

namespace {

Expected<std::unique_ptr<NcclGradients::Library>>
loadNccl(const CudaDriver &driver) {
  const char *override = std::getenv("TRAINCC_LIBNCCL");
  std::string path = override && *override ? override : "libnccl.so.2";
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    return makeError("cannot load NCCL: ", why ? why : path);
  }
  auto nccl = std::make_unique<NcclGradients::Library>();
  nccl->path = path;
  Error err = Error::success();
  auto bind = [&](const char *symbol, auto &slot) {
    if (err)
      return;
    void *address = dlsym(handle, symbol);
    if (!address)
      err = makeError(path, ": no '", symbol, "'");
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(address);
  };
  bind("ncclGetVersion", nccl->GetVersion);
  bind("ncclGetUniqueId", nccl->GetUniqueId);
  bind("ncclCommInitRank", nccl->CommInitRank);
  bind("ncclCommDestroy", nccl->CommDestroy);
  bind("ncclCommAbort", nccl->CommAbort);
  bind("ncclCommGetAsyncError", nccl->CommGetAsyncError);
  bind("ncclAllReduce", nccl->AllReduce);
  bind("ncclGroupStart", nccl->GroupStart);
  bind("ncclGroupEnd", nccl->GroupEnd);
  bind("ncclGetErrorString", nccl->GetErrorString);
  if (err)
    return err;
  int version = 0;
  nccl->GetVersion(&version);
  if (version < kNcclAvgVersion)
    return makeError(path, " is NCCL ", version,
                     "; 2.10 or newer is needed (ncclAvg)");
  nccl->description = strCat("NCCL ", version / 10000, ".",
                             version / 100 % 100, ".", version % 100, " (",
                             path, ")");
  if (void *cuda = dlopen(driver.libraryPath().c_str(),
                          RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL))
    nccl->StreamQuery =
        reinterpret_cast<int (*)(void *)>(dlsym(cuda, "cuStreamQuery"));
  return nccl;
}

} // namespace

Expected<std::unique_ptr<NcclGradients>>
NcclGradients::open(Communicator &replicas, const DeviceArena &device,
                    Ranges ranges, double timeoutSeconds,
                    std::string &unavailable) {
  Expected<std::unique_ptr<Library>> loaded = loadNccl(*device.driver);
  // Every replica takes the same path: NCCL only where all have it.
  float missing = loaded ? 0.0f : 1.0f;
  if (Error err = replicas.allReduceSum(&missing, 1, "NCCL availability"))
    return err;
  if (missing > 0) {
    unavailable = loaded ? strCat(int64_t(missing), " of ", replicas.size(),
                                  " replicas cannot load NCCL")
                         : loaded.takeError().message();
    return std::unique_ptr<NcclGradients>();
  }
  std::unique_ptr<NcclGradients> self(new NcclGradients());
  self->nccl_ = loaded.take();
  self->device_ = device;
  self->ranges_ = std::move(ranges);
  self->timeout_ = timeoutSeconds;
  const Library &nccl = *self->nccl_;
  UniqueId id{};
  if (replicas.rank() == 0)
    if (Error err = nccl.check(nccl.GetUniqueId(&id), "ncclGetUniqueId"))
      return err;
  if (Error err = replicas.broadcast(&id, sizeof(id), 0,
                                     "broadcast of the NCCL unique id"))
    return err;
  if (Error err = nccl.check(nccl.CommInitRank(&self->comm_, replicas.size(),
                                               id, replicas.rank()),
                             "ncclCommInitRank")) {
    self->comm_ = nullptr;
    return err;
  }
  return self;
}

NcclGradients::~NcclGradients() {
  if (!comm_)
    return;
  if (failed_)
    nccl_->CommAbort(comm_);
  else
    nccl_->CommDestroy(comm_);
}

const std::string &NcclGradients::description() const {
  return nccl_->description;
}

Error NcclGradients::average() {
  const Library &nccl = *nccl_;
  auto fail = [&](Error err) {
    failed_ = true;
    return err;
  };
  if (Error err = nccl.check(nccl.GroupStart(), "ncclGroupStart"))
    return fail(std::move(err));
  for (const auto &[offset, bytes] : ranges_) {
    void *data = reinterpret_cast<void *>(uintptr_t(device_.state + offset));
    if (Error err = nccl.check(nccl.AllReduce(data, data, bytes / sizeof(float),
                                              kNcclFloat32, kNcclAvg, comm_,
                                              device_.stream),
                               "ncclAllReduce"))
      return fail(std::move(err));
  }
  if (Error err = nccl.check(nccl.GroupEnd(), "ncclGroupEnd"))
    return fail(std::move(err));
  return wait("gradient all-reduce");
}

Error NcclGradients::mean(unsigned long long data, size_t count,
                          const char *what) {
  const Library &nccl = *nccl_;
  void *values = reinterpret_cast<void *>(uintptr_t(data));
  if (Error err = nccl.check(nccl.AllReduce(values, values, count,
                                            kNcclFloat32, kNcclAvg, comm_,
                                            device_.stream),
                             "ncclAllReduce")) {
    failed_ = true;
    return err;
  }
  return wait(what);
}

Error NcclGradients::wait(const char *what) {
  const Library &nccl = *nccl_;
  auto fail = [&](Error err) {
    failed_ = true;
    return err;
  };
  // Wait for it, watching for NCCL's asynchronous errors and the deadline.
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(timeout_));
  for (int polls = 0;; ++polls) {
    int state = nccl.StreamQuery
                    ? nccl.StreamQuery(device_.stream)
                    : device_.driver->cuStreamSynchronize(
                          static_cast<cuda::CUstream>(device_.stream));
    int async = kNcclSuccess;
    nccl.CommGetAsyncError(comm_, &async);
    if (async != kNcclSuccess && async != kNcclInProgress)
      return fail(makeError(what, ": NCCL reports ",
                            nccl.GetErrorString(async), " (", async,
                            "); a replica died or its network failed"));
    if (state == kCudaSuccess)
      return Error::success();
    if (state != kCudaNotReady)
      return fail(device_.driver->check(state, strCat(what, " (NCCL)")));
    if (Clock::now() > deadline)
      return fail(makeError(what, ": NCCL did not finish within ",
                            timeout_,
                            " s (--dist-timeout); a replica died or hangs"));
    if (polls > 1000)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

} // namespace traincc::rt
