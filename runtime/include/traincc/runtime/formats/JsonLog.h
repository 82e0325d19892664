//===- JsonLog.h - The --log JSON-lines training log ------------*- C++ -*-===//
//
// One JSON object per line, keys in this order (docs/ARCHITECTURE.md,
// "Command-line contracts"):
//   {"event":"step","step":S,"epoch":E,"loss":L,"lr":F,"loss_scale":F,"skipped":false}
//   {"event":"epoch","epoch":E,"train_loss":L,"val_loss":L,"val_acc":A,"lr":F,"seconds":T}
// Steps and epochs count from 1; val_loss/val_acc appear only when there is
// validation data. Monitors follow the fields above (set by the loop):
//   step:  ...,"skipped":false,"grad_norm":G}   (global L2 norm of the
//          accumulated gradients before clipping and the optimizer update)
//   epoch: ...,"seconds":T,"param_change":{"w":D,..},
//          "bn_stats":{"bn.running_mean":{"mean":M,"max_abs":A},..}}
// and events: {"event":"early_stop","epoch":E,"best_epoch":B,"best":X,
//              "monitor":"val_loss"} Numbers are the shortest decimal text that parses back to
// the same double (std::to_chars: no locale involved; negative zero is
// "-0.0"). JSON has no NaN or infinity, so a non-finite value is null.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_FORMATS_JSONLOG_H
#define TRAINCC_RUNTIME_FORMATS_JSONLOG_H

#include "traincc/runtime/support/Error.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace traincc::rt {

struct StepRecord {
  int64_t step = 0;
  int64_t epoch = 0;
  double loss = 0;
  double lr = 0;
  double lossScale = 1;
  bool skipped = false;
  std::optional<double> gradNorm;
};

/// The mean and largest magnitude of one BatchNorm running-stat tensor.
struct TensorSummary {
  std::string name;
  double mean = 0;
  double maxAbs = 0;
};

struct EpochRecord {
  int64_t epoch = 0;
  double trainLoss = 0;
  std::optional<double> valLoss;
  std::optional<double> valAcc;
  double lr = 0;
  double seconds = 0;
  /// L2 norm of each trainable tensor's change over the epoch, by ONNX name.
  std::optional<std::vector<std::pair<std::string, double>>> paramChange;
  std::optional<std::vector<TensorSummary>> bnStats;
};

struct EarlyStopRecord {
  int64_t epoch = 0;     // the epoch after which training stopped
  int64_t bestEpoch = 0; // the epoch with the best monitored value
  double best = 0;
  std::string monitor;   // "val_loss", "val_acc" or "train_loss"
};

/// A JSON number for `value` (shortest round-trip text), or null.
std::string formatJsonNumber(double value);
/// A quoted JSON string (", \\ and control characters escaped).
std::string formatJsonString(const std::string &text);

/// The log line for a record, with its trailing newline.
std::string formatLogLine(const StepRecord &record);
std::string formatLogLine(const EpochRecord &record);
std::string formatLogLine(const EarlyStopRecord &record);

/// Appends log lines to a file and flushes each one, so the log stays
/// readable up to the last completed step whatever happens to the process.
class JsonLinesLog {
public:
  /// Truncates the file, or appends to it when `append` (resumed runs).
  static Expected<JsonLinesLog> open(const std::string &path, bool append);

  JsonLinesLog(JsonLinesLog &&other) noexcept;
  JsonLinesLog &operator=(JsonLinesLog &&other) noexcept;
  JsonLinesLog(const JsonLinesLog &) = delete;
  JsonLinesLog &operator=(const JsonLinesLog &) = delete;
  ~JsonLinesLog();

  Error write(const StepRecord &record);
  Error write(const EpochRecord &record);
  Error write(const EarlyStopRecord &record);
  /// Closes the file, reporting errors the destructor would swallow.
  Error close();

private:
  JsonLinesLog(std::FILE *file, std::string path)
      : file_(file), path_(std::move(path)) {}
  Error writeLine(const std::string &line);

  std::FILE *file_ = nullptr;
  std::string path_;
};

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_FORMATS_JSONLOG_H
