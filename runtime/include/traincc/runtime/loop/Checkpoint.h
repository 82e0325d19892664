//===- Checkpoint.h - Saving and resuming a training run --------*- C++ -*-===//
//
// A checkpoint holds everything a run needs to continue bit for bit: the
// whole state arena (parameters, optimizer state, BatchNorm statistics,
// gradient accumulators, loss-scaler state all live there), the loop's
// position, the schedule and early-stopping state, the data loader's state
// (seed, epoch, micro-batch within the epoch), and a fingerprint of the
// model it belongs to.
//
// File format, version 1 (all integers little-endian, doubles as their
// IEEE-754 bit patterns):
//
//   header   8 bytes  magic "TCCCKP01"
//            u32      format version (1)
//            u32      number of sections
//            u64      size of the whole file in bytes
//            u64      0 (reserved)
//   sections, each:
//            4 bytes  tag (ASCII)
//            u32      0 (reserved)
//            u64      payload size N
//            N bytes  payload, then zeros up to a multiple of 8 bytes
//   trailer  u32      CRC-32 (the zlib/gzip polynomial) of every byte
//                     before the trailer
//            4 bytes  "TEND"
//
// Sections: MODL (model fingerprint: ABI version, model name, micro-batch,
// loss, optimizer, state_bytes, and every state tensor's name, kind, dtype,
// shape, offset, bytes and owner), RUNS (loop position, epoch in progress,
// schedule, early-stopping and best-checkpoint state, the learning rate of
// the last step), SETS (the settings the run was started with, checked on
// resume: ResumeSettings, encoded as below), LODR (LoaderState::serialize),
// PSNP (the trainable
// tensors at the start of the epoch in progress, for the epoch's
// param_change; mid-epoch checkpoints only) and ARNA (the state arena).
// Readers skip sections they do not know. SETS came after the first
// release of version 1; a checkpoint without it still loads, its settings
// unknown (RunState::settings empty), and only its seed (in LODR) is
// checked on resume.
//
// SETS payload: u32 layout version (1), u64 seed, i64 accum steps, f64 lr,
// i64 epochs, i64 max steps (-1: not set), u32 schedule kind, i64 warmup
// steps, f64 min lr, i64 step size, f64 gamma, i64 plateau patience,
// f64 plateau factor, f64 plateau threshold, i64 cooldown, u32 monitor.
//
// Files are written atomically (a temporary file in the same folder,
// fsync, rename, fsync of the folder). Loading refuses, with an error that
// names the file: a truncated file, a checksum mismatch, another format
// version, and a checkpoint of another model or state layout.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_LOOP_CHECKPOINT_H
#define TRAINCC_RUNTIME_LOOP_CHECKPOINT_H

#include "traincc/runtime/data/Sampler.h"
#include "traincc/runtime/loop/Schedule.h"
#include "traincc/runtime/support/Error.h"
#include "traincc/runtime/support/Model.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace traincc::rt {

/// The first 8 bytes of every checkpoint: what tells a checkpoint from any
/// other file (--init-from takes either a checkpoint or an ONNX model).
inline constexpr char kCheckpointMagic[8] = {'T', 'C', 'C', 'C',
                                             'K', 'P', '0', '1'};

/// Where the training loop is; with the state arena and the sampler's
/// LoaderState this is the core of a checkpoint.
struct LoopPosition {
  int64_t step = 0;              // optimizer steps done (logged or skipped)
  int64_t appliedSteps = 0;      // of which applied: the schedule's index
  int64_t epoch = 0;             // epochs finished
  uint64_t microBatchesRun = 0;  // micro_step calls so far (dropout seeds)
};

/// The settings a run was started with that resuming it must respect
/// (compareResumeSettings). The micro-batch is part of the model
/// fingerprint; the cosine schedule's total steps follow epochs and
/// max-steps.
struct ResumeSettings {
  uint64_t seed = 0;
  int64_t accumSteps = 1;
  double learningRate = 0;
  std::optional<int64_t> epochs, maxSteps;
  ScheduleOptions schedule; // totalSteps and baseLr are not compared
  MonitorKind monitor = MonitorKind::ValLoss; // the plateau metric
};

/// How a run with `given` settings may continue a checkpoint written with
/// `saved`: an error for a setting that would change the trajectory the
/// checkpoint is part of (--seed, --accum-steps, --schedule and the options
/// of that schedule, the plateau's --monitor), else one warning per setting
/// that may change (--lr, --epochs, --max-steps; the run continues with the
/// given value). Messages name the flag with both values.
Expected<std::vector<std::string>>
compareResumeSettings(const ResumeSettings &saved, const ResumeSettings &given);

/// Everything besides the state arena that a checkpoint holds.
struct RunState {
  LoopPosition position;
  /// The epoch position.epoch + 1 has started but not ended.
  bool epochInProgress = false;
  int64_t epochSteps = 0;  // optimizer steps done in that epoch
  double epochLossSum = 0; // sum of their losses
  int64_t epochSkipped = 0; // of those steps, skipped by loss scaling
  std::vector<uint8_t> epochStartParams; // snapshotTrainable at its start
  double lastLearningRate = 0;
  ScheduleState schedule;
  EarlyStopState earlyStop;      // --early-stop-patience tracking
  EarlyStopState bestCheckpoint; // --save-best-only tracking
  LoaderState loader;
  /// The SETS section; empty when loading a checkpoint written before it.
  std::optional<ResumeSettings> settings;
};

/// Writes a checkpoint of `arena` (model.state_bytes bytes) and `state` to
/// `path` atomically.
Error saveCheckpoint(const std::string &path, const traincc_model &model,
                     const uint8_t *arena, const RunState &state);

/// Reads and verifies `path`; on success copies the saved arena into
/// `arena` (model.state_bytes bytes) and returns the rest.
Expected<RunState> loadCheckpoint(const std::string &path,
                                  const traincc_model &model, uint8_t *arena);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_LOOP_CHECKPOINT_H
