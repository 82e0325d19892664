//===- ModelLoader.cpp - bytes to a checked, shape-inferred ModelProto ----===//
//
// The order of the steps matters: our own validation runs before libonnx
// sees the model (libonnx trusts tensor sizes and graph structure), the
// checker runs on the model as written, and the batch size is fixed before
// shape inference so that it propagates. This is the only file that calls
// libonnx; it is compiled with exceptions and catches all of them.
//
//===----------------------------------------------------------------------===//

#include "ModelLoader.h"
#include "ExportChecks.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"

#include <climits>
#include <csetjmp>
#include <csignal>
#include <cstring>
#include <exception>
#include <functional>
#include <unordered_map>

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

namespace {

/// libonnx messages span several lines ("...\n\n==> Context: ..."); a
/// diagnostic is one.
std::string oneLine(const char *message) {
  std::string text;
  bool space = false;
  for (const char *c = message; *c; ++c) {
    if (*c == '\n' || *c == '\r' || *c == '\t' || *c == ' ') {
      space = !text.empty();
      continue;
    }
    if (space)
      text += ' ';
    space = false;
    text += *c;
  }
  return text;
}

bool isDefaultDomain(const std::string &domain) {
  return domain.empty() || domain == "ai.onnx";
}

/// Calls `fn` on every node of `nodes` and of their subgraphs.
void forEachNode(google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
                 const std::function<void(onnx::NodeProto &)> &fn) {
  for (onnx::NodeProto &node : nodes) {
    fn(node);
    for (onnx::AttributeProto &attr : *node.mutable_attribute()) {
      if (attr.has_g())
        forEachNode(*attr.mutable_g()->mutable_node(), fn);
      for (onnx::GraphProto &sub : *attr.mutable_graphs())
        forEachNode(*sub.mutable_node(), fn);
    }
  }
}

void forEachNode(onnx::GraphProto &graph,
                 const std::function<void(onnx::NodeProto &)> &fn) {
  forEachNode(*graph.mutable_node(), fn);
}

LogicalResult parseModel(llvm::StringRef bytes, llvm::StringRef modelName,
                         Location loc, onnx::ModelProto &model) {
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    return emitError(loc) << "'" << modelName
                          << "' is larger than 2 GiB; store its weights as "
                             "ONNX external data";
  // A protobuf parse "succeeds" on many byte strings that are not models;
  // a model has an IR version and a graph.
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return emitError(loc) << "'" << modelName
                          << "' is not a valid ONNX model: it cannot be "
                             "parsed as a ModelProto";
  if (model.ir_version() <= 0)
    return emitError(loc) << "'" << modelName
                          << "' is not a valid ONNX model: it has no IR "
                             "version";
  if (!model.has_graph())
    return emitError(loc) << "'" << modelName
                          << "' is not a valid ONNX model: it has no graph";
  return success();
}

/// Returns the default-domain opset, spelling that domain "" everywhere
/// (libonnx's passes do not all accept "ai.onnx").
FailureOr<int64_t> normalizeOpsets(onnx::ModelProto &model, Location loc) {
  std::optional<int64_t> opset;
  google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto> kept;
  for (const onnx::OperatorSetIdProto &entry : model.opset_import()) {
    if (entry.version() <= 0)
      return emitError(loc)
             << "the model imports invalid version " << entry.version()
             << " of opset domain '" << entry.domain() << "'";
    if (!isDefaultDomain(entry.domain())) {
      *kept.Add() = entry;
      continue;
    }
    if (opset && *opset != entry.version())
      return emitError(loc) << "the model imports the default ONNX domain "
                               "twice, as opsets "
                            << *opset << " and " << entry.version();
    if (!opset) {
      opset = entry.version();
      onnx::OperatorSetIdProto *added = kept.Add();
      added->set_domain("");
      added->set_version(entry.version());
    }
  }
  if (!opset)
    return emitError(loc)
           << "the model imports no opset of the default ONNX domain";
  model.mutable_opset_import()->Swap(&kept);
  forEachNode(*model.mutable_graph(), [](onnx::NodeProto &node) {
    if (isDefaultDomain(node.domain()))
      node.clear_domain();
  });
  return *opset;
}

/// Names every unnamed node of the main graph "<op_type>_<index>", so that
/// diagnostics and the imported IR can name it.
void nameNodes(onnx::GraphProto &graph) {
  for (int index = 0; index < graph.node_size(); ++index) {
    onnx::NodeProto &node = *graph.mutable_node(index);
    if (node.name().empty())
      node.set_name(node.op_type() + "_" + std::to_string(index));
  }
}

/// Sets the first axis of every data input (an input that is not an
/// initializer) to `batchSize`, or, when it is 0, keeps a static first axis
/// and refuses a symbolic one: guessing a size would make a model whose
/// BatchNorm or reshapes depend on it fail later with an unrelated error.
LogicalResult fixBatchDimension(onnx::GraphProto &graph, int64_t batchSize,
                                Location loc) {
  llvm::StringSet<> initializers;
  for (const onnx::TensorProto &init : graph.initializer())
    initializers.insert(init.name());
  for (onnx::ValueInfoProto &input : *graph.mutable_input()) {
    if (initializers.contains(input.name()) ||
        !input.type().has_tensor_type() ||
        !input.type().tensor_type().has_shape() ||
        input.type().tensor_type().shape().dim_size() == 0)
      continue;
    onnx::TensorShapeProto_Dimension *dim = input.mutable_type()
                                                ->mutable_tensor_type()
                                                ->mutable_shape()
                                                ->mutable_dim(0);
    if (batchSize > 0) {
      dim->set_dim_value(batchSize);
    } else if (!dim->has_dim_value()) {
      std::string axis =
          dim->has_dim_param() ? " '" + dim->dim_param() + "'" : "";
      return emitError(loc)
             << "the batch axis" << axis << " of input '" << input.name()
             << "' is symbolic: give the micro-batch size with "
                "--batch-size N";
    }
  }
  return success();
}

/// Forgets the shapes of intermediate values and outputs (element types
/// stay): they were computed for the model's own batch size and would
/// clash with the one we set.
void clearShapes(onnx::GraphProto &graph) {
  for (onnx::ValueInfoProto &info : *graph.mutable_value_info())
    if (info.type().has_tensor_type())
      info.mutable_type()->mutable_tensor_type()->clear_shape();
  for (onnx::ValueInfoProto &info : *graph.mutable_output())
    if (info.type().has_tensor_type())
      info.mutable_type()->mutable_tensor_type()->clear_shape();
}

using ShapeData = std::unordered_map<std::string, onnx::TensorShapeProto>;

/// Shape inference runs again while each round tells more; this bounds the
/// rounds (the types left unknown are the legalisation's to report).
constexpr int kMaxInferenceRounds = 16;

/// Shape data longer than this is not a shape anyone computes.
constexpr int kMaxShapeDataRank = 64;

/// Shape data of a small integer constant (scalars are one-element lists,
/// as libonnx has them); nullopt for anything else.
std::optional<onnx::TensorShapeProto>
getConstantData(const onnx::TensorProto &tensor) {
  if (tensor.dims_size() > 1 ||
      (tensor.data_type() != onnx::TensorProto::INT64 &&
       tensor.data_type() != onnx::TensorProto::INT32))
    return std::nullopt;
  llvm::SmallVector<int64_t> values;
  if (tensor.has_raw_data()) {
    // Sizes were validated against the shape before.
    const std::string &raw = tensor.raw_data();
    size_t width = tensor.data_type() == onnx::TensorProto::INT64 ? 8 : 4;
    if (raw.size() / width > kMaxShapeDataRank)
      return std::nullopt;
    for (size_t offset = 0; offset + width <= raw.size(); offset += width) {
      int64_t value = 0;
      if (width == 8) {
        std::memcpy(&value, raw.data() + offset, 8);
      } else {
        int32_t narrow;
        std::memcpy(&narrow, raw.data() + offset, 4);
        value = narrow;
      }
      values.push_back(value);
    }
  } else if (tensor.data_type() == onnx::TensorProto::INT64) {
    values.assign(tensor.int64_data().begin(), tensor.int64_data().end());
  } else {
    values.assign(tensor.int32_data().begin(), tensor.int32_data().end());
  }
  if (values.size() > kMaxShapeDataRank)
    return std::nullopt;
  onnx::TensorShapeProto data;
  for (int64_t value : values)
    data.add_dim()->set_dim_value(value);
  return data;
}

/// Fills in shape data that libonnx 1.12 does not propagate: constants and
/// initializers, Unsqueeze/Squeeze before opset 13, Cast, Identity, and
/// Concat/Gather over them.
void propagateMoreShapeData(const onnx::GraphProto &graph, ShapeData &data) {
  for (const onnx::TensorProto &init : graph.initializer())
    if (std::optional<onnx::TensorShapeProto> value = getConstantData(init))
      data.try_emplace(init.name(), std::move(*value));
  auto find =
      [&](int index,
          const onnx::NodeProto &node) -> const onnx::TensorShapeProto * {
    if (index >= node.input_size())
      return nullptr;
    auto it = data.find(node.input(index));
    return it == data.end() ? nullptr : &it->second;
  };
  for (const onnx::NodeProto &node : graph.node()) {
    if (!node.domain().empty() || node.output_size() < 1 ||
        data.count(node.output(0)))
      continue;
    const std::string &op = node.op_type();
    std::optional<onnx::TensorShapeProto> result;
    if (op == "Constant") {
      for (const onnx::AttributeProto &attr : node.attribute())
        if (attr.name() == "value" && attr.has_t())
          result = getConstantData(attr.t());
    } else if (op == "Unsqueeze" || op == "Squeeze" || op == "Identity" ||
               op == "Cast") {
      if (const onnx::TensorShapeProto *input = find(0, node))
        result = *input;
    } else if (op == "Concat") {
      onnx::TensorShapeProto joined;
      bool complete = node.input_size() > 0;
      for (int index = 0; index < node.input_size() && complete; ++index) {
        const onnx::TensorShapeProto *input = find(index, node);
        complete = input != nullptr;
        if (input)
          for (const auto &dim : input->dim())
            *joined.add_dim() = dim;
      }
      if (complete)
        result = std::move(joined);
    } else if (op == "Gather") {
      const onnx::TensorShapeProto *input = find(0, node);
      const onnx::TensorShapeProto *indices = find(1, node);
      if (input && indices) {
        onnx::TensorShapeProto picked;
        bool complete = true;
        int size = input->dim_size();
        for (const auto &index : indices->dim()) {
          int64_t at = index.has_dim_value() ? index.dim_value() : size;
          if (at < 0)
            at += size;
          complete = complete && at >= 0 && at < size;
          if (complete)
            *picked.add_dim() = input->dim(static_cast<int>(at));
        }
        if (complete)
          result = std::move(picked);
      }
    }
    if (result)
      data.emplace(node.output(0), std::move(*result));
  }
}

/// libonnx 1.12 propagates the values of shape computations
/// (Shape -> Gather -> Concat ...) but its Reshape only reads constant
/// shapes, and gives no rank when the target is not constant. Sets the
/// output shape of each Reshape whose target values (from propagation) or
/// at least length are known; true when it set any.
bool inferReshapesFromData(onnx::GraphProto &graph, const ShapeData &data) {
  llvm::StringMap<onnx::TypeProto *> types;
  for (auto *list : {graph.mutable_input(), graph.mutable_value_info(),
                     graph.mutable_output()})
    for (onnx::ValueInfoProto &info : *list)
      types.try_emplace(info.name(), info.mutable_type());
  bool changed = false;
  for (const onnx::NodeProto &node : graph.node()) {
    if (node.op_type() != "Reshape" || !node.domain().empty() ||
        node.input_size() < 2 || node.output_size() < 1)
      continue;
    auto output = types.find(node.output(0));
    if (output == types.end() || !output->second->has_tensor_type() ||
        output->second->tensor_type().has_shape())
      continue;
    // The target's values where propagation knows them, else as many
    // unknown values as its static length (which gives the rank).
    onnx::TensorShapeProto target;
    if (auto known = data.find(node.input(1)); known != data.end()) {
      target = known->second;
    } else if (auto type = types.find(node.input(1));
               type != types.end() &&
               type->second->tensor_type().shape().dim_size() == 1 &&
               type->second->tensor_type().shape().dim(0).has_dim_value()) {
      int64_t length = type->second->tensor_type().shape().dim(0).dim_value();
      if (length < 0 || length > kMaxShapeDataRank)
        continue;
      for (int64_t index = 0; index < length; ++index)
        target.add_dim();
    } else {
      continue;
    }
    const onnx::TensorShapeProto *inputShape = nullptr;
    auto input = types.find(node.input(0));
    if (input != types.end() && input->second->has_tensor_type() &&
        input->second->tensor_type().has_shape())
      inputShape = &input->second->tensor_type().shape();
    bool allowZero = false;
    for (const onnx::AttributeProto &attr : node.attribute())
      if (attr.name() == "allowzero")
        allowZero = attr.i() != 0;

    // Known input size, for the -1 entry.
    std::optional<int64_t> inputSize;
    if (inputShape) {
      int64_t size = 1;
      bool known = true;
      for (const auto &dim : inputShape->dim())
        if (!dim.has_dim_value() || dim.dim_value() < 0 ||
            __builtin_mul_overflow(size, dim.dim_value(), &size))
          known = false;
      if (known)
        inputSize = size;
    }

    llvm::SmallVector<std::optional<int64_t>> dims;
    int inferred = -1;
    bool valid = true;
    for (auto [index, dim] : llvm::enumerate(target.dim())) {
      if (!dim.has_dim_value()) {
        dims.push_back(std::nullopt);
        continue;
      }
      int64_t value = dim.dim_value();
      if (value == -1 && inferred < 0) {
        inferred = index;
        dims.push_back(std::nullopt);
      } else if (value == 0 && !allowZero) {
        if (!inputShape || static_cast<int>(index) >= inputShape->dim_size()) {
          valid = false;
          break;
        }
        const auto &inputDim = inputShape->dim(index);
        dims.push_back(inputDim.has_dim_value() && inputDim.dim_value() >= 0
                           ? std::optional<int64_t>(inputDim.dim_value())
                           : std::nullopt);
      } else if (value < 0) {
        valid = false;
        break;
      } else {
        dims.push_back(value);
      }
    }
    if (!valid)
      continue;
    if (inferred >= 0 && inputSize) {
      int64_t known = 1;
      bool complete = true;
      for (auto [index, dim] : llvm::enumerate(dims))
        if (static_cast<int>(index) != inferred &&
            (!dim || __builtin_mul_overflow(known, *dim, &known)))
          complete = false;
      if (complete && known > 0 && *inputSize % known == 0)
        dims[inferred] = *inputSize / known;
    }
    // A target that does not hold the input's elements is the
    // legalisation's to report; the result stays unknown.
    if (inputSize && llvm::all_of(dims, [](auto dim) { return dim; })) {
      int64_t total = 1;
      bool overflow = false;
      for (std::optional<int64_t> dim : dims)
        overflow |= __builtin_mul_overflow(total, *dim, &total);
      if (overflow || total != *inputSize)
        continue;
    }
    onnx::TensorShapeProto *shape =
        output->second->mutable_tensor_type()->mutable_shape();
    for (std::optional<int64_t> dim : dims) {
      onnx::TensorShapeProto_Dimension *added = shape->add_dim();
      if (dim)
        added->set_dim_value(*dim);
    }
    changed = true;
  }
  return changed;
}

/// Ranks of the values whose shape is known: inputs, value_info, outputs,
/// initializers.
llvm::StringMap<int> collectRanks(const onnx::GraphProto &graph) {
  llvm::StringMap<int> ranks;
  for (const auto *list :
       {&graph.input(), &graph.value_info(), &graph.output()})
    for (const onnx::ValueInfoProto &info : *list)
      if (info.type().tensor_type().has_shape())
        ranks[info.name()] = info.type().tensor_type().shape().dim_size();
  for (const onnx::TensorProto &init : graph.initializer())
    ranks[init.name()] = init.dims_size();
  return ranks;
}

/// Keeps libonnx 1.12's shape inference away from what it faults on (found
/// by test/fuzz/gen-hostile-models.py) while it runs:
/// - MaxUnpool, ConvTranspose and STFT (and before opset 7 also RNN, GRU
///   and LSTM) index the dimensions of an input unchecked, so an input of
///   a small or unknown rank faults. traincc does not support them; they
///   are hidden (moved to a domain of their own) and their result types
///   stay unknown.
/// - Gemm before opset 7 does the same with A and B: it is hidden until
///   both are known to be matrices (`ranks`, from an earlier round).
/// - LayerNormalization infers its Mean and InvStdDev outputs by indexing
///   the input shape with `axis + rank`, which faults for an axis below
///   -rank; the rank is not known before inference. Those outputs are
///   detached from nodes whose axis is not plainly safe (it is negative by
///   default; PyTorch exports no such outputs) and their types stay unknown.
class InferenceShield {
public:
  InferenceShield(onnx::ModelProto &model, int64_t opset,
                  const llvm::StringMap<int> &ranks) {
    auto isMatrix = [&](const onnx::NodeProto &node, int index) {
      auto rank = ranks.find(node.input(index));
      return rank != ranks.end() && rank->second == 2;
    };
    auto shield = [&](onnx::NodeProto &node) {
      if (!node.domain().empty())
        return;
      const std::string &op = node.op_type();
      bool legacy = opset < kMinImportedOpset;
      if (legacy && op == "Gemm" && node.input_size() >= 2 &&
          !(isMatrix(node, 0) && isMatrix(node, 1))) {
        ++waiting;
        hide(node);
        return;
      }
      if (op == "MaxUnpool" || op == "ConvTranspose" || op == "STFT" ||
          (legacy && (op == "RNN" || op == "GRU" || op == "LSTM"))) {
        hide(node);
        return;
      }
      if (op != "LayerNormalization" || node.output_size() < 2)
        return;
      int64_t axis = -1;
      for (const onnx::AttributeProto &attr : node.attribute())
        if (attr.name() == "axis")
          axis = attr.i();
      if (axis >= 0 && axis < INT_MAX)
        return;
      detached.emplace_back(&node, node.output());
      node.mutable_output()->DeleteSubrange(1, node.output_size() - 1);
    };
    forEachNode(*model.mutable_graph(), shield);
    for (onnx::FunctionProto &function : *model.mutable_functions())
      forEachNode(*function.mutable_node(), shield);
    // A domain the model imports but no schema has: inference skips it.
    if (!hidden.empty()) {
      onnx::OperatorSetIdProto *entry = model.add_opset_import();
      entry->set_domain(kHiddenDomain);
      entry->set_version(1);
      opsets = model.mutable_opset_import();
    }
  }
  ~InferenceShield() {
    if (opsets)
      opsets->RemoveLast();
    for (onnx::NodeProto *node : hidden)
      node->clear_domain();
    for (auto &[node, outputs] : detached)
      *node->mutable_output() = outputs;
  }

