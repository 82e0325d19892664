//===- OnnxExportTest.cpp - Protobuf wire codec and the ONNX rewrite ------===//
//
// The end-to-end check of the export (onnx.checker, trained values) is
// test/runtime/export.test; these tests pin the wire format and each rule
// of the rewrite on hand-built messages.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "traincc/runtime/formats/OnnxExport.h"
#include "traincc/runtime/formats/ProtoWire.h"

#include <cmath>
#include <cstring>
#include <map>

using namespace traincc::rt;
using namespace traincc::rt::test;
using proto::Field;
using proto::WireType;
using ::testing::HasSubstr;

namespace {

std::vector<Field> parseOk(std::string_view bytes) {
  Expected<std::vector<Field>> fields = proto::parseMessage(bytes);
  EXPECT_TRUE(bool(fields)) << errorOf(fields);
  return fields ? fields.take() : std::vector<Field>{};
}

std::vector<Field> fieldsNumbered(const std::vector<Field> &fields,
                                  uint32_t number) {
  std::vector<Field> out;
  for (const Field &f : fields)
    if (f.number == number)
      out.push_back(f);
  return out;
}

// Tests the encoding against protobuf's documented examples and that every
// wire type reads back, each field keeping its exact bytes.
TEST(ProtoWire, EncodesAndParsesEveryWireType) {
  proto::Writer w;
  w.varint(1, 150);
  EXPECT_EQ(w.data(), std::string("\x08\x96\x01", 3));
  w.bytes(2, "testing");
  w.fixed32(3, 0xdeadbeef);
  w.fixed64(4, 0x0102030405060708ull);
  w.varint(536870911, UINT64_MAX); // the largest field number
  std::string bytes = w.take();
  std::vector<Field> fields = parseOk(bytes);
  ASSERT_EQ(fields.size(), 5u);
  EXPECT_EQ(fields[0].value, 150u);
  EXPECT_EQ(fields[1].type, WireType::LengthDelimited);
  EXPECT_EQ(fields[1].bytes, "testing");
  EXPECT_EQ(fields[1].raw, std::string_view("\x12\x07testing", 9));
  EXPECT_EQ(fields[2].type, WireType::Fixed32);
  EXPECT_EQ(fields[2].value, 0xdeadbeefu);
  EXPECT_EQ(fields[3].type, WireType::Fixed64);
  EXPECT_EQ(fields[3].value, 0x0102030405060708ull);
  EXPECT_EQ(fields[4].number, 536870911u);
  EXPECT_EQ(fields[4].value, UINT64_MAX);
  std::string again;
  for (const Field &f : fields)
    again.append(f.raw);
  EXPECT_EQ(again, bytes);
}

// Tests that malformed messages are errors, not reads past the end.
TEST(ProtoWire, RejectsMalformedMessages) {
  auto error = [](const std::string &bytes) {
    return errorOf(proto::parseMessage(bytes));
  };
  EXPECT_THAT(error(std::string("\x08\x96", 2)), HasSubstr("truncated varint"));
  EXPECT_THAT(error(std::string("\x12\x05" "abc", 5)),
              HasSubstr("5 bytes declared, 3 left"));
  EXPECT_THAT(error(std::string("\x1d\x01\x02", 3)),
              HasSubstr("truncated fixed32"));
  EXPECT_THAT(error(std::string("\x21\x01", 2)), HasSubstr("truncated fixed64"));
  EXPECT_THAT(error(std::string("\x0b", 1)),
              HasSubstr("unsupported wire type 3"));
  EXPECT_THAT(error(std::string("\x00\x01", 2)),
              HasSubstr("invalid field number 0"));
  EXPECT_THAT(error(std::string("\x08") + std::string(10, '\xff') + "\x01"),
              HasSubstr("truncated varint"));
  EXPECT_THAT(error(std::string("\x80", 1)), HasSubstr("malformed field tag"));
  EXPECT_EQ(error(""), "<no error>");
}

// Tests that repeated integers read the same packed and unpacked.
TEST(ProtoWire, ReadsPackedAndUnpackedVarints) {
  proto::Writer w;
  w.varint(1, 3);
  std::string packed;
  proto::appendVarint(packed, 784);
  proto::appendVarint(packed, 10);
  w.bytes(1, packed);
  std::vector<uint64_t> values;
  for (const Field &f : parseOk(w.data()))
    EXPECT_NO_ERROR(proto::appendVarints(f, values));
  EXPECT_EQ(values, (std::vector<uint64_t>{3, 784, 10}));
}

//===----------------------------------------------------------------------===//
// A small ModelProto built field by field (numbers from onnx.proto).
//===----------------------------------------------------------------------===//

std::string attributeInt(const std::string &name, int64_t value) {
  proto::Writer a;
  a.bytes(1, name);
  a.varint(3, uint64_t(value)); // i
  a.varint(20, 2);              // type INT
  return a.take();
}

std::string node(const std::string &op, const std::vector<std::string> &inputs,
                 const std::vector<std::string> &outputs,
                 const std::vector<std::string> &attributes) {
  proto::Writer n;
  for (const std::string &i : inputs)
    n.bytes(1, i);
  for (const std::string &o : outputs)
    n.bytes(2, o);
  n.bytes(3, op + "_node");
  n.bytes(4, op);
  for (const std::string &a : attributes)
    n.bytes(5, a);
  return n.take();
}

std::string valueInfo(const std::string &name) {
  proto::Writer v;
  v.bytes(1, name);
  return v.take();
}

/// A float initializer stored as float_data (packed), with dims and an
/// unknown field 99.
std::string floatInitializer(const std::string &name,
                             const std::vector<int64_t> &dims,
                             const std::vector<float> &values,
                             uint64_t dataType = 1) {
  proto::Writer t;
  for (int64_t d : dims)
    t.varint(1, uint64_t(d));
  t.varint(2, dataType);
  std::string packed;
  for (float v : values) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    for (int b = 0; b < 4; ++b)
      packed.push_back(char((bits >> (8 * b)) & 0xff));
  }
  t.bytes(4, packed);
  t.bytes(8, name);
  t.varint(99, 7);
  return t.take();
}

