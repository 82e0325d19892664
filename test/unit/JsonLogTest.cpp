//===- JsonLogTest.cpp - JSON-lines training log --------------------------===//

#include "TestUtil.h"

#include "traincc/runtime/formats/JsonLog.h"
#include "traincc/runtime/support/Random.h"

#include <algorithm>
#include <cfloat>
#include <clocale>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

using namespace traincc::rt;
using namespace traincc::rt::test;
using ::testing::HasSubstr;

namespace {

std::string hexBits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, 8);
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", (unsigned long long)bits);
  return text;
}

std::string describeNumber(double value) {
  return std::isfinite(value) ? "f:" + hexBits(value) : "n:";
}

/// The check_jsonl.py description of a record.
std::string describe(const StepRecord &r) {
  return "event=s:step step=i:" + std::to_string(r.step) +
         " epoch=i:" + std::to_string(r.epoch) +
         " loss=" + describeNumber(r.loss) + " lr=" + describeNumber(r.lr) +
         " loss_scale=" + describeNumber(r.lossScale) +
         " skipped=b:" + (r.skipped ? "true" : "false") + "\n";
}

std::string describe(const EpochRecord &r) {
  std::string out = "event=s:epoch epoch=i:" + std::to_string(r.epoch) +
                    " train_loss=" + describeNumber(r.trainLoss);
  if (r.valLoss)
    out += " val_loss=" + describeNumber(*r.valLoss);
  if (r.valAcc)
    out += " val_acc=" + describeNumber(*r.valAcc);
  return out + " lr=" + describeNumber(r.lr) +
         " seconds=" + describeNumber(r.seconds) + "\n";
}

/// Doubles that stress shortest round-trip printing.
std::vector<double> awkwardDoubles() {
  std::vector<double> values = {0.1,
                                1.0 / 3.0,
                                2.0 / 3.0,
                                -0.0,
                                0.0,
                                1e-7,
                                1e21,
                                1e22,
                                123456789012345680000.0,
                                5e-324,
                                DBL_MIN,
                                DBL_MAX,
                                -DBL_MAX,
                                65536,
                                double(0.1f),
                                9007199254740993.0,
                                2.302585092994046};
  SplitMix64 rng(12345);
  for (int i = 0; i < 200; ++i) {
    uint64_t bits = rng.next();
    double value;
    std::memcpy(&value, &bits, 8);
    if (std::isfinite(value))
      values.push_back(value);
  }
  return values;
}

} // namespace

// Tests the exact line formats of docs/ARCHITECTURE.md.
TEST(JsonLogTest, FormatsLinesExactly) {
  StepRecord step;
  step.step = 3;
  step.epoch = 1;
  step.loss = 0.5;
  step.lr = 0.1;
  step.lossScale = 65536;
  EXPECT_EQ(formatLogLine(step),
            "{\"event\":\"step\",\"step\":3,\"epoch\":1,\"loss\":0.5,"
            "\"lr\":0.1,\"loss_scale\":65536,\"skipped\":false}\n");
  step.skipped = true;
  step.loss = std::numeric_limits<double>::quiet_NaN();
  step.lr = 1e-7;
  EXPECT_EQ(formatLogLine(step),
            "{\"event\":\"step\",\"step\":3,\"epoch\":1,\"loss\":null,"
            "\"lr\":1e-07,\"loss_scale\":65536,\"skipped\":true}\n");

  EpochRecord epoch;
  epoch.epoch = 2;
  epoch.trainLoss = 0.25;
  epoch.lr = 0.01;
  epoch.seconds = 12.5;
  EXPECT_EQ(formatLogLine(epoch),
            "{\"event\":\"epoch\",\"epoch\":2,\"train_loss\":0.25,"
            "\"lr\":0.01,\"seconds\":12.5}\n");
  epoch.valLoss = 0.375;
  epoch.valAcc = 0.9;
  EXPECT_EQ(formatLogLine(epoch),
            "{\"event\":\"epoch\",\"epoch\":2,\"train_loss\":0.25,"
            "\"val_loss\":0.375,\"val_acc\":0.9,\"lr\":0.01,"
            "\"seconds\":12.5}\n");
}

