//===- Progress.cpp - The live progress line of `train` -------------------===//

#include "traincc/runtime/loop/Progress.h"

#include <cmath>
#include <unistd.h>

namespace traincc::rt {

std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0 || seconds > 1e9)
    return "?";
  long long total = (long long)std::llround(seconds);
  long long h = total / 3600, m = total / 60 % 60, s = total % 60;
  char text[48];
  if (h > 0)
    std::snprintf(text, sizeof(text), "%lld:%02lld:%02lld", h, m, s);
  else
    std::snprintf(text, sizeof(text), "%lld:%02lld", m, s);
  return text;
}

std::string formatProgressLine(const ProgressSnapshot &s) {
  char text[256];
  std::string epoch = "epoch " + std::to_string(s.epoch);
  if (s.epochs)
    epoch += "/" + std::to_string(*s.epochs);
  double rate = s.seconds > 0 ? double(s.step) / s.seconds : 0;
  std::string eta =
      rate > 0 ? formatDuration(double(s.stepsPerEpoch - s.step) / rate) : "?";
  std::snprintf(text, sizeof(text),
                "%s  %lld/%lld steps  %.1f steps/s  ETA %s  loss %.4f",
                epoch.c_str(), (long long)s.step, (long long)s.stepsPerEpoch,
                rate, eta.c_str(), s.meanLoss);
  return text;
}

ProgressDisplay::ProgressDisplay(std::FILE *out)
    : ProgressDisplay(out, out && isatty(fileno(out)) == 1) {}

ProgressDisplay::ProgressDisplay(std::FILE *out, bool live)
    : out_(out), live_(live && out) {}

ProgressDisplay::~ProgressDisplay() {
  if (shown_) {
    std::fputc('\n', out_);
    std::fflush(out_);
  }
}

void ProgressDisplay::startEpoch(int64_t epoch, std::optional<int64_t> epochs,
                                 int64_t stepsPerEpoch) {
  snapshot_ = ProgressSnapshot();
  snapshot_.epoch = epoch;
  snapshot_.epochs = epochs;
  snapshot_.stepsPerEpoch = stepsPerEpoch;
  lossSum_ = 0;
  epochStart_ = Clock::now();
  lastDraw_.reset();
}

void ProgressDisplay::step(int64_t stepInEpoch, double loss) {
  if (!live_)
    return;
  snapshot_.step = stepInEpoch;
  lossSum_ += loss;
  Clock::time_point now = Clock::now();
  // The first step of an epoch is drawn at once, later ones at most every
  // kMinInterval.
  if (lastDraw_ &&
      std::chrono::duration<double>(now - *lastDraw_).count() < kMinInterval)
    return;
  lastDraw_ = now;
  snapshot_.seconds = std::chrono::duration<double>(now - epochStart_).count();
  snapshot_.meanLoss = lossSum_ / double(stepInEpoch);
  draw();
}

void ProgressDisplay::draw() {
  // "\r" back to column 0, the line, then erase what a longer line left.
  std::string line = "\r" + formatProgressLine(snapshot_) + "\033[K";
  std::fputs(line.c_str(), out_);
  std::fflush(out_);
  shown_ = true;
}

void ProgressDisplay::clear() {
  if (!shown_)
    return;
  std::fputs("\r\033[K", out_);
  std::fflush(out_);
  shown_ = false;
}

} // namespace traincc::rt