struct ModelParts {
  std::vector<std::string> nodes;
  std::vector<std::string> initializers;
  std::vector<std::string> outputs;
  std::vector<std::string> valueInfos;
};

ModelParts batchNormModel() {
  ModelParts parts;
  parts.nodes = {
      node("BatchNormalization", {"x", "scale", "bias", "mean", "var"},
           {"y", "mean_out", "var_out"},
           {attributeInt("epsilon", 0), attributeInt("training_mode", 1)}),
      node("Relu", {"y"}, {"z"}, {})};
  parts.initializers = {floatInitializer("scale", {2}, {1, 1}),
                        floatInitializer("mean", {2}, {0, 0}),
                        floatInitializer("other", {1}, {42})};
  parts.outputs = {valueInfo("z"), valueInfo("mean_out")};
  parts.valueInfos = {valueInfo("var_out"), valueInfo("y")};
  return parts;
}

std::string modelBytes(const ModelParts &parts) {
  proto::Writer g;
  for (const std::string &n : parts.nodes)
    g.bytes(1, n);
  g.bytes(2, "graph");
  for (const std::string &i : parts.initializers)
    g.bytes(5, i);
  for (const std::string &o : parts.outputs)
    g.bytes(12, o);
  for (const std::string &v : parts.valueInfos)
    g.bytes(13, v);
  g.fixed32(77, 12345); // unknown to the rewrite
  proto::Writer m;
  m.varint(1, 8); // ir_version
  m.bytes(2, "producer");
  m.bytes(7, g.data());
  m.fixed64(1000, 99); // unknown
  return m.take();
}

std::string stringOf(const std::vector<Field> &fields, uint32_t number) {
  std::vector<Field> matching = fieldsNumbered(fields, number);
  return matching.empty() ? "" : std::string(matching.back().bytes);
}

