//===- ExportChecks.cpp - was the model exported for training? -----------===//
//
// Exporters default to inference graphs, and what they drop cannot be
// trained back: PyTorch 2's exporter and tf2onnx fold BatchNorm into the
// convolutions (and drop the zero biases of convolutions that BatchNorm
// followed), PyTorch's legacy exporter renames the folded weights
// `onnx::Conv_N`, some converters write weights as Constant nodes (which
// traincc keeps frozen), PyTorch 2's optimizer merges initializers of
// equal values (every fresh LayerNorm's scale of ones becomes one tensor,
// which would then train as one), and a graph traced at one batch size
// reshapes to that size. The symptoms are read from the graph alone, so that models
// from any producer are judged alike; the producer only picks which recipe
// the message gives. The checks see the model after the checker, before
// the batch size is set: the inputs still have their exported shapes.
//
//===----------------------------------------------------------------------===//

#include "ExportChecks.h"
#include "ModelLoader.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <cstring>
#include <optional>
#include <string>

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

namespace {

enum class Producer { PyTorch, TF2ONNX, JAX2ONNX, Other };

Producer getProducer(const onnx::ModelProto &model) {
  llvm::StringRef name = model.producer_name();
  if (name == "pytorch")
    return Producer::PyTorch;
  if (name == "tf2onnx" || name == "keras2onnx")
    return Producer::TF2ONNX;
  if (name == "jax2onnx")
    return Producer::JAX2ONNX;
  return Producer::Other;
}

/// How to export what trains, per producer (README: "Exporting models for
/// training" has each recipe in full, with a test behind it).
const char *getTrainingRecipe(Producer producer) {
  switch (producer) {
  case Producer::PyTorch:
    return "torch.onnx.export(model.train(), (x,), path, dynamo=False, "
           "training=torch.onnx.TrainingMode.TRAINING, "
           "do_constant_folding=False, input_names=['input'], "
           "dynamic_axes={'input': {0: 'batch'}}) (leave out dynamo=False "
           "before PyTorch 2.0)";
  case Producer::TF2ONNX:
    return "tf2onnx.convert.from_keras(model, input_signature, "
           "optimizers={}) with TensorFlow's constant folding off and "
           "BatchNormalization as FusedBatchNormV3 "
           "(test/e2e/frameworks/keras_export.py does both)";
  case Producer::JAX2ONNX:
    return "jax2onnx.to_onnx(model, [('B', ...)], opset=21): Flax "
           "BatchNorm, Conv and Linear stay layers with their parameters as "
           "initializers";
  case Producer::Other:
    return "export in training mode without constant folding, so that "
           "BatchNormalization nodes and every bias stay, with the weights "
           "as initializers";
  }
  return "";
}

const char *getDynamicBatchRecipe(Producer producer) {
  switch (producer) {
  case Producer::PyTorch:
    return "torch.onnx.export(..., input_names=['input'], "
           "dynamic_axes={'input': {0: 'batch'}}), or with dynamo=True "
           "dynamic_shapes=({0: torch.export.Dim('batch')},)";
  case Producer::TF2ONNX:
    return "an input_signature whose first dimension is None, "
           "tf.TensorSpec((None, ...))";
  case Producer::JAX2ONNX:
    return "a symbolic first dimension, jax2onnx.to_onnx(model, "
           "[('B', ...)])";
  case Producer::Other:
    return "a symbolic first dimension on every input, and reshapes that "
           "keep the batch axis (0 or -1) rather than its size";
  }
  return "";
}

/// The integer values of a 0-d or 1-d INT64/INT32 tensor.
std::optional<llvm::SmallVector<int64_t>>
getIntegerValues(const onnx::TensorProto &tensor) {
  if (tensor.dims_size() > 1)
    return std::nullopt;
  return readIntegerTensor(tensor);
}

class ExportChecker {
public:
  ExportChecker(const onnx::ModelProto &model, Location loc)
      : graph(model.graph()), producer(getProducer(model)), loc(loc) {
    for (const onnx::TensorProto &init : graph.initializer())
      initializers[init.name()] = &init;
    for (const onnx::NodeProto &node : graph.node())
      for (const std::string &output : node.output())
        producers[output] = &node;
  }

  void warnIfExportedForInference();
  LogicalResult checkBatchSize(int64_t batchSize);

private:
  /// The tensor of a Constant node's `value`, or null.
  static const onnx::TensorProto *
  getConstantTensor(const onnx::NodeProto &node) {
    if (node.op_type() != "Constant" || !node.domain().empty())
      return nullptr;
    for (const onnx::AttributeProto &attr : node.attribute())
      if (attr.name() == "value" && attr.has_t())
        return &attr.t();
    return nullptr;
  }

