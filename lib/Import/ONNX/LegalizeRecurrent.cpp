//===- LegalizeRecurrent.cpp - LSTM and GRU, unrolled over time -----------===//
//
// ONNX LSTM and GRU become the Train ops their equations are made of,
// unrolled over the static sequence length: per direction, one Gemm projects
// every time step's input at once (X W^T + Wb), and each step adds its
// recurrent Gemm (H R^T + Rb), slices the gates and combines them with
// Sigmoid, Tanh, Mul and Add. Every piece already has a gradient rule with a
// float64 check and lowers for the CPU and the GPU alike, so autodiff, fusion
// and both targets need nothing new, and the trajectory is PyTorch's by
// construction. The cost is a graph linear in the sequence length (about 15
// forward ops per step and direction); 64 steps of a one-layer LSTM compile
// in well under a minute, where a dedicated op with a loop would compile in
// constant time but need its own backward recurrence and GPU lowering.
//
// What PyTorch exports is covered: direction forward, reverse and
// bidirectional, initial states (computed or constant), biases, layout 0,
// GRU's linear_before_reset 0 and 1, stacked layers (one node each).
// Anything else (peepholes, sequence_lens, clip, input_forget, other
// activations, layout 1) is an error naming the input or attribute.
//
//===----------------------------------------------------------------------===//

#include "LegalizeUtils.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

namespace {

enum class CellKind { LSTM, GRU };

/// Builds the unrolled ops of one node; every shape is known up front, so
/// the helpers create ops without shape checks that could fail.
class Unroller {
public:
  Unroller(RewriterBase &rewriter, Location loc)
      : rewriter(rewriter), loc(loc) {}

  /// Elements [begin, end) of `axis`.
  Value slice(Value value, int64_t axis, int64_t begin, int64_t end) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> starts(type.getRank(), 0), steps(type.getRank(), 1);
    SmallVector<int64_t> ends(type.getShape());
    starts[axis] = begin;
    ends[axis] = end;
    return train::SliceOp::create(rewriter, loc, value, starts, ends, steps);
  }
  Value reshape(Value value, ArrayRef<int64_t> shape) {
    auto type = cast<RankedTensorType>(value.getType());
    return train::ReshapeOp::create(
        rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
        value);
  }
  /// Direction `d` of a [dirs, a, b] weight as an [a, b] matrix.
  Value direction(Value value, int64_t d) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape(type.getShape().drop_front());
    return reshape(slice(value, 0, d, d + 1), shape);
  }
  /// a [M, K] times w^T (w [N, K]) plus bias [N] when given.
  Value linear(Value a, Value w, Value bias) {
    return train::GemmOp::create(rewriter, loc, a, w, bias,
                                 rewriter.getBoolAttr(false),
                                 rewriter.getBoolAttr(true),
                                 rewriter.getF32FloatAttr(1.0f),
                                 rewriter.getF32FloatAttr(1.0f));
  }
  Value add(Value a, Value b) {
    return train::AddOp::create(rewriter, loc, a, b);
  }
  Value sub(Value a, Value b) {
    return train::SubOp::create(rewriter, loc, a, b);
  }
  Value mul(Value a, Value b) {
    return train::MulOp::create(rewriter, loc, a, b);
  }
  Value sigmoid(Value a) { return train::SigmoidOp::create(rewriter, loc, a); }
  Value tanh(Value a) { return train::TanhOp::create(rewriter, loc, a); }
  Value concat(ValueRange values, int64_t axis) {
    if (values.size() == 1)
      return values.front();
    return train::ConcatOp::create(rewriter, loc, values, axis);
  }
  Value zeros(ArrayRef<int64_t> shape, Type element) {
    auto type = RankedTensorType::get(shape, element);
    return createConstant(rewriter, loc,
                          cast<DenseElementsAttr>(rewriter.getZeroAttr(type)));
  }

private:
  RewriterBase &rewriter;
  Location loc;
};

/// The attributes and inputs of a node, checked against what the unrolling
/// supports.
struct RecurrentNode {
  CellKind kind;
  int64_t gates;      // 4 (LSTM: i, o, f, c) or 3 (GRU: z, r, h)
  int64_t seq, batch, inputSize, hidden, directions;
  bool reverse = false; // direction "reverse" (unidirectional)
  bool linearBeforeReset = false;
  Value x, w, r, b, initialH, initialC;
};

/// Fails when attribute `name` is present (it changes the equations in a way
/// the unrolling does not implement).
LogicalResult rejectAttr(const ONNXNode &node, StringRef name,
                         StringRef why) {
  if (!node.hasAttr(name))
    return success();
  node.emitError() << "attribute '" << name << "' is not supported (" << why
                   << ")";
  return failure();
}

