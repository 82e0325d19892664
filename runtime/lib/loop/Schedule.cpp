//===- Schedule.cpp - Learning-rate schedules and epoch-end decisions -----===//

#include "traincc/runtime/loop/Schedule.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace traincc::rt {

const char *scheduleKindName(ScheduleKind kind) {
  switch (kind) {
  case ScheduleKind::Constant:
    return "constant";
  case ScheduleKind::Cosine:
    return "cosine";
  case ScheduleKind::Step:
    return "step";
  case ScheduleKind::Plateau:
    return "plateau";
  }
  return "unknown";
}

const char *monitorName(MonitorKind kind) {
  switch (kind) {
  case MonitorKind::ValLoss:
    return "val_loss";
  case MonitorKind::ValAcc:
    return "val_acc";
  case MonitorKind::TrainLoss:
    return "train_loss";
  }
  return "unknown";
}

namespace {
double worstValue(bool maximize) {
  return maximize ? -std::numeric_limits<double>::infinity()
                  : std::numeric_limits<double>::infinity();
}
} // namespace

LearningRateSchedule::LearningRateSchedule(const ScheduleOptions &options,
                                           bool maximize)
    : options_(options), maximize_(maximize) {
  state_.plateauLr = options.baseLr;
  state_.best = worstValue(maximize);
}

double LearningRateSchedule::at(int64_t step) const {
  const ScheduleOptions &o = options_;
  const double base =
      o.kind == ScheduleKind::Plateau ? state_.plateauLr : o.baseLr;
  if (step <= o.warmupSteps)
    return base * double(step) / double(o.warmupSteps);
  // Index of the step within the main schedule, from 0.
  const int64_t t = step - o.warmupSteps - 1;
  switch (o.kind) {
  case ScheduleKind::Constant:
  case ScheduleKind::Plateau:
    return base;
  case ScheduleKind::Cosine: {
    const int64_t span = std::max<int64_t>(1, o.totalSteps - o.warmupSteps);
    if (t >= span)
      return o.minLr;
    return o.minLr + (base - o.minLr) *
                         (1 + std::cos(M_PI * double(t) / double(span))) / 2;
  }
  case ScheduleKind::Step:
    return base * std::pow(o.gamma, double(t / o.stepSize));
  }
  return base;
}

bool LearningRateSchedule::endOfEpoch(double metric) {
  if (options_.kind != ScheduleKind::Plateau)
    return false;
  // torch.optim.lr_scheduler.ReduceLROnPlateau.step, threshold_mode 'rel'.
  ++state_.epochsSeen;
  const double th = options_.plateauThreshold;
  bool better = maximize_ ? metric > state_.best * (1 + th)
                          : metric < state_.best * (1 - th);
  if (better) {
    state_.best = metric;
    state_.badEpochs = 0;
  } else {
    ++state_.badEpochs;
  }
  if (state_.cooldownLeft > 0) {
    --state_.cooldownLeft;
    state_.badEpochs = 0;
  }
  if (state_.badEpochs <= options_.plateauPatience)
    return false;
  state_.cooldownLeft = options_.cooldown;
  state_.badEpochs = 0;
  double reduced =
      std::max(state_.plateauLr * options_.plateauFactor, options_.minLr);
  // PyTorch's eps = 1e-8: smaller reductions are not applied.
  if (state_.plateauLr - reduced <= 1e-8)
    return false;
  state_.plateauLr = reduced;
  return true;
}

ImprovementTracker::ImprovementTracker(bool maximize, double minDelta)
    : maximize_(maximize), minDelta_(minDelta) {
  state_.best = worstValue(maximize);
}

bool ImprovementTracker::update(int64_t epoch, double metric) {
  bool improved = maximize_ ? metric - minDelta_ > state_.best
                            : metric + minDelta_ < state_.best;
  if (improved) {
    state_.best = metric;
    state_.bestEpoch = epoch;
    state_.badEpochs = 0;
  } else {
    ++state_.badEpochs;
  }
  return improved;
}

} // namespace traincc::rt
