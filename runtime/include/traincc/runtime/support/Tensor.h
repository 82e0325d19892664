//===- Tensor.h - Host tensors and element types ----------------*- C++ -*-===//
//
// Dense, C-ordered host arrays as the data layer hands them to the trainer.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_SUPPORT_TENSOR_H
#define TRAINCC_RUNTIME_SUPPORT_TENSOR_H

#include "traincc/runtime/support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace traincc::rt {

/// Element types the data files may hold.
enum class DType { Float32, Float64, Int64, Int32, UInt8 };

/// "float32", "int64", ...
const char *dtypeName(DType type);
/// Size of one element in bytes.
int64_t dtypeSize(DType type);

/// Product of `shape`, or an error when a dimension is negative or the
/// product exceeds `limit` (overflow included).
Expected<int64_t> checkedElementCount(const std::vector<int64_t> &shape,
                                      int64_t limit = INT64_MAX);

/// "[60000,1,28,28]".
std::string formatShape(const std::vector<int64_t> &shape);

/// A dense row-major array. `source` names where it came from (a file name
/// or "fashion-mnist train images") and prefixes every error about it.
template <typename T> struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<T> data;
  std::string source;

  int64_t numElements() const { return static_cast<int64_t>(data.size()); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
};

using FloatTensor = HostTensor<float>;
using Int64Tensor = HostTensor<int64_t>;

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_SUPPORT_TENSOR_H
