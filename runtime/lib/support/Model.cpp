//===- Model.cpp - The generated model as the runtime sees it -------------===//

#include "traincc/runtime/support/Model.h"

#include "traincc/runtime/support/HalfFloat.h"
#include "traincc/runtime/support/Tensor.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

#if defined(__linux__)
#include <link.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <unistd.h>
#endif

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
  case TRAINCC_STATE_WEIGHT_COPY:
    return "weight-copy";
  case TRAINCC_STATE_STEP_BACKUP:
    return "step-backup";
  }
  return "unknown";
}

const char *precisionName(int32_t precision) {
  switch (precision) {
  case TRAINCC_PRECISION_FP32:
    return "fp32";
  case TRAINCC_PRECISION_FP16:
    return "fp16";
  case TRAINCC_PRECISION_BF16:
    return "bf16";
  }
  return "unknown";
}

const char *lossScalingName(int32_t lossScaling) {
  switch (lossScaling) {
  case TRAINCC_LOSS_SCALING_NONE:
    return "none";
  case TRAINCC_LOSS_SCALING_DYNAMIC:
    return "dynamic";
  case TRAINCC_LOSS_SCALING_STATIC:
    return "static";
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
  std::string text =
      strCat(tensor.name ? tensor.name : "<unnamed>", " ",
             abiDtypeName(tensor.dtype), " ", formatShape(shapeOf(tensor)));
  if (tensor.id_limit > 0)
    text += strCat(" (ids 0..", tensor.id_limit - 1, ")");
  return text;
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

/// The initial runs lie in the arena, ascending and disjoint.
Error checkInitialRuns(const traincc_model &model) {
  if (model.num_initial_runs < 0 ||
      (model.num_initial_runs > 0 && !model.initial_runs))
    return makeError("table of ", model.num_initial_runs,
                     " initial runs is missing");
  uint64_t end = 0;
  for (int32_t i = 0; i < model.num_initial_runs; ++i) {
    const traincc_initial_run &run = model.initial_runs[i];
    if (run.offset < end || run.offset > model.state_bytes ||
        run.bytes > model.state_bytes - run.offset)
      return makeError("initial run ", i, " (", run.bytes, " bytes at ",
                       run.offset, ") is not after the previous one inside "
                       "the ", model.state_bytes, "-byte arena");
    end = run.offset + run.bytes;
  }
  return Error::success();
}

Error checkStateTensor(const traincc_model &model, int32_t index) {
  const traincc_state_tensor &t = model.state[index];
  std::string what = strCat("state tensor ", index, " '",
                            t.name ? t.name : "<unnamed>", "'");
  if (!t.name)
    return makeError(what, " has no name");
  if (t.kind < TRAINCC_STATE_TRAINABLE || t.kind > TRAINCC_STATE_STEP_BACKUP)
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
  // A copy converts its source element by element (refreshStateCopies).
  bool copy = t.kind == TRAINCC_STATE_WEIGHT_COPY ||
              t.kind == TRAINCC_STATE_STEP_BACKUP;
  if (!copy)
    return t.source == -1 ? Error::success()
                          : makeError(what, " has source ", t.source);
  if (t.source < 0 || t.source >= model.num_state || t.source == index)
    return makeError(what, " has source ", t.source);
  const traincc_state_tensor &s = model.state[t.source];
  int64_t sourceSize = abiDtypeSize(s.dtype);
  bool floats = t.dtype != TRAINCC_DTYPE_I64 && s.dtype != TRAINCC_DTYPE_I64;
  if (sourceSize == 0 || (!floats && s.dtype != t.dtype) ||
      s.bytes / uint64_t(sourceSize) != uint64_t(*elements))
    return makeError(what, " (", abiDtypeName(t.dtype), " ",
                     formatShape(shapeOf(t)), ") cannot copy state tensor ",
                     t.source, " (", abiDtypeName(s.dtype), " ",
                     formatShape(shapeOf(s)), ")");
  return Error::success();
}

/// The loss scaler's scalars: float32, kind loss-scaler.
Error checkLossScaling(const traincc_model &model) {
  if (model.precision < TRAINCC_PRECISION_FP32 ||
      model.precision > TRAINCC_PRECISION_BF16)
    return makeError("unknown precision ", model.precision);
  if (model.loss_scaling < TRAINCC_LOSS_SCALING_NONE ||
      model.loss_scaling > TRAINCC_LOSS_SCALING_STATIC)
    return makeError("unknown loss scaling ", model.loss_scaling);
  bool scaled = model.loss_scaling != TRAINCC_LOSS_SCALING_NONE;
  for (auto [field, index] : {std::pair<const char *, int32_t>{
                                  "loss_scale_state", model.loss_scale_state},
                              {"found_inf_state", model.found_inf_state}}) {
    if (!scaled) {
      if (index != -1)
        return makeError(field, " is ", index, " without loss scaling");
      continue;
    }
    if (index < 0 || index >= model.num_state)
      return makeError(field, " is ", index, " for a model of ",
                       model.num_state, " state tensors");
    const traincc_state_tensor &t = model.state[index];
    if (t.kind != TRAINCC_STATE_LOSS_SCALER || t.dtype != TRAINCC_DTYPE_F32 ||
        t.bytes != 4)
      return makeError(field, " names '", t.name, "' (",
                       stateKindName(t.kind), " ", abiDtypeName(t.dtype), " ",
                       formatShape(shapeOf(t)),
                       "); expected a loss-scaler float32 scalar");
  }
  return Error::success();
}

uint64_t dataTensorBytes(const traincc_io_tensor &tensor) {
  return uint64_t(*checkedElementCount(shapeOf(tensor)) *
                  abiDtypeSize(tensor.dtype));
}

Error checkGpuPlan(const traincc_model &model, const traincc_gpu_plan &plan,
                   const char *planName) {
  if (plan.num_launches < 0 || (plan.num_launches > 0 && !plan.launches))
    return makeError(planName, ": ", plan.num_launches,
                     " launches but no launch table");
  for (int32_t i = 0; i < plan.num_launches; ++i) {
    const traincc_gpu_launch &l = plan.launches[i];
    std::string what =
        strCat(planName, " launch ", i, l.kernel ? strCat(" '", l.kernel, "'")
                                                 : std::string());
    if (!l.kernel || !*l.kernel)
      return makeError(what, " has no kernel name");
    if (l.module < 0 || l.module >= model.gpu->num_modules)
      return makeError(what, " is in module ", l.module, " of ",
                       model.gpu->num_modules);
    for (int d = 0; d < 3; ++d)
      if (l.grid[d] < 1 || l.block[d] < 1)
        return makeError(what, " has grid [", l.grid[0], ",", l.grid[1], ",",
                         l.grid[2], "] and block [", l.block[0], ",",
                         l.block[1], ",", l.block[2], "]");
    if (l.num_args < 0 || (l.num_args > 0 && !l.args))
      return makeError(what, " has ", l.num_args, " arguments but no table");
    for (int32_t a = 0; a < l.num_args; ++a) {
      const traincc_gpu_arg &arg = l.args[a];
      if (arg.kind < TRAINCC_GPU_ARG_STATE || arg.kind > TRAINCC_GPU_ARG_F32)
        return makeError(what, " argument ", a, " has unknown kind ",
                         arg.kind);
      int32_t size = arg.kind == TRAINCC_GPU_ARG_F32 ? 4 : 8;
      if (arg.size != size)
        return makeError(what, " argument ", a, " (",
                         gpuArgKindName(arg.kind), ") takes ", arg.size,
                         " bytes; expected ", size);
      if (arg.kind >= TRAINCC_GPU_ARG_I64)
        continue;
      uint64_t bytes = gpuBufferBytes(model, arg.kind);
      if (arg.value >= bytes)
        return makeError(what, " argument ", a, " points at offset ",
                         arg.value, " of the ", bytes, "-byte ",
                         gpuArgKindName(arg.kind), " buffer");
    }
  }
  if (plan.num_collectives < 0 ||
      (plan.num_collectives > 0 && !plan.collectives))
    return makeError(planName, ": ", plan.num_collectives,
                     " collectives but no table");
  for (int32_t i = 0; i < plan.num_collectives; ++i) {
    const traincc_gpu_collective &c = plan.collectives[i];
    std::string what = strCat(planName, " collective ", i);
    if (c.kind != TRAINCC_GPU_COLLECTIVE_REPLICA_MEAN)
      return makeError(what, " has unknown kind ", c.kind);
    int32_t previous = i > 0 ? plan.collectives[i - 1].position : 0;
    if (c.position < previous || c.position > plan.num_launches)
      return makeError(what, " comes after launch ", c.position, " of ",
                       plan.num_launches, " (collectives go in launch order)");
    uint64_t workspace = model.gpu->workspace_bytes;
    if (c.offset % 16 != 0 || c.count > workspace / sizeof(float) ||
        c.offset > workspace - c.count * sizeof(float))
      return makeError(what, " averages ", c.count, " floats at offset ",
                       c.offset, " of the ", workspace,
                       "-byte workspace (not 16-byte aligned, or past its "
                       "end)");
  }
  return Error::success();
}

Error checkGpuProgram(const traincc_model &model) {
  const traincc_gpu_program &gpu = *model.gpu;
  if (!gpu.arch || !*gpu.arch)
    return makeError("GPU program has no arch");
  if (gpu.num_modules < 1 || !gpu.modules)
    return makeError("GPU program has no modules");
  for (int32_t i = 0; i < gpu.num_modules; ++i) {
    if (!gpu.modules[i].ptx)
      return makeError("GPU program module ", i, " has no PTX");
    if (gpu.modules[i].cubin_bytes > 0 && !gpu.modules[i].cubin)
      return makeError("GPU program module ", i, ": cubin is null");
  }
  if (Error err = checkGpuPlan(model, gpu.micro_step, "GPU micro_step"))
    return err;
  if (Error err = checkGpuPlan(model, gpu.apply_step, "GPU apply_step"))
    return err;
  return checkGpuPlan(model, gpu.eval_step, "GPU eval_step");
}

Error checkModel(const traincc_model &model) {
  if (model.abi_version != TRAINCC_ABI_VERSION)
    return makeError("model ABI version ", model.abi_version,
                     ", this runtime implements version ",
                     TRAINCC_ABI_VERSION);
  // traincc --target cuda emits no host steps: all three or none, and
  // then a GPU program.
  int hostSteps = (model.micro_step != nullptr) +
                  (model.apply_step != nullptr) + (model.eval_step != nullptr);
  if (hostSteps != 0 && hostSteps != 3)
    return makeError("a step function pointer is null");
  if (hostSteps == 0 && !model.gpu)
    return makeError("the model has neither CPU step functions nor a GPU "
                     "program");
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
  // Float inputs, or int64 ids whose range the data layer checks against
  // id_limit before any step reads them.
  if (model.input.dtype != TRAINCC_DTYPE_F32 &&
      model.input.dtype != TRAINCC_DTYPE_I64)
    return makeError("input '", model.input.name, "' is ",
                     abiDtypeName(model.input.dtype),
                     "; the runtime feeds float32 or int64 inputs");
  if (model.input.id_limit < 0 ||
      (model.input.dtype != TRAINCC_DTYPE_I64 && model.input.id_limit != 0))
    return makeError("input '", model.input.name, "' (",
                     abiDtypeName(model.input.dtype), ") has id limit ",
                     model.input.id_limit);
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
  if (Error err = checkInitialRuns(model))
    return err;
  for (int32_t i = 0; i < model.num_state; ++i)
    if (Error err = checkStateTensor(model, i))
      return err;
  if (Error err = checkLossScaling(model))
    return err;
  if (model.onnx_model_bytes > 0 && !model.onnx_model)
    return makeError("onnx_model is null");
  if (model.gpu)
    return checkGpuProgram(model);
  return Error::success();
}

} // namespace

const char *gpuArgKindName(int32_t kind) {
  switch (kind) {
  case TRAINCC_GPU_ARG_STATE:
    return "state";
  case TRAINCC_GPU_ARG_WORKSPACE:
    return "workspace";
  case TRAINCC_GPU_ARG_INPUT:
    return "input";
  case TRAINCC_GPU_ARG_TARGET:
    return "target";
  case TRAINCC_GPU_ARG_OUTPUT:
    return "output";
  case TRAINCC_GPU_ARG_LOSS:
    return "loss";
  case TRAINCC_GPU_ARG_PARAMS:
    return "parameter";
  case TRAINCC_GPU_ARG_I64:
    return "i64";
  case TRAINCC_GPU_ARG_F32:
    return "f32";
  }
  return "unknown";
}

uint64_t gpuBufferBytes(const traincc_model &model, int32_t kind) {
  switch (kind) {
  case TRAINCC_GPU_ARG_STATE:
    return model.state_bytes;
  case TRAINCC_GPU_ARG_WORKSPACE:
    return model.gpu ? model.gpu->workspace_bytes : 0;
  case TRAINCC_GPU_ARG_INPUT:
    return dataTensorBytes(model.input);
  case TRAINCC_GPU_ARG_TARGET:
    return model.loss == TRAINCC_LOSS_OUTPUT ? 0
                                             : dataTensorBytes(model.target);
  case TRAINCC_GPU_ARG_OUTPUT:
    return dataTensorBytes(model.output);
  case TRAINCC_GPU_ARG_LOSS:
    return uint64_t(model.micro_batch) * 4;
  case TRAINCC_GPU_ARG_PARAMS:
    return TRAINCC_GPU_PARAM_BYTES;
  }
  return 0;
}

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

int64_t refreshStateCopies(const traincc_model &model, uint8_t *arena) {
  int64_t refreshed = 0;
  for (int32_t i = 0; i < model.num_state; ++i) {
    const traincc_state_tensor &t = model.state[i];
    if (t.source < 0)
      continue;
    const traincc_state_tensor &s = model.state[t.source];
    int64_t elements = int64_t(s.bytes) / abiDtypeSize(s.dtype);
    refreshed += convertElements(arena + s.offset, s.dtype, arena + t.offset,
                                 t.dtype, elements);
  }
  return refreshed;
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

#if defined(__linux__)
/// Whether [begin, begin + bytes) lies in the file-backed part of a loaded
/// segment of the executable itself. Not bounded by the linker's edata or
/// end: a large blob sits in .lrodata, which ld.bfd puts before `end` and
/// gold after it.
static bool inExecutableImage(const uint8_t *begin, size_t bytes) {
  struct Query {
    uintptr_t begin, end;
    bool found;
  } query{uintptr_t(begin), uintptr_t(begin) + bytes, false};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) -> int {
        auto *q = static_cast<Query *>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &segment = info->dlpi_phdr[i];
          uintptr_t start = info->dlpi_addr + segment.p_vaddr;
          if (segment.p_type == PT_LOAD && q->begin >= start &&
              q->end <= start + segment.p_filesz)
            q->found = true;
        }
        return 1; // the executable is the first object listed
      },
      &query);
  return query.found;
}
#endif

