//===- OnnxExport.cpp - --export: the trained model as ONNX ---------------===//

#include "traincc/runtime/formats/OnnxExport.h"

#include "traincc/runtime/formats/ProtoWire.h"
#include "traincc/runtime/support/File.h"
#include "traincc/runtime/support/Tensor.h"

#include <cstring>
#include <map>
#include <set>

namespace traincc::rt {

namespace {

using proto::Field;
using proto::WireType;

// Field numbers from onnx.proto.
namespace model_field {
constexpr uint32_t kGraph = 7;
}
namespace graph_field {
constexpr uint32_t kNode = 1, kInitializer = 5, kOutput = 12, kValueInfo = 13;
}
namespace node_field {
constexpr uint32_t kInput = 1, kOutput = 2, kName = 3, kOpType = 4,
                   kAttribute = 5, kDomain = 7;
}
namespace tensor_field {
constexpr uint32_t kDims = 1, kDataType = 2, kSegment = 3, kFloatData = 4,
                   kInt32Data = 5, kStringData = 6, kInt64Data = 7, kName = 8,
                   kRawData = 9, kDoubleData = 10, kUint64Data = 11,
                   kExternalData = 13, kDataLocation = 14;
constexpr uint64_t kFloat = 1;
} // namespace tensor_field
constexpr uint32_t kNameField = 1; // ValueInfoProto.name, AttributeProto.name

/// The last value of a string field (protobuf: the last one wins).
std::string_view stringField(const std::vector<Field> &fields,
                             uint32_t number) {
  std::string_view value;
  for (const Field &f : fields)
    if (f.number == number && f.type == WireType::LengthDelimited)
      value = f.bytes;
  return value;
}

Expected<std::vector<Field>> parse(std::string_view bytes, const char *what) {
  Expected<std::vector<Field>> fields = proto::parseMessage(bytes);
  if (!fields)
    return fields.takeError().withContext(strCat("malformed ", what));
  return fields;
}

bool isBatchNorm(const std::vector<Field> &node) {
  std::string_view domain = stringField(node, node_field::kDomain);
  return stringField(node, node_field::kOpType) == "BatchNormalization" &&
         (domain.empty() || domain == "ai.onnx");
}

std::string nodeLabel(const std::vector<Field> &node) {
  std::string_view name = stringField(node, node_field::kName);
  return strCat(stringField(node, node_field::kOpType), " node",
                name.empty() ? "" : strCat(" '", name, "'"));
}

/// A BatchNormalization node in inference mode: no training_mode, only
/// output 0.
Expected<std::string> rewriteBatchNorm(const std::vector<Field> &node) {
  proto::Writer out;
  bool firstOutput = true;
  for (const Field &f : node) {
    if (f.number == node_field::kOutput) {
      if (firstOutput)
        out.raw(f.raw);
      firstOutput = false;
      continue;
    }
    if (f.number == node_field::kAttribute &&
        f.type == WireType::LengthDelimited) {
      Expected<std::vector<Field>> attribute = parse(f.bytes, "attribute");
      if (!attribute)
        return attribute.takeError();
      if (stringField(*attribute, kNameField) == "training_mode")
        continue;
    }
    out.raw(f.raw);
  }
  return out.take();
}

/// The initializer with its data replaced by `value`.
Expected<std::string> rewriteInitializer(const std::vector<Field> &tensor,
                                         const InitializerValue &value) {
  std::vector<uint64_t> dims;
  uint64_t dataType = 0;
  for (const Field &f : tensor) {
    if (f.number == tensor_field::kDims) {
      if (Error err = proto::appendVarints(f, dims))
        return std::move(err).withContext(strCat("initializer '", value.name, "'"));
    } else if (f.number == tensor_field::kDataType &&
               f.type == WireType::Varint) {
      dataType = f.value;
    }
  }
  if (dataType != tensor_field::kFloat)
    return makeError("initializer '", value.name, "' has ONNX element type ",
                     int64_t(dataType), "; only float (1) can take trained "
                     "float32 values");
  std::vector<int64_t> onnxShape(dims.begin(), dims.end());
  if (onnxShape != value.shape)
    return makeError("initializer '", value.name, "' has dims ",
                     formatShape(onnxShape), ", the trained tensor is ",
                     formatShape(value.shape));

  proto::Writer out;
  for (const Field &f : tensor) {
    switch (f.number) {
    case tensor_field::kSegment:
    case tensor_field::kFloatData:
    case tensor_field::kInt32Data:
    case tensor_field::kStringData:
    case tensor_field::kInt64Data:
    case tensor_field::kRawData:
    case tensor_field::kDoubleData:
    case tensor_field::kUint64Data:
    case tensor_field::kExternalData:
    case tensor_field::kDataLocation:
      continue; // replaced by raw_data below
    default:
      out.raw(f.raw);
    }
  }
  int64_t elements = *checkedElementCount(value.shape);
  std::string raw(size_t(elements) * 4, '\0');
  // ONNX raw_data is little-endian.
  for (int64_t i = 0; i < elements; ++i) {
    uint32_t bits;
    std::memcpy(&bits, value.data + i, 4);
    for (int b = 0; b < 4; ++b)
      raw[size_t(i * 4 + b)] = static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  out.bytes(tensor_field::kRawData, raw);
  return out.take();
}

Expected<std::string>
rewriteGraph(std::string_view graphBytes,
             const std::vector<InitializerValue> &values) {
  Expected<std::vector<Field>> graph = parse(graphBytes, "GraphProto");
  if (!graph)
    return graph.takeError();

  // Pass 1: the BN outputs that go away, and who reads them.
  std::set<std::string, std::less<>> dropped;
  std::vector<std::vector<Field>> nodes;
  for (const Field &f : *graph) {
    if (f.number != graph_field::kNode)
      continue;
    Expected<std::vector<Field>> node = parse(f.bytes, "NodeProto");
    if (!node)
      return node.takeError();
    if (isBatchNorm(*node)) {
      bool first = true;
      for (const Field &out : *node)
        if (out.number == node_field::kOutput) {
          if (!first && !out.bytes.empty())
            dropped.insert(std::string(out.bytes));
          first = false;
        }
    }
    nodes.push_back(node.take());
  }
  for (const std::vector<Field> &node : nodes)
    for (const Field &in : node)
      if (in.number == node_field::kInput && dropped.count(in.bytes))
        return makeError(nodeLabel(node), " reads '", in.bytes,
                         "', a training-mode output of BatchNormalization "
                         "that inference mode does not have");

  std::map<std::string, const InitializerValue *, std::less<>> byName;
  for (const InitializerValue &value : values)
    byName[value.name] = &value;
  std::set<std::string, std::less<>> replaced;

  // Pass 2: write the graph.
  proto::Writer out;
  size_t nodeIndex = 0;
  for (const Field &f : *graph) {
    switch (f.number) {
    case graph_field::kNode: {
      const std::vector<Field> &node = nodes[nodeIndex++];
      if (!isBatchNorm(node)) {
        out.raw(f.raw);
        break;
      }
      Expected<std::string> rewritten = rewriteBatchNorm(node);
      if (!rewritten)
        return rewritten.takeError().withContext(nodeLabel(node));
      out.bytes(graph_field::kNode, *rewritten);
      break;
    }
    case graph_field::kInitializer: {
      Expected<std::vector<Field>> tensor = parse(f.bytes, "TensorProto");
      if (!tensor)
        return tensor.takeError();
      auto it = byName.find(stringField(*tensor, tensor_field::kName));
      if (it == byName.end()) {
        out.raw(f.raw);
        break;
      }
      Expected<std::string> rewritten = rewriteInitializer(*tensor, *it->second);
      if (!rewritten)
        return rewritten.takeError();
      out.bytes(graph_field::kInitializer, *rewritten);
      replaced.insert(it->first);
      break;
    }
    case graph_field::kOutput:
    case graph_field::kValueInfo: {
      Expected<std::vector<Field>> info = parse(f.bytes, "ValueInfoProto");
      if (!info)
        return info.takeError();
      if (!dropped.count(stringField(*info, kNameField)))
        out.raw(f.raw);
      break;
    }
    default:
      out.raw(f.raw);
    }
  }
  for (const InitializerValue &value : values)
    if (!replaced.count(value.name))
      return makeError("state tensor '", value.name,
                       "' has no initializer of that name in the graph");
  return out.take();
}

} // namespace

Expected<std::string>
rewriteOnnxForExport(std::string_view model,
                     const std::vector<InitializerValue> &values) {
  Expected<std::vector<Field>> fields = parse(model, "ModelProto");
  if (!fields)
    return fields.takeError();
  proto::Writer out;
  bool sawGraph = false;
  for (const Field &f : *fields) {
    if (f.number != model_field::kGraph) {
      out.raw(f.raw);
      continue;
    }
    if (f.type != WireType::LengthDelimited || sawGraph)
      return makeError("ModelProto holds ", sawGraph ? "two graphs" : "a "
                       "malformed graph field");
    sawGraph = true;
    Expected<std::string> graph = rewriteGraph(f.bytes, values);
    if (!graph)
      return graph.takeError();
    out.bytes(model_field::kGraph, *graph);
  }
  if (!sawGraph)
    return makeError("the ONNX model has no graph");
  return out.take();
}

Expected<std::vector<InitializerValue>>
exportedStateTensors(const traincc_model &model, const ModelMemory &memory) {
  std::vector<InitializerValue> values;
  for (int32_t i = 0; i < model.num_state; ++i) {
    const traincc_state_tensor &t = model.state[i];
    if (t.kind != TRAINCC_STATE_TRAINABLE && t.kind != TRAINCC_STATE_FROZEN &&
        t.kind != TRAINCC_STATE_RUNNING_MEAN &&
        t.kind != TRAINCC_STATE_RUNNING_VAR)
      continue;
    if (t.dtype != TRAINCC_DTYPE_F32)
      return makeError("state tensor '", t.name, "' is ",
                       abiDtypeName(t.dtype),
                       "; export writes float32 tensors only");
    values.push_back({t.name, shapeOf(t), memory.floatTensor(model, i)});
  }
  return values;
}

Error exportOnnx(const traincc_model &model, const ModelMemory &memory,
                 AtomicFileWriter &writer) {
  auto fail = [&](Error err) { return std::move(err).withContext("--export"); };
  if (!model.onnx_model || model.onnx_model_bytes == 0)
    return fail(makeError("this trainer carries no ONNX model"));
  Expected<std::vector<InitializerValue>> values =
      exportedStateTensors(model, memory);
  if (!values)
    return fail(values.takeError());
  Expected<std::string> bytes = rewriteOnnxForExport(
      std::string_view(reinterpret_cast<const char *>(model.onnx_model),
                       size_t(model.onnx_model_bytes)),
      *values);
  if (!bytes)
    return fail(bytes.takeError());
  if (Error err = writer.write(bytes->data(), int64_t(bytes->size())))
    return fail(std::move(err));
  if (Error err = writer.commit())
    return fail(std::move(err));
  return Error::success();
}

} // namespace traincc::rt