  /// The Constant node that `name` is (through ops that only move or
  /// convert values), when it holds floats; null otherwise.
  const onnx::NodeProto *getFrozenWeight(const std::string &name) const;

  /// Values that depend on a data input (not on weights alone).
  llvm::StringSet<> collectDataDependent() const;

  const onnx::GraphProto &graph;
  Producer producer;
  Location loc;
  llvm::StringMap<const onnx::TensorProto *> initializers;
  llvm::StringMap<const onnx::NodeProto *> producers;
};

const onnx::NodeProto *
ExportChecker::getFrozenWeight(const std::string &name) const {
  std::string current = name;
  // Converters put a Transpose, Reshape or Cast between a constant and its
  // user; a few steps cover them, and bound the walk.
  for (int step = 0; step < 8; ++step) {
    auto found = producers.find(current);
    if (found == producers.end())
      return nullptr;
    const onnx::NodeProto &node = *found->second;
    if (const onnx::TensorProto *tensor = getConstantTensor(node)) {
      int32_t type = tensor->data_type();
      bool isFloat = type == onnx::TensorProto::FLOAT ||
                     type == onnx::TensorProto::FLOAT16 ||
                     type == onnx::TensorProto::BFLOAT16 ||
                     type == onnx::TensorProto::DOUBLE;
      return isFloat && tensor->dims_size() > 0 ? &node : nullptr;
    }
    static const llvm::StringSet<> moves = {
        "Identity", "Transpose", "Reshape", "Cast", "Squeeze", "Unsqueeze"};
    if (!node.domain().empty() || !moves.contains(node.op_type()) ||
        node.input_size() < 1)
      return nullptr;
    current = node.input(0);
  }
  return nullptr;
}

void ExportChecker::warnIfExportedForInference() {
  bool hasBatchNorm = false;
  const onnx::NodeProto *unbiasedConv = nullptr;
  const onnx::NodeProto *renamedConv = nullptr;
  llvm::SmallVector<std::string> frozen;
  // Normalization scales and biases by initializer: the nodes reading each.
  static const llvm::StringSet<> norms = {
      "BatchNormalization", "LayerNormalization", "InstanceNormalization",
      "GroupNormalization"};
  llvm::StringMap<int> normReaders;
  for (const onnx::NodeProto &node : graph.node()) {
    if (!node.domain().empty())
      continue;
    const std::string &op = node.op_type();
    if (norms.contains(op))
      for (int index = 1; index < node.input_size() && index < 3; ++index)
        if (initializers.contains(node.input(index)))
          ++normReaders[node.input(index)];
    if (op == "BatchNormalization")
      hasBatchNorm = true;
    bool isConv = op == "Conv" || op == "ConvTranspose";
    if (isConv && !unbiasedConv &&
        (node.input_size() < 3 || node.input(2).empty()))
      unbiasedConv = &node;
    // PyTorch's legacy exporter names the weights it computed by folding
    // after their user; the module's own are named after the module.
    if (isConv && !renamedConv && producer == Producer::PyTorch &&
        node.input_size() >= 2 && initializers.contains(node.input(1)) &&
        llvm::StringRef(node.input(1)).starts_with("onnx::Conv_"))
      renamedConv = &node;
    if (isConv || op == "Gemm" || op == "MatMul")
      for (int index = 0; index < node.input_size() && index < 3; ++index)
        if (index > 0 || op == "MatMul")
          if (getFrozenWeight(node.input(index)))
            frozen.push_back("'" + node.name() + "' (" + op + ") input " +
                             std::to_string(index));
  }

  std::string reason;
  if (!frozen.empty()) {
    reason = "weights are Constant nodes, which traincc keeps frozen, not "
             "initializers: " +
             frozen.front();
    if (frozen.size() > 1)
      reason += " and " + std::to_string(frozen.size() - 1) + " more";
  } else if (!hasBatchNorm && unbiasedConv) {
    reason = "it has no BatchNormalization and convolution '" +
             unbiasedConv->name() +
             "' has no bias (BatchNorm folded into the convolutions?)";
  } else if (auto shared = llvm::find_if(
                 normReaders, [](const auto &e) { return e.second > 1; });
             shared != normReaders.end()) {
    reason = "initializer '" + shared->getKey().str() + "' is the scale or "
             "bias of " + std::to_string(shared->second) +
             " normalization nodes, so they train as one (initializers of "
             "equal values merged by the exporter?)";
  } else if (!hasBatchNorm && renamedConv) {
    reason = "it has no BatchNormalization and convolution '" +
             renamedConv->name() + "' has weights named '" +
             renamedConv->input(1) +
             "' by the exporter (BatchNorm folded into the convolutions?)";
  } else {
    return;
  }
  emitWarning(loc) << "the model looks exported for inference: " << reason
                   << "; traincc trains the graph as written. To train "
                      "what the framework trains, re-export it with "
                   << getTrainingRecipe(producer);
}

llvm::StringSet<> ExportChecker::collectDataDependent() const {
  llvm::StringSet<> dependent;
  for (const onnx::ValueInfoProto &input : graph.input())
    if (!initializers.contains(input.name()))
      dependent.insert(input.name());
  // The loader sorted the nodes: one pass in order sees every input first.
  for (const onnx::NodeProto &node : graph.node())
    if (llvm::any_of(node.input(), [&](const std::string &name) {
          return dependent.contains(name);
        }))
      for (const std::string &output : node.output())
        dependent.insert(output);
  return dependent;
}

LogicalResult ExportChecker::checkBatchSize(int64_t batchSize) {
  // The exported batch size: the static first axis of a data input.
  const onnx::ValueInfoProto *fixedInput = nullptr;
  int64_t exported = 0;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (initializers.contains(input.name()) ||
        !input.type().has_tensor_type() ||
        !input.type().tensor_type().has_shape() ||
        input.type().tensor_type().shape().dim_size() == 0)
      continue;
    const auto &dim = input.type().tensor_type().shape().dim(0);
    if (dim.has_dim_value() && dim.dim_value() > 0) {
      fixedInput = &input;
      exported = dim.dim_value();
      break;
    }
  }
  if (!fixedInput || batchSize <= 0 || exported == batchSize)
    return success();