// Tests the whole rewrite: initializers replaced by raw float32 data with
// their dims, name and unknown fields kept; BatchNormalization in inference
// mode with one output; its other outputs gone from the graph outputs and
// value_info; every other field byte for byte.
TEST(OnnxExport, RewritesInitializersAndBatchNorm) {
  std::string original = modelBytes(batchNormModel());
  std::vector<float> scale = {2.5f, -1.0f}, mean = {0.25f, 3.0f};
  Expected<std::string> rewritten = rewriteOnnxForExport(
      original, {{"scale", {2}, scale.data()}, {"mean", {2}, mean.data()}});
  ASSERT_OK(rewritten);

  std::vector<Field> model = parseOk(*rewritten);
  std::vector<Field> originalModel = parseOk(original);
  ASSERT_EQ(model.size(), 4u);
  EXPECT_EQ(model[0].raw, originalModel[0].raw);
  EXPECT_EQ(model[1].raw, originalModel[1].raw);
  EXPECT_EQ(model[3].raw, originalModel[3].raw); // unknown field 1000
  std::vector<Field> graph = parseOk(model[2].bytes);

  std::vector<Field> nodes = fieldsNumbered(graph, 1);
  ASSERT_EQ(nodes.size(), 2u);
  std::vector<Field> bn = parseOk(nodes[0].bytes);
  std::vector<Field> bnOutputs = fieldsNumbered(bn, 2);
  ASSERT_EQ(bnOutputs.size(), 1u);
  EXPECT_EQ(bnOutputs[0].bytes, "y");
  EXPECT_EQ(fieldsNumbered(bn, 1).size(), 5u);
  std::vector<Field> attributes = fieldsNumbered(bn, 5);
  ASSERT_EQ(attributes.size(), 1u);
  EXPECT_EQ(stringOf(parseOk(attributes[0].bytes), 1), "epsilon");
  EXPECT_EQ(nodes[1].raw, parseOk(parseOk(original)[2].bytes)[1].raw);

  std::vector<Field> inits = fieldsNumbered(graph, 5);
  ASSERT_EQ(inits.size(), 3u);
  auto checkReplaced = [&](const Field &init, const std::string &name,
                           const std::vector<float> &values) {
    std::vector<Field> tensor = parseOk(init.bytes);
    EXPECT_EQ(stringOf(tensor, 8), name);
    EXPECT_TRUE(fieldsNumbered(tensor, 4).empty()) << "float_data kept";
    std::string raw = stringOf(tensor, 9);
    ASSERT_EQ(raw.size(), values.size() * 4);
    EXPECT_EQ(std::memcmp(raw.data(), values.data(), raw.size()), 0);
    std::vector<uint64_t> dims;
    for (const Field &d : fieldsNumbered(tensor, 1))
      EXPECT_NO_ERROR(proto::appendVarints(d, dims));
    EXPECT_EQ(dims, std::vector<uint64_t>{2});
    ASSERT_EQ(fieldsNumbered(tensor, 99).size(), 1u);
    EXPECT_EQ(fieldsNumbered(tensor, 99)[0].value, 7u);
  };
  checkReplaced(inits[0], "scale", scale);
  checkReplaced(inits[1], "mean", mean);
  EXPECT_EQ(inits[2].raw, fieldsNumbered(parseOk(originalModel[2].bytes), 5)[2].raw);

  std::vector<Field> outputs = fieldsNumbered(graph, 12);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(stringOf(parseOk(outputs[0].bytes), 1), "z");
  std::vector<Field> infos = fieldsNumbered(graph, 13);
  ASSERT_EQ(infos.size(), 1u);
  EXPECT_EQ(stringOf(parseOk(infos[0].bytes), 1), "y");
  ASSERT_EQ(fieldsNumbered(graph, 77).size(), 1u);
  EXPECT_EQ(fieldsNumbered(graph, 77)[0].value, 12345u);
}

// Tests that a model without BatchNormalization and without values comes
// back byte for byte.
TEST(OnnxExport, LeavesOtherModelsUntouched) {
  ModelParts parts;
  parts.nodes = {node("Relu", {"x"}, {"y"}, {})};
  parts.initializers = {floatInitializer("w", {1}, {1})};
  parts.outputs = {valueInfo("y")};
  std::string original = modelBytes(parts);
  Expected<std::string> rewritten = rewriteOnnxForExport(original, {});
  ASSERT_OK(rewritten);
  EXPECT_EQ(*rewritten, original);
}

