//===- IdxTest.cpp - IDX reader and the Fashion-MNIST loader --------------===//

#include "TestUtil.h"

#include "traincc/runtime/data/Dataset.h"
#include "traincc/runtime/data/FashionMnist.h"
#include "traincc/runtime/formats/Idx.h"
#include "traincc/runtime/support/File.h"
#include "traincc/runtime/support/Random.h"

#include <cmath>

using namespace traincc::rt;
using namespace traincc::rt::test;
using ::testing::HasSubstr;

namespace {

class IdxTest : public ::testing::Test {
protected:
  std::string write(const std::string &name, const std::string &bytes) {
    std::string path = dir.file(name);
    writeFile(path, bytes);
    return path;
  }
  TempDir dir;
};

/// 3 images of 2x2 pixels and their labels.
const std::string kPixels = std::string("\x00\x01\x02\x03\x10\x20\x30\x40"
                                        "\xfd\xfe\xff\x80",
                                        12);
const std::string kLabels = std::string("\x09\x00\x03", 3);

} // namespace

// Tests plain and gzipped files, recognised by content rather than name.
TEST_F(IdxTest, ReadsPlainAndGzipped) {
  std::string images = idxBytes({3, 2, 2}, kPixels);
  for (const std::string &path :
       {write("img", images), write("img.gz", gzipBytes(images)),
        write("gz-without-suffix", gzipBytes(images)),
        write("plain-with-suffix.gz", images)}) {
    Expected<ByteTensor> t = readIdxUInt8(path, 3);
    ASSERT_OK(t);
    EXPECT_EQ(t->shape, (std::vector<int64_t>{3, 2, 2})) << path;
    EXPECT_EQ(std::string(t->data.begin(), t->data.end()), kPixels) << path;
  }
  Expected<ByteTensor> labels =
      readIdxUInt8(write("lab.gz", gzipBytes(idxBytes({3}, kLabels))), 1);
  ASSERT_OK(labels);
  EXPECT_EQ(labels->shape, std::vector<int64_t>{3});
  EXPECT_EQ(std::string(labels->data.begin(), labels->data.end()), kLabels);
}

// Tests a gzip file made of two members (as `cat a.gz b.gz` makes).
TEST_F(IdxTest, ReadsConcatenatedGzipMembers) {
  std::string images = idxBytes({3, 2, 2}, kPixels);
  std::string path = write("two.gz", gzipBytes(images.substr(0, 9)) +
                                         gzipBytes(images.substr(9)));
  Expected<ByteTensor> t = readIdxUInt8(path, 3);
  ASSERT_OK(t);
  EXPECT_EQ(std::string(t->data.begin(), t->data.end()), kPixels);
}

// Tests large, highly compressible data across several read chunks.
TEST_F(IdxTest, ReadsLargeCompressibleData) {
  std::string pixels(20'000'000, '\0');
  pixels[19'999'999] = 7;
  std::string path =
      write("big.gz", gzipBytes(idxBytes({5, 2000, 2000}, pixels)));
  Expected<ByteTensor> t = readIdxUInt8(path, 3);
  ASSERT_OK(t);
  ASSERT_EQ(t->data.size(), pixels.size());
  EXPECT_EQ(t->data.back(), 7);
  EXPECT_EQ(t->data[12'345'678], 0);
}

// Tests magic numbers that are not the expected IDX kind.
TEST_F(IdxTest, RejectsWrongMagic) {
  std::string labels = idxBytes({3}, kLabels);
  EXPECT_THAT(errorOf(readIdxUInt8(write("l", labels), 3)),
              HasSubstr("expected IDX magic 0x00000803 (3-dimensional unsigned "
                        "bytes), got 0x00000801"));
  EXPECT_THAT(errorOf(readIdxUInt8(write("l.gz", gzipBytes(labels)), 3)),
              HasSubstr("got 0x00000801"));
  EXPECT_THAT(errorOf(readIdxUInt8(write("png", "\x89PNG\r\n\x1a\n"), 3)),
              HasSubstr("not an IDX file (bad magic 0x89504E47)"));
  std::string floats = labels;
  floats[2] = 0x0D;
  EXPECT_THAT(errorOf(readIdxUInt8(write("f", floats), 1)),
              HasSubstr("unsupported IDX element type in magic 0x00000D01"));
  std::string rank0 = labels;
  rank0[3] = 0;
  EXPECT_THAT(errorOf(readIdxUInt8(write("r0", rank0))),
              HasSubstr("unsupported IDX rank 0"));
  EXPECT_THAT(errorOf(readIdxUInt8(write("tiny", std::string(1, '\0')))),
              HasSubstr("not an IDX file (only 1 bytes)"));
}

