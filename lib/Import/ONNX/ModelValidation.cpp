//===- ModelValidation.cpp - checks before libonnx sees a model -----------===//
//
// libonnx's checker, version converter and shape inference trust what they
// read: a tensor whose data is shorter than its shape, or a graph with a
// cycle, can make them read out of bounds or loop. Everything they would
// trust is checked here first, before any allocation that the model sizes.
//
//===----------------------------------------------------------------------===//

#include "ModelLoader.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstring>
#include <queue>

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

using onnx::TensorProto;

//===----------------------------------------------------------------------===//
// Element types and sizes
//===----------------------------------------------------------------------===//

std::string onnx_import::getElementTypeName(int32_t dataType) {
  if (onnx::TensorProto_DataType_IsValid(dataType))
    return onnx::TensorProto_DataType_Name(
        static_cast<TensorProto::DataType>(dataType));
  return "<unknown type " + std::to_string(dataType) + ">";
}

const char *onnx_import::getTypeKindName(const onnx::TypeProto &type) {
  switch (type.value_case()) {
  case onnx::TypeProto::kTensorType:
    return "a tensor";
  case onnx::TypeProto::kSequenceType:
    return "a sequence";
  case onnx::TypeProto::kMapType:
    return "a map";
  case onnx::TypeProto::kOptionalType:
    return "an optional";
  case onnx::TypeProto::kSparseTensorType:
    return "a sparse tensor";
  default:
    return "an unknown";
  }
}

std::optional<unsigned> onnx_import::getElementByteSize(int32_t dataType) {
  switch (dataType) {
  case TensorProto::FLOAT:
  case TensorProto::INT32:
    return 4;
  case TensorProto::DOUBLE:
  case TensorProto::INT64:
    return 8;
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
    return 2;
  case TensorProto::INT8:
  case TensorProto::UINT8:
  case TensorProto::BOOL:
    return 1;
  default:
    return std::nullopt;
  }
}

std::optional<uint64_t>
onnx_import::getTensorByteSize(llvm::ArrayRef<int64_t> dims,
                               unsigned elementBytes) {
  uint64_t bytes = elementBytes;
  for (int64_t dim : dims) {
    if (dim < 0)
      return std::nullopt;
    // A zero dimension makes the tensor empty whatever the others say, but
    // the others must still be representable.
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(dim), &bytes))
      return std::nullopt;
  }
  // Element counts must also fit int64 (MLIR shapes are signed).
  if (bytes > static_cast<uint64_t>(INT64_MAX))
    return std::nullopt;
  return bytes;
}

