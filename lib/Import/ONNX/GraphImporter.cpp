//===- GraphImporter.cpp - first import stage: ModelProto -> generic IR ---===//
//
// Emits the module described in ONNXImporter.h from a ModelProto that the
// loader has validated, sorted and shape-inferred. Nothing here interprets
// ONNX ops: every node becomes a `train.onnx_node` with its attributes
// converted one to one, and the legalisation pass gives them meaning.
//
//===----------------------------------------------------------------------===//

#include "ModelLoader.h"
#include "ExportChecks.h"

#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <climits>

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

namespace {

bool isFloatElementType(int32_t dataType) {
  return dataType == onnx::TensorProto::FLOAT ||
         dataType == onnx::TensorProto::FLOAT16 ||
         dataType == onnx::TensorProto::BFLOAT16 ||
         dataType == onnx::TensorProto::DOUBLE;
}

class GraphImporter {
public:
  GraphImporter(MLIRContext *context, const onnx::ModelProto &model,
                Location fileLoc, const ONNXImportOptions &options)
      : context(context), graph(model.graph()), fileLoc(fileLoc),
        options(options), builder(context), diagLoc(fileLoc) {}

  OwningOpRef<ModuleOp> import(int64_t opset);

private:
  Location getNameLoc(llvm::StringRef name) {
    return NameLoc::get(StringAttr::get(context, name), fileLoc);
  }

  // Types and constants.
  FailureOr<Type> convertElementType(int32_t dataType, const std::string &what);
  /// The MLIR type of a value: a ranked tensor (dynamic where a dimension
  /// is unknown), an unranked one when the rank is unknown, `none` when
  /// ONNX knows nothing about it.
  FailureOr<Type> convertType(const onnx::TypeProto &type,
                              const std::string &what);
  FailureOr<DenseElementsAttr> convertTensor(const onnx::TensorProto &tensor,
                                             const std::string &what);
  FailureOr<Attribute> convertAttribute(const onnx::AttributeProto &attr,
                                        const std::string &what);

  // The module.
  LogicalResult importInitializers();
  FailureOr<func::FuncOp> createForward();
  FailureOr<Value> getValue(const std::string &name, Location useLoc);
  LogicalResult importNode(const onnx::NodeProto &node);
  LogicalResult importOutputs(func::FuncOp forward);

  MLIRContext *context;
  const onnx::GraphProto &graph;
  Location fileLoc;
  const ONNXImportOptions &options;
  OpBuilder builder;
  ModuleOp module;
  /// Where conversion errors point: the node being imported, or the file.
  Location diagLoc;

  /// Values defined so far in `forward`, by ONNX name.
  llvm::StringMap<Value> values;
  llvm::StringMap<const onnx::TensorProto *> initializers;
  llvm::StringMap<train::ParamOp> params;
  /// Types from the graph inputs, outputs and value_info.
  llvm::StringMap<const onnx::TypeProto *> valueTypes;
  /// The `train.onnx_none` standing for omitted inputs, made on first use.
  Value none;
};

} // namespace

//===----------------------------------------------------------------------===//
// Types and constants
//===----------------------------------------------------------------------===//

FailureOr<Type> GraphImporter::convertElementType(int32_t dataType,
                                                  const std::string &what) {
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return Type(Float32Type::get(context));
  case onnx::TensorProto::FLOAT16:
    return Type(Float16Type::get(context));
  case onnx::TensorProto::BFLOAT16:
    return Type(BFloat16Type::get(context));
  case onnx::TensorProto::DOUBLE:
    return Type(Float64Type::get(context));
  case onnx::TensorProto::INT64:
    return Type(IntegerType::get(context, 64));
  case onnx::TensorProto::INT32:
    return Type(IntegerType::get(context, 32));
  case onnx::TensorProto::INT8:
    return Type(IntegerType::get(context, 8));
  case onnx::TensorProto::UINT8:
    return Type(IntegerType::get(context, 8, IntegerType::Unsigned));
  case onnx::TensorProto::BOOL:
    return Type(IntegerType::get(context, 1));
  default:
    return emitError(diagLoc) << what << " has unsupported element type "
                              << getElementTypeName(dataType);
  }
}

