//===- LegalizeNN.cpp - ONNX NN handlers ----------------------------------===//
//
// Convolution, normalisation, dense layers, pooling and dropout. ONNX's
// implicit forms (auto_pad, attribute defaults, optional inputs that moved
// between opsets) are resolved here into the explicit attributes of the
// Train ops; the ops' shape functions then compute the result types.
//
//===----------------------------------------------------------------------===//

#include "LegalizeUtils.h"

#include <limits>

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

namespace {

/// 1 - x for an ONNX float attribute that stands for a short decimal.
/// PyTorch exports momentum 0.1 as the float nearest 0.9; 1 - that float is
/// 0.100000024, not 0.1. Rounding to the 7 significant digits a float
/// carries recovers the decimal the user wrote (and PyTorch computes with).
float complementOfFloat(float x) {
  double complement = 1.0 - static_cast<double>(x);
  char text[32];
  std::snprintf(text, sizeof(text), "%.7g", complement);
  return std::strtof(text, nullptr);
}

//===----------------------------------------------------------------------===//
// Windows (Conv and pooling)
//===----------------------------------------------------------------------===//

/// Explicit window attributes: begin pads of every spatial axis, then end
/// pads.
struct Window {
  SmallVector<int64_t> kernel, strides, pads, dilations;
  bool ceilMode = false;
};

/// Input 0 of a windowed op: a ranked float tensor N x C x spatial...; its
/// spatial sizes may still be dynamic here, so that auto_pad can say why it
/// needs them.
FailureOr<RankedTensorType> getWindowInput(const ONNXNode &node) {
  Value value = node.getInput(0);
  auto type =
      dyn_cast_if_present<RankedTensorType>(value ? value.getType() : Type());
  if (!type || !isFloatElementType(type.getElementType())) {
    (void)getFloatInput(node, 0, "X"); // Reports what is wrong.
    return failure();
  }
  if (type.getRank() < 3) {
    node.emitError() << "input 0 (X) must have rank 3 or more (N, C, "
                        "spatial...), got "
                     << type;
    return failure();
  }
  return type;
}

/// Reads an INTS attribute with one entry per spatial axis (`count`
/// entries), or `fill` repeated when it is absent.
FailureOr<SmallVector<int64_t>>
getAxisInts(const ONNXNode &node, StringRef name, size_t count, int64_t fill) {
  std::optional<SmallVector<int64_t>> values = node.getInts(name);
  if (!values)
    return SmallVector<int64_t>(count, fill);
  if (values->size() != count) {
    node.emitError() << name << " has " << values->size()
                     << " entries, expected " << count;
    return failure();
  }
  return *values;
}

/// Window sizes beyond int32 are no real model's and would overflow the
/// window arithmetic.
LogicalResult checkWindowValues(const ONNXNode &node, StringRef name,
                                ArrayRef<int64_t> values) {
  for (int64_t value : values) {
    if (value > std::numeric_limits<int32_t>::max()) {
      node.emitError() << name << " value " << value << " is too large";
      return failure();
    }
  }
  return success();
}

/// Resolves kernel_shape (or `weightKernel` when the attribute is absent),
/// strides, dilations, pads and auto_pad into explicit values, with ONNX's
/// SAME formula: output = ceil(input / stride), the total padding split
/// evenly and its odd unit put at the end (SAME_UPPER) or begin
/// (SAME_LOWER).
FailureOr<Window> getWindow(const ONNXNode &node, RankedTensorType input,
                            std::optional<ArrayRef<int64_t>> weightKernel,
                            bool hasDilations, bool hasCeilMode) {
  size_t spatial = input.getRank() - 2;
  Window window;
  std::optional<SmallVector<int64_t>> kernel = node.getInts("kernel_shape");
  if (kernel && weightKernel && ArrayRef<int64_t>(*kernel) != *weightKernel) {
    InFlightDiagnostic diag = node.emitError() << "kernel_shape [";
    llvm::interleaveComma(*kernel, diag);
    diag << "] does not match the weight's spatial sizes [";
    llvm::interleaveComma(*weightKernel, diag);
    diag << "]";
    return failure();
  }
  if (!kernel && !weightKernel) {
    node.emitError() << "kernel_shape is missing";
    return failure();
  }
  window.kernel = kernel ? *kernel : SmallVector<int64_t>(*weightKernel);
  if (window.kernel.size() != spatial) {
    node.emitError() << "kernel_shape has " << window.kernel.size()
                     << " entries, expected " << spatial;
    return failure();
  }
  FailureOr<SmallVector<int64_t>> strides =
      getAxisInts(node, "strides", spatial, 1);
  FailureOr<SmallVector<int64_t>> dilations =
      hasDilations
          ? getAxisInts(node, "dilations", spatial, 1)
          : FailureOr<SmallVector<int64_t>>(SmallVector<int64_t>(spatial, 1));
  if (failed(strides) || failed(dilations))
    return failure();
  window.strides = *strides;
  window.dilations = *dilations;
  for (auto [name, values] :
       {std::pair<StringRef, ArrayRef<int64_t>>{"kernel_shape", window.kernel},
        {"strides", window.strides},
        {"dilations", window.dilations}}) {
    if (llvm::any_of(values, [](int64_t v) { return v < 1; })) {
      node.emitError() << name << " must be positive";
      return failure();
    }
    if (failed(checkWindowValues(node, name, values)))
      return failure();
  }

  StringRef autoPad = node.getString("auto_pad").value_or("NOTSET");
  if (autoPad == "NOTSET") {
    FailureOr<SmallVector<int64_t>> pads =
        getAxisInts(node, "pads", 2 * spatial, 0);
    if (failed(pads) || failed(checkWindowValues(node, "pads", *pads)))
      return failure();
    window.pads = *pads;
    window.ceilMode = hasCeilMode && node.getInt("ceil_mode", 0) != 0;
    return window;
  }
  // With auto_pad the output size is fixed by the formula, whatever
  // ceil_mode says (ONNX and onnxruntime agree).
  window.pads.assign(2 * spatial, 0);
  if (autoPad == "VALID")
    return window;
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER") {
    node.emitError() << "unknown auto_pad '" << autoPad << "'";
    return failure();
  }
  for (size_t i = 0; i < spatial; ++i) {
    int64_t size = input.getDimSize(i + 2);
    if (ShapedType::isDynamic(size)) {
      node.emitError() << "auto_pad '" << autoPad
                       << "' needs static spatial sizes, got " << input;
      return failure();
    }
    int64_t stride = window.strides[i];
    int64_t extent = (window.kernel[i] - 1) * window.dilations[i] + 1;
    int64_t output = (size + stride - 1) / stride;
    int64_t total = std::max<int64_t>(0, (output - 1) * stride + extent - size);
    int64_t small = total / 2, large = total - small;
    window.pads[i] = autoPad == "SAME_UPPER" ? small : large;
    window.pads[i + spatial] = autoPad == "SAME_UPPER" ? large : small;
  }
  return window;
}

