//===- FakeKernels.h - CPU "kernels" of the fake CUDA driver ----*- C++ -*-===//
//
// The fake driver (FakeCuda.cpp) runs a kernel by looking its name up here.
// Each kernel receives its arguments as 8-byte slots (pointers, int64, or a
// float in the low 4 bytes) in declaration order; `signature` says which
// slots are device pointers ('p'), integers ('i') or floats ('f'), so the
// driver can check pointers against its allocations before running it.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_TEST_FAKECUDA_FAKEKERNELS_H
#define TRAINCC_TEST_FAKECUDA_FAKEKERNELS_H

#include <cstdint>
#include <cstring>
#include <vector>

namespace fakecuda {

struct KernelArgs {
  std::vector<uint64_t> slots;

  template <typename T> T *ptr(size_t i) const {
    return reinterpret_cast<T *>(uintptr_t(slots[i]));
  }
  int64_t i64(size_t i) const { return int64_t(slots[i]); }
  float f32(size_t i) const {
    float value;
    std::memcpy(&value, &slots[i], sizeof(value));
    return value;
  }
};

struct KernelDef {
  const char *name;
  const char *signature;
  void (*run)(const KernelArgs &args);
};

/// The kernel called `name`, or null.
const KernelDef *findKernel(const char *name);

} // namespace fakecuda

#endif // TRAINCC_TEST_FAKECUDA_FAKEKERNELS_H