  /// Nodes hidden until the ranks of their inputs are known.
  int getNumWaiting() const { return waiting; }

private:
  void hide(onnx::NodeProto &node) {
    hidden.push_back(&node);
    node.set_domain(kHiddenDomain);
  }

  static constexpr const char *kHiddenDomain = "traincc.not_inferred";
  google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto> *opsets =
      nullptr;
  std::vector<onnx::NodeProto *> hidden;
  std::vector<std::pair<onnx::NodeProto *,
                        google::protobuf::RepeatedPtrField<std::string>>>
      detached;
  int waiting = 0;
};

/// Where a crash inside libonnx's shape inference jumps back to.
sigjmp_buf *inferenceCrashTarget = nullptr;

void onInferenceCrash(int signal) { siglongjmp(*inferenceCrashTarget, signal); }

/// Runs `infer` (libonnx shape inference) and returns false if it crashed.
/// libonnx 1.12 dereferences what some malformed graphs leave unset (a
/// Keras export whose Reshapes disagree with its convolutions segfaulted
/// in it); that must be an error naming the problem, not a crash. The
/// compile stops right after, so the state a crash leaves behind in
/// libonnx does not matter.
bool runInferenceGuarded(llvm::function_ref<void()> infer) {
  static const int signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
  struct sigaction guard = {}, previous[std::size(signals)];
  guard.sa_handler = onInferenceCrash;
  sigemptyset(&guard.sa_mask);
  guard.sa_flags = SA_NODEFER;
  sigjmp_buf target;
  inferenceCrashTarget = &target;
  for (size_t i = 0; i < std::size(signals); ++i)
    sigaction(signals[i], &guard, &previous[i]);
  auto restore = llvm::make_scope_exit([&] {
    for (size_t i = 0; i < std::size(signals); ++i)
      sigaction(signals[i], &previous[i], nullptr);
    inferenceCrashTarget = nullptr;
  });
  if (sigsetjmp(target, /*savemask=*/1) != 0)
    return false;
  infer();
  return true;
}

/// The error for a crash in libonnx's shape inference.
InFlightDiagnostic inferenceCrashError(Location loc) {
  return emitError(loc)
         << "ONNX shape inference crashed on this model: it is probably "
            "malformed (onnx.checker.check_model(model, full_check=True) "
            "names the node); re-export it";
}

LogicalResult inferShapes(onnx::ModelProto &model, int64_t opset,
                          Location loc) {
  // Node-level inference errors are left to the legalisation, which
  // reports them with the node; errors of the model as a whole are thrown.
  onnx::ShapeInferenceOptions options(/*check_type=*/false,
                                      /*strict_mode=*/0,
                                      /*data_prop=*/true);
  // Each round settles at least one Reshape; chains of Reshapes whose
  // shapes depend on earlier ones need a few.
  for (int round = 0; round < kMaxInferenceRounds; ++round) {
    ShapeData data;
    try {
      InferenceShield shield(model, opset, collectRanks(model.graph()));
      if (!runInferenceGuarded([&] {
            onnx::shape_inference::InferShapes(
                model, onnx::OpSchemaRegistry::Instance(), options, &data);
          }))
        return inferenceCrashError(loc);
    } catch (const std::exception &e) {
      return emitError(loc)
             << "ONNX shape inference failed: " << oneLine(e.what());
    }
    propagateMoreShapeData(model.graph(), data);
    if (!inferReshapesFromData(*model.mutable_graph(), data))
      break;
  }
  return success();
}

/// Expands the Pads of opset 18 on whose `axes` input covers some axes of an
/// input of unknown rank (adaptToCheckedOpset hid them): shape inference
/// runs on the checked model, which tells the ranks of the values before
/// each Pad, a round per chain of such Pads; then the model is checked
/// again with them in their opset-17 form. The inferred shapes are cleared
/// with the others before the batch size is set.
LogicalResult resolvePads(onnx::ModelProto &model, int64_t opset,
                          Location loc) {
  for (int round = 0;; ++round) {
    FailureOr<int> left =
        resolvePendingPads(model, opset, collectRanks(model.graph()),
                           round == kMaxInferenceRounds, loc);
    if (failed(left))
      return failure();
    if (*left == 0 && round == 0)
      return success();
    if (*left == 0)
      break;
    try {
      InferenceShield shield(model, kMaxCheckedOpset,
                             collectRanks(model.graph()));
      if (!runInferenceGuarded(
              [&] { onnx::shape_inference::InferShapes(model); }))
        return inferenceCrashError(loc);
    } catch (const std::exception &e) {
      return emitError(loc)
             << "ONNX shape inference failed: " << oneLine(e.what());
    }
  }
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    return emitError(loc) << "the ONNX checker rejected the model: "
                          << oneLine(e.what());
  }
  return success();
}

