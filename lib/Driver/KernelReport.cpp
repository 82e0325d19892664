//===- KernelReport.cpp - the kernels of each step and their cost ---------===//
//
// How the costs are counted is in KernelReport.h. Why GPU FLOPs come from
// the linalg ops: after the GPU kernel pipeline a kernel body is tiled
// loops over shared memory, tree reductions and bounds guards, whose
// trip counts depend on the thread; the linalg op it came from states its
// iteration space exactly. Locations are how a kernel names its origin:
// every pass in the GPU pipeline builds its loops and loads with the
// location of the op it lowers, and outlining keeps them.
//
//===----------------------------------------------------------------------===//

#include "KernelReport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"

#include <set>
#include <tuple>

using namespace mlir;
using namespace traincc;

namespace {

constexpr const char *kSteps[] = {"micro_step", "apply_step", "eval_step"};
constexpr llvm::StringLiteral kTagPrefix = "traincc.cost.";

StepCost &stepOf(StepCosts &costs, unsigned index) {
  StepCost *steps[] = {&costs.microStep, &costs.applyStep, &costs.evalStep};
  return *steps[index];
}

const StepCost &stepOf(const StepCosts &costs, unsigned index) {
  return stepOf(const_cast<StepCosts &>(costs), index);
}

/// The buffer a kernel accesses through `value`: its typed view of a
/// kernel argument (the argument itself, or a memref.view into the
/// workspace or the parameter block), as a key and a size.
struct Buffer {
  std::tuple<const void *, int64_t, uint64_t> key;
  uint64_t bytes;
};

Buffer bufferOf(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>()) {
    Value source = view.getViewSource();
    // A view of raw bytes is the buffer itself.
    if (cast<MemRefType>(source.getType()).getElementType() !=
        cast<MemRefType>(value.getType()).getElementType())
      break;
    value = source;
  }
  uint64_t bytes = memrefBytes(value.getType());
  if (auto view = value.getDefiningOp<memref::ViewOp>())
    if (std::optional<int64_t> shift =
            getConstantIntValue(view.getByteShift()))
      return {{view.getSource().getAsOpaquePointer(), *shift, bytes}, bytes};
  return {{value.getAsOpaquePointer(), -1, bytes}, bytes};
}

bool isGlobal(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type)
    return false;
  auto space = dyn_cast_if_present<gpu::AddressSpaceAttr>(
      type.getMemorySpace());
  return !space || space.getValue() == gpu::AddressSpace::Global;
}

/// Bytes a GPU kernel reads and writes in global memory.
uint64_t bytesOf(gpu::GPUFuncOp kernel) {
  std::set<std::tuple<const void *, int64_t, uint64_t>> read, written;
  uint64_t bytes = 0;
  kernel.walk([&](MemoryEffectOpInterface op) {
    SmallVector<MemoryEffects::EffectInstance> effects;
    op.getEffects(effects);
    for (const MemoryEffects::EffectInstance &effect : effects) {
      Value value = effect.getValue();
      if (!value || !isGlobal(value))
        continue;
      bool isRead = isa<MemoryEffects::Read>(effect.getEffect());
      bool isWrite = isa<MemoryEffects::Write>(effect.getEffect());
      if (!isRead && !isWrite)
        continue;
      Buffer buffer = bufferOf(value);
      if ((isRead ? read : written).insert(buffer.key).second)
        bytes += buffer.bytes;
    }
  });
  return bytes;
}

std::optional<unsigned> tagIndex(NameLoc loc) {
  StringRef name = loc.getName().getValue();
  unsigned index;
  if (!name.consume_front(kTagPrefix) || name.getAsInteger(10, index))
    return std::nullopt;
  return index;
}

/// The tags in the locations of the ops of `kernel`, in first-seen order.
SmallVector<unsigned> tagsIn(gpu::GPUFuncOp kernel) {
  SmallVector<unsigned> tags;
  llvm::DenseSet<unsigned> seen;
  kernel.walk([&](Operation *op) {
    op->getLoc()->walk([&](Location loc) {
      if (auto name = dyn_cast<NameLoc>(loc))
        if (std::optional<unsigned> index = tagIndex(name))
          if (seen.insert(*index).second)
            tags.push_back(*index);
      return WalkResult::advance();
    });
  });
  return tags;
}

std::string formatScaled(double value, ArrayRef<StringRef> units,
                         unsigned decimals) {
  unsigned unit = 0;
  while (value >= 1000 && unit + 1 < units.size()) {
    value /= 1000;
    ++unit;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format(unit ? (decimals == 1 ? "%.1f" : "%.2f") : "%.0f", value)
     << " " << units[unit];
  return text;
}

void printStep(StringRef step, const StepCost &cost, bool gpu,
               llvm::raw_ostream &os) {
  os << (gpu ? "gpu " : "cpu ") << step << ":\n"
     << llvm::format("  %4s  %-30s %-16s %14s %16s  %s\n", "#", "kernel",
                     gpu ? "grid x block" : "iterations", "bytes", "FLOPs",
                     gpu ? "runs" : "body");
  for (auto [index, kernel] : llvm::enumerate(cost.kernels))
    os << llvm::format("  %4u  %-30s %-16s %14llu %16llu  %s\n",
                       unsigned(index), kernel.name.c_str(),
                       kernel.shape.c_str(),
                       (unsigned long long)kernel.bytes,
                       (unsigned long long)kernel.flops, kernel.body.c_str());
  if (cost.unattributedFlops)
    os << "  (" << cost.unattributedFlops
       << " FLOPs of linalg ops no launch was traced to)\n";
}

void printTotals(StringRef what, size_t kernels, StringRef unit,
                 uint64_t bytes, uint64_t flops, llvm::raw_ostream &os) {
  os << what << ": " << kernels << " " << unit << ", " << formatBytes(bytes)
     << " moved, " << formatFlops(flops) << "\n";
}

} // namespace