// Tests each error of the rewrite.
TEST(OnnxExport, ReportsWhatCannotBeExported) {
  std::vector<float> two = {1, 2};
  std::string bn = modelBytes(batchNormModel());
  EXPECT_THAT(errorOf(rewriteOnnxForExport(bn, {{"missing", {2}, two.data()}})),
              HasSubstr("state tensor 'missing' has no initializer of that "
                        "name in the graph"));
  EXPECT_THAT(errorOf(rewriteOnnxForExport(bn, {{"scale", {1, 2}, two.data()}})),
              HasSubstr("initializer 'scale' has dims [2], the trained tensor "
                        "is [1,2]"));

  ModelParts doubles;
  doubles.initializers = {floatInitializer("d", {2}, {1, 2}, 11)};
  EXPECT_THAT(errorOf(rewriteOnnxForExport(modelBytes(doubles),
                                           {{"d", {2}, two.data()}})),
              HasSubstr("initializer 'd' has ONNX element type 11"));

  ModelParts reader = batchNormModel();
  reader.nodes.push_back(node("Identity", {"var_out"}, {"v"}, {}));
  EXPECT_THAT(errorOf(rewriteOnnxForExport(modelBytes(reader), {})),
              HasSubstr("Identity node 'Identity_node' reads 'var_out', a "
                        "training-mode output of BatchNormalization"));

  proto::Writer noGraph;
  noGraph.varint(1, 8);
  EXPECT_THAT(errorOf(rewriteOnnxForExport(noGraph.data(), {})),
              HasSubstr("the ONNX model has no graph"));
  EXPECT_THAT(errorOf(rewriteOnnxForExport(bn.substr(0, bn.size() - 5), {})),
              HasSubstr("malformed ModelProto"));
}

// Tests exportOnnx end to end at the file level: the destination appears
// only on success and holds the rewritten bytes.
TEST(OnnxExport, WritesTheFileAtomically) {
  TempDir dir;
  std::string path = dir.file("out.onnx");
  std::string bytes = modelBytes(batchNormModel());
  static const int64_t kShape[] = {2};
  traincc_state_tensor state[] = {
      {"scale", TRAINCC_STATE_TRAINABLE, TRAINCC_DTYPE_F32, 1, kShape, 0, 8, -1,
       -1},
      {"mean", TRAINCC_STATE_RUNNING_MEAN, TRAINCC_DTYPE_F32, 1, kShape, 64, 8,
       -1, -1},
      {"scale.grad", TRAINCC_STATE_GRADIENT, TRAINCC_DTYPE_F32, 1, kShape, 128,
       8, 0, -1}};
  traincc_model model;
  std::memset(&model, 0, sizeof(model));
  model.num_state = 3;
  model.state = state;
  model.state_bytes = 192;
  model.onnx_model = reinterpret_cast<const uint8_t *>(bytes.data());
  model.onnx_model_bytes = bytes.size();
  Expected<AlignedBuffer> arena = AlignedBuffer::allocate(192, "arena");
  ASSERT_OK(arena);
  float values[] = {7, 8};
  std::memcpy(arena->data(), values, 8);
  ModelMemory memory{arena.take(), AlignedBuffer()};

  Expected<AtomicFileWriter> writer = AtomicFileWriter::create(path);
  ASSERT_OK(writer);
  EXPECT_FALSE(isRegularFile(path));
  EXPECT_NO_ERROR(exportOnnx(model, memory, *writer));
  std::string written = readFile(path);
  std::vector<float> scale = {7, 8}, mean = {0, 0};
  Expected<std::string> expected = rewriteOnnxForExport(
      bytes, {{"scale", {2}, scale.data()}, {"mean", {2}, mean.data()}});
  ASSERT_OK(expected);
  EXPECT_EQ(written, *expected);
}

//===----------------------------------------------------------------------===//
// BatchNormalization folded into the Conv before it
//===----------------------------------------------------------------------===//

std::string attributeFloat(const std::string &name, float value) {
  proto::Writer a;
  a.bytes(1, name);
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  a.fixed32(2, bits); // f
  a.varint(20, 1);    // type FLOAT
  return a.take();
}