FailureOr<Type> GraphImporter::convertType(const onnx::TypeProto &type,
                                           const std::string &what) {
  if (type.value_case() == onnx::TypeProto::VALUE_NOT_SET)
    return Type(NoneType::get(context));
  if (!type.has_tensor_type())
    return emitError(diagLoc) << what << " has " << getTypeKindName(type)
                              << " type, which traincc does not support";
  const onnx::TypeProto_Tensor &tensor = type.tensor_type();
  if (tensor.elem_type() == onnx::TensorProto::UNDEFINED)
    return Type(NoneType::get(context));
  FailureOr<Type> elementType = convertElementType(tensor.elem_type(), what);
  if (failed(elementType))
    return failure();
  if (!tensor.has_shape())
    return Type(UnrankedTensorType::get(*elementType));

  llvm::SmallVector<int64_t> shape, knownDims;
  for (const onnx::TensorShapeProto_Dimension &dim : tensor.shape().dim()) {
    if (!dim.has_dim_value()) {
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    if (dim.dim_value() < 0)
      return emitError(diagLoc)
             << what << " has a negative dimension (" << dim.dim_value() << ")";
    shape.push_back(dim.dim_value());
    knownDims.push_back(dim.dim_value());
  }
  // Values become buffers later: the limit on tensors applies to them too.
  std::optional<uint64_t> bytes = getTensorByteSize(
      knownDims, ((*elementType).getIntOrFloatBitWidth() + 7) / 8);
  if (!bytes || *bytes > options.maxTensorBytes)
    return emitError(diagLoc) << what << " of shape " << formatShape(shape)
                              << " is larger than the limit of "
                              << options.maxTensorBytes << " bytes";
  return Type(RankedTensorType::get(shape, *elementType));
}

FailureOr<DenseElementsAttr>
GraphImporter::convertTensor(const onnx::TensorProto &tensor,
                             const std::string &what) {
  FailureOr<Type> elementType = convertElementType(tensor.data_type(), what);
  if (failed(elementType))
    return failure();
  llvm::SmallVector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  auto type = RankedTensorType::get(dims, *elementType);

  // The loader checked that the data matches the shape; ONNX stores data
  // little-endian, as MLIR's raw buffers on the hosts traincc runs on.
  if (tensor.data_type() == onnx::TensorProto::BOOL) {
    llvm::SmallVector<bool> bits;
    if (tensor.has_raw_data())
      for (char byte : tensor.raw_data())
        bits.push_back(byte != 0);
    else
      for (int32_t value : tensor.int32_data())
        bits.push_back(value != 0);
    return DenseElementsAttr::get(type, llvm::ArrayRef<bool>(bits));
  }
  if (tensor.has_raw_data())
    return DenseElementsAttr::getFromRawBuffer(
        type, llvm::ArrayRef<char>(tensor.raw_data().data(),
                                   tensor.raw_data().size()));

  std::vector<char> buffer;
  auto append = [&](auto value) {
    const char *bytes = reinterpret_cast<const char *>(&value);
    buffer.insert(buffer.end(), bytes, bytes + sizeof(value));
  };
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    for (float value : tensor.float_data())
      append(value);
    break;
  case onnx::TensorProto::DOUBLE:
    for (double value : tensor.double_data())
      append(value);
    break;
  case onnx::TensorProto::INT64:
    for (int64_t value : tensor.int64_data())
      append(value);
    break;
  case onnx::TensorProto::INT32:
    for (int32_t value : tensor.int32_data())
      append(value);
    break;
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
    for (int32_t value : tensor.int32_data())
      append(static_cast<uint8_t>(value));
    break;
  default: // FLOAT16, BFLOAT16: the bits in the low half of int32_data.
    for (int32_t value : tensor.int32_data())
      append(static_cast<uint16_t>(value));
    break;
  }
  return DenseElementsAttr::getFromRawBuffer(type, buffer);
}

