//===- ConvertTrainToLinalgCollectives.cpp - replica collectives ----------===//
//
// Synchronised BatchNorm (traincc --sync-bn) needs per-channel vectors
// averaged over the data-parallel replicas in the middle of a step. Only
// the trainer knows the replicas, so the step calls the runtime
// (ModelABI.h): `traincc_replica_mean(float *, int64_t)` on a buffer of its
// own and `traincc_replica_count()`. On tensors that is a copy into a fresh
// buffer, the call on its address, and `bufferization.to_tensor restrict`
// of that buffer: nothing moves across the call (an external function may
// touch any memory), and the planner puts the buffer in the workspace
// like any temporary.
//
//===----------------------------------------------------------------------===//

#include "ConvertTrainToLinalg.h"

#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace traincc::codegen;
namespace train = traincc::train;

namespace {

constexpr llvm::StringLiteral kReplicaMean = "traincc_replica_mean";
constexpr llvm::StringLiteral kReplicaCount = "traincc_replica_count";

/// The runtime function `name` of `type`, declared once per module.
func::FuncOp runtimeFunction(OpBuilder &builder, Operation *user,
                             StringRef name, FunctionType type) {
  auto module = user->getParentOfType<ModuleOp>();
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(module.getBody());
  auto function = func::FuncOp::create(builder, user->getLoc(), name, type);
  function.setPrivate();
  return function;
}

/// The runtime's answer as a 0-d f32 tensor.
struct ReplicaCountLowering : OpConversionPattern<train::ReplicaCountOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(train::ReplicaCountOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    func::FuncOp count = runtimeFunction(
        rewriter, op, kReplicaCount,
        rewriter.getFunctionType({}, {rewriter.getF32Type()}));
    Value replicas = func::CallOp::create(rewriter, loc, count).getResult(0);
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(op, op.getType(),
                                                        replicas);
    return success();
  }
};

} // namespace

Value traincc::codegen::replicaMean(OpBuilder &builder, Operation *anchor,
                                    Value values) {
  Location loc = anchor->getLoc();
  auto type = cast<RankedTensorType>(values.getType());
  auto buffer = memref::AllocOp::create(
      builder, loc, MemRefType::get(type.getShape(), type.getElementType()));
  bufferization::MaterializeInDestinationOp::create(
      builder, loc, /*result=*/Type(), values, buffer, /*restrict=*/true,
      /*writable=*/true);
  // The runtime takes a plain pointer (bare-pointer calls need static
  // shapes, and the vectors' lengths differ).
  Value address = arith::IndexCastOp::create(
      builder, loc, builder.getI64Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(builder, loc, buffer));
  auto pointerType = LLVM::LLVMPointerType::get(builder.getContext());
  Value pointer = LLVM::IntToPtrOp::create(builder, loc, pointerType, address);
  func::FuncOp mean = runtimeFunction(
      builder, anchor, kReplicaMean,
      builder.getFunctionType({pointerType, builder.getI64Type()}, {}));
  Value count = arith::ConstantIntOp::create(builder, loc, builder.getI64Type(),
                                             type.getNumElements());
  func::CallOp::create(builder, loc, mean, ValueRange{pointer, count});
  return bufferization::ToTensorOp::create(builder, loc, type, buffer,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

void traincc::codegen::populateCollectivePatterns(
    RewritePatternSet &patterns) {
  patterns.add<ReplicaCountLowering>(patterns.getContext());
}