/// x -> Conv(w[, b]) -> c -> BatchNormalization -> y -> Relu -> z, two
/// output channels of two weights each, epsilon 0.5.
ModelParts convBatchNormModel(bool withBias) {
  ModelParts parts;
  std::vector<std::string> convInputs = {"x", "conv.weight"};
  if (withBias)
    convInputs.push_back("conv.bias");
  parts.nodes = {
      node("Conv", convInputs, {"c"}, {}),
      node("BatchNormalization", {"c", "bn.weight", "bn.bias", "bn.mean",
                                  "bn.var"},
           {"y", "mean_out", "var_out"},
           {attributeFloat("epsilon", 0.5f), attributeInt("training_mode", 1)}),
      node("Relu", {"y"}, {"z"}, {})};
  parts.initializers = {floatInitializer("conv.weight", {2, 1, 2}, {0, 0, 0, 0})};
  if (withBias)
    parts.initializers.push_back(floatInitializer("conv.bias", {2}, {0, 0}));
  for (const char *name : {"bn.weight", "bn.bias", "bn.mean", "bn.var"})
    parts.initializers.push_back(floatInitializer(name, {2}, {0, 0}));
  parts.outputs = {valueInfo("z")};
  parts.valueInfos = {valueInfo("c"), valueInfo("y")};
  return parts;
}

struct ConvBatchNormValues {
  std::vector<float> weight = {1, -2, 0.5f, 3}, bias = {0.25f, -1};
  std::vector<float> scale = {2, -0.5f}, shift = {0.125f, 4};
  std::vector<float> mean = {1, -3}, var = {3.5f, 1.5f}; // + 0.5: 4 and 2
  std::vector<InitializerValue> values(bool withBias) const {
    std::vector<InitializerValue> v = {
        {"conv.weight", {2, 1, 2}, weight.data()},
        {"bn.weight", {2}, scale.data()},
        {"bn.bias", {2}, shift.data()},
        {"bn.mean", {2}, mean.data()},
        {"bn.var", {2}, var.data()}};
    if (withBias)
      v.push_back({"conv.bias", {2}, bias.data()});
    return v;
  }
};

std::vector<float> floatsOf(const std::vector<Field> &tensor) {
  std::string raw = stringOf(tensor, 9);
  std::vector<float> values(raw.size() / 4);
  std::memcpy(values.data(), raw.data(), raw.size());
  return values;
}

std::map<std::string, std::vector<float>>
initializersOf(const std::vector<Field> &graph) {
  std::map<std::string, std::vector<float>> inits;
  for (const Field &f : fieldsNumbered(graph, 5)) {
    std::vector<Field> tensor = parseOk(f.bytes);
    inits[stringOf(tensor, 8)] = floatsOf(tensor);
  }
  return inits;
}

std::vector<Field> graphOf(const std::string &model) {
  return parseOk(fieldsNumbered(parseOk(model), 7).at(0).bytes);
}

std::vector<std::string> stringsOf(const std::vector<Field> &fields,
                                   uint32_t number) {
  std::vector<std::string> values;
  for (const Field &f : fieldsNumbered(fields, number))
    values.emplace_back(f.bytes);
  return values;
}

// Tests that a BatchNormalization reading only a Conv's output folds into
// it: the weight, same name, scaled by scale / sqrt(var + eps) per output
// channel, the bias (b - mean) * that + B; the Conv writes the BN's output
// name; the BN node, its initializers and the Conv's old output's
// value_info are gone.
TEST(OnnxExport, FoldsBatchNormIntoConv) {
  ConvBatchNormValues v;
  Expected<std::string> rewritten = rewriteOnnxForExport(
      modelBytes(convBatchNormModel(true)), v.values(true));
  ASSERT_OK(rewritten);
  std::vector<Field> graph = graphOf(*rewritten);

  std::vector<Field> nodes = fieldsNumbered(graph, 1);
  ASSERT_EQ(nodes.size(), 2u);
  std::vector<Field> conv = parseOk(nodes[0].bytes);
  EXPECT_EQ(stringOf(conv, 4), "Conv");
  EXPECT_EQ(stringsOf(conv, 1),
            (std::vector<std::string>{"x", "conv.weight", "conv.bias"}));
  EXPECT_EQ(stringsOf(conv, 2), std::vector<std::string>{"y"});
  EXPECT_EQ(stringOf(parseOk(nodes[1].bytes), 4), "Relu");

  // Factors 2 / sqrt(4) = 1 and -0.5 / sqrt(2): exact or rounded once.
  double f1 = -0.5 / std::sqrt(2.0);
  std::map<std::string, std::vector<float>> inits = initializersOf(graph);
  ASSERT_EQ(inits.size(), 2u);
  EXPECT_EQ(inits["conv.weight"],
            (std::vector<float>{1, -2, float(0.5 * f1), float(3 * f1)}));
  EXPECT_EQ(inits["conv.bias"],
            (std::vector<float>{0.25f - 1 + 0.125f, float(2 * f1 + 4)}));

  std::vector<Field> infos = fieldsNumbered(graph, 13);
  ASSERT_EQ(infos.size(), 1u);
  EXPECT_EQ(stringOf(parseOk(infos[0].bytes), 1), "y");
}

