//===- Checkpoint.cpp - Saving and resuming a training run ----------------===//

#include "traincc/runtime/loop/Checkpoint.h"

#include "support/ByteOrder.h"
#include "traincc/runtime/support/File.h"
#include "traincc/runtime/support/Tensor.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <zlib.h>

namespace traincc::rt {

namespace {

constexpr char kTrailerMagic[4] = {'T', 'E', 'N', 'D'};
constexpr uint32_t kFormatVersion = 1;
constexpr int64_t kHeaderBytes = 32;
constexpr int64_t kSectionHeaderBytes = 16;
constexpr int64_t kTrailerBytes = 8;

/// Little-endian encoder of section payloads.
class ByteWriter {
public:
  void u32(uint32_t v) {
    size_t at = bytes_.size();
    bytes_.resize(at + 4);
    storeLittleEndian32(bytes_.data() + at, v);
  }
  void u64(uint64_t v) {
    size_t at = bytes_.size();
    bytes_.resize(at + 8);
    storeLittleEndian64(bytes_.data() + at, v);
  }
  void i32(int32_t v) { u32(uint32_t(v)); }
  void i64(int64_t v) { u64(uint64_t(v)); }
  void f64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    u64(bits);
  }
  void string(const char *text) {
    size_t n = text ? std::strlen(text) : 0;
    u32(uint32_t(n));
    bytes_.insert(bytes_.end(), text, text + n);
  }
  std::vector<uint8_t> take() { return std::move(bytes_); }

private:
  std::vector<uint8_t> bytes_;
};

/// The matching decoder; reading past the end sets a sticky failure.
class ByteReader {
public:
  ByteReader(const uint8_t *data, uint64_t size) : data_(data), size_(size) {}
  bool ok() const { return ok_; }
  bool atEnd() const { return at_ == size_; }
  uint32_t u32() {
    if (!take(4))
      return 0;
    return loadLittleEndian32(data_ + at_ - 4);
  }
  uint64_t u64() {
    if (!take(8))
      return 0;
    return loadLittleEndian64(data_ + at_ - 8);
  }
  int32_t i32() { return int32_t(u32()); }
  int64_t i64() { return int64_t(u64()); }
  double f64() {
    uint64_t bits = u64();
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  std::string string() {
    uint32_t n = u32();
    if (!take(n))
      return "";
    return std::string(reinterpret_cast<const char *>(data_ + at_ - n), n);
  }

private:
  bool take(uint64_t n) {
    if (!ok_ || size_ - at_ < n) {
      ok_ = false;
      return false;
    }
    at_ += n;
    return true;
  }
  const uint8_t *data_;
  uint64_t size_;
  uint64_t at_ = 0;
  bool ok_ = true;
};

uint32_t tagOf(const char (&text)[5]) {
  return uint32_t(uint8_t(text[0])) | uint32_t(uint8_t(text[1])) << 8 |
         uint32_t(uint8_t(text[2])) << 16 | uint32_t(uint8_t(text[3])) << 24;
}

std::string tagText(uint32_t tag) {
  std::string text;
  for (int i = 0; i < 4; ++i) {
    char c = char((tag >> (8 * i)) & 0xFF);
    text += (c >= 0x20 && c < 0x7F) ? c : '?';
  }
  return text;
}

const uint32_t kModelTag = tagOf("MODL");
const uint32_t kRunTag = tagOf("RUNS");
const uint32_t kSettingsTag = tagOf("SETS");
const uint32_t kLoaderTag = tagOf("LODR");
const uint32_t kSnapshotTag = tagOf("PSNP");
const uint32_t kArenaTag = tagOf("ARNA");

uint32_t crc32Of(uint32_t crc, const uint8_t *data, uint64_t size) {
  // zlib's length is an unsigned int: feed large buffers in pieces.
  while (size > 0) {
    uInt piece = size > (1u << 30) ? (1u << 30) : uInt(size);
    crc = uint32_t(::crc32(crc, data, piece));
    data += piece;
    size -= piece;
  }
  return crc;
}

//===----------------------------------------------------------------------===//
// The model fingerprint
//===----------------------------------------------------------------------===//

struct TensorPrint {
  std::string name;
  int32_t kind = 0, dtype = 0;
  std::vector<int64_t> shape;
  uint64_t offset = 0, bytes = 0;
  int32_t owner = -1;

