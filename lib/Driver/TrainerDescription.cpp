//===- TrainerDescription.cpp - state layout and kernel bindings ----------===//

#include "TrainerDescription.h"

#include "traincc/Codegen/Common/MemoryPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace traincc;

namespace {

/// State tensors start on 64-byte boundaries: cache lines, and the widest
/// vector loads the kernels may use.
constexpr uint64_t kStateAlignment = 64;

std::optional<uint64_t> elementBytes(Type type) {
  if (type.isF32())
    return 4;
  if (type.isF16() || type.isBF16())
    return 2;
  if (type.isF64() || type.isInteger(64))
    return 8;
  return std::nullopt;
}

/// The parameter a derived buffer ("w.grad", "w.exp_avg") belongs to: the
/// longest parameter name that prefixes it followed by a dot.
int32_t findOwner(const std::vector<StateTensor> &state, StringRef name) {
  int32_t owner = -1;
  size_t best = 0;
  for (auto [index, tensor] : llvm::enumerate(state)) {
    bool isParameter = tensor.kind == train::ParamKind::Trainable ||
                       tensor.kind == train::ParamKind::Frozen;
    if (isParameter && tensor.name.size() > best &&
        name.starts_with(tensor.name) &&
        name.drop_front(tensor.name.size()).starts_with(".")) {
      owner = index;
      best = tensor.name.size();
    }
  }
  return owner;
}

/// The loss scaler's state, which the runtime reads after every step: the
/// scale and found_inf, f32 scalars the loss-scaling pass declares.
LogicalResult findLossScaler(ModuleOp module, const CompileOptions &options,
                             TrainerDescription &description) {
  auto lossScale = options.training.getLossScale();
  if (auto *error = std::get_if<std::string>(&lossScale))
    return module.emitError(*error);
  description.lossScaling =
      std::get<TrainingOptions::LossScale>(lossScale).mode;
  bool scaled = description.lossScaling != LossScaleMode::None;
  for (auto [name, index] :
       {std::pair<StringRef, int32_t *>{"loss_scaler.scale",
                                        &description.lossScaleState},
        {"loss_scaler.found_inf", &description.foundInfState}}) {
    auto found = description.stateIndex.find(name);
    if (found == description.stateIndex.end()) {
      if (scaled)
        return module.emitError("loss scaling needs the state tensor '")
               << name << "' (run the training pipeline)";
      continue;
    }
    const StateTensor &tensor = description.state[found->second];
    if (!scaled)
      return module.emitError("the state tensor '")
             << name << "' needs loss scaling (--loss-scale)";
    if (tensor.kind != train::ParamKind::LossScaler ||
        tensor.type.getRank() != 0 || !tensor.type.getElementType().isF32())
      return module.emitError("the state tensor '")
             << name << "' must be a loss_scaler tensor<f32>, not "
             << train::stringifyParamKind(tensor.kind) << " " << tensor.type;
    *index = found->second;
  }
  return success();
}

} // namespace

