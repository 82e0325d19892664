//===- Model.cpp - The generated model as the runtime sees it -------------===//

#include "traincc/runtime/Model.h"

#include "traincc/runtime/Tensor.h"

#include <cstring>

namespace traincc::rt {

std::string abiDtypeName(int32_t dtype) {
  switch (dtype) {
  case TRAINCC_DTYPE_F32:
    return "float32";
  case TRAINCC_DTYPE_F16:
    return "float16";
  case TRAINCC_DTYPE_BF16:
    return "bfloat16";
  case TRAINCC_DTYPE_F64:
    return "float64";
  case TRAINCC_DTYPE_I64:
    return "int64";
  }
  return strCat("dtype ", dtype);
}

int64_t abiDtypeSize(int32_t dtype) {
  switch (dtype) {
  case TRAINCC_DTYPE_F32:
    return 4;
  case TRAINCC_DTYPE_F16:
  case TRAINCC_DTYPE_BF16:
    return 2;
  case TRAINCC_DTYPE_F64:
  case TRAINCC_DTYPE_I64:
    return 8;
  }
  return 0;
}

const char *lossKindName(int32_t loss) {
  switch (loss) {
  case TRAINCC_LOSS_CROSS_ENTROPY:
    return "cross-entropy";
  case TRAINCC_LOSS_MSE:
    return "mse";
  case TRAINCC_LOSS_OUTPUT:
    return "output";
  }
  return "unknown";
}

const char *optimizerKindName(int32_t optimizer) {
  switch (optimizer) {
  case TRAINCC_OPTIMIZER_SGD:
    return "sgd";
  case TRAINCC_OPTIMIZER_ADAM:
    return "adam";
  case TRAINCC_OPTIMIZER_ADAMW:
    return "adamw";
  }
  return "unknown";
}

const char *stateKindName(int32_t kind) {
  switch (kind) {
  case TRAINCC_STATE_TRAINABLE:
    return "trainable";
  case TRAINCC_STATE_FROZEN:
    return "frozen";
  case TRAINCC_STATE_RUNNING_MEAN:
    return "running-mean";
  case TRAINCC_STATE_RUNNING_VAR:
    return "running-var";
  case TRAINCC_STATE_GRADIENT:
    return "gradient";
  case TRAINCC_STATE_OPTIMIZER:
    return "optimizer";
  case TRAINCC_STATE_LOSS_SCALER:
    return "loss-scaler";
  case TRAINCC_STATE_BN_ACCUMULATOR:
    return "bn-accumulator";
  }
  return "unknown";
}

std::vector<int64_t> shapeOf(const traincc_io_tensor &tensor) {
  if (tensor.rank <= 0 || !tensor.shape)
    return {};
  return std::vector<int64_t>(tensor.shape, tensor.shape + tensor.rank);
}

std::vector<int64_t> shapeOf(const traincc_state_tensor &tensor) {
  if (tensor.rank <= 0 || !tensor.shape)
    return {};
  return std::vector<int64_t>(tensor.shape, tensor.shape + tensor.rank);
}

std::vector<int64_t> sampleShapeOf(const traincc_io_tensor &tensor) {
  std::vector<int64_t> shape = shapeOf(tensor);
  if (!shape.empty())
    shape.erase(shape.begin());
  return shape;
}

std::string describeTensor(const traincc_io_tensor &tensor) {
  return strCat(tensor.name ? tensor.name : "<unnamed>", " ",
                abiDtypeName(tensor.dtype), " ", formatShape(shapeOf(tensor)));
}

namespace {

/// Checks an input/output/target tensor: a name, a known dtype and a shape
/// whose first dimension is the micro-batch.
Error checkDataTensor(const traincc_io_tensor &tensor, const char *role,
                      int64_t microBatch) {
  if (!tensor.name)
    return makeError(role, " has no name");
  if (abiDtypeSize(tensor.dtype) == 0)
    return makeError(role, " '", tensor.name, "' has unknown ",
                     abiDtypeName(tensor.dtype));
  if (tensor.rank < 1 || tensor.rank > 64 || !tensor.shape)
    return makeError(role, " '", tensor.name, "' has rank ", tensor.rank,
                     "; expected a leading micro-batch dimension");
  for (int32_t i = 0; i < tensor.rank; ++i)
    if (tensor.shape[i] < 1)
      return makeError(role, " '", tensor.name, "' has dimension ",
                       tensor.shape[i], " in shape ",
                       formatShape(shapeOf(tensor)));
  if (tensor.shape[0] != microBatch)
    return makeError(role, " '", tensor.name, "' has shape ",
                     formatShape(shapeOf(tensor)), ", but the micro-batch is ",
                     microBatch);
  Expected<int64_t> elements =
      checkedElementCount(shapeOf(tensor), INT64_MAX / 8);
  if (!elements)
    return elements.takeError().withContext(strCat(role, " '", tensor.name,
                                                   "'"));
  return Error::success();
}

Error checkStateTensor(const traincc_model &model, int32_t index) {
  const traincc_state_tensor &t = model.state[index];
  std::string what = strCat("state tensor ", index, " '",
                            t.name ? t.name : "<unnamed>", "'");
  if (!t.name)
    return makeError(what, " has no name");
  if (t.kind < TRAINCC_STATE_TRAINABLE || t.kind > TRAINCC_STATE_BN_ACCUMULATOR)
    return makeError(what, " has unknown kind ", t.kind);
  int64_t elementSize = abiDtypeSize(t.dtype);
  if (elementSize == 0)
    return makeError(what, " has unknown ", abiDtypeName(t.dtype));
  if (t.rank < 0 || t.rank > 64 || (t.rank > 0 && !t.shape))
    return makeError(what, " has rank ", t.rank);
  Expected<int64_t> elements = checkedElementCount(shapeOf(t), INT64_MAX / 8);
  if (!elements)
    return elements.takeError().withContext(what);
  if (uint64_t(*elements * elementSize) != t.bytes)
    return makeError(what, " holds ", t.bytes, " bytes, its shape ",
                     formatShape(shapeOf(t)), " of ", abiDtypeName(t.dtype),
                     " needs ", *elements * elementSize);
  if (t.offset > model.state_bytes || t.bytes > model.state_bytes - t.offset)
    return makeError(what, " at offset ", t.offset, " (", t.bytes,
                     " bytes) does not fit the ", model.state_bytes,
                     "-byte state arena");
  bool owned =
      t.kind == TRAINCC_STATE_GRADIENT || t.kind == TRAINCC_STATE_OPTIMIZER;
  if (owned ? (t.owner < 0 || t.owner >= model.num_state) : t.owner != -1)
    return makeError(what, " has owner ", t.owner);
  return Error::success();
}

Error checkModel(const traincc_model &model) {
  if (model.abi_version != TRAINCC_ABI_VERSION)
    return makeError("model ABI version ", model.abi_version,
                     ", this runtime implements version ",
                     TRAINCC_ABI_VERSION);
  if (!model.micro_step || !model.apply_step || !model.eval_step)
    return makeError("a step function pointer is null");
  if (model.micro_batch < 1)
    return makeError("micro-batch ", model.micro_batch);
  if (model.accum_steps < 1)
    return makeError("default accumulation steps ", model.accum_steps);
  if (model.loss < TRAINCC_LOSS_CROSS_ENTROPY || model.loss > TRAINCC_LOSS_OUTPUT)
    return makeError("unknown loss kind ", model.loss);
  if (model.optimizer < TRAINCC_OPTIMIZER_SGD ||
      model.optimizer > TRAINCC_OPTIMIZER_ADAMW)
    return makeError("unknown optimizer kind ", model.optimizer);

  if (Error err = checkDataTensor(model.input, "input", model.micro_batch))
    return err;
  if (model.input.dtype != TRAINCC_DTYPE_F32)
    return makeError("input '", model.input.name, "' is ",
                     abiDtypeName(model.input.dtype),
                     "; the runtime feeds float32 inputs");
  if (Error err = checkDataTensor(model.output, "output", model.micro_batch))
    return err;
  if (model.output.dtype != TRAINCC_DTYPE_F32)
    return makeError("output '", model.output.name, "' is ",
                     abiDtypeName(model.output.dtype),
                     "; the runtime reads float32 outputs");
  std::vector<int64_t> outputSample = sampleShapeOf(model.output);
  int64_t outputElements = *checkedElementCount(outputSample);

  if (model.loss == TRAINCC_LOSS_CROSS_ENTROPY) {
    if (Error err = checkDataTensor(model.target, "target", model.micro_batch))
      return err;
    if (model.target.dtype != TRAINCC_DTYPE_I64 || model.target.rank != 1)
      return makeError("cross-entropy target '", model.target.name, "' is ",
                       describeTensor(model.target), "; expected int64 [",
                       model.micro_batch, "]");
    if (model.num_classes < 1 || model.num_classes != outputElements)
      return makeError("cross-entropy over ", model.num_classes,
                       " classes, but output '", model.output.name,
                       "' has ", outputElements, " values per sample");
  } else if (model.loss == TRAINCC_LOSS_MSE) {
    if (Error err = checkDataTensor(model.target, "target", model.micro_batch))
      return err;
    if (model.target.dtype != TRAINCC_DTYPE_F32)
      return makeError("mse target '", model.target.name, "' is ",
                       abiDtypeName(model.target.dtype), "; expected float32");
    if (*checkedElementCount(sampleShapeOf(model.target)) != outputElements)
      return makeError("mse target ", describeTensor(model.target),
                       " does not match output ",
                       describeTensor(model.output));
  }

  if (model.num_state < 0 || (model.num_state > 0 && !model.state))
    return makeError("state table of ", model.num_state, " tensors is missing");
  if (model.state_bytes > 0 && !model.initial_state)
    return makeError("initial_state is null for a ", model.state_bytes,
                     "-byte arena");
  for (int32_t i = 0; i < model.num_state; ++i)
    if (Error err = checkStateTensor(model, i))
      return err;
  if (model.onnx_model_bytes > 0 && !model.onnx_model)
    return makeError("onnx_model is null");
  return Error::success();
}

} // namespace

Error validateModel(const traincc_model &model) {
  return checkModel(model).withContext(
      strCat("invalid model descriptor",
             model.model_name ? strCat(" '", model.model_name, "'") : ""));
}

Expected<ModelInfo> inspectModel(const traincc_model *model) {
  if (!model)
    return makeError("invalid model descriptor: traincc_get_model() "
                     "returned null");
  if (Error err = validateModel(*model))
    return err;
  ModelInfo info;
  info.abi = model;
  info.microBatch = model->micro_batch;
  info.inputSampleShape = sampleShapeOf(model->input);
  info.inputSampleElements = *checkedElementCount(info.inputSampleShape);
  info.outputSampleShape = sampleShapeOf(model->output);
  info.outputSampleElements = *checkedElementCount(info.outputSampleShape);
  if (model->loss == TRAINCC_LOSS_MSE) {
    info.targetSampleShape = sampleShapeOf(model->target);
    info.targetSampleElements = *checkedElementCount(info.targetSampleShape);
  }
  for (int32_t i = 0; i < model->num_state; ++i) {
    const traincc_state_tensor &t = model->state[i];
    int64_t elements = *checkedElementCount(shapeOf(t));
    if (t.kind == TRAINCC_STATE_TRAINABLE)
      info.trainableParameters += elements;
    else if (t.kind == TRAINCC_STATE_FROZEN)
      info.frozenParameters += elements;
  }
  return info;
}

Expected<AlignedBuffer> AlignedBuffer::allocate(uint64_t bytes,
                                                const char *what) {
  // aligned_alloc wants a multiple of the alignment; never zero bytes.
  uint64_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded < bytes)
    return makeError("cannot allocate ", bytes, " bytes for the ", what);
  if (rounded == 0)
    rounded = kAlignment;
  void *memory = std::aligned_alloc(kAlignment, size_t(rounded));
  if (!memory)
    return makeError("cannot allocate ", bytes, " bytes for the ", what);
  std::memset(memory, 0, size_t(rounded));
  AlignedBuffer buffer;
  buffer.data_.reset(static_cast<uint8_t *>(memory));
  buffer.size_ = bytes;
  return buffer;
}

Expected<ModelMemory> ModelMemory::create(const traincc_model &model) {
  Expected<AlignedBuffer> state =
      AlignedBuffer::allocate(model.state_bytes, "state arena");
  if (!state)
    return state.takeError();
  Expected<AlignedBuffer> workspace =
      AlignedBuffer::allocate(model.workspace_bytes, "step workspace");
  if (!workspace)
    return workspace.takeError();
  if (model.state_bytes > 0)
    std::memcpy(state->data(), model.initial_state, size_t(model.state_bytes));
  return ModelMemory{state.take(), workspace.take()};
}

} // namespace traincc::rt
