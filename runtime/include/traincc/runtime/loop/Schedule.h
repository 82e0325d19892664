//===- Schedule.h - Learning-rate schedules and epoch-end decisions -*- C++ -*-===//
//
// Semantics (docs/ARCHITECTURE.md, "Training semantics"), all matching PyTorch:
// * The learning rate of optimizer step s (counted from 1 over the steps
//   actually applied, so a step skipped by loss scaling does not advance
//   it) is warmup(s) * main(s):
//     warmup:   s / W for s <= W (--warmup-steps W; torch LinearLR with
//               start_factor 1/W over W-1 iterations), else 1.
//     constant: the base --lr.
//     cosine:   CosineAnnealingLR(T_max = T - W, eta_min = --min-lr) over
//               t = s - W - 1: min + (lr - min) (1 + cos(pi t / T_max)) / 2,
//               where T is the run's total optimizer steps (epochs * steps
//               per epoch, or --max-steps, whichever is smaller); it stays
//               at min once t reaches T_max.
//     step:     StepLR(step_size = N, gamma = G) over t: lr * G^floor(t/N).
//     plateau:  ReduceLROnPlateau acting at epoch ends on the monitored
//               metric: mode min (loss) or max (accuracy), threshold_mode
//               'rel' with threshold --plateau-threshold (default 1e-4):
//               better means < best (1 - th) (min) or > best (1 + th) (max);
//               after more than --plateau-patience bad epochs the lr becomes
//               max(lr * --plateau-factor, --min-lr) (unchanged when that is
//               less than 1e-8 lower) and --cooldown epochs follow in which
//               bad epochs are not counted.
// * Early stopping (Keras EarlyStopping): an epoch improves when its metric
//   beats the best so far by more than --min-delta (absolute; < best - d
//   for min, > best + d for max); training stops after
//   --early-stop-patience epochs in a row without improvement.
// * The metric: --monitor val_loss (min) or val_acc (max); without
//   validation data the loop monitors train_loss (min) instead.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_LOOP_SCHEDULE_H
#define TRAINCC_RUNTIME_LOOP_SCHEDULE_H

#include <cstdint>
#include <optional>

namespace traincc::rt {

enum class ScheduleKind : uint32_t { Constant = 0, Cosine = 1, Step = 2, Plateau = 3 };
const char *scheduleKindName(ScheduleKind kind);

enum class MonitorKind : uint32_t { ValLoss = 0, ValAcc = 1, TrainLoss = 2 };
/// "val_loss", "val_acc", "train_loss".
const char *monitorName(MonitorKind kind);
/// Accuracy is maximised; losses are minimised.
inline bool monitorMaximizes(MonitorKind kind) {
  return kind == MonitorKind::ValAcc;
}

struct ScheduleOptions {
  ScheduleKind kind = ScheduleKind::Constant;
  double baseLr = 0.01;
  int64_t warmupSteps = 0;
  int64_t totalSteps = 0; // cosine: optimizer steps of the whole run
  double minLr = 0;       // cosine eta_min, plateau min_lr
  int64_t stepSize = 1;   // step decay
  double gamma = 0.1;
  int64_t plateauPatience = 10;
  double plateauFactor = 0.1;
  double plateauThreshold = 1e-4;
  int64_t cooldown = 0;
};

/// The part of a schedule that changes during a run (plateau): with the
/// options, what a checkpoint needs to continue it.
struct ScheduleState {
  double plateauLr = 0;   // base lr after plateau reductions
  double best = 0;        // best metric so far (+-inf before the first)
  int64_t badEpochs = 0;  // PyTorch num_bad_epochs
  int64_t cooldownLeft = 0;
  int64_t epochsSeen = 0;
};

class LearningRateSchedule {
public:
  /// `maximize`: the plateau metric is an accuracy.
  LearningRateSchedule(const ScheduleOptions &options, bool maximize);

  /// The learning rate of applied optimizer step `step` (from 1).
  double at(int64_t step) const;
  /// An epoch ended with `metric`; plateau: returns true when it reduced
  /// the learning rate. Other schedules ignore it.
  bool endOfEpoch(double metric);

  const ScheduleOptions &options() const { return options_; }
  const ScheduleState &state() const { return state_; }
  void restore(const ScheduleState &state) { state_ = state; }

private:
  ScheduleOptions options_;
  bool maximize_;
  ScheduleState state_;
};

/// Best-so-far tracking with a minimum improvement: early stopping and
/// --save-best-only.
struct EarlyStopState {
  double best = 0;          // +-inf before the first epoch
  int64_t bestEpoch = 0;    // 0 before the first epoch
  int64_t badEpochs = 0;    // epochs in a row without improvement
};

class ImprovementTracker {
public:
  ImprovementTracker(bool maximize, double minDelta);
  /// Records epoch `epoch`'s metric; true when it improved on the best.
  bool update(int64_t epoch, double metric);
  const EarlyStopState &state() const { return state_; }
  void restore(const EarlyStopState &state) { state_ = state; }

private:
  bool maximize_;
  double minDelta_;
  EarlyStopState state_;
};

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_LOOP_SCHEDULE_H
