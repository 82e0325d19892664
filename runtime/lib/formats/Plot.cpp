//===- Plot.cpp - `trainer plot`: training curves as SVG ------------------===//

#include "traincc/runtime/formats/Plot.h"

#include "traincc/runtime/support/File.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

namespace traincc::rt {

namespace {

//===----------------------------------------------------------------------===//
// Reading the log: a strict JSON parser for one line, keeping the top-level
// numbers and strings (nested values are checked and skipped).
//===----------------------------------------------------------------------===//

struct LogLine {
  std::map<std::string, double> numbers;
  std::map<std::string, std::string> strings;
  std::map<std::string, bool> nulls;
};

class LineParser {
public:
  explicit LineParser(const std::string &text) : text_(text) {}

  /// The line's object, or an error "column C: what".
  Expected<LogLine> parse() {
    LogLine line;
    skipSpace();
    if (!consume('{'))
      return fail("expected '{'");
    skipSpace();
    if (!consume('}')) {
      while (true) {
        skipSpace();
        std::string key;
        if (Error err = parseString(key))
          return err;
        skipSpace();
        if (!consume(':'))
          return fail("expected ':'");
        skipSpace();
        if (Error err = parseValue(key, &line, 0))
          return err;
        skipSpace();
        if (consume(','))
          continue;
        if (consume('}'))
          break;
        return fail("expected ',' or '}'");
      }
    }
    skipSpace();
    if (pos_ != text_.size())
      return fail("unexpected text after the object");
    return line;
  }

private:
  Error fail(const char *what) const {
    return makeError("column ", int64_t(pos_ + 1), ": ", what);
  }
  bool consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool consumeWord(const char *word) {
    size_t n = std::char_traits<char>::length(word);
    if (text_.compare(pos_, n, word) != 0)
      return false;
    pos_ += n;
    return true;
  }
  void skipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }

  Error parseString(std::string &out) {
    if (!consume('"'))
      return fail("expected a string");
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == '"')
        return Error::success();
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size())
        break;
      char e = text_[pos_++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        unsigned code = 0;
        for (int i = 0; i < 4; ++i) {
          if (pos_ >= text_.size() ||
              !std::isxdigit((unsigned char)text_[pos_]))
            return fail("bad \\u escape");
          char h = text_[pos_++];
          code = code * 16 + unsigned(std::isdigit((unsigned char)h)
                                          ? h - '0'
                                          : (std::tolower(h) - 'a' + 10));
        }
        // Names only; anything outside ASCII is kept as '?'.
        out += code < 0x80 ? char(code) : '?';
        break;
      }
      default:
        return fail("bad escape in a string");
      }
    }
    return fail("unterminated string");
  }

  Error parseNumber(double &value) {
    size_t start = pos_;
    consume('-');
    if (pos_ >= text_.size() || !std::isdigit((unsigned char)text_[pos_]))
      return fail("expected a value");
    if (text_[pos_] == '0' && pos_ + 1 < text_.size() &&
        std::isdigit((unsigned char)text_[pos_ + 1]))
      return fail("leading zero in a number");
    while (pos_ < text_.size() &&
           (std::isdigit((unsigned char)text_[pos_]) || text_[pos_] == '.' ||
            text_[pos_] == 'e' || text_[pos_] == 'E' || text_[pos_] == '+' ||
            text_[pos_] == '-'))
      ++pos_;
    const char *begin = text_.data() + start, *end = text_.data() + pos_;
    std::from_chars_result r = std::from_chars(begin, end, value);
    if (r.ptr != end || r.ec == std::errc::invalid_argument)
      return fail("malformed number");
    if (r.ec == std::errc::result_out_of_range)
      value = HUGE_VAL; // too large for a double; shown as out of range
    return Error::success();
  }

  /// A value; top-level scalars (depth 0) are stored under `key`.
  Error parseValue(const std::string &key, LogLine *line, int depth) {
    if (depth > 64)
      return fail("nested too deeply");
    if (pos_ >= text_.size())
      return fail("expected a value");
    char c = text_[pos_];
    if (c == '"') {
      std::string s;
      if (Error err = parseString(s))
        return err;
      if (depth == 0)
        line->strings[key] = s;
      return Error::success();
    }
    if (c == '{' || c == '[') {
      char close = c == '{' ? '}' : ']';
      ++pos_;
      skipSpace();
      if (consume(close))
        return Error::success();
      while (true) {
        skipSpace();
        if (c == '{') {
          std::string inner;
          if (Error err = parseString(inner))
            return err;
          skipSpace();
          if (!consume(':'))
            return fail("expected ':'");
          skipSpace();
        }
        if (Error err = parseValue(key, line, depth + 1))
          return err;
        skipSpace();
        if (consume(','))
          continue;
        if (consume(close))
          return Error::success();
        return fail(c == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
      }
    }
    if (consumeWord("true") || consumeWord("false"))
      return Error::success();
    if (consumeWord("null")) {
      if (depth == 0)
        line->nulls[key] = true;
      return Error::success();
    }
    double value = 0;
    if (Error err = parseNumber(value))
      return err;
    if (depth == 0)
      line->numbers[key] = value;
    return Error::success();
  }

  const std::string &text_;
  size_t pos_ = 0;
};

