//===- LegalizeConvTranspose.cpp - ONNX ConvTranspose ---------------------===//
//
// A transposed convolution is the gradient of a convolution by its input:
// ConvTranspose(X, W) with W of [C_in, C_out / group, k...] is
// train.conv_backward_data of X through the convolution whose weight is W
// (mapping C_out channels to C_in), with the same strides, pads, dilations
// and groups. Its output size, which strides make ambiguous for the
// gradient, is ONNX's: stride (in - 1) + output_padding + dilation (k - 1)
// + 1 - pads, with the pads derived from `output_shape` or `auto_pad` when
// those are given. The bias is added per channel. conv_backward_data's own
// gradient rule (a convolution for X, a filter gradient for W) trains it.
//
//===----------------------------------------------------------------------===//

#include "LegalizeUtils.h"

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

namespace {

/// An attribute of one value per spatial axis, or `fill` for each.
FailureOr<SmallVector<int64_t>> spatialInts(const ONNXNode &node,
                                            StringRef name, int64_t spatial,
                                            int64_t fill) {
  std::optional<SmallVector<int64_t>> given = node.getInts(name);
  if (!given)
    return SmallVector<int64_t>(spatial, fill);
  if (static_cast<int64_t>(given->size()) != spatial) {
    node.emitError() << "attribute '" << name << "' has " << given->size()
                     << " values for " << spatial << " spatial axes";
    return failure();
  }
  return *given;
}

LogicalResult legalizeConvTranspose(const ONNXNode &node,
                                    RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "X");
  FailureOr<Value> weight = getFloatInput(node, 1, "W");
  if (failed(input) || failed(weight))
    return failure();
  auto type = cast<RankedTensorType>(input->getType());
  auto weightType = cast<RankedTensorType>(weight->getType());
  int64_t rank = type.getRank();
  int64_t groups = node.getInt("group", 1);
  if (rank < 3 || weightType.getRank() != rank) {
    node.emitError() << "expects an input [N, C, D...] and a weight of the "
                        "same rank, got "
                     << type << " and " << weightType;
    return failure();
  }
  if (groups <= 0 || weightType.getDimSize(0) != type.getDimSize(1) ||
      type.getDimSize(1) % groups != 0) {
    node.emitError() << "weight " << weightType << " does not match the "
                     << type.getDimSize(1) << " input channels in " << groups
                     << " groups";
    return failure();
  }
  int64_t spatial = rank - 2;
  ArrayRef<int64_t> kernel = weightType.getShape().drop_front(2);
  if (std::optional<SmallVector<int64_t>> shape = node.getInts("kernel_shape");
      shape && ArrayRef<int64_t>(*shape) != kernel) {
    node.emitError() << "kernel_shape differs from the weight's";
    return failure();
  }
  FailureOr<SmallVector<int64_t>> strides, dilations, outputPadding, pads;
  if (failed(strides = spatialInts(node, "strides", spatial, 1)) ||
      failed(dilations = spatialInts(node, "dilations", spatial, 1)) ||
      failed(outputPadding = spatialInts(node, "output_padding", spatial, 0)) ||
      failed(pads = spatialInts(node, "pads", 2 * spatial, 0)))
    return failure();
  StringRef autoPad = node.getString("auto_pad").value_or("NOTSET");
  std::optional<SmallVector<int64_t>> outputShape = node.getInts("output_shape");
  if (outputShape && static_cast<int64_t>(outputShape->size()) == rank)
    outputShape->erase(outputShape->begin(), outputShape->begin() + 2);
  if (outputShape && static_cast<int64_t>(outputShape->size()) != spatial) {
    node.emitError() << "output_shape has " << outputShape->size()
                     << " values for " << spatial << " spatial axes";
    return failure();
  }
  SmallVector<int64_t> shape = {type.getDimSize(0),
                                weightType.getDimSize(1) * groups};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t s = (*strides)[i], d = (*dilations)[i], op = (*outputPadding)[i];
    if (s <= 0 || d <= 0 || op < 0 || op >= s) {
      node.emitError() << "strides and dilations must be positive and "
                          "output_padding below the stride";
      return failure();
    }
    int64_t full = s * (type.getDimSize(2 + i) - 1) + op + d * (kernel[i] - 1) +
                   1;
    int64_t &begin = (*pads)[i], &end = (*pads)[spatial + i];
    if (outputShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t out = outputShape ? (*outputShape)[i]
                                : type.getDimSize(2 + i) * s;
      int64_t total = full - out;
      if (total < 0 && op - total < s) {
        // A larger output_shape: the extra elements are output padding.
        full -= total;
        total = 0;
      }
      bool upper = autoPad == "SAME_UPPER";
      begin = upper ? total / 2 : total - total / 2;
      end = total - begin;
    } else if (autoPad == "VALID") {
      begin = end = 0;
    } else if (autoPad != "NOTSET") {
      node.emitError() << "auto_pad '" << autoPad << "' is not supported";
      return failure();
    }
    if (begin < 0 || end < 0 || full - begin - end <= 0) {
      node.emitError() << "pads " << begin << " and " << end << " of axis "
                       << 2 + i << " leave no output";
      return failure();
    }
    shape.push_back(full - begin - end);
  }
  if (failed(checkRank(node, rank)) || failed(checkFoldSize(node, shape)))
    return failure();
  Location loc = node.getLoc();
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  Value result = train::ConvBackwardDataOp::create(
      rewriter, loc, resultType, *input, *weight,
      rewriter.getDenseI64ArrayAttr(*strides),
      rewriter.getDenseI64ArrayAttr(*pads),
      rewriter.getDenseI64ArrayAttr(*dilations),
      rewriter.getI64IntegerAttr(groups));
  if (node.getInput(2)) {
    FailureOr<Value> bias = getFloatInput(node, 2, "B");
    if (failed(bias))
      return failure();
    auto biasType = cast<RankedTensorType>(bias->getType());
    if (biasType.getRank() != 1 || biasType.getDimSize(0) != shape[1]) {
      node.emitError() << "bias " << biasType << " is not one value per "
                       << shape[1] << " output channels";
      return failure();
    }
    SmallVector<int64_t> channel(rank - 1, 1);
    channel[0] = shape[1];
    Value perChannel = train::ReshapeOp::create(
        rewriter, loc, RankedTensorType::get(channel, type.getElementType()),
        *bias);
    result = train::AddOp::create(rewriter, loc, resultType, result,
                                  perChannel);
  }
  return finishNode(node, rewriter, result);
}

} // namespace

void onnx_import::addConvTransposeHandlers(HandlerTable &table) {
  table["ConvTranspose"] = legalizeConvTranspose;
}
