//===- GpuExecutorTest.cpp - GPU program validation and execution ---------===//
//
// The CUDA backend on the fake driver (test/runtime/fake-cuda), built next
// to this binary: launch plan validation, argument marshalling (state
// offsets, the parameter block, float immediates), graph replay with new
// scalars, and the driver's errors. End-to-end runs (train/eval/predict
// with --device cuda) and injected failures are in test/runtime/cuda*.test.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "../runtime/TestModelMath.h"
#include "traincc/runtime/exec/CudaDriver.h"
#include "traincc/runtime/exec/GpuExecutor.h"
#include "traincc/runtime/exec/StepBackend.h"
#include "traincc/runtime/support/Model.h"

#include <cstdlib>
#include <cstring>

using namespace traincc::rt;
using namespace traincc::rt::test;
using ::testing::HasSubstr;

namespace {

/// A small SGD-only model: parameter p[4], its gradient and momentum, and
/// a GPU apply_step of one fake kernel (tm_sgd). The micro and eval plans
/// are empty.
struct SgdModel {
  static constexpr int64_t kN = 4;
  int64_t ioShape[2] = {2, 3};
  int64_t paramShape[1] = {kN};
  traincc_state_tensor state[3];
  std::vector<uint8_t> initial = std::vector<uint8_t>(192, 0);
  traincc_gpu_arg args[7];
  traincc_gpu_launch launch;
  traincc_gpu_module image;
  traincc_gpu_program gpu;
  traincc_model model;

  static void noMicro(uint8_t *, uint8_t *, const void *, const void *, float,
                      uint64_t, float *) {}
  static void noApply(uint8_t *, uint8_t *, float, int64_t) {}
  static void noEval(uint8_t *, uint8_t *, const void *, const void *, void *,
                     float *) {}

