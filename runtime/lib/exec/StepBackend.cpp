//===- StepBackend.cpp - Where the step functions run ---------------------===//

#include "traincc/runtime/exec/StepBackend.h"

#include "traincc/runtime/exec/GpuExecutor.h"
#include "traincc/runtime/support/KernelProfile.h"

#include <algorithm>

namespace traincc::rt {

namespace {

class CpuBackend final : public StepBackend {
public:
  CpuBackend(const ModelInfo &model, ModelMemory &memory)
      : StepBackend(model, memory) {}

  const char *name() const override { return "cpu"; }
  std::string description() const override { return "cpu"; }

  Error microStep(const void *input, const void *target, float gradScale,
                  uint64_t seed) override {
    float loss = 0;
    StepCallTimer timer(0);
    model_.abi->micro_step(memory_.state.data(), memory_.workspace.data(),
                           input, target, gradScale, seed, &loss);
    losses_.push_back(loss);
    return Error::success();
  }
  Error collectLosses(std::vector<float> &losses) override {
    losses.insert(losses.end(), losses_.begin(), losses_.end());
    losses_.clear();
    return Error::success();
  }
  Error applyStep(float lr, int64_t step) override {
    StepCallTimer timer(1);
    model_.abi->apply_step(memory_.state.data(), memory_.workspace.data(), lr,
                           step);
    return Error::success();
  }
  Error evalStep(const void *input, const void *target, float *output,
                 float *losses) override {
    StepCallTimer timer(2);
    model_.abi->eval_step(memory_.state.data(), memory_.workspace.data(),
                          input, target, output, losses);
    return Error::success();
  }
  Error syncStateToHost() override { return Error::success(); }
  Error syncStateToDevice() override { return Error::success(); }
  Error syncGradientsToHost() override { return Error::success(); }
  Error syncGradientsToDevice() override { return Error::success(); }

private:
  std::vector<float> losses_;
};

class CudaBackend final : public StepBackend {
public:
  CudaBackend(const ModelInfo &model, ModelMemory &memory,
              std::unique_ptr<GpuExecutor> executor)
      : StepBackend(model, memory), executor_(std::move(executor)),
        gradients_(gradientByteRanges(*model.abi)) {}

  const char *name() const override { return "cuda"; }
  std::string description() const override {
    return strCat("cuda: ", executor_->device().describe(),
                  ", kernels: ", executor_->moduleKind());
  }
  Error microStep(const void *input, const void *target, float gradScale,
                  uint64_t seed) override {
    return executor_->microStep(input, target, gradScale, seed)
        .withContext("CUDA micro_step");
  }
  Error collectLosses(std::vector<float> &losses) override {
    return executor_->collectLosses(losses).withContext("CUDA micro_step");
  }
  Error applyStep(float lr, int64_t step) override {
    return executor_->applyStep(lr, step).withContext("CUDA apply_step");
  }
  Error evalStep(const void *input, const void *target, float *output,
                 float *losses) override {
    return executor_->evalStep(input, target, output, losses)
        .withContext("CUDA eval_step");
  }
  Error syncStateToHost() override {
    return executor_->copyStateToHost(memory_.state.data())
        .withContext("copying the state arena from the device");
  }
  Error syncStateToDevice() override {
    return executor_->copyStateToDevice(memory_.state.data())
        .withContext("copying the state arena to the device");
  }
  Error syncGradientsToHost() override {
    if (gradients_.empty())
      return Error::success();
    return executor_->copyStateToHost(memory_.state.data(), gradients_)
        .withContext("copying the gradients from the device");
  }
  DeviceArena deviceArena() override {
    return {&executor_->driver(), executor_->stateArena(),
            executor_->computeStream()};
  }
  bool setReplicaMean(ReplicaMean mean, int replicas) override {
    executor_->setReplicaMean(std::move(mean), replicas);
    return true;
  }
  Error syncGradientsToDevice() override {
    if (gradients_.empty())
      return Error::success();
    return executor_->copyStateToDevice(memory_.state.data(), gradients_)
        .withContext("copying the gradients to the device");
  }

private:

