//===- MpiCommunicator.cpp - Collectives through Open MPI -----------------===//
//
// Trainers link no MPI: libmpi.so.40 (Open MPI 4 and 5, Debian's
// libopenmpi3) is opened with dlopen when mpirun started the process. The
// handles below are Open MPI's ABI: MPI_COMM_WORLD, MPI_FLOAT, MPI_SUM are
// the addresses of the library's predefined objects (mpi.h's
// OMPI_PREDEFINED_GLOBAL), MPI_IN_PLACE is (void *)1. MPICH's libmpi.so.12
// has another ABI and is refused by name.
//
// Blocking MPI collectives cannot time out, so each one is started
// non-blocking (MPI_Iallreduce, MPI_Ibcast) and polled with MPI_Test until
// it completes or the deadline passes.
//
//===----------------------------------------------------------------------===//

#include "traincc/runtime/distributed/Communicator.h"

#include <chrono>
#include <climits>
#include <cstdlib>
#include <dlfcn.h>
#include <map>
#include <thread>

namespace traincc::rt {

namespace {

using MpiHandle = void *; // MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request
struct MpiStatus {        // only ever passed as MPI_STATUS_IGNORE (null)
  int fields[6];
};

struct MpiLibrary {
  std::string path;
  int (*Initialized)(int *);
  int (*Init)(int *, char ***);
  int (*Finalize)();
  int (*Comm_rank)(MpiHandle, int *);
  int (*Comm_size)(MpiHandle, int *);
  int (*Iallreduce)(const void *, void *, int, MpiHandle, MpiHandle, MpiHandle,
                    MpiHandle *);
  int (*Ibcast)(void *, int, MpiHandle, int, MpiHandle, MpiHandle *);
  int (*Ibarrier)(MpiHandle, MpiHandle *);
  int (*Test)(MpiHandle *, int *, MpiStatus *);
  int (*Abort)(MpiHandle, int);
  MpiHandle commWorld, floatType, byteType, sumOp;
};

Expected<MpiLibrary> loadMpi() {
  const char *override = std::getenv("TRAINCC_LIBMPI");
  std::string path = override && *override ? override : "libmpi.so.40";
  // RTLD_GLOBAL: Open MPI's own plugins, which it dlopens, resolve
  // libmpi's symbols through the global scope.
  void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!library) {
    const char *why = dlerror();
    return makeError("cannot load MPI: ", why ? why : path,
                     " (mpirun started this trainer; install Open MPI's "
                     "library, e.g. Debian's libopenmpi3)");
  }
  MpiLibrary mpi;
  mpi.path = path;
  Error err = Error::success();
  auto bind = [&](const char *symbol, auto &slot) {
    if (err)
      return;
    void *address = dlsym(library, symbol);
    if (!address)
      err = makeError(path, ": no '", symbol,
                      "' (an Open MPI 4 or newer library is needed)");
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(address);
  };
  bind("MPI_Initialized", mpi.Initialized);
  bind("MPI_Init", mpi.Init);
  bind("MPI_Finalize", mpi.Finalize);
  bind("MPI_Comm_rank", mpi.Comm_rank);
  bind("MPI_Comm_size", mpi.Comm_size);
  bind("MPI_Iallreduce", mpi.Iallreduce);
  bind("MPI_Ibcast", mpi.Ibcast);
  bind("MPI_Ibarrier", mpi.Ibarrier);
  bind("MPI_Test", mpi.Test);
  bind("MPI_Abort", mpi.Abort);
  bind("ompi_mpi_comm_world", mpi.commWorld);
  bind("ompi_mpi_float", mpi.floatType);
  bind("ompi_mpi_byte", mpi.byteType);
  bind("ompi_mpi_op_sum", mpi.sumOp);
  if (err)
    return err;
  return mpi;
}

class MpiCommunicator final : public Communicator {
public:
  MpiCommunicator(MpiLibrary mpi, int rank, int size, double timeoutSeconds)
      : Communicator(rank, size), mpi_(std::move(mpi)),
        timeout_(timeoutSeconds) {}

  std::string description() const override {
    return strCat("MPI (", mpi_.path, ")");
  }