/// Opset-6 broadcasting (`broadcast = 1` with `axis`) aligns B with A at
/// `axis`; libonnx 1.12's converter aligns it at the end whatever `axis`
/// says, which silently changes the model. Makes the alignment explicit
/// (an opset-1 Unsqueeze of B) and drops `axis`, so the converter sees
/// plain trailing broadcasting. Needs the shapes inferred before.
LogicalResult makeLegacyBroadcastExplicit(onnx::GraphProto &graph,
                                          Location loc) {
  // Tensor types of values (initializers hold theirs exactly).
  llvm::StringMap<onnx::TypeProto_Tensor> types;
  for (const onnx::TensorProto &init : graph.initializer()) {
    onnx::TypeProto_Tensor type;
    type.set_elem_type(init.data_type());
    for (int64_t dim : init.dims())
      type.mutable_shape()->add_dim()->set_dim_value(dim);
    types.try_emplace(init.name(), std::move(type));
  }
  for (auto *list : {&graph.input(), &graph.value_info(), &graph.output()})
    for (const onnx::ValueInfoProto &info : *list)
      types.try_emplace(info.name(), info.type().tensor_type());
  llvm::StringSet<> names;
  for (const auto &entry : types)
    names.insert(entry.getKey());
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &output : node.output())
      names.insert(output);
  auto rankOf = [&](const std::string &name) -> std::optional<int> {
    auto it = types.find(name);
    if (it == types.end() || !it->second.has_shape())
      return std::nullopt;
    return it->second.shape().dim_size();
  };

  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (onnx::NodeProto &node : *graph.mutable_node()) {
    auto *attrs = node.mutable_attribute();
    auto axisAttr = llvm::find_if(
        *attrs, [](const auto &attr) { return attr.name() == "axis"; });
    bool broadcast = llvm::any_of(*attrs, [](const auto &attr) {
      return attr.name() == "broadcast" && attr.i() != 0;
    });
    if (!broadcast || axisAttr == attrs->end() || node.op_type() == "Gemm" ||
        node.input_size() < 2) {
      nodes.Add()->Swap(&node);
      continue;
    }
    std::optional<int> rankA = rankOf(node.input(0));
    std::optional<int> rankB = rankOf(node.input(1));
    if (!rankA || !rankB)
      return emitError(loc) << "cannot convert node '" << node.name() << "' ("
                            << node.op_type()
                            << ") to opset 7: the ranks of its inputs are "
                               "unknown";
    int64_t axis = axisAttr->i();
    if (axis < 0 || axis + *rankB > *rankA)
      return emitError(loc) << "node '" << node.name() << "' ("
                            << node.op_type() << "): broadcast axis " << axis
                            << " is out of range for inputs of rank " << *rankA
                            << " and " << *rankB;
    int64_t trailing = *rankA - axis - *rankB;
    attrs->erase(axisAttr);
    if (trailing > 0) {
      std::string name = node.input(1) + "/aligned";
      while (!names.insert(name).second)
        name += "_";
      onnx::NodeProto *unsqueeze = nodes.Add();
      unsqueeze->set_op_type("Unsqueeze");
      unsqueeze->set_name(node.name() + "/align");
      unsqueeze->add_input(node.input(1));
      unsqueeze->add_output(name);
      onnx::AttributeProto *axes = unsqueeze->add_attribute();
      axes->set_name("axes");
      axes->set_type(onnx::AttributeProto::INTS);
      // The converter needs the new value's shape.
      onnx::ValueInfoProto *info = graph.add_value_info();
      info->set_name(name);
      onnx::TypeProto_Tensor *type =
          info->mutable_type()->mutable_tensor_type();
      *type = types.find(node.input(1))->second;
      for (int64_t index = 0; index < trailing; ++index) {
        axes->add_ints(*rankB + index);
        type->mutable_shape()->add_dim()->set_dim_value(1);
      }
      node.set_input(1, name);
    }
    nodes.Add()->Swap(&node);
  }
  graph.mutable_node()->Swap(&nodes);
  return success();
}

