//===- KernelCost.cpp - what one CPU loop nest moves and computes ---------===//

#include "traincc/Codegen/Common/KernelCost.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace traincc;

namespace {

constexpr llvm::StringLiteral kKernelClassAttr = "traincc.kernel_class";

/// The attribute spelling of each class, in enum order.
constexpr llvm::StringLiteral kClassNames[] = {
    "conv_forward", "conv_data_gradient", "conv_filter_gradient", "matmul",
    "pooling",      "reduction",          "elementwise",          "copy_fill"};
static_assert(std::size(kClassNames) == TRAINCC_KERNEL_CLASS_COUNT);

/// Floating-point operations of one op of a kernel body.
unsigned flopsOf(Operation *op) {
  if (isa<math::FmaOp>(op))
    return 2;
  if (isa<arith::CmpFOp>(op))
    return 1;
  if (op->getNumResults() != 1 || !isa<FloatType>(op->getResult(0).getType()))
    return 0;
  if (isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
          arith::RemFOp, arith::NegFOp, arith::MaximumFOp, arith::MinimumFOp,
          arith::MaxNumFOp, arith::MinNumFOp>(op))
    return 1;
  return isa<math::MathDialect>(op->getDialect()) ? 1 : 0;
}

/// The cost of a linalg op as a loop nest: its operands' bytes, its body's
/// FLOPs times its iterations, and a description of both.
KernelCost linalgCost(linalg::LinalgOp op) {
  KernelCost cost;
  cost.name = op->getName().getStringRef().str();
  uint64_t iterations = 1;
  bool known = true;
  llvm::raw_string_ostream shape(cost.shape);
  for (auto [index, range] : llvm::enumerate(op.getStaticLoopRanges())) {
    shape << (index ? "x" : "") << range;
    if (ShapedType::isDynamic(range))
      known = false;
    else
      iterations *= range;
  }
  if (op.getNumLoops() == 0)
    shape << "1";
  uint64_t bodyFlops = 0;
  llvm::raw_string_ostream body(cost.body);
  op->walk([&](Operation *inner) {
    if (inner == op.getOperation())
      return;
    unsigned flops = flopsOf(inner);
    if (!flops)
      return;
    bodyFlops += flops;
    StringRef name = inner->getName().getStringRef();
    body << (cost.body.empty() ? "" : " ")
         << name.drop_front(name.find('.') + 1);
  });
  if (cost.body.empty())
    cost.body = "-";
  else if (cost.body.size() > 48)
    cost.body = cost.body.substr(0, 45) + "...";
  cost.flops = known ? bodyFlops * iterations : 0;
  llvm::DenseSet<Value> read, written;
  for (OpOperand &operand : op->getOpOperands()) {
    Value value = operand.get();
    if (!isa<MemRefType>(value.getType()))
      continue;
    bool isInit = op.isDpsInit(&operand);
    if ((!isInit || op.payloadUsesValueFromOperand(&operand)) &&
        read.insert(value).second)
      cost.bytes += memrefBytes(value.getType());
    if (isInit && written.insert(value).second)
      cost.bytes += memrefBytes(value.getType());
  }
  return cost;
}

} // namespace

uint64_t traincc::memrefBytes(Type type) {
  auto shaped = dyn_cast<MemRefType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  Type element = shaped.getElementType();
  uint64_t width = element.isIntOrFloat() ? element.getIntOrFloatBitWidth()
                                          : 64; // index
  return shaped.getNumElements() * ((width + 7) / 8);
}

bool traincc::isLoopNestKernel(Operation *op) {
  return isa<linalg::LinalgOp, memref::CopyOp>(op);
}

KernelCost traincc::loopNestCost(Operation *kernel) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(kernel))
    return linalgCost(linalgOp);
  auto copy = cast<memref::CopyOp>(kernel);
  KernelCost cost;
  cost.name = "memref.copy";
  cost.shape = "-";
  cost.body = "copy";
  cost.bytes = memrefBytes(copy.getSource().getType()) +
               memrefBytes(copy.getTarget().getType());
  return cost;
}

void traincc::setKernelClass(Operation *op, traincc_kernel_class kind) {
  op->setAttr(kKernelClassAttr,
              StringAttr::get(op->getContext(), kClassNames[kind]));
}

traincc_kernel_class traincc::kernelClassOf(Operation *kernel) {
  if (auto named = kernel->getAttrOfType<StringAttr>(kKernelClassAttr))
    for (auto [index, name] : llvm::enumerate(kClassNames))
      if (named.getValue() == name)
        return traincc_kernel_class(index);
  auto linalgOp = dyn_cast<linalg::LinalgOp>(kernel);
  if (!linalgOp || isa<linalg::FillOp, linalg::CopyOp>(kernel))
    return TRAINCC_KERNEL_COPY_FILL;
  StringRef name = kernel->getName().getStringRef();
  if (name.starts_with("linalg.pooling"))
    return TRAINCC_KERNEL_POOLING;
  if (name.starts_with("linalg.conv") ||
      name.starts_with("linalg.depthwise_conv"))
    return TRAINCC_KERNEL_CONV_FORWARD;
  if (!isa<linalg::GenericOp, linalg::MapOp, linalg::ReduceOp>(kernel) &&
      linalg::isaContractionOpInterface(linalgOp))
    return TRAINCC_KERNEL_MATMUL;
  if (linalgOp.getNumReductionLoops() > 0)
    return TRAINCC_KERNEL_REDUCTION;
  // A loop nest without arithmetic only moves data (a transpose, a pad).
  return linalgCost(linalgOp).flops ? TRAINCC_KERNEL_ELEMENTWISE
                                    : TRAINCC_KERNEL_COPY_FILL;
}
