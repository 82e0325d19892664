//===- Random.h - A random generator defined bit for bit --------*- C++ -*-===//
//
// Data order must be identical on every platform and with every standard
// library, so the runtime does not use <random>'s distributions (their
// algorithms are unspecified). SplitMix64 (Steele, Lea, Flood 2014) is
// defined here completely: state += 0x9E3779B97F4A7C15, then a fixed mix of
// the state is the output. Its single 64-bit state is trivially saved in a
// checkpoint.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_SUPPORT_RANDOM_H
#define TRAINCC_RUNTIME_SUPPORT_RANDOM_H

#include <cstdint>

namespace traincc::rt {

class SplitMix64 {
public:
  static constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;

  explicit SplitMix64(uint64_t state) : state_(state) {}

  /// The SplitMix64 output function.
  static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  uint64_t next() {
    state_ += kGamma;
    return mix(state_);
  }

  /// The k-th output (k >= 1) of a generator seeded with `seed`, without
  /// stepping through the first k-1.
  static uint64_t nthOutput(uint64_t seed, uint64_t k) {
    return mix(seed + k * kGamma);
  }

  /// Uniform integer in [0, bound) for bound >= 1, without modulo bias:
  /// Lemire's multiply-and-reject method, each step fully specified.
  uint64_t below(uint64_t bound) {
    if (bound <= 1)
      return 0;
    unsigned __int128 product = (unsigned __int128)next() * bound;
    uint64_t low = static_cast<uint64_t>(product);
    if (low < bound) {
      uint64_t threshold = (0 - bound) % bound;
      while (low < threshold) {
        product = (unsigned __int128)next() * bound;
        low = static_cast<uint64_t>(product);
      }
    }
    return static_cast<uint64_t>(product >> 64);
  }

  /// Uniform double in [0, 1) with 53 random bits.
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  uint64_t state() const { return state_; }

private:
  uint64_t state_;
};

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_SUPPORT_RANDOM_H