  Error allReduceSum(float *data, size_t count, const char *what) override {
    // MPI counts are ints: large buffers go in pieces.
    for (size_t done = 0; done < count;) {
      int piece = int(std::min<size_t>(count - done, INT_MAX / 2));
      MpiHandle request = nullptr;
      if (int rc = mpi_.Iallreduce(reinterpret_cast<void *>(1), data + done,
                                   piece, mpi_.floatType, mpi_.sumOp,
                                   mpi_.commWorld, &request))
        return makeError(what, ": MPI_Iallreduce failed (error ", rc, ")");
      if (Error err = wait(request, what))
        return err;
      done += size_t(piece);
    }
    return Error::success();
  }

  Expected<Request> startAllReduceSum(float *data, size_t count,
                                      const char *what) override {
    if (count > size_t(INT_MAX / 2))
      return Communicator::startAllReduceSum(data, count, what);
    MpiHandle request = nullptr;
    if (int rc = mpi_.Iallreduce(reinterpret_cast<void *>(1), data, int(count),
                                 mpi_.floatType, mpi_.sumOp, mpi_.commWorld,
                                 &request))
      return makeError(what, ": MPI_Iallreduce failed (error ", rc, ")");
    Request id = nextRequest_++;
    pending_.emplace(id, Pending{request, what});
    return id;
  }

  Expected<bool> testRequest(Request id) override {
    auto found = pending_.find(id);
    if (found == pending_.end())
      return true;
    int done = 0;
    if (int rc = mpi_.Test(&found->second.request, &done, nullptr))
      return makeError(found->second.what, ": MPI_Test failed (error ", rc,
                       ")");
    if (done)
      pending_.erase(found);
    return done != 0;
  }

  Error waitRequest(Request id) override {
    auto found = pending_.find(id);
    if (found == pending_.end())
      return Error::success();
    Pending pending = found->second;
    pending_.erase(found);
    return wait(pending.request, pending.what);
  }

  Error broadcast(void *data, size_t bytes, int root,
                  const char *what) override {
    auto *base = static_cast<char *>(data);
    for (size_t done = 0; done < bytes;) {
      int piece = int(std::min<size_t>(bytes - done, INT_MAX / 2));
      MpiHandle request = nullptr;
      if (int rc = mpi_.Ibcast(base + done, piece, mpi_.byteType, root,
                               mpi_.commWorld, &request))
        return makeError(what, ": MPI_Ibcast failed (error ", rc, ")");
      if (Error err = wait(request, what))
        return err;
      done += size_t(piece);
    }
    return Error::success();
  }

  [[noreturn]] void abort(int exitCode) override {
    mpi_.Abort(mpi_.commWorld, exitCode);
    std::_Exit(exitCode); // MPI_Abort does not return; in case it does
  }

  Error finish() override {
    MpiHandle request = nullptr;
    if (int rc = mpi_.Ibarrier(mpi_.commWorld, &request))
      return makeError("end of the run: MPI_Ibarrier failed (error ", rc, ")");
    if (Error err = wait(request, "end of the run"))
      return err;
    mpi_.Finalize();
    return Error::success();
  }

private:
  /// Polls `request` until it completes or the deadline passes: spinning
  /// first (a step's collectives are short), then sleeping briefly.
  Error wait(MpiHandle &request, const char *what) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point start = Clock::now();
    const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(timeout_));
    for (int polls = 0;; ++polls) {
      int done = 0;
      if (int rc = mpi_.Test(&request, &done, nullptr))
        return makeError(what, ": MPI_Test failed (error ", rc, ")");
      if (done)
        return Error::success();
      if ((polls & 255) == 255 && Clock::now() > deadline)
        return makeError(what, ": no answer from the other replicas within ",
                         timeout_,
                         " s (--dist-timeout); one of them died or hangs");
      if (polls > 20000)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

  struct Pending {
    MpiHandle request;
    const char *what;
  };

  MpiLibrary mpi_;
  double timeout_;
  std::map<Request, Pending> pending_;
  Request nextRequest_ = 0;
};

} // namespace

Expected<std::unique_ptr<Communicator>> connectMpi(double timeoutSeconds) {
  Expected<MpiLibrary> mpi = loadMpi();
  if (!mpi)
    return mpi.takeError();
  int initialized = 0;
  mpi->Initialized(&initialized);
  if (!initialized && mpi->Init(nullptr, nullptr) != 0)
    return makeError("MPI_Init failed");
  int rank = 0, size = 1;
  mpi->Comm_rank(mpi->commWorld, &rank);
  mpi->Comm_size(mpi->commWorld, &size);
  return std::unique_ptr<Communicator>(
      new MpiCommunicator(mpi.take(), rank, size, timeoutSeconds));
}

} // namespace traincc::rt
