//===- GPUKernelBuilder.cpp - building blocks of tiled GPU kernels --------===//

#include "GPUKernelBuilder.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace traincc::gpu_kernels {

Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<int64_t> sizes) {
  SmallVector<Value> positions(sizes.size());
  Value rest = linear;
  for (int64_t i = sizes.size() - 1; i >= 0; --i) {
    if (i == 0) {
      positions[i] = rest;
      break;
    }
    Value size = indexConstant(b, loc, sizes[i]);
    positions[i] = arith::RemUIOp::create(b, loc, rest, size);
    rest = arith::DivUIOp::create(b, loc, rest, size);
  }
  return positions;
}

SmallVector<Value> operandIndices(OpBuilder &b, Location loc,
                                  linalg::LinalgOp op, OpOperand &operand,
                                  ValueRange ivs) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  SmallVector<Value> indices;
  for (unsigned i = 0; i < map.getNumResults(); ++i) {
    AffineExpr expr = map.getResult(i);
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      indices.push_back(ivs[dim.getPosition()]);
      continue;
    }
    if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
      indices.push_back(indexConstant(b, loc, constant.getValue()));
      continue;
    }
    indices.push_back(
        affine::AffineApplyOp::create(b, loc, map.getSubMap({i}), ivs));
  }
  return indices;
}

Value loadOperand(OpBuilder &b, Location loc, linalg::LinalgOp op,
                  OpOperand &operand, ValueRange ivs) {
  return memref::LoadOp::create(b, loc, operand.get(),
                                operandIndices(b, loc, op, operand, ivs));
}

SmallVector<Value> inlineBody(OpBuilder &b, linalg::LinalgOp op,
                              ValueRange args) {
  Block *body = op.getBlock();
  IRMapping mapping;
  mapping.map(body->getArguments(), args);
  for (Operation &inner : body->without_terminator())
    b.clone(inner, mapping);
  SmallVector<Value> results;
  for (Value yielded : body->getTerminator()->getOperands())
    results.push_back(mapping.lookupOrDefault(yielded));
  return results;
}

gpu::LaunchOp createLaunch(OpBuilder &b, Location loc,
                           std::array<int64_t, 3> grid, int64_t threads) {
  Value one = indexConstant(b, loc, 1);
  auto launch = gpu::LaunchOp::create(
      b, loc, indexConstant(b, loc, grid[0]), indexConstant(b, loc, grid[1]),
      indexConstant(b, loc, grid[2]), indexConstant(b, loc, threads), one,
      one);
  OpBuilder end = OpBuilder::atBlockEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(end, loc);
  return launch;
}

Value addSharedBuffer(gpu::LaunchOp launch, ArrayRef<int64_t> shape,
                      Type elementType) {
  MLIRContext *ctx = launch.getContext();
  auto space = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto type = MemRefType::get(shape, elementType, MemRefLayoutAttrInterface(),
                              space);
  return launch.addWorkgroupAttribution(type, launch.getLoc());
}

std::optional<Value> takeInitFill(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1)
    return std::nullopt;
  // Every element written: the output is indexed by each parallel loop
  // exactly once, and the loop ranges are the buffer's shape.
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!outMap.isProjectedPermutation() ||
      outMap.getNumResults() != op.getNumParallelLoops())
    return std::nullopt;
  Value buffer = op.getDpsInitOperand(0)->get();
  Operation *previous = op->getPrevNode();
  while (previous && isMemoryEffectFree(previous))
    previous = previous->getPrevNode();
  auto fill = dyn_cast_or_null<linalg::FillOp>(previous);
  if (!fill || fill.getOutputs().front() != buffer)
    return std::nullopt;
  Value value = fill.getInputs().front();
  if (!matchPattern(value, m_Constant()) ||
      value.getType() != getElementTypeOrSelf(buffer.getType()))
    return std::nullopt;
  fill->erase();
  return value;
}

bool hasStaticShapes(linalg::LinalgOp op) {
  if (llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
    return false;
  return llvm::all_of(op->getOperands(), [](Value operand) {
    auto type = dyn_cast<MemRefType>(operand.getType());
    return !type || type.hasStaticShape();
  });
}

} // namespace traincc::gpu_kernels
