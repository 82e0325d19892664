//===- LegalizeONNX.cpp - the second import stage -------------------------===//
//
// Walks each function once in block order (ONNX graphs are topologically
// sorted, and the first stage keeps that order), handing every
// `train.onnx_node` to the handler of its op type. A single ordered walk,
// rather than greedy pattern application, lets handlers see already
// legalised producers (so shape sub-graphs fold as they are met) and emits
// each diagnostic exactly once.
//
//===----------------------------------------------------------------------===//

#include "LegalizeONNX.h"

#include "traincc/Import/Passes.h"
#include "traincc/Import/SupportedOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/MapVector.h"

namespace traincc {
#define GEN_PASS_DEF_LEGALIZEONNXPASS
#include "traincc/Import/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

//===----------------------------------------------------------------------===//
// ONNXNode
//===----------------------------------------------------------------------===//

Value ONNXNode::getInput(unsigned index) const {
  if (index >= op.getInputs().size())
    return nullptr;
  Value value = op.getInputs()[index];
  if (isa<NoneType>(value.getType()))
    return nullptr;
  return value;
}

RankedTensorType ONNXNode::getInputType(unsigned index) const {
  Value value = getInput(index);
  return value ? dyn_cast<RankedTensorType>(value.getType()) : nullptr;
}

DenseElementsAttr ONNXNode::getConstantInput(unsigned index) const {
  Value value = getInput(index);
  DenseElementsAttr attr;
  if (value && matchPattern(value, m_Constant(&attr)))
    return attr;
  return nullptr;
}

std::optional<SmallVector<int64_t>>
ONNXNode::getConstantInts(unsigned index) const {
  DenseElementsAttr attr = getConstantInput(index);
  if (!attr || !isa<IntegerType>(attr.getElementType()))
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const APInt &value : attr.getValues<APInt>())
    values.push_back(value.getSExtValue());
  return values;
}

bool ONNXNode::hasAttr(StringRef name) const {
  return static_cast<bool>(op.getOnnxAttrs().get(name));
}

std::optional<int64_t> ONNXNode::getInt(StringRef name) const {
  if (auto attr = dyn_cast_if_present<IntegerAttr>(op.getOnnxAttrs().get(name)))
    return attr.getValue().getSExtValue();
  return std::nullopt;
}

int64_t ONNXNode::getInt(StringRef name, int64_t defaultValue) const {
  return getInt(name).value_or(defaultValue);
}

std::optional<float> ONNXNode::getFloat(StringRef name) const {
  if (auto attr = dyn_cast_if_present<FloatAttr>(op.getOnnxAttrs().get(name)))
    return static_cast<float>(attr.getValueAsDouble());
  return std::nullopt;
}

float ONNXNode::getFloat(StringRef name, float defaultValue) const {
  return getFloat(name).value_or(defaultValue);
}

std::optional<SmallVector<int64_t>> ONNXNode::getInts(StringRef name) const {
  Attribute attr = op.getOnnxAttrs().get(name);
  if (auto array = dyn_cast_if_present<DenseI64ArrayAttr>(attr))
    return SmallVector<int64_t>(array.asArrayRef());
  return std::nullopt;
}

std::optional<StringRef> ONNXNode::getString(StringRef name) const {
  if (auto attr = dyn_cast_if_present<StringAttr>(op.getOnnxAttrs().get(name)))
    return attr.getValue();
  return std::nullopt;
}

DenseElementsAttr ONNXNode::getTensor(StringRef name) const {
  return dyn_cast_if_present<DenseElementsAttr>(op.getOnnxAttrs().get(name));
}

InFlightDiagnostic ONNXNode::emitError() const {
  return op.emitError() << "node '" << getName() << "' (" << getOpType()
                        << "): ";
}

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

