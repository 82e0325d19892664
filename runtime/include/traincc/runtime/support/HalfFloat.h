//===- HalfFloat.h - float16 and bfloat16 conversions -----------*- C++ -*-===//
//
// The 16-bit float types of mixed precision as their bit patterns, in
// portable C++ (no _Float16 or compiler builtins). Narrowing rounds to
// nearest, ties to even, as the generated kernels' casts and PyTorch's
// `.to(dtype)` do: values beyond the range become infinities, NaN stays NaN
// (quiet, sign kept) and float16 keeps its subnormals. Widening is exact.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_SUPPORT_HALFFLOAT_H
#define TRAINCC_RUNTIME_SUPPORT_HALFFLOAT_H

#include <cstdint>

namespace traincc::rt {

uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);
uint16_t floatToBFloat16(float value);
float bfloat16ToFloat(uint16_t bits);

/// Element `i` of an array of traincc_dtype float type `dtype`, exactly as
/// a double; 0 for another dtype.
double loadElement(const uint8_t *data, int32_t dtype, int64_t i);

/// Converts `count` elements between traincc_dtype float types (F32, F64,
/// F16, BF16); the same dtype copies, I64 only to I64. False, with nothing
/// written, for another pair.
bool convertElements(const void *from, int32_t fromDtype, void *to,
                     int32_t toDtype, int64_t count);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_SUPPORT_HALFFLOAT_H
