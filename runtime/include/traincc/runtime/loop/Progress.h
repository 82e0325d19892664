//===- Progress.h - The live progress line of `train` -----------*- C++ -*-===//
//
// On a terminal, `train` keeps one line up to date while an epoch runs:
//   epoch 2/5  37/120 steps  45.2 steps/s  ETA 0:02  loss 0.4312
// rewritten in place with '\r' (and erased with "\r\033[K" before the
// epoch's result line), at most about 10 times a second so that drawing
// never slows fast steps down. When the output is not a terminal (a file, a
// pipe, CI logs) nothing is drawn per step: only the per-epoch lines appear,
// as before.
//
// steps/s is the mean rate of the epoch so far; ETA is the time the rest of
// the epoch takes at that rate; loss is the mean step loss of the epoch.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_LOOP_PROGRESS_H
#define TRAINCC_RUNTIME_LOOP_PROGRESS_H

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace traincc::rt {

/// What the live line shows.
struct ProgressSnapshot {
  int64_t epoch = 0;
  std::optional<int64_t> epochs; // unset: no epoch count given
  int64_t step = 0;              // steps done in this epoch
  int64_t stepsPerEpoch = 0;
  double seconds = 0;            // since the epoch started
  double meanLoss = 0;
};

/// The text of the live line (no '\r', no newline).
std::string formatProgressLine(const ProgressSnapshot &snapshot);
/// "0:07", "12:34", "1:02:03"; "?" for negative or non-finite times.
std::string formatDuration(double seconds);

class ProgressDisplay {
public:
  using Clock = std::chrono::steady_clock;
  /// Live when `out` is a terminal.
  explicit ProgressDisplay(std::FILE *out);
  ProgressDisplay(std::FILE *out, bool live);
  /// Ends a line left on screen (a run stopped by an error), so that the
  /// message that follows starts on a line of its own.
  ~ProgressDisplay();
  ProgressDisplay(const ProgressDisplay &) = delete;
  ProgressDisplay &operator=(const ProgressDisplay &) = delete;

  bool live() const { return live_; }
  void startEpoch(int64_t epoch, std::optional<int64_t> epochs,
                  int64_t stepsPerEpoch);
  /// One optimizer step done; `stepInEpoch` counts from 1.
  void step(int64_t stepInEpoch, double loss);
  /// Erases the live line, so that a plain line can be printed.
  void clear();

  static constexpr double kMinInterval = 0.1; // seconds between redraws

private:
  void draw();

  std::FILE *out_;
  bool live_;
  bool shown_ = false; // a live line is on screen
  ProgressSnapshot snapshot_;
  double lossSum_ = 0;
  Clock::time_point epochStart_;
  std::optional<Clock::time_point> lastDraw_;
};

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_LOOP_PROGRESS_H