std::string onnx_import::formatShape(llvm::ArrayRef<int64_t> dims) {
  std::string text = "[";
  for (auto [index, dim] : llvm::enumerate(dims)) {
    if (index)
      text += ", ";
    text += std::to_string(dim);
  }
  return text + "]";
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

namespace {

/// Walks every tensor of a model and checks it, reading external data.
class TensorValidator {
public:
  TensorValidator(llvm::StringRef modelDir, const ONNXImportOptions &options,
                  Location loc)
      : modelDir(modelDir), options(options), loc(loc) {}

  LogicalResult validateGraph(onnx::GraphProto &graph);

private:
  LogicalResult validateNode(onnx::NodeProto &node);
  LogicalResult validateTensor(TensorProto &tensor, const std::string &what);
  LogicalResult checkInlineData(const TensorProto &tensor, uint64_t elements,
                                uint64_t bytes, const std::string &what);
  LogicalResult readExternalData(TensorProto &tensor, uint64_t bytes,
                                 const std::string &what);
  /// Resolves `location` under the model's folder to a real path inside
  /// it; failure (reported) when it is absolute, leaves the folder
  /// (directly or through symbolic links) or is not a regular file.
  FailureOr<std::string> resolveLocation(llvm::StringRef location,
                                         const std::string &what);

  llvm::StringRef modelDir;
  const ONNXImportOptions &options;
  Location loc;
  uint64_t externalBytes = 0;
};

} // namespace

LogicalResult TensorValidator::validateGraph(onnx::GraphProto &graph) {
  for (TensorProto &tensor : *graph.mutable_initializer())
    if (failed(validateTensor(tensor, "initializer '" + tensor.name() + "'")))
      return failure();
  if (graph.sparse_initializer_size() != 0)
    return emitError(loc) << "sparse initializer '"
                          << graph.sparse_initializer(0).values().name()
                          << "' is not supported";
  for (onnx::NodeProto &node : *graph.mutable_node())
    if (failed(validateNode(node)))
      return failure();
  return success();
}

LogicalResult TensorValidator::validateNode(onnx::NodeProto &node) {
  for (onnx::AttributeProto &attr : *node.mutable_attribute()) {
    std::string what = "tensor attribute '" + attr.name() + "' of node '" +
                       (node.name().empty() ? node.op_type() : node.name()) +
                       "'";
    if (attr.has_t() && failed(validateTensor(*attr.mutable_t(), what)))
      return failure();
    for (TensorProto &tensor : *attr.mutable_tensors())
      if (failed(validateTensor(tensor, what)))
        return failure();
    // Sparse tensors are not imported (their nodes are reported later),
    // but libonnx reads their parts.
    auto validateSparse = [&](onnx::SparseTensorProto &sparse) {
      return success(
          succeeded(validateTensor(*sparse.mutable_values(), what)) &&
          succeeded(validateTensor(*sparse.mutable_indices(), what)));
    };
    if (attr.has_sparse_tensor() &&
        failed(validateSparse(*attr.mutable_sparse_tensor())))
      return failure();
    for (onnx::SparseTensorProto &sparse : *attr.mutable_sparse_tensors())
      if (failed(validateSparse(sparse)))
        return failure();
    if (attr.has_g() && failed(validateGraph(*attr.mutable_g())))
      return failure();
    for (onnx::GraphProto &graph : *attr.mutable_graphs())
      if (failed(validateGraph(graph)))
        return failure();
  }
  return success();
}

LogicalResult TensorValidator::validateTensor(TensorProto &tensor,
                                              const std::string &what) {
  std::optional<unsigned> elementBytes = getElementByteSize(tensor.data_type());
  if (!elementBytes)
    return emitError(loc) << what << " has unsupported element type "
                          << getElementTypeName(tensor.data_type());
  if (tensor.has_segment())
    return emitError(loc) << what
                          << " is split into segments, which is not "
                             "supported";
  llvm::SmallVector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  for (int64_t dim : dims)
    if (dim < 0)
      return emitError(loc) << what << " has a negative dimension in shape "
                            << formatShape(dims);
  std::optional<uint64_t> bytes = getTensorByteSize(dims, *elementBytes);
  if (!bytes)
    return emitError(loc) << what << " of shape " << formatShape(dims)
                          << " has too many elements";
  if (*bytes > options.maxTensorBytes)
    return emitError(loc) << what << " of shape " << formatShape(dims)
                          << " takes " << *bytes
                          << " bytes, more than the limit of "
                          << options.maxTensorBytes;
  if (tensor.data_location() == TensorProto::EXTERNAL)
    return readExternalData(tensor, *bytes, what);
  if (tensor.external_data_size() != 0)
    return emitError(loc) << what
                          << " has external data entries but is not marked "
                             "as stored externally";
  return checkInlineData(tensor, *bytes / *elementBytes, *bytes, what);
}

LogicalResult TensorValidator::checkInlineData(const TensorProto &tensor,
                                               uint64_t elements,
                                               uint64_t bytes,
                                               const std::string &what) {
  // The typed field each element type is stored in (onnx.proto).
  int typedCounts[] = {tensor.float_data_size(),  tensor.int32_data_size(),
                       tensor.string_data_size(), tensor.int64_data_size(),
                       tensor.double_data_size(), tensor.uint64_data_size()};
  int expectedField;
  switch (tensor.data_type()) {
  case TensorProto::FLOAT:
    expectedField = 0;
    break;
  case TensorProto::INT64:
    expectedField = 3;
    break;
  case TensorProto::DOUBLE:
    expectedField = 4;
    break;
  default: // 8-, 16- and 32-bit types, bool.
    expectedField = 1;
    break;
  }
  for (auto [field, count] : llvm::enumerate(typedCounts))
    if (count != 0 &&
        (static_cast<int>(field) != expectedField || tensor.has_raw_data()))
      return emitError(loc)
             << what << " of type " << getElementTypeName(tensor.data_type())
             << " holds data in a field that does not match "
                "its type";
  if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != bytes)
      return emitError(loc) << what << " holds " << tensor.raw_data().size()
                            << " bytes of data but its shape "
                            << formatShape(llvm::SmallVector<int64_t>(
                                   tensor.dims().begin(), tensor.dims().end()))
                            << " needs " << bytes;
    return success();
  }
  uint64_t count = static_cast<uint64_t>(typedCounts[expectedField]);
  if (count != elements)
    return emitError(loc) << what << " holds " << count
                          << " values but its shape "
                          << formatShape(llvm::SmallVector<int64_t>(
                                 tensor.dims().begin(), tensor.dims().end()))
                          << " needs " << elements;
  return success();
}

