//===- Model.h - The generated model as the runtime sees it -----*- C++ -*-===//
//
// A checked view of the traincc_model descriptor (ModelABI.h) and the memory
// the step functions run in. The descriptor comes from generated code, so
// the runtime checks it once (version, shapes, arena layout) before it ever
// calls a step function; a broken descriptor is an error, not a crash.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_SUPPORT_MODEL_H
#define TRAINCC_RUNTIME_SUPPORT_MODEL_H

#include "traincc/runtime/ModelABI.h"
#include "traincc/runtime/support/Error.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace traincc::rt {

/// "float32", "int64", ... for a traincc_dtype; "dtype N" when unknown.
std::string abiDtypeName(int32_t dtype);
/// Bytes per element of a traincc_dtype, 0 when unknown.
int64_t abiDtypeSize(int32_t dtype);
const char *lossKindName(int32_t loss);
const char *optimizerKindName(int32_t optimizer);
const char *stateKindName(int32_t kind);
/// "fp32", "fp16", "bf16" for a traincc_precision.
const char *precisionName(int32_t precision);
/// "none", "dynamic", "static" for a traincc_loss_scaling.
const char *lossScalingName(int32_t lossScaling);

/// The dimensions of an ABI tensor.
std::vector<int64_t> shapeOf(const traincc_io_tensor &tensor);
std::vector<int64_t> shapeOf(const traincc_state_tensor &tensor);
/// The shape without the leading micro-batch axis.
std::vector<int64_t> sampleShapeOf(const traincc_io_tensor &tensor);
/// "name float32 [8,1,28,28]", "ids int64 [8,16] (ids 0..99)".
std::string describeTensor(const traincc_io_tensor &tensor);

/// Checks a descriptor before the runtime uses it: ABI version, non-null
/// step functions, data tensors batched by micro_batch, a target that fits
/// the loss, state tensors that lie inside the arena and, when there is a
/// GPU program, launch plans whose pointers lie inside their buffers.
Error validateModel(const traincc_model &model);

/// Rewrites every state tensor that copies another (weight copies, step
/// backups: `source` >= 0) from its source, converted to its dtype (round
/// to nearest even). For whoever writes trained tensors into the arena
/// other than by running steps (loading weights): the steps keep the
/// copies current themselves. Returns how many tensors it rewrote.
int64_t refreshStateCopies(const traincc_model &model, uint8_t *arena);

/// "state", "workspace", ... "i64", "f32" for a traincc_gpu_arg_kind.
const char *gpuArgKindName(int32_t kind);
/// Bytes of the device buffer a kernel pointer of `kind` points into (the
/// buffers GpuExecutor allocates); 0 for immediates and for the target of
/// a model without one.
uint64_t gpuBufferBytes(const traincc_model &model, int32_t kind);

/// Facts derived once from a validated descriptor.
struct ModelInfo {
  const traincc_model *abi = nullptr;
  int64_t microBatch = 0;
  std::vector<int64_t> inputSampleShape;  // input shape without N
  int64_t inputSampleElements = 0;
  std::vector<int64_t> outputSampleShape; // output shape without N
  int64_t outputSampleElements = 0;
  std::vector<int64_t> targetSampleShape; // MSE target shape without N
  int64_t targetSampleElements = 0;
  int64_t trainableParameters = 0; // elements of TRAINABLE tensors
  int64_t frozenParameters = 0;    // elements of FROZEN tensors

  bool crossEntropy() const {
    return abi->loss == TRAINCC_LOSS_CROSS_ENTROPY;
  }
  bool hasTarget() const { return abi->loss != TRAINCC_LOSS_OUTPUT; }
  /// True when the input is int64 ids (an embedding's), false for float32.
  bool integerInput() const { return abi->input.dtype == TRAINCC_DTYPE_I64; }
  /// False for a CUDA-only trainer (traincc --target cuda).
  bool hasCpuSteps() const { return abi->micro_step != nullptr; }
};

/// validateModel, then the derived facts.
Expected<ModelInfo> inspectModel(const traincc_model *model);

/// A zero-filled, 64-byte aligned block of memory (at least 64 bytes, so
/// step functions always get a valid pointer); freed by the destructor.
class AlignedBuffer {
public:
  static constexpr size_t kAlignment = 64;
  AlignedBuffer() = default;
  static Expected<AlignedBuffer> allocate(uint64_t bytes, const char *what);

  uint8_t *data() { return data_.get(); }
  const uint8_t *data() const { return data_.get(); }
  uint64_t size() const { return size_; }

private:
  struct Free {
    void operator()(uint8_t *p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> data_;
  uint64_t size_ = 0;
};

/// The compiled initial bytes of the state arena at `offset` (`bytes` of
/// them, inside one initial run), or null where the arena starts at zero.
const uint8_t *initialStateAt(const traincc_model &model, uint64_t offset,
                              uint64_t bytes);

/// The state arena and the step workspace, allocated once per run; the
/// arena starts as a copy of the model's initial_state.
struct ModelMemory {
  AlignedBuffer state;
  AlignedBuffer workspace;

  static Expected<ModelMemory> create(const traincc_model &model);

  /// The float32 values of state tensor `index`.
  const float *floatTensor(const traincc_model &model, int32_t index) const {
    return reinterpret_cast<const float *>(state.data() +
                                           model.state[index].offset);
  }
};

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_SUPPORT_MODEL_H