LogicalResult convertOpset(onnx::ModelProto &model, int64_t opset,
                           Location loc) {
  try {
    // The adapters of the step from opset 6 to 7 need the input shapes.
    // Opset-6 ops all have shape inference, older ones often not: go to
    // opset 6 first, then infer shapes.
    if (opset < 6)
      model = onnx::version_conversion::ConvertVersion(model, 6);
    // Each round may tell the ranks of the inputs of Gemms held back.
    for (int round = 0, waiting = INT_MAX; round < kMaxInferenceRounds;
         ++round) {
      InferenceShield shield(model, std::min<int64_t>(opset, 6),
                             collectRanks(model.graph()));
      onnx::shape_inference::InferShapes(model);
      if (shield.getNumWaiting() == 0 || shield.getNumWaiting() >= waiting)
        break;
      waiting = shield.getNumWaiting();
    }
    // The converter's Gemm adapter reads the dimensions of A and B
    // unchecked.
    llvm::StringMap<int> ranks = collectRanks(model.graph());
    for (const onnx::NodeProto &node : model.graph().node())
      for (int index = 0;
           node.op_type() == "Gemm" && index < 2 && index < node.input_size();
           ++index)
        if (auto rank = ranks.find(node.input(index));
            rank == ranks.end() || rank->second != 2)
          return emitError(loc) << "node '" << node.name() << "' (Gemm): input "
                                << index << " is not known to be a matrix";
    if (failed(makeLegacyBroadcastExplicit(*model.mutable_graph(), loc)))
      return failure();
    model = onnx::version_conversion::ConvertVersion(model, kMinImportedOpset);
  } catch (const std::exception &e) {
    return emitError(loc) << "cannot convert the model from ONNX opset "
                          << opset << " to opset " << kMinImportedOpset << ": "
                          << oneLine(e.what());
  }
  return success();
}