/// The number under `key`, if the line has one.
std::optional<double> numberOf(const LogLine &line, const char *key) {
  auto it = line.numbers.find(key);
  if (it == line.numbers.end() || !std::isfinite(it->second))
    return std::nullopt;
  return it->second;
}

/// Drops the points at x >= `from` (a resumed run repeats them).
void dropFrom(std::vector<CurvePoint> &series, double from) {
  while (!series.empty() && series.back().x >= from)
    series.pop_back();
}

} // namespace

Expected<TrainingCurves> readTrainingLog(const std::string &path) {
  Expected<InputFile> file = InputFile::open(path);
  if (!file)
    return file.takeError();
  std::string text;
  text.resize(size_t(file->size()));
  if (Error err = file->readExact(text.data(), file->size()))
    return err;

  TrainingCurves curves;
  double lastStep = 0;
  bool anyStep = false;
  size_t begin = 0;
  for (int64_t lineNo = 1; begin < text.size(); ++lineNo) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos)
      end = text.size();
    std::string lineText = text.substr(begin, end - begin);
    begin = end + 1;
    if (lineText.find_first_not_of(" \t\r") == std::string::npos)
      continue; // blank lines (a trailing one) are harmless
    Expected<LogLine> line = LineParser(lineText).parse();
    if (!line)
      return makeError(path, ":", lineNo, ": not a JSON object: ",
                       line.error().message());
    auto event = line->strings.find("event");
    if (event == line->strings.end())
      continue;
    if (event->second == "step") {
      std::optional<double> step = numberOf(*line, "step");
      if (!step)
        return makeError(path, ":", lineNo,
                         ": a step line needs a numeric \"step\"");
      if (anyStep && *step <= lastStep) {
        for (std::vector<CurvePoint> *series :
             {&curves.stepLoss, &curves.stepLr, &curves.epochTrainLoss,
              &curves.epochValLoss, &curves.epochValAcc})
          dropFrom(*series, *step);
      }
      anyStep = true;
      lastStep = *step;
      ++curves.stepLines;
      if (std::optional<double> loss = numberOf(*line, "loss"))
        curves.stepLoss.push_back({*step, *loss});
      if (std::optional<double> lr = numberOf(*line, "lr"))
        curves.stepLr.push_back({*step, *lr});
    } else if (event->second == "epoch") {
      ++curves.epochLines;
      if (std::optional<double> v = numberOf(*line, "train_loss"))
        curves.epochTrainLoss.push_back({lastStep, *v});
      if (std::optional<double> v = numberOf(*line, "val_loss"))
        curves.epochValLoss.push_back({lastStep, *v});
      if (std::optional<double> v = numberOf(*line, "val_acc"))
        curves.epochValAcc.push_back({lastStep, *v});
    }
  }
  if (curves.stepLines == 0)
    return makeError(path, ": no step lines (expected the --log file of a "
                           "`train` run)");
  return curves;
}

//===----------------------------------------------------------------------===//
// Drawing
//===----------------------------------------------------------------------===//

