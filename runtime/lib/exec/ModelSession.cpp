//===- ModelSession.cpp - A model opened on the device it runs on ---------===//

#include "traincc/runtime/exec/ModelSession.h"

namespace traincc::rt {

Expected<ModelSession> ModelSession::open(const ModelInfo &model,
                                          DeviceChoice device,
                                          std::FILE *announce) {
  Expected<ModelMemory> allocated = ModelMemory::create(*model.abi);
  if (!allocated)
    return allocated.takeError();
  auto memory = std::make_unique<ModelMemory>(allocated.take());
  std::string fallback;
  Expected<std::unique_ptr<StepBackend>> backend =
      createStepBackend(model, *memory, device, &fallback);
  if (!backend)
    return backend.takeError();
  if (announce && model.abi->gpu) {
    std::string where = (*backend)->description();
    if (!fallback.empty())
      where = strCat("cpu (CUDA unusable: ", fallback, ")");
    else if (device == DeviceChoice::Cpu)
      where = "cpu (--device cpu)";
    std::fprintf(announce, "device: %s\n", where.c_str());
  }
  return ModelSession(std::move(memory), backend.take());
}

} // namespace traincc::rt