FailureOr<Attribute>
GraphImporter::convertAttribute(const onnx::AttributeProto &attr,
                                const std::string &what) {
  // An attribute referring to one of an enclosing function's has no value
  // of its own.
  if (!attr.ref_attr_name().empty())
    return Attribute(UnitAttr::get(context));
  switch (attr.type()) {
  case onnx::AttributeProto::INT:
    return Attribute(builder.getI64IntegerAttr(attr.i()));
  case onnx::AttributeProto::FLOAT:
    return Attribute(builder.getF32FloatAttr(attr.f()));
  case onnx::AttributeProto::STRING:
    return Attribute(builder.getStringAttr(attr.s()));
  case onnx::AttributeProto::INTS:
    return Attribute(DenseI64ArrayAttr::get(
        context,
        llvm::ArrayRef<int64_t>(attr.ints().data(), attr.ints().size())));
  case onnx::AttributeProto::FLOATS:
    return Attribute(DenseF32ArrayAttr::get(
        context,
        llvm::ArrayRef<float>(attr.floats().data(), attr.floats().size())));
  case onnx::AttributeProto::STRINGS: {
    llvm::SmallVector<Attribute> strings;
    for (const std::string &value : attr.strings())
      strings.push_back(builder.getStringAttr(value));
    return Attribute(builder.getArrayAttr(strings));
  }
  case onnx::AttributeProto::TENSOR: {
    FailureOr<DenseElementsAttr> tensor = convertTensor(attr.t(), what);
    if (failed(tensor))
      return failure();
    return Attribute(*tensor);
  }
  default:
    // Graphs, sparse tensors, lists of tensors, types: no op traincc
    // supports takes them, so the node is reported as unsupported later.
    return Attribute(UnitAttr::get(context));
  }
}

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

LogicalResult GraphImporter::importInitializers() {
  // BatchNormalization's inputs 3 and 4 are its running statistics.
  llvm::StringMap<train::ParamKind> kinds;
  for (const onnx::NodeProto &node : graph.node()) {
    if (node.op_type() != "BatchNormalization" || !node.domain().empty())
      continue;
    if (node.input_size() > 3)
      kinds.try_emplace(node.input(3), train::ParamKind::RunningMean);
    if (node.input_size() > 4)
      kinds.try_emplace(node.input(4), train::ParamKind::RunningVar);
  }

  builder.setInsertionPointToEnd(module.getBody());
  for (const onnx::TensorProto &init : graph.initializer()) {
    initializers[init.name()] = &init;
    std::string what = "initializer '" + init.name() + "'";
    if (init.name() == "forward")
      return emitError(fileLoc)
             << what << " has the name of the function traincc generates";
    if (!isFloatElementType(init.data_type())) {
      // Non-float initializers become train.constant, which holds the
      // integer types the Train ops compute with.
      if (init.data_type() != onnx::TensorProto::INT64 &&
          init.data_type() != onnx::TensorProto::INT32 &&
          init.data_type() != onnx::TensorProto::BOOL)
        return emitError(fileLoc)
               << what << " has element type "
               << getElementTypeName(init.data_type())
               << "; integer initializers must be INT32, INT64 or BOOL";
      continue;
    }
    FailureOr<DenseElementsAttr> value = convertTensor(init, what);
    if (failed(value))
      return failure();
    auto type = cast<RankedTensorType>(value->getType());
    train::ParamKind kind = train::ParamKind::Trainable;
    auto special = kinds.find(init.name());
    if (special != kinds.end() && type.getRank() == 1)
      kind = special->second;
    params[init.name()] = train::ParamOp::create(
        builder, getNameLoc(init.name()), init.name(), kind, type, *value,
        /*source=*/FlatSymbolRefAttr());
  }
  return success();
}