FailureOr<TrainerDescription>
traincc::describeTrainer(ModuleOp module, const CompileOptions &options) {
  TrainerDescription description;
  description.modelPath = options.inputPath;
  description.modelName = llvm::sys::path::stem(options.inputPath).str();
  description.training = options.training;
  auto loss = module->getAttrOfType<StringAttr>("train.loss");
  std::optional<LossKind> lossKind =
      loss ? symbolizeEnum<LossKind>(loss.getValue()) : std::nullopt;
  if (!lossKind || *lossKind == LossKind::Auto)
    return module.emitError("no resolved train.loss attribute (run the "
                            "training pipeline)");
  description.loss = *lossKind;
  if (auto step = module.lookupSymbol<func::FuncOp>("micro_step"))
    step.walk([&](Operation *op) {
      auto type = op->getNumResults() == 1
                      ? dyn_cast<RankedTensorType>(op->getResult(0).getType())
                      : nullptr;
      std::optional<uint64_t> bytes =
          type ? elementBytes(type.getElementType()) : std::nullopt;
      if (op->hasAttr(train::kRecomputedAttrName) && bytes)
        description.recomputed.push_back(
            {op->getName().stripDialect().str(),
             *bytes * type.getNumElements()});
    });

  for (auto param : module.getOps<train::ParamOp>()) {
    RankedTensorType type = param.getTensorType();
    std::optional<uint64_t> bytes = elementBytes(type.getElementType());
    if (!bytes)
      return param.emitError("the trainer cannot hold ")
             << type << " state ('" << param.getSymName() << "')";
    StateTensor tensor;
    tensor.name = param.getSymName().str();
    tensor.kind = param.getKind();
    tensor.type = type;
    tensor.bytes = *bytes * type.getNumElements();
    tensor.offset = llvm::alignTo(description.stateBytes, kStateAlignment);
    tensor.initialValue = param.getInitialValueAttr();
    if (param.getSourceAttr())
      tensor.sourceName = param.getSourceAttr().getValue().str();
    description.stateBytes = tensor.offset + tensor.bytes;
    description.stateIndex[tensor.name] = description.state.size();
    description.state.push_back(tensor);
  }
  for (StateTensor &tensor : description.state) {
    if (tensor.kind == train::ParamKind::Gradient ||
        tensor.kind == train::ParamKind::OptimizerState) {
      tensor.owner = findOwner(description.state, tensor.name);
      if (tensor.owner < 0)
        return module.emitError("no parameter owns the buffer '")
               << tensor.name << "'";
    }
    // The runtime converts a copy from its source after loading weights.
    bool isCopy = tensor.kind == train::ParamKind::WeightCopy ||
                  tensor.kind == train::ParamKind::StepBackup;
    if (isCopy != !tensor.sourceName.empty())
      return module.emitError("the state tensor '")
             << tensor.name << "' (" << train::stringifyParamKind(tensor.kind)
             << ") " << (isCopy ? "names no source" : "names a source");
    if (!isCopy)
      continue;
    auto source = description.stateIndex.find(tensor.sourceName);
    if (source == description.stateIndex.end())
      return module.emitError("the source '")
             << tensor.sourceName << "' of '" << tensor.name
             << "' is not a state tensor";
    tensor.source = source->second;
    if (description.state[tensor.source].type.getNumElements() !=
        tensor.type.getNumElements())
      return module.emitError("'")
             << tensor.name << "' " << tensor.type << " cannot copy '"
             << tensor.sourceName << "' "
             << description.state[tensor.source].type;
  }
  if (failed(findLossScaler(module, options, description)))
    return failure();
  description.stateBytes = llvm::alignTo(description.stateBytes,
                                         kStateAlignment);

  auto eval = module.lookupSymbol<func::FuncOp>("eval_step");
  if (!eval)
    return module.emitError("no @eval_step (run the training pipeline)");
  bool hasTarget = description.loss != LossKind::Output;
  unsigned numInputs = eval.getNumArguments() - (hasTarget ? 1 : 0);
  unsigned numOutputs = eval.getNumResults() - 1;
  if (numInputs != 1)
    return module.emitError("the trainer supports models with one input; "
                            "this one has ")
           << numInputs;
  if (numOutputs != 1)
    return module.emitError("the trainer supports models with one output; "
                            "this one has ")
           << numOutputs;
  auto nameOf = [](DictionaryAttr attrs, StringRef fallback) {
    auto name = attrs ? attrs.getAs<StringAttr>("train.name") : nullptr;
    return name ? name.getValue().str() : fallback.str();
  };
  auto tensorType = [](Type type) { return cast<RankedTensorType>(type); };
  description.input = {nameOf(eval.getArgAttrDict(0), "input"),
                       tensorType(eval.getArgumentTypes()[0])};
  if (auto limit = eval.getArgAttrOfType<IntegerAttr>(0, "train.id_limit"))
    description.input.idLimit = limit.getInt();
  if (hasTarget)
    description.target =
        IOTensor{"target", tensorType(eval.getArgumentTypes()[1])};
  description.output = {nameOf(eval.getResultAttrDict(0), "output"),
                        tensorType(eval.getResultTypes()[0])};
  return description;
}

