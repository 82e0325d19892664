//===- MemoryPlan.cpp - the memory a trainer allocates, by category -------===//
//
// Mirrors traincc's MemoryReport.cpp (lib/Driver): the same categories from
// the descriptor, so that `info` and `--report` agree byte for byte.
//
//===----------------------------------------------------------------------===//

#include "traincc/runtime/exec/MemoryPlan.h"

#include "traincc/runtime/support/Model.h"
#include "traincc/runtime/support/Error.h"

#include <algorithm>

namespace traincc::rt {

namespace {

/// State tensors start on 64-byte boundaries (ModelABI.h).
uint64_t aligned(uint64_t bytes) { return (bytes + 63) / 64 * 64; }

uint64_t ioBytes(const traincc_io_tensor &t) {
  uint64_t elements = 1;
  for (int32_t i = 0; i < t.rank; ++i)
    elements *= uint64_t(t.shape[i]);
  return elements * uint64_t(abiDtypeSize(t.dtype));
}

} // namespace

MemoryPlanSummary summarizeMemoryPlan(const traincc_model &model, bool gpu) {
  MemoryPlanSummary plan;
  for (int32_t i = 0; i < model.num_state; ++i) {
    const traincc_state_tensor &t = model.state[i];
    uint64_t bytes = aligned(t.bytes);
    if (!gpu && t.kind == TRAINCC_STATE_TRAINABLE)
      plan.snapshot += t.bytes;
    switch (t.kind) {
    case TRAINCC_STATE_TRAINABLE:
    case TRAINCC_STATE_FROZEN:
    case TRAINCC_STATE_WEIGHT_COPY:
      plan.parameters += bytes;
      break;
    case TRAINCC_STATE_GRADIENT:
      plan.gradients += bytes;
      break;
    case TRAINCC_STATE_RUNNING_MEAN:
    case TRAINCC_STATE_RUNNING_VAR:
    case TRAINCC_STATE_BN_ACCUMULATOR:
      plan.bnState += bytes;
      break;
    default:
      plan.optimizer += bytes;
      break;
    }
  }
  const traincc_memory_plan &steps =
      gpu ? model.gpu->memory : model.cpu_memory;
  uint64_t workspace = gpu ? model.gpu->workspace_bytes : model.workspace_bytes;
  plan.saved = std::min<uint64_t>(steps.saved_activations, workspace);
  plan.temporaries = workspace - plan.saved;
  uint64_t input = ioBytes(model.input);
  uint64_t target =
      model.loss == TRAINCC_LOSS_OUTPUT ? 0 : ioBytes(model.target);
  uint64_t output = ioBytes(model.output);
  uint64_t losses = uint64_t(model.micro_batch) * 4;
  // As GpuExecutor.cpp allocates: inputs and targets double-buffered, and
  // the parameter block.
  plan.data = gpu ? 2 * input + 2 * target + output + losses +
                        TRAINCC_GPU_PARAM_BYTES
                  : input + target + output + losses;
  return plan;
}

std::string describeMemoryPlans(const traincc_model &model) {
  std::string text;
  auto describe = [&](const char *target, bool gpu) {
    MemoryPlanSummary p = summarizeMemoryPlan(model, gpu);
    text += strCat("memory plan (", target, "): parameters ",
                   int64_t(p.parameters), ", gradients ", int64_t(p.gradients),
                   ", optimizer state ", int64_t(p.optimizer), ", BN state ",
                   int64_t(p.bnState), ", saved activations ",
                   int64_t(p.saved), ", temporaries ",
                   int64_t(p.temporaries), ", micro-batch data ",
                   int64_t(p.data), ", parameter snapshot ",
                   int64_t(p.snapshot), ", peak ", int64_t(p.peak()),
                   " bytes\n");
  };
  if (model.micro_step)
    describe("cpu", false);
  if (model.gpu)
    describe("cuda", true);
  return text;
}

} // namespace traincc::rt
