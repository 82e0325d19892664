//===- OnnxInitializers.cpp - The initializers of an ONNX file ------------===//

#include "traincc/runtime/formats/OnnxInitializers.h"

#include "support/ByteOrder.h"
#include "traincc/runtime/ModelABI.h"
#include "traincc/runtime/formats/ProtoWire.h"
#include "traincc/runtime/support/Tensor.h"

#include <cstring>

namespace traincc::rt {

namespace {

using proto::Field;
using proto::WireType;

// Field numbers and element types from onnx.proto.
constexpr uint32_t kModelGraph = 7;
constexpr uint32_t kGraphInitializer = 5;
namespace tensor_field {
constexpr uint32_t kDims = 1, kDataType = 2, kSegment = 3, kFloatData = 4,
                   kInt32Data = 5, kInt64Data = 7, kName = 8, kRawData = 9,
                   kDoubleData = 10, kExternalData = 13, kDataLocation = 14;
constexpr uint64_t kLocationExternal = 1;
} // namespace tensor_field
namespace onnx_type {
constexpr int32_t kFloat = 1, kInt64 = 7, kFloat16 = 10, kDouble = 11,
                  kBFloat16 = 16;
}

Expected<std::vector<Field>> parse(std::string_view bytes, const char *what) {
  Expected<std::vector<Field>> fields = proto::parseMessage(bytes);
  if (!fields)
    return fields.takeError().withContext(strCat("malformed ", what));
  return fields;
}

/// Appends the fixed-width values of a repeated float (4 bytes) or double
/// (8 bytes) field, packed or not, as host-order bit patterns.
Error appendFixed(const Field &f, int64_t width, std::vector<uint64_t> &out) {
  WireType single = width == 4 ? WireType::Fixed32 : WireType::Fixed64;
  if (f.type == single) {
    out.push_back(f.value);
    return Error::success();
  }
  if (f.type != WireType::LengthDelimited || f.bytes.size() % width != 0)
    return makeError("malformed packed ", width == 4 ? "float" : "double",
                     " values");
  const auto *p = reinterpret_cast<const unsigned char *>(f.bytes.data());
  for (size_t at = 0; at < f.bytes.size(); at += size_t(width))
    out.push_back(width == 4 ? loadLittleEndian32(p + at)
                             : loadLittleEndian64(p + at));
  return Error::success();
}

} // namespace

int32_t onnxElementTypeOf(int32_t dtype) {
  switch (dtype) {
  case TRAINCC_DTYPE_F32:
    return onnx_type::kFloat;
  case TRAINCC_DTYPE_F16:
    return onnx_type::kFloat16;
  case TRAINCC_DTYPE_BF16:
    return onnx_type::kBFloat16;
  case TRAINCC_DTYPE_F64:
    return onnx_type::kDouble;
  case TRAINCC_DTYPE_I64:
    return onnx_type::kInt64;
  }
  return 0;
}

std::string onnxElementTypeName(int32_t elementType) {
  static const char *const kNames[] = {
      "undefined", "float",  "uint8",  "int8",      "uint16",
      "int16",     "int32",  "int64",  "string",    "bool",
      "float16",   "double", "uint32", "uint64",    "complex64",
      "complex128", "bfloat16"};
  if (elementType >= 0 && elementType < int32_t(std::size(kNames)))
    return kNames[elementType];
  return strCat("type ", elementType);
}

Expected<std::vector<OnnxInitializer>>
readOnnxInitializers(std::string_view model) {
  Expected<std::vector<Field>> fields = parse(model, "ModelProto");
  if (!fields)
    return fields.takeError();
  std::string_view graph;
  bool sawGraph = false;
  for (const Field &f : *fields) {
    if (f.number != kModelGraph)
      continue;
    if (f.type != WireType::LengthDelimited || sawGraph)
      return makeError("ModelProto holds ",
                       sawGraph ? "two graphs" : "a malformed graph field");
    sawGraph = true;
    graph = f.bytes;
  }
  if (!sawGraph)
    return makeError("the ONNX model has no graph");
  Expected<std::vector<Field>> graphFields = parse(graph, "GraphProto");
  if (!graphFields)
    return graphFields.takeError();

  std::vector<OnnxInitializer> inits;
  for (const Field &f : *graphFields) {
    if (f.number != kGraphInitializer)
      continue;
    if (f.type != WireType::LengthDelimited)
      return makeError("malformed initializer field");
    Expected<std::vector<Field>> tensor = parse(f.bytes, "TensorProto");
    if (!tensor)
      return tensor.takeError();
    OnnxInitializer init;
    init.tensor = f.bytes;
    std::vector<uint64_t> dims;
    for (const Field &t : *tensor) {
      switch (t.number) {
      case tensor_field::kDims:
        if (Error err = proto::appendVarints(t, dims))
          return std::move(err).withContext("malformed initializer dims");
        break;
      case tensor_field::kDataType:
        if (t.type == WireType::Varint)
          init.elementType = int32_t(t.value);
        break;
      case tensor_field::kName:
        if (t.type == WireType::LengthDelimited)
          init.name = std::string(t.bytes);
        break;
      case tensor_field::kExternalData:
        init.externalData = true;
        break;
      case tensor_field::kDataLocation:
        if (t.type == WireType::Varint &&
            t.value == tensor_field::kLocationExternal)
          init.externalData = true;
        break;
      default:
        break;
      }
    }
    for (uint64_t d : dims)
      init.dims.push_back(int64_t(d)); // negative dims are caught by the
                                       // element count
    inits.push_back(std::move(init));
  }
  return inits;
}

Expected<std::vector<uint8_t>> readInitializerData(const OnnxInitializer &init,
                                                   int64_t bytesPerElement) {
  if (init.externalData)
    return makeError("initializer '", init.name,
                     "' keeps its data in an external file, which is not "
                     "supported (save the model with its data inside, e.g. "
                     "onnx.save(model, path, save_as_external_data=False))");
  Expected<int64_t> count = checkedElementCount(init.dims);
  if (!count)
    return count.takeError().withContext(
        strCat("initializer '", init.name, "'"));
  Expected<std::vector<Field>> tensor = parse(init.tensor, "TensorProto");
  if (!tensor)
    return tensor.takeError();

  std::string_view raw;
  bool hasRaw = false;
  std::vector<uint64_t> typed; // values of the typed field, host order
  for (const Field &t : *tensor) {
    Error err;
    switch (t.number) {
    case tensor_field::kSegment:
      return makeError("initializer '", init.name,
                       "' is segmented, which is not supported");
    case tensor_field::kRawData:
      raw = t.bytes;
      hasRaw = t.type == WireType::LengthDelimited;
      break;
    case tensor_field::kFloatData:
      if (init.elementType == onnx_type::kFloat)
        err = appendFixed(t, 4, typed);
      break;
    case tensor_field::kDoubleData:
      if (init.elementType == onnx_type::kDouble)
        err = appendFixed(t, 8, typed);
      break;
    case tensor_field::kInt32Data:
      if (init.elementType == onnx_type::kFloat16 ||
          init.elementType == onnx_type::kBFloat16)
        err = proto::appendVarints(t, typed);
      break;
    case tensor_field::kInt64Data:
      if (init.elementType == onnx_type::kInt64)
        err = proto::appendVarints(t, typed);
      break;
    default:
      break;
    }
    if (err)
      return std::move(err).withContext(
          strCat("initializer '", init.name, "'"));
  }

  std::vector<uint8_t> data(size_t(*count * bytesPerElement));
  if (hasRaw) {
    if (int64_t(raw.size()) != *count * bytesPerElement)
      return makeError("initializer '", init.name, "' holds ",
                       int64_t(raw.size()), " bytes of raw data, its dims ",
                       formatShape(init.dims), " need ",
                       *count * bytesPerElement);
    std::memcpy(data.data(), raw.data(), raw.size());
    // raw_data is little-endian.
    if (!kHostIsLittleEndian)
      byteSwapElements(data.data(), *count, bytesPerElement);
    return data;
  }
  if (int64_t(typed.size()) != *count)
    return makeError("initializer '", init.name, "' holds ",
                     int64_t(typed.size()), " values, its dims ",
                     formatShape(init.dims), " need ", *count);
  for (int64_t i = 0; i < *count; ++i) {
    uint8_t *to = data.data() + i * bytesPerElement;
    if (bytesPerElement == 2) {
      uint16_t v = uint16_t(typed[size_t(i)]);
      std::memcpy(to, &v, 2);
    } else if (bytesPerElement == 4) {
      uint32_t v = uint32_t(typed[size_t(i)]);
      std::memcpy(to, &v, 4);
    } else {
      std::memcpy(to, &typed[size_t(i)], 8);
    }
  }
  return data;
}

} // namespace traincc::rt
