//===- PlotTest.cpp - `trainer plot` --------------------------------------===//

#include "TestUtil.h"

#include "traincc/runtime/formats/Plot.h"

#include <cmath>

using namespace traincc::rt;
using namespace traincc::rt::test;
using ::testing::HasSubstr;

namespace {

std::vector<double> xs(const std::vector<CurvePoint> &series) {
  std::vector<double> out;
  for (const CurvePoint &p : series)
    out.push_back(p.x);
  return out;
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos;
       pos = text.find(what, pos + 1))
    ++n;
  return n;
}

} // namespace

// Tests tick placement: 1/2/5 steps, inside the range, zero exact.
TEST(PlotTest, PlacesNiceTicks) {
  EXPECT_EQ(niceTicks(0, 10, 5), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(niceTicks(1, 36, 8), (std::vector<double>{5, 10, 15, 20, 25, 30,
                                                      35}));
  std::vector<double> small = niceTicks(-0.013, 0.021, 4);
  ASSERT_FALSE(small.empty());
  EXPECT_EQ(small.front(), -0.01);
  EXPECT_EQ(small[1], 0.0);
  EXPECT_TRUE(niceTicks(1, 1, 5).empty());
  EXPECT_TRUE(niceTicks(0, 1.0 / 0.0, 5).empty());
}

// Tests the y axes: padded ranges, an accuracy axis ending at 1, constant
// series around their value (not below 0 for a positive one).
TEST(PlotTest, ChoosesAxisRanges) {
  AxisRange loss = yAxisRange(1, 3, AxisKind::Free);
  EXPECT_DOUBLE_EQ(loss.low, 0.9);
  EXPECT_DOUBLE_EQ(loss.high, 3.1);
  AxisRange acc = yAxisRange(0.19, 0.7, AxisKind::Fraction);
  EXPECT_DOUBLE_EQ(acc.low, 0.0);
  EXPECT_EQ(acc.high, 1.0);
  acc = yAxisRange(0.97, 0.99, AxisKind::Fraction);
  EXPECT_DOUBLE_EQ(acc.low, 0.8);
  EXPECT_EQ(acc.high, 1.0);
  acc = yAxisRange(1, 1, AxisKind::Fraction);
  EXPECT_DOUBLE_EQ(acc.low, 0.9);
  EXPECT_EQ(acc.high, 1.0);
  // Not a fraction (a percentage): a free axis.
  EXPECT_GT(yAxisRange(20, 90, AxisKind::Fraction).high, 90);
  AxisRange lr = yAxisRange(0.05, 0.05, AxisKind::Free);
  EXPECT_DOUBLE_EQ(lr.low, 0.025);
  EXPECT_DOUBLE_EQ(lr.high, 0.075);
  AxisRange zero = yAxisRange(0, 0, AxisKind::Free);
  EXPECT_EQ(zero.low, 0.0);
  EXPECT_EQ(zero.high, 0.5);
  AxisRange negative = yAxisRange(-2, -2, AxisKind::Free);
  EXPECT_EQ(negative.low, -3.0);
  EXPECT_EQ(negative.high, -1.0);
  AxisRange none = yAxisRange(INFINITY, -INFINITY, AxisKind::Free);
  EXPECT_EQ(none.low, 0.0);
  EXPECT_EQ(none.high, 1.0);
}

// Tests reading a log: other events and nested values ignored, null values
// left out, epoch values at the epoch's last step, and a resumed run that
// repeats steps replacing the points it repeats.
TEST(PlotTest, ReadsLogs) {
  TempDir dir;
  writeFile(dir.file("run.jsonl"),
            "{\"event\":\"step\",\"step\":1,\"epoch\":1,\"loss\":2.5,"
            "\"lr\":0.1,\"skipped\":false}\n"
            "{\"event\":\"step\",\"step\":2,\"epoch\":1,\"loss\":null,"
            "\"lr\":0.1}\n"
            "{\"event\":\"checkpoint\",\"path\":\"a\\\"b\\u0041\"}\n"
            "{\"event\":\"epoch\",\"epoch\":1,\"train_loss\":2.0,"
            "\"val_loss\":1.9,\"val_acc\":0.5,\"lr\":0.1,\"seconds\":1,"
            "\"param_change\":{\"w\":0.1,\"b\":[1,2,{\"x\":null}]}}\n"
            "{\"event\":\"step\",\"step\":3,\"epoch\":2,\"loss\":1.5,"
            "\"lr\":0.05}\n"
            "{\"event\":\"step\",\"step\":4,\"epoch\":2,\"loss\":1.4,"
            "\"lr\":0.05}\n"
            // Resumed from the checkpoint after step 2.
            "{\"event\":\"step\",\"step\":3,\"epoch\":2,\"loss\":1.6,"
            "\"lr\":0.05}\n"
            "  \n");
  Expected<TrainingCurves> curves = readTrainingLog(dir.file("run.jsonl"));
  ASSERT_OK(curves);
  EXPECT_EQ(curves->stepLines, 5);
  EXPECT_EQ(curves->epochLines, 1);
  EXPECT_EQ(xs(curves->stepLoss), (std::vector<double>{1, 3}));
  EXPECT_EQ(curves->stepLoss.back().y, 1.6);
  EXPECT_EQ(xs(curves->stepLr), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(xs(curves->epochTrainLoss), (std::vector<double>{2}));
  EXPECT_EQ(curves->epochValAcc[0].y, 0.5);
}

// Tests that every kind of malformed line is reported with its number.
TEST(PlotTest, RejectsMalformedLines) {
  TempDir dir;
  const char *bad[] = {"[1,2]",
                       "{\"event\":\"step\"",
                       "{\"event\" \"step\"}",
                       "{\"a\":01}",
                       "{\"a\":1.2.3}",
                       "{\"a\":tru}",
                       "{\"a\":\"\\x\"}",
                       "{\"a\":1} x",
                       "{\"a\":[1,}"};
  for (const char *line : bad) {
    writeFile(dir.file("bad.jsonl"),
              std::string("{\"event\":\"step\",\"step\":1,\"loss\":1}\n") +
                  line + "\n");
    EXPECT_THAT(errorOf(readTrainingLog(dir.file("bad.jsonl"))),
                HasSubstr("bad.jsonl:2: not a JSON object: column"))
        << line;
  }
  writeFile(dir.file("empty.jsonl"), "");
  EXPECT_THAT(errorOf(readTrainingLog(dir.file("empty.jsonl"))),
              HasSubstr("empty.jsonl: no step lines"));
}

// Tests the document: long series thinned, the title escaped, one panel
// per kind of value.
TEST(PlotTest, RendersSvg) {
  TrainingCurves curves;
  for (int i = 1; i <= 10000; ++i) {
    curves.stepLoss.push_back({double(i), 1.0 / i});
    curves.stepLr.push_back({double(i), 0.1});
  }
  curves.epochTrainLoss.push_back({10000, 0.5});
  std::string svg = renderCurvesSvg(curves, "a<b & \"c\"");
  EXPECT_THAT(svg, HasSubstr(">a&lt;b &amp; &quot;c&quot;</text>"));
  EXPECT_EQ(count(svg, "<polyline"), 3u); // step loss, epoch loss, lr
  EXPECT_EQ(count(svg, "id=\"panel-"), 2u); // no accuracy panel
  // The single epoch point: a large marker, its value in the legend.
  EXPECT_THAT(svg, HasSubstr("<circle class=\"epoch-train-loss\""));
  EXPECT_THAT(svg, HasSubstr(">train loss (epoch): 0.5</text>"));
  size_t start = svg.find("id=\"step-loss\"");
  ASSERT_NE(start, std::string::npos);
  size_t end = svg.find("/>", start);
  size_t points = count(svg.substr(start, end - start), ",");
  EXPECT_LE(points, 2000u);
  EXPECT_GE(points, 1000u);
}