//===----------------------------------------------------------------------===//
// Handlers
//===----------------------------------------------------------------------===//

LogicalResult legalizeConv(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<RankedTensorType> inputType;
  FailureOr<Value> weight;
  if (failed(inputType = getWindowInput(node)) ||
      failed(weight = getFloatInput(node, 1, "W")))
    return failure();
  auto weightType = cast<RankedTensorType>(weight->getType());
  if (weightType.getRank() != inputType->getRank()) {
    node.emitError() << "weight rank " << weightType.getRank()
                     << " differs from input rank " << inputType->getRank();
    return failure();
  }
  FailureOr<Window> window =
      getWindow(node, *inputType, weightType.getShape().drop_front(2),
                /*hasDilations=*/true, /*hasCeilMode=*/false);
  if (failed(window))
    return failure();
  FailureOr<Value> input = getFloatInput(node, 0, "X");
  if (failed(input))
    return failure();
  Value bias;
  if (node.getInput(2)) {
    FailureOr<Value> b = getFloatInput(node, 2, "B");
    if (failed(b))
      return failure();
    bias = *b;
  }
  FailureOr<Value> conv = createInferred<train::ConvOp>(
      node, rewriter, *input, *weight, bias, window->strides, window->pads,
      window->dilations, static_cast<uint64_t>(node.getInt("group", 1)));
  if (failed(conv))
    return failure();
  return finishNode(node, rewriter, *conv);
}

