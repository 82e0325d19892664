//===- OpsetAdapter.cpp - opsets 18..21 rewritten to opset 17 -------------===//
//
// Debian's libonnx 1.12 (the checker and shape inference) knows opsets up to
// 17. Rather than building a newer libonnx, the loader rewrites a model of
// opset 18..21 into its opset-17 form before the checker runs: for the ops
// traincc imports the newer forms differ in few ways (Reduce* axes became an
// input, Pad gained `axes` and a `wrap` mode, AveragePool `dilations`, Cast
// `saturate`, and new element types that traincc refuses anyway), so a small
// rewrite keeps one checker, one shape inference and one set of importer
// handlers for every opset. What the opset-17 form cannot express (axes that
// are not constant, wrap padding, dilated average pooling) is an error that
// names the node. Ops traincc does not import whose newest version is in
// 18..21 (or that are new there) are hidden from the checker and shape
// inference in a private domain, and the legalisation later lists them with
// the other unsupported ops.
//
//===----------------------------------------------------------------------===//

#include "ModelLoader.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <cstring>

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

namespace {

/// The Reduce ops whose `axes` attribute became an input in opset 18
/// (ReduceSum made the change in opset 13).
const llvm::StringSet<> kReduceOps = {
    "ReduceMean",   "ReduceMax",       "ReduceMin",
    "ReduceProd",   "ReduceL1",        "ReduceL2",
    "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};

/// Ops that are new in opsets 18..21 or have a version there, and which the
/// rewrites below do not handle. Ops whose newer versions only add element
/// types (Constant, Reshape, Shape, Squeeze, ...) are not listed: their
/// opset-17 form is the same.
const llvm::StringSet<> kChangedOps = {
    // Opset 18.
    "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "CenterCropPad",
    "Col2Im", "GroupNormalization", "LpPool", "Mish", "OptionalGetElement",
    "OptionalHasElement", "Resize", "ScatterElements", "ScatterND", "Split",
    // Opset 19.
    "CastLike", "DeformConv", "DequantizeLinear", "QuantizeLinear", "If",
    "Loop", "Scan", "Size",
    // Opset 20.
    "AffineGrid", "DFT", "Gelu", "GridSample", "ImageDecoder", "IsInf", "IsNaN",
    "RegexFullMatch", "StringConcat", "StringSplit",
    // Opset 21.
    "QLinearMatMul"};

onnx::AttributeProto *findAttr(onnx::NodeProto &node, llvm::StringRef name) {
  for (onnx::AttributeProto &attr : *node.mutable_attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

void eraseAttr(onnx::NodeProto &node, llvm::StringRef name) {
  auto *attrs = node.mutable_attribute();
  for (int index = 0; index < attrs->size(); ++index)
    if (attrs->Get(index).name() == name) {
      attrs->DeleteSubrange(index, 1);
      return;
    }
}

/// Drops trailing omitted ("") inputs and then inputs from `index` on.
void truncateInputs(onnx::NodeProto &node, int index) {
  if (index < node.input_size())
    node.mutable_input()->DeleteSubrange(index, node.input_size() - index);
}

class Adapter {
public:
  Adapter(onnx::ModelProto &model, int64_t opset, Location loc)
      : model(model), opset(opset), loc(loc) {
    onnx::GraphProto &graph = *model.mutable_graph();
    for (const onnx::TensorProto &init : graph.initializer()) {
      if (auto values = readIntegerTensor(init))
        constants.try_emplace(init.name(), std::move(*values));
      ranks.try_emplace(init.name(), init.dims_size());
    }
    for (auto *list : {&graph.input(), &graph.value_info(), &graph.output()})
      for (const onnx::ValueInfoProto &info : *list)
        if (info.type().tensor_type().has_shape())
          ranks.try_emplace(info.name(),
                            info.type().tensor_type().shape().dim_size());
    for (const onnx::NodeProto &node : graph.node()) {
      if (node.op_type() == "Constant" && node.domain().empty())
        noteConstant(node);
      for (const std::string &output : node.output())
        names.insert(output);
    }
    for (const auto &entry : ranks)
      names.insert(entry.getKey());
  }

  LogicalResult run() {
    bool failedAny = false;
    auto adapt = [&](google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
                     auto &self) -> void {
      for (onnx::NodeProto &node : nodes) {
        if (!node.domain().empty())
          continue;
        if (failed(adaptNode(node)))
          failedAny = true;
        for (onnx::AttributeProto &attr : *node.mutable_attribute()) {
          if (attr.has_g())
            self(*attr.mutable_g()->mutable_node(), self);
          for (onnx::GraphProto &sub : *attr.mutable_graphs())
            self(*sub.mutable_node(), self);
        }
      }
    };
    adapt(*model.mutable_graph()->mutable_node(), adapt);
    for (onnx::FunctionProto &function : *model.mutable_functions()) {
      adapt(*function.mutable_node(), adapt);
      for (onnx::OperatorSetIdProto &entry : *function.mutable_opset_import())
        if ((entry.domain().empty() || entry.domain() == "ai.onnx") &&
            entry.version() > kMaxCheckedOpset)
          entry.set_version(kMaxCheckedOpset);
    }
    if (failedAny)
      return failure();
    for (onnx::OperatorSetIdProto &entry : *model.mutable_opset_import())
      if (entry.domain().empty())
        entry.set_version(kMaxCheckedOpset);
    if (hiddenAny) {
      onnx::OperatorSetIdProto *entry = model.add_opset_import();
      entry->set_domain(kNewerOpsDomain);
      entry->set_version(1);
    }
    return success();
  }

private:
  void noteConstant(const onnx::NodeProto &node) {
    if (node.output_size() != 1)
      return;
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.name() == "value" && attr.has_t()) {
        if (auto values = readIntegerTensor(attr.t()))
          constants.try_emplace(node.output(0), std::move(*values));
        ranks.try_emplace(node.output(0), attr.t().dims_size());
      } else if (attr.name() == "value_ints") {
        constants.try_emplace(
            node.output(0),
            llvm::SmallVector<int64_t>(attr.ints().begin(), attr.ints().end()));
        ranks.try_emplace(node.output(0), 1);
      }
    }
  }

  InFlightDiagnostic nodeError(const onnx::NodeProto &node) {
    return emitError(loc) << "node '" << node.name() << "' (" << node.op_type()
                          << ") of opset " << opset << ": ";
  }

  /// The constant values of input `index`: nullopt (with an error) when it
  /// is not a constant.
  std::optional<llvm::SmallVector<int64_t>>
  constantInput(const onnx::NodeProto &node, int index, llvm::StringRef what) {
    auto it = constants.find(node.input(index));
    if (it != constants.end())
      return it->second;
    nodeError(node) << "its " << what
                    << " input must be a constant (an initializer or a "
                       "Constant node): traincc compiles static shapes";
    return std::nullopt;
  }

  bool hasInput(const onnx::NodeProto &node, int index) {
    return index < node.input_size() && !node.input(index).empty();
  }

  LogicalResult adaptNode(onnx::NodeProto &node) {
    const std::string &op = node.op_type();
    if (kReduceOps.contains(op))
      return adaptReduce(node);
    if (op == "Pad")
      return adaptPad(node);
    if (op == "AveragePool") {
      if (onnx::AttributeProto *dilations = findAttr(node, "dilations")) {
        if (llvm::any_of(dilations->ints(), [](int64_t d) { return d != 1; }))
          return nodeError(node) << "dilated average pooling is not "
                                    "supported";
        eraseAttr(node, "dilations");
      }
      return success();
    }
    if (op == "Cast" || op == "CastLike") {
      // Saturation only concerns float8 targets, which traincc refuses.
      eraseAttr(node, "saturate");
      if (op == "Cast")
        return success();
    }
    if (kChangedOps.contains(op)) {
      node.set_domain(kNewerOpsDomain);
      hiddenAny = true;
    }
    return success();
  }

  /// Reduce*-18: `axes` as an optional input, and `noop_with_empty_axes`.
  LogicalResult adaptReduce(onnx::NodeProto &node) {
    bool noop = false;
    if (onnx::AttributeProto *attr = findAttr(node, "noop_with_empty_axes"))
      noop = attr->i() != 0;
    eraseAttr(node, "noop_with_empty_axes");
    llvm::SmallVector<int64_t> axes;
    if (hasInput(node, 1)) {
      auto values = constantInput(node, 1, "axes");
      if (!values)
        return failure();
      axes = *values;
    }
    truncateInputs(node, 1);
    if (axes.empty()) {
      // No axes: all of them, unless the node asks for a no-op.
      if (noop) {
        node.set_op_type("Identity");
        node.clear_attribute();
      }
      return success();
    }
    onnx::AttributeProto *attr = node.add_attribute();
    attr->set_name("axes");
    attr->set_type(onnx::AttributeProto::INTS);
    for (int64_t axis : axes)
      attr->add_ints(axis);
    return success();
  }

  /// Pad-18: an optional `axes` input (the pads then cover only those
  /// axes); Pad-19: mode `wrap`.
  LogicalResult adaptPad(onnx::NodeProto &node) {
    if (onnx::AttributeProto *mode = findAttr(node, "mode");
        mode && mode->s() == "wrap")
      return nodeError(node) << "mode 'wrap' is not supported";
    if (!hasInput(node, 3)) {
      truncateInputs(node, 3);
      return success();
    }
    auto axes = constantInput(node, 3, "axes");
    if (!axes)
      return failure();
    if (!hasInput(node, 1))
      return nodeError(node) << "it has axes but no pads";
    auto pads = constantInput(node, 1, "pads");
    if (!pads)
      return failure();
    auto rank = ranks.find(node.input(0));
    if (rank == ranks.end()) {
      // The pads cover only some axes of an input whose rank the model
      // does not give: hidden until shape inference tells it
      // (resolvePendingPads).
      node.set_domain(kNewerOpsDomain);
      hiddenAny = true;
      return success();
    }
    return expandPadAxes(node, *axes, *pads, rank->second);
  }

public:
  /// Pad nodes hidden because the rank of their input was unknown: expands
  /// those whose rank `known` now gives. Returns the number left.
  FailureOr<int> resolvePendingPads(const llvm::StringMap<int> &known) {
    int left = 0;
    for (onnx::NodeProto &node : *model.mutable_graph()->mutable_node()) {
      if (node.domain() != kNewerOpsDomain || node.op_type() != "Pad")
        continue;
      auto rank = known.find(node.input(0));
      if (rank == known.end()) {
        ++left;
        continue;
      }
      auto axes = constantInput(node, 3, "axes");
      auto pads = constantInput(node, 1, "pads");
      if (!axes || !pads ||
          failed(expandPadAxes(node, *axes, *pads, rank->second)))
        return failure();
      node.clear_domain();
    }
    return left;
  }

  /// Error for a Pad whose rank stayed unknown.
  void reportPendingPad() {
    for (onnx::NodeProto &node : *model.mutable_graph()->mutable_node())
      if (node.domain() == kNewerOpsDomain && node.op_type() == "Pad") {
        nodeError(node) << "the rank of its data input '" << node.input(0)
                        << "' is unknown, and its pads cover only some axes";
        return;
      }
  }

private:
  LogicalResult expandPadAxes(onnx::NodeProto &node,
                              llvm::ArrayRef<int64_t> axes,
                              llvm::ArrayRef<int64_t> pads, int64_t rank) {
    int64_t n = static_cast<int64_t>(axes.size());
    if (static_cast<int64_t>(pads.size()) != 2 * n)
      return nodeError(node) << "it has " << pads.size() << " pads for " << n
                             << " axes; expected " << 2 * n;
    llvm::SmallVector<int64_t> full(2 * rank, 0);
    for (auto [index, axis] : llvm::enumerate(axes)) {
      int64_t normalized = axis < 0 ? axis + rank : axis;
      if (normalized < 0 || normalized >= rank)
        return nodeError(node)
               << "axis " << axis << " is out of range for rank " << rank;
      full[normalized] = pads[index];
      full[rank + normalized] = pads[n + index];
    }
    std::string name = node.name() + "/pads";
    while (!names.insert(name).second)
      name += "_";
    onnx::TensorProto *init = model.mutable_graph()->add_initializer();
    init->set_name(name);
    init->set_data_type(onnx::TensorProto::INT64);
    init->add_dims(static_cast<int64_t>(full.size()));
    for (int64_t value : full)
      init->add_int64_data(value);
    constants.try_emplace(name, full);
    node.set_input(1, name);
    truncateInputs(node, 3);
    return success();
  }

  onnx::ModelProto &model;
  int64_t opset;
  Location loc;
  llvm::StringMap<llvm::SmallVector<int64_t>> constants;
  llvm::StringMap<int64_t> ranks;
  llvm::StringSet<> names;
  bool hiddenAny = false;
};

} // namespace

LogicalResult onnx_import::adaptToCheckedOpset(onnx::ModelProto &model,
                                               int64_t opset, Location loc) {
  return Adapter(model, opset, loc).run();
}

FailureOr<int>
onnx_import::resolvePendingPads(onnx::ModelProto &model, int64_t opset,
                                const llvm::StringMap<int> &ranks, bool last,
                                Location loc) {
  Adapter adapter(model, opset, loc);
  FailureOr<int> left = adapter.resolvePendingPads(ranks);
  if (succeeded(left) && *left > 0 && last) {
    adapter.reportPendingPad();
    return failure();
  }
  return left;
}

void onnx_import::restoreNewerOps(onnx::ModelProto &model) {
  auto restore = [](google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
                    auto &self) -> void {
    for (onnx::NodeProto &node : nodes) {
      if (node.domain() == kNewerOpsDomain)
        node.clear_domain();
      for (onnx::AttributeProto &attr : *node.mutable_attribute()) {
        if (attr.has_g())
          self(*attr.mutable_g()->mutable_node(), self);
        for (onnx::GraphProto &sub : *attr.mutable_graphs())
          self(*sub.mutable_node(), self);
      }
    }
  };
  restore(*model.mutable_graph()->mutable_node(), restore);
  for (onnx::FunctionProto &function : *model.mutable_functions())
    restore(*function.mutable_node(), restore);
  auto *opsets = model.mutable_opset_import();
  for (int index = opsets->size() - 1; index >= 0; --index)
    if (opsets->Get(index).domain() == kNewerOpsDomain)
      opsets->DeleteSubrange(index, 1);
}

std::optional<llvm::SmallVector<int64_t>>
traincc::onnx_import::readIntegerTensor(const onnx::TensorProto &tensor) {
  bool wide = tensor.data_type() == onnx::TensorProto::INT64;
  if (!wide && tensor.data_type() != onnx::TensorProto::INT32)
    return std::nullopt;
  llvm::SmallVector<int64_t> values;
  if (tensor.has_raw_data()) {
    // Sizes were validated against the shape before.
    const std::string &raw = tensor.raw_data();
    size_t width = wide ? 8 : 4;
    for (size_t offset = 0; offset + width <= raw.size(); offset += width) {
      if (wide) {
        int64_t value;
        std::memcpy(&value, raw.data() + offset, 8);
        values.push_back(value);
      } else {
        int32_t value;
        std::memcpy(&value, raw.data() + offset, 4);
        values.push_back(value);
      }
    }
  } else if (wide) {
    values.assign(tensor.int64_data().begin(), tensor.int64_data().end());
  } else {
    values.assign(tensor.int32_data().begin(), tensor.int32_data().end());
  }
  return values;
}
