//===- MemoryPlan.h - what a trainer allocates, by category ----*- C++ -*-===//
//
// Everything a trainer allocates for its model is fixed at compile time:
// the state arena, the workspace of the steps' temporaries
// (traincc_memory_plan) and one micro-batch of data. `info` prints it by
// category, with the same figures as `traincc --report`.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_EXEC_MEMORYPLAN_H
#define TRAINCC_RUNTIME_EXEC_MEMORYPLAN_H

#include "traincc/runtime/ModelABI.h"

#include <cstdint>
#include <string>

namespace traincc::rt {

/// One target's plan by category, in bytes.
struct MemoryPlanSummary {
  uint64_t parameters = 0, gradients = 0, optimizer = 0, bnState = 0;
  uint64_t saved = 0, temporaries = 0, data = 0;
  /// The host copy of the trainable parameters the loop takes at each
  /// epoch start (parameter-change monitors); CPU plan only.
  uint64_t snapshot = 0;
  uint64_t peak() const {
    return parameters + gradients + optimizer + bnState + saved +
           temporaries + data + snapshot;
  }
};

/// The CPU plan, or the GPU's (`gpu`: the model must have a GPU program).
MemoryPlanSummary summarizeMemoryPlan(const traincc_model &model, bool gpu);

/// "memory plan (cpu): parameters N, ..., peak N bytes" lines for `info`,
/// one per target the trainer has.
std::string describeMemoryPlans(const traincc_model &model);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_EXEC_MEMORYPLAN_H
