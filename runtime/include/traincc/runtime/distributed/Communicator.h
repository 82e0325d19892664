//===- Communicator.h - The replicas of a data-parallel run -----*- C++ -*-===//
//
// A data-parallel run is N copies of the same trainer, one replica per
// process, started by a launcher:
// * `mpirun -np N ./trainer train ...` (Open MPI sets OMPI_COMM_WORLD_RANK
//   and OMPI_COMM_WORLD_SIZE): the collectives go through MPI, opened with
//   dlopen("libmpi.so.40") (TRAINCC_LIBMPI names another file), so the
//   same binary runs alone on a machine without MPI;
// * a torchrun-style environment (RANK, WORLD_SIZE, MASTER_ADDR,
//   MASTER_PORT; LOCAL_RANK optional): the collectives go over TCP
//   sockets between the replicas (a ring, TcpCommunicator.cpp), with no
//   library at all.
// Neither: a single process, and no communicator.
//
// Every collective has a deadline (--dist-timeout): a replica that died or
// hangs makes the others fail with an Error naming the collective, instead
// of waiting forever. After a failed collective the communicator is
// unusable; the caller reports the error and calls abort().
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_DISTRIBUTED_COMMUNICATOR_H
#define TRAINCC_RUNTIME_DISTRIBUTED_COMMUNICATOR_H

#include "traincc/runtime/support/Error.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace traincc::rt {

class Communicator {
public:
  virtual ~Communicator() = default;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Replicas on this host (OMPI_COMM_WORLD_LOCAL_SIZE, or torchrun's
  /// LOCAL_WORLD_SIZE; 1 when neither says), which share its cores.
  int localSize() const { return localSize_; }
  /// This replica's index among them (OMPI_COMM_WORLD_LOCAL_RANK or
  /// LOCAL_RANK; 0 when neither says).
  int localRank() const { return localRank_; }
  void setLocal(int localRank, int localSize) {
    localRank_ = localRank;
    localSize_ = localSize;
  }
  /// "MPI (libmpi.so.40)" or "TCP ring via HOST:PORT", for the start line.
  virtual std::string description() const = 0;

  /// Sums `count` floats element-wise over the replicas, in place; every
  /// replica gets the same bits. `what` names the collective in errors.
  virtual Error allReduceSum(float *data, size_t count, const char *what) = 0;
  /// A started all-reduce (startAllReduceSum).
  using Request = int64_t;
  /// Starts allReduceSum without waiting for it, where the engine can
  /// (MPI_Iallreduce); `data` must stay untouched until waitRequest says
  /// it is done. Requests complete in the order they were started, which
  /// must be the same on every replica. By default the sum is done now.
  virtual Expected<Request> startAllReduceSum(float *data, size_t count,
                                              const char *what) {
    if (Error err = allReduceSum(data, count, what))
      return err;
    return Request(-1);
  }
  /// Whether a started all-reduce has finished (without waiting).
  virtual Expected<bool> testRequest(Request) { return true; }
  /// Waits for a started all-reduce (up to --dist-timeout).
  virtual Error waitRequest(Request) { return Error::success(); }
  /// Copies `bytes` bytes from `root`'s buffer into everyone's.
  virtual Error broadcast(void *data, size_t bytes, int root,
                          const char *what) = 0;
  /// Ends the run of every replica: called after this one has reported an
  /// error, so that the others do not wait for it. Does not return.
  [[noreturn]] virtual void abort(int exitCode) = 0;
  /// A clean end, after the last collective.
  virtual Error finish() = 0;

protected:
  Communicator(int rank, int size) : rank_(rank), size_(size) {}

private:
  int rank_, size_;
  int localRank_ = 0, localSize_ = 1;
};

/// The communicator the launcher's environment asks for, or null when the
/// process runs alone (no launcher, or a world of one). Errors: an
/// inconsistent environment, MPI that cannot be loaded or started, a
/// rendezvous that fails or times out.
Expected<std::unique_ptr<Communicator>> connectReplicas(double timeoutSeconds);

/// Opened through connectReplicas (MpiCommunicator.cpp, TcpCommunicator.cpp).
Expected<std::unique_ptr<Communicator>> connectMpi(double timeoutSeconds);
Expected<std::unique_ptr<Communicator>> connectTcpRing(int rank, int size,
                                                       const std::string &host,
                                                       int port,
                                                       double timeoutSeconds);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_DISTRIBUTED_COMMUNICATOR_H