//===----------------------------------------------------------------------===//
// External data
//===----------------------------------------------------------------------===//

FailureOr<std::string>
TensorValidator::resolveLocation(llvm::StringRef location,
                                 const std::string &what) {
  namespace fs = llvm::sys::fs;
  namespace path = llvm::sys::path;
  if (location.empty() || location.contains('\0'))
    return emitError(loc) << what << " has an empty external data location";
  if (path::is_absolute(location))
    return emitError(loc) << what << ": external data location '" << location
                          << "' is an absolute path; it must be relative to "
                             "the model's folder";
  llvm::SmallString<256> normalized(location);
  path::remove_dots(normalized, /*remove_dot_dot=*/true);
  if (normalized.empty())
    return emitError(loc) << what << ": external data location '" << location
                          << "' is not a regular file";
  if (normalized == ".." || llvm::StringRef(normalized).starts_with("../"))
    return emitError(loc) << what << ": external data location '" << location
                          << "' leaves the model's folder";

  // Symbolic links may still lead out: compare real paths.
  llvm::SmallString<256> realDir, realFile, joined(modelDir);
  path::append(joined, normalized);
  if (std::error_code ec = fs::real_path(modelDir, realDir))
    return emitError(loc) << "cannot open the model's folder '" << modelDir
                          << "': " << ec.message();
  if (std::error_code ec = fs::real_path(joined, realFile))
    return emitError(loc) << what << ": cannot open external data file '"
                          << location << "': " << ec.message();
  llvm::SmallString<256> prefix(realDir);
  if (!prefix.ends_with("/"))
    prefix += "/";
  if (!llvm::StringRef(realFile).starts_with(prefix))
    return emitError(loc) << what << ": external data location '" << location
                          << "' leaves the model's folder (through a "
                             "symbolic link)";
  // Not a directory, device or pipe (a pipe could block forever).
  if (!fs::is_regular_file(realFile))
    return emitError(loc) << what << ": external data location '" << location
                          << "' is not a regular file";
  return std::string(realFile);
}

LogicalResult TensorValidator::readExternalData(TensorProto &tensor,
                                                uint64_t bytes,
                                                const std::string &what) {
  if (modelDir.empty())
    return emitError(loc) << what
                          << " uses external data, which a model read from "
                             "memory cannot have";
  if (tensor.has_raw_data() || tensor.float_data_size() ||
      tensor.int32_data_size() || tensor.int64_data_size() ||
      tensor.double_data_size() || tensor.uint64_data_size() ||
      tensor.string_data_size())
    return emitError(loc) << what
                          << " is stored externally but also holds data";
  std::optional<std::string> location;
  std::optional<uint64_t> offset, length;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
      continue;
    }
    if (entry.key() != "offset" && entry.key() != "length")
      continue; // "checksum" and future keys do not change what is read.
    uint64_t value;
    if (llvm::StringRef(entry.value()).getAsInteger(10, value))
      return emitError(loc)
             << what << ": external data " << entry.key() << " '"
             << entry.value() << "' is not a non-negative integer";
    (entry.key() == "offset" ? offset : length) = value;
  }
  if (!location)
    return emitError(loc) << what
                          << " is stored externally but has no location";
  FailureOr<std::string> file = resolveLocation(*location, what);
  if (failed(file))
    return failure();

  if (length && *length != bytes)
    return emitError(loc) << what << ": external data length " << *length
                          << " does not match the " << bytes
                          << " bytes its shape needs";
  uint64_t fileSize;
  if (std::error_code ec = llvm::sys::fs::file_size(*file, fileSize))
    return emitError(loc) << what << ": cannot open external data file '"
                          << *location << "': " << ec.message();
  uint64_t begin = offset.value_or(0);
  if (begin > fileSize || bytes > fileSize - begin)
    return emitError(loc) << what << ": external data (offset " << begin << ", "
                          << bytes << " bytes) lies outside file '" << *location
                          << "' of " << fileSize << " bytes";
  externalBytes += bytes;
  if (externalBytes > options.maxExternalDataBytes)
    return emitError(loc) << "the model's external data adds up to more "
                             "than the limit of "
                          << options.maxExternalDataBytes << " bytes";

  // Read, not mapped: a file truncated behind our back must not fault.
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileSlice(*file, bytes, begin,
                                       /*IsVolatile=*/true);
  if (!buffer)
    return emitError(loc) << what << ": cannot read external data file '"
                          << *location << "': " << buffer.getError().message();
  tensor.set_raw_data((*buffer)->getBufferStart(), (*buffer)->getBufferSize());
  tensor.clear_external_data();
  tensor.set_data_location(TensorProto::DEFAULT);
  return success();
}

