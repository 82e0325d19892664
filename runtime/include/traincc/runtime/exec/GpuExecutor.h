//===- GpuExecutor.h - Runs a model's GPU program ---------------*- C++ -*-===//
//
// Executes the launch plans of a traincc_gpu_program (ModelABI.h) on one
// CUDA device. Everything is allocated once, in create(): the device state
// arena (a copy of the host arena), the workspace, the 64-byte parameter
// block, two device buffers each for input and target, one for output and
// losses, and pinned host staging buffers.
//
// Graphs: each (plan, input slot) pair is captured into a CUDA graph the
// first time it runs and replayed afterwards. Kernel pointers into the
// input/target buffers are baked into a graph, hence one micro_step graph
// per input slot. The step's scalars are not: they live in the parameter
// block, which an async host-to-device copy rewrites before each replay.
// TRAINCC_CUDA_LAUNCH_BLOCKING=1 instead launches kernel by kernel and
// waits after each, so that an asynchronous failure names its kernel.
//
// Overlap (double buffering). Two streams: `copy` moves inputs to the
// device, `compute` runs everything else in order. Micro-step i uses slot
// s = i % 2 (pinned staging, device input/target, graph):
//   1. host: wait for event slotFree[s] (recorded after micro-step i-2's
//      work on `compute`), so the pinned staging, the device buffers and
//      the pinned parameter block of slot s are no longer in use;
//   2. host: copy the batch into pinned staging s (memcpy);
//   3. copy stream: HtoD into device input/target s; record inputReady[s];
//   4. compute stream: wait inputReady[s]; HtoD parameter block; replay
//      graph s; DtoH the loss into the pinned loss ring; record slotFree[s].
// microStep() returns after step 4 is enqueued, so the host samples batch
// i+1 and the copy stream uploads it while the device runs batch i. Losses
// are read by collectLosses(), which waits for the compute stream.
// applyStep() is ordered on the compute stream after the micro-steps; its
// pinned parameter block is guarded by its own event. evalStep() waits for
// its results (the caller reads them at once) and uses slot 0.
//
// Replica collectives (--sync-bn, traincc_gpu_collective): once
// setReplicaMean() gave the executor a way to average over the replicas,
// a plan with collectives runs in segments, one graph each: the launches
// up to a collective, then the collective (which waits for them: a launch
// barrier), then the next segment. Without one, the collectives change
// nothing and the plan is one graph.
//
// All calls must come from one thread (the loop's); the primary context of
// the device is made current on it in create().
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_EXEC_GPUEXECUTOR_H
#define TRAINCC_RUNTIME_EXEC_GPUEXECUTOR_H

#include "traincc/runtime/exec/CudaDriver.h"
#include "traincc/runtime/support/Model.h"

#include <functional>
#include <memory>
#include <utility>
#include <string>
#include <vector>

namespace traincc::rt {

/// Whether a cubin built for `arch` ("sm_90", "sm_90a") runs on a device
/// of compute capability major.minor.
bool cudaArchMatches(const char *arch, int major, int minor);

class GpuExecutor {
public:
  /// Loads the module and allocates every buffer on device `ordinal`; the
  /// device arena starts as a copy of `hostState` (state_bytes bytes).
  static Expected<std::unique_ptr<GpuExecutor>>
  create(std::shared_ptr<const CudaDriver> driver, const ModelInfo &model,
         const uint8_t *hostState, int ordinal = 0);
  ~GpuExecutor();
  GpuExecutor(const GpuExecutor &) = delete;
  GpuExecutor &operator=(const GpuExecutor &) = delete;

  const CudaDeviceInfo &device() const { return device_; }
  /// "cubin sm_90" or "PTX (JIT for sm_89)" (followed by why the cubin
  /// failed when the driver refused it and the PTX loaded instead).
  const std::string &moduleKind() const { return moduleKind_; }
  /// The device state arena and the stream the steps run on, for
  /// collectives that work in device memory (data parallelism's NCCL).
  unsigned long long stateArena() const; // a CUdeviceptr
  void *computeStream() const;
  const CudaDriver &driver() const;

  /// Enqueues micro_step on one micro-batch (input: micro_batch rows of
  /// float32; target: null for a model without one) and returns once the
  /// batch is staged; the loss comes from collectLosses().
  Error microStep(const void *input, const void *target, float gradScale,
                  uint64_t seed);
  /// Waits for the enqueued micro-steps and appends their losses to
  /// `losses` in order.
  Error collectLosses(std::vector<float> &losses);
  /// Enqueues apply_step.
  Error applyStep(float lr, int64_t step);
  /// eval_step, waited for: `output` gets micro_batch rows, `losses` (when
  /// `target` is not null) micro_batch values.
  Error evalStep(const void *input, const void *target, float *output,
                 float *losses);

  /// Replaces `count` floats at device address `data` by their mean over
  /// the replicas, after the work enqueued on the compute stream so far;
  /// returns when they are replaced (or with the error that stopped it).
  using ReplicaMean =
      std::function<Error(unsigned long long data, size_t count)>;
  /// From now on the plans' replica collectives run `mean` and kernels
  /// read `replicas` as the replica count (TRAINCC_GPU_PARAM_REPLICAS).
  void setReplicaMean(ReplicaMean mean, int replicas);

  /// Byte ranges of the state arena.
  using ArenaRanges = std::vector<std::pair<uint64_t, uint64_t>>;

  /// Waits for all work, then copies the device arena to `hostState`:
  /// the (offset, bytes) `ranges` of it, or all of it when there are none.
  Error copyStateToHost(uint8_t *hostState, const ArenaRanges &ranges = {});
  /// Waits for all work, then copies `hostState` to the device arena (its
  /// `ranges`, or all of it).
  Error copyStateToDevice(const uint8_t *hostState,
                          const ArenaRanges &ranges = {});

  struct Impl;

private:
  explicit GpuExecutor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  CudaDeviceInfo device_;
  std::string moduleKind_;
};

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_EXEC_GPUEXECUTOR_H
