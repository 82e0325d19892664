//===- HalfFloatTest.cpp - float16/bfloat16 conversions and state copies --===//

#include "TestUtil.h"

#include "traincc/runtime/support/HalfFloat.h"
#include "traincc/runtime/support/Model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace traincc::rt;

namespace {

float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

constexpr float kInf = std::numeric_limits<float>::infinity();

// Tests float16 narrowing: exact values, ties to even, overflow to
// infinity from 65520 on, subnormals and their underflow, signs, NaN.
TEST(HalfFloat, FloatToHalfRoundsToNearestEven) {
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(floatToHalf(0.1f), 0x2E66);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7BFF); // the largest float16
  EXPECT_EQ(floatToHalf(65519.0f), 0x7BFF); // below the midpoint
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00); // the tie rounds to even: inf
  EXPECT_EQ(floatToHalf(1e6f), 0x7C00);
  EXPECT_EQ(floatToHalf(-kInf), 0xFC00);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: even is 1.
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f), 0x3C00);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 and 1 + 2^-9: even is up.
  EXPECT_EQ(floatToHalf(1.0f + 3 * 0x1p-11f), 0x3C02);
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f + 0x1p-20f), 0x3C01);
  // Subnormals: multiples of 2^-24.
  EXPECT_EQ(floatToHalf(0x1p-14f), 0x0400); // the smallest normal
  EXPECT_EQ(floatToHalf(0x1p-24f), 0x0001);
  EXPECT_EQ(floatToHalf(3 * 0x1p-25f), 0x0002); // tie: even
  EXPECT_EQ(floatToHalf(5 * 0x1p-25f), 0x0002); // tie: even
  EXPECT_EQ(floatToHalf(0x1p-25f), 0x0000);     // tie: even (zero)
  EXPECT_EQ(floatToHalf(-0x1.01p-25f), 0x8001);
  EXPECT_EQ(floatToHalf(0x1p-30f), 0x0000);
  EXPECT_EQ(floatToHalf(0x1.ff8p-15f), 0x03FF); // largest subnormal
  EXPECT_EQ(floatToHalf(0x1.ffbp-15f), 0x03FF);
  EXPECT_EQ(floatToHalf(0x1.ffcp-15f), 0x0400); // tie: even, a normal
  uint16_t nan = floatToHalf(std::nanf(""));
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
  EXPECT_EQ(floatToHalf(-std::nanf("")) & 0x8000, 0x8000);
}

// Tests that every float16 widens exactly and narrows back to itself.
TEST(HalfFloat, HalfRoundTripsThroughFloat) {
  EXPECT_EQ(halfToFloat(0x3C00), 1.0f);
  EXPECT_EQ(halfToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(halfToFloat(0xFC00), -kInf);
  EXPECT_TRUE(std::isnan(halfToFloat(0x7E00)));
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF))
      continue; // NaN
    EXPECT_EQ(floatToHalf(halfToFloat(uint16_t(h))), h) << h;
  }
}

// Tests bfloat16 narrowing: ties to even on the 16 dropped bits, overflow
// to infinity, NaN kept (a truncated NaN payload could read as infinity).
TEST(HalfFloat, FloatToBFloat16RoundsToNearestEven) {
  EXPECT_EQ(floatToBFloat16(1.0f), 0x3F80);
  EXPECT_EQ(floatToBFloat16(-1.0f), 0xBF80);
  EXPECT_EQ(floatToBFloat16(floatOf(0x3F808000)), 0x3F80); // tie: even
  EXPECT_EQ(floatToBFloat16(floatOf(0x3F818000)), 0x3F82); // tie: even
  EXPECT_EQ(floatToBFloat16(floatOf(0x3F808001)), 0x3F81);
  EXPECT_EQ(floatToBFloat16(floatOf(0x3F807FFF)), 0x3F80);
  EXPECT_EQ(floatToBFloat16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(floatToBFloat16(kInf), 0x7F80);
  EXPECT_EQ(floatToBFloat16(floatOf(0x00000001)), 0x0000); // denormal
  EXPECT_EQ(floatToBFloat16(floatOf(0x80008000)), 0x8000);
  uint16_t nan = floatToBFloat16(floatOf(0x7F800001));
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(nan)));
  EXPECT_EQ(bfloat16ToFloat(0x4049), floatOf(0x40490000));
  for (uint32_t b = 0; b <= 0xFFFF; ++b)
    if ((b & 0x7F80) != 0x7F80 || !(b & 0x7F))
      EXPECT_EQ(floatToBFloat16(bfloat16ToFloat(uint16_t(b))), b) << b;
}