LogicalResult loadModelImpl(llvm::StringRef bytes, llvm::StringRef modelDir,
                            llvm::StringRef modelName,
                            const ONNXImportOptions &options, Location loc,
                            LoadedModel &result) {
  onnx::ModelProto &model = result.model;
  if (failed(parseModel(bytes, modelName, loc, model)))
    return failure();
  FailureOr<int64_t> opset = normalizeOpsets(model, loc);
  if (failed(opset))
    return failure();
  if (*opset > kMaxImportedOpset)
    return emitError(loc) << "the model uses ONNX opset " << *opset
                          << ", newer than opset " << kMaxImportedOpset
                          << ", the latest traincc accepts; re-export it "
                             "with torch.onnx.export(..., opset_version="
                          << kMaxImportedOpset << ")";
  // The checker would say only "higher than the checker's".
  if (model.ir_version() > kMaxImportedIRVersion)
    return emitError(loc) << "the model has ONNX IR version "
                          << model.ir_version() << ", newer than IR version "
                          << kMaxImportedIRVersion
                          << ", the latest traincc accepts; re-export it "
                             "with torch.onnx.export(..., opset_version="
                          << kMaxImportedOpset << ")";
  static_assert(kMaxCheckedIRVersion <=
                static_cast<int64_t>(onnx::Version::IR_VERSION));
  onnx::GraphProto &graph = *model.mutable_graph();
  nameNodes(graph);
  if (failed(validateTensors(model, modelDir, options, loc)) ||
      failed(validateGraphInputs(graph, loc)) ||
      failed(checkFunctionRecursion(model, loc)))
    return failure();
  // IR versions 9 and 10 add element types (float8, int4) that the tensor
  // validation refused already, and function overloads, which the IR-8
  // checker does not read.
  if (model.ir_version() > kMaxCheckedIRVersion)
    model.set_ir_version(kMaxCheckedIRVersion);
  if (failed(validateNodeAttributes(model, loc)) ||
      failed(sortGraph(graph, loc)))
    return failure();
  // Newer opsets become opset 17 before the checker.
  int64_t writtenOpset = *opset;
  if (*opset > kMaxCheckedOpset) {
    if (failed(adaptToCheckedOpset(model, *opset, loc)))
      return failure();
    opset = kMaxCheckedOpset;
  }

  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    return emitError(loc) << "the ONNX checker rejected the model: "
                          << oneLine(e.what());
  }

  if (writtenOpset > kMaxCheckedOpset &&
      failed(resolvePads(model, writtenOpset, loc)))
    return failure();

  if (failed(checkExportedForTraining(model, options, loc)) ||
      failed(fixBatchDimension(graph, options.batchSize, loc)))
    return failure();
  clearShapes(graph);
  if (*opset < kMinImportedOpset) {
    if (failed(convertOpset(model, *opset, loc)))
      return failure();
    // The converter rebuilds the graph: check what it produced like input.
    FailureOr<int64_t> converted = normalizeOpsets(model, loc);
    if (failed(converted))
      return failure();
    if (*converted != kMinImportedOpset)
      return emitError(loc) << "cannot convert the model from ONNX opset "
                            << *opset << " to opset " << kMinImportedOpset;
    opset = converted;
    nameNodes(*model.mutable_graph());
    clearShapes(*model.mutable_graph());
    if (failed(sortGraph(*model.mutable_graph(), loc)))
      return failure();
  }
  if (failed(inferShapes(model, *opset, loc)))
    return failure();
  restoreNewerOps(model);
  result.opset = *opset;
  return success();
}

} // namespace

LogicalResult onnx_import::loadModel(llvm::StringRef bytes,
                                     llvm::StringRef modelDir,
                                     llvm::StringRef modelName,
                                     const ONNXImportOptions &options,
                                     Location loc, LoadedModel &result) {
  // The steps catch libonnx's errors themselves to say which step failed;
  // this catches the rest (allocation failures included).
  try {
    return loadModelImpl(bytes, modelDir, modelName, options, loc, result);
  } catch (const std::exception &e) {
    return emitError(loc) << "cannot read '" << modelName
                          << "': " << oneLine(e.what());
  } catch (...) {
    return emitError(loc) << "cannot read '" << modelName
                          << "': unknown error in libonnx";
  }
}
