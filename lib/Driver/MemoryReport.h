//===- MemoryReport.h - a trainer's memory at compile time ------*- C++ -*-===//
//
// Internal to the driver: every byte a trainer allocates for its model is
// fixed when traincc compiles it: the state arena (TrainerDescription),
// the workspace of the step functions' temporaries (planned by
// traincc-plan-step-memory on the CPU, traincc-pack-gpu-workspace on the
// GPU) and one micro-batch of data. This is the plan `--report` prints by
// category, `info` prints from the trainer (traincc_memory_plan), and
// `--memory-budget` compares with the budget.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_LIB_DRIVER_MEMORYREPORT_H
#define TRAINCC_LIB_DRIVER_MEMORYREPORT_H

#include "TrainerDescription.h"

#include "llvm/Support/raw_ostream.h"

namespace traincc {

/// One target's plan by category, in bytes. The state categories hold each
/// tensor at its aligned size, so they add up to the state arena.
struct MemoryPlanSummary {
  uint64_t parameters = 0;  // trainable, frozen, low-precision copies
  uint64_t gradients = 0;   // accumulators
  uint64_t optimizer = 0;   // momentum, Adam moments, loss scaler, backups
  uint64_t bnState = 0;     // running statistics, pooled statistics
  uint64_t saved = 0;       // forward values kept for the backward pass
  uint64_t temporaries = 0; // the rest of the workspace
  uint64_t data = 0;        // the micro-batch buffers the runtime allocates
  uint64_t snapshot = 0;    // host copy of the trainable parameters at each
                            // epoch start (monitors; CPU plan only)
  StepMemory steps;         // each step's workspace
  uint64_t peak() const {
    return parameters + gradients + optimizer + bnState + saved +
           temporaries + data + snapshot;
  }
};

/// The plan of the CPU steps, or of the GPU's (`gpu`, which needs
/// `d.gpu`).
MemoryPlanSummary summarizeMemory(const TrainerDescription &d, bool gpu);

/// Prints the plan of each target the trainer has (--report).
void printMemoryReport(const TrainerDescription &d, llvm::raw_ostream &os);

} // namespace traincc

#endif // TRAINCC_LIB_DRIVER_MEMORYREPORT_H