LogicalResult onnx_import::validateTensors(onnx::ModelProto &model,
                                           llvm::StringRef modelDir,
                                           const ONNXImportOptions &options,
                                           Location loc) {
  TensorValidator validator(modelDir, options, loc);
  if (failed(validator.validateGraph(*model.mutable_graph())))
    return failure();
  // Model-local functions hold tensors in their nodes' attributes too.
  for (onnx::FunctionProto &function : *model.mutable_functions()) {
    onnx::GraphProto body;
    body.mutable_node()->Swap(function.mutable_node());
    LogicalResult result = validator.validateGraph(body);
    body.mutable_node()->Swap(function.mutable_node());
    if (failed(result))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Graph structure
//===----------------------------------------------------------------------===//

LogicalResult onnx_import::validateGraphInputs(const onnx::GraphProto &graph,
                                               Location loc) {
  llvm::StringSet<> initializers;
  for (const TensorProto &init : graph.initializer())
    initializers.insert(init.name());
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (initializers.contains(input.name()))
      continue;
    const onnx::TypeProto &type = input.type();
    if (type.value_case() == onnx::TypeProto::VALUE_NOT_SET)
      return emitError(loc)
             << "graph input '" << input.name() << "' has no type";
    if (!type.has_tensor_type())
      return emitError(loc) << "graph input '" << input.name() << "' has "
                            << getTypeKindName(type)
                            << " type, which traincc does not support";
    if (!getElementByteSize(type.tensor_type().elem_type()))
      return emitError(loc)
             << "graph input '" << input.name()
             << "' has unsupported element type "
             << getElementTypeName(type.tensor_type().elem_type());
  }
  return success();
}

/// Adds to `used` the names a subgraph reads from enclosing scopes: names it
/// uses minus those it defines (nested subgraphs included).
static void collectOuterNames(const onnx::GraphProto &graph,
                              llvm::StringSet<> &used) {
  llvm::StringSet<> defined, uses;
  for (const onnx::ValueInfoProto &input : graph.input())
    defined.insert(input.name());
  for (const TensorProto &init : graph.initializer())
    defined.insert(init.name());
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &output : node.output())
      defined.insert(output);
    for (const std::string &input : node.input())
      uses.insert(input);
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.has_g())
        collectOuterNames(attr.g(), uses);
      for (const onnx::GraphProto &sub : attr.graphs())
        collectOuterNames(sub, uses);
    }
  }
  for (const onnx::ValueInfoProto &output : graph.output())
    uses.insert(output.name());
  for (const auto &name : uses)
    if (!name.getKey().empty() && !defined.contains(name.getKey()))
      used.insert(name.getKey());
}

//===----------------------------------------------------------------------===//
// Node attributes
//===----------------------------------------------------------------------===//

/// The value of a scalar integer tensor (validated before).
static std::optional<int64_t> getScalarInt(const TensorProto &tensor) {
  if (tensor.dims_size() != 0)
    return std::nullopt;
  if (tensor.data_type() == TensorProto::INT64) {
    if (tensor.int64_data_size() == 1)
      return tensor.int64_data(0);
    int64_t value;
    if (tensor.raw_data().size() != sizeof(value))
      return std::nullopt;
    std::memcpy(&value, tensor.raw_data().data(), sizeof(value));
    return value;
  }
  if (tensor.data_type() == TensorProto::INT32) {
    if (tensor.int32_data_size() == 1)
      return tensor.int32_data(0);
    int32_t value;
    if (tensor.raw_data().size() != sizeof(value))
      return std::nullopt;
    std::memcpy(&value, tensor.raw_data().data(), sizeof(value));
    return value;
  }
  return std::nullopt;
}

namespace {
/// Constant tensors visible in a graph: initializers and Constant outputs,
/// its own and its enclosing graphs'.
using ConstantMap = llvm::StringMap<const TensorProto *>;
} // namespace

