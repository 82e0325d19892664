//===- MemoryReport.cpp - a trainer's memory, known at compile time -------===//

#include "MemoryReport.h"

#include "traincc/runtime/ModelABI.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

using namespace traincc;

namespace {

uint64_t tensorBytes(mlir::RankedTensorType type) {
  return type.getNumElements() *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

/// The state arena places tensors on 64-byte boundaries (ModelABI.h).
constexpr uint64_t kStateAlignment = 64;

} // namespace

MemoryPlanSummary traincc::summarizeMemory(const TrainerDescription &d,
                                           bool gpu) {
  MemoryPlanSummary plan;
  for (const StateTensor &tensor : d.state) {
    uint64_t bytes = llvm::alignTo(tensor.bytes, kStateAlignment);
    // Monitors.cpp snapshotTrainable, on the host.
    if (!gpu && tensor.kind == train::ParamKind::Trainable)
      plan.snapshot += tensor.bytes;
    switch (tensor.kind) {
    case train::ParamKind::Trainable:
    case train::ParamKind::Frozen:
    case train::ParamKind::WeightCopy:
      plan.parameters += bytes;
      break;
    case train::ParamKind::Gradient:
      plan.gradients += bytes;
      break;
    case train::ParamKind::RunningMean:
    case train::ParamKind::RunningVar:
    case train::ParamKind::BNAccumulator:
      plan.bnState += bytes;
      break;
    default: // optimizer state, loss scaler, step backups
      plan.optimizer += bytes;
      break;
    }
  }
  plan.steps = gpu ? d.gpu->memory : d.cpuMemory;
  uint64_t workspace = gpu ? d.gpu->workspaceBytes : plan.steps.workspace();
  plan.saved = std::min(plan.steps.savedActivations, workspace);
  plan.temporaries = workspace - plan.saved;
  uint64_t input = tensorBytes(d.input.type);
  uint64_t target = d.target ? tensorBytes(d.target->type) : 0;
  uint64_t output = tensorBytes(d.output.type);
  uint64_t losses = uint64_t(d.input.type.getDimSize(0)) * 4;
  // The CUDA executor double-buffers inputs and targets and keeps a
  // parameter block (GpuExecutor.cpp); the CPU steps read the batch where
  // the data pipeline assembled it.
  plan.data = gpu ? 2 * input + 2 * target + output + losses +
                        TRAINCC_GPU_PARAM_BYTES
                  : input + target + output + losses;
  return plan;
}

void traincc::printMemoryReport(const TrainerDescription &d,
                                llvm::raw_ostream &os) {
  auto print = [&](const char *target, const MemoryPlanSummary &plan,
                   bool gpu) {
    os << "memory plan (" << target << "), allocated once before training:\n";
    auto line = [&](const char *what, uint64_t bytes) {
      os << llvm::format("  %-20s %12s\n", what, formatBytes(bytes).c_str());
    };
    line("parameters", plan.parameters);
    line("gradients", plan.gradients);
    line("optimizer state", plan.optimizer);
    line("BN state", plan.bnState);
    line("saved activations", plan.saved);
    line("temporaries", plan.temporaries);
    line("micro-batch data", plan.data);
    if (!gpu)
      line("parameter snapshot", plan.snapshot);
    os << llvm::format("  %-20s %12s (%llu bytes)\n", "peak",
                       formatBytes(plan.peak()).c_str(),
                       (unsigned long long)plan.peak());
    os << "  workspace per step: micro_step "
       << formatBytes(plan.steps.microStep) << ", apply_step "
       << formatBytes(plan.steps.applyStep) << ", eval_step "
       << formatBytes(plan.steps.evalStep) << "\n";
  };
  if (!d.recomputed.empty()) {
    // "2 bn_apply, 2 relu", in the order they first appear.
    llvm::SmallVector<std::pair<std::string, unsigned>> counts;
    uint64_t bytes = 0;
    for (const auto &[op, size] : d.recomputed) {
      bytes += size;
      auto it = llvm::find_if(counts, [&](auto &c) { return c.first == op; });
      if (it == counts.end())
        counts.push_back({op, 1});
      else
        ++it->second;
    }
    os << "recomputed in the backward pass instead of saved (--recompute): ";
    for (auto [index, count] : llvm::enumerate(counts))
      os << (index ? ", " : "") << count.second << " " << count.first;
    os << " (" << formatBytes(bytes) << " of values)\n";
  }
  if (d.hasCPU)
    print("cpu", summarizeMemory(d, false), false);
  if (d.gpu)
    print("cuda", summarizeMemory(d, true), true);
}
