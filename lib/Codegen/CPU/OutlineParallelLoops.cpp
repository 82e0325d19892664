//===- OutlineParallelLoops.cpp - linalg ops as functions over a range ----===//
//
// Multi-threading in two steps. Here, on memrefs, each large linalg op moves
// into a private function that computes the slice [begin, end) of one of
// its parallel loops, called once over the whole range; this keeps the IR
// correct and testable on its own. After lowering to LLVM,
// traincc-lower-parallel-calls replaces those calls by dispatches to the
// runtime's thread pool (LowerParallelCalls.cpp).
//
// The outlined functions take bare pointers (the module's calling
// convention), so every memref they take has an identity layout. A view of
// static offset and strides (a padded buffer's interior, which
// traincc-pad-in-producer has producers write) is passed as the buffer it
// views and rebuilt inside by memref.reinterpret_cast: left inline, such an
// op would run on one thread. Arguments whose buffers no other
// argument aliases are marked `llvm.noalias`, which lets LLVM keep
// accumulators in registers and vectorize without run-time overlap checks.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/CPU/Passes.h"
#include "traincc/Codegen/Common/BufferUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace traincc {
#define GEN_PASS_DEF_OUTLINEPARALLELLOOPSPASS
#include "traincc/Codegen/CPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;
using traincc::codegen::rootBuffer;
using traincc::codegen::staticByteRange;

namespace {


/// The loop to split across threads: the outermost parallel loop with more
/// than one iteration that indexes every output directly, so that slices of
/// it write disjoint elements.
std::optional<unsigned> pickParallelLoop(linalg::LinalgOp op,
                                         ArrayRef<int64_t> ranges) {
  auto iterators = op.getIteratorTypesArray();
  auto indexesOutputs = [&](unsigned dim) {
    return llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
      AffineMap map = op.getMatchingIndexingMap(&init);
      return llvm::any_of(map.getResults(), [&](AffineExpr result) {
        return result == getAffineDimExpr(dim, op.getContext());
      });
    });
  };
  for (unsigned dim = 0; dim < ranges.size(); ++dim)
    if (linalg::isParallelIterator(iterators[dim]) && ranges[dim] > 1 &&
        indexesOutputs(dim))
      return dim;
  return std::nullopt;
}

/// What an outlined function takes for `value`: the value itself when a
/// bare pointer describes it (not a memref, or one of static shape and
/// identity layout); for a view of static shape, offset and strides, the
/// identity-layout buffer it views through subviews, reshapes and casts,
/// which keep the buffer's aligned pointer and count the view's offset
/// from it; else null.
Value barePointerSource(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type)
    return value;
  if (!type.hasStaticShape())
    return nullptr;
  if (type.getLayout().isIdentity())
    return value;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return nullptr;
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<memref::SubViewOp, memref::CollapseShapeOp,
             memref::ExpandShapeOp, memref::CastOp>(def))
      return nullptr;
    value = def->getOperand(0);
    auto source = cast<MemRefType>(value.getType());
    if (source.getLayout().isIdentity())
      return source.hasStaticShape() ? value : nullptr;
  }
  return nullptr;
}

/// A memref.copy between views that are not both contiguous (the phases
/// of a strided convolution's data gradient going into their interleaved
/// output) becomes a call of the runtime's memrefCopy, which walks the
/// elements one at a time through their descriptors (1.5-2.5 GB/s); as a
/// linalg.copy it is a loop nest that LLVM vectorizes and this pass splits
/// across threads. Contiguous copies stay memcpy.
void replaceStridedCopy(memref::CopyOp copy) {
  auto sourceType = dyn_cast<MemRefType>(copy.getSource().getType());
  auto targetType = dyn_cast<MemRefType>(copy.getTarget().getType());
  if (!sourceType || !targetType || !sourceType.hasStaticShape() ||
      (memref::isStaticShapeAndContiguousRowMajor(sourceType) &&
       memref::isStaticShapeAndContiguousRowMajor(targetType)))
    return;
  OpBuilder builder(copy);
  linalg::CopyOp::create(builder, copy.getLoc(), copy.getSource(),
                         copy.getTarget());
  copy.erase();
}