// Tests that a Conv without bias gets one, named after its weight unless
// that name is taken, holding (0 - mean) * factor + B; the initializers
// that another node still reads stay.
TEST(OnnxExport, FoldingAddsABiasWithAFreshName) {
  ConvBatchNormValues v;
  ModelParts parts = convBatchNormModel(false);
  parts.valueInfos.push_back(valueInfo("conv.bias")); // taken
  parts.nodes.push_back(node("Identity", {"bn.mean"}, {"m"}, {}));
  Expected<std::string> rewritten =
      rewriteOnnxForExport(modelBytes(parts), v.values(false));
  ASSERT_OK(rewritten);
  std::vector<Field> graph = graphOf(*rewritten);
  std::vector<Field> conv = parseOk(fieldsNumbered(graph, 1).at(0).bytes);
  EXPECT_EQ(stringsOf(conv, 1),
            (std::vector<std::string>{"x", "conv.weight", "conv.bias_1"}));
  double f1 = -0.5 / std::sqrt(2.0);
  std::map<std::string, std::vector<float>> inits = initializersOf(graph);
  EXPECT_EQ(inits.size(), 3u); // weight, bias, bn.mean
  EXPECT_EQ(inits["conv.bias_1"],
            (std::vector<float>{-1 + 0.125f, float(3 * f1 + 4)}));
  EXPECT_EQ(inits["bn.mean"], v.mean);
}

// Tests what stays an inference BatchNormalization: everything with
// --no-fold-bn, a Conv whose output is also read elsewhere, a BN whose
// statistics are not trained state, and a BN after something else.
TEST(OnnxExport, LeavesUnfoldableBatchNorms) {
  ConvBatchNormValues v;
  auto opTypes = [](const std::string &model) {
    std::vector<std::string> ops;
    for (const Field &n : fieldsNumbered(graphOf(model), 1))
      ops.push_back(stringOf(parseOk(n.bytes), 4));
    return ops;
  };
  std::vector<std::string> unfolded = {"Conv", "BatchNormalization", "Relu"};

  Expected<std::string> off = rewriteOnnxForExport(
      modelBytes(convBatchNormModel(true)), v.values(true),
      ExportOptions{/*foldBatchNorm=*/false});
  ASSERT_OK(off);
  EXPECT_EQ(opTypes(*off), unfolded);
  EXPECT_EQ(initializersOf(graphOf(*off))["conv.weight"], v.weight);

  ModelParts twoUsers = convBatchNormModel(true);
  twoUsers.outputs.push_back(valueInfo("c"));
  Expected<std::string> kept =
      rewriteOnnxForExport(modelBytes(twoUsers), v.values(true));
  ASSERT_OK(kept);
  EXPECT_EQ(opTypes(*kept), unfolded);

  std::vector<InitializerValue> noStats = v.values(true);
  noStats.erase(noStats.begin() + 3); // bn.mean stays a constant
  Expected<std::string> constant = rewriteOnnxForExport(
      modelBytes(convBatchNormModel(true)), noStats);
  ASSERT_OK(constant);
  EXPECT_EQ(opTypes(*constant), unfolded);

  ModelParts afterRelu = convBatchNormModel(true);
  afterRelu.nodes[0] = node("Relu", {"x"}, {"c"}, {});
  Expected<std::string> relu = rewriteOnnxForExport(
      modelBytes(afterRelu), {v.values(true)[1], v.values(true)[2],
                              v.values(true)[3], v.values(true)[4]});
  ASSERT_OK(relu);
  EXPECT_EQ(opTypes(*relu),
            (std::vector<std::string>{"Relu", "BatchNormalization", "Relu"}));
}

} // namespace