std::vector<double> niceTicks(double low, double high, int count) {
  std::vector<double> ticks;
  if (!(high > low) || !std::isfinite(low) || !std::isfinite(high) ||
      count < 1)
    return ticks;
  double raw = (high - low) / count;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  double first = std::ceil(low / step - 1e-9) * step;
  for (int i = 0; i < 1000; ++i) {
    double t = first + i * step;
    if (t > high + step * 1e-9)
      break;
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  }
  return ticks;
}

AxisRange yAxisRange(double low, double high, AxisKind kind) {
  if (!(low <= high) || !std::isfinite(low) || !std::isfinite(high))
    return {0, 1};
  if (kind == AxisKind::Fraction && low >= 0 && high <= 1) {
    // A tenth below the lowest value, on a tenth: 0.19 -> 0.1, 0.97 -> 0.8.
    double from = std::floor((low - 0.1) * 10 + 1e-9) / 10;
    return {std::max(0.0, from), 1};
  }
  if (high - low <= 1e-12 * std::max(1.0, std::fabs(high))) {
    double pad = high == 0 ? 0.5 : std::fabs(high) * 0.5;
    double from = high - pad;
    if (high >= 0 && from < 0)
      from = 0;
    return {from, high + pad};
  }
  double pad = (high - low) * 0.05;
  return {low - pad, high + pad};
}

namespace {

constexpr size_t kMaxPoints = 2000;

/// Means of consecutive buckets when a series is longer than kMaxPoints.
std::vector<CurvePoint> thin(const std::vector<CurvePoint> &series) {
  if (series.size() <= kMaxPoints)
    return series;
  size_t bucket = (series.size() + kMaxPoints - 1) / kMaxPoints;
  std::vector<CurvePoint> out;
  for (size_t i = 0; i < series.size(); i += bucket) {
    size_t end = std::min(series.size(), i + bucket);
    CurvePoint mean;
    for (size_t j = i; j < end; ++j) {
      mean.x += series[j].x;
      mean.y += series[j].y;
    }
    mean.x /= double(end - i);
    mean.y /= double(end - i);
    out.push_back(mean);
  }
  return out;
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", v);
  return text;
}

std::string tickLabel(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", v);
  return text;
}

/// A value in a legend: four significant digits.
std::string valueLabel(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", v);
  return text;
}

std::string escapeXml(const std::string &s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      // XML 1.0 forbids most control characters.
      out += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
    }
  }
  return out;
}

struct Series {
  const char *id;
  const char *label;
  const char *color;
  const std::vector<CurvePoint> *points;
  bool markers;
  double width;
};

struct Range {
  double low, high;
};

/// The lowest and highest value (x or y) of the series; low > high when
/// they have no points.
Range extent(const std::vector<Series> &series, bool x) {
  double low = INFINITY, high = -INFINITY;
  for (const Series &s : series)
    for (const CurvePoint &p : *s.points) {
      double v = x ? p.x : p.y;
      low = std::min(low, v);
      high = std::max(high, v);
    }
  return {low, high};
}

/// The step axis: the steps with a 1.5% margin on each side, so that the
/// epoch points at the last step are not drawn on the frame.
Range stepRange(const std::vector<Series> &series) {
  Range r = extent(series, true);
  if (!(r.low <= r.high))
    return {0, 1};
  if (r.high - r.low < 1e-9)
    return {r.low - 0.5, r.high + 0.5};
  double pad = (r.high - r.low) * 0.015;
  return {r.low - pad, r.high + pad};
}

/// Rough width of `text` at `size` pixels in a sans-serif font.
double textWidth(const std::string &text, int size) {
  return double(text.size()) * size * 0.6;
}

class SvgWriter {
public:
  static constexpr double kWidth = 900, kLeft = 90, kRight = 30;

  void text(double x, double y, const std::string &s, const char *anchor,
            int size, const char *extra = "") {
    svg_ += "<text x=\"" + number(x) + "\" y=\"" + number(y) +
            "\" text-anchor=\"" + anchor + "\" font-size=\"" +
            std::to_string(size) + "\"" + extra + ">" + escapeXml(s) +
            "</text>\n";
  }