FailureOr<int64_t> onnx_import::normalizeAxis(const ONNXNode &node,
                                              int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    node.emitError() << "axis " << axis << " is out of range for rank "
                     << rank;
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

void onnx_import::replaceNode(const ONNXNode &node, RewriterBase &rewriter,
                              Value value) {
  rewriter.replaceAllUsesWith(node.getOp().getOutputs().front(), value);
  rewriter.eraseOp(node.getOp());
}

Value onnx_import::createConstant(RewriterBase &rewriter, Location loc,
                                  DenseElementsAttr value) {
  return train::ConstantOp::create(rewriter, loc, value);
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

/// Default-domain opset of the module (set by the first stage); 17 when the
/// module was written by hand without one.
int64_t getModuleOpset(ModuleOp module) {
  if (auto attr = module->getAttrOfType<IntegerAttr>("train.onnx_opset"))
    return attr.getInt();
  return 17;
}

bool isStaticTensor(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  return ranked && ranked.hasStaticShape();
}

/// True when `node` cannot be judged because an input comes from a node that
/// was not legalised: its error is reported there, not here.
bool dependsOnFailedNode(train::ONNXNodeOp node) {
  for (Value input : node.getInputs())
    if (input.getDefiningOp<train::ONNXNodeOp>() &&
        !isStaticTensor(input.getType()))
      return true;
  return false;
}

/// Erases parameters that no longer have a reader (initializers that only
/// fed shape computations).
void eraseUnusedParams(ModuleOp module) {
  module.walk([](train::ReadParamOp read) {
    if (read->use_empty())
      read->erase();
  });
  SymbolTableCollection symbols;
  SymbolUserMap users(symbols, module);
  for (auto param :
       llvm::make_early_inc_range(module.getOps<train::ParamOp>()))
    if (users.getUsers(param).empty())
      param->erase();
}

HandlerTable buildHandlerTable() {
  HandlerTable table;
  addNNHandlers(table);
  addElementwiseHandlers(table);
  addReduceHandlers(table);
  addRecurrentHandlers(table);
  addNormalizationHandlers(table);
  addActivationHandlers(table);
  addConvTransposeHandlers(table);
  addEinsumHandlers(table);
  addShapeHandlers(table);
  addConditionalHandlers(table);
  addResizeHandlers(table);
  return table;
}

struct LegalizeONNXPass
    : public traincc::impl::LegalizeONNXPassBase<LegalizeONNXPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t opset = getModuleOpset(module);
    HandlerTable table = buildHandlerTable();

    IRRewriter rewriter(&getContext());
    bool failedAny = false;
    // Keyed by "Type", or "domain.Type" outside the default domain.
    llvm::MapVector<StringAttr, unsigned> unsupportedCounts;
    SmallVector<train::ONNXNodeOp> nodes;
    module.walk([&](train::ONNXNodeOp node) { nodes.push_back(node); });
    for (train::ONNXNodeOp op : nodes) {
      ONNXNode node(op, opset);
      // Handlers are for the default domain; a node of another domain
      // (com.microsoft's Gelu, ...) is unsupported whatever its type.
      auto domain = op->getAttrOfType<StringAttr>("domain");
      auto handler = domain ? table.end() : table.find(op.getOpType());
      if (handler == table.end()) {
        InFlightDiagnostic error = node.emitError()
                                   << "unsupported ONNX op '" << op.getOpType()
                                   << "'";
        if (domain)
          error << " of domain '" << domain.getValue() << "'";
        ++unsupportedCounts[StringAttr::get(
            &getContext(), domain ? domain.getValue() + "." + op.getOpType()
                                  : Twine(op.getOpType()))];
        failedAny = true;
        continue;
      }
      if (dependsOnFailedNode(op)) {
        failedAny = true;
        continue;
      }
      rewriter.setInsertionPoint(op);
      if (failed(handler->second(node, rewriter)))
        failedAny = true;
    }

    if (!unsupportedCounts.empty()) {
      InFlightDiagnostic summary = module.emitError()
                                   << "the model uses unsupported ONNX ops: ";
      llvm::interleaveComma(unsupportedCounts, summary, [&](auto &entry) {
        summary << entry.first.getValue() << " (" << entry.second << " node"
                << (entry.second == 1 ? "" : "s") << ")";
      });
    }
    if (failedAny)
      return signalPassFailure();

    // Results replaced by legalised values may have new types; the function
    // signatures follow their returns.
    module.walk([](func::FuncOp func) {
      if (func.isExternal())
        return;
      auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
      func.setFunctionType(FunctionType::get(
          func.getContext(), func.getArgumentTypes(), ret.getOperandTypes()));
    });
    eraseUnusedParams(module);
  }
};

} // namespace

std::vector<std::string> traincc::getSupportedONNXOps() {
  std::vector<std::string> names;
  for (const auto &entry : buildHandlerTable())
    names.push_back(entry.getKey().str());
  llvm::sort(names);
  return names;
}
