//===- MemoryPlan.cpp - one arena for the temporaries of a step -----------===//

#include "traincc/Codegen/Common/MemoryPlan.h"
#include "traincc/Dialect/Train/IR/TrainOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <map>

using namespace traincc::codegen;

namespace {

int64_t alignedSize(const PlannedBuffer &buffer, int64_t alignment) {
  return llvm::alignTo(std::max<int64_t>(buffer.bytes, 1), alignment);
}

/// First fit in `order`: each buffer takes the lowest offset where it
/// overlaps no buffer placed before it that is alive at the same time.
/// Writes the offsets into `offsets` (indexed like `buffers`) and returns
/// the arena size.
int64_t firstFit(llvm::ArrayRef<PlannedBuffer> buffers,
                 llvm::ArrayRef<unsigned> order, int64_t alignment,
                 llvm::MutableArrayRef<int64_t> offsets) {
  int64_t size = 0;
  llvm::SmallVector<unsigned> placed;
  for (unsigned index : order) {
    const PlannedBuffer &buffer = buffers[index];
    int64_t bytes = alignedSize(buffer, alignment);
    llvm::SmallVector<std::pair<int64_t, int64_t>> busy;
    for (unsigned other : placed)
      if (buffers[other].overlapsInTime(buffer))
        busy.push_back(
            {offsets[other],
             offsets[other] + alignedSize(buffers[other], alignment)});
    llvm::sort(busy);
    int64_t candidate = 0;
    for (auto [begin, end] : busy) {
      if (candidate + bytes <= begin)
        break;
      candidate = std::max(candidate, end);
    }
    offsets[index] = candidate;
    size = std::max(size, candidate + bytes);
    placed.push_back(index);
  }
  return size;
}

} // namespace

int64_t
traincc::codegen::planArena(llvm::MutableArrayRef<PlannedBuffer> buffers,
                            int64_t alignment) {
  auto indices = llvm::seq<unsigned>(0, buffers.size());
  llvm::SmallVector<unsigned> byFirstUse(indices.begin(), indices.end());
  llvm::stable_sort(byFirstUse, [&](unsigned a, unsigned b) {
    return buffers[a].first < buffers[b].first;
  });
  // Largest first packs the big activations of a training step tightly;
  // by first use is better when sizes are alike. Neither wins always, and
  // planning is cheap, so both are tried.
  llvm::SmallVector<unsigned> largestFirst(byFirstUse);
  llvm::stable_sort(largestFirst, [&](unsigned a, unsigned b) {
    return alignedSize(buffers[a], alignment) >
           alignedSize(buffers[b], alignment);
  });
  llvm::SmallVector<int64_t> inOrder(buffers.size()), bySize(buffers.size());
  int64_t orderedSize = firstFit(buffers, byFirstUse, alignment, inOrder);
  int64_t sizedSize = firstFit(buffers, largestFirst, alignment, bySize);
  bool useSized = sizedSize < orderedSize;
  for (auto [index, buffer] : llvm::enumerate(buffers))
    buffer.offset = useSized ? bySize[index] : inOrder[index];
  return useSized ? sizedSize : orderedSize;
}

int64_t traincc::codegen::peakLiveBytes(llvm::ArrayRef<PlannedBuffer> buffers,
                                        int64_t alignment) {
  // Sweep: +size at first, -size after last.
  std::map<int64_t, int64_t> change;
  for (const PlannedBuffer &buffer : buffers) {
    change[buffer.first] += alignedSize(buffer, alignment);
    change[buffer.last + 1] -= alignedSize(buffer, alignment);
  }
  int64_t live = 0, peak = 0;
  for (auto [position, delta] : change) {
    live += delta;
    peak = std::max(peak, live);
  }
  return peak;
}

int64_t traincc::codegen::bytesLiveAcross(llvm::ArrayRef<PlannedBuffer> buffers,
                                          int64_t position, int64_t alignment) {
  int64_t bytes = 0;
  for (const PlannedBuffer &buffer : buffers)
    if (buffer.first < position && buffer.last >= position)
      bytes += alignedSize(buffer, alignment);
  return bytes;
}

mlir::Value traincc::codegen::lossOfGradientStep(mlir::ModuleOp module,
                                                 mlir::func::FuncOp step) {
  using namespace mlir;
  Value loss;
  bool writesGradients = false;
  for (BlockArgument arg : step.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (auto name = step.getArgAttrOfType<StringAttr>(i, "train.name"))
      if (name.getValue() == "loss")
        loss = arg;
    if (auto state = step.getArgAttrOfType<FlatSymbolRefAttr>(i, "train.state"))
      if (auto param = module.lookupSymbol<train::ParamOp>(state))
        writesGradients |= param.getKind() == train::ParamKind::Gradient;
  }
  return writesGradients ? loss : Value();
}