  // A reshape of the data to a constant shape that starts with that size
  // keeps it whatever --batch-size says; the failure would come later, as
  // a shape mismatch far from its cause.
  llvm::StringSet<> dependent = collectDataDependent();
  for (const onnx::NodeProto &node : graph.node()) {
    if (node.op_type() != "Reshape" || !node.domain().empty() ||
        node.input_size() < 2 || !dependent.contains(node.input(0)))
      continue;
    const onnx::TensorProto *target = nullptr;
    if (auto init = initializers.find(node.input(1));
        init != initializers.end())
      target = init->second;
    else if (auto found = producers.find(node.input(1));
             found != producers.end())
      target = getConstantTensor(*found->second);
    if (!target)
      continue;
    std::optional<llvm::SmallVector<int64_t>> shape = getIntegerValues(*target);
    if (!shape || shape->empty() || shape->front() != exported)
      continue;
    std::string dims;
    for (auto [index, value] : llvm::enumerate(*shape))
      dims += (index ? ", " : "") + std::to_string(value);
    std::string inputDims;
    for (auto [index, dim] :
         llvm::enumerate(fixedInput->type().tensor_type().shape().dim()))
      inputDims += (index ? ", " : "") + (dim.has_dim_value()
                                              ? std::to_string(dim.dim_value())
                                              : dim.dim_param());
    return emitError(loc)
           << "the model was exported with a fixed batch size of " << exported
           << " (input '" << fixedInput->name() << "' is [" << inputDims
           << "]) and node '" << node.name() << "' (Reshape) reshapes to ["
           << dims << "], so it cannot train with --batch-size " << batchSize
           << ": compile with --batch-size " << exported
           << ", or re-export it with a dynamic batch axis: "
           << getDynamicBatchRecipe(producer);
  }
  return success();
}

} // namespace

LogicalResult
onnx_import::checkExportedForTraining(const onnx::ModelProto &model,
                                      const ONNXImportOptions &options,
                                      Location loc) {
  // The warning first: a model traced at another batch size is often
  // exported for inference too, and both recipes apply.
  ExportChecker checker(model, loc);
  checker.warnIfExportedForInference();
  return checker.checkBatchSize(options.batchSize);
}

void onnx_import::annotateTrainingConventions(ModuleOp module,
                                              const onnx::ModelProto &model) {
  Producer producer = getProducer(model);
  if (producer == Producer::TF2ONNX || producer == Producer::JAX2ONNX)
    module->setAttr("train.bn_running_variance",
                    Builder(module.getContext()).getStringAttr("biased"));
}