/// Copies the initial state out of the executable: the whole arena, or
/// the runs of initialised bytes into an arena that starts at zero. Pages
/// of the blob that have been copied are handed back to the kernel as the
/// copy goes: read once, they would otherwise stay resident next to the
/// arena for the whole run (ResNet-18: 128 MiB outside the memory plan).
/// Only when the blob lies in the executable's image: there its pages are
/// clean and file-backed, and a later read faults them in again; a blob in
/// anonymous memory (a test's) would be zeroed.
static void copyInitialState(const traincc_model &model, uint8_t *arena) {
  const traincc_initial_run whole = {0, model.state_bytes};
  const traincc_initial_run *runs =
      model.num_initial_runs > 0 ? model.initial_runs : &whole;
  size_t numRuns =
      model.num_initial_runs > 0 ? size_t(model.num_initial_runs) : 1;
  size_t blobBytes = 0;
  for (size_t i = 0; i < numRuns; ++i)
    blobBytes += size_t(runs[i].bytes);
  const uint8_t *from = model.initial_state;
  bool release = false;
  size_t page = 1;
#if defined(__linux__)
  release = blobBytes > 0 && inExecutableImage(from, blobBytes);
  page = size_t(sysconf(_SC_PAGESIZE));
#endif
  const size_t chunk = size_t(1) << 22;
  // Whole pages of the blob below `released` have been handed back.
  uintptr_t released = (uintptr_t(from) + page - 1) / page * page;
  for (size_t i = 0; i < numRuns; ++i) {
    uint8_t *to = arena + runs[i].offset;
    for (size_t done = 0; done < runs[i].bytes;) {
      size_t n = std::min(chunk, size_t(runs[i].bytes) - done);
      std::memcpy(to + done, from, n);
      from += n;
      done += n;
#if defined(__linux__)
      uintptr_t end = uintptr_t(from) / page * page;
      if (release && end > released) {
        madvise(reinterpret_cast<void *>(released), end - released,
                MADV_DONTNEED);
        released = end;
      }
#endif
    }
  }
}

