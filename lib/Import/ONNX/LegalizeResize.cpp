//===- LegalizeResize.cpp - Resize and Upsample ---------------------------===//
//
// ONNX Resize (opsets 10..19) and its predecessor Upsample (7..9). Every
// mode ONNX defines is separable: along each resized axis, output element i
// is a fixed weighted sum of input elements, the weights depending only on
// i, the sizes and the attributes. So each resized axis imports as one
// product with a constant interpolation matrix (out x in), built here from
// the formulas of the ONNX specification (coordinate transformation,
// nearest rounding, linear and cubic coefficients, edge clamping,
// exclude_outside, antialias), and the gradient is the transposed product,
// which the matmul rule already gives. One case is cheaper as data movement
// and common (PyTorch's and Keras's nearest upsampling by an integer
// factor): when output i reads input i / k, the axis is a reshape and a
// broadcast, whose gradient sums each block of k.
//
// The matrix costs in x out multiply-adds per output row where a gather
// would cost a few: acceptable for the feature maps of the models traincc
// trains, and it keeps the backward pass a dense contraction that the CPU
// and GPU contraction kernels already run well.
//
// Unsupported, with an error naming it: tf_crop_and_resize (its region of
// interest and extrapolation value make the map affine, not linear), scales
// or sizes that are not constants, and resizing the batch axis (sizes
// traced at the export's batch size).
//
//===----------------------------------------------------------------------===//

#include "LegalizeUtils.h"

#include <cmath>

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

