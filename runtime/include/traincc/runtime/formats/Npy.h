//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Reads .npy format versions 1.0, 2.0 and 3.0 (C order only) and writes
// version 1.0 (2.0 when the header needs it).
//
// Element-type rules, applied by the typed readers:
//   readNpyFloat32 (inputs, float targets):
//     float32          as stored;
//     float64          rounded to nearest float32; a finite value beyond the
//                      float32 range is an error (it would become inf);
//     uint8, int32     converted by value (uint8 images stay 0..255: the
//                      data layer divides them by 255 only when asked to,
//                      with --scale, and warns otherwise; see
//                      readNpyAsFloat32); an int32 beyond +-2^24 is an
//                      error, float32 cannot hold it exactly;
//     int64            an error: int64 is the label type, so an int64 input
//                      file is almost always the labels passed by mistake;
//     anything else    an error naming the stored type.
//   readNpyInt64 (class labels):
//     int64 as stored; int32 and uint8 widened; floating point is an error
//     (class labels are integers; float targets go with an MSE loss).
//   readNpyIds (inputs of a model whose input is integer, e.g. token ids):
//     the same widening as readNpyInt64; floating point is an error.
// Byte order '<', '>' (swapped on read) and '|' (one-byte types) are accepted.
// The data must fill the file exactly: short files are "truncated", extra
// bytes are an error too. No buffer larger than the file is ever allocated.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_FORMATS_NPY_H
#define TRAINCC_RUNTIME_FORMATS_NPY_H

#include "traincc/runtime/support/Error.h"
#include "traincc/runtime/support/Tensor.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace traincc::rt {

/// What the header dictionary of an .npy file declares.
struct NpyHeader {
  /// The 'descr' text as stored, e.g. "<f4".
  std::string descr;
  /// The element type when it is one the runtime reads; empty otherwise.
  std::optional<DType> dtype;
  /// True when the stored byte order differs from the host's.
  bool byteSwapped = false;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// Parses the dictionary text of an .npy header, e.g.
///   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
/// Exactly the three keys are required; structured dtypes, unknown keys,
/// malformed literals and dimensions beyond int64 are errors.
Expected<NpyHeader> parseNpyHeaderDict(std::string_view text);

/// "<i8 (int64)", "<f2 (float16)", or the quoted descr when it is unknown.
std::string describeNpyDescr(std::string_view descr);

/// Reads an .npy file as float32 (rules above).
Expected<FloatTensor> readNpyFloat32(const std::string &path);

/// readNpyFloat32's result with the element type the file stored, for
/// callers whose treatment depends on it (uint8 images want scaling).
struct NpyFloatArray {
  FloatTensor tensor;
  DType storedType = DType::Float32;
};
Expected<NpyFloatArray> readNpyAsFloat32(const std::string &path);
/// Reads an .npy file as int64 (rules above).
Expected<Int64Tensor> readNpyInt64(const std::string &path);
/// Reads an .npy file of integer inputs as int64 (rules above).
Expected<Int64Tensor> readNpyIds(const std::string &path);

/// Writes little-endian float32 / int64 .npy files atomically.
Error writeNpy(const std::string &path, const std::vector<int64_t> &shape,
               const float *data);
Error writeNpy(const std::string &path, const std::vector<int64_t> &shape,
               const int64_t *data);
inline Error writeNpy(const std::string &path, const FloatTensor &tensor) {
  return writeNpy(path, tensor.shape, tensor.data.data());
}
inline Error writeNpy(const std::string &path, const Int64Tensor &tensor) {
  return writeNpy(path, tensor.shape, tensor.data.data());
}

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_FORMATS_NPY_H
