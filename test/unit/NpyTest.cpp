//===- NpyTest.cpp - .npy reader and writer -------------------------------===//

#include "TestUtil.h"

#include "traincc/runtime/formats/Npy.h"
#include "traincc/runtime/support/File.h"
#include "traincc/runtime/support/Random.h"

#include <cmath>
#include <cstring>
#include <unistd.h>

using namespace traincc::rt;
using namespace traincc::rt::test;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

class NpyTest : public ::testing::Test {
protected:
  /// Writes an .npy file with `dict` and `data` and returns its path.
  std::string npy(const std::string &name, const std::string &dict,
                  const std::string &data, int major = 1, bool pad = true) {
    std::string path = dir.file(name);
    writeFile(path, npyBytes(dict, data, major, pad));
    return path;
  }
  TempDir dir;
};

uint32_t floatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

} // namespace

// Tests that float32 data in each format version reads back exactly.
TEST_F(NpyTest, ReadsFloat32InEveryVersion) {
  std::vector<float> values = {0.5f, -1.25f, 3e-38f, 1e30f, 0.f, 7.f};
  for (int major : {1, 2, 3}) {
    std::string path = npy("x" + std::to_string(major) + ".npy",
                           npyDict("<f4", "(2, 3)"), rawBytes(values), major);
    Expected<FloatTensor> t = readNpyFloat32(path);
    ASSERT_OK(t);
    EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(t->data, values);
    EXPECT_EQ(t->source, path);
  }
}

// Tests that unpadded headers, trailing commas, double quotes and Python 2
// long literals are all accepted, like numpy accepts them.
TEST_F(NpyTest, AcceptsHeaderVariants) {
  std::vector<float> v = {1, 2, 3};
  std::string path = npy(
      "a.npy", "{\"descr\":\"<f4\",\"fortran_order\":False,\"shape\":(3L,)}",
      rawBytes(v), 1, /*pad=*/false);
  Expected<FloatTensor> t = readNpyFloat32(path);
  ASSERT_OK(t);
  EXPECT_EQ(t->shape, std::vector<int64_t>{3});
  EXPECT_EQ(t->data, v);
}

// Tests the conversions to float32: float64 rounds, int32 and uint8 convert
// by value.
TEST_F(NpyTest, ConvertsToFloat32) {
  std::vector<double> d = {0.1, -2.0, 1e-300};
  Expected<FloatTensor> t =
      readNpyFloat32(npy("d.npy", npyDict("<f8", "(3,)"), rawBytes(d)));
  ASSERT_OK(t);
  EXPECT_EQ(t->data, (std::vector<float>{0.1f, -2.0f, float(1e-300)}));

  std::vector<int32_t> i = {-(1 << 24), 0, 255, 1 << 24};
  t = readNpyFloat32(npy("i.npy", npyDict("<i4", "(4,)"), rawBytes(i)));
  ASSERT_OK(t);
  EXPECT_EQ(t->data, (std::vector<float>{-16777216.f, 0.f, 255.f, 16777216.f}));

  t = readNpyFloat32(
      npy("u.npy", npyDict("|u1", "(2, 1)"), std::string("\x00\xff", 2)));
  ASSERT_OK(t);
  EXPECT_EQ(t->data, (std::vector<float>{0.f, 255.f}));
  EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 1}));
}

// Tests that conversions that would lose information are errors.
TEST_F(NpyTest, RejectsLossyConversions) {
  std::vector<double> big = {1.0, 1e39};
  Expected<FloatTensor> t =
      readNpyFloat32(npy("big.npy", npyDict("<f8", "(2,)"), rawBytes(big)));
  EXPECT_THAT(errorOf(t), HasSubstr("float64 value 1e+39 at element 1 does "
                                    "not fit in float32"));
  std::vector<int32_t> i = {1, (1 << 24) + 1};
  t = readNpyFloat32(npy("i.npy", npyDict("<i4", "(2,)"), rawBytes(i)));
  EXPECT_THAT(errorOf(t), HasSubstr("int32 value 16777217 at element 1 is "
                                    "not exactly representable"));
}