  /// One panel at `top` of height `height`.
  void panel(double top, double height, const char *id, const char *yTitle,
             Range xRange, AxisKind yKind,
             const std::vector<Series> &series) {
    const double left = kLeft, right = kWidth - kRight;
    const double bottom = top + height;
    Range values = extent(series, false);
    AxisRange y = yAxisRange(values.low, values.high, yKind);
    Range yRange = {y.low, y.high};
    auto px = [&](double x) {
      return left + (x - xRange.low) / (xRange.high - xRange.low) *
                        (right - left);
    };
    auto py = [&](double y) {
      return bottom - (y - yRange.low) / (yRange.high - yRange.low) * height;
    };
    svg_ += std::string("<g id=\"panel-") + id + "\">\n";
    svg_ += "<rect x=\"" + number(left) + "\" y=\"" + number(top) +
            "\" width=\"" + number(right - left) + "\" height=\"" +
            number(height) + "\" fill=\"white\" stroke=\"#444\"/>\n";
    // Ticks, grid lines and their labels.
    for (double t : niceTicks(yRange.low, yRange.high, 5)) {
      double y = py(t);
      svg_ += "<line class=\"grid\" x1=\"" + number(left) + "\" y1=\"" +
              number(y) + "\" x2=\"" + number(right) + "\" y2=\"" + number(y) +
              "\" stroke=\"#ddd\"/>\n";
      svg_ += "<line class=\"tick\" x1=\"" + number(left - 5) + "\" y1=\"" +
              number(y) + "\" x2=\"" + number(left) + "\" y2=\"" + number(y) +
              "\" stroke=\"#444\"/>\n";
      text(left - 8, y + 4, tickLabel(t), "end", 11, " class=\"y-tick\"");
    }
    for (double t : niceTicks(xRange.low, xRange.high, 8)) {
      double x = px(t);
      svg_ += "<line class=\"tick\" x1=\"" + number(x) + "\" y1=\"" +
              number(bottom) + "\" x2=\"" + number(x) + "\" y2=\"" +
              number(bottom + 5) + "\" stroke=\"#444\"/>\n";
      text(x, bottom + 18, tickLabel(t), "middle", 11, " class=\"x-tick\"");
    }
    text(left + (right - left) / 2, bottom + 36, "optimizer step", "middle",
         12, " class=\"x-title\"");
    std::string rotate = " class=\"y-title\" transform=\"rotate(-90 " +
                         number(22) + " " + number(top + height / 2) + ")\"";
    text(22, top + height / 2, yTitle, "middle", 12, rotate.c_str());

    // The series, clipped to the frame.
    svg_ += std::string("<clipPath id=\"clip-") + id + "\"><rect x=\"" +
            number(left) + "\" y=\"" + number(top) + "\" width=\"" +
            number(right - left) + "\" height=\"" + number(height) +
            "\"/></clipPath>\n";
    svg_ += std::string("<g clip-path=\"url(#clip-") + id + ")\">\n";
    for (const Series &s : series) {
      std::vector<CurvePoint> points = thin(*s.points);
      std::string list;
      for (const CurvePoint &p : points)
        list += (list.empty() ? "" : " ") + number(px(p.x)) + "," +
                number(py(p.y));
      svg_ += std::string("<polyline id=\"") + s.id +
              "\" fill=\"none\" stroke=\"" + s.color + "\" stroke-width=\"" +
              number(s.width) + "\" points=\"" + list + "\"/>\n";
    }
    svg_ += "</g>\n";

    // Markers outside the clip, so that a point on the frame (an accuracy
    // of 1, the last step) stays whole; a lone point is drawn larger.
    for (const Series &s : series) {
      std::vector<CurvePoint> points = thin(*s.points);
      if (!s.markers && points.size() != 1)
        continue;
      double r = points.size() == 1 ? 4.5 : 3;
      for (const CurvePoint &p : points)
        svg_ += std::string("<circle class=\"") + s.id + "\" cx=\"" +
                number(px(p.x)) + "\" cy=\"" + number(py(p.y)) +
                "\" r=\"" + number(r) + "\" fill=\"" + s.color + "\"/>\n";
    }

    // The legend: one row above the frame, ending at its right edge. A
    // series of one point (one epoch) shows its value there.
    std::vector<std::string> labels;
    double width = 0;
    for (const Series &s : series) {
      std::string label = s.label;
      if (s.points->size() == 1)
        label += ": " + valueLabel(s.points->front().y);
      width += 30 + textWidth(label, 11) + 18;
      labels.push_back(std::move(label));
    }
    double lx = right - width + 18, ly = top - 7;
    for (size_t i = 0; i < series.size(); ++i) {
      svg_ += std::string("<line class=\"legend\" x1=\"") + number(lx) +
              "\" y1=\"" + number(ly - 4) + "\" x2=\"" + number(lx + 24) +
              "\" y2=\"" + number(ly - 4) + "\" stroke=\"" +
              series[i].color + "\" stroke-width=\"2\"/>\n";
      text(lx + 30, ly, labels[i], "start", 11, " class=\"legend\"");
      lx += 30 + textWidth(labels[i], 11) + 18;
    }
    svg_ += "</g>\n";
  }