static LogicalResult validateAttributesIn(
    const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
    ConstantMap constants, Location loc);

static LogicalResult validateAttributesIn(const onnx::GraphProto &graph,
                                          ConstantMap constants, Location loc) {
  for (const TensorProto &init : graph.initializer())
    constants[init.name()] = &init;
  return validateAttributesIn(graph.node(), std::move(constants), loc);
}

static LogicalResult validateAttributesIn(
    const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
    ConstantMap constants, Location loc) {
  for (const onnx::NodeProto &node : nodes)
    if (node.op_type() == "Constant" && node.output_size() == 1)
      for (const onnx::AttributeProto &attr : node.attribute())
        if (attr.name() == "value" && attr.has_t())
          constants[node.output(0)] = &attr.t();

  for (const onnx::NodeProto &node : nodes) {
    std::string label = "node '" +
                        (node.name().empty() ? node.op_type() : node.name()) +
                        "' (" + node.op_type() + ")";
    bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (defaultDomain &&
          (attr.name() == "strides" || attr.name() == "dilations" ||
           attr.name() == "kernel_shape") &&
          llvm::any_of(attr.ints(), [](int64_t value) { return value < 1; }))
        return emitError(loc) << label << ": attribute '" << attr.name()
                              << "' must hold positive values, got "
                              << formatShape(llvm::SmallVector<int64_t>(
                                     attr.ints().begin(), attr.ints().end()));
      if (attr.has_g() &&
          failed(validateAttributesIn(attr.g(), constants, loc)))
        return failure();
      for (const onnx::GraphProto &graph : attr.graphs())
        if (failed(validateAttributesIn(graph, constants, loc)))
          return failure();
    }
    if (defaultDomain && node.op_type() == "SplitToSequence" &&
        node.input_size() > 1) {
      auto split = constants.find(node.input(1));
      if (split != constants.end())
        if (std::optional<int64_t> value = getScalarInt(*split->second);
            value && *value < 1)
          return emitError(loc)
                 << label << ": split must be positive, got " << *value;
    }
  }
  return success();
}

LogicalResult onnx_import::validateNodeAttributes(const onnx::ModelProto &model,
                                                  Location loc) {
  if (failed(validateAttributesIn(model.graph(), ConstantMap(), loc)))
    return failure();
  for (const onnx::FunctionProto &function : model.functions())
    if (failed(validateAttributesIn(function.node(), ConstantMap(), loc)))
      return failure();
  return success();
}

/// Adds to `callees` the indices of the functions that `node` (or a node of
/// its subgraphs) calls.
static void collectCalls(const onnx::NodeProto &node,
                         const llvm::StringMap<int> &functions,
                         llvm::SmallVectorImpl<int> &callees) {
  auto it = functions.find(node.domain() + "\n" + node.op_type());
  if (it != functions.end())
    callees.push_back(it->second);
  for (const onnx::AttributeProto &attr : node.attribute()) {
    for (const onnx::NodeProto &inner : attr.g().node())
      collectCalls(inner, functions, callees);
    for (const onnx::GraphProto &graph : attr.graphs())
      for (const onnx::NodeProto &inner : graph.node())
        collectCalls(inner, functions, callees);
  }
}

LogicalResult onnx_import::checkFunctionRecursion(const onnx::ModelProto &model,
                                                  Location loc) {
  int numFunctions = model.functions_size();
  if (numFunctions == 0)
    return success();
  llvm::StringMap<int> functions;
  for (int index = 0; index < numFunctions; ++index) {
    const onnx::FunctionProto &function = model.functions(index);
    functions.try_emplace(function.domain() + "\n" + function.name(), index);
  }
  std::vector<llvm::SmallVector<int>> callees(numFunctions);
  for (int index = 0; index < numFunctions; ++index)
    for (const onnx::NodeProto &node : model.functions(index).node())
      collectCalls(node, functions, callees[index]);

  // Depth-first search without recursion (the call graph may be deep):
  // a call to a function on the current path closes a cycle.
  enum class State { Unvisited, OnPath, Done };
  std::vector<State> states(numFunctions, State::Unvisited);
  for (int root = 0; root < numFunctions; ++root) {
    if (states[root] != State::Unvisited)
      continue;
    llvm::SmallVector<std::pair<int, size_t>> stack = {{root, 0}};
    states[root] = State::OnPath;
    while (!stack.empty()) {
      auto &[function, next] = stack.back();
      if (next == callees[function].size()) {
        states[function] = State::Done;
        stack.pop_back();
        continue;
      }
      int callee = callees[function][next++];
      if (states[callee] == State::OnPath) {
        const onnx::FunctionProto &proto = model.functions(callee);
        return emitError(loc)
               << "model-local function '" << proto.name() << "' of domain '"
               << proto.domain()
               << "' calls itself, directly or through other functions";
      }
      if (states[callee] == State::Unvisited) {
        states[callee] = State::OnPath;
        stack.push_back({callee, 0});
      }
    }
  }
  return success();
}