/// `activations` when given must be the defaults, per direction.
LogicalResult checkActivations(const ONNXNode &node,
                               ArrayRef<StringRef> defaults,
                               int64_t directions) {
  Attribute attr = node.getOp().getOnnxAttrs().get("activations");
  if (!attr)
    return success();
  auto list = dyn_cast<ArrayAttr>(attr);
  bool ok = list && int64_t(list.size()) ==
                        int64_t(defaults.size()) * directions;
  for (size_t i = 0; ok && i < list.size(); ++i) {
    auto name = dyn_cast<StringAttr>(list[i]);
    ok = name && name.getValue().equals_insensitive(
                     defaults[i % defaults.size()]);
  }
  if (ok)
    return success();
  InFlightDiagnostic diag = node.emitError()
                            << "attribute 'activations' must be the default (";
  llvm::interleaveComma(defaults, diag);
  diag << " per direction); other activations are not supported";
  return failure();
}

/// Input `index` as a float tensor of `shape`, or null when omitted.
FailureOr<Value> getShapedInput(const ONNXNode &node, unsigned index,
                                StringRef what, ArrayRef<int64_t> shape,
                                Type element) {
  if (!node.getInput(index))
    return Value();
  FailureOr<Value> value = getFloatInput(node, index, what);
  if (failed(value))
    return failure();
  auto type = cast<RankedTensorType>(value->getType());
  if (type.getShape() != shape || type.getElementType() != element) {
    InFlightDiagnostic diag = node.emitError()
                              << "input " << index << " (" << what << ") is "
                              << type << ", expected shape [";
    llvm::interleaveComma(shape, diag);
    diag << "] of " << element;
    return failure();
  }
  return *value;
}

FailureOr<RecurrentNode> readNode(const ONNXNode &node, CellKind kind) {
  RecurrentNode n;
  n.kind = kind;
  n.gates = kind == CellKind::LSTM ? 4 : 3;
  if (failed(rejectAttr(node, "clip", "cell clipping")) ||
      failed(rejectAttr(node, "activation_alpha", "activation parameters")) ||
      failed(rejectAttr(node, "activation_beta", "activation parameters")))
    return failure();
  if (node.getInt("layout", 0) != 0) {
    node.emitError() << "attribute 'layout' = " << node.getInt("layout", 0)
                     << " is not supported (only layout 0: [seq, batch, "
                        "...], what PyTorch exports)";
    return failure();
  }
  if (kind == CellKind::LSTM && node.getInt("input_forget", 0) != 0) {
    node.emitError() << "attribute 'input_forget' = 1 (coupled input and "
                        "forget gates) is not supported";
    return failure();
  }
  if (kind == CellKind::GRU) {
    int64_t lbr = node.getInt("linear_before_reset", 0);
    if (lbr != 0 && lbr != 1) {
      node.emitError() << "attribute 'linear_before_reset' must be 0 or 1, "
                          "got "
                       << lbr;
      return failure();
    }
    n.linearBeforeReset = lbr == 1;
  }
  StringRef direction = node.getString("direction").value_or("forward");
  if (direction == "bidirectional") {
    n.directions = 2;
  } else if (direction == "forward" || direction == "reverse") {
    n.directions = 1;
    n.reverse = direction == "reverse";
  } else {
    node.emitError() << "attribute 'direction' must be forward, reverse or "
                        "bidirectional, got '"
                     << direction << "'";
    return failure();
  }
  SmallVector<StringRef> defaults = {"Sigmoid", "Tanh"};
  if (kind == CellKind::LSTM)
    defaults.push_back("Tanh");
  if (failed(checkActivations(node, defaults, n.directions)))
    return failure();

  FailureOr<Value> x = getFloatInput(node, 0, "X");
  if (failed(x))
    return failure();
  auto xType = cast<RankedTensorType>(x->getType());
  if (xType.getRank() != 3 || xType.getNumElements() == 0) {
    node.emitError() << "input 0 (X) must be a non-empty [seq, batch, "
                        "input] tensor, got "
                     << xType;
    return failure();
  }
  n.x = *x;
  n.seq = xType.getDimSize(0);
  n.batch = xType.getDimSize(1);
  n.inputSize = xType.getDimSize(2);
  std::optional<int64_t> hidden = node.getInt("hidden_size");
  if (!hidden || *hidden < 1) {
    node.emitError() << "attribute 'hidden_size' must be given and positive";
    return failure();
  }
  n.hidden = *hidden;
  Type element = xType.getElementType();
  int64_t gh = n.gates * n.hidden;
  FailureOr<Value> w, r, b, h0, c0;
  if (failed(w = getShapedInput(node, 1, "W",
                                {n.directions, gh, n.inputSize}, element)) ||
      failed(r = getShapedInput(node, 2, "R", {n.directions, gh, n.hidden},
                                element)) ||
      failed(b = getShapedInput(node, 3, "B", {n.directions, 2 * gh},
                                element)) ||
      failed(h0 = getShapedInput(node, 5, "initial_h",
                                 {n.directions, n.batch, n.hidden}, element)))
    return failure();
  if (!*w || !*r) {
    node.emitError() << "inputs 1 (W) and 2 (R) are required";
    return failure();
  }
  if (node.getInput(4)) {
    // Equal lengths are the same as none; ragged batches are not supported.
    std::optional<SmallVector<int64_t>> lens = node.getConstantInts(4);
    if (!lens || llvm::any_of(*lens, [&](int64_t l) { return l != n.seq; })) {
      node.emitError() << "input 4 (sequence_lens) is not supported unless "
                          "every length is the sequence length "
                       << n.seq;
      return failure();
    }
  }
  if (kind == CellKind::LSTM) {
    if (failed(c0 = getShapedInput(node, 6, "initial_c",
                                   {n.directions, n.batch, n.hidden},
                                   element)))
      return failure();
    n.initialC = *c0;
    if (node.getInput(7)) {
      node.emitError() << "input 7 (P, peepholes) is not supported";
      return failure();
    }
  }
  n.w = *w;
  n.r = *r;
  n.b = *b;
  n.initialH = *h0;
  return n;
}