// Tests that int64 data where float32 is expected names both types.
TEST_F(NpyTest, RejectsInt64AsInputs) {
  std::vector<int64_t> v = {1, 2};
  std::string path = npy("train-x.npy", npyDict("<i8", "(2,)"), rawBytes(v));
  EXPECT_THAT(errorOf(readNpyFloat32(path)),
              StartsWith(path + ": expected float32 data, got <i8 (int64)"));
}

// Tests unsupported element types by name.
TEST_F(NpyTest, RejectsUnsupportedTypes) {
  struct Case {
    const char *descr, *expected;
  } cases[] = {{"<f2", "got <f2 (float16)"},
               {"|b1", "got |b1 (bool)"},
               {"|O", "got |O (Python objects)"},
               {"<U5", "got <U5 (strings)"},
               {"<u8", "got <u8 (uint64)"},
               {"<M8[ns]", "got <M8[ns] (datetime64)"},
               {"zz", "got 'zz'"}};
  for (const Case &c : cases) {
    std::string path = npy("t.npy", npyDict(c.descr, "(1,)"), "12345678");
    EXPECT_THAT(errorOf(readNpyFloat32(path)), HasSubstr(c.expected))
        << c.descr;
    EXPECT_THAT(errorOf(readNpyInt64(path)), HasSubstr(c.expected)) << c.descr;
  }
}

// Tests that labels widen from int32 and uint8 and reject floats.
TEST_F(NpyTest, ReadsInt64Labels) {
  std::vector<int64_t> l = {0, 9, int64_t(1) << 40};
  Expected<Int64Tensor> t =
      readNpyInt64(npy("l.npy", npyDict("<i8", "(3,)"), rawBytes(l)));
  ASSERT_OK(t);
  EXPECT_EQ(t->data, l);
  std::vector<int32_t> l32 = {-3, 7};
  t = readNpyInt64(npy("l32.npy", npyDict("<i4", "(2,)"), rawBytes(l32)));
  ASSERT_OK(t);
  EXPECT_EQ(t->data, (std::vector<int64_t>{-3, 7}));
  t = readNpyInt64(npy("l8.npy", npyDict("|u1", "(2,)"), "\x05\xfe"));
  ASSERT_OK(t);
  EXPECT_EQ(t->data, (std::vector<int64_t>{5, 254}));

  std::vector<float> f = {1.f};
  std::string path = npy("train-y.npy", npyDict("<f4", "(1,)"), rawBytes(f));
  EXPECT_THAT(errorOf(readNpyInt64(path)),
              StartsWith(path + ": expected int64 labels, got <f4 (float32)"));
}

// Tests that big-endian files are byte-swapped.
TEST_F(NpyTest, ReadsBigEndian) {
  std::string f("\x3f\x80\x00\x00\xc0\x00\x00\x00", 8); // 1.0f, -2.0f
  Expected<FloatTensor> t =
      readNpyFloat32(npy("be.npy", npyDict(">f4", "(2,)"), f));
  ASSERT_OK(t);
  EXPECT_EQ(t->data, (std::vector<float>{1.f, -2.f}));
  std::string i = std::string(7, '\0') + "\x2a";
  Expected<Int64Tensor> l =
      readNpyInt64(npy("bl.npy", npyDict(">i8", "(1,)"), i));
  ASSERT_OK(l);
  EXPECT_EQ(l->data, std::vector<int64_t>{42});
}

// Tests that Fortran order is an error except where it equals C order.
TEST_F(NpyTest, RejectsFortranOrder) {
  std::vector<float> v = {1, 2, 3, 4};
  std::string path =
      npy("f.npy", npyDict("<f4", "(2, 2)", /*fortran=*/true), rawBytes(v));
  EXPECT_THAT(errorOf(readNpyFloat32(path)), HasSubstr("Fortran order"));
  Expected<FloatTensor> t =
      readNpyFloat32(npy("f1.npy", npyDict("<f4", "(4,)", true), rawBytes(v)));
  ASSERT_OK(t);
  EXPECT_EQ(t->data, v);
}

