//===- NcclGradients.h - Gradient averaging in device memory ----*- C++ -*-===//
//
// For CUDA trainers, the replicas average their gradient accumulators with
// NCCL where it is installed: libnccl.so.2 (2.10 or newer, for ncclAvg),
// opened with dlopen (TRAINCC_LIBNCCL names another file; tests point it at
// a fake), so trainers still run where it is missing. The communicator is
// bootstrapped over the replicas' own Communicator (rank 0's ncclUniqueId
// is broadcast), the all-reduces run on the compute stream between the
// last micro_step and apply_step, in place on the device arena, one per
// run of adjacent gradient tensors, grouped. With --sync-bn the same
// communicator averages the BatchNorm statistics between the segments of
// a step's launches (GpuExecutor.h).
//
// NCCL collectives are asynchronous and never time out: the host polls the
// stream (cuStreamQuery) and ncclCommGetAsyncError until the step's
// all-reduce is done, and on an asynchronous error or after --dist-timeout
// aborts the communicator (ncclCommAbort) and reports the error.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_DISTRIBUTED_NCCLGRADIENTS_H
#define TRAINCC_RUNTIME_DISTRIBUTED_NCCLGRADIENTS_H

#include "traincc/runtime/ModelABI.h"
#include "traincc/runtime/distributed/Communicator.h"
#include "traincc/runtime/exec/StepBackend.h"

#include <memory>
#include <utility>
#include <vector>

namespace traincc::rt {

class NcclGradients {
public:
  /// Byte ranges (offset, bytes) of the arena: runs of adjacent float32
  /// gradient tensors (the padding between them included).
  using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

  /// NCCL over `replicas` for the arena of `device`. Null (with the reason
  /// in `unavailable`) when NCCL cannot be loaded on some replica: all then
  /// average in host memory. Errors: NCCL that loads but fails to start.
  static Expected<std::unique_ptr<NcclGradients>>
  open(Communicator &replicas, const DeviceArena &device, Ranges ranges,
       double timeoutSeconds, std::string &unavailable);
  ~NcclGradients();

  /// "NCCL 2.18.3 (libnccl.so.2)".
  const std::string &description() const;
  /// Averages the ranges over the replicas and waits until it is done.
  Error average();
  /// Averages `count` floats at device address `data` (the BatchNorm
  /// statistics of --sync-bn) on the same stream and waits until it is
  /// done; `what` names it in errors.
  Error mean(unsigned long long data, size_t count, const char *what);

  struct Library;

private:
  NcclGradients() = default;
  /// Waits for the stream, watching NCCL's errors and the deadline.
  Error wait(const char *what);
  std::unique_ptr<Library> nccl_;
  void *comm_ = nullptr;
  DeviceArena device_;
  Ranges ranges_;
  double timeout_ = 0;
  bool failed_ = false;
};

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_DISTRIBUTED_NCCLGRADIENTS_H