/// The hidden states of one direction, in time order, and the last cell
/// state (LSTM).
struct DirectionResult {
  SmallVector<Value> hidden; // [batch, H] per time step, in time order
  Value lastHidden, lastCell;
};

DirectionResult unrollDirection(Unroller &u, const RecurrentNode &n,
                                int64_t d, bool reverse) {
  int64_t H = n.hidden, gh = n.gates * H;
  Type element = cast<RankedTensorType>(n.x.getType()).getElementType();
  Value w = u.direction(n.w, d), r = u.direction(n.r, d);
  Value wb, rb;
  if (n.b) {
    Value bias = u.reshape(u.slice(n.b, 0, d, d + 1), {2 * gh});
    wb = u.slice(bias, 0, 0, gh);
    rb = u.slice(bias, 0, gh, 2 * gh);
  }
  // Every step's input projection in one Gemm: [seq * batch, gates * H].
  Value projected =
      u.linear(u.reshape(n.x, {n.seq * n.batch, n.inputSize}), w, wb);
  Value h = n.initialH ? u.direction(n.initialH, d)
                       : u.zeros({n.batch, H}, element);
  Value c;
  if (n.kind == CellKind::LSTM)
    c = n.initialC ? u.direction(n.initialC, d)
                   : u.zeros({n.batch, H}, element);
  // GRU with linear_before_reset = 0 applies R_h to (r * H): its recurrent
  // Gemm is split into the z/r rows and the h rows.
  Value rZR, rH, rbZR, rbH;
  if (n.kind == CellKind::GRU && !n.linearBeforeReset) {
    rZR = u.slice(r, 0, 0, 2 * H);
    rH = u.slice(r, 0, 2 * H, 3 * H);
    if (rb) {
      rbZR = u.slice(rb, 0, 0, 2 * H);
      rbH = u.slice(rb, 0, 2 * H, 3 * H);
    }
  }

  DirectionResult result;
  result.hidden.resize(n.seq);
  for (int64_t step = 0; step < n.seq; ++step) {
    int64_t t = reverse ? n.seq - 1 - step : step;
    Value xt = u.slice(projected, 0, t * n.batch, (t + 1) * n.batch);
    if (n.kind == CellKind::LSTM) {
      // Gates i, o, f (sigmoid) and c (tanh).
      Value gates = u.add(xt, u.linear(h, r, rb));
      Value iof = u.sigmoid(u.slice(gates, 1, 0, 3 * H));
      Value candidate = u.tanh(u.slice(gates, 1, 3 * H, gh));
      Value i = u.slice(iof, 1, 0, H), o = u.slice(iof, 1, H, 2 * H),
            f = u.slice(iof, 1, 2 * H, 3 * H);
      c = u.add(u.mul(f, c), u.mul(i, candidate));
      h = u.mul(o, u.tanh(c));
    } else {
      Value candidate, zr;
      if (n.linearBeforeReset) {
        Value recurrent = u.linear(h, r, rb);
        zr = u.sigmoid(u.add(u.slice(xt, 1, 0, 2 * H),
                             u.slice(recurrent, 1, 0, 2 * H)));
        Value reset = u.slice(zr, 1, H, 2 * H);
        Value recurrentH = u.slice(recurrent, 1, 2 * H, gh);
        candidate = u.tanh(
            u.add(u.slice(xt, 1, 2 * H, gh), u.mul(reset, recurrentH)));
      } else {
        zr = u.sigmoid(
            u.add(u.slice(xt, 1, 0, 2 * H), u.linear(h, rZR, rbZR)));
        Value reset = u.slice(zr, 1, H, 2 * H);
        candidate = u.tanh(u.add(u.slice(xt, 1, 2 * H, gh),
                                 u.linear(u.mul(reset, h), rH, rbH)));
      }
      // H = (1 - z) * candidate + z * H = candidate + z * (H - candidate).
      Value z = u.slice(zr, 1, 0, H);
      h = u.add(candidate, u.mul(z, u.sub(h, candidate)));
    }
    result.hidden[t] = h;
  }
  result.lastHidden = h;
  result.lastCell = c;
  return result;
}