// Tests that data shorter or longer than the shape declares is an error.
TEST_F(NpyTest, RejectsWrongDataSize) {
  std::vector<float> v = {1, 2, 3};
  std::string path = npy("short.npy", npyDict("<f4", "(4,)"), rawBytes(v));
  EXPECT_THAT(errorOf(readNpyFloat32(path)),
              HasSubstr("file is truncated (shape [4] of float32 needs 16 data "
                        "bytes, the file has 12)"));
  path = npy("long.npy", npyDict("<f4", "(2,)"), rawBytes(v));
  EXPECT_THAT(errorOf(readNpyFloat32(path)),
              HasSubstr("4 unexpected bytes after the data"));
}

// Tests that huge declared shapes in tiny files fail before allocating.
TEST_F(NpyTest, RejectsHugeShapes) {
  std::string path = npy("h.npy", npyDict("<f4", "(1099511627776, 1024)"), "");
  EXPECT_THAT(errorOf(readNpyFloat32(path)), HasSubstr("truncated"));
  path = npy("o.npy", npyDict("<f4", "(4611686018427387904, 4)"), "abcd");
  EXPECT_THAT(errorOf(readNpyFloat32(path)), HasSubstr("is too large"));
  path = npy("o2.npy", npyDict("<i8", "(3037000500, 3037000500)"), "");
  EXPECT_THAT(errorOf(readNpyInt64(path)), HasSubstr("is too large"));
  path = npy("o3.npy", npyDict("<f4", "(99999999999999999999,)"), "");
  EXPECT_THAT(errorOf(readNpyFloat32(path)), HasSubstr("does not fit in 64"));
}

// Tests scalar and empty arrays.
TEST_F(NpyTest, ReadsScalarAndEmpty) {
  std::vector<float> one = {2.5f};
  Expected<FloatTensor> t =
      readNpyFloat32(npy("s.npy", npyDict("<f4", "()"), rawBytes(one)));
  ASSERT_OK(t);
  EXPECT_TRUE(t->shape.empty());
  EXPECT_EQ(t->data, one);
  t = readNpyFloat32(npy("e.npy", npyDict("<f4", "(0, 3)"), ""));
  ASSERT_OK(t);
  EXPECT_EQ(t->shape, (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(t->data.empty());
}

// Tests malformed header dictionaries one by one.
TEST(NpyHeaderTest, RejectsMalformedDictionaries) {
  const char *bad[] = {
      "",
      "descr",
      "{",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)",
      "{'descr': '<f4', 'fortran_order': False}",
      "{'descr': '<f4', 'shape': (3,)}",
      "{'fortran_order': False, 'shape': (3,)}",
      "{'descr': <f4, 'fortran_order': False, 'shape': (3,)}",
      "{'descr': '<f4, 'fortran_order': False, 'shape': (3,)}",
      "{'descr': '<f4', 'fortran_order': false, 'shape': (3,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': [3]}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (-3,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3.5,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3 4)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}",
      "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}",
      "{'descr': '<f4' 'fortran_order': False, 'shape': (3,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} junk",
      "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,)}",
      "{'descr': '\\x3cf4', 'fortran_order': False, 'shape': (3,)}",
      "{'descr': '|f4', 'fortran_order': False, 'shape': (3,)}",
  };
  for (const char *text : bad) {
    Expected<NpyHeader> header = parseNpyHeaderDict(text);
    EXPECT_FALSE(header.ok()) << "accepted: " << text;
    EXPECT_THAT(errorOf(header), StartsWith("malformed .npy header")) << text;
  }
  std::string deep = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < 65; ++i)
    deep += "1,";
  EXPECT_THAT(errorOf(parseNpyHeaderDict(deep + ")}")),
              HasSubstr("more than 64 dimensions"));
  EXPECT_THAT(errorOf(parseNpyHeaderDict(
                  "{'descr': [('a', '<f4')], 'fortran_order': False, "
                  "'shape': (3,)}")),
              HasSubstr("structured dtypes"));
}

// Tests that a well-formed dictionary decodes type, order and shape.
TEST(NpyHeaderTest, DecodesDictionary) {
  Expected<NpyHeader> header = parseNpyHeaderDict(
      "{'shape': (60000, 1, 28, 28), 'fortran_order': False, 'descr': '>i4'}");
  ASSERT_OK(header);
  EXPECT_EQ(header->descr, ">i4");
  ASSERT_TRUE(header->dtype.has_value());
  EXPECT_EQ(*header->dtype, DType::Int32);
  EXPECT_TRUE(header->byteSwapped);
  EXPECT_EQ(header->shape, (std::vector<int64_t>{60000, 1, 28, 28}));
}

