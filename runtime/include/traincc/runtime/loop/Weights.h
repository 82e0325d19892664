//===- Weights.h - Trained weights from a file ------------------*- C++ -*-===//
//
// `eval --weights/--checkpoint`, `predict --weights/--checkpoint` and
// `train --init-from` run the model with weights from a file instead of the
// ones compiled into the trainer. One function loads them, for all three:
//
//  * What is loaded: every state tensor that is a parameter (trainable or
//    frozen) or a BatchNorm running statistic, and nothing else: gradient
//    accumulators, optimizer and loss-scaler state and the loop's counters
//    keep their initial values, so `train --init-from` starts a new run
//    (a fresh optimizer, step 1) from trained weights, where `--resume`
//    continues an old one. Then the tensors that copy a loaded one (mixed
//    precision's weight copies and step backups) are converted from it
//    again (refreshStateCopies), so the steps see the loaded weights.
//  * From an ONNX file (an export, or any model whose initializers have
//    the model's names, shapes and element types): each of those tensors
//    must be an initializer of the main graph with the same dims and
//    element type; the file may hold other initializers only if the model
//    as compiled holds them too (constants such as reshape shapes). A
//    missing, reshaped or retyped tensor, or an initializer this model does
//    not have, is refused with the first one named: the file is then most
//    likely of another model.
//  * From a checkpoint (Checkpoint.h): the checkpoint must be of this
//    model and state layout, checked as --resume checks it; only the
//    tensors above are taken from its arena.
//  * The file is read and checked whole before anything changes; then the
//    host arena is written and the backend's device copy updated
//    (StepBackend::syncStateToDevice), so it works on every backend. Call
//    it after ModelSession::open and before the first step.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_LOOP_WEIGHTS_H
#define TRAINCC_RUNTIME_LOOP_WEIGHTS_H

#include "traincc/runtime/exec/StepBackend.h"
#include "traincc/runtime/support/Error.h"
#include "traincc/runtime/support/Model.h"

#include <cstdint>
#include <string>

namespace traincc::rt {

/// What a weights file must be.
enum class WeightsFormat {
  Onnx,       // --weights
  Checkpoint, // --checkpoint
  Either,     // --init-from: a checkpoint by its magic bytes, else ONNX
};

/// A weights file as the command line names it.
struct WeightsFile {
  std::string flag; // prefixes every error: "--weights"
  std::string path;
  WeightsFormat format = WeightsFormat::Either;
};

/// True for the state kinds loaded from a weights file (and exported).
bool isWeightsTensor(const traincc_state_tensor &tensor);

/// Loads the weights in `file` into the backend's state as described
/// above; returns how many tensors it set.
Expected<int64_t> loadWeights(const ModelInfo &model, StepBackend &backend,
                              const WeightsFile &file);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_LOOP_WEIGHTS_H
