//===- LowerParallelCalls.cpp - outlined bodies onto the thread pool ------===//
//
// The second half of multi-threading (see OutlineParallelLoops.cpp). A call
// `@f_parN(args..., 0, count)` becomes
//
//   context = {args...}                       (on the caller's stack)
//   traincc_parallel_for(count, &context, @f_parN_thunk)
//
// where the thunk, `void(ptr context, i64 begin, i64 end)` as ModelABI.h
// declares the body type, loads the arguments back and calls the body on
// [begin, end). The runtime returns once every chunk is done, so the
// context may live on the stack.
//
// Functions outlined from ops too small to split (traincc.serial_body)
// stay direct calls; they are marked noinline here.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Matchers.h"

namespace traincc {
#define GEN_PASS_DEF_LOWERPARALLELCALLSPASS
#include "traincc/Codegen/CPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

constexpr llvm::StringLiteral kParallelFor = "traincc_parallel_for";

/// `void @<body>_thunk(ptr context, i64 begin, i64 end)`.
LLVM::LLVMFuncOp buildThunk(OpBuilder &moduleBuilder, LLVM::LLVMFuncOp body,
                            LLVM::LLVMStructType contextType) {
  MLIRContext *ctx = moduleBuilder.getContext();
  Location loc = body.getLoc();
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  auto i64Type = IntegerType::get(ctx, 64);
  auto thunkType = LLVM::LLVMFunctionType::get(
      LLVM::LLVMVoidType::get(ctx), {ptrType, i64Type, i64Type});
  auto thunk = LLVM::LLVMFuncOp::create(
      moduleBuilder, loc, (body.getSymName() + "_thunk").str(), thunkType,
      LLVM::Linkage::Internal);
  Block *entry = thunk.addEntryBlock(moduleBuilder);
  OpBuilder builder = OpBuilder::atBlockBegin(entry);
  SmallVector<Value> args;
  for (auto [index, type] : llvm::enumerate(contextType.getBody())) {
    Value field = LLVM::GEPOp::create(
        builder, loc, ptrType, contextType, entry->getArgument(0),
        ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(index)});
    args.push_back(LLVM::LoadOp::create(builder, loc, type, field));
  }
  args.push_back(entry->getArgument(1));
  args.push_back(entry->getArgument(2));
  LLVM::CallOp::create(builder, loc, body, args);
  LLVM::ReturnOp::create(builder, loc, ValueRange{});
  return thunk;
}

struct LowerParallelCallsPass
    : public traincc::impl::LowerParallelCallsPassBase<LowerParallelCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Outlined serial kernels stay calls: inlined back, they would make
    // the step functions as long for LLVM as before outlining.
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (func->hasAttr(kSerialBodyAttrName))
        func.setNoInline(true);
    SmallVector<LLVM::CallOp> calls;
    module.walk([&](LLVM::CallOp call) {
      auto callee = call.getCallee();
      if (!callee)
        return;
      auto body = module.lookupSymbol<LLVM::LLVMFuncOp>(*callee);
      if (body && body->hasAttr(kParallelBodyAttrName))
        calls.push_back(call);
    });
    if (calls.empty())
      return;

    MLIRContext *ctx = &getContext();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    auto i64Type = IntegerType::get(ctx, 64);
    OpBuilder moduleBuilder = OpBuilder::atBlockEnd(module.getBody());
    auto parallelFor = module.lookupSymbol<LLVM::LLVMFuncOp>(kParallelFor);
    if (!parallelFor)
      parallelFor = LLVM::LLVMFuncOp::create(
          moduleBuilder, module.getLoc(), kParallelFor,
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                      {i64Type, ptrType, ptrType}));

    DenseMap<Operation *, LLVM::LLVMFuncOp> thunks;
    for (LLVM::CallOp call : calls) {
      auto body = module.lookupSymbol<LLVM::LLVMFuncOp>(*call.getCallee());
      ValueRange operands = call.getArgOperands();
      unsigned numCaptured = operands.size() - 2;
      APInt begin;
      if (operands.size() < 2 ||
          !matchPattern(operands[numCaptured], m_ConstantInt(&begin)) ||
          !begin.isZero()) {
        call.emitError("a parallel body must be called from index 0");
        return signalPassFailure();
      }
      SmallVector<Type> fieldTypes;
      for (Value operand : operands.take_front(numCaptured))
        fieldTypes.push_back(operand.getType());
      auto contextType = LLVM::LLVMStructType::getLiteral(ctx, fieldTypes);
      LLVM::LLVMFuncOp &thunk = thunks[body];
      if (!thunk) {
        thunk = buildThunk(moduleBuilder, body, contextType);
        // Only its thunk calls the body now: LLVM inlines it there and
        // drops it, instead of compiling the same loops twice.
        body.setLinkage(LLVM::Linkage::Internal);
      }

      // The context lives in the caller's entry block, so a call inside a
      // loop does not grow the stack.
      auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
      OpBuilder entryBuilder =
          OpBuilder::atBlockBegin(&caller.getBody().front());
      Location loc = call.getLoc();
      Value one = LLVM::ConstantOp::create(entryBuilder, loc, i64Type,
                                           entryBuilder.getI64IntegerAttr(1));
      Value context = LLVM::AllocaOp::create(entryBuilder, loc, ptrType,
                                             contextType, one);
      OpBuilder builder(call);
      for (auto [index, operand] :
           llvm::enumerate(operands.take_front(numCaptured))) {
        Value field = LLVM::GEPOp::create(
            builder, loc, ptrType, contextType, context,
            ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(index)});
        LLVM::StoreOp::create(builder, loc, operand, field);
      }
      Value thunkAddress = LLVM::AddressOfOp::create(builder, loc, thunk);
      LLVM::CallOp::create(builder, loc, parallelFor,
                           ValueRange{operands[numCaptured + 1], context,
                                      thunkAddress});
      call.erase();
    }
  }
};

} // namespace
