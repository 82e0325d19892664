//===- StepBackend.h - Where the step functions run -------------*- C++ -*-===//
//
// The loop, evaluation and prediction call the model's three steps through
// a StepBackend, so that they run the same on the CPU (the generated host
// functions, on ModelMemory) and on a CUDA device (GpuExecutor, on a device
// copy of the arena).
//
// Micro-steps are asynchronous: microStep() starts one, collectLosses()
// waits for those started since its last call and hands over their losses
// in order. On a device this lets the next micro-batch be prepared and
// uploaded while the current one runs; on the CPU microStep() runs at once.
//
// The host arena (memory()) is the device arena's mirror, not a live view:
// after steps, call syncStateToHost() before the host reads it (gradient
// norm, checkpoints, export, logs); after the host writes it (resume,
// gradient clipping), call syncStateToDevice(). Both are no-ops on the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_EXEC_STEPBACKEND_H
#define TRAINCC_RUNTIME_EXEC_STEPBACKEND_H

#include "traincc/runtime/support/Model.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace traincc::rt {

/// Where the steps should run (--device).
enum class DeviceChoice { Auto, Cpu, Cuda };

class CudaDriver;

/// A device's state arena (a CUdeviceptr) and the stream (a CUstream) the
/// steps run on, for collectives in device memory (NCCL); all zero on the
/// CPU.
struct DeviceArena {
  const CudaDriver *driver = nullptr;
  unsigned long long state = 0;
  void *stream = nullptr;
};

/// The loss scaler's scalars after an apply_step (ModelABI.h).
struct LossScalerReading {
  float scale = 1;       // what the next micro-steps scale gradients by
  bool foundInf = false; // the last apply_step was skipped
};

class StepBackend {
public:
  virtual ~StepBackend() = default;

  /// "cpu" or "cuda".
  virtual const char *name() const = 0;
  /// One line for the progress output and `info`: "cpu" or
  /// "cuda: NVIDIA H200 (compute capability 9.0, ...), kernels: cubin sm_90".
  virtual std::string description() const = 0;

  /// Starts micro_step on one micro-batch (`target` null without one).
  virtual Error microStep(const void *input, const void *target,
                          float gradScale, uint64_t seed) = 0;
  /// Waits for the micro-steps started since the last call and appends
  /// their losses, in order.
  virtual Error collectLosses(std::vector<float> &losses) = 0;
  virtual Error applyStep(float lr, int64_t step) = 0;
  /// eval_step, finished when it returns (`target` and `losses` may be
  /// null).
  virtual Error evalStep(const void *input, const void *target,
                         float *output, float *losses) = 0;

  virtual Error syncStateToHost() = 0;
  virtual Error syncStateToDevice() = 0;
  /// The same for the gradient accumulators alone (what the gradient-norm
  /// monitor reads and clipping writes each step).
  virtual Error syncGradientsToHost() = 0;
  virtual Error syncGradientsToDevice() = 0;
  /// Where the device arena is, for collectives that work on it in place.
  virtual DeviceArena deviceArena() { return {}; }
  /// --sync-bn on a device: replaces `count` floats at device address
  /// `data` by their mean over the replicas, after the work enqueued on
  /// the arena's stream, and returns when that is done.
  using ReplicaMean =
      std::function<Error(unsigned long long data, size_t count)>;
  /// A device backend runs its plans' replica collectives with `mean`
  /// over `replicas` replicas from now on. The CPU steps call
  /// traincc_replica_mean instead (SyncBatchNorm.h): false there.
  virtual bool setReplicaMean(ReplicaMean mean, int replicas) {
    (void)mean;
    (void)replicas;
    return false;
  }

  /// The loss scale and found_inf once the steps started so far are done,
  /// read every step of a model with loss scaling (an error without). On a
  /// device only their 8 bytes are copied into the host arena.
  Expected<LossScalerReading> readLossScaler();

  ModelMemory &memory() { return memory_; }
  const ModelInfo &model() const { return model_; }

protected:
  StepBackend(const ModelInfo &model, ModelMemory &memory)
      : model_(model), memory_(memory) {}
  /// Copies the loss scaler's two scalars to the host arena.
  virtual Error syncLossScalerToHost() { return Error::success(); }
  ModelInfo model_;
  ModelMemory &memory_;
};

/// The generated host functions on `memory` (the model must have them:
/// ModelInfo::hasCpuSteps()).
std::unique_ptr<StepBackend> createCpuBackend(const ModelInfo &model,
                                              ModelMemory &memory);

/// The backend --device asks for: `cpu` (an error for a CUDA-only
/// trainer); `cuda` (an error when the trainer has no GPU program or CUDA
/// is unusable); `auto`: CUDA when the trainer has a GPU program and a
/// device is usable, else the CPU, with the reason in `fallback` (empty
/// when CUDA was chosen or the trainer has no GPU program); a CUDA-only
/// trainer without a usable device is an error. Errors after the device
/// was found (module load, allocation) are errors under `auto` too: they
/// are not a missing device.
Expected<std::unique_ptr<StepBackend>>
createStepBackend(const ModelInfo &model, ModelMemory &memory,
                  DeviceChoice choice, std::string *fallback = nullptr);

/// The `info` lines about the device: the GPU program, the CUDA device and
/// how the kernels would load, or why the trainer runs on the CPU. An error
/// only for `--device cuda` when CUDA is unusable.
Expected<std::string> describeDevice(const ModelInfo &model,
                                     DeviceChoice choice);

/// The state arena's gradient tensors as [offset, bytes) ranges, as few as
/// possible: gradients with no other tensor between them (the compiler
/// lays them out together) are one range, alignment padding included.
std::vector<std::pair<uint64_t, uint64_t>>
gradientByteRanges(const traincc_model &abi);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_EXEC_STEPBACKEND_H