LogicalResult onnx_import::sortGraph(onnx::GraphProto &graph, Location loc) {
  // Producer of every value: a node index, or -1 for graph inputs and
  // initializers.
  llvm::StringMap<int> producers;
  llvm::StringSet<> inputNames;
  auto defineValue = [&](const std::string &name,
                         int producer) -> LogicalResult {
    if (!producers.try_emplace(name, producer).second)
      return emitError(loc)
             << "value '" << name << "' is defined more than once";
    return success();
  };
  for (const TensorProto &init : graph.initializer()) {
    if (init.name().empty())
      return emitError(loc) << "an initializer has no name";
    if (failed(defineValue(init.name(), -1)))
      return failure();
  }
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (input.name().empty())
      return emitError(loc) << "a graph input has no name";
    if (!inputNames.insert(input.name()).second)
      return emitError(loc)
             << "value '" << input.name() << "' is defined more than once";
    // An input may also be an initializer (its default value).
    producers.try_emplace(input.name(), -1);
  }
  int numNodes = graph.node_size();
  for (int index = 0; index < numNodes; ++index)
    for (const std::string &output : graph.node(index).output())
      if (!output.empty() && failed(defineValue(output, index)))
        return failure();

  // Dependencies between nodes; subgraphs depend on what they read from
  // the enclosing graph.
  std::vector<llvm::SmallVector<int>> users(numNodes);
  std::vector<int> pending(numNodes, 0);
  for (int index = 0; index < numNodes; ++index) {
    const onnx::NodeProto &node = graph.node(index);
    llvm::StringSet<> deps;
    for (const std::string &input : node.input()) {
      if (input.empty())
        continue;
      if (!producers.contains(input))
        return emitError(loc) << "node '" << node.name()
                              << "' uses undefined value '" << input << "'";
      deps.insert(input);
    }
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.has_g())
        collectOuterNames(attr.g(), deps);
      for (const onnx::GraphProto &sub : attr.graphs())
        collectOuterNames(sub, deps);
    }
    for (const auto &dep : deps) {
      auto it = producers.find(dep.getKey());
      // Undefined outer names are the checker's to report.
      if (it == producers.end() || it->second < 0)
        continue;
      users[it->second].push_back(index);
      ++pending[index];
    }
  }
  for (const onnx::ValueInfoProto &output : graph.output())
    if (!producers.contains(output.name()))
      return emitError(loc)
             << "graph output '" << output.name() << "' is never defined";

  // Kahn's algorithm, always taking the earliest ready node so that a
  // sorted graph keeps its order.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int index = 0; index < numNodes; ++index)
    if (pending[index] == 0)
      ready.push(index);
  std::vector<int> order;
  order.reserve(numNodes);
  while (!ready.empty()) {
    int index = ready.top();
    ready.pop();
    order.push_back(index);
    for (int user : users[index])
      if (--pending[user] == 0)
        ready.push(user);
  }
  if (static_cast<int>(order.size()) != numNodes) {
    // Walk back along unfinished producers until a node repeats: that node
    // lies on a cycle (a node merely downstream of one would not repeat).
    std::vector<std::vector<int>> producersOf(numNodes);
    for (int index = 0; index < numNodes; ++index)
      for (int user : users[index])
        if (pending[index] != 0)
          producersOf[user].push_back(index);
    int node = 0;
    while (pending[node] == 0)
      ++node;
    std::vector<bool> seen(numNodes, false);
    while (!seen[node]) {
      seen[node] = true;
      node = producersOf[node].front();
    }
    return emitError(loc) << "graph has a cycle through node '"
                          << graph.node(node).name() << "'";
  }

  google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
  sorted.Reserve(numNodes);
  for (int index : order)
    sorted.Add()->Swap(graph.mutable_node(index));
  graph.mutable_node()->Swap(&sorted);
  return success();
}