const uint8_t *initialStateAt(const traincc_model &model, uint64_t offset,
                              uint64_t bytes) {
  if (model.num_initial_runs == 0)
    return model.initial_state + offset;
  const uint8_t *blob = model.initial_state;
  for (int32_t i = 0; i < model.num_initial_runs; ++i) {
    const traincc_initial_run &run = model.initial_runs[i];
    if (offset >= run.offset && offset + bytes <= run.offset + run.bytes)
      return blob + (offset - run.offset);
    blob += run.bytes;
  }
  return nullptr;
}

namespace {
/// The most memory this process can have, and what sets it.
struct MemoryLimit {
  uint64_t bytes = 0; // 0: unknown
  const char *what = "";
};
} // namespace

/// The machine's memory and swap, or less under a cgroup's memory.max (a
/// container's limit) or an address-space limit (ulimit -v).
static MemoryLimit memoryLimit() {
  MemoryLimit limit;
#if defined(__linux__)
  auto lower = [&](uint64_t bytes, const char *what) {
    if (bytes && (!limit.bytes || bytes < limit.bytes))
      limit = {bytes, what};
  };
  struct sysinfo info;
  if (sysinfo(&info) == 0)
    lower((uint64_t(info.totalram) + uint64_t(info.totalswap)) *
              uint64_t(info.mem_unit),
          "this machine's memory and swap");
  if (std::FILE *file = std::fopen("/sys/fs/cgroup/memory.max", "r")) {
    unsigned long long bytes = 0;
    if (std::fscanf(file, "%llu", &bytes) == 1) // not "max"
      lower(bytes, "the cgroup's memory.max");
    std::fclose(file);
  }
  struct rlimit space;
  if (getrlimit(RLIMIT_AS, &space) == 0 && space.rlim_cur != RLIM_INFINITY)
    lower(uint64_t(space.rlim_cur), "the address-space limit (ulimit -v)");
#endif
  return limit;
}

