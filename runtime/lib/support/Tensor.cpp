//===- Tensor.cpp - Element types, shapes, number formatting -------------===//

#include "traincc/runtime/support/Tensor.h"

#include <charconv>
#include <cmath>

namespace traincc::rt {

std::string formatDouble(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  // std::to_chars without a precision gives the shortest text that round-trips
  // and never consults the locale.
  char buffer[64];
  std::to_chars_result result =
      std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

const char *dtypeName(DType type) {
  switch (type) {
  case DType::Float32:
    return "float32";
  case DType::Float64:
    return "float64";
  case DType::Int64:
    return "int64";
  case DType::Int32:
    return "int32";
  case DType::UInt8:
    return "uint8";
  }
  return "unknown";
}

int64_t dtypeSize(DType type) {
  switch (type) {
  case DType::Float32:
  case DType::Int32:
    return 4;
  case DType::Float64:
  case DType::Int64:
    return 8;
  case DType::UInt8:
    return 1;
  }
  return 1;
}

Expected<int64_t> checkedElementCount(const std::vector<int64_t> &shape,
                                      int64_t limit) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return makeError("negative dimension ", dim, " in shape ",
                       formatShape(shape));
    if (dim != 0 && count > limit / dim)
      return makeError("shape ", formatShape(shape), " is too large");
    count *= dim;
  }
  if (count > limit)
    return makeError("shape ", formatShape(shape), " is too large");
  return count;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ',';
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

} // namespace traincc::rt