// Tests the element conversions between arena dtypes.
TEST(HalfFloat, ConvertsElements) {
  std::vector<float> from = {1.0f, 0.1f, -70000.0f, 3.0f};
  std::vector<uint16_t> half(4), bf16(4);
  ASSERT_TRUE(convertElements(from.data(), TRAINCC_DTYPE_F32, half.data(),
                              TRAINCC_DTYPE_F16, 4));
  EXPECT_EQ(half, (std::vector<uint16_t>{0x3C00, 0x2E66, 0xFC00, 0x4200}));
  ASSERT_TRUE(convertElements(from.data(), TRAINCC_DTYPE_F32, bf16.data(),
                              TRAINCC_DTYPE_BF16, 4));
  EXPECT_EQ(bf16[0], 0x3F80);
  EXPECT_EQ(bf16[1], floatToBFloat16(0.1f));
  std::vector<float> back(4);
  ASSERT_TRUE(convertElements(half.data(), TRAINCC_DTYPE_F16, back.data(),
                              TRAINCC_DTYPE_F32, 4));
  EXPECT_EQ(back[3], 3.0f);
  EXPECT_EQ(back[2], -kInf);
  std::vector<double> wide(4);
  ASSERT_TRUE(convertElements(from.data(), TRAINCC_DTYPE_F32, wide.data(),
                              TRAINCC_DTYPE_F64, 4));
  EXPECT_EQ(wide[1], double(0.1f));
  int64_t ints[2] = {7, -1}, copied[2] = {};
  EXPECT_TRUE(convertElements(ints, TRAINCC_DTYPE_I64, copied,
                              TRAINCC_DTYPE_I64, 2));
  EXPECT_EQ(copied[1], -1);
  EXPECT_FALSE(convertElements(ints, TRAINCC_DTYPE_I64, back.data(),
                               TRAINCC_DTYPE_F32, 2));
}

// Tests refreshStateCopies: every tensor with a source is rewritten from
// it, converted; the others are left alone.
TEST(HalfFloat, RefreshesStateCopies) {
  static const int64_t kShape[] = {3};
  traincc_state_tensor state[] = {
      {"w", TRAINCC_STATE_TRAINABLE, TRAINCC_DTYPE_F32, 1, kShape, 0, 12, -1,
       -1},
      {"w.bf16", TRAINCC_STATE_WEIGHT_COPY, TRAINCC_DTYPE_BF16, 1, kShape, 64,
       6, -1, 0},
      {"w.f16", TRAINCC_STATE_WEIGHT_COPY, TRAINCC_DTYPE_F16, 1, kShape, 128,
       6, -1, 0},
      {"w.step_start", TRAINCC_STATE_STEP_BACKUP, TRAINCC_DTYPE_F32, 1,
       kShape, 192, 12, -1, 0},
      {"m", TRAINCC_STATE_RUNNING_MEAN, TRAINCC_DTYPE_F32, 1, kShape, 256, 12,
       -1, -1}};
  traincc_model model;
  std::memset(&model, 0, sizeof(model));
  model.num_state = 5;
  model.state = state;
  model.state_bytes = 320;
  std::vector<uint8_t> arena(320, 0xAB);
  float w[3] = {1.0f, -0.1f, 1e5f};
  std::memcpy(arena.data(), w, 12);
  EXPECT_EQ(refreshStateCopies(model, arena.data()), 3);
  uint16_t bf16[3], f16[3];
  std::memcpy(bf16, arena.data() + 64, 6);
  std::memcpy(f16, arena.data() + 128, 6);
  EXPECT_EQ(bf16[0], 0x3F80);
  EXPECT_EQ(bf16[1], floatToBFloat16(-0.1f));
  EXPECT_EQ(bf16[2], floatToBFloat16(1e5f));
  EXPECT_EQ(f16[0], 0x3C00);
  EXPECT_EQ(f16[2], 0x7C00); // beyond float16: infinity
  EXPECT_EQ(std::memcmp(arena.data() + 192, w, 12), 0);
  EXPECT_EQ(arena[256], 0xAB);
  EXPECT_EQ(bitsOf(w[0]), 0x3F800000u);
}

} // namespace