static std::string gibibytes(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f GiB", double(bytes) / (1ull << 30));
  return text;
}

Expected<ModelMemory> ModelMemory::create(const traincc_model &model) {
  // The kernel's heuristic overcommit refuses one allocation past memory and
  // swap but not two that only together pass it, nor a cgroup's limit:
  // zeroing them would end in the OOM killer's SIGKILL (or another's).
  uint64_t needed = model.state_bytes + model.workspace_bytes;
  MemoryLimit limit = memoryLimit();
  if (limit.bytes && needed > limit.bytes)
    return makeError(
        "the model needs ", gibibytes(needed), " of memory (state arena ",
        gibibytes(model.state_bytes), ", step workspace ",
        gibibytes(model.workspace_bytes), "), more than the ",
        gibibytes(limit.bytes), " of ", limit.what,
        ": compile it with a smaller --batch-size, --recompute or "
        "--memory-budget");
  Expected<AlignedBuffer> state =
      AlignedBuffer::allocate(model.state_bytes, "state arena");
  if (!state)
    return state.takeError();
  Expected<AlignedBuffer> workspace =
      AlignedBuffer::allocate(model.workspace_bytes, "step workspace");
  if (!workspace)
    return workspace.takeError();
  copyInitialState(model, state->data());
  return ModelMemory{state.take(), workspace.take()};
}

} // namespace traincc::rt
