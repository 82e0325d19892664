//===- Weights.cpp - Trained weights from a file --------------------------===//

#include "traincc/runtime/loop/Weights.h"

#include "traincc/runtime/formats/OnnxInitializers.h"
#include "traincc/runtime/loop/Checkpoint.h"
#include "traincc/runtime/support/File.h"
#include "traincc/runtime/support/Tensor.h"

#include <cstring>
#include <map>
#include <set>

namespace traincc::rt {

namespace {

/// "trainable parameter", "BatchNorm running mean", ...
const char *roleOf(const traincc_state_tensor &t) {
  switch (t.kind) {
  case TRAINCC_STATE_TRAINABLE:
    return "trainable parameter";
  case TRAINCC_STATE_FROZEN:
    return "frozen parameter";
  case TRAINCC_STATE_RUNNING_MEAN:
    return "BatchNorm running mean";
  case TRAINCC_STATE_RUNNING_VAR:
    return "BatchNorm running variance";
  }
  return "state tensor";
}

/// The first bytes of `file` tell a checkpoint from anything else.
Expected<bool> isCheckpoint(const std::string &path) {
  Expected<InputFile> file = InputFile::open(path);
  if (!file)
    return file.takeError();
  char head[sizeof(kCheckpointMagic)] = {};
  if (file->size() < int64_t(sizeof(head)))
    return false;
  if (Error err = file->readExact(head, sizeof(head)))
    return err;
  return std::memcmp(head, kCheckpointMagic, sizeof(head)) == 0;
}

Expected<std::string> readWholeFile(const std::string &path) {
  Expected<InputFile> file = InputFile::open(path);
  if (!file)
    return file.takeError();
  std::string bytes(size_t(file->size()), '\0');
  if (Error err = file->readExact(bytes.data(), file->size()))
    return err;
  return bytes;
}

/// One tensor to write: the arena range and its new bytes.
struct StagedTensor {
  uint64_t offset;
  std::vector<uint8_t> bytes;
};

/// Why a file may lack BatchNorm tensors: `train --export` folds each
/// BatchNorm after a convolution into it (an inference model).
constexpr const char *foldedExportHint =
    "; the file has no BatchNorm running statistics: an --export folds "
    "BatchNorm into the convolutions, for inference; reload trained weights "
    "from a --checkpoint, or from an export written with train --no-fold-bn";

/// Whether some BatchNorm running statistic of the model is missing from
/// `byName`.
template <typename Map>
bool lacksBatchNormStatistics(const traincc_model &model, const Map &byName) {
  for (int32_t i = 0; i < model.num_state; ++i) {
    const traincc_state_tensor &t = model.state[i];
    if ((t.kind == TRAINCC_STATE_RUNNING_MEAN ||
         t.kind == TRAINCC_STATE_RUNNING_VAR) &&
        byName.find(t.name) == byName.end())
      return true;
  }
  return false;
}

/// The model's weights from the initializers of the ONNX model in `bytes`.
Expected<std::vector<StagedTensor>> stageFromOnnx(const traincc_model &model,
                                                  std::string_view bytes) {
  Expected<std::vector<OnnxInitializer>> inits = readOnnxInitializers(bytes);
  if (!inits)
    return inits.takeError().withContext("not a readable ONNX model");
  std::map<std::string, const OnnxInitializer *, std::less<>> byName;
  for (const OnnxInitializer &init : *inits)
    if (!byName.emplace(init.name, &init).second)
      return makeError("the graph has two initializers named '", init.name,
                       "'");

  std::vector<StagedTensor> staged;
  std::set<std::string, std::less<>> used;
  for (int32_t i = 0; i < model.num_state; ++i) {
    const traincc_state_tensor &t = model.state[i];
    if (!isWeightsTensor(t))
      continue;
    auto it = byName.find(t.name);
    std::vector<int64_t> shape = shapeOf(t);
    if (it == byName.end())
      return makeError("no initializer '", t.name, "' (the model's ",
                       roleOf(t), " ", abiDtypeName(t.dtype), " ",
                       formatShape(shape), ")",
                       lacksBatchNormStatistics(model, byName)
                           ? foldedExportHint
                           : "");
    const OnnxInitializer &init = *it->second;
    int32_t wanted = onnxElementTypeOf(t.dtype);
    if (init.elementType != wanted)
      return makeError("initializer '", t.name, "' is ONNX ",
                       onnxElementTypeName(init.elementType), ", the model's ",
                       roleOf(t), " is ", abiDtypeName(t.dtype));
    if (init.dims != shape)
      return makeError("initializer '", t.name, "' has shape ",
                       formatShape(init.dims), ", the model's ", roleOf(t),
                       " has ", formatShape(shape));
    Expected<std::vector<uint8_t>> data =
        readInitializerData(init, abiDtypeSize(t.dtype));
    if (!data)
      return data.takeError();
    if (data->size() != t.bytes)
      return makeError("initializer '", t.name, "' holds ",
                       int64_t(data->size()), " bytes, the model's ",
                       roleOf(t), " ", t.bytes);
    staged.push_back({t.offset, data.take()});
    used.insert(it->first);
  }

  // Other initializers are fine when the compiled model has them too
  // (constants); one it lacks means the file is of another model.
  if (model.onnx_model && model.onnx_model_bytes > 0) {
    Expected<std::vector<OnnxInitializer>> compiled =
        readOnnxInitializers(std::string_view(
            reinterpret_cast<const char *>(model.onnx_model),
            size_t(model.onnx_model_bytes)));
    if (!compiled)
      return compiled.takeError().withContext("the trainer's ONNX model");
    std::set<std::string, std::less<>> known;
    for (const OnnxInitializer &init : *compiled)
      known.insert(init.name);
    for (const OnnxInitializer &init : *inits)
      if (!used.count(init.name) && !known.count(init.name))
        return makeError("initializer '", init.name, "' ",
                         onnxElementTypeName(init.elementType), " ",
                         formatShape(init.dims),
                         " is not in this model (a file of another model?)");
  }
  return staged;
}

/// The model's weights from a checkpoint of this model.
Expected<std::vector<StagedTensor>>
stageFromCheckpoint(const traincc_model &model, const std::string &path) {
  Expected<AlignedBuffer> arena =
      AlignedBuffer::allocate(model.state_bytes, "checkpoint state arena");
  if (!arena)
    return arena.takeError();
  Expected<RunState> state = loadCheckpoint(path, model, arena->data());
  if (!state)
    return state.takeError();
  std::vector<StagedTensor> staged;
  for (int32_t i = 0; i < model.num_state; ++i) {
    const traincc_state_tensor &t = model.state[i];
    if (!isWeightsTensor(t))
      continue;
    const uint8_t *from = arena->data() + t.offset;
    staged.push_back({t.offset, std::vector<uint8_t>(from, from + t.bytes)});
  }
  return staged;
}

} // namespace

bool isWeightsTensor(const traincc_state_tensor &t) {
  return t.kind == TRAINCC_STATE_TRAINABLE || t.kind == TRAINCC_STATE_FROZEN ||
         t.kind == TRAINCC_STATE_RUNNING_MEAN ||
         t.kind == TRAINCC_STATE_RUNNING_VAR;
}

Expected<int64_t> loadWeights(const ModelInfo &model, StepBackend &backend,
                              const WeightsFile &file) {
  const traincc_model &abi = *model.abi;
  auto fail = [&](Error err) {
    return std::move(err).withContext(file.flag);
  };
  Expected<bool> checkpoint = isCheckpoint(file.path);
  if (!checkpoint)
    return fail(checkpoint.takeError());
  if (file.format == WeightsFormat::Onnx && *checkpoint)
    return fail(makeError(file.path, ": this is a traincc checkpoint; load "
                                     "it with --checkpoint"));
  if (file.format == WeightsFormat::Checkpoint && !*checkpoint)
    return fail(makeError(file.path, ": not a traincc checkpoint (for an "
                                     "ONNX file, use --weights)"));

  auto stage = [&]() -> Expected<std::vector<StagedTensor>> {
    if (*checkpoint)
      return stageFromCheckpoint(abi, file.path); // names the file itself
    Expected<std::string> bytes = readWholeFile(file.path);
    if (!bytes)
      return bytes.takeError();
    Expected<std::vector<StagedTensor>> staged = stageFromOnnx(abi, *bytes);
    if (!staged)
      return staged.takeError().withContext(file.path);
    return staged;
  };
  Expected<std::vector<StagedTensor>> staged = stage();
  if (!staged)
    return fail(staged.takeError());

  // The host arena mirrors the device's (StepBackend.h): refresh it
  // first, so that the tensors not loaded keep their current values.
  if (Error err = backend.syncStateToHost())
    return fail(std::move(err));
  uint8_t *arena = backend.memory().state.data();
  for (const StagedTensor &t : *staged)
    std::memcpy(arena + t.offset, t.bytes.data(), t.bytes.size());
  // Mixed precision: the steps read the low-precision weight copies, and a
  // skipped first step would restore the step backups; both follow the
  // weights just loaded.
  refreshStateCopies(abi, arena);
  if (Error err = backend.syncStateToDevice())
    return fail(std::move(err));
  return int64_t(staged->size());
}

} // namespace traincc::rt