// Tests truncation at every stage, plain and gzipped, and trailing bytes.
TEST_F(IdxTest, RejectsTruncatedFiles) {
  std::string images = idxBytes({3, 2, 2}, kPixels);
  EXPECT_THAT(
      errorOf(readIdxUInt8(write("a", images.substr(0, 10)), 3)),
      HasSubstr("file is truncated (the IDX dimensions needs 12 bytes"));
  EXPECT_THAT(errorOf(readIdxUInt8(write("b", images.substr(0, 27)), 3)),
              HasSubstr("file is truncated (shape [3,2,2] needs 12 data bytes, "
                        "the file has 11)"));
  EXPECT_THAT(errorOf(readIdxUInt8(write("c", images + "x"), 3)),
              HasSubstr("unexpected bytes after the data"));
  // A complete gzip stream of an incomplete IDX file.
  EXPECT_THAT(
      errorOf(readIdxUInt8(write("d.gz", gzipBytes(images.substr(0, 27))), 3)),
      HasSubstr("needs 12 data bytes, found 11"));
  EXPECT_THAT(errorOf(readIdxUInt8(write("e.gz", gzipBytes(images + "x")), 3)),
              HasSubstr("unexpected bytes after the data"));
  // A gzip stream cut short.
  std::string gz = gzipBytes(images);
  EXPECT_THAT(
      errorOf(readIdxUInt8(write("f.gz", gz.substr(0, gz.size() - 6)), 3)),
      HasSubstr("gzip data is truncated"));
  EXPECT_THAT(errorOf(readIdxUInt8(write("g.gz", gz.substr(0, 12)), 3)),
              HasSubstr("gzip data is truncated"));
}

// Tests damaged gzip data: a flipped byte and garbage after the stream.
TEST_F(IdxTest, RejectsCorruptGzip) {
  std::string gz = gzipBytes(idxBytes({3, 2, 2}, kPixels));
  std::string flipped = gz;
  flipped[gz.size() - 5] ^= 0x55; // the CRC-32 / length trailer
  EXPECT_THAT(errorOf(readIdxUInt8(write("a.gz", flipped), 3)),
              HasSubstr("corrupt gzip data"));
  EXPECT_THAT(errorOf(readIdxUInt8(write("b.gz", gz + "garbage!"), 3)),
              HasSubstr("corrupt gzip data"));
}