/// Replaces output `index` by `value` after checking the declared type.
LogicalResult replaceOutput(const ONNXNode &node, RewriterBase &rewriter,
                            unsigned index, Value value) {
  Value output = node.getOp().getOutputs()[index];
  auto declared = dyn_cast<RankedTensorType>(output.getType());
  if (declared && declared.hasStaticShape() && declared != value.getType()) {
    node.emitError() << "output " << index << " type " << value.getType()
                     << " differs from the type " << declared
                     << " that ONNX shape inference declared";
    return failure();
  }
  rewriter.replaceAllUsesWith(output, value);
  return success();
}

LogicalResult legalizeRecurrent(const ONNXNode &node, RewriterBase &rewriter,
                                CellKind kind) {
  FailureOr<RecurrentNode> n = readNode(node, kind);
  if (failed(n))
    return failure();
  auto outputs = node.getOp().getOutputs();
  unsigned numOutputs = kind == CellKind::LSTM ? 3 : 2;
  if (outputs.size() > numOutputs) {
    node.emitError() << "has " << outputs.size() << " outputs, expected at "
                     << "most " << numOutputs;
    return failure();
  }
  Unroller u(rewriter, node.getLoc());
  SmallVector<DirectionResult> results;
  for (int64_t d = 0; d < n->directions; ++d)
    results.push_back(unrollDirection(u, *n, d, n->reverse || d == 1));

  int64_t H = n->hidden;
  // Y [seq, dirs, batch, H].
  if (outputs.size() > 0 && !outputs[0].use_empty()) {
    SmallVector<Value> perDirection;
    for (DirectionResult &result : results)
      perDirection.push_back(u.reshape(u.concat(result.hidden, 0),
                                       {n->seq, 1, n->batch, H}));
    if (failed(replaceOutput(node, rewriter, 0, u.concat(perDirection, 1))))
      return failure();
  }
  // Y_h and Y_c [dirs, batch, H].
  auto lastStates = [&](Value DirectionResult::*state) {
    SmallVector<Value> parts;
    for (DirectionResult &result : results)
      parts.push_back(u.reshape(result.*state, {1, n->batch, H}));
    return u.concat(parts, 0);
  };
  if (outputs.size() > 1 && !outputs[1].use_empty() &&
      failed(replaceOutput(node, rewriter, 1,
                           lastStates(&DirectionResult::lastHidden))))
    return failure();
  if (outputs.size() > 2 && !outputs[2].use_empty() &&
      failed(replaceOutput(node, rewriter, 2,
                           lastStates(&DirectionResult::lastCell))))
    return failure();

  llvm::SetVector<Operation *> producers;
  for (Value input : node.getOp().getInputs())
    if (Operation *producer = input.getDefiningOp())
      producers.insert(producer);
  rewriter.eraseOp(node.getOp());
  for (Operation *producer : producers)
    if (isa<train::ConstantOp, train::ONNXNoneOp>(producer) &&
        producer->use_empty())
      rewriter.eraseOp(producer);
  return success();
}

LogicalResult legalizeLSTM(const ONNXNode &node, RewriterBase &rewriter) {
  return legalizeRecurrent(node, rewriter, CellKind::LSTM);
}

LogicalResult legalizeGRU(const ONNXNode &node, RewriterBase &rewriter) {
  return legalizeRecurrent(node, rewriter, CellKind::GRU);
}

} // namespace

void onnx_import::addRecurrentHandlers(HandlerTable &table) {
  table["LSTM"] = legalizeLSTM;
  table["GRU"] = legalizeGRU;
}