// Tests file-level damage: magic, version, header length, short files.
TEST_F(NpyTest, RejectsDamagedFiles) {
  std::vector<float> v = {1};
  std::string good = npyBytes(npyDict("<f4", "(1,)"), rawBytes(v));
  auto check = [&](const std::string &bytes, const std::string &expected) {
    std::string path = dir.file("damaged.npy");
    writeFile(path, bytes);
    EXPECT_THAT(errorOf(readNpyFloat32(path)), HasSubstr(expected));
  };
  check("", "not an .npy file (only 0 bytes)");
  check("\x93NUMP", "not an .npy file");
  check("PK\x03\x04" + good.substr(4), "bad magic");
  std::string v4 = good;
  v4[6] = 4;
  check(v4, "unsupported .npy format version 4.0");
  std::string v11 = good;
  v11[7] = 1;
  check(v11, "unsupported .npy format version 1.1");
  check(good.substr(0, 40), "file is truncated (the header needs");
  std::string hugeHeader =
      std::string("\x93NUMPY\x02\x00", 8) + "\xff\xff\xff\x7f";
  check(hugeHeader + "{}", "implausibly large");
  check(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (", ""),
        "malformed .npy header");
  EXPECT_THAT(errorOf(readNpyFloat32(dir.file("missing.npy"))),
              HasSubstr("missing.npy: cannot open"));
  EXPECT_THAT(errorOf(readNpyFloat32(dir.path())),
              HasSubstr("not a regular file"));
}

// Tests that written files are 64-byte aligned and read back exactly.
TEST_F(NpyTest, WriterRoundTrips) {
  std::vector<float> f = {0.1f, -0.f, 1e-45f, 3.4028235e38f, 2.f, 3.f};
  std::string path = dir.file("out.npy");
  EXPECT_NO_ERROR(writeNpy(path, {3, 2}, f.data()));
  std::string bytes = readFile(path);
  ASSERT_GE(bytes.size(), 10u);
  size_t headerLength = uint8_t(bytes[8]) | (uint8_t(bytes[9]) << 8);
  EXPECT_EQ((10 + headerLength) % 64, 0u);
  EXPECT_EQ(bytes[10 + headerLength - 1], '\n');
  Expected<FloatTensor> t = readNpyFloat32(path);
  ASSERT_OK(t);
  EXPECT_EQ(t->shape, (std::vector<int64_t>{3, 2}));
  for (size_t i = 0; i < f.size(); ++i)
    EXPECT_EQ(floatBits(t->data[i]), floatBits(f[i]));

  std::vector<int64_t> l = {INT64_MIN, -1, 0, INT64_MAX};
  EXPECT_NO_ERROR(writeNpy(path, {4}, l.data()));
  Expected<Int64Tensor> r = readNpyInt64(path);
  ASSERT_OK(r);
  EXPECT_EQ(r->data, l);
  EXPECT_EQ(r->shape, std::vector<int64_t>{4});

  EXPECT_NO_ERROR(writeNpy(path, {}, f.data()));
  t = readNpyFloat32(path);
  ASSERT_OK(t);
  EXPECT_TRUE(t->shape.empty());
  EXPECT_EQ(t->data.size(), 1u);
  // Committed writes leave no temporary file behind.
  EXPECT_FALSE(isRegularFile(path + ".tmp-" + std::to_string(::getpid())));
}

// Tests writer errors: bad shapes and folders that do not exist.
TEST_F(NpyTest, WriterReportsErrors) {
  std::vector<float> f = {1};
  EXPECT_THAT(errorOf(writeNpy(dir.file("no/such/dir.npy"), {1}, f.data())),
              HasSubstr("cannot create"));
  EXPECT_THAT(errorOf(writeNpy(dir.file("neg.npy"), {-1}, f.data())),
              HasSubstr("negative dimension"));
  EXPECT_THAT(errorOf(writeNpy(dir.file("null.npy"), {1},
                               static_cast<const float *>(nullptr))),
              HasSubstr("no data"));
  EXPECT_FALSE(isRegularFile(dir.file("neg.npy")));
}

// Tests interoperability with numpy itself in both directions.
TEST_F(NpyTest, InteroperatesWithNumpy) {
  if (!havePythonNumpy())
    GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  std::vector<float> f = {0.1f, -2.5f, 1e-30f, 3.4e38f};
  std::vector<int64_t> l = {-1, int64_t(1) << 40, 0, 9};
  ASSERT_FALSE(writeNpy(dir.file("ours-f.npy"), {2, 2}, f.data()).failed());
  ASSERT_FALSE(writeNpy(dir.file("ours-l.npy"), {4}, l.data()).failed());
  std::string bits;
  for (float v : f)
    bits += std::to_string(floatBits(v)) + ",";
  std::string script =
      "import numpy as np, sys\n"
      "d = sys.argv[1]\n"
      "a = np.load(d + '/ours-f.npy')\n"
      "assert a.dtype == np.float32 and a.shape == (2, 2), a\n"
      "assert a.view(np.uint32).ravel().tolist() == [" +
      bits +
      "], a\n"
      "b = np.load(d + '/ours-l.npy')\n"
      "assert b.dtype == np.int64 and b.tolist() == [-1, 2**40, 0, 9], b\n"
      "x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7\n"
      "for v in (1, 2, 3):\n"
      "    with open(d + '/np%d.npy' % v, 'wb') as f:\n"
      "        np.lib.format.write_array(f, x, version=(v, 0))\n"
      "np.save(d + '/np-be.npy', x.astype('>f8'))\n"
      "np.save(d + '/np-f.npy', np.asfortranarray(x))\n"
      "np.save(d + '/np-u8.npy', np.array([[0, 7], [255, 1]], np.uint8))\n";
  writeFile(dir.file("check.py"), script);
  ASSERT_EQ(
      runCommand("/usr/bin/python3 " + dir.file("check.py") + " " + dir.path()),
      0);
  std::vector<float> expected;
  for (int i = 0; i < 24; ++i)
    expected.push_back(float(i) / 7.f);
  for (const char *name : {"np1.npy", "np2.npy", "np3.npy", "np-be.npy"}) {
    Expected<FloatTensor> t = readNpyFloat32(dir.file(name));
    ASSERT_OK(t);
    EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 3, 4})) << name;
    for (int i = 0; i < 24; ++i)
      EXPECT_FLOAT_EQ(t->data[i], expected[i]) << name << " element " << i;
  }
  EXPECT_THAT(errorOf(readNpyFloat32(dir.file("np-f.npy"))),
              HasSubstr("Fortran order"));
  Expected<Int64Tensor> u = readNpyInt64(dir.file("np-u8.npy"));
  ASSERT_OK(u);
  EXPECT_EQ(u->data, (std::vector<int64_t>{0, 7, 255, 1}));
}

