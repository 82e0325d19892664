//===- ProgressTest.cpp - The live progress line --------------------------===//

#include "TestUtil.h"

#include "traincc/runtime/loop/Progress.h"

#include <chrono>
#include <cstdio>
#include <thread>

using namespace traincc::rt;
using namespace traincc::rt::test;

namespace {

/// What `body` writes through a ProgressDisplay(live) into a temporary file,
/// the display's destructor included.
template <typename Body> std::string capture(bool live, Body body) {
  std::FILE *file = std::tmpfile();
  EXPECT_TRUE(file != nullptr);
  {
    ProgressDisplay display(file, live);
    body(display);
  }
  std::fflush(file);
  std::rewind(file);
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
    text.append(buffer, n);
  std::fclose(file);
  return text;
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos;
       pos = text.find(what, pos + 1))
    ++n;
  return n;
}

} // namespace

// Tests the durations and the line's fields.
TEST(ProgressTest, FormatsTheLine) {
  EXPECT_EQ(formatDuration(0), "0:00");
  EXPECT_EQ(formatDuration(7.4), "0:07");
  EXPECT_EQ(formatDuration(754), "12:34");
  EXPECT_EQ(formatDuration(3723), "1:02:03");
  EXPECT_EQ(formatDuration(-1), "?");
  EXPECT_EQ(formatDuration(1.0 / 0.0), "?");
  ProgressSnapshot s;
  s.epoch = 2;
  s.epochs = 5;
  s.step = 30;
  s.stepsPerEpoch = 120;
  s.seconds = 2;
  s.meanLoss = 0.43125;
  // 15 steps/s; 90 steps left: 6 s.
  EXPECT_EQ(formatProgressLine(s),
            "epoch 2/5  30/120 steps  15.0 steps/s  ETA 0:06  loss 0.4313");
  s.epochs.reset();
  s.seconds = 0;
  EXPECT_EQ(formatProgressLine(s),
            "epoch 2  30/120 steps  0.0 steps/s  ETA ?  loss 0.4313");
}

// Tests the terminal protocol: the first step of an epoch drawn at once
// after '\r', redraws throttled to kMinInterval, clear() erasing the line,
// and a line left on screen ended by the destructor.
TEST(ProgressTest, DrawsThrottledAndClears) {
  std::string text = capture(true, [](ProgressDisplay &d) {
    d.startEpoch(1, 3, 2000);
    for (int i = 1; i <= 1000; ++i) // far less than 0.1 s
      d.step(i, 1.0);
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
    d.step(1001, 4.0);
    d.clear();
    d.startEpoch(2, 3, 2000);
    d.step(1, 2.0);
  });
  EXPECT_EQ(count(text, "\r"), 4u) << text; // 3 draws and one clear
  EXPECT_THAT(text, ::testing::StartsWith("\repoch 1/3  1/2000 steps  "));
  EXPECT_THAT(text, ::testing::HasSubstr("\repoch 1/3  1001/2000 steps  "));
  // The mean loss of the epoch so far: (1000 * 1 + 4) / 1001.
  EXPECT_THAT(text, ::testing::HasSubstr("loss 1.0030\033[K\r\033[K"));
  EXPECT_THAT(text, ::testing::ContainsRegex(
                        "\repoch 2/3  1/2000 steps  [0-9.]+ steps/s  "
                        "ETA [0-9:]+  loss 2\\.0000\033\\[K\n$"))
      << text;
}

// Tests that nothing is drawn when the output is not a terminal.
TEST(ProgressTest, SilentWhenNotATerminal) {
  std::string text = capture(false, [](ProgressDisplay &d) {
    d.startEpoch(1, 1, 10);
    d.step(1, 1.0);
    d.clear();
  });
  EXPECT_EQ(text, "");
  // A file is not a terminal.
  std::FILE *file = std::tmpfile();
  ASSERT_TRUE(file != nullptr);
  EXPECT_FALSE(ProgressDisplay(file).live());
  std::fclose(file);
}
