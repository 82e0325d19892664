//===- JsonLog.cpp - The --log JSON-lines training log --------------------===//

#include "traincc/runtime/formats/JsonLog.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace traincc::rt {

std::string formatJsonNumber(double value) {
  if (!std::isfinite(value))
    return "null";
  // "-0" is valid JSON but parsers read it as the integer 0 and lose the
  // sign; "-0.0" keeps it.
  if (value == 0 && std::signbit(value))
    return "-0.0";
  // formatDouble gives e.g. "1e-07" and "65536": both valid JSON numbers.
  return formatDouble(value);
}

std::string formatJsonString(const std::string &text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", unsigned(c));
      out += escaped;
    } else {
      out += char(c); // UTF-8 passes through unchanged
    }
  }
  return out + "\"";
}

namespace {
void appendField(std::string &line, const char *key, const std::string &value) {
  line += ",\"";
  line += key;
  line += "\":";
  line += value;
}
} // namespace

std::string formatLogLine(const StepRecord &record) {
  std::string line = "{\"event\":\"step\"";
  appendField(line, "step", std::to_string(record.step));
  appendField(line, "epoch", std::to_string(record.epoch));
  appendField(line, "loss", formatJsonNumber(record.loss));
  appendField(line, "lr", formatJsonNumber(record.lr));
  appendField(line, "loss_scale", formatJsonNumber(record.lossScale));
  appendField(line, "skipped", record.skipped ? "true" : "false");
  if (record.gradNorm)
    appendField(line, "grad_norm", formatJsonNumber(*record.gradNorm));
  return line + "}\n";
}

std::string formatLogLine(const EpochRecord &record) {
  std::string line = "{\"event\":\"epoch\"";
  appendField(line, "epoch", std::to_string(record.epoch));
  appendField(line, "train_loss", formatJsonNumber(record.trainLoss));
  if (record.valLoss)
    appendField(line, "val_loss", formatJsonNumber(*record.valLoss));
  if (record.valAcc)
    appendField(line, "val_acc", formatJsonNumber(*record.valAcc));
  appendField(line, "lr", formatJsonNumber(record.lr));
  appendField(line, "seconds", formatJsonNumber(record.seconds));
  if (record.paramChange) {
    std::string object = "{";
    for (const auto &[name, change] : *record.paramChange) {
      if (object.size() > 1)
        object += ',';
      object += formatJsonString(name) + ":" + formatJsonNumber(change);
    }
    appendField(line, "param_change", object + "}");
  }
  if (record.bnStats) {
    std::string object = "{";
    for (const TensorSummary &s : *record.bnStats) {
      if (object.size() > 1)
        object += ',';
      object += formatJsonString(s.name) +
                ":{\"mean\":" + formatJsonNumber(s.mean) +
                ",\"max_abs\":" + formatJsonNumber(s.maxAbs) + "}";
    }
    appendField(line, "bn_stats", object + "}");
  }
  return line + "}\n";
}

std::string formatLogLine(const EarlyStopRecord &record) {
  std::string line = "{\"event\":\"early_stop\"";
  appendField(line, "epoch", std::to_string(record.epoch));
  appendField(line, "best_epoch", std::to_string(record.bestEpoch));
  appendField(line, "best", formatJsonNumber(record.best));
  appendField(line, "monitor", formatJsonString(record.monitor));
  return line + "}\n";
}

Expected<JsonLinesLog> JsonLinesLog::open(const std::string &path,
                                          bool append) {
  std::FILE *file = std::fopen(path.c_str(), append ? "ab" : "wb");
  if (!file)
    return makeError(path, ": cannot open the log: ", std::strerror(errno));
  return JsonLinesLog(file, path);
}

JsonLinesLog::JsonLinesLog(JsonLinesLog &&other) noexcept
    : file_(other.file_), path_(std::move(other.path_)) {
  other.file_ = nullptr;
}

JsonLinesLog &JsonLinesLog::operator=(JsonLinesLog &&other) noexcept {
  if (this != &other) {
    if (file_)
      std::fclose(file_);
    file_ = other.file_;
    path_ = std::move(other.path_);
    other.file_ = nullptr;
  }
  return *this;
}

JsonLinesLog::~JsonLinesLog() {
  if (file_)
    std::fclose(file_);
}

Error JsonLinesLog::writeLine(const std::string &line) {
  if (!file_)
    return makeError(path_, ": the log is closed");
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() ||
      std::fflush(file_) != 0)
    return makeError(path_, ": cannot write the log: ", std::strerror(errno));
  return Error::success();
}

Error JsonLinesLog::write(const StepRecord &record) {
  return writeLine(formatLogLine(record));
}

Error JsonLinesLog::write(const EpochRecord &record) {
  return writeLine(formatLogLine(record));
}

Error JsonLinesLog::write(const EarlyStopRecord &record) {
  return writeLine(formatLogLine(record));
}

Error JsonLinesLog::close() {
  if (!file_)
    return Error::success();
  int result = std::fclose(file_);
  file_ = nullptr;
  if (result != 0)
    return makeError(path_, ": cannot close the log: ", std::strerror(errno));
  return Error::success();
}

} // namespace traincc::rt
