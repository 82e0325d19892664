//===- EmulateMmaSync.cpp - warp-collective mma.sync on the CPU -----------===//
//
// The tensor-core kernels multiply with nvvm.mma.sync, an operation of a
// whole warp: each lane holds pieces (fragments) of A, B and C, and gets
// its piece of D = A * B + C. The emulation runs a block's threads as
// fibers that meet at barriers, so a warp's lanes can exchange fragments
// through the block's shared memory: every lane writes its A and B
// fragments to its warp's scratch, all meet at a barrier, every lane
// computes its D fragment from the whole warp's A and B, and all meet
// again before the scratch is reused.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/GPUEmulation/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/ADT/SetVector.h"

namespace traincc {
#define GEN_PASS_DEF_EMULATEMMASYNCPASS
#include "traincc/Codegen/GPUEmulation/Passes.h.inc"
} // namespace traincc

using namespace mlir;
using namespace traincc;

namespace {

constexpr int64_t kWarpSize = 32;
/// mma.sync.m16n8k16: A is 16 x 16, B 16 x 8, C and D 16 x 8.
constexpr int64_t kM = 16, kN = 8, kK = 16;
/// Floats of scratch per warp and mma.sync: A row-major, then B (k, n)
/// row-major.
constexpr int64_t kScratchA = kM * kK, kScratchB = kK * kN;
constexpr int64_t kScratch = kScratchA + kScratchB;
/// The most mma.sync one exchange handles (scratch per warp: 12 KiB).
constexpr int64_t kMaxGroup = 8;

/// mma.sync ops of one block exchanged together, with the extractions of
/// their results that come before the group ends.
struct Group {
  SmallVector<NVVM::MmaOp> mmas;
  SmallVector<LLVM::ExtractValueOp> extracts;
  Operation *last = nullptr;
};

/// Splits the mma.sync of each block into groups: consecutive ones (other
/// ops may come between) that no op between them depends on, so their
/// exchange can happen after the last one. Extractions of a member's
/// results join the group.
void collectGroups(Operation *root, SmallVectorImpl<Group> &groups) {
  root->walk([&](Block *block) {
    Group current;
    llvm::SmallPtrSet<Value, 16> produced;
    auto flush = [&] {
      if (!current.mmas.empty())
        groups.push_back(std::move(current));
      current = Group();
      produced.clear();
    };
    for (Operation &op : *block) {
      bool usesGroup = false;
      op.walk([&](Operation *inner) {
        for (Value operand : inner->getOperands())
          usesGroup |= produced.contains(operand);
      });
      auto extract = dyn_cast<LLVM::ExtractValueOp>(op);
      if (usesGroup && extract &&
          isa_and_nonnull<NVVM::MmaOp>(
              extract.getContainer().getDefiningOp())) {
        current.extracts.push_back(extract);
        current.last = &op;
        produced.insert(extract.getResult());
        continue;
      }
      if (usesGroup)
        flush();
      if (auto mma = dyn_cast<NVVM::MmaOp>(op)) {
        if (current.mmas.size() == kMaxGroup)
          flush();
        current.mmas.push_back(mma);
        current.last = &op;
        produced.insert(mma.getResult());
      }
    }
    flush();
  });
}

/// The low-precision type of an m16n8k16 mma.sync this pass emulates (f16
/// or bf16 A and B, f32 C and D, row-major A, column-major B), or null.
Type operandType(NVVM::MmaOp mma) {
  NVVM::MMAShapeAttr shape = mma.getShape();
  if (shape.getM() != kM || shape.getN() != kN || shape.getK() != kK ||
      mma.getLayoutA() != NVVM::MMALayout::row ||
      mma.getLayoutB() != NVVM::MMALayout::col ||
      mma.getOperandA().size() != 4 || mma.getOperandB().size() != 2 ||
      mma.getOperandC().size() != 4)
    return nullptr;
  for (Value c : mma.getOperandC())
    if (!c.getType().isF32())
      return nullptr;
  auto result = dyn_cast<LLVM::LLVMStructType>(mma.getResult().getType());
  if (!result || result.getBody().size() != 4 ||
      !llvm::all_of(result.getBody(), [](Type t) { return t.isF32(); }))
    return nullptr;
  Builder b(mma.getContext());
  Type a = mma.getOperandA().front().getType();
  if (a == VectorType::get({2}, b.getF16Type()))
    return b.getF16Type();
  std::optional<NVVM::MMATypes> ptx = mma.getMultiplicandAPtxType();
  if (a.isInteger(32) && ptx && *ptx == NVVM::MMATypes::bf16)
    return b.getBF16Type();
  if (a == VectorType::get({2}, b.getBF16Type()))
    return b.getBF16Type();
  return nullptr;
}

class Emulator {
public:
  Emulator(gpu::GPUFuncOp kernel, Value scratch, int64_t threadsX,
           int64_t threadsY)
      : kernel(kernel), scratch(scratch), threadsX(threadsX),
        threadsY(threadsY) {}