/// Running statistics are training state, not trainable weights: retag the
/// parameters that hold them.
LogicalResult markRunningStat(const ONNXNode &node, RewriterBase &rewriter,
                              Value value, unsigned index, StringRef what,
                              train::ParamKind kind) {
  auto read = value.getDefiningOp<train::ReadParamOp>();
  auto param = read ? SymbolTable::lookupNearestSymbolFrom<train::ParamOp>(
                          read, read.getParamAttr())
                    : train::ParamOp();
  // Statistics fed as graph inputs import as they are: the forward graph
  // (evaluation, export) uses them as given. Training needs them as state;
  // traincc-explicit-training-mode reports that when a trainer is built.
  if (!param)
    return success();
  // A statistic is updated in place, so its initializer must be its own:
  // read by no other op and by no other statistic input. torch.onnx.export
  // in evaluation mode merges initializers of equal values (all-ones
  // running variances and BatchNorm weights, say); in training mode it
  // merges only tensors that share memory.
  unsigned statUses = 0;
  bool otherUse = false;
  param->getParentOp()->walk([&](train::ReadParamOp reader) {
    if (reader.getParamAttr().getAttr() != param.getSymNameAttr())
      return;
    for (OpOperand &use : reader->getUses()) {
      Operation *user = use.getOwner();
      auto onnx = dyn_cast<train::ONNXNodeOp>(user);
      auto bn = dyn_cast<train::BatchNormOp>(user);
      bool stat = (onnx && onnx.getOpType() == "BatchNormalization" &&
                   (use.getOperandNumber() == 3 ||
                    use.getOperandNumber() == 4)) ||
                  (bn && (use.get() == bn.getRunningMean() ||
                          use.get() == bn.getRunningVar()));
      if (stat)
        ++statUses;
      else
        otherUse = true;
    }
  });
  if (otherUse || statUses > 1) {
    node.emitError() << "input " << index << " (" << what
                     << ") is initializer '" << param.getSymName()
                     << "', which the model also uses elsewhere; BatchNorm "
                        "running statistics are updated in place and need "
                        "initializers of their own (torch.onnx.export merges "
                        "equal initializers in evaluation mode: re-export "
                        "with torch.onnx.export(..., "
                        "training=torch.onnx.TrainingMode.TRAINING))";
    return failure();
  }
  if (param.getKind() == train::ParamKind::Trainable)
    rewriter.modifyOpInPlace(param, [&] { param.setKind(kind); });
  return success();
}

/// Training-mode BatchNormalization-14+'s outputs 1 and 2, when used:
/// `input_mean * momentum + batch_mean * (1 - momentum)`, and likewise for
/// the variance. The batch variance is the biased one, as in ONNX's
/// reference implementation (its backend test data match it exactly), not
/// the unbiased one that traincc's own running-statistics update uses, as
/// PyTorch does.
LogicalResult legalizeRunningOutputs(const ONNXNode &node,
                                     RewriterBase &rewriter,
                                     ArrayRef<Value> operands, float momentum) {
  auto outputs = node.getOp().getOutputs();
  if (outputs.size() < 2 ||
      llvm::all_of(outputs.drop_front(),
                   [](Value output) { return output.use_empty(); }))
    return success();
  Location loc = node.getLoc();
  auto stats = train::BNStatsOp::create(rewriter, loc, operands[0]);
  Type element = cast<RankedTensorType>(operands[0].getType()).getElementType();
  auto scalar = [&](float value) {
    auto type = RankedTensorType::get({}, element);
    return createConstant(rewriter, loc,
                          DenseElementsAttr::get(
                              type, rewriter.getFloatAttr(element, value)));
  };
  Value keep = scalar(momentum), take = scalar(complementOfFloat(momentum));
  const StringRef names[] = {"running_mean", "running_var"};
  for (unsigned i = 0; i < 2 && i + 1 < outputs.size(); ++i) {
    Value output = outputs[i + 1];
    if (output.use_empty())
      continue;
    Value old = train::MulOp::create(rewriter, loc, operands[3 + i], keep);
    Value batch = train::MulOp::create(rewriter, loc, stats.getResult(i), take);
    Value updated = train::AddOp::create(rewriter, loc, old, batch);
    auto declared = dyn_cast<RankedTensorType>(output.getType());
    if (declared && declared.hasStaticShape() &&
        declared != updated.getType()) {
      node.emitError() << "output " << i + 1 << " (" << names[i]
                       << ") has type " << updated.getType()
                       << ", ONNX shape inference declared " << declared;
      return failure();
    }
    rewriter.replaceAllUsesWith(output, updated);
  }
  return success();
}

