//===- OnnxExport.cpp - --export: the trained model as ONNX ---------------===//

#include "traincc/runtime/formats/OnnxExport.h"

#include "traincc/runtime/formats/ProtoWire.h"
#include "traincc/runtime/support/File.h"
#include "traincc/runtime/support/Tensor.h"

#include <cmath>
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
constexpr uint32_t kNode = 1, kInitializer = 5, kInput = 11, kOutput = 12,
                   kValueInfo = 13;
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
namespace attribute_field {
constexpr uint32_t kFloat = 2, kGraph = 6, kGraphs = 11;
}

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

/// Every value of a repeated string field, in order.
std::vector<std::string_view> stringFields(const std::vector<Field> &fields,
                                           uint32_t number) {
  std::vector<std::string_view> values;
  for (const Field &f : fields)
    if (f.number == number && f.type == WireType::LengthDelimited)
      values.push_back(f.bytes);
  return values;
}

bool isOp(const std::vector<Field> &node, std::string_view opType) {
  std::string_view domain = stringField(node, node_field::kDomain);
  return stringField(node, node_field::kOpType) == opType &&
         (domain.empty() || domain == "ai.onnx");
}

bool isBatchNorm(const std::vector<Field> &node) {
  return isOp(node, "BatchNormalization");
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

/// `count` floats as ONNX raw_data (little-endian).
std::string rawFloat32(const float *data, int64_t count) {
  std::string raw(size_t(count) * 4, '\0');
  for (int64_t i = 0; i < count; ++i) {
    uint32_t bits;
    std::memcpy(&bits, data + i, 4);
    for (int b = 0; b < 4; ++b)
      raw[size_t(i * 4 + b)] = static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  return raw;
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
  out.bytes(tensor_field::kRawData,
            rawFloat32(value.data, *checkedElementCount(value.shape)));
  return out.take();
}

//===----------------------------------------------------------------------===//
// BatchNormalization folded into the convolution before it
//===----------------------------------------------------------------------===//

/// A float32 tensor the fold computed.
struct FoldedTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

/// What folding changes in the graph, by node index and value name.
struct BatchNormFolds {
  std::set<size_t> removedNodes;                // the folded BatchNorms
  std::map<size_t, std::string> rewrittenNodes; // their convolutions
  std::map<std::string, FoldedTensor, std::less<>> newValues; // W', b'
  std::vector<std::pair<std::string, FoldedTensor>> addedBiases;
  std::set<std::string, std::less<>> removedInitializers; // scale, B, mean, var
  std::set<std::string, std::less<>> removedValueInfo; // convs' old outputs
};

/// BatchNormalization's epsilon attribute (default 1e-5).
float epsilonOf(const std::vector<Field> &node) {
  float epsilon = 1e-5f;
  for (const Field &f : node) {
    if (f.number != node_field::kAttribute ||
        f.type != WireType::LengthDelimited)
      continue;
    Expected<std::vector<Field>> attribute = proto::parseMessage(f.bytes);
    if (!attribute || stringField(*attribute, kNameField) != "epsilon")
      continue;
    for (const Field &a : *attribute)
      if (a.number == attribute_field::kFloat && a.type == WireType::Fixed32) {
        uint32_t bits = uint32_t(a.value);
        std::memcpy(&epsilon, &bits, 4);
      }
  }
  return epsilon;
}

/// Whether `node` has a graph attribute (If, Loop, Scan), whose body may
/// read any value of the outer graph by name.
bool hasSubgraph(const std::vector<Field> &node) {
  for (const Field &f : node) {
    if (f.number != node_field::kAttribute ||
        f.type != WireType::LengthDelimited)
      continue;
    Expected<std::vector<Field>> attribute = proto::parseMessage(f.bytes);
    if (!attribute)
      return true; // reported when the node is rewritten, if it is
    for (const Field &a : *attribute)
      if (a.number == attribute_field::kGraph ||
          a.number == attribute_field::kGraphs)
        return true;
  }
  return false;
}

/// `base` made unlike every name in `taken` (and then taken).
std::string freshName(std::string base,
                      std::set<std::string, std::less<>> &taken) {
  std::string name = base;
  for (int i = 1; taken.count(name); ++i)
    name = strCat(base, "_", i);
  taken.insert(name);
  return name;
}

/// The convolution `conv` with output `output` and bias input `bias`.
std::string rewriteConv(const std::vector<Field> &conv, std::string_view output,
                        std::string_view bias) {
  size_t inputs = stringFields(conv, node_field::kInput).size(), seen = 0;
  proto::Writer out;
  for (const Field &f : conv) {
    if (f.number == node_field::kOutput) {
      out.bytes(node_field::kOutput, output);
      continue;
    }
    if (f.number != node_field::kInput) {
      out.raw(f.raw);
      continue;
    }
    ++seen;
    if (seen == 3)
      out.bytes(node_field::kInput, bias); // an empty (omitted) bias
    else
      out.raw(f.raw);
    if (seen == 2 && inputs == 2)
      out.bytes(node_field::kInput, bias);
  }
  return out.take();
}

/// Plans every fold: a BatchNormalization whose input is the output of a
/// Conv read by nothing else, where the conv's weight (and bias) and the
/// BN's scale, B, mean and var are trained state tensors of matching
/// shapes and the weight and bias feed only that conv. The new weight and
/// bias are computed in double from the trained values and rounded once
/// to float32:
///   W'[o, ...] = W[o, ...] * s[o],  b'[o] = (b[o] - mean[o]) * s[o] + B[o],
///   s[o] = scale[o] / sqrt(var[o] + epsilon).
/// Graphs with sub-graphs are left alone: a body may read the conv's
/// output by name.
BatchNormFolds
planBatchNormFolds(const std::vector<Field> &graph,
                   const std::vector<std::vector<Field>> &nodes,
                   const std::map<std::string, const InitializerValue *,
                                  std::less<>> &byName) {
  BatchNormFolds folds;
  std::map<std::string, int, std::less<>> uses;
  std::map<std::string, size_t, std::less<>> producer;
  std::set<std::string, std::less<>> names;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (hasSubgraph(nodes[i]))
      return folds;
    for (std::string_view in : stringFields(nodes[i], node_field::kInput)) {
      ++uses[std::string(in)];
      names.insert(std::string(in));
    }
    for (std::string_view out : stringFields(nodes[i], node_field::kOutput)) {
      producer[std::string(out)] = i;
      names.insert(std::string(out));
    }
  }
  std::set<std::string, std::less<>> initializers;
  for (const Field &f : graph) {
    if (f.type != WireType::LengthDelimited)
      continue;
    Expected<std::vector<Field>> message = proto::parseMessage(f.bytes);
    if (!message)
      continue; // reported by the rewrite
    if (f.number == graph_field::kInitializer) {
      std::string name(stringField(*message, tensor_field::kName));
      initializers.insert(name);
      names.insert(name);
    } else if (f.number == graph_field::kInput ||
               f.number == graph_field::kOutput ||
               f.number == graph_field::kValueInfo) {
      names.insert(std::string(stringField(*message, kNameField)));
      if (f.number == graph_field::kOutput)
        ++uses[std::string(stringField(*message, kNameField))];
    }
  }

  // The trained vector called `name` of `size` elements, or null.
  auto vectorOf = [&](std::string_view name,
                      int64_t size) -> const InitializerValue * {
    auto it = byName.find(name);
    if (it == byName.end() || it->second->shape != std::vector<int64_t>{size})
      return nullptr;
    return it->second;
  };

  std::vector<std::string> maybeUnused;
  for (size_t j = 0; j < nodes.size(); ++j) {
    if (!isBatchNorm(nodes[j]))
      continue;
    std::vector<std::string_view> in =
        stringFields(nodes[j], node_field::kInput);
    std::vector<std::string_view> out =
        stringFields(nodes[j], node_field::kOutput);
    if (in.size() != 5 || out.empty() || out[0].empty())
      continue;
    auto convIt = producer.find(in[0]);
    if (convIt == producer.end() || uses[std::string(in[0])] != 1)
      continue;
    size_t i = convIt->second;
    const std::vector<Field> &conv = nodes[i];
    std::vector<std::string_view> convIn =
        stringFields(conv, node_field::kInput);
    if (!isOp(conv, "Conv") || folds.rewrittenNodes.count(i) ||
        convIn.size() < 2 || convIn.size() > 3 ||
        stringFields(conv, node_field::kOutput).size() != 1)
      continue;
    auto weightIt = byName.find(convIn[1]);
    if (weightIt == byName.end() || weightIt->second->shape.size() < 2 ||
        uses[std::string(convIn[1])] != 1)
      continue;
    const InitializerValue &weight = *weightIt->second;
    int64_t channels = weight.shape[0];
    bool hasBias = convIn.size() == 3 && !convIn[2].empty();
    const InitializerValue *bias =
        hasBias ? vectorOf(convIn[2], channels) : nullptr;
    const InitializerValue *scale = vectorOf(in[1], channels);
    const InitializerValue *shift = vectorOf(in[2], channels);
    const InitializerValue *mean = vectorOf(in[3], channels);
    const InitializerValue *var = vectorOf(in[4], channels);
    if ((hasBias && (!bias || uses[std::string(convIn[2])] != 1)) || !scale ||
        !shift || !mean || !var)
      continue;

    double epsilon = epsilonOf(nodes[j]);
    int64_t perChannel = *checkedElementCount(weight.shape) / channels;
    FoldedTensor newWeight{weight.shape, {}}, newBias{{channels}, {}};
    newWeight.data.resize(size_t(channels * perChannel));
    newBias.data.resize(size_t(channels));
    for (int64_t o = 0; o < channels; ++o) {
      double factor =
          double(scale->data[o]) / std::sqrt(double(var->data[o]) + epsilon);
      for (int64_t k = 0; k < perChannel; ++k) {
        int64_t at = o * perChannel + k;
        newWeight.data[size_t(at)] = float(double(weight.data[at]) * factor);
      }
      double b = bias ? double(bias->data[o]) : 0.0;
      newBias.data[size_t(o)] = float((b - double(mean->data[o])) * factor +
                                      double(shift->data[o]));
    }

    std::string biasName;
    if (hasBias) {
      biasName = std::string(convIn[2]);
      folds.newValues[biasName] = std::move(newBias);
    } else {
      std::string_view w = convIn[1];
      std::string_view suffix = ".weight";
      biasName = freshName(
          w.size() > suffix.size() && w.substr(w.size() - suffix.size()) == suffix
              ? strCat(w.substr(0, w.size() - suffix.size()), ".bias")
              : strCat(w, "_bias"),
          names);
      folds.addedBiases.emplace_back(biasName, std::move(newBias));
    }
    folds.newValues[std::string(convIn[1])] = std::move(newWeight);
    folds.rewrittenNodes[i] = rewriteConv(conv, out[0], biasName);
    folds.removedNodes.insert(j);
    folds.removedValueInfo.insert(std::string(in[0]));
    for (int k = 1; k < 5; ++k) {
      --uses[std::string(in[k])];
      maybeUnused.push_back(std::string(in[k]));
    }
  }
  for (const std::string &name : maybeUnused)
    if (uses[name] == 0 && initializers.count(name))
      folds.removedInitializers.insert(name);
  return folds;
}

Expected<std::string>
rewriteGraph(std::string_view graphBytes,
             const std::vector<InitializerValue> &values,
             const ExportOptions &options) {
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
  BatchNormFolds folds;
  if (options.foldBatchNorm)
    folds = planBatchNormFolds(*graph, nodes, byName);
  size_t lastInitializer = 0;
  for (size_t i = 0; i < graph->size(); ++i)
    if ((*graph)[i].number == graph_field::kInitializer)
      lastInitializer = i;

  // Pass 2: write the graph.
  proto::Writer out;
  size_t nodeIndex = 0;
  for (size_t fieldIndex = 0; fieldIndex < graph->size(); ++fieldIndex) {
    const Field &f = (*graph)[fieldIndex];
    switch (f.number) {
    case graph_field::kNode: {
      size_t index = nodeIndex++;
      const std::vector<Field> &node = nodes[index];
      if (folds.removedNodes.count(index))
        break;
      if (auto it = folds.rewrittenNodes.find(index);
          it != folds.rewrittenNodes.end()) {
        out.bytes(graph_field::kNode, it->second);
        break;
      }
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
      std::string_view name = stringField(*tensor, tensor_field::kName);
      auto it = byName.find(name);
      auto folded = folds.newValues.find(name);
      if (folds.removedInitializers.count(name)) {
        replaced.insert(std::string(name));
      } else if (it == byName.end()) {
        out.raw(f.raw);
      } else {
        InitializerValue value = *it->second;
        if (folded != folds.newValues.end())
          value.data = folded->second.data.data();
        Expected<std::string> rewritten = rewriteInitializer(*tensor, value);
        if (!rewritten)
          return rewritten.takeError();
        out.bytes(graph_field::kInitializer, *rewritten);
        replaced.insert(it->first);
      }
      if (fieldIndex == lastInitializer)
        for (const auto &[biasName, bias] : folds.addedBiases) {
          proto::Writer tensorOut;
          tensorOut.varint(tensor_field::kDims, uint64_t(bias.shape[0]));
          tensorOut.varint(tensor_field::kDataType, tensor_field::kFloat);
          tensorOut.bytes(tensor_field::kName, biasName);
          tensorOut.bytes(tensor_field::kRawData,
                          rawFloat32(bias.data.data(), bias.shape[0]));
          out.bytes(graph_field::kInitializer, tensorOut.data());
        }
      break;
    }
    case graph_field::kInput: {
      // IR version 3 lists initializers among the inputs too.
      Expected<std::vector<Field>> info = parse(f.bytes, "ValueInfoProto");
      if (!info)
        return info.takeError();
      if (!folds.removedInitializers.count(stringField(*info, kNameField)))
        out.raw(f.raw);
      break;
    }
    case graph_field::kOutput:
    case graph_field::kValueInfo: {
      Expected<std::vector<Field>> info = parse(f.bytes, "ValueInfoProto");
      if (!info)
        return info.takeError();
      std::string_view name = stringField(*info, kNameField);
      if (!dropped.count(name) && !folds.removedValueInfo.count(name))
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
                     const std::vector<InitializerValue> &values,
                     const ExportOptions &options) {
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
    Expected<std::string> graph = rewriteGraph(f.bytes, values, options);
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
                 AtomicFileWriter &writer, const ExportOptions &options) {
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
      *values, options);
  if (!bytes)
    return fail(bytes.takeError());
  if (Error err = writer.write(bytes->data(), int64_t(bytes->size())))
    return fail(std::move(err));
  if (Error err = writer.commit())
    return fail(std::move(err));
  return Error::success();
}

} // namespace traincc::rt