  /// Replaces the group's mma.sync by the exchange, after its last member.
  void rewrite(Group &group) {
    Location loc = group.mmas.front().getLoc();
    OpBuilder b(group.last->getContext());
    b.setInsertionPointAfter(group.last);
    Value warp, group4, pair;
    laneIds(b, loc, warp, group4, pair);
    for (auto [q, mma] : llvm::enumerate(group.mmas)) {
      Type low = operandType(mma);
      Value slot = c(b, loc, q);
      // A: registers (g, 2t), (g + 8, 2t), (g, 2t + 8), (g + 8, 2t + 8),
      // each two neighbours along K.
      for (auto [r, reg] : llvm::enumerate(mma.getOperandA())) {
        auto [lo, hi] = unpack(b, loc, reg, low);
        Value row = add(b, loc, group4, 8 * (r % 2));
        Value col = add(b, loc, pair, 8 * (r / 2));
        Value at = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, row, c(b, loc, kK)), col);
        store(b, loc, lo, warp, slot, at);
        store(b, loc, hi, warp, slot, add(b, loc, at, 1));
      }
      // B: registers (2t, g), (2t + 8, g), each two neighbours along K.
      for (auto [r, reg] : llvm::enumerate(mma.getOperandB())) {
        auto [lo, hi] = unpack(b, loc, reg, low);
        Value k = add(b, loc, pair, 8 * r);
        Value at =
            add(b, loc,
                arith::AddIOp::create(
                    b, loc, arith::MulIOp::create(b, loc, k, c(b, loc, kN)),
                    group4),
                kScratchA);
        store(b, loc, lo, warp, slot, at);
        store(b, loc, hi, warp, slot, add(b, loc, at, kN));
      }
    }
    gpu::BarrierOp::create(b, loc);
    // D (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1): its C plus the
    // 16 products in increasing k, each added with f32 rounding (the
    // products of f16 or bf16 values are exact in f32).
    SmallVector<SmallVector<Value, 4>> results;
    for (auto [q, mma] : llvm::enumerate(group.mmas)) {
      Value slot = c(b, loc, q);
      SmallVector<Value> rows, cols;
      for (int64_t i = 0; i < 4; ++i) {
        rows.push_back(arith::MulIOp::create(
            b, loc, add(b, loc, group4, 8 * (i / 2)), c(b, loc, kK)));
        cols.push_back(add(b, loc, pair, i % 2));
      }
      auto terms = scf::ForOp::create(b, loc, c(b, loc, 0), c(b, loc, kK),
                                      c(b, loc, 1), mma.getOperandC());
      {
        OpBuilder in = OpBuilder::atBlockBegin(terms.getBody());
        Value k = terms.getInductionVar();
        Value rowOfB =
            add(in, loc, arith::MulIOp::create(in, loc, k, c(in, loc, kN)),
                kScratchA);
        SmallVector<Value> sums;
        for (int64_t i = 0; i < 4; ++i) {
          Value x = memref::LoadOp::create(
              in, loc, scratch,
              ValueRange{warp, slot,
                         arith::AddIOp::create(in, loc, rows[i], k)});
          Value y = memref::LoadOp::create(
              in, loc, scratch,
              ValueRange{warp, slot,
                         arith::AddIOp::create(in, loc, rowOfB, cols[i])});
          sums.push_back(
              arith::AddFOp::create(in, loc, terms.getRegionIterArgs()[i],
                                    arith::MulFOp::create(in, loc, x, y)));
        }
        scf::YieldOp::create(in, loc, sums);
      }
      results.emplace_back(terms.getResults());
    }
    // The scratch is rewritten by the next exchange.
    gpu::BarrierOp::create(b, loc);
    for (LLVM::ExtractValueOp extract : group.extracts) {
      auto mma = cast<NVVM::MmaOp>(extract.getContainer().getDefiningOp());
      unsigned q = llvm::find(group.mmas, mma) - group.mmas.begin();
      extract.replaceAllUsesWith(results[q][extract.getPosition().front()]);
      extract.erase();
    }
    for (auto [q, mma] : llvm::enumerate(group.mmas)) {
      if (!mma.getResult().use_empty()) {
        Value d = LLVM::PoisonOp::create(b, loc, mma.getResult().getType());
        for (int64_t i = 0; i < 4; ++i)
          d = LLVM::InsertValueOp::create(b, loc, d, results[q][i],
                                          ArrayRef<int64_t>{i});
        mma.getResult().replaceAllUsesWith(d);
      }
      mma.erase();
    }
  }