FailureOr<func::FuncOp> GraphImporter::createForward() {
  llvm::SmallVector<Type> argTypes;
  llvm::SmallVector<llvm::StringRef> argNames;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (initializers.contains(input.name()))
      continue; // A default value, not data.
    std::string what = "graph input '" + input.name() + "'";
    FailureOr<Type> type = convertType(input.type(), what);
    if (failed(type))
      return failure();
    if (isa<NoneType>(*type))
      return emitError(fileLoc) << what << " has no type";
    // The trainer feeds float tensors or int64 ids (token ids, as PyTorch
    // exports an embedding's input).
    Type element = cast<ShapedType>(*type).getElementType();
    if (isa<IntegerType>(element) && !element.isInteger(64))
      return emitError(fileLoc)
             << what << " is " << *type
             << "; integer inputs must be int64 (ids the trainer feeds)";
    argTypes.push_back(*type);
    argNames.push_back(input.name());
  }
  builder.setInsertionPointToEnd(module.getBody());
  auto forward = func::FuncOp::create(builder, fileLoc, "forward",
                                      builder.getFunctionType(argTypes, {}));
  Block *entry = forward.addEntryBlock();
  for (auto [index, name] : llvm::enumerate(argNames)) {
    forward.setArgAttr(index, "train.name", builder.getStringAttr(name));
    values[name] = entry->getArgument(index);
  }
  builder.setInsertionPointToStart(entry);
  return forward;
}

FailureOr<Value> GraphImporter::getValue(const std::string &name,
                                         Location useLoc) {
  auto found = values.find(name);
  if (found != values.end())
    return found->second;
  auto init = initializers.find(name);
  if (init == initializers.end())
    return emitError(useLoc) << "value '" << name << "' is not defined";
  // Each initializer is read once, where it is first used.
  Value value;
  auto param = params.find(name);
  if (param != params.end()) {
    value = train::ReadParamOp::create(builder, getNameLoc(name),
                                       param->second.getType(), name);
  } else {
    FailureOr<DenseElementsAttr> attr =
        convertTensor(*init->second, "initializer '" + name + "'");
    if (failed(attr))
      return failure();
    value = train::ConstantOp::create(builder, getNameLoc(name), *attr);
  }
  values[name] = value;
  return value;
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node) {
  Location loc = getNameLoc(node.name());
  diagLoc = loc;
  llvm::scope_exit restore([&] { diagLoc = fileLoc; });
  std::string label = "node '" + node.name() + "' (" + node.op_type() + ")";

  // Omitted optional inputs: trailing ones are dropped, the others are
  // `train.onnx_none`.
  int numInputs = node.input_size();
  while (numInputs > 0 && node.input(numInputs - 1).empty())
    --numInputs;
  llvm::SmallVector<Value> inputs;
  for (int index = 0; index < numInputs; ++index) {
    const std::string &name = node.input(index);
    if (name.empty()) {
      if (!none) {
        OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPointToStart(builder.getInsertionBlock());
        none = train::ONNXNoneOp::create(builder, fileLoc);
      }
      inputs.push_back(none);
      continue;
    }
    FailureOr<Value> value = getValue(name, loc);
    if (failed(value))
      return failure();
    inputs.push_back(*value);
  }

  int numOutputs = node.output_size();
  while (numOutputs > 0 && node.output(numOutputs - 1).empty())
    --numOutputs;
  llvm::SmallVector<Type> resultTypes;
  for (int index = 0; index < numOutputs; ++index) {
    const std::string &name = node.output(index);
    auto type = valueTypes.find(name);
    if (name.empty() || type == valueTypes.end()) {
      resultTypes.push_back(NoneType::get(context));
      continue;
    }
    FailureOr<Type> converted =
        convertType(*type->second, "output '" + name + "' of " + label);
    if (failed(converted))
      return failure();
    resultTypes.push_back(*converted);
  }

  NamedAttrList attrs;
  for (const onnx::AttributeProto &attr : node.attribute()) {
    if (attr.name().empty())
      return emitError(loc) << label << " has an attribute without a name";
    if (attrs.get(attr.name()))
      return emitError(loc)
             << label << " has two attributes named '" << attr.name() << "'";
    FailureOr<Attribute> value = convertAttribute(
        attr, "tensor attribute '" + attr.name() + "' of " + label);
    if (failed(value))
      return failure();
    attrs.append(attr.name(), *value);
  }

  auto op = train::ONNXNodeOp::create(builder, loc, resultTypes, node.op_type(),
                                      node.name(), attrs.getDictionary(context),
                                      inputs);
  if (!node.domain().empty())
    op->setAttr("domain", builder.getStringAttr(node.domain()));
  for (int index = 0; index < numOutputs; ++index)
    if (!node.output(index).empty())
      values[node.output(index)] = op->getResult(index);
  return success();
}

