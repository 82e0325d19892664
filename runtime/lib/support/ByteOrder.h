//===- ByteOrder.h - Endianness helpers (runtime-private) -------*- C++ -*-===//

#ifndef TRAINCC_RUNTIME_LIB_SUPPORT_BYTEORDER_H
#define TRAINCC_RUNTIME_LIB_SUPPORT_BYTEORDER_H

#include <cstdint>
#include <utility>

namespace traincc::rt {

constexpr bool kHostIsLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

/// Reverses the bytes of each of `count` elements of `elementSize` bytes.
inline void byteSwapElements(void *data, int64_t count, int64_t elementSize) {
  auto *bytes = static_cast<unsigned char *>(data);
  for (int64_t i = 0; i < count; ++i) {
    unsigned char *element = bytes + i * elementSize;
    for (int64_t lo = 0, hi = elementSize - 1; lo < hi; ++lo, --hi)
      std::swap(element[lo], element[hi]);
  }
}

inline uint32_t loadBigEndian32(const unsigned char *p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) |
         (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

inline uint32_t loadLittleEndian32(const unsigned char *p) {
  return (uint32_t(p[3]) << 24) | (uint32_t(p[2]) << 16) |
         (uint32_t(p[1]) << 8) | uint32_t(p[0]);
}

inline uint64_t loadLittleEndian64(const unsigned char *p) {
  return uint64_t(loadLittleEndian32(p)) |
         (uint64_t(loadLittleEndian32(p + 4)) << 32);
}

inline void storeLittleEndian32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = static_cast<unsigned char>(v >> (8 * i));
}

inline void storeLittleEndian64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = static_cast<unsigned char>(v >> (8 * i));
}

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_LIB_SUPPORT_BYTEORDER_H
