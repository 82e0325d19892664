//===- Plot.h - `trainer plot`: training curves as SVG ----------*- C++ -*-===//
//
//   trainer plot RUN.jsonl -o curves.svg
//
// Reads a --log file (JsonLog.h) and draws one self-contained SVG (no
// scripts, fonts or other external resources) with up to three panels
// sharing the optimizer-step axis:
//   loss           step loss of every step, epoch train_loss and val_loss
//                  (epoch values at the epoch's last step)
//   val accuracy   epoch val_acc (only when the log has it)
//   learning rate  lr of every step
// each with ticks, tick labels, axis titles and a legend. Every series is a
// <polyline> whose id names it (step-loss, epoch-train-loss, epoch-val-loss,
// val-acc, lr); epoch series also get a circle per point (drawn unclipped,
// so that a point on the frame stays whole), and a series of one point has
// its value written beside it. The legend is one row above each panel's
// frame, so it never covers a curve. Axes (yAxisRange): the x axis spans
// the steps with a small margin; the accuracy axis ends at 1; a constant
// series gets a range around its value.
//
// Lines of other events are ignored, null values (non-finite numbers) are
// left out. A resumed run appended to the same log that repeats steps
// replaces the points from the repeated step on. Series longer than
// kMaxPoints are averaged over consecutive buckets to keep the file small.
//
// Errors (exit code 1): a file that cannot be read, a line that is not a
// JSON object (with its line number), a step line without a numeric "step",
// and a log without step lines.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_FORMATS_PLOT_H
#define TRAINCC_RUNTIME_FORMATS_PLOT_H

#include "traincc/runtime/support/Error.h"

#include <cstdio>
#include <string>
#include <vector>

namespace traincc::rt {

struct CurvePoint {
  double x = 0, y = 0;
};

/// The series of one log, x being the optimizer step.
struct TrainingCurves {
  std::vector<CurvePoint> stepLoss, stepLr;
  std::vector<CurvePoint> epochTrainLoss, epochValLoss, epochValAcc;
  int64_t stepLines = 0, epochLines = 0;
};

/// Parses the JSON-lines log at `path`.
Expected<TrainingCurves> readTrainingLog(const std::string &path);

/// The SVG document; `title` is shown on top.
std::string renderCurvesSvg(const TrainingCurves &curves,
                            const std::string &title);

/// The whole command: read, render, write `svgPath` atomically, and print
/// one line about it to `out`.
Error plotTrainingLog(const std::string &logPath, const std::string &svgPath,
                      std::FILE *out);

/// What a panel's y axis shows.
enum class AxisKind {
  Free,     // losses: the values' range padded by 5%
  Fraction, // accuracy: up to exactly 1, from a tenth below the lowest value
};
struct AxisRange {
  double low = 0, high = 1;
};
/// The y range for values in [low, high] (low > high: no values). A
/// constant series (low == high) gets +-50% of its value (+-0.5 around 0),
/// not below 0 when the value is not negative. Fraction applies while the
/// values lie in [0, 1].
AxisRange yAxisRange(double low, double high, AxisKind kind);

/// Tick positions for [low, high]: multiples of 1, 2 or 5 times a power of
/// ten, about `count` of them, all inside the range.
std::vector<double> niceTicks(double low, double high, int count);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_FORMATS_PLOT_H