LogicalResult traincc::bindKernels(ModuleOp module,
                                   TrainerDescription &description) {
  using Role = KernelArgument::Role;
  bool hasTarget = description.target.has_value();
  // Roles of the non-state arguments, in order, as the pipeline builds them.
  SmallVector<Role> microRoles = {Role::Input};
  if (hasTarget)
    microRoles.push_back(Role::Target);
  microRoles.append({Role::GradScale, Role::Seed, Role::Loss});
  SmallVector<Role> evalRoles = {Role::Input};
  if (hasTarget)
    evalRoles.push_back(Role::Target);
  evalRoles.append({Role::Output, Role::Loss});
  SmallVector<Role> applyRoles = {Role::LearningRate, Role::Step};

  struct Kernel {
    StringRef name;
    ArrayRef<Role> roles;
    std::vector<KernelArgument> *binding;
  } kernels[] = {{"micro_step", microRoles, &description.microStep},
                 {"apply_step", applyRoles, &description.applyStep},
                 {"eval_step", evalRoles, &description.evalStep}};
  for (const Kernel &kernel : kernels) {
    auto func = module.lookupSymbol<LLVM::LLVMFuncOp>(kernel.name);
    if (!func)
      return module.emitError("lowering produced no ") << kernel.name;
    unsigned next = 0;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      if (func.getArgAttr(i, codegen::kWorkspaceArgAttrName)) {
        kernel.binding->push_back({Role::Workspace, 0});
        continue;
      }
      auto state =
          func.getArgAttrOfType<FlatSymbolRefAttr>(i, "train.state");
      if (state) {
        auto found = description.stateIndex.find(state.getValue());
        if (found == description.stateIndex.end())
          return func.emitError("unknown state ") << state;
        kernel.binding->push_back({Role::State, found->second});
        continue;
      }
      if (next >= kernel.roles.size())
        return func.emitError("unexpected kernel signature");
      kernel.binding->push_back({kernel.roles[next++], 0});
    }
    if (next != kernel.roles.size())
      return func.emitError("unexpected kernel signature");
    // The plan of the step's temporaries (none: no workspace).
    StepMemory &memory = description.cpuMemory;
    uint64_t &workspace = kernel.name == "micro_step"   ? memory.microStep
                          : kernel.name == "apply_step" ? memory.applyStep
                                                        : memory.evalStep;
    if (auto bytes =
            func->getAttrOfType<IntegerAttr>(codegen::kWorkspaceBytesAttrName))
      workspace = bytes.getInt();
    if (auto saved =
            func->getAttrOfType<IntegerAttr>(codegen::kSavedBytesAttrName))
      memory.savedActivations = saved.getInt();
    // Kernel symbols must not collide with anything the runtime defines.
    func.setSymName(("traincc_kernel_" + kernel.name).str());
    SmallVector<DictionaryAttr> noAttrs(func.getNumArguments(),
                                        DictionaryAttr::get(module.getContext()));
    func.setAllArgAttrs(noAttrs);
    func.setAllResultAttrs(ArrayRef<DictionaryAttr>(
        noAttrs.data(), func.getNumResults()));
  }
  for (auto param : llvm::to_vector(module.getOps<train::ParamOp>()))
    param.erase();
  for (auto func : module.getOps<LLVM::LLVMFuncOp>())
    for (NamedAttribute attr : llvm::to_vector(func->getDiscardableAttrs()))
      if (attr.getName().strref().starts_with("train."))
        func->removeDiscardableAttr(attr.getName());
  for (NamedAttribute attr : llvm::to_vector(module->getAttrs()))
    if (attr.getName().strref().starts_with("train."))
      module->removeAttr(attr.getName());
  return success();
}
