//===- PlotTest.cpp - `trainer plot` --------------------------------------===//

#include "TestUtil.h"

#include "traincc/runtime/formats/Plot.h"

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
  size_t start = svg.find("id=\"step-loss\"");
  ASSERT_NE(start, std::string::npos);
  size_t end = svg.find("/>", start);
  size_t points = count(svg.substr(start, end - start), ",");
  EXPECT_LE(points, 2000u);
  EXPECT_GE(points, 1000u);
}