private:
  static Value c(OpBuilder &b, Location loc, int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  static Value add(OpBuilder &b, Location loc, Value base, int64_t delta) {
    return delta ? arith::AddIOp::create(b, loc, base, c(b, loc, delta))
                       .getResult()
                 : base;
  }

  /// This thread's warp, groupID and 2 * threadID_in_group (lane = 4 *
  /// groupID + threadID_in_group; threads numbered x fastest).
  void laneIds(OpBuilder &b, Location loc, Value &warp, Value &group4,
               Value &pair) {
    Value x = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    Value y = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::y);
    Value z = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::z);
    Value linear = arith::AddIOp::create(
        b, loc, x,
        arith::MulIOp::create(
            b, loc, c(b, loc, threadsX),
            arith::AddIOp::create(
                b, loc, y,
                arith::MulIOp::create(b, loc, c(b, loc, threadsY), z))));
    warp = arith::DivUIOp::create(b, loc, linear, c(b, loc, kWarpSize));
    Value lane = arith::RemUIOp::create(b, loc, linear, c(b, loc, kWarpSize));
    group4 = arith::DivUIOp::create(b, loc, lane, c(b, loc, 4));
    pair = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, lane, c(b, loc, 4)),
        c(b, loc, 2));
  }

  /// The two halves of a 32-bit fragment register (the first in the low
  /// bits), each converted exactly to f32.
  std::pair<Value, Value> unpack(OpBuilder &b, Location loc, Value reg,
                                 Type low) {
    auto i16 = b.getIntegerType(16), i32 = b.getI32Type();
    Value bits = reg.getType().isInteger(32)
                     ? reg
                     : LLVM::BitcastOp::create(b, loc, i32, reg).getResult();
    auto i32Constant = [&](int32_t value) -> Value {
      return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(value));
    };
    auto widen = [&](Value half) -> Value {
      if (low.isBF16())
        // A bf16 is the upper half of the f32 with the same value.
        return arith::BitcastOp::create(
            b, loc, b.getF32Type(),
            arith::ShLIOp::create(b, loc,
                                  arith::ExtUIOp::create(b, loc, i32, half),
                                  i32Constant(16)));
      Value value = arith::BitcastOp::create(b, loc, low, half);
      return arith::ExtFOp::create(b, loc, b.getF32Type(), value);
    };
    Value lo = arith::TruncIOp::create(b, loc, i16, bits);
    Value hi = arith::TruncIOp::create(
        b, loc, i16, arith::ShRUIOp::create(b, loc, bits, i32Constant(16)));
    return {widen(lo), widen(hi)};
  }

  void store(OpBuilder &b, Location loc, Value value, Value warp, Value slot,
             Value at) {
    memref::StoreOp::create(b, loc, value, scratch, ValueRange{warp, slot, at});
  }

  gpu::GPUFuncOp kernel;
  Value scratch;
  int64_t threadsX, threadsY;
};

struct EmulateMmaSyncPass
    : public traincc::impl::EmulateMmaSyncPassBase<EmulateMmaSyncPass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](gpu::GPUFuncOp kernel) {
      return failed(emulate(kernel)) ? WalkResult::interrupt()
                                     : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  LogicalResult emulate(gpu::GPUFuncOp kernel) {
    SmallVector<Group> groups;
    collectGroups(kernel, groups);
    if (groups.empty())
      return success();
    for (Group &group : groups)
      for (NVVM::MmaOp mma : group.mmas)
        if (!operandType(mma))
          return mma.emitError("only mma.sync m16n8k16 (row, col) on f16 or "
                               "bf16 into f32 can be emulated");
    std::optional<ArrayRef<int32_t>> known = kernel.getKnownBlockSize();
    if (!known || known->size() != 3)
      return kernel.emitError("emulating mma.sync needs a known block size");
    int64_t threads = int64_t((*known)[0]) * (*known)[1] * (*known)[2];
    if (threads % kWarpSize)
      return kernel.emitError("emulating mma.sync needs whole warps");
    size_t largest = 0;
    for (const Group &group : groups)
      largest = std::max(largest, group.mmas.size());
    MLIRContext *ctx = kernel.getContext();
    auto type = MemRefType::get(
        {threads / kWarpSize, int64_t(largest), kScratch},
        Float32Type::get(ctx), MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
    Value scratch = kernel.addWorkgroupAttribution(type, kernel.getLoc());
    Emulator emulator(kernel, scratch, (*known)[0], (*known)[1]);
    for (Group &group : groups)
      emulator.rewrite(group);
    return success();
  }
};

} // namespace