  SgdModel() {
    const char *names[] = {"p", "p.grad", "p.momentum"};
    int32_t kinds[] = {TRAINCC_STATE_TRAINABLE, TRAINCC_STATE_GRADIENT,
                       TRAINCC_STATE_OPTIMIZER};
    for (int i = 0; i < 3; ++i)
      state[i] = {names[i], kinds[i], TRAINCC_DTYPE_F32, 1, paramShape,
                  uint64_t(64 * i), 16, i == 0 ? -1 : 0, -1};
    float p[kN] = {1, -2, 3, 0.5f}, g[kN] = {0.25f, 0.5f, -1, 2};
    std::memcpy(initial.data(), p, sizeof(p));
    std::memcpy(initial.data() + 64, g, sizeof(g));
    uint32_t momentum, decay;
    float m = 0.9f, wd = 0.01f;
    std::memcpy(&momentum, &m, 4);
    std::memcpy(&decay, &wd, 4);
    args[0] = {TRAINCC_GPU_ARG_STATE, 8, 0};
    args[1] = {TRAINCC_GPU_ARG_STATE, 8, 64};
    args[2] = {TRAINCC_GPU_ARG_STATE, 8, 128};
    args[3] = {TRAINCC_GPU_ARG_PARAMS, 8, TRAINCC_GPU_PARAM_LR};
    args[4] = {TRAINCC_GPU_ARG_I64, 8, uint64_t(kN)};
    args[5] = {TRAINCC_GPU_ARG_F32, 4, momentum};
    args[6] = {TRAINCC_GPU_ARG_F32, 4, decay};
    launch = {"tm_sgd", 0, {1, 1, 1}, {32, 1, 1}, 0, 7, args};
    std::memset(&gpu, 0, sizeof(gpu));
    std::memset(&image, 0, sizeof(image));
    gpu.arch = "sm_90";
    gpu.num_modules = 1;
    gpu.modules = &image;
    image.ptx = ".version 8.0\n.target sm_80\n"
              ".visible .entry tm_sgd(.param .u64 p, .param .u64 g,\n"
              "  .param .u64 buf, .param .u64 lr, .param .u64 n,\n"
              "  .param .f32 momentum, .param .f32 wd)\n{\n  ret;\n}\n";
    gpu.workspace_bytes = 64;
    gpu.apply_step = {1, &launch};
    std::memset(&model, 0, sizeof(model));
    model.abi_version = TRAINCC_ABI_VERSION;
    model.loss_scale_state = model.found_inf_state = -1;
    model.model_name = "sgd";
    model.micro_batch = 2;
    model.accum_steps = 1;
    model.loss = TRAINCC_LOSS_OUTPUT;
    model.input = {"x", TRAINCC_DTYPE_F32, 2, ioShape};
    model.output = {"y", TRAINCC_DTYPE_F32, 2, ioShape};
    model.num_state = 3;
    model.state = state;
    model.state_bytes = initial.size();
    model.initial_state = initial.data();
    model.micro_step = noMicro;
    model.apply_step = noApply;
    model.eval_step = noEval;
    model.gpu = &gpu;
  }
};

/// Points TRAINCC_LIBCUDA at the fake driver for one test.
class FakeDriverEnv {
public:
  explicit FakeDriverEnv(const char *path = TRAINCC_FAKE_LIBCUDA) {
    const char *old = std::getenv("TRAINCC_LIBCUDA");
    if (old)
      old_ = old;
    had_ = old != nullptr;
    setenv("TRAINCC_LIBCUDA", path, 1);
  }
  ~FakeDriverEnv() {
    if (had_)
      setenv("TRAINCC_LIBCUDA", old_.c_str(), 1);
    else
      unsetenv("TRAINCC_LIBCUDA");
  }

private:
  std::string old_;
  bool had_ = false;
};

// Tests that a cubin is used only on the GPU it was built for.
TEST(Gpu, MatchesCubinArchitectures) {
  EXPECT_TRUE(cudaArchMatches("sm_90", 9, 0));
  EXPECT_TRUE(cudaArchMatches("sm_90a", 9, 0));
  EXPECT_TRUE(cudaArchMatches("sm_100", 10, 0));
  EXPECT_FALSE(cudaArchMatches("sm_90", 8, 0));
  EXPECT_FALSE(cudaArchMatches("sm_80", 8, 6));
  EXPECT_FALSE(cudaArchMatches("sm_9", 9, 0));
  EXPECT_FALSE(cudaArchMatches("compute_90", 9, 0));
  EXPECT_FALSE(cudaArchMatches("sm_90x", 9, 0));
}

// Tests that launch plans are checked: every pointer inside its buffer,
// argument sizes that fit their kind, kernel names, launch dimensions.
TEST(Gpu, ValidatesLaunchPlans) {
  {
    SgdModel m;
    EXPECT_NO_ERROR(validateModel(m.model));
    EXPECT_EQ(gpuBufferBytes(m.model, TRAINCC_GPU_ARG_STATE), 192u);
    EXPECT_EQ(gpuBufferBytes(m.model, TRAINCC_GPU_ARG_INPUT), 24u);
    EXPECT_EQ(gpuBufferBytes(m.model, TRAINCC_GPU_ARG_TARGET), 0u);
    EXPECT_EQ(gpuBufferBytes(m.model, TRAINCC_GPU_ARG_PARAMS), 64u);
  }
  {
    SgdModel m;
    m.args[2].value = 192;
    EXPECT_THAT(errorOf(validateModel(m.model)),
                HasSubstr("GPU apply_step launch 0 'tm_sgd' argument 2 points "
                          "at offset 192 of the 192-byte state buffer"));
  }
  {
    SgdModel m;
    m.args[5].size = 8;
    EXPECT_THAT(errorOf(validateModel(m.model)),
                HasSubstr("argument 5 (f32) takes 8 bytes; expected 4"));
  }
  {
    SgdModel m;
    m.args[1] = {TRAINCC_GPU_ARG_TARGET, 8, 0};
    EXPECT_THAT(errorOf(validateModel(m.model)),
                HasSubstr("points at offset 0 of the 0-byte target buffer"));
  }
  {
    SgdModel m;
    m.launch.kernel = nullptr;
    EXPECT_THAT(errorOf(validateModel(m.model)),
                HasSubstr("GPU apply_step launch 0 has no kernel name"));
  }
  {
    SgdModel m;
    m.launch.block[0] = 0;
    EXPECT_THAT(errorOf(validateModel(m.model)),
                HasSubstr("has grid [1,1,1] and block [0,1,1]"));
  }
  {
    // A CUDA-only trainer has no host steps; something must run them.
    SgdModel m;
    m.model.micro_step = nullptr;
    m.model.apply_step = nullptr;
    m.model.eval_step = nullptr;
    EXPECT_NO_ERROR(validateModel(m.model));
    m.model.gpu = nullptr;
    EXPECT_THAT(errorOf(validateModel(m.model)),
                HasSubstr("the model has neither CPU step functions nor a "
                          "GPU program"));
  }
  {
    SgdModel m;
    m.model.apply_step = nullptr;
    EXPECT_THAT(errorOf(validateModel(m.model)),
                HasSubstr("a step function pointer is null"));
  }
  {
    SgdModel m;
    m.image.ptx = nullptr;
    EXPECT_THAT(errorOf(validateModel(m.model)),
                HasSubstr("GPU program module 0 has no PTX"));
  }
  {
    SgdModel m;
    m.launch.module = 1;
    EXPECT_THAT(errorOf(validateModel(m.model)),
                HasSubstr("GPU apply_step launch 0 'tm_sgd' is in module 1 "
                          "of 1"));
  }
  {
    SgdModel m;
    m.gpu.num_modules = 0;
    EXPECT_THAT(errorOf(validateModel(m.model)),
                HasSubstr("GPU program has no modules"));
  }
  {
    // --sync-bn collectives stay inside the workspace, in launch order.
    SgdModel m;
    traincc_gpu_collective collective = {TRAINCC_GPU_COLLECTIVE_REPLICA_MEAN,
                                         1, 48, 4};
    m.gpu.apply_step.num_collectives = 1;
    m.gpu.apply_step.collectives = &collective;
    EXPECT_NO_ERROR(validateModel(m.model));
    collective.offset = 64;
    EXPECT_THAT(errorOf(validateModel(m.model)),
                HasSubstr("GPU apply_step collective 0 averages 4 floats at "
                          "offset 64 of the 64-byte workspace"));
    collective.offset = 0;
    collective.position = 2;
    EXPECT_THAT(errorOf(validateModel(m.model)),
                HasSubstr("GPU apply_step collective 0 comes after launch 2 "
                          "of 1"));
    collective.position = 0;
    collective.kind = 7;
    EXPECT_THAT(errorOf(validateModel(m.model)),
                HasSubstr("GPU apply_step collective 0 has unknown kind 7"));
  }
}

// Tests that a missing driver library is an error that says what was
// looked for, not a crash.
TEST(Gpu, ReportsAMissingDriver) {
  FakeDriverEnv env("/nonexistent/libcuda.so.1");
  Expected<std::unique_ptr<CudaDriver>> driver = CudaDriver::load();
  ASSERT_FALSE(driver);
  EXPECT_THAT(errorOf(driver), HasSubstr("cannot load the CUDA driver: "
                                         "/nonexistent/libcuda.so.1"));
  EXPECT_THAT(errorOf(driver), HasSubstr("(from TRAINCC_LIBCUDA)"));
}

// Tests that apply_step runs on the device with the arena copied there,
// the learning rate read from the parameter block and the float
// immediates intact, and that replaying the captured graph with a new
// learning rate uses the new value.
TEST(Gpu, RunsAndReplaysAPlan) {
  FakeDriverEnv env;
  SgdModel m;
  Expected<ModelInfo> info = inspectModel(&m.model);
  ASSERT_OK(info);
  Expected<ModelMemory> memory = ModelMemory::create(m.model);
  ASSERT_OK(memory);
  std::string fallback;
  Expected<std::unique_ptr<StepBackend>> backend =
      createStepBackend(*info, *memory, DeviceChoice::Auto, &fallback);
  ASSERT_OK(backend);
  EXPECT_EQ(fallback, "");
  EXPECT_STREQ((*backend)->name(), "cuda");
  EXPECT_THAT((*backend)->description(),
              HasSubstr("Fake CUDA Device (compute capability 9.0, 132 SMs"));

  std::vector<float> expected(12);
  std::memcpy(expected.data(), m.initial.data(), 16);
  std::memcpy(expected.data() + 4, m.initial.data() + 64, 16);
  for (float lr : {0.5f, 0.125f}) {
    EXPECT_NO_ERROR((*backend)->applyStep(lr, 1));
    testmodel::sgdUpdate(expected.data(), expected.data() + 4,
                         expected.data() + 8, 4, lr, 0.9f, 0.01f);
  }
  // The host arena is stale until synced.
  EXPECT_EQ(std::memcmp(memory->state.data(), m.initial.data(), 192), 0);
  EXPECT_NO_ERROR((*backend)->syncStateToHost());
  for (int t = 0; t < 3; ++t)
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(memory->floatTensor(m.model, t)[i], expected[t * 4 + i])
          << "tensor " << t << " element " << i;

  // A host edit reaches the device.
  float *p = reinterpret_cast<float *>(memory->state.data());
  p[0] = 100;
  EXPECT_NO_ERROR((*backend)->syncStateToDevice());
  p[0] = 0;
  EXPECT_NO_ERROR((*backend)->syncStateToHost());
  EXPECT_EQ(p[0], 100);
}

// Tests that a plan with a replica collective (--sync-bn) runs in
// segments with the replica mean between them once the backend has one
// (and as one graph, the collective doing nothing, before), and that a
// failing collective stops the step with an error naming it.
TEST(Gpu, RunsCollectivesBetweenSegments) {
  FakeDriverEnv env;
  SgdModel m;
  // apply_step: the update twice, a collective on 4 workspace floats
  // between.
  traincc_gpu_launch twice[2] = {m.launch, m.launch};
  traincc_gpu_collective collective = {TRAINCC_GPU_COLLECTIVE_REPLICA_MEAN, 1,
                                       16, 4};
  m.gpu.apply_step = {2, twice, 1, &collective};
  Expected<ModelInfo> info = inspectModel(&m.model);
  ASSERT_OK(info);
  Expected<ModelMemory> memory = ModelMemory::create(m.model);
  ASSERT_OK(memory);
  Expected<std::unique_ptr<StepBackend>> backend =
      createStepBackend(*info, *memory, DeviceChoice::Cuda);
  ASSERT_OK(backend);

  std::vector<float> expected(12);
  std::memcpy(expected.data(), m.initial.data(), 16);
  std::memcpy(expected.data() + 4, m.initial.data() + 64, 16);
  auto update = [&] {
    testmodel::sgdUpdate(expected.data(), expected.data() + 4,
                         expected.data() + 8, 4, 0.5f, 0.9f, 0.01f);
  };
  EXPECT_NO_ERROR((*backend)->applyStep(0.5f, 1));
  update();
  update();
  std::vector<size_t> counts;
  ASSERT_TRUE((*backend)->setReplicaMean(
      [&](unsigned long long data, size_t count) -> Error {
        EXPECT_NE(data, 0u);
        counts.push_back(count);
        return Error::success();
      },
      2));
  EXPECT_NO_ERROR((*backend)->applyStep(0.5f, 2));
  update();
  update();
  EXPECT_EQ(counts, (std::vector<size_t>{4}));
  EXPECT_NO_ERROR((*backend)->syncStateToHost());
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(memory->floatTensor(m.model, 0)[i], expected[i]) << i;

  (*backend)->setReplicaMean(
      [](unsigned long long, size_t) {
        return makeError("rank 1 closed the connection");
      },
      2);
  EXPECT_THAT(errorOf((*backend)->applyStep(0.5f, 3)),
              HasSubstr("CUDA apply_step: collective 1 of 1: rank 1 closed "
                        "the connection"));
}

// Tests that --device auto falls back to the CPU, saying why, when the
// driver cannot be loaded, and that --device cuda is an error then.
TEST(Gpu, FallsBackToTheCpuUnderAuto) {
  FakeDriverEnv env("/nonexistent/libcuda.so.1");
  SgdModel m;
  Expected<ModelInfo> info = inspectModel(&m.model);
  ASSERT_OK(info);
  Expected<ModelMemory> memory = ModelMemory::create(m.model);
  ASSERT_OK(memory);
  std::string fallback;
  Expected<std::unique_ptr<StepBackend>> backend =
      createStepBackend(*info, *memory, DeviceChoice::Auto, &fallback);
  ASSERT_OK(backend);
  EXPECT_STREQ((*backend)->name(), "cpu");
  EXPECT_THAT(fallback, HasSubstr("cannot load the CUDA driver"));
  EXPECT_THAT(errorOf(createStepBackend(*info, *memory, DeviceChoice::Cuda)),
              HasSubstr("--device cuda: cannot load the CUDA driver"));
}

} // namespace