LogicalResult legalizeBatchNorm(const ONNXNode &node, RewriterBase &rewriter) {
  if (node.getOpset() < 9 && node.getInt("spatial", 1) == 0) {
    node.emitError() << "spatial = 0 (statistics per activation rather than "
                        "per channel) is not supported";
    return failure();
  }
  // Opset 14 turned the optional outputs into the updated running
  // statistics, defined in training mode; before, they were the statistics
  // of the batch. Training-step construction updates the running statistics
  // itself; the outputs, when used, are computed as ONNX defines them.
  bool runningOutputs =
      node.getOpset() >= 14 && node.getInt("training_mode", 0) != 0;
  SmallVector<StringRef> outputs =
      node.getOpset() >= 14
          ? SmallVector<StringRef>{"running_mean", "running_var"}
          : SmallVector<StringRef>{"mean", "var", "saved_mean", "saved_var"};
  if (failed(requireUnusedOutputs(node, runningOutputs ? 3 : 1, outputs)))
    return failure();
  SmallVector<Value> operands;
  const StringRef names[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (auto [index, what] : llvm::enumerate(names)) {
    FailureOr<Value> operand = getFloatInput(node, index, what);
    if (failed(operand))
      return failure();
    operands.push_back(*operand);
  }
  float epsilon = node.getFloat("epsilon", 1e-5f);
  float momentum = node.getFloat("momentum", 0.9f);
  if (!(momentum >= 0.0f && momentum <= 1.0f)) {
    node.emitError() << "momentum " << momentum << " must be in [0, 1]";
    return failure();
  }
  if (failed(markRunningStat(node, rewriter, operands[3], 3, "input_mean",
                             train::ParamKind::RunningMean)) ||
      failed(markRunningStat(node, rewriter, operands[4], 4, "input_var",
                             train::ParamKind::RunningVar)))
    return failure();
  // ONNX weighs the old running value by `momentum`, PyTorch (and
  // train.batch_norm) the new statistic.
  FailureOr<Value> bn = createInferred<train::BatchNormOp>(
      node, rewriter, operands[0], operands[1], operands[2], operands[3],
      operands[4], rewriter.getF32FloatAttr(epsilon),
      rewriter.getF32FloatAttr(complementOfFloat(momentum)));
  if (failed(bn))
    return failure();
  if (runningOutputs &&
      failed(legalizeRunningOutputs(node, rewriter, operands, momentum)))
    return failure();
  return finishNode(node, rewriter, *bn);
}

LogicalResult legalizeGemm(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<Value> a, b;
  if (failed(a = getFloatInput(node, 0, "A")) ||
      failed(b = getFloatInput(node, 1, "B")))
    return failure();
  Value c;
  if (node.getInput(2)) {
    FailureOr<Value> value = getFloatInput(node, 2, "C");
    if (failed(value))
      return failure();
    c = *value;
  } else if (node.getOpset() < 11) {
    node.emitError() << "input 2 (C) is required before opset 11";
    return failure();
  }
  FailureOr<Value> gemm = createInferred<train::GemmOp>(
      node, rewriter, *a, *b, c,
      rewriter.getBoolAttr(node.getInt("transA", 0) != 0),
      rewriter.getBoolAttr(node.getInt("transB", 0) != 0),
      rewriter.getF32FloatAttr(node.getFloat("alpha", 1.0f)),
      rewriter.getF32FloatAttr(node.getFloat("beta", 1.0f)));
  if (failed(gemm))
    return failure();
  return finishNode(node, rewriter, *gemm);
}

LogicalResult legalizeMatMul(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<Value> a, b;
  if (failed(a = getFloatInput(node, 0, "A")) ||
      failed(b = getFloatInput(node, 1, "B")))
    return failure();
  FailureOr<Value> matmul =
      createInferred<train::MatMulOp>(node, rewriter, *a, *b);
  if (failed(matmul))
    return failure();
  return finishNode(node, rewriter, *matmul);
}

LogicalResult legalizeMaxPool(const ONNXNode &node, RewriterBase &rewriter) {
  // storage_order only shapes the Indices output, which must be unused.
  if (failed(requireUnusedOutputs(node, 1, {"Indices"})) ||
      failed(rejectAttrBefore(node, "ceil_mode", 10)) ||
      failed(rejectAttrBefore(node, "dilations", 10)) ||
      failed(rejectAttrBefore(node, "storage_order", 8)))
    return failure();
  FailureOr<RankedTensorType> inputType = getWindowInput(node);
  if (failed(inputType))
    return failure();
  FailureOr<Window> window =
      getWindow(node, *inputType, std::nullopt, /*hasDilations=*/true,
                /*hasCeilMode=*/true);
  if (failed(window))
    return failure();
  FailureOr<Value> input = getFloatInput(node, 0, "X");
  if (failed(input))
    return failure();
  FailureOr<Value> pool = createInferred<train::MaxPoolOp>(
      node, rewriter, *input, window->kernel, window->strides, window->pads,
      window->dilations, window->ceilMode);
  if (failed(pool))
    return failure();
  return finishNode(node, rewriter, *pool);
}

LogicalResult legalizeAveragePool(const ONNXNode &node,
                                  RewriterBase &rewriter) {
  if (failed(rejectAttrBefore(node, "ceil_mode", 10)) ||
      failed(rejectAttrBefore(node, "dilations", 19)))
    return failure();
  FailureOr<RankedTensorType> inputType = getWindowInput(node);
  if (failed(inputType))
    return failure();
  FailureOr<Window> window =
      getWindow(node, *inputType, std::nullopt, /*hasDilations=*/false,
                /*hasCeilMode=*/true);
  if (failed(window))
    return failure();
  FailureOr<Value> input = getFloatInput(node, 0, "X");
  if (failed(input))
    return failure();
  FailureOr<Value> pool = createInferred<train::AvgPoolOp>(
      node, rewriter, *input, window->kernel, window->strides, window->pads,
      window->ceilMode, node.getInt("count_include_pad", 0) != 0);
  if (failed(pool))
    return failure();
  return finishNode(node, rewriter, *pool);
}

LogicalResult legalizeGlobalAveragePool(const ONNXNode &node,
                                        RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "X");
  if (failed(input))
    return failure();
  FailureOr<Value> pool =
      createInferred<train::GlobalAvgPoolOp>(node, rewriter, *input);
  if (failed(pool))
    return failure();
  return finishNode(node, rewriter, *pool);
}

