//===- JsonLog.cpp - The --log JSON-lines training log --------------------===//

#include "traincc/runtime/JsonLog.h"

#include <cerrno>
#include <cmath>
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