  std::string svg_;
};

} // namespace

std::string renderCurvesSvg(const TrainingCurves &curves,
                            const std::string &title) {
  std::vector<Series> loss = {
      {"step-loss", "train loss (step)", "#9ecae1", &curves.stepLoss, false,
       1},
      {"epoch-train-loss", "train loss (epoch)", "#1f4e9c",
       &curves.epochTrainLoss, true, 2}};
  if (!curves.epochValLoss.empty())
    loss.push_back({"epoch-val-loss", "val loss (epoch)", "#e6550d",
                    &curves.epochValLoss, true, 2});
  std::vector<Series> accuracy = {{"val-acc", "val accuracy (epoch)",
                                   "#31a354", &curves.epochValAcc, true, 2}};
  std::vector<Series> lr = {
      {"lr", "learning rate", "#756bb1", &curves.stepLr, false, 1.5}};

  // One x range for every panel.
  std::vector<Series> all = loss;
  all.insert(all.end(), lr.begin(), lr.end());
  Range xRange = stepRange(all);

  const double lossHeight = 300, smallHeight = 170, gap = 76, top = 64;
  bool withAccuracy = !curves.epochValAcc.empty();
  double height = top + lossHeight + gap + smallHeight + gap + 10;
  if (withAccuracy)
    height += smallHeight + gap;

  SvgWriter w;
  w.svg_ = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
           "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
           number(SvgWriter::kWidth) + "\" height=\"" + number(height) +
           "\" viewBox=\"0 0 " + number(SvgWriter::kWidth) + " " +
           number(height) + "\" font-family=\"sans-serif\">\n";
  w.svg_ += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  w.text(SvgWriter::kWidth / 2, 28, title, "middle", 15,
         " class=\"title\" font-weight=\"bold\"");
  double y = top;
  w.panel(y, lossHeight, "loss", "loss", xRange, AxisKind::Free, loss);
  y += lossHeight + gap;
  if (withAccuracy) {
    w.panel(y, smallHeight, "accuracy", "val accuracy", xRange,
            AxisKind::Fraction, accuracy);
    y += smallHeight + gap;
  }
  w.panel(y, smallHeight, "lr", "learning rate", xRange, AxisKind::Free, lr);
  w.svg_ += "</svg>\n";
  return w.svg_;
}

Error plotTrainingLog(const std::string &logPath, const std::string &svgPath,
                      std::FILE *out) {
  Expected<TrainingCurves> curves = readTrainingLog(logPath);
  if (!curves)
    return curves.takeError();
  std::string svg = renderCurvesSvg(*curves, "training curves: " +
                                                 baseName(logPath));
  Expected<AtomicFileWriter> writer = AtomicFileWriter::create(svgPath);
  if (!writer)
    return writer.takeError().withContext("-o");
  if (Error err = writer->write(svg.data(), int64_t(svg.size())))
    return err;
  if (Error err = writer->commit())
    return err;
  std::fprintf(out, "wrote %s: %lld steps, %lld epochs\n", svgPath.c_str(),
               (long long)curves->stepLines, (long long)curves->epochLines);
  return Error::success();
}

} // namespace traincc::rt