struct OutlineParallelLoopsPass
    : public traincc::impl::OutlineParallelLoopsPassBase<
          OutlineParallelLoopsPass> {
  using OutlineParallelLoopsPassBase::OutlineParallelLoopsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      if (func.isExternal() || func->hasAttr(kParallelBodyAttrName))
        continue;
      unsigned counter = 0;
      for (Operation &op : llvm::make_early_inc_range(func.getBody().getOps()))
        if (auto copy = dyn_cast<memref::CopyOp>(op))
          replaceStridedCopy(copy);
      SmallVector<linalg::LinalgOp> ops;
      for (Operation &op : func.getBody().getOps())
        if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
          ops.push_back(linalgOp);
      for (linalg::LinalgOp op : ops)
        if (failed(outline(func, op, counter)))
          return signalPassFailure();
    }
  }

  LogicalResult outline(func::FuncOp parent, linalg::LinalgOp op,
                        unsigned &counter) {
    if (!op.hasPureBufferSemantics() || !isa<TilingInterface>(*op))
      return success();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return success();
    int64_t work = 1;
    for (int64_t range : ranges)
      work *= range;
    std::optional<unsigned> dim = pickParallelLoop(op, ranges);
    bool parallel = work >= minWork && dim;
    if (!parallel && !outlineSerial)
      return success();

    // Arguments: the op's operands, then the values its body uses from
    // above; constants are cloned instead.
    llvm::SetVector<Value> captured(op->getOperands().begin(),
                                    op->getOperands().end());
    llvm::SetVector<Value> usedAbove;
    getUsedValuesDefinedAbove(op->getRegions(), usedAbove);
    SmallVector<Operation *> constants;
    for (Value value : usedAbove) {
      Operation *def = value.getDefiningOp();
      if (def && matchPattern(value, m_Constant()))
        constants.push_back(def);
      else
        captured.insert(value);
    }
    // Views go in as the buffers they view.
    llvm::SetVector<Value> arguments;
    SmallVector<Value> sources;
    for (Value value : captured) {
      sources.push_back(barePointerSource(value));
      if (!sources.back())
        return success();
      arguments.insert(sources.back());
    }

    OpBuilder builder(op);
    Location loc = op.getLoc();
    MLIRContext *ctx = builder.getContext();
    SmallVector<Type> argTypes;
    for (Value value : arguments)
      argTypes.push_back(value.getType());
    Type indexType = builder.getIndexType();
    if (parallel)
      argTypes.append({indexType, indexType});

    // The body function, next to its parent.
    OpBuilder moduleBuilder(parent);
    moduleBuilder.setInsertionPointAfter(parent);
    std::string name = (parent.getSymName() + (parallel ? "_par" : "_seq") +
                        Twine(counter++))
                           .str();
    auto body = func::FuncOp::create(moduleBuilder, loc, name,
                                     builder.getFunctionType(argTypes, {}));
    body.setPrivate();
    body->setAttr(parallel ? kParallelBodyAttrName : kSerialBodyAttrName,
                  UnitAttr::get(ctx));
    // Views of one buffer at disjoint constant byte ranges (the planned
    // workspace's temporaries) do not alias each other.
    auto mayAlias = [](Value a, Value b) {
      if (rootBuffer(a) != rootBuffer(b))
        return false;
      auto rangeA = staticByteRange(a), rangeB = staticByteRange(b);
      return !rangeA || !rangeB || (rangeA->first < rangeB->second &&
                                    rangeB->first < rangeA->second);
    };
    for (auto [index, value] : llvm::enumerate(arguments))
      if (isa<MemRefType>(value.getType()) &&
          llvm::none_of(llvm::enumerate(arguments), [&](auto other) {
            return other.index() != index &&
                   isa<MemRefType>(other.value().getType()) &&
                   mayAlias(value, other.value());
          }))
        body.setArgAttr(index, LLVM::LLVMDialect::getNoAliasAttrName(),
                        UnitAttr::get(ctx));

    Block *entry = body.addEntryBlock();
    OpBuilder bodyBuilder = OpBuilder::atBlockBegin(entry);
    IRMapping mapping;
    for (Operation *constant : constants)
      bodyBuilder.clone(*constant, mapping);
    for (auto [value, arg] : llvm::zip(arguments, entry->getArguments()))
      mapping.map(value, arg);
    for (auto [value, source] : llvm::zip(captured, sources)) {
      if (source == value)
        continue;
      auto type = cast<MemRefType>(value.getType());
      auto [strides, offset] = type.getStridesAndOffset();
      mapping.map(value, memref::ReinterpretCastOp::create(
                             bodyBuilder, loc, type, mapping.lookup(source),
                             offset, type.getShape(), strides));
    }
    Operation *whole = bodyBuilder.clone(*op, mapping);
    SmallVector<Value> operands(arguments.begin(), arguments.end());
    if (!parallel) {
      func::ReturnOp::create(bodyBuilder, loc);
      func::CallOp::create(builder, loc, body, operands);
      op->erase();
      return success();
    }
    Value begin = entry->getArgument(arguments.size());
    Value end = entry->getArgument(arguments.size() + 1);
    SmallVector<OpFoldResult> offsets(ranges.size(), bodyBuilder.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes;
    for (int64_t range : ranges)
      sizes.push_back(bodyBuilder.getIndexAttr(range));
    offsets[*dim] = begin;
    sizes[*dim] = arith::SubIOp::create(bodyBuilder, loc, end, begin).getResult();
    FailureOr<TilingResult> slice =
        cast<TilingInterface>(whole).getTiledImplementation(bodyBuilder,
                                                           offsets, sizes);
    if (failed(slice))
      return op.emitError("could not split the op along loop ") << *dim;
    whole->erase();
    func::ReturnOp::create(bodyBuilder, loc);

    // The call over the whole range.
    operands.push_back(arith::ConstantIndexOp::create(builder, loc, 0));
    operands.push_back(
        arith::ConstantIndexOp::create(builder, loc, ranges[*dim]));
    func::CallOp::create(builder, loc, body, operands);
    op->erase();
    return success();
  }
};

} // namespace