  bool operator==(const TensorPrint &o) const {
    return name == o.name && kind == o.kind && dtype == o.dtype &&
           shape == o.shape && offset == o.offset && bytes == o.bytes &&
           owner == o.owner;
  }
  std::string describe() const {
    return strCat("'", name, "' (", stateKindName(kind), " ",
                  abiDtypeName(dtype), " ", formatShape(shape), " at offset ",
                  offset, ", ", bytes, " bytes)");
  }
};

struct ModelPrint {
  uint32_t abiVersion = 0;
  std::string name;
  int64_t microBatch = 0;
  int32_t loss = 0, optimizer = 0;
  uint64_t stateBytes = 0;
  std::vector<TensorPrint> tensors;
};

ModelPrint fingerprintOf(const traincc_model &model) {
  ModelPrint print;
  print.abiVersion = model.abi_version;
  print.name = model.model_name ? model.model_name : "";
  print.microBatch = model.micro_batch;
  print.loss = model.loss;
  print.optimizer = model.optimizer;
  print.stateBytes = model.state_bytes;
  for (int32_t i = 0; i < model.num_state; ++i) {
    const traincc_state_tensor &t = model.state[i];
    TensorPrint tp;
    tp.name = t.name ? t.name : "";
    tp.kind = t.kind;
    tp.dtype = t.dtype;
    tp.shape = shapeOf(t);
    tp.offset = t.offset;
    tp.bytes = t.bytes;
    tp.owner = t.owner;
    print.tensors.push_back(std::move(tp));
  }
  return print;
}

std::vector<uint8_t> encodeFingerprint(const ModelPrint &print) {
  ByteWriter w;
  w.u32(print.abiVersion);
  w.string(print.name.c_str());
  w.i64(print.microBatch);
  w.i32(print.loss);
  w.i32(print.optimizer);
  w.u64(print.stateBytes);
  w.u32(uint32_t(print.tensors.size()));
  for (const TensorPrint &t : print.tensors) {
    w.string(t.name.c_str());
    w.i32(t.kind);
    w.i32(t.dtype);
    w.i32(int32_t(t.shape.size()));
    for (int64_t d : t.shape)
      w.i64(d);
    w.u64(t.offset);
    w.u64(t.bytes);
    w.i32(t.owner);
  }
  return w.take();
}

Expected<ModelPrint> decodeFingerprint(const uint8_t *data, uint64_t size) {
  ByteReader r(data, size);
  ModelPrint print;
  print.abiVersion = r.u32();
  print.name = r.string();
  print.microBatch = r.i64();
  print.loss = r.i32();
  print.optimizer = r.i32();
  print.stateBytes = r.u64();
  uint32_t count = r.u32();
  for (uint32_t i = 0; i < count && r.ok(); ++i) {
    TensorPrint t;
    t.name = r.string();
    t.kind = r.i32();
    t.dtype = r.i32();
    int32_t rank = r.i32();
    if (rank < 0 || rank > 64)
      return makeError("the model fingerprint is malformed");
    for (int32_t d = 0; d < rank; ++d)
      t.shape.push_back(r.i64());
    t.offset = r.u64();
    t.bytes = r.u64();
    t.owner = r.i32();
    print.tensors.push_back(std::move(t));
  }
  if (!r.ok() || !r.atEnd())
    return makeError("the model fingerprint is malformed");
  return print;
}

/// Why a checkpoint of `saved` cannot continue in `current`.
Error compareFingerprints(const ModelPrint &saved, const ModelPrint &current) {
  if (saved.name != current.name)
    return makeError("the checkpoint belongs to model '", saved.name,
                     "', this trainer trains '", current.name, "'");
  if (saved.abiVersion != current.abiVersion)
    return makeError("the checkpoint was written with model ABI version ",
                     saved.abiVersion, ", this trainer has version ",
                     current.abiVersion);
  if (saved.microBatch != current.microBatch)
    return makeError("the checkpoint was written with micro-batch ",
                     saved.microBatch, ", this trainer's is ",
                     current.microBatch);
  if (saved.loss != current.loss || saved.optimizer != current.optimizer)
    return makeError("the checkpoint was written with loss ",
                     lossKindName(saved.loss), " and optimizer ",
                     optimizerKindName(saved.optimizer), ", this trainer has ",
                     lossKindName(current.loss), " and ",
                     optimizerKindName(current.optimizer));
  size_t common = std::min(saved.tensors.size(), current.tensors.size());
  for (size_t i = 0; i < common; ++i)
    if (!(saved.tensors[i] == current.tensors[i]))
      return makeError("the state layout differs: tensor ", int64_t(i),
                       " is ", saved.tensors[i].describe(),
                       " in the checkpoint but ",
                       current.tensors[i].describe(), " in this trainer");
  if (saved.tensors.size() != current.tensors.size())
    return makeError("the state layout differs: the checkpoint has ",
                     int64_t(saved.tensors.size()),
                     " state tensors, this trainer ",
                     int64_t(current.tensors.size()));
  if (saved.stateBytes != current.stateBytes)
    return makeError("the state arena holds ", saved.stateBytes,
                     " bytes in the checkpoint, ", current.stateBytes,
                     " in this trainer");
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Run state
//===----------------------------------------------------------------------===//

void writeTracker(ByteWriter &w, const EarlyStopState &s) {
  w.f64(s.best);
  w.i64(s.bestEpoch);
  w.i64(s.badEpochs);
}

EarlyStopState readTracker(ByteReader &r) {
  EarlyStopState s;
  s.best = r.f64();
  s.bestEpoch = r.i64();
  s.badEpochs = r.i64();
  return s;
}

std::vector<uint8_t> encodeRunState(const RunState &s) {
  ByteWriter w;
  w.i64(s.position.step);
  w.i64(s.position.appliedSteps);
  w.i64(s.position.epoch);
  w.u64(s.position.microBatchesRun);
  w.u32(s.epochInProgress ? 1 : 0);
  w.i64(s.epochSteps);
  w.f64(s.epochLossSum);
  w.f64(s.lastLearningRate);
  w.f64(s.schedule.plateauLr);
  w.f64(s.schedule.best);
  w.i64(s.schedule.badEpochs);
  w.i64(s.schedule.cooldownLeft);
  w.i64(s.schedule.epochsSeen);
  writeTracker(w, s.earlyStop);
  writeTracker(w, s.bestCheckpoint);
  w.i64(s.epochSkipped);
  return w.take();
}

Error decodeRunState(const uint8_t *data, uint64_t size, RunState &s) {
  ByteReader r(data, size);
  s.position.step = r.i64();
  s.position.appliedSteps = r.i64();
  s.position.epoch = r.i64();
  s.position.microBatchesRun = r.u64();
  uint32_t inProgress = r.u32();
  s.epochInProgress = inProgress != 0;
  s.epochSteps = r.i64();
  s.epochLossSum = r.f64();
  s.lastLearningRate = r.f64();
  s.schedule.plateauLr = r.f64();
  s.schedule.best = r.f64();
  s.schedule.badEpochs = r.i64();
  s.schedule.cooldownLeft = r.i64();
  s.schedule.epochsSeen = r.i64();
  s.earlyStop = readTracker(r);
  s.bestCheckpoint = readTracker(r);
  s.epochSkipped = r.i64();
  if (!r.ok() || !r.atEnd() || inProgress > 1 || s.position.step < 0 ||
      s.position.epoch < 0 || s.epochSteps < 0 || s.epochSkipped < 0 ||
      s.epochSkipped > s.epochSteps ||
      s.position.appliedSteps > s.position.step)
    return makeError("the run state section is malformed");
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Settings
//===----------------------------------------------------------------------===//

constexpr uint32_t kSettingsLayout = 1;

std::vector<uint8_t> encodeSettings(const ResumeSettings &s) {
  ByteWriter w;
  w.u32(kSettingsLayout);
  w.u64(s.seed);
  w.i64(s.accumSteps);
  w.f64(s.learningRate);
  w.i64(s.epochs.value_or(-1));
  w.i64(s.maxSteps.value_or(-1));
  w.u32(uint32_t(s.schedule.kind));
  w.i64(s.schedule.warmupSteps);
  w.f64(s.schedule.minLr);
  w.i64(s.schedule.stepSize);
  w.f64(s.schedule.gamma);
  w.i64(s.schedule.plateauPatience);
  w.f64(s.schedule.plateauFactor);
  w.f64(s.schedule.plateauThreshold);
  w.i64(s.schedule.cooldown);
  w.u32(uint32_t(s.monitor));
  return w.take();
}

Expected<ResumeSettings> decodeSettings(const uint8_t *data, uint64_t size) {
  ByteReader r(data, size);
  if (uint32_t layout = r.u32(); r.ok() && layout != kSettingsLayout)
    return makeError("the settings section has layout ", int64_t(layout),
                     ", this trainer reads layout ", int64_t(kSettingsLayout));
  ResumeSettings s;
  s.seed = r.u64();
  s.accumSteps = r.i64();
  s.learningRate = r.f64();
  int64_t epochs = r.i64(), maxSteps = r.i64();
  if (epochs >= 0)
    s.epochs = epochs;
  if (maxSteps >= 0)
    s.maxSteps = maxSteps;
  uint32_t kind = r.u32();
  s.schedule.kind = ScheduleKind(kind);
  s.schedule.warmupSteps = r.i64();
  s.schedule.minLr = r.f64();
  s.schedule.stepSize = r.i64();
  s.schedule.gamma = r.f64();
  s.schedule.plateauPatience = r.i64();
  s.schedule.plateauFactor = r.f64();
  s.schedule.plateauThreshold = r.f64();
  s.schedule.cooldown = r.i64();
  uint32_t monitor = r.u32();
  s.monitor = MonitorKind(monitor);
  if (!r.ok() || !r.atEnd() || kind > uint32_t(ScheduleKind::Plateau) ||
      monitor > uint32_t(MonitorKind::TrainLoss) || s.accumSteps < 1)
    return makeError("the settings section is malformed");
  return s;
}

std::string optionalText(const char *flag, const std::optional<int64_t> &v) {
  return v ? strCat(flag, " ", *v) : strCat("no ", flag);
}

} // namespace

Expected<std::vector<std::string>>
compareResumeSettings(const ResumeSettings &saved,
                      const ResumeSettings &given) {
  auto differs = [](const std::string &was, const std::string &now,
                    const char *why) {
    return makeError("the checkpoint was written with ", was,
                     ", this run has ", now, ": resume with ", was, " (", why,
                     ")");
  };
  const char *order = "the data order and dropout continue from it";
  if (saved.seed != given.seed)
    return differs(strCat("--seed ", saved.seed), strCat("--seed ", given.seed),
                   order);
  const char *steps = "it sets how many micro-batches make an optimizer step";
  if (saved.accumSteps != given.accumSteps)
    return differs(strCat("--accum-steps ", saved.accumSteps),
                   strCat("--accum-steps ", given.accumSteps), steps);

  const ScheduleOptions &a = saved.schedule, &b = given.schedule;
  const char *schedule = "the schedule continues where the checkpoint left it";
  if (a.kind != b.kind)
    return differs(strCat("--schedule ", scheduleKindName(a.kind)),
                   strCat("--schedule ", scheduleKindName(b.kind)), schedule);
  auto integer = [&](const char *flag, int64_t was,
                     int64_t now) -> Error {
    if (was == now)
      return Error::success();
    return differs(strCat(flag, " ", was), strCat(flag, " ", now), schedule);
  };
  auto real = [&](const char *flag, double was, double now) -> Error {
    if (was == now)
      return Error::success();
    return differs(strCat(flag, " ", was), strCat(flag, " ", now), schedule);
  };
  if (Error err = integer("--warmup-steps", a.warmupSteps, b.warmupSteps))
    return err;
  ScheduleKind kind = a.kind;
  if (kind == ScheduleKind::Cosine || kind == ScheduleKind::Plateau)
    if (Error err = real("--min-lr", a.minLr, b.minLr))
      return err;
  if (kind == ScheduleKind::Step) {
    if (Error err = integer("--step-size", a.stepSize, b.stepSize))
      return err;
    if (Error err = real("--gamma", a.gamma, b.gamma))
      return err;
  }
  if (kind == ScheduleKind::Plateau) {
    if (Error err = integer("--plateau-patience", a.plateauPatience,
                            b.plateauPatience))
      return err;
    if (Error err =
            real("--plateau-factor", a.plateauFactor, b.plateauFactor))
      return err;
    if (Error err = real("--plateau-threshold", a.plateauThreshold,
                         b.plateauThreshold))
      return err;
    if (Error err = integer("--cooldown", a.cooldown, b.cooldown))
      return err;
    if (saved.monitor != given.monitor)
      return differs(strCat("--monitor ", monitorName(saved.monitor)),
                     strCat("--monitor ", monitorName(given.monitor)),
                     "the plateau's best value is of that metric");
  }

  std::vector<std::string> warnings;
  auto changed = [&](const std::string &was, const std::string &now) {
    warnings.push_back(strCat("the checkpoint was written with ", was,
                              ", this run has ", now, ": continuing with ",
                              now));
  };
  if (saved.learningRate != given.learningRate)
    changed(strCat("--lr ", saved.learningRate),
            strCat("--lr ", given.learningRate));
  if (saved.epochs != given.epochs)
    changed(optionalText("--epochs", saved.epochs),
            optionalText("--epochs", given.epochs));
  if (saved.maxSteps != given.maxSteps)
    changed(optionalText("--max-steps", saved.maxSteps),
            optionalText("--max-steps", given.maxSteps));
  return warnings;
}

namespace {

struct Section {
  uint32_t tag;
  const uint8_t *data;
  uint64_t size;
};

} // namespace

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

Error saveCheckpoint(const std::string &path, const traincc_model &model,
                     const uint8_t *arena, const RunState &state) {
  std::vector<uint8_t> modelBytes = encodeFingerprint(fingerprintOf(model));
  std::vector<uint8_t> runBytes = encodeRunState(state);
  std::vector<unsigned char> loaderBytes = state.loader.serialize();
  std::vector<uint8_t> settingsBytes;
  if (state.settings)
    settingsBytes = encodeSettings(*state.settings);
  std::vector<Section> sections = {
      {kModelTag, modelBytes.data(), modelBytes.size()},
      {kRunTag, runBytes.data(), runBytes.size()}};
  if (state.settings)
    sections.push_back(
        {kSettingsTag, settingsBytes.data(), settingsBytes.size()});
  sections.push_back({kLoaderTag, loaderBytes.data(), loaderBytes.size()});
  if (state.epochInProgress)
    sections.push_back({kSnapshotTag, state.epochStartParams.data(),
                        state.epochStartParams.size()});
  sections.push_back({kArenaTag, arena, model.state_bytes});

  uint64_t fileSize = kHeaderBytes + kTrailerBytes;
  for (const Section &s : sections)
    fileSize += kSectionHeaderBytes + (s.size + 7) / 8 * 8;

  Expected<AtomicFileWriter> writer = AtomicFileWriter::create(path);
  if (!writer)
    return writer.takeError();
  uint32_t crc = uint32_t(::crc32(0, nullptr, 0));
  auto emit = [&](const void *data, uint64_t size) {
    crc = crc32Of(crc, static_cast<const uint8_t *>(data), size);
    return writer->write(data, int64_t(size));
  };
  uint8_t header[kHeaderBytes] = {};
  std::memcpy(header, kCheckpointMagic, 8);
  storeLittleEndian32(header + 8, kFormatVersion);
  storeLittleEndian32(header + 12, uint32_t(sections.size()));
  storeLittleEndian64(header + 16, fileSize);
  if (Error err = emit(header, sizeof(header)))
    return err;
  const uint8_t zeros[8] = {};
  for (const Section &s : sections) {
    uint8_t sectionHeader[kSectionHeaderBytes] = {};
    storeLittleEndian32(sectionHeader, s.tag);
    storeLittleEndian64(sectionHeader + 8, s.size);
    if (Error err = emit(sectionHeader, sizeof(sectionHeader)))
      return err;
    if (Error err = emit(s.data, s.size))
      return err;
    if (Error err = emit(zeros, (8 - s.size % 8) % 8))
      return err;
  }
  uint8_t trailer[kTrailerBytes];
  storeLittleEndian32(trailer, crc);
  std::memcpy(trailer + 4, kTrailerMagic, 4);
  if (Error err = writer->write(trailer, sizeof(trailer)))
    return err;
  return writer->commit();
}

Expected<RunState> loadCheckpoint(const std::string &path,
                                  const traincc_model &model,
                                  uint8_t *arena) {
  Expected<InputFile> file = InputFile::open(path);
  if (!file)
    return file.takeError();
  const int64_t size = file->size();
  if (size < kHeaderBytes + kTrailerBytes)
    return makeError(path, ": not a traincc checkpoint (", size,
                     " bytes; truncated?)");
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  if (Error err = file->readExact(bytes.data(), size))
    return err;
  if (std::memcmp(bytes.data(), kCheckpointMagic, 8) != 0)
    return makeError(path, ": not a traincc checkpoint (bad magic bytes)");
  uint32_t version = loadLittleEndian32(bytes.data() + 8);
  if (version != kFormatVersion)
    return makeError(path, ": checkpoint format version ", version,
                     ", this trainer reads version ", kFormatVersion);
  uint64_t declared = loadLittleEndian64(bytes.data() + 16);
  if (declared != uint64_t(size))
    return makeError(path, ": the checkpoint is ",
                     declared > uint64_t(size) ? "truncated" : "damaged",
                     ": its header says ", declared, " bytes, the file has ",
                     size);
  const uint8_t *trailer = bytes.data() + size - kTrailerBytes;
  uint32_t stored = loadLittleEndian32(trailer);
  uint32_t computed = crc32Of(uint32_t(::crc32(0, nullptr, 0)), bytes.data(),
                              uint64_t(size - kTrailerBytes));
  if (std::memcmp(trailer + 4, kTrailerMagic, 4) != 0 || stored != computed) {
    char hex[64];
    std::snprintf(hex, sizeof(hex), "stored %08x, computed %08x", stored,
                  computed);
    return makeError(path, ": checksum mismatch (", hex,
                     "): the checkpoint is corrupt");
  }

  // Sections.
  uint32_t count = loadLittleEndian32(bytes.data() + 12);
  const uint8_t *modelData = nullptr, *runData = nullptr,
                *settingsData = nullptr, *loaderData = nullptr,
                *snapshotData = nullptr, *arenaData = nullptr;
  uint64_t modelSize = 0, runSize = 0, settingsSize = 0, loaderSize = 0,
           snapshotSize = 0, arenaSize = 0;
  uint64_t at = kHeaderBytes;
  const uint64_t end = uint64_t(size - kTrailerBytes);
  for (uint32_t i = 0; i < count; ++i) {
    if (end - at < uint64_t(kSectionHeaderBytes))
      return makeError(path, ": section ", int64_t(i),
                       " runs past the end of the checkpoint");
    uint32_t tag = loadLittleEndian32(bytes.data() + at);
    uint64_t length = loadLittleEndian64(bytes.data() + at + 8);
    at += kSectionHeaderBytes;
    if (length > end - at || (length + 7) / 8 * 8 > end - at)
      return makeError(path, ": section '", tagText(tag),
                       "' runs past the end of the checkpoint");
    const uint8_t *data = bytes.data() + at;
    if (tag == kModelTag)
      modelData = data, modelSize = length;
    else if (tag == kRunTag)
      runData = data, runSize = length;
    else if (tag == kSettingsTag)
      settingsData = data, settingsSize = length;
    else if (tag == kLoaderTag)
      loaderData = data, loaderSize = length;
    else if (tag == kSnapshotTag)
      snapshotData = data, snapshotSize = length;
    else if (tag == kArenaTag)
      arenaData = data, arenaSize = length;
    at += (length + 7) / 8 * 8;
  }
  if (at != end)
    return makeError(path, ": the checkpoint has bytes after its last section");
  for (auto [data, name] : {std::pair{modelData, "MODL"}, {runData, "RUNS"},
                            {loaderData, "LODR"}, {arenaData, "ARNA"}})
    if (!data)
      return makeError(path, ": the checkpoint has no ", name, " section");

  Expected<ModelPrint> saved = decodeFingerprint(modelData, modelSize);
  if (!saved)
    return saved.takeError().withContext(path);
  if (Error err = compareFingerprints(*saved, fingerprintOf(model)))
    return std::move(err).withContext(path);
  if (arenaSize != model.state_bytes)
    return makeError(path, ": the state arena section holds ", arenaSize,
                     " bytes, the model needs ", model.state_bytes);

  RunState state;
  if (Error err = decodeRunState(runData, runSize, state))
    return std::move(err).withContext(path);
  Expected<LoaderState> loader =
      LoaderState::deserialize(loaderData, int64_t(loaderSize));
  if (!loader)
    return loader.takeError().withContext(path);
  state.loader = *loader;
  if (settingsData) {
    Expected<ResumeSettings> settings =
        decodeSettings(settingsData, settingsSize);
    if (!settings)
      return settings.takeError().withContext(path);
    state.settings = settings.take();
  }
  if (state.epochInProgress) {
    if (!snapshotData)
      return makeError(path, ": the checkpoint has no PSNP section");
    state.epochStartParams.assign(snapshotData, snapshotData + snapshotSize);
  }
  std::memcpy(arena, arenaData, arenaSize);
  return state;
}

} // namespace traincc::rt