namespace {

enum class Interpolation { Nearest, Linear, Cubic };

/// The attributes that decide the interpolation matrices.
struct ResizeSpec {
  Interpolation mode = Interpolation::Nearest;
  std::string coordinates = "half_pixel";
  /// round_prefer_floor, round_prefer_ceil, floor, ceil, or "simple"
  /// (Upsample and Resize-10: floor when enlarging, ceil when shrinking, as
  /// ONNX Runtime reads those versions).
  std::string nearest = "round_prefer_floor";
  double cubicA = -0.75;
  bool excludeOutside = false;
  bool antialias = false;
};

/// One resized axis: its input and output sizes and the scale the
/// coordinate transformation divides by.
struct AxisResize {
  int64_t axis, in, out;
  double scale;
};

/// The input coordinate output index `x` maps to (ONNX Resize,
/// coordinate_transformation_mode).
double sourceCoordinate(const ResizeSpec &spec, const AxisResize &a,
                        double x) {
  const std::string &mode = spec.coordinates;
  double in = double(a.in), out = double(a.out), scale = a.scale;
  if (mode == "asymmetric")
    return x / scale;
  if (mode == "align_corners")
    return a.out == 1 ? 0.0 : x * (in - 1) / (out - 1);
  if (mode == "pytorch_half_pixel")
    return a.out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (mode == "tf_half_pixel_for_nn")
    return (x + 0.5) / scale;
  if (mode == "half_pixel_symmetric") {
    double adjustment = out / (scale * in);
    double center = in / 2;
    return center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
  }
  return (x + 0.5) / scale - 0.5; // half_pixel
}

int64_t nearestIndex(const ResizeSpec &spec, const AxisResize &a, double x) {
  double floor = std::floor(x);
  bool half = x - floor == 0.5;
  const std::string &mode = spec.nearest;
  double picked;
  if (mode == "floor")
    picked = floor;
  else if (mode == "ceil")
    picked = std::ceil(x);
  else if (mode == "round_prefer_ceil")
    picked = half ? floor + 1 : std::round(x);
  else if (mode == "simple")
    picked = a.scale < 1 ? std::ceil(x) : std::trunc(x);
  else // round_prefer_floor
    picked = half ? floor : std::round(x);
  return std::clamp<int64_t>(int64_t(picked), 0, a.in - 1);
}

/// Keys' cubic convolution kernel with parameter A at distance `d`.
double cubicKernel(double d, double A) {
  d = std::fabs(d);
  if (d <= 1)
    return ((A + 2) * d - (A + 3)) * d * d + 1;
  if (d < 2)
    return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A;
  return 0;
}

/// The row-major out x in matrix of one axis.
std::vector<double> interpolationMatrix(const ResizeSpec &spec,
                                        const AxisResize &a) {
  std::vector<double> matrix(a.out * a.in, 0.0);
  for (int64_t i = 0; i < a.out; ++i) {
    double x = sourceCoordinate(spec, a, double(i));
    double *row = &matrix[i * a.in];
    if (spec.mode == Interpolation::Nearest) {
      row[nearestIndex(spec, a, x)] = 1;
      continue;
    }
    // The taps are the input positions nearest to x, ties to the left: with
    // r in (0, 1], tap k is at x0 + first + k at distance first + k - r.
    double x0 = std::floor(x);
    double r = x - x0;
    if (r == 0) {
      x0 -= 1;
      r = 1;
    }
    // Antialiasing (shrinking only) widens the kernel by 1 / scale.
    double stretch = spec.antialias ? std::min(a.scale, 1.0) : 1.0;
    double support = spec.mode == Interpolation::Linear ? 1 : 2;
    int64_t first = int64_t(std::floor(-support / stretch)) + 1;
    int64_t taps = 2 - 2 * first;
    std::vector<double> weights(taps);
    double sum = 0;
    for (int64_t k = 0; k < taps; ++k) {
      double d = stretch * (double(first + k) - r);
      weights[k] = spec.mode == Interpolation::Linear
                       ? std::clamp(1 - std::fabs(d), 0.0, 1.0)
                       : cubicKernel(d, spec.cubicA);
      sum += weights[k];
    }
    // exclude_outside drops the taps past the edges and renormalises;
    // otherwise they read the edge element.
    double kept = 0;
    for (int64_t k = 0; k < taps; ++k) {
      int64_t index = int64_t(x0) + first + k;
      bool outside = index < 0 || index >= a.in;
      if (spec.antialias)
        weights[k] /= sum;
      if (spec.excludeOutside && outside)
        weights[k] = 0;
      kept += weights[k];
    }
    for (int64_t k = 0; k < taps; ++k) {
      int64_t index = std::clamp<int64_t>(int64_t(x0) + first + k, 0, a.in - 1);
      row[index] += spec.excludeOutside ? weights[k] / kept : weights[k];
    }
  }
  return matrix;
}

/// k when row i of `matrix` reads input i / k alone (nearest enlarging by
/// an integer factor), else 0.
int64_t repeatFactor(const std::vector<double> &matrix, const AxisResize &a) {
  if (a.out % a.in != 0)
    return 0;
  int64_t k = a.out / a.in;
  for (int64_t i = 0; i < a.out; ++i)
    for (int64_t j = 0; j < a.in; ++j)
      if (matrix[i * a.in + j] != (j == i / k ? 1.0 : 0.0))
        return 0;
  return k;
}

DenseElementsAttr matrixAttr(ArrayRef<double> values, ArrayRef<int64_t> shape,
                             FloatType element) {
  SmallVector<APFloat> elements;
  for (double value : values) {
    APFloat converted(value);
    bool lost;
    (void)converted.convert(element.getFloatSemantics(),
                            APFloat::rmNearestTiesToEven, &lost);
    elements.push_back(converted);
  }
  return DenseElementsAttr::get(RankedTensorType::get(shape, element),
                                elements);
}

/// `input` resized along one axis.
FailureOr<Value> resizeAxis(const ONNXNode &node, RewriterBase &rewriter,
                            const ResizeSpec &spec, Value input,
                            const AxisResize &a) {
  Location loc = node.getLoc();
  auto type = cast<RankedTensorType>(input.getType());
  auto element = cast<FloatType>(type.getElementType());
  SmallVector<int64_t> shape(type.getShape());
  if (failed(checkFoldSize(node, {a.out, a.in})))
    return failure();
  std::vector<double> matrix = interpolationMatrix(spec, a);
  SmallVector<int64_t> resultShape = shape;
  resultShape[a.axis] = a.out;
  auto resultType = RankedTensorType::get(resultShape, element);

  bool identity = a.in == a.out;
  for (int64_t i = 0; identity && i < a.out; ++i)
    for (int64_t j = 0; identity && j < a.in; ++j)
      identity = matrix[i * a.in + j] == (i == j ? 1.0 : 0.0);
  if (identity)
    return input;

  if (int64_t k = repeatFactor(matrix, a)) {
    SmallVector<int64_t> split = shape;
    split.insert(split.begin() + a.axis + 1, 1);
    Value grouped = train::ReshapeOp::create(
        rewriter, loc, RankedTensorType::get(split, element), input);
    split[a.axis + 1] = k;
    Value repeated = train::BroadcastToOp::create(
        rewriter, loc, RankedTensorType::get(split, element), grouped);
    return Value(
        train::ReshapeOp::create(rewriter, loc, resultType, repeated));
  }

  int64_t rank = type.getRank();
  if (a.axis == rank - 1) {
    // x @ M^T contracts the last axis directly.
    std::vector<double> transposed(matrix.size());
    for (int64_t i = 0; i < a.out; ++i)
      for (int64_t j = 0; j < a.in; ++j)
        transposed[j * a.out + i] = matrix[i * a.in + j];
    FailureOr<Value> weights = createNodeConstant(
        node, rewriter, matrixAttr(transposed, {a.in, a.out}, element));
    if (failed(weights))
      return failure();
    return createInferred<train::MatMulOp>(node, rewriter, input, *weights);
  }
  // M @ x, with x viewed as [before, in, after].
  int64_t before = 1, after = 1;
  for (int64_t i = 0; i < a.axis; ++i)
    before *= shape[i];
  for (int64_t i = a.axis + 1; i < rank; ++i)
    after *= shape[i];
  Value viewed = train::ReshapeOp::create(
      rewriter, loc, RankedTensorType::get({before, a.in, after}, element),
      input);
  FailureOr<Value> weights = createNodeConstant(
      node, rewriter, matrixAttr(matrix, {a.out, a.in}, element));
  if (failed(weights))
    return failure();
  FailureOr<Value> product =
      createInferred<train::MatMulOp>(node, rewriter, *weights, viewed);
  if (failed(product))
    return failure();
  return Value(train::ReshapeOp::create(rewriter, loc, resultType, *product));
}

/// The float values of constant input `index`, or nullopt (with an error).
std::optional<SmallVector<double>> constantFloats(const ONNXNode &node,
                                                  unsigned index,
                                                  StringRef what) {
  DenseElementsAttr value = getConstantOrInitialValue(node, index);
  if (!value || !isa<FloatType>(value.getElementType())) {
    node.emitError() << "input " << index << " (" << what
                     << ") must be a float constant: traincc compiles static "
                        "shapes";
    return std::nullopt;
  }
  SmallVector<double> values;
  for (const APFloat &v : value.getValues<APFloat>())
    values.push_back(v.convertToDouble());
  return values;
}

bool hasInput(const ONNXNode &node, unsigned index) {
  Value input = node.getInput(index);
  if (!input)
    return false;
  // An empty tensor stands for an omitted input (Resize-11's scales when
  // sizes are given).
  auto type = dyn_cast<RankedTensorType>(input.getType());
  return !(type && type.hasStaticShape() && type.getNumElements() == 0);
}

/// Resize and Upsample of every opset: the spec, then the scales or sizes
/// of each axis, then one product per resized axis.
LogicalResult legalizeResize(const ONNXNode &node, RewriterBase &rewriter) {
  FailureOr<Value> input = getFloatInput(node, 0, "X");
  if (failed(input))
    return failure();
  auto type = cast<RankedTensorType>(input->getType());
  int64_t rank = type.getRank();
  bool upsample = node.getOpType() == "Upsample";
  bool legacy = upsample || node.getOpset() < 11;

  ResizeSpec spec;
  StringRef mode = node.getString("mode").value_or("nearest");
  if (mode == "nearest")
    spec.mode = Interpolation::Nearest;
  else if (mode == "linear" || mode == "bilinear")
    spec.mode = Interpolation::Linear;
  else if (mode == "cubic" && !legacy)
    spec.mode = Interpolation::Cubic;
  else {
    node.emitError() << "mode '" << mode << "' is not supported";
    return failure();
  }
  if (legacy) {
    spec.coordinates = "asymmetric";
    spec.nearest = "simple";
  } else {
    spec.coordinates =
        node.getString("coordinate_transformation_mode").value_or("half_pixel");
    spec.nearest = node.getString("nearest_mode").value_or("round_prefer_floor");
    spec.cubicA = node.getFloat("cubic_coeff_a", -0.75f);
    spec.excludeOutside = node.getInt("exclude_outside", 0) != 0;
    spec.antialias = node.getInt("antialias", 0) != 0;
  }
  if (spec.coordinates == "tf_crop_and_resize") {
    node.emitError() << "coordinate_transformation_mode 'tf_crop_and_resize' "
                        "is not supported (its region of interest and "
                        "extrapolation value are not a linear resize)";
    return failure();
  }
  if (!llvm::is_contained({"half_pixel", "half_pixel_symmetric",
                           "pytorch_half_pixel", "align_corners", "asymmetric",
                           "tf_half_pixel_for_nn"},
                          spec.coordinates)) {
    node.emitError() << "unknown coordinate_transformation_mode '"
                     << spec.coordinates << "'";
    return failure();
  }
  if (!llvm::is_contained({"round_prefer_floor", "round_prefer_ceil", "floor",
                           "ceil", "simple"},
                          spec.nearest)) {
    node.emitError() << "unknown nearest_mode '" << spec.nearest << "'";
    return failure();
  }

  // Which axes the scales or sizes cover (Resize-18 `axes`), in order.
  SmallVector<int64_t> axes;
  if (std::optional<SmallVector<int64_t>> given = node.getInts("axes")) {
    for (int64_t axis : *given) {
      FailureOr<int64_t> normalized = normalizeAxis(node, axis, rank);
      if (failed(normalized))
        return failure();
      axes.push_back(*normalized);
    }
  } else {
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  }

  // Upsample-7 has its scales as an attribute; later versions as input 1
  // (Upsample-9, Resize-10) or 2 (Resize-11+), or sizes as input 3.
  unsigned scalesIndex = upsample || node.getOpset() < 11 ? 1 : 2;
  std::optional<SmallVector<double>> scales;
  std::optional<SmallVector<int64_t>> sizes;
  if (upsample && node.getOpset() < 9) {
    if (auto values =
            node.getOp().getOnnxAttrs().getAs<DenseF32ArrayAttr>("scales"))
      scales = llvm::to_vector_of<double>(values.asArrayRef());
    if (!scales) {
      node.emitError() << "attribute 'scales' is missing";
      return failure();
    }
  } else if (!legacy && hasInput(node, 3)) {
    if (hasInput(node, scalesIndex)) {
      node.emitError() << "only one of scales and sizes may be given";
      return failure();
    }
    sizes = node.getConstantInts(3);
    if (!sizes) {
      node.emitError() << "input 3 (sizes) must be an integer constant: "
                          "traincc compiles static shapes";
      return failure();
    }
  } else if (hasInput(node, scalesIndex)) {
    scales = constantFloats(node, scalesIndex, "scales");
    if (!scales)
      return failure();
  } else {
    node.emitError() << "neither scales nor sizes is given";
    return failure();
  }
  size_t count = scales ? scales->size() : sizes->size();
  if (count != axes.size()) {
    node.emitError() << "expected " << axes.size() << " "
                     << (scales ? "scales" : "sizes") << " (one per axis), got "
                     << count;
    return failure();
  }

  SmallVector<AxisResize> resized;
  if (scales) {
    for (auto [axis, scale] : llvm::zip_equal(axes, *scales)) {
      int64_t in = type.getDimSize(axis);
      int64_t out = int64_t(std::floor(double(in) * scale));
      if (!(scale > 0) || out < 1 || out > kMaxFoldedElements) {
        node.emitError() << "scale " << scale << " of axis " << axis
                         << " (size " << in << ") gives no valid output size";
        return failure();
      }
      resized.push_back({axis, in, out, scale});
    }
  } else {
    StringRef policy =
        node.getString("keep_aspect_ratio_policy").value_or("stretch");
    // not_larger / not_smaller: one scale for every listed axis, the
    // smallest or largest of the requested ratios.
    std::optional<double> common;
    if (policy == "not_larger" || policy == "not_smaller") {
      for (auto [axis, size] : llvm::zip_equal(axes, *sizes)) {
        double ratio = double(size) / double(type.getDimSize(axis));
        common = !common ? ratio
                 : policy == "not_larger" ? std::min(*common, ratio)
                                          : std::max(*common, ratio);
      }
    } else if (policy != "stretch") {
      node.emitError() << "unknown keep_aspect_ratio_policy '" << policy
                       << "'";
      return failure();
    }
    for (auto [axis, size] : llvm::zip_equal(axes, *sizes)) {
      int64_t in = type.getDimSize(axis);
      int64_t out = common ? int64_t(std::nearbyint(*common * double(in)))
                           : size;
      if (out < 1 || out > kMaxFoldedElements) {
        node.emitError() << "size " << out << " of axis " << axis
                         << " is not a valid output size";
        return failure();
      }
      resized.push_back(
          {axis, in, out, common ? *common : double(out) / double(in)});
    }
  }

  // Axis 0 is the batch: a size there that differs from the input's is a
  // sizes tensor traced at the export's batch size, not a resize to train.
  for (const AxisResize &a : resized)
    if (a.axis == 0 && a.out != a.in) {
      node.emitError() << "it resizes the batch axis 0 from " << a.in << " to "
                       << a.out
                       << "; if the model was exported at another batch size "
                          "than the --batch-size it is compiled for, export "
                          "it with a dynamic batch axis or at that batch size";
      return failure();
    }

  Value result = *input;
  for (const AxisResize &a : resized) {
    FailureOr<Value> next = resizeAxis(node, rewriter, spec, result, a);
    if (failed(next))
      return failure();
    result = *next;
  }
  return finishNode(node, rewriter, result);
}

} // namespace

void onnx_import::addResizeHandlers(HandlerTable &table) {
  table["Resize"] = legalizeResize;
  table["Upsample"] = legalizeResize;
}