  Error syncLossScalerToHost() override {
    const traincc_model &abi = *model_.abi;
    GpuExecutor::ArenaRanges scalars;
    for (int32_t index : {abi.loss_scale_state, abi.found_inf_state})
      scalars.push_back({abi.state[index].offset, abi.state[index].bytes});
    return executor_->copyStateToHost(memory_.state.data(), scalars)
        .withContext("copying the loss scale from the device");
  }

  std::unique_ptr<GpuExecutor> executor_;
  GpuExecutor::ArenaRanges gradients_;
};

constexpr const char *kNoCpuSteps =
    "this trainer has CUDA kernels only (traincc --target cuda) and no "
    "usable CUDA device";

/// --device cuda without a GPU program, --device cpu without CPU code.
Error checkDeviceChoice(const ModelInfo &model, DeviceChoice choice) {
  if (choice == DeviceChoice::Cuda && !model.abi->gpu)
    return makeError("--device cuda: this trainer was built without CUDA "
                     "kernels (compile with traincc --target cuda)");
  if (choice == DeviceChoice::Cpu && !model.hasCpuSteps())
    return makeError("--device cpu: this trainer was built without CPU "
                     "code (compile with traincc --target cpu,cuda)");
  return Error::success();
}

/// The driver and device 0, or why CUDA is unusable.
Expected<std::shared_ptr<const CudaDriver>> openCuda() {
  Expected<std::unique_ptr<CudaDriver>> driver = CudaDriver::load();
  if (!driver)
    return driver.takeError();
  return std::shared_ptr<const CudaDriver>(driver.take());
}

} // namespace

std::vector<std::pair<uint64_t, uint64_t>>
gradientByteRanges(const traincc_model &abi) {
  std::vector<const traincc_state_tensor *> byOffset;
  for (int32_t s = 0; s < abi.num_state; ++s)
    if (abi.state[s].bytes > 0)
      byOffset.push_back(&abi.state[s]);
  std::sort(byOffset.begin(), byOffset.end(),
            [](const traincc_state_tensor *a, const traincc_state_tensor *b) {
              return a->offset < b->offset;
            });
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  bool extend = false;
  for (const traincc_state_tensor *t : byOffset) {
    if (t->kind != TRAINCC_STATE_GRADIENT) {
      extend = false;
      continue;
    }
    if (extend)
      ranges.back().second = t->offset + t->bytes - ranges.back().first;
    else
      ranges.push_back({t->offset, t->bytes});
    extend = true;
  }
  return ranges;
}


Expected<LossScalerReading> StepBackend::readLossScaler() {
  const traincc_model &abi = *model_.abi;
  if (abi.loss_scaling == TRAINCC_LOSS_SCALING_NONE)
    return makeError("internal error: the model has no loss scaler");
  if (Error err = syncLossScalerToHost())
    return err;
  // Validated: both are float32 scalars (Model.cpp).
  LossScalerReading reading;
  reading.scale = *memory_.floatTensor(abi, abi.loss_scale_state);
  reading.foundInf = *memory_.floatTensor(abi, abi.found_inf_state) != 0;
  return reading;
}

std::unique_ptr<StepBackend> createCpuBackend(const ModelInfo &model,
                                              ModelMemory &memory) {
  return std::make_unique<CpuBackend>(model, memory);
}

Expected<std::unique_ptr<StepBackend>>
createStepBackend(const ModelInfo &model, ModelMemory &memory,
                  DeviceChoice choice, std::string *fallback) {
  if (fallback)
    fallback->clear();
  if (Error err = checkDeviceChoice(model, choice))
    return err;
  if (choice == DeviceChoice::Cpu || (choice == DeviceChoice::Auto &&
                                      !model.abi->gpu))
    return createCpuBackend(model, memory);
  // A missing driver or device means the CPU under `auto`, when there is
  // CPU code.
  Expected<std::shared_ptr<const CudaDriver>> driver = openCuda();
  Expected<CudaDeviceInfo> device =
      driver ? queryCudaDevice(**driver, 0) : Expected<CudaDeviceInfo>(
                                                  driver.error());
  if (!device) {
    if (choice == DeviceChoice::Cuda)
      return device.takeError().withContext("--device cuda");
    if (!model.hasCpuSteps())
      return device.takeError().withContext(kNoCpuSteps);
    if (fallback)
      *fallback = device.error().message();
    return createCpuBackend(model, memory);
  }
  Expected<std::unique_ptr<GpuExecutor>> executor =
      GpuExecutor::create(driver.take(), model, memory.state.data(), 0);
  if (!executor)
    return executor.takeError().withContext(
        strCat("CUDA device ", device->name));
  return std::unique_ptr<StepBackend>(
      std::make_unique<CudaBackend>(model, memory, executor.take()));
}

Expected<std::string> describeDevice(const ModelInfo &model,
                                     DeviceChoice choice) {
  if (Error err = checkDeviceChoice(model, choice))
    return err;
  const traincc_gpu_program *gpu = model.abi->gpu;
  if (!gpu)
    return std::string("device: cpu (this trainer was built without CUDA "
                       "kernels)\n");
  int64_t ptxBytes = 0, cubinBytes = 0;
  bool cubins = true;
  for (int32_t i = 0; i < gpu->num_modules; ++i) {
    const traincc_gpu_module &image = gpu->modules[i];
    ptxBytes += int64_t(std::char_traits<char>::length(image.ptx));
    cubinBytes += int64_t(image.cubin ? image.cubin_bytes : 0);
    cubins = cubins && image.cubin && image.cubin_bytes > 0;
  }
  std::string text = strCat(
      "gpu program: ", gpu->arch, ", ", gpu->num_modules,
      gpu->num_modules == 1 ? " module" : " modules", ", PTX ", ptxBytes,
      " bytes, cubin ", cubinBytes, " bytes, workspace ",
      int64_t(gpu->workspace_bytes), " bytes, launches: micro_step ",
      gpu->micro_step.num_launches, ", apply_step ",
      gpu->apply_step.num_launches, ", eval_step ",
      gpu->eval_step.num_launches);
  int32_t collectives = gpu->micro_step.num_collectives +
                        gpu->apply_step.num_collectives +
                        gpu->eval_step.num_collectives;
  if (collectives > 0)
    text += strCat(", replica collectives (--sync-bn): micro_step ",
                   gpu->micro_step.num_collectives);
  text += "\n";
  if (choice == DeviceChoice::Cpu)
    return text + "device: cpu (--device cpu)\n";
  Expected<std::shared_ptr<const CudaDriver>> driver = openCuda();
  Expected<CudaDeviceInfo> device =
      driver ? queryCudaDevice(**driver, 0) : Expected<CudaDeviceInfo>(
                                                  driver.error());
  if (!device) {
    if (choice == DeviceChoice::Cuda)
      return device.takeError().withContext("--device cuda");
    return text + strCat("device: ",
                         model.hasCpuSteps() ? "cpu" : "none",
                         " (CUDA unusable: ", device.error().message(),
                         ")\n");
  }
  int version = device->driverVersion;
  bool cubin = cubins &&
               cudaArchMatches(gpu->arch, device->ccMajor, device->ccMinor);
  return text + strCat("device: cuda:", device->ordinal, " ",
                       device->describe(), ", CUDA driver ", version / 1000,
                       ".", version % 1000 / 10, "; kernels: ",
                       cubin ? strCat("cubin ", gpu->arch)
                             : strCat("PTX (JIT for sm_", device->ccMajor,
                                      device->ccMinor, ")"),
                       "\n");
}

} // namespace traincc::rt
