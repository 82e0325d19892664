//===- LegalizeEinsum.cpp - ONNX Einsum as a batched matmul ---------------===//
//
// What exporters emit for torch.einsum in attention ("bhid,bhjd->bhij",
// "bhij,bhjd->bhid") and projections ("bnd,de->bne") is one batched
// matrix product: the labels of both operands that the output keeps are
// the batch, those of both that it drops are contracted, and the others
// belong to one side. Each operand is transposed to [batch, own, contracted]
// (or [batch, contracted, own]) and reshaped to three axes, one
// train.matmul multiplies them, and a reshape and a transpose give the
// output's order: ops that have gradient rules. A single operand may only
// be permuted. Ellipses, repeated labels (diagonals) and labels summed
// over one operand alone are refused.
//
//===----------------------------------------------------------------------===//

#include "LegalizeUtils.h"

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

namespace {

/// `value` with its axes permuted (nothing for the identity).
Value permute(RewriterBase &rewriter, Location loc, Value value,
              ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return value;
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape;
  for (int64_t axis : perm)
    shape.push_back(type.getDimSize(axis));
  return train::TransposeOp::create(
      rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
      value, perm);
}

Value reshape(RewriterBase &rewriter, Location loc, Value value,
              ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  return train::ReshapeOp::create(
      rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
      value);
}

LogicalResult legalizeEinsum(const ONNXNode &node, RewriterBase &rewriter) {
  std::optional<StringRef> given = node.getString("equation");
  if (!given) {
    node.emitError() << "attribute 'equation' is missing";
    return failure();
  }
  std::string equation;
  for (char c : *given)
    if (c != ' ')
      equation.push_back(c);
  size_t arrow = equation.find("->");
  if (arrow == std::string::npos || equation.find('.') != std::string::npos) {
    node.emitError() << "equation '" << *given
                     << "' needs an explicit output (->) and no ellipsis";
    return failure();
  }
  SmallVector<StringRef> terms;
  StringRef(equation).take_front(arrow).split(terms, ',');
  StringRef out = StringRef(equation).drop_front(arrow + 2);
  unsigned count = terms.size();
  if (count != node.getNumInputs() || count < 1 || count > 2) {
    node.emitError() << "equation '" << *given << "' has " << count
                     << " operands; one or two are supported, as inputs";
    return failure();
  }
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < count; ++i) {
    FailureOr<Value> input = getFloatInput(node, i, "Inputs");
    if (failed(input))
      return failure();
    auto type = cast<RankedTensorType>(input->getType());
    if (type.getRank() != static_cast<int64_t>(terms[i].size())) {
      node.emitError() << "term '" << terms[i] << "' has " << terms[i].size()
                       << " labels for an operand of rank "
                       << type.getRank();
      return failure();
    }
    inputs.push_back(*input);
  }
  // Label sizes, and the labels' checks.
  llvm::SmallDenseMap<char, int64_t> sizes;
  for (unsigned i = 0; i < count; ++i) {
    auto type = cast<RankedTensorType>(inputs[i].getType());
    for (auto [axis, label] : llvm::enumerate(terms[i])) {
      if (terms[i].count(label) > 1) {
        node.emitError() << "repeated label '" << label << "' in term '"
                         << terms[i] << "' (a diagonal) is not supported";
        return failure();
      }
      auto [it, inserted] = sizes.try_emplace(label, type.getDimSize(axis));
      if (!inserted && it->second != type.getDimSize(axis)) {
        node.emitError() << "label '" << label << "' has sizes "
                         << it->second << " and " << type.getDimSize(axis);
        return failure();
      }
    }
  }
  for (char label : out)
    if (!sizes.contains(label) || out.count(label) > 1) {
      node.emitError() << "output label '" << label
                       << "' is repeated or in no operand";
      return failure();
    }
  auto onlyIn = [&](char label, StringRef term) {
    return term.contains(label) && !out.contains(label) &&
           (count == 1 || !terms[0].contains(label) ||
            !terms[1].contains(label));
  };
  for (StringRef term : terms)
    for (char label : term)
      if (onlyIn(label, term)) {
        node.emitError() << "label '" << label << "' is summed over one "
                         << "operand alone, which is not supported";
        return failure();
      }
  Location loc = node.getLoc();
  auto indexIn = [](StringRef term, char label) {
    return static_cast<int64_t>(term.find(label));
  };
  if (count == 1) {
    SmallVector<int64_t> perm;
    for (char label : out)
      perm.push_back(indexIn(terms[0], label));
    return finishNode(node, rewriter, permute(rewriter, loc, inputs[0], perm));
  }

  // Two operands: batch, contracted and each side's own labels.
  StringRef a = terms[0], b = terms[1];
  std::string batch, contracted, ownA, ownB;
  for (char label : a)
    (b.contains(label) ? (out.contains(label) ? batch : contracted) : ownA)
        .push_back(label);
  for (char label : b)
    if (!a.contains(label))
      ownB.push_back(label);
  auto product = [&](StringRef labels) {
    int64_t size = 1;
    for (char label : labels)
      size *= sizes[label];
    return size;
  };
  auto arrange = [&](Value value, StringRef term, StringRef first,
                     StringRef second, StringRef third) {
    SmallVector<int64_t> perm;
    for (StringRef part : {first, second, third})
      for (char label : part)
        perm.push_back(indexIn(term, label));
    return reshape(rewriter, loc, permute(rewriter, loc, value, perm),
                   {product(first), product(second), product(third)});
  };
  Value lhs = arrange(inputs[0], a, batch, ownA, contracted);
  Value rhs = arrange(inputs[1], b, batch, contracted, ownB);
  FailureOr<Value> result =
      createInferred<train::MatMulOp>(node, rewriter, lhs, rhs);
  if (failed(result))
    return failure();
  std::string natural = batch + ownA + ownB;
  SmallVector<int64_t> shape;
  for (char label : natural)
    shape.push_back(sizes[label]);
  Value unflat = reshape(rewriter, loc, *result, shape);
  SmallVector<int64_t> perm;
  for (char label : out)
    perm.push_back(indexIn(natural, label));
  return finishNode(node, rewriter, permute(rewriter, loc, unflat, perm));
}

} // namespace

void onnx_import::addEinsumHandlers(HandlerTable &table) {
  table["Einsum"] = legalizeEinsum;
}