// Tests huge declared shapes in tiny files: an error, never an allocation.
TEST_F(IdxTest, RejectsHugeDeclaredShapes) {
  std::string plain = idxBytes({60000, 28, 28}, "abc");
  EXPECT_THAT(errorOf(readIdxUInt8(write("a", plain), 3)),
              HasSubstr("needs 47040000 data bytes, the file has 3"));
  std::string gz = gzipBytes(idxBytes({100000, 1000, 1000}, "abc"));
  EXPECT_THAT(errorOf(readIdxUInt8(write("b.gz", gz), 3)),
              HasSubstr("more than a gzip file of"));
  std::string overflow = idxBytes({0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, "");
  EXPECT_THAT(errorOf(readIdxUInt8(write("c", overflow), 3)),
              HasSubstr("is too large"));
  EXPECT_THAT(errorOf(readIdxUInt8(write("d.gz", gzipBytes(overflow)), 3)),
              HasSubstr("is too large"));
}

// Tests that images scale to [0,1] as v / 255 and take the [N,1,R,C] shape.
TEST_F(IdxTest, LoadsImagesAndLabels) {
  std::string images = write("i.gz", gzipBytes(idxBytes({3, 2, 2}, kPixels)));
  std::string labels = write("l", idxBytes({3}, kLabels));
  Expected<LabeledImages> set = loadIdxImagesAndLabels(images, labels);
  ASSERT_OK(set);
  EXPECT_EQ(set->images.shape, (std::vector<int64_t>{3, 1, 2, 2}));
  ASSERT_EQ(set->images.data.size(), 12u);
  for (size_t i = 0; i < 12; ++i)
    EXPECT_EQ(set->images.data[i], float(uint8_t(kPixels[i])) / 255.0f);
  EXPECT_EQ(set->images.data[10], 1.0f);
  EXPECT_EQ(set->labels.data, (std::vector<int64_t>{9, 0, 3}));

  std::string twoLabels = write("l2", idxBytes({2}, kLabels.substr(0, 2)));
  EXPECT_THAT(errorOf(loadIdxImagesAndLabels(images, twoLabels)),
              HasSubstr("2 labels for 3 images"));
  EXPECT_THAT(errorOf(loadIdxImagesAndLabels(labels, labels)),
              HasSubstr("expected IDX magic 0x00000803"));
}

// Tests the --dataset value parser.
TEST(DatasetSpecTest, ParsesNamesAndFolders) {
  Expected<DatasetSpec> spec = parseDatasetSpec("fashion-mnist");
  ASSERT_OK(spec);
  EXPECT_EQ(spec->dir, "/usr/share/datasets/fashion-mnist");
  spec = parseDatasetSpec("fashion-mnist:/data/fm:v2");
  ASSERT_OK(spec);
  EXPECT_EQ(spec->name, "fashion-mnist");
  EXPECT_EQ(spec->dir, "/data/fm:v2");
  EXPECT_THAT(errorOf(parseDatasetSpec("mnist")),
              HasSubstr("unknown dataset 'mnist' (known: fashion-mnist)"));
  EXPECT_THAT(errorOf(parseDatasetSpec("fashion-mnist:")),
              HasSubstr("empty folder"));
}

// Tests the folder loader on small files, gzipped and plain mixed.
TEST_F(IdxTest, LoadsFashionMnistFolder) {
  write("train-images-idx3-ubyte.gz", gzipBytes(idxBytes({3, 2, 2}, kPixels)));
  write("train-labels-idx1-ubyte", idxBytes({3}, kLabels));
  EXPECT_THAT(errorOf(loadFashionMnist(dir.path())),
              HasSubstr("neither t10k-images-idx3-ubyte nor "
                        "t10k-images-idx3-ubyte.gz is in"));
  write("t10k-images-idx3-ubyte", idxBytes({1, 2, 2}, kPixels.substr(0, 4)));
  write("t10k-labels-idx1-ubyte.gz", gzipBytes(idxBytes({1}, "\x04")));
  Expected<TrainAndValidation> data =
      loadNamedDataset(*parseDatasetSpec("fashion-mnist:" + dir.path()));
  ASSERT_OK(data);
  EXPECT_EQ(data->train.images.shape, (std::vector<int64_t>{3, 1, 2, 2}));
  EXPECT_EQ(data->validation.labels.data, std::vector<int64_t>{4});
  // Labels outside the 10 classes are caught when the dataset is built.
  write("t10k-labels-idx1-ubyte.gz", gzipBytes(idxBytes({1}, "\x0a")));
  data = loadFashionMnist(dir.path());
  ASSERT_OK(data);
  EXPECT_THAT(errorOf(Dataset::withLabels(data->validation.images,
                                          data->validation.labels,
                                          kFashionMnistClasses)),
              HasSubstr("label 10 of sample 0 is out of range for 10 classes"));
}

// Tests the real Fashion-MNIST files when the machine has them.
TEST(FashionMnistTest, LoadsInstalledDataset) {
  if (!isRegularFile(std::string(kDefaultFashionMnistDir) +
                     "/train-labels-idx1-ubyte.gz") &&
      !isRegularFile(std::string(kDefaultFashionMnistDir) +
                     "/train-labels-idx1-ubyte"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  Expected<TrainAndValidation> data = loadFashionMnist(kDefaultFashionMnistDir);
  ASSERT_OK(data);
  EXPECT_EQ(data->train.images.shape, (std::vector<int64_t>{60000, 1, 28, 28}));
  EXPECT_EQ(data->validation.images.shape,
            (std::vector<int64_t>{10000, 1, 28, 28}));
  ASSERT_EQ(data->train.labels.data.size(), 60000u);
  ASSERT_EQ(data->validation.labels.data.size(), 10000u);
  EXPECT_EQ(data->train.labels.data[0], 9); // ankle boot
  EXPECT_EQ(data->validation.labels.data[0], 9);
  EXPECT_EQ(data->validation.labels.data[1], 2);
  // The first training image: raw pixel sum 76247, maximum 255.
  int64_t sum = 0;
  for (int i = 0; i < 784; ++i)
    sum += int64_t(std::lround(data->train.images.data[i] * 255.0f));
  EXPECT_EQ(sum, 76247);
  Expected<Dataset> train = Dataset::withLabels(
      data->train.images, data->train.labels, kFashionMnistClasses);
  ASSERT_OK(train);
  std::vector<int64_t> counts = train->classCounts();
  EXPECT_EQ(counts, std::vector<int64_t>(10, 6000));
}

// Tests that randomly damaged plain and gzipped IDX files give errors or
// consistent arrays, never a crash.
TEST_F(IdxTest, SurvivesRandomDamage) {
  std::string plain = idxBytes({3, 2, 2}, kPixels);
  std::string gz = gzipBytes(plain);
  SplitMix64 rng(78);
  std::string path = dir.file("fuzz");
  for (int round = 0; round < 1500; ++round) {
    std::string bytes = round % 2 ? gz : plain;
    size_t at = size_t(rng.below(bytes.size()));
    if (rng.below(2))
      bytes.resize(at);
    else
      bytes[at] = char(rng.below(256));
    writeFile(path, bytes);
    Expected<ByteTensor> t = readIdxUInt8(path);
    if (t) {
      EXPECT_EQ(*checkedElementCount(t->shape), t->numElements());
    } else {
      EXPECT_FALSE(t.error().message().empty());
    }
  }
}
