//===- DatasetTest.cpp - Datasets, validation split, evaluation batches ---===//

#include "TestUtil.h"

#include "traincc/runtime/data/Dataset.h"

#include <cmath>
#include <limits>

using namespace traincc::rt;
using namespace traincc::rt::test;
using ::testing::HasSubstr;

namespace {

/// Inputs [n, 2] whose sample i holds (i, -i).
FloatTensor inputs(int64_t n, const char *source = "x.npy") {
  FloatTensor t;
  t.shape = {n, 2};
  t.source = source;
  for (int64_t i = 0; i < n; ++i) {
    t.data.push_back(float(i));
    t.data.push_back(-float(i));
  }
  return t;
}

/// Labels [n] cycling through `classes`.
Int64Tensor labels(int64_t n, int64_t classes, const char *source = "y.npy") {
  Int64Tensor t;
  t.shape = {n};
  t.source = source;
  for (int64_t i = 0; i < n; ++i)
    t.data.push_back(i % classes);
  return t;
}

Dataset labeled(int64_t n, int64_t classes = 3) {
  Expected<Dataset> data =
      Dataset::withLabels(inputs(n), labels(n, classes), classes);
  EXPECT_TRUE(bool(data)) << errorOf(data);
  return data.take();
}

} // namespace

// Tests shapes, rows and labels of a labelled dataset.
TEST(DatasetTest, HoldsInputsAndLabels) {
  Dataset data = labeled(5);
  EXPECT_EQ(data.size(), 5);
  EXPECT_EQ(data.targetKind(), TargetKind::ClassLabels);
  EXPECT_EQ(data.sampleShape(), std::vector<int64_t>{2});
  EXPECT_EQ(data.sampleElements(), 2);
  EXPECT_EQ(data.inputRow(3)[0], 3.f);
  EXPECT_EQ(data.inputRow(3)[1], -3.f);
  EXPECT_EQ(data.label(4), 1);
  EXPECT_EQ(data.classCounts(), (std::vector<int64_t>{2, 2, 1}));
  EXPECT_EQ(data.inputSource(), "x.npy");
}

// Tests every label problem: range, count, shape.
TEST(DatasetTest, RejectsBadLabels) {
  Int64Tensor y = labels(4, 3);
  y.data[2] = 3;
  EXPECT_THAT(errorOf(Dataset::withLabels(inputs(4), y, 3)),
              HasSubstr("y.npy: label 3 of sample 2 is out of range for 3 "
                        "classes (expected 0..2)"));
  y.data[2] = -1;
  EXPECT_THAT(errorOf(Dataset::withLabels(inputs(4), y, 3)),
              HasSubstr("label -1 of sample 2"));
  EXPECT_THAT(errorOf(Dataset::withLabels(inputs(4), labels(3, 3), 3)),
              HasSubstr("y.npy: 3 labels for 4 samples in x.npy"));
  Int64Tensor column = labels(4, 3);
  column.shape = {4, 1};
  EXPECT_THAT(errorOf(Dataset::withLabels(inputs(4), column, 3)),
              HasSubstr("expected labels of shape [N], got [4,1]"));
  EXPECT_THAT(errorOf(Dataset::withLabels(inputs(4), labels(4, 3), 0)),
              HasSubstr("the model has 0 classes"));
}