uint64_t StepCost::bytes() const {
  uint64_t total = 0;
  for (const KernelCost &kernel : kernels)
    total += kernel.bytes;
  return total;
}

uint64_t StepCost::flops() const {
  uint64_t total = unattributedFlops;
  for (const KernelCost &kernel : kernels)
    total += kernel.flops;
  return total;
}

StepCosts traincc::measureLoopNests(ModuleOp bufferized) {
  StepCosts costs;
  for (auto [index, name] : llvm::enumerate(kSteps)) {
    auto func = bufferized.lookupSymbol<func::FuncOp>(name);
    if (!func)
      continue;
    StepCost &step = stepOf(costs, index);
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (!isLoopNestKernel(op))
        return WalkResult::advance();
      step.kernels.push_back(loopNestCost(op));
      return WalkResult::skip();
    });
  }
  return costs;
}

void GPUCostTracker::tag(ModuleOp bufferized) {
  MLIRContext *context = bufferized.getContext();
  for (auto [index, name] : llvm::enumerate(kSteps)) {
    auto func = bufferized.lookupSymbol<func::FuncOp>(name);
    if (!func)
      continue;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (!linalgOp && !isa<memref::CopyOp>(op))
        return WalkResult::advance();
      std::string tagName = (kTagPrefix + llvm::Twine(tagged_.size())).str();
      std::string opName = op->getName().getStringRef().str();
      tagged_.push_back(
          {opName, linalgOp ? loopNestCost(op).flops : 0, unsigned(index)});
      auto tag = StringAttr::get(context, tagName);
      op->walk([&](Operation *inner) {
        inner->setLoc(NameLoc::get(tag, inner->getLoc()));
      });
      return WalkResult::skip();
    });
  }
}

StepCosts GPUCostTracker::measure(ModuleOp outlined) {
  StepCosts costs;
  std::vector<bool> counted(tagged_.size(), false);
  for (auto [index, name] : llvm::enumerate(kSteps)) {
    auto func = outlined.lookupSymbol<func::FuncOp>(name);
    if (!func)
      continue;
    StepCost &step = stepOf(costs, index);
    func.walk([&](gpu::LaunchFuncOp launch) {
      KernelCost cost;
      cost.name = launch.getKernelName().str();
      llvm::raw_string_ostream shape(cost.shape);
      gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
      gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
      auto dims = [&](gpu::KernelDim3 dim) {
        SmallVector<int64_t> sizes;
        for (Value size : {dim.x, dim.y, dim.z})
          sizes.push_back(getConstantIntValue(size).value_or(0));
        while (sizes.size() > 1 && sizes.back() == 1)
          sizes.pop_back();
        llvm::interleave(sizes, shape, "*");
      };
      dims(grid);
      shape << "x";
      dims(block);
      auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      if (kernel) {
        cost.bytes = bytesOf(kernel);
        llvm::raw_string_ostream body(cost.body);
        for (unsigned tag : tagsIn(kernel)) {
          if (tag >= tagged_.size())
            continue;
          StringRef opName = tagged_[tag].name;
          if (cost.body.size() < 48)
            body << (cost.body.empty() ? "" : "+")
                 << opName.drop_front(opName.find('.') + 1);
          if (!counted[tag]) {
            counted[tag] = true;
            cost.flops += tagged_[tag].flops;
          }
        }
      }
      step.kernels.push_back(cost);
    });
  }
  for (auto [tag, entry] : llvm::enumerate(tagged_))
    if (!counted[tag])
      stepOf(costs, entry.step).unattributedFlops += entry.flops;
  AttrTypeReplacer untag;
  untag.addReplacement([](NameLoc loc) -> std::optional<Location> {
    if (tagIndex(loc))
      return loc.getChildLoc();
    return std::nullopt;
  });
  untag.recursivelyReplaceElementsIn(outlined, /*replaceAttrs=*/false,
                                     /*replaceLocs=*/true,
                                     /*replaceTypes=*/false);
  return costs;
}

std::string traincc::formatBytes(uint64_t bytes) {
  return formatScaled(bytes, {"B", "KB", "MB", "GB", "TB"}, 1);
}

std::string traincc::formatFlops(uint64_t flops) {
  return formatScaled(flops, {"FLOP", "KFLOP", "MFLOP", "GFLOP", "TFLOP"},
                      2);
}

void traincc::printKernelReport(const StepCosts *cpu, const StepCosts *gpu,
                                llvm::raw_ostream &os) {
  struct Target {
    const StepCosts *costs;
    bool gpu;
    StringRef unit;
  } targets[] = {{cpu, false, "CPU loop nests"}, {gpu, true, "GPU launches"}};
  for (const Target &target : targets) {
    if (!target.costs)
      continue;
    size_t kernels = 0;
    uint64_t bytes = 0, flops = 0;
    for (auto [index, step] : llvm::enumerate(kSteps)) {
      const StepCost &cost = stepOf(*target.costs, index);
      printStep(step, cost, target.gpu, os);
      printTotals(step, cost.kernels.size(), target.unit, cost.bytes(),
                  cost.flops(), os);
      kernels += cost.kernels.size();
      bytes += cost.bytes();
      flops += cost.flops();
    }
    printTotals("all steps", kernels, target.unit, bytes, flops, os);
  }
}
