//===- ModelSession.h - A model opened on the device it runs on -*- C++ -*-===//
//
// train, eval and predict all start the same way: allocate the model's
// memory (the state arena, a copy of the initial state, and the workspace),
// then create the backend --device asks for on it (StepBackend.h). One
// helper does both, so that the three commands pick the device alike and
// report it alike.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_EXEC_MODELSESSION_H
#define TRAINCC_RUNTIME_EXEC_MODELSESSION_H

#include "traincc/runtime/exec/StepBackend.h"
#include "traincc/runtime/support/Model.h"

#include <cstdio>
#include <memory>

namespace traincc::rt {

/// The model's memory and the backend that runs its steps on it.
class ModelSession {
public:
  /// Allocates the memory and creates the backend `device` asks for
  /// (createStepBackend). When the trainer has a GPU program, `announce`
  /// (when given) gets a line saying where the steps run, and why when
  /// CUDA was passed over.
  static Expected<ModelSession> open(const ModelInfo &model,
                                     DeviceChoice device,
                                     std::FILE *announce = nullptr);

  /// The host arena (the backend's mirror of it: StepBackend.h).
  ModelMemory &memory() { return *memory_; }
  StepBackend &backend() { return *backend_; }

private:
  ModelSession(std::unique_ptr<ModelMemory> memory,
               std::unique_ptr<StepBackend> backend)
      : memory_(std::move(memory)), backend_(std::move(backend)) {}

  // The backend keeps a reference to the memory: the memory lives on the
  // heap so that moving the session leaves it in place, and is declared
  // first so that it outlives the backend.
  std::unique_ptr<ModelMemory> memory_;
  std::unique_ptr<StepBackend> backend_;
};

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_EXEC_MODELSESSION_H
