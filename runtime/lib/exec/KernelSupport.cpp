//===- KernelSupport.cpp - functions generated kernels call ---------------===//
//
// MLIR's memref lowering calls `memrefCopy` for copies between strided
// (non-contiguous) buffers, e.g. writing a padded convolution input into a
// subview. Upstream provides it in libmlir_c_runner_utils; a trainer must
// not depend on MLIR, so the runtime defines the same C symbol.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstring>

namespace {

/// The ABI of an unranked memref: its rank and a pointer to the ranked
/// descriptor {allocated, aligned, offset, sizes[rank], strides[rank]}.
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

struct RankedView {
  char *data;
  const int64_t *sizes;
  const int64_t *strides;
};

RankedView viewOf(const UnrankedMemRef &memref, int64_t elementSize) {
  auto *fields = static_cast<int64_t *>(memref.descriptor);
  char *aligned = reinterpret_cast<char *>(fields[1]);
  int64_t offset = fields[2];
  return {aligned + offset * elementSize, fields + 3,
          fields + 3 + memref.rank};
}

/// Copies the innermost axes recursively; contiguous rows use memcpy.
void copyAxis(int64_t axis, int64_t rank, int64_t elementSize, char *dst,
              const int64_t *dstStrides, const char *src,
              const int64_t *srcStrides, const int64_t *sizes) {
  if (axis == rank) {
    std::memcpy(dst, src, elementSize);
    return;
  }
  if (axis == rank - 1 && dstStrides[axis] == 1 && srcStrides[axis] == 1) {
    std::memcpy(dst, src, sizes[axis] * elementSize);
    return;
  }
  for (int64_t i = 0; i < sizes[axis]; ++i)
    copyAxis(axis + 1, rank, elementSize,
             dst + i * dstStrides[axis] * elementSize, dstStrides,
             src + i * srcStrides[axis] * elementSize, srcStrides, sizes);
}

} // namespace

extern "C" void memrefCopy(int64_t elementSize, UnrankedMemRef *source,
                           UnrankedMemRef *destination) {
  RankedView src = viewOf(*source, elementSize);
  RankedView dst = viewOf(*destination, elementSize);
  int64_t rank = source->rank;
  for (int64_t axis = 0; axis < rank; ++axis)
    if (src.sizes[axis] == 0)
      return;
  copyAxis(0, rank, elementSize, dst.data, dst.strides, src.data, src.strides,
           src.sizes);
}