// Tests that randomly damaged files give errors or consistent arrays, never
// a crash (run under ASan/UBSan to make this bite harder).
TEST_F(NpyTest, SurvivesRandomDamage) {
  std::vector<float> v(12, 1.5f);
  std::string base = npyBytes(npyDict("<f4", "(3, 4)"), rawBytes(v));
  SplitMix64 rng(77);
  std::string path = dir.file("fuzz.npy");
  int accepted = 0;
  for (int round = 0; round < 1500; ++round) {
    std::string bytes = base;
    for (int edits = 1 + int(rng.below(3)); edits > 0; --edits) {
      size_t at = size_t(rng.below(bytes.size()));
      switch (rng.below(3)) {
      case 0:
        bytes.resize(at);
        break;
      case 1:
        bytes[at] = char(rng.below(256));
        break;
      default:
        bytes.insert(bytes.begin() + at, char(rng.below(256)));
      }
      if (bytes.empty())
        break;
    }
    writeFile(path, bytes);
    Expected<FloatTensor> f = readNpyFloat32(path);
    if (f) {
      ++accepted;
      EXPECT_EQ(*checkedElementCount(f->shape), f->numElements());
    } else {
      EXPECT_FALSE(f.error().message().empty());
    }
    Expected<Int64Tensor> l = readNpyInt64(path);
    if (l) {
      EXPECT_EQ(*checkedElementCount(l->shape), l->numElements());
    }
  }
  // Edits inside the data or the padding leave valid files.
  EXPECT_GT(accepted, 0);
}