// Tests every input problem: rank, emptiness, non-finite values.
TEST(DatasetTest, RejectsBadInputs) {
  FloatTensor scalar;
  scalar.shape = {};
  scalar.data = {1.f};
  scalar.source = "s.npy";
  EXPECT_THAT(errorOf(Dataset::inputsOnly(scalar)),
              HasSubstr("s.npy: inputs need a leading sample dimension"));
  FloatTensor none;
  none.shape = {0, 3};
  none.source = "n.npy";
  EXPECT_THAT(errorOf(Dataset::inputsOnly(none)),
              HasSubstr("n.npy: no samples"));
  FloatTensor empty;
  empty.shape = {3, 0};
  EXPECT_THAT(errorOf(Dataset::inputsOnly(empty)),
              HasSubstr("samples are empty"));
  FloatTensor nan = inputs(3);
  nan.data[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THAT(errorOf(Dataset::inputsOnly(nan)),
              HasSubstr("x.npy: input of sample 2 holds nan (element 1)"));
  FloatTensor mismatch = inputs(3);
  mismatch.shape = {4, 2};
  EXPECT_THAT(errorOf(Dataset::inputsOnly(mismatch)),
              HasSubstr("does not match 6 values"));
}

// Tests float targets and their checks.
TEST(DatasetTest, HoldsTargets) {
  FloatTensor t = inputs(4, "t.npy");
  Expected<Dataset> data = Dataset::withTargets(inputs(4), t);
  ASSERT_OK(data);
  EXPECT_EQ(data->targetKind(), TargetKind::Values);
  EXPECT_EQ(data->targetElements(), 2);
  EXPECT_EQ(data->targetRow(2)[1], -2.f);
  EXPECT_NO_ERROR(data->checkTargetShape({2}));
  EXPECT_THAT(errorOf(data->checkTargetShape({3})),
              HasSubstr("t.npy: targets have shape [2] (2 values), the model "
                        "expects [3] (3 values)"));
  EXPECT_THAT(errorOf(Dataset::withTargets(inputs(4), inputs(5, "t.npy"))),
              HasSubstr("t.npy: 5 targets for 4 samples"));
  t.data[0] = std::numeric_limits<float>::infinity();
  EXPECT_THAT(errorOf(Dataset::withTargets(inputs(4), t)),
              HasSubstr("target of sample 0 holds inf"));
}

// Tests that samples reshape freely when the element counts agree.
TEST(DatasetTest, ChecksSampleShapeByElementCount) {
  FloatTensor images;
  images.shape = {2, 1, 28, 28};
  images.data.assign(2 * 784, 0.5f);
  images.source = "images";
  Expected<Dataset> data = Dataset::inputsOnly(images);
  ASSERT_OK(data);
  EXPECT_NO_ERROR(data->checkSampleShape({1, 28, 28}));
  EXPECT_NO_ERROR(data->checkSampleShape({784}));
  EXPECT_THAT(errorOf(data->checkSampleShape({3, 28, 28})),
              HasSubstr("images: samples have shape [1,28,28] (784 values), "
                        "the model expects [3,28,28] (2352 values)"));
}

// Tests that the validation split takes the last round(N * F) samples.
TEST(DatasetTest, SplitsValidationFromTheEnd) {
  Dataset data = labeled(10);
  Expected<std::pair<Dataset, Dataset>> split = data.splitValidation(0.2);
  ASSERT_OK(split);
  EXPECT_EQ(split->first.size(), 8);
  EXPECT_EQ(split->second.size(), 2);
  EXPECT_EQ(split->first.inputRow(7)[0], 7.f);
  EXPECT_EQ(split->second.inputRow(0)[0], 8.f);
  EXPECT_EQ(split->second.label(1), 9 % 3);
  EXPECT_EQ(split->second.classCounts(), (std::vector<int64_t>{1, 0, 1}));
  // Halves round up: 2.5 -> 3.
  split = data.splitValidation(0.25);
  ASSERT_OK(split);
  EXPECT_EQ(split->second.size(), 3);
  // 60000 * 0.1 is 6000 exactly, whatever rounding 0.1 carries.
  Expected<std::pair<Dataset, Dataset>> big =
      labeled(60000).splitValidation(0.1);
  ASSERT_OK(big);
  EXPECT_EQ(big->second.size(), 6000);

  EXPECT_THAT(errorOf(data.splitValidation(0.01)),
              HasSubstr("leaves no validation samples"));
  EXPECT_THAT(errorOf(data.splitValidation(0.99)),
              HasSubstr("leaves no training samples"));
  for (double bad : {0.0, 1.0, -0.5, std::nan("")})
    EXPECT_THAT(errorOf(data.splitValidation(bad)),
                HasSubstr("--val-split must lie strictly between 0 and 1"));
}

// Tests slices of slices and out-of-range slices.
TEST(DatasetTest, Slices) {
  Dataset data = labeled(10);
  Expected<Dataset> inner = data.slice(2, 6);
  ASSERT_OK(inner);
  Expected<Dataset> innermost = inner->slice(1, 2);
  ASSERT_OK(innermost);
  EXPECT_EQ(innermost->inputRow(0)[0], 3.f);
  EXPECT_EQ(innermost->label(1), 4 % 3);
  EXPECT_THAT(errorOf(inner->slice(5, 2)), HasSubstr("not inside"));
  EXPECT_THAT(errorOf(inner->slice(-1, 1)), HasSubstr("not inside"));
  EXPECT_THAT(errorOf(inner->slice(0, 0)), HasSubstr("not inside"));
}

// Tests that evaluation covers every sample once and pads the last batch.
TEST(DatasetTest, EvaluationBatchesCoverEverySample) {
  Dataset data = labeled(10);
  MicroBatch batch = data.makeBatch(4);
  ASSERT_EQ(evalBatchCount(data, 4), 3);
  std::vector<int> seen(10, 0);
  for (int64_t b = 0; b < 3; ++b) {
    EXPECT_NO_ERROR(fillEvalBatch(data, b, batch));
    EXPECT_EQ(batch.realRows, b < 2 ? 4 : 2);
    for (int64_t row = 0; row < batch.realRows; ++row) {
      int64_t index = batch.indices[row];
      ++seen[index];
      EXPECT_EQ(batch.inputs[row * 2], float(index));
      EXPECT_EQ(batch.labels[row], index % 3);
    }
  }
  EXPECT_EQ(seen, std::vector<int>(10, 1));
  // Padding rows of the last batch: zeros, label 0, index -1.
  for (int64_t row = 2; row < 4; ++row) {
    EXPECT_EQ(batch.indices[row], -1);
    EXPECT_EQ(batch.labels[row], 0);
    EXPECT_EQ(batch.inputs[row * 2], 0.f);
    EXPECT_EQ(batch.inputs[row * 2 + 1], 0.f);
  }
  EXPECT_THAT(errorOf(fillEvalBatch(data, 3, batch)),
              HasSubstr("batch 3 of 3"));
  EXPECT_EQ(evalBatchCount(data, 10), 1);
  EXPECT_EQ(evalBatchCount(data, 11), 1);
  EXPECT_EQ(evalBatchCount(data, 0), 0);
}

// Tests that a batch pads target rows too and rejects foreign buffers.
TEST(DatasetTest, FillsBatchesAndChecksBuffers) {
  Expected<Dataset> data = Dataset::withTargets(inputs(3), inputs(3, "t.npy"));
  ASSERT_OK(data);
  MicroBatch batch = data->makeBatch(2);
  int64_t one[] = {2};
  EXPECT_NO_ERROR(data->fillBatch(one, 1, batch));
  EXPECT_EQ(batch.realRows, 1);
  EXPECT_EQ(batch.targets, (std::vector<float>{2.f, -2.f, 0.f, 0.f}));
  EXPECT_TRUE(batch.labels.empty());
  int64_t bad[] = {3};
  EXPECT_THAT(errorOf(data->fillBatch(bad, 1, batch)),
              HasSubstr("sample index 3 outside"));
  MicroBatch foreign = labeled(3).makeBatch(2);
  EXPECT_THAT(errorOf(data->fillBatch(one, 1, foreign)),
              HasSubstr("batch buffers do not match"));
  int64_t three[] = {0, 1, 2};
  EXPECT_THAT(errorOf(data->fillBatch(three, 3, batch)),
              HasSubstr("3 samples for a batch of 2 rows"));
}

// Tests that int64 ids (a model with an integer input) stay int64 in the
// batch, which the step functions then read through inputData(); padding
// rows hold id 0, and a validation split keeps them.
TEST(DatasetTest, HoldsIntegerIds) {
  Int64Tensor ids;
  ids.shape = {5, 3};
  ids.source = "ids.npy";
  for (int64_t i = 0; i < 15; ++i)
    ids.data.push_back(100 + i);
  Expected<Dataset> data = Dataset::withLabels(ids, labels(5, 2), 2);
  ASSERT_OK(data);
  EXPECT_TRUE(data->integerInputs());
  EXPECT_EQ(data->inputSource(), "ids.npy");
  EXPECT_EQ(data->sampleElements(), 3);
  MicroBatch batch = data->makeBatch(2);
  EXPECT_TRUE(batch.inputs.empty());
  ASSERT_EQ(batch.inputIds.size(), 6u);
  EXPECT_EQ(batch.inputData(),
            static_cast<const void *>(batch.inputIds.data()));
  EXPECT_NO_ERROR(fillEvalBatch(*data, 2, batch));
  EXPECT_EQ(batch.realRows, 1);
  EXPECT_EQ(batch.inputIds, (std::vector<int64_t>{112, 113, 114, 0, 0, 0}));
  Expected<std::pair<Dataset, Dataset>> split = data->splitValidation(0.4);
  ASSERT_OK(split);
  EXPECT_TRUE(split->second.integerInputs());
  EXPECT_EQ(split->second.inputIdRow(0)[0], 109);
  // Float datasets keep their float rows.
  MicroBatch floats = labeled(3).makeBatch(2);
  EXPECT_TRUE(floats.inputIds.empty());
  EXPECT_EQ(floats.inputData(),
            static_cast<const void *>(floats.inputs.data()));
}
