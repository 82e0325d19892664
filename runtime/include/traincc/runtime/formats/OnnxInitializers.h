//===- OnnxInitializers.h - The initializers of an ONNX file -*- C++ -*-===//
//
// What --weights and --init-from read from an ONNX file: the main graph's
// initializers, by name, with their element type, dims and values (the
// reverse of OnnxExport.h, through the same wire-format codec, ProtoWire.h,
// so the trainer needs no libprotobuf). Values may be stored as raw_data
// (little-endian, what exports write) or in the typed field of their
// element type: float_data for float, int32_data for float16 and bfloat16
// (one value in the low 16 bits of each), int64_data, double_data.
// Initializers whose data lives in external files are an error when read,
// not when listed: a file may hold external constants the caller ignores.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_FORMATS_ONNXINITIALIZERS_H
#define TRAINCC_RUNTIME_FORMATS_ONNXINITIALIZERS_H

#include "traincc/runtime/support/Error.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace traincc::rt {

/// One initializer of a graph; `tensor` views the bytes it was parsed from
/// (a serialized TensorProto), which must outlive it.
struct OnnxInitializer {
  std::string name;
  int32_t elementType = 0; // TensorProto.DataType: 1 float, 7 int64, ...
  std::vector<int64_t> dims;
  bool externalData = false; // data_location EXTERNAL or external_data set
  std::string_view tensor;
};

/// The ONNX element type (TensorProto.DataType) of a traincc_dtype; 0 for
/// an unknown one.
int32_t onnxElementTypeOf(int32_t traincc_dtype);
/// "float", "int64", ... or "type N".
std::string onnxElementTypeName(int32_t elementType);

/// The initializers of the main graph of a serialized ModelProto, in file
/// order. Errors: malformed protobuf, no graph, two graphs.
Expected<std::vector<OnnxInitializer>>
readOnnxInitializers(std::string_view model);

/// The values of `init` in host byte order, `bytesPerElement` bytes each
/// (the size of its element type): exactly the element count of its dims.
/// Errors: external data, a count of values that does not match the dims,
/// values in a field that does not hold this element type.
Expected<std::vector<uint8_t>> readInitializerData(const OnnxInitializer &init,
                                                   int64_t bytesPerElement);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_FORMATS_ONNXINITIALIZERS_H
