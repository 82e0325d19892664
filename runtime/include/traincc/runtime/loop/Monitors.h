//===- Monitors.h - What the log reports about the state arena --*- C++ -*-===//
//
// Read-only summaries of the state arena for the --log file, and gradient
// clipping:
// * gradientNorm: the global L2 norm of every TRAINCC_STATE_GRADIENT tensor
//   (the accumulated gradients of one optimizer step), summed in double.
// * clipGradients: torch.nn.utils.clip_grad_norm_(max_norm = C): when the
//   norm n exceeds C, every gradient is multiplied by C / (n + 1e-6).
// * parameterChange: the L2 norm of (now - snapshot) per trainable tensor.
// * runningStatSummaries: mean and largest |value| of each BatchNorm
//   running mean/variance tensor.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_LOOP_MONITORS_H
#define TRAINCC_RUNTIME_LOOP_MONITORS_H

#include "traincc/runtime/ModelABI.h"
#include "traincc/runtime/formats/JsonLog.h"
#include "traincc/runtime/support/Error.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace traincc::rt {

/// Global L2 norm of the gradient accumulators.
double gradientNorm(const traincc_model &model, const uint8_t *arena);

/// Errors unless every gradient tensor can be scaled in place (float32 or
/// float64), so that --grad-clip-norm fails before training starts.
Error checkGradientsClippable(const traincc_model &model);

/// Scales the gradients when `norm` (their gradientNorm) exceeds `maxNorm`;
/// returns the factor applied (1 when none).
double clipGradients(const traincc_model &model, uint8_t *arena, double norm,
                     double maxNorm);

/// The bytes of every trainable tensor, in state-table order.
std::vector<uint8_t> snapshotTrainable(const traincc_model &model,
                                       const uint8_t *arena);

/// L2 norm of each trainable tensor's change since `snapshot`, by name.
std::vector<std::pair<std::string, double>>
parameterChange(const traincc_model &model, const uint8_t *arena,
                const std::vector<uint8_t> &snapshot);

/// Mean and max |value| of every running mean/variance tensor.
std::vector<TensorSummary> runningStatSummaries(const traincc_model &model,
                                                const uint8_t *arena);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_LOOP_MONITORS_H