/// Dropout is always the trainable (inverted) dropout: evaluation drops it
/// whatever training_mode the model was exported with.
LogicalResult legalizeDropout(const ONNXNode &node, RewriterBase &rewriter) {
  if (failed(requireUnusedOutputs(node, 1, {"mask"})))
    return failure();
  double ratio = 0.5;
  if (node.getOpset() < 12) {
    ratio = node.getFloat("ratio", 0.5f);
  } else if (node.getInput(1)) {
    std::optional<double> value =
        getScalarValue(getConstantOrInitialValue(node, 1));
    if (!value) {
      node.emitError() << "input 1 (ratio) must be a constant scalar: "
                          "traincc trains every Dropout with a compile-time "
                          "ratio";
      return failure();
    }
    ratio = *value;
  }
  if (!(ratio >= 0.0 && ratio < 1.0)) {
    node.emitError() << "ratio " << ratio << " must be in [0, 1)";
    return failure();
  }
  FailureOr<Value> input = getFloatInput(node, 0, "data");
  if (failed(input))
    return failure();
  Value dropout = train::DropoutOp::create(
      rewriter, node.getLoc(), *input,
      rewriter.getF32FloatAttr(static_cast<float>(ratio)));
  return finishNode(node, rewriter, dropout);
}

} // namespace

void onnx_import::addNNHandlers(HandlerTable &table) {
  table["Conv"] = legalizeConv;
  table["BatchNormalization"] = legalizeBatchNorm;
  table["Gemm"] = legalizeGemm;
  table["MatMul"] = legalizeMatMul;
  table["MaxPool"] = legalizeMaxPool;
  table["AveragePool"] = legalizeAveragePool;
  table["GlobalAveragePool"] = legalizeGlobalAveragePool;
  table["Dropout"] = legalizeDropout;
}
