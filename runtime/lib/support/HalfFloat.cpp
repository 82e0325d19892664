//===- HalfFloat.cpp - float16 and bfloat16 conversions -------------------===//

#include "traincc/runtime/support/HalfFloat.h"

#include "traincc/runtime/ModelABI.h"

#include <cmath>
#include <cstring>

namespace traincc::rt {

namespace {

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

/// `value >> shift` rounded to nearest, ties to even (0 < shift < 32).
uint32_t shiftRoundingToEven(uint32_t value, unsigned shift) {
  uint32_t result = value >> shift;
  uint32_t rest = value & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (result & 1)))
    ++result;
  return result;
}

void storeElement(uint8_t *data, int32_t dtype, int64_t i, double value) {
  switch (dtype) {
  case TRAINCC_DTYPE_F32: {
    float v = float(value);
    std::memcpy(data + 4 * i, &v, 4);
    return;
  }
  case TRAINCC_DTYPE_F64:
    std::memcpy(data + 8 * i, &value, 8);
    return;
  case TRAINCC_DTYPE_F16:
  case TRAINCC_DTYPE_BF16: {
    // Through float: exact from the float types mixed precision converts
    // (float32 masters); a float64 source would round twice.
    uint16_t v = dtype == TRAINCC_DTYPE_F16 ? floatToHalf(float(value))
                                            : floatToBFloat16(float(value));
    std::memcpy(data + 2 * i, &v, 2);
    return;
  }
  }
}

bool isFloatDtype(int32_t dtype) {
  return dtype == TRAINCC_DTYPE_F32 || dtype == TRAINCC_DTYPE_F64 ||
         dtype == TRAINCC_DTYPE_F16 || dtype == TRAINCC_DTYPE_BF16;
}

int64_t elementSize(int32_t dtype) {
  return dtype == TRAINCC_DTYPE_F32                                   ? 4
         : dtype == TRAINCC_DTYPE_F64 || dtype == TRAINCC_DTYPE_I64 ? 8
                                                                      : 2;
}

} // namespace

double loadElement(const uint8_t *data, int32_t dtype, int64_t i) {
  switch (dtype) {
  case TRAINCC_DTYPE_F32: {
    float v;
    std::memcpy(&v, data + 4 * i, 4);
    return v;
  }
  case TRAINCC_DTYPE_F64: {
    double v;
    std::memcpy(&v, data + 8 * i, 8);
    return v;
  }
  case TRAINCC_DTYPE_F16:
  case TRAINCC_DTYPE_BF16: {
    uint16_t v;
    std::memcpy(&v, data + 2 * i, 2);
    return dtype == TRAINCC_DTYPE_F16 ? halfToFloat(v) : bfloat16ToFloat(v);
  }
  }
  return 0;
}

uint16_t floatToHalf(float value) {
  uint32_t bits = bitsOf(value);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  uint32_t abs = bits & 0x7FFFFFFF;
  if (abs > 0x7F800000) // NaN: quiet, with the payload's top bits
    return uint16_t(sign | 0x7E00 | ((abs >> 13) & 0x3FF));
  if (abs >= 0x47800000) // 2^16 and beyond, infinity included
    return uint16_t(sign | 0x7C00);
  if (abs >= 0x38800000) // normal in float16 (2^-14 and up): rebias the
    // exponent by 127 - 15; a carry out of the mantissa is the right
    // result, up to infinity for [65520, 65536).
    return uint16_t(sign | shiftRoundingToEven(abs - 0x38000000, 13));
  if (abs <= 0x33000000) // at most 2^-25, half the smallest subnormal
    return sign;
  // Subnormal: the 24-bit significand times 2^(e - 150) in units of 2^-24.
  uint32_t exponent = abs >> 23;
  uint32_t significand = (abs & 0x7FFFFF) | 0x800000;
  return uint16_t(sign | shiftRoundingToEven(significand, 126 - exponent));
}

float halfToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1F;
  uint32_t mantissa = bits & 0x3FF;
  if (exponent == 31) // infinity or NaN (payload kept)
    return floatOf(sign | 0x7F800000 | (mantissa << 13));
  float value = exponent == 0
                    ? std::ldexp(float(mantissa), -24)
                    : std::ldexp(float(mantissa | 0x400), int(exponent) - 25);
  return sign ? -value : value;
}

uint16_t floatToBFloat16(float value) {
  uint32_t bits = bitsOf(value);
  if ((bits & 0x7FFFFFFF) > 0x7F800000) // NaN: keep it one after truncation
    return uint16_t((bits >> 16) | 0x40);
  // Overflow carries into the exponent and gives infinity.
  return uint16_t(shiftRoundingToEven(bits, 16));
}

float bfloat16ToFloat(uint16_t bits) { return floatOf(uint32_t(bits) << 16); }

bool convertElements(const void *from, int32_t fromDtype, void *to,
                     int32_t toDtype, int64_t count) {
  if (fromDtype == toDtype && (isFloatDtype(fromDtype) ||
                               fromDtype == TRAINCC_DTYPE_I64)) {
    std::memmove(to, from, size_t(count * elementSize(fromDtype)));
    return true;
  }
  if (!isFloatDtype(fromDtype) || !isFloatDtype(toDtype))
    return false;
  const uint8_t *source = static_cast<const uint8_t *>(from);
  uint8_t *destination = static_cast<uint8_t *>(to);
  if (fromDtype == TRAINCC_DTYPE_F32 && toDtype == TRAINCC_DTYPE_BF16) {
    // The common case (bf16 weight copies) without the per-element switch.
    for (int64_t i = 0; i < count; ++i) {
      float v;
      std::memcpy(&v, source + 4 * i, 4);
      uint16_t h = floatToBFloat16(v);
      std::memcpy(destination + 2 * i, &h, 2);
    }
    return true;
  }
  for (int64_t i = 0; i < count; ++i)
    storeElement(destination, toDtype, i, loadElement(source, fromDtype, i));
  return true;
}

} // namespace traincc::rt

#if defined(__x86_64__)
/// LLVM's x86 backend, on CPUs without AVX512-BF16 (traincc --cpu x86-64,
/// x86-64-v3), promotes some bf16 vector operations (selects, stores of
/// shuffled values) through f32 and rounds back with this libcall, which
/// Debian 12's libgcc (GCC 12) lacks. The psABI returns a __bf16 in the low
/// 16 bits of xmm0, where a float return puts its low bits too.
extern "C" float __truncsfbf2(float value) {
  uint32_t bits = traincc::rt::floatToBFloat16(value);
  float result;
  std::memcpy(&result, &bits, sizeof(result));
  return result;
}
#endif