// Tests that numbers parse back to the same bits and non-finite ones are null.
TEST(JsonLogTest, NumbersRoundTrip) {
  for (double value : awkwardDoubles()) {
    std::string text = formatJsonNumber(value);
    EXPECT_EQ(text.find(','), std::string::npos) << text;
    double back = std::strtod(text.c_str(), nullptr);
    EXPECT_EQ(hexBits(back), hexBits(value)) << text;
  }
  EXPECT_EQ(formatJsonNumber(0.1), "0.1");
  EXPECT_EQ(formatJsonNumber(-0.0), "-0.0");
  EXPECT_EQ(formatJsonNumber(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(formatJsonNumber(-std::numeric_limits<double>::infinity()), "null");
}

// Tests that a comma-decimal locale changes nothing, when one is installed.
TEST(JsonLogTest, IgnoresLocale) {
  std::string previous = std::setlocale(LC_ALL, nullptr);
  const char *chosen = nullptr;
  for (const char *name :
       {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "ru_RU.UTF-8"})
    if (std::setlocale(LC_ALL, name)) {
      chosen = name;
      break;
    }
  if (!chosen)
    GTEST_SKIP() << "no comma-decimal locale is installed";
  std::string text = formatJsonNumber(0.5);
  std::string step = formatLogLine(StepRecord{1, 1, 2.5, 0.125, 1, false});
  std::setlocale(LC_ALL, previous.c_str());
  EXPECT_EQ(text, "0.5") << chosen;
  EXPECT_THAT(step, HasSubstr("\"loss\":2.5,\"lr\":0.125,")) << chosen;
}

// Tests the file writer: truncate, append, errors.
TEST(JsonLogTest, WritesFiles) {
  TempDir dir;
  std::string path = dir.file("run.jsonl");
  {
    Expected<JsonLinesLog> log = JsonLinesLog::open(path, /*append=*/false);
    ASSERT_OK(log);
    EXPECT_NO_ERROR(log->write(StepRecord{1, 1, 2.0, 0.1, 1, false}));
    // Each line is flushed at once: readable before the log closes.
    EXPECT_EQ(readFile(path),
              formatLogLine(StepRecord{1, 1, 2.0, 0.1, 1, false}));
  }
  {
    Expected<JsonLinesLog> log = JsonLinesLog::open(path, /*append=*/true);
    ASSERT_OK(log);
    EXPECT_NO_ERROR(log->write(EpochRecord{1, 2.0, {}, {}, 0.1, 3.0}));
    EXPECT_NO_ERROR(log->close());
    EXPECT_THAT(errorOf(log->write(EpochRecord{})), HasSubstr("log is closed"));
  }
  std::string text = readFile(path);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  Expected<JsonLinesLog> log = JsonLinesLog::open(path, false);
  ASSERT_OK(log);
  EXPECT_EQ(readFile(path), "");
  EXPECT_THAT(errorOf(JsonLinesLog::open(dir.file("no/dir.jsonl"), false)),
              HasSubstr("cannot open the log"));
}

// Tests the log with Python's json module: key order, types, exact values.
TEST(JsonLogTest, PythonJsonReadsItBack) {
  if (runCommand("test -x /usr/bin/python3") != 0)
    GTEST_SKIP() << "/usr/bin/python3 is not available";
  TempDir dir;
  std::string logPath = dir.file("run.jsonl");
  std::string expected;
  Expected<JsonLinesLog> log = JsonLinesLog::open(logPath, false);
  ASSERT_OK(log);
  std::vector<double> values = awkwardDoubles();
  values.push_back(std::numeric_limits<double>::quiet_NaN());
  values.push_back(-std::numeric_limits<double>::infinity());
  int64_t step = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    StepRecord s{++step,
                 int64_t(i / 50) + 1,
                 values[i],
                 values[(i + 1) % values.size()],
                 i % 3 ? 65536.0 : 0.5,
                 i % 7 == 0};
    EXPECT_NO_ERROR(log->write(s));
    expected += describe(s);
    if (i % 50 == 49 || i % 61 == 0) {
      EpochRecord e{int64_t(i / 50) + 1, values[i], {}, {}, 0.001, 1.5};
      if (i % 2) {
        e.valLoss = values[(i + 2) % values.size()];
        e.valAcc = 0.9125;
      }
      EXPECT_NO_ERROR(log->write(e));
      expected += describe(e);
    }
  }
  EXPECT_NO_ERROR(log->close());
  writeFile(dir.file("expected.txt"), expected);
  std::string script =
      std::string(TRAINCC_UNIT_TEST_SOURCE_DIR) + "/check_jsonl.py";
  EXPECT_EQ(runCommand("/usr/bin/python3 " + script + " " + logPath + " " +
                       dir.file("expected.txt")),
            0);
  // The checker itself must notice a wrong value.
  writeFile(dir.file("wrong.txt"),
            "event=s:step step=i:1 epoch=i:1 loss=f:" + hexBits(0.3) +
                " lr=f:" + hexBits(0.1) + " loss_scale=f:" + hexBits(1) +
                " skipped=b:false\n");
  writeFile(
      dir.file("one.jsonl"),
      formatLogLine(StepRecord{1, 1, 0.30000000000000004, 0.1, 1, false}));
  EXPECT_EQ(runCommand("/usr/bin/python3 " + script + " " +
                       dir.file("one.jsonl") + " " + dir.file("wrong.txt") +
                       " >/dev/null"),
            1);
}