LogicalResult GraphImporter::importOutputs(func::FuncOp forward) {
  llvm::SmallVector<Value> results;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    FailureOr<Value> value = getValue(output.name(), fileLoc);
    if (failed(value))
      return failure();
    results.push_back(*value);
  }
  func::ReturnOp::create(builder, fileLoc, results);
  forward.setFunctionType(builder.getFunctionType(
      forward.getArgumentTypes(), ValueRange(results).getTypes()));
  for (auto [index, output] : llvm::enumerate(graph.output()))
    forward.setResultAttr(index, "train.name",
                          builder.getStringAttr(output.name()));
  return success();
}

OwningOpRef<ModuleOp> GraphImporter::import(int64_t opset) {
  OwningOpRef<ModuleOp> owned = ModuleOp::create(fileLoc);
  module = *owned;
  module->setAttr("train.onnx_opset", builder.getI64IntegerAttr(opset));

  // Graph inputs first: they carry the batch size we set.
  for (const auto *list :
       {&graph.input(), &graph.output(), &graph.value_info()})
    for (const onnx::ValueInfoProto &info : *list)
      valueTypes.try_emplace(info.name(), &info.type());

  if (failed(importInitializers()))
    return nullptr;
  FailureOr<func::FuncOp> forward = createForward();
  if (failed(forward))
    return nullptr;
  for (const onnx::NodeProto &node : graph.node())
    if (failed(importNode(node)))
      return nullptr;
  if (failed(importOutputs(*forward)) || failed(verify(module)))
    return nullptr;
  return owned;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp>
traincc::importONNXBuffer(MLIRContext *context, llvm::StringRef bytes,
                          llvm::StringRef modelDir, llvm::StringRef bufferName,
                          const ONNXImportOptions &options) {
  context->getOrLoadDialect<train::TrainDialect>();
  context->getOrLoadDialect<func::FuncDialect>();
  Location loc = FileLineColLoc::get(context, bufferName, 0, 0);
  LoadedModel loaded;
  if (failed(loadModel(bytes, modelDir, bufferName, options, loc, loaded)))
    return nullptr;
  GraphImporter importer(context, loaded.model, loc, options);
  OwningOpRef<ModuleOp> module = importer.import(loaded.opset);
  if (module)
    annotateTrainingConventions(*module, loaded.model);
  return module;
}

OwningOpRef<ModuleOp>
traincc::importONNXFile(MLIRContext *context, llvm::StringRef path,
                        const ONNXImportOptions &options) {
  // Protobuf cannot parse 2 GiB or more; say so before reading it all.
  uint64_t size;
  if (!llvm::sys::fs::file_size(path, size) && size > uint64_t(INT_MAX)) {
    emitError(FileLineColLoc::get(context, path, 0, 0))
        << "'" << path
        << "' is larger than 2 GiB; store its weights as ONNX external data";
    return nullptr;
  }
  // Read rather than mapped: a file that shrinks while we read it must not
  // fault.
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false,
                                  /*IsVolatile=*/true);
  if (!buffer) {
    emitError(FileLineColLoc::get(context, path, 0, 0))
        << "cannot open '" << path << "': " << buffer.getError().message();
    return nullptr;
  }
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(path));
  if (dir.empty())
    dir = ".";
  return importONNXBuffer(context, (*buffer)->getBuffer(), dir, path, options);
}
