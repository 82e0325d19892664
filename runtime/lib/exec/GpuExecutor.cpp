//===- GpuExecutor.cpp - Runs a model's GPU program -----------------------===//

#include "traincc/runtime/exec/GpuExecutor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>

namespace traincc::rt {

using namespace cuda;

bool cudaArchMatches(const char *arch, int major, int minor) {
  if (std::strncmp(arch, "sm_", 3) != 0)
    return false;
  char *end = nullptr;
  long number = std::strtol(arch + 3, &end, 10);
  return end != arch + 3 && number == major * 10 + minor &&
         (*end == '\0' || (*end == 'a' && end[1] == '\0'));
}

namespace {

/// A driver handle and the call that releases it (cuMemFree, cuStreamDestroy,
/// ...); errors on release are ignored, there is nobody left to tell.
template <typename Handle> class Owned {
public:
  using Release = CUresult (*)(Handle);
  Owned() = default;
  Owned(Handle handle, Release release) : handle_(handle), release_(release) {}
  Owned(Owned &&other) noexcept { *this = std::move(other); }
  Owned &operator=(Owned &&other) noexcept {
    if (this != &other) {
      reset();
      handle_ = other.handle_;
      release_ = other.release_;
      other.handle_ = Handle();
    }
    return *this;
  }
  ~Owned() { reset(); }
  void reset() {
    if (handle_ != Handle() && release_)
      release_(handle_);
    handle_ = Handle();
  }
  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != Handle(); }

private:
  Handle handle_ = Handle();
  Release release_ = nullptr;
};

/// The device's primary context, retained for the executor's lifetime.
class PrimaryContext {
public:
  PrimaryContext() = default;
  PrimaryContext(const CudaDriver *driver, CUdevice device)
      : driver_(driver), device_(device) {}
  PrimaryContext(PrimaryContext &&other) noexcept { *this = std::move(other); }
  PrimaryContext &operator=(PrimaryContext &&other) noexcept {
    std::swap(driver_, other.driver_);
    std::swap(device_, other.device_);
    return *this;
  }
  ~PrimaryContext() {
    if (driver_)
      driver_->cuDevicePrimaryCtxRelease(device_);
  }

private:
  const CudaDriver *driver_ = nullptr;
  CUdevice device_ = 0;
};

uint64_t roundUp(uint64_t bytes) {
  uint64_t rounded = (bytes + 255) / 256 * 256;
  return rounded ? rounded : 256;
}

enum ProgramId { kMicro0, kMicro1, kApply, kEval, kNumPrograms };
constexpr const char *kProgramNames[kNumPrograms] = {
    "micro_step", "micro_step", "apply_step", "eval_step"};
constexpr int kLossRing = 256;
constexpr int kApplyParams = 2, kEvalParams = 3; // pinned parameter blocks

/// One kernel launch with its arguments marshalled for cuLaunchKernel.
struct PreparedLaunch {
  const char *kernel = nullptr;
  CUfunction function = nullptr;
  unsigned grid[3] = {}, block[3] = {};
  unsigned sharedBytes = 0;
  std::vector<uint64_t> values; // one 8-byte slot per argument
  std::vector<void *> pointers; // kernelParams: &values[i]
};

/// A replica collective (traincc_gpu_collective) after `position`
/// launches.
struct PreparedCollective {
  size_t position = 0;
  uint64_t offset = 0, count = 0;
};

struct Program {
  std::vector<PreparedLaunch> launches;
  std::vector<PreparedCollective> collectives;
  /// One graph per segment of launches: the whole plan, or with a replica
  /// mean the launches before, between and after the collectives.
  std::vector<Owned<CUgraphExec>> graphs;
};

} // namespace

struct GpuExecutor::Impl {
  std::shared_ptr<const CudaDriver> driver;
  const CudaDriver &d;
  ModelInfo model;
  const traincc_gpu_program &gpu;
  uint64_t inputBytes = 0, targetBytes = 0, outputBytes = 0, lossBytes = 0;
  bool launchBlocking = false;

  // Declared in the order they are created: destroyed in reverse, so graphs
  // go before the module and buffers, and the context last.
  PrimaryContext context;
  Owned<CUstream> compute, copy;
  std::vector<Owned<CUmodule>> modules; // one per traincc_gpu_module
  Owned<CUdeviceptr> state, workspace, params, input[2], target[2], output,
      loss;
  Owned<void *> pinned;
  Owned<CUevent> inputReady[2], slotFree[2], applyDone;
  Program programs[kNumPrograms];

  // Pinned staging, carved out of `pinned`.
  uint8_t *stagingInput[2] = {}, *stagingTarget[2] = {};
  uint8_t *paramBlock[4] = {}; // micro slot 0, 1, apply, eval
  float *lossRing = nullptr, *evalOutput = nullptr, *evalLosses = nullptr;

  bool slotUsed[2] = {false, false}, applyUsed = false;
  uint64_t microSteps = 0;
  int pendingLosses = 0;
  std::vector<float> drainedLosses;
  // --sync-bn: how the plans' collectives average over the replicas.
  GpuExecutor::ReplicaMean replicaMean;
  // The scalars of the parameter block.
  float lr = 0, gradScale = 1, replicas = 1;
  int64_t step = 0;
  uint64_t seed = 0;
  // Plans enqueued since the last wait, for errors that surface there.
  std::string enqueued;

  Impl(std::shared_ptr<const CudaDriver> driver, const ModelInfo &model)
      : driver(std::move(driver)), d(*this->driver), model(model),
        gpu(*model.abi->gpu) {}

  Error check(CUresult r, std::string_view call) const {
    return d.check(r, call);
  }
  Error allocate(Owned<CUdeviceptr> &buffer, uint64_t bytes,
                 const char *what);
  /// cuModuleLoadDataEx of `image`, appended to `modules`; a failure names
  /// `kind` and carries the JIT log.
  Error loadImage(const void *image, const std::string &kind);
  /// The module's cubin when it is for this device, else (or when the
  /// driver refuses it) its PTX; `kind` says which loaded.
  Error loadModule(const traincc_gpu_module &image,
                   const CudaDeviceInfo &device, std::string &kind);
  /// Every module; `kind` says what loaded (the first module's kind, which
  /// the others share unless the driver treated them differently).
  Error loadModules(const CudaDeviceInfo &device, std::string &kind);
  Error prepare(const CudaDeviceInfo &device);
  Error waitFor(CUresult r, std::string_view call);
  Error run(ProgramId id);
  /// Enqueues launches [begin, end) of the plan, graph `segment`.
  Error runSegment(ProgramId id, size_t segment, size_t begin, size_t end);
  Error capture(ProgramId id, size_t segment, size_t begin, size_t end);
  Error writeParams(int block, CUstream stream);
  Error drain();
};

Error GpuExecutor::Impl::allocate(Owned<CUdeviceptr> &buffer, uint64_t bytes,
                                  const char *what) {
  CUdeviceptr pointer = 0;
  if (Error err = check(d.cuMemAlloc(&pointer, size_t(roundUp(bytes))),
                        "cuMemAlloc_v2"))
    return std::move(err).withContext(
        strCat("allocating ", bytes, " bytes of device memory for the ",
               what));
  buffer = Owned<CUdeviceptr>(pointer, d.cuMemFree);
  return Error::success();
}

Error GpuExecutor::Impl::loadImage(const void *image,
                                   const std::string &kind) {
  // The JIT writes its messages here; a failed compile prints them.
  static constexpr size_t kLogBytes = 16384;
  std::vector<char> infoLog(kLogBytes, '\0'), errorLog(kLogBytes, '\0');
  int options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                   CU_JIT_ERROR_LOG_BUFFER,
                   CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {infoLog.data(), reinterpret_cast<void *>(kLogBytes - 1),
                    errorLog.data(), reinterpret_cast<void *>(kLogBytes - 1)};
  CUmodule handle = nullptr;
  CUresult r = d.cuModuleLoadDataEx(&handle, image, 4, options, values);
  if (r == CUDA_SUCCESS) {
    modules.emplace_back(handle, d.cuModuleUnload);
    return Error::success();
  }
  std::string message =
      strCat("loading the kernels (", kind, "): cuModuleLoadDataEx failed: ",
             d.describe(r));
  const char *log = errorLog[0] ? errorLog.data() : infoLog.data();
  if (*log) {
    std::string text(log);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\0'))
      text.pop_back();
    message += strCat("\nJIT log:\n", text);
  }
  return Error::failure(message);
}

Error GpuExecutor::Impl::loadModules(const CudaDeviceInfo &device,
                                     std::string &kind) {
  for (int32_t i = 0; i < gpu.num_modules; ++i) {
    std::string moduleKind;
    if (Error err = loadModule(gpu.modules[i], device, moduleKind))
      return gpu.num_modules == 1
                 ? std::move(err)
                 : std::move(err).withContext(
                       strCat("module ", i + 1, " of ", gpu.num_modules));
    if (i == 0)
      kind = moduleKind;
    else if (moduleKind != kind)
      kind += strCat("; module ", i + 1, ": ", moduleKind);
  }
  return Error::success();
}

Error GpuExecutor::Impl::loadModule(const traincc_gpu_module &image,
                                    const CudaDeviceInfo &device,
                                    std::string &kind) {
  std::string ptxKind =
      strCat("PTX (JIT for sm_", device.ccMajor, device.ccMinor, ")");
  bool useCubin = image.cubin && image.cubin_bytes > 0 &&
                  cudaArchMatches(gpu.arch, device.ccMajor, device.ccMinor);
  if (!useCubin) {
    kind = ptxKind;
    return loadImage(image.ptx, kind);
  }
  std::string cubinKind = strCat("cubin ", gpu.arch);
  Error cubinError = loadImage(image.cubin, cubinKind);
  if (!cubinError) {
    kind = cubinKind;
    return Error::success();
  }
  // A driver older than the toolkit that built the cubin refuses it; its
  // JIT may still compile the embedded PTX (of an ISA version it knows).
  Error ptxError = loadImage(image.ptx, ptxKind);
  if (!ptxError) {
    // Its first line, without the "loading the kernels (...): " prefix.
    std::string why = cubinError.message();
    why = why.substr(0, why.find('\n'));
    size_t call = why.find("cuModuleLoadDataEx");
    kind = strCat(ptxKind, ", after the ", cubinKind, " failed: ",
                  call == std::string::npos ? why : why.substr(call));
    return Error::success();
  }
  return makeError(cubinError.message(), "\nthen ", ptxError.message(),
                   "\n(CUDA driver ", device.driverVersion / 1000, ".",
                   device.driverVersion % 1000 / 10,
                   " took neither the cubin nor the PTX: it may be older than "
                   "the CUDA toolkit that built this trainer; update the "
                   "NVIDIA driver)");
}

/// The launch within the device's limits; the error names the kernel, its
/// plan and the limit.
static Error checkLaunchLimits(const traincc_gpu_launch &l, const char *plan,
                               const CudaDeviceInfo &device) {
  auto fail = [&](auto... what) {
    return makeError("kernel '", l.kernel, "' of ", plan, ": ", what...);
  };
  const char *axes[3] = {"x", "y", "z"};
  uint64_t threads = 1;
  for (int k = 0; k < 3; ++k) {
    if (l.grid[k] == 0 || l.block[k] == 0)
      return fail("an empty grid or block");
    if (uint64_t(l.grid[k]) > uint64_t(device.maxGrid[k]))
      return fail("grid ", axes[k], " of ", l.grid[k],
                  " blocks, over the device's limit of ", device.maxGrid[k]);
    if (uint64_t(l.block[k]) > uint64_t(device.maxBlock[k]))
      return fail("block ", axes[k], " of ", l.block[k],
                  " threads, over the device's limit of ", device.maxBlock[k]);
    threads *= l.block[k];
  }
  if (threads > uint64_t(device.maxThreadsPerBlock))
    return fail(threads, " threads per block (", l.block[0], " x ",
                l.block[1], " x ", l.block[2], "), over the device's limit of ",
                device.maxThreadsPerBlock);
  if (l.shared_bytes > uint64_t(std::max(device.maxShared,
                                          device.maxSharedOptIn)))
    return fail(l.shared_bytes,
                " bytes of dynamic shared memory per block, over the "
                "device's limit of ",
                std::max(device.maxShared, device.maxSharedOptIn));
  return Error::success();
}

Error GpuExecutor::Impl::prepare(const CudaDeviceInfo &device) {
  std::map<std::string, CUfunction> functions;
  const traincc_gpu_plan *plans[kNumPrograms] = {
      &gpu.micro_step, &gpu.micro_step, &gpu.apply_step, &gpu.eval_step};
  for (int id = 0; id < kNumPrograms; ++id) {
    const traincc_gpu_plan &plan = *plans[id];
    int slot = id == kMicro1 ? 1 : 0;
    for (int32_t i = 0; i < plan.num_launches; ++i) {
      const traincc_gpu_launch &l = plan.launches[i];
      if (Error err = checkLaunchLimits(l, kProgramNames[id], device))
        return err;
      PreparedLaunch p;
      p.kernel = l.kernel;
      auto found = functions.find(l.kernel);
      if (found == functions.end()) {
        CUfunction function = nullptr;
        if (Error err = check(
                d.cuModuleGetFunction(&function, modules[l.module].get(),
                                      l.kernel),
                strCat("cuModuleGetFunction(kernel '", l.kernel, "')")))
          return err;
        // More dynamic shared memory than a block gets by default (48 KiB)
        // has to be asked for.
        if (l.shared_bytes > uint32_t(device.maxShared))
          if (Error err = check(
                  d.cuFuncSetAttribute(
                      function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                      int(l.shared_bytes)),
                  strCat("cuFuncSetAttribute(kernel '", l.kernel,
                         "', MAX_DYNAMIC_SHARED_SIZE_BYTES)")))
            return err;
        found = functions.emplace(l.kernel, function).first;
      }
      p.function = found->second;
      for (int k = 0; k < 3; ++k) {
        p.grid[k] = l.grid[k];
        p.block[k] = l.block[k];
      }
      p.sharedBytes = l.shared_bytes;
      p.values.resize(size_t(l.num_args));
      for (int32_t a = 0; a < l.num_args; ++a) {
        const traincc_gpu_arg &arg = l.args[a];
        uint64_t &value = p.values[size_t(a)];
        switch (arg.kind) {
        case TRAINCC_GPU_ARG_STATE:
          value = state.get() + arg.value;
          break;
        case TRAINCC_GPU_ARG_WORKSPACE:
          value = workspace.get() + arg.value;
          break;
        case TRAINCC_GPU_ARG_INPUT:
          value = input[slot].get() + arg.value;
          break;
        case TRAINCC_GPU_ARG_TARGET:
          value = target[slot].get() + arg.value;
          break;
        case TRAINCC_GPU_ARG_OUTPUT:
          value = output.get() + arg.value;
          break;
        case TRAINCC_GPU_ARG_LOSS:
          value = loss.get() + arg.value;
          break;
        case TRAINCC_GPU_ARG_PARAMS:
          value = params.get() + arg.value;
          break;
        case TRAINCC_GPU_ARG_I64:
          value = arg.value;
          break;
        case TRAINCC_GPU_ARG_F32: {
          // The kernel reads 4 bytes at the slot's address.
          uint32_t bits = uint32_t(arg.value);
          value = 0;
          std::memcpy(&value, &bits, sizeof(bits));
          break;
        }
        }
      }
      programs[id].launches.push_back(std::move(p));
    }
    // Pointers into `values` only once the vectors stop moving.
    for (PreparedLaunch &p : programs[id].launches)
      for (uint64_t &value : p.values)
        p.pointers.push_back(&value);
    for (int32_t i = 0; i < plan.num_collectives; ++i) {
      const traincc_gpu_collective &c = plan.collectives[i];
      programs[id].collectives.push_back(
          {size_t(c.position), c.offset, c.count});
    }
  }
  return Error::success();
}

/// Checks the result of a call that waits for enqueued work: a failure
/// there may come from any kernel enqueued since the last wait.
Error GpuExecutor::Impl::waitFor(CUresult r, std::string_view call) {
  if (r == CUDA_SUCCESS) {
    enqueued.clear();
    return Error::success();
  }
  std::string message = strCat(call, " failed: ", d.describe(r));
  if (!enqueued.empty())
    message += strCat(" (work enqueued since the last wait: ", enqueued,
                      launchBlocking ? ")"
                                     : "; run with "
                                       "TRAINCC_CUDA_LAUNCH_BLOCKING=1 to "
                                       "name the failing kernel)");
  return Error::failure(message);
}

Error GpuExecutor::Impl::capture(ProgramId id, size_t segment, size_t begin,
                                 size_t end) {
  CUstream stream = compute.get();
  if (Error err = check(d.cuStreamBeginCapture(
                            stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                        "cuStreamBeginCapture_v2"))
    return err;
  for (size_t i = begin; i < end; ++i) {
    PreparedLaunch &p = programs[id].launches[i];
    CUresult r = d.cuLaunchKernel(p.function, p.grid[0], p.grid[1], p.grid[2],
                                  p.block[0], p.block[1], p.block[2],
                                  p.sharedBytes, stream, p.pointers.data(),
                                  nullptr);
    if (r != CUDA_SUCCESS) {
      // End the capture so the stream stays usable; drop the partial graph.
      CUgraph partial = nullptr;
      if (d.cuStreamEndCapture(stream, &partial) == CUDA_SUCCESS && partial)
        d.cuGraphDestroy(partial);
      return check(r, strCat("cuLaunchKernel(kernel '", p.kernel, "')"));
    }
  }
  CUgraph graph = nullptr;
  if (Error err = check(d.cuStreamEndCapture(stream, &graph),
                        "cuStreamEndCapture"))
    return err;
  Owned<CUgraph> owned(graph, d.cuGraphDestroy);
  CUgraphExec exec = nullptr;
  if (Error err = check(d.cuGraphInstantiateWithFlags(&exec, graph, 0),
                        "cuGraphInstantiateWithFlags"))
    return err;
  programs[id].graphs[segment] = Owned<CUgraphExec>(exec, d.cuGraphExecDestroy);
  return Error::success();
}

Error GpuExecutor::Impl::run(ProgramId id) {
  Program &program = programs[id];
  // The segments' bounds: without a replica mean (alone) the collectives
  // change nothing, and the plan is one segment.
  std::vector<size_t> cuts = {0};
  if (replicaMean)
    for (const PreparedCollective &c : program.collectives)
      cuts.push_back(c.position);
  cuts.push_back(program.launches.size());
  if (program.graphs.size() != cuts.size() - 1) {
    program.graphs.clear();
    program.graphs.resize(cuts.size() - 1);
  }
  for (size_t segment = 0; segment + 1 < cuts.size(); ++segment) {
    if (segment > 0) {
      const PreparedCollective &c = program.collectives[segment - 1];
      if (Error err = replicaMean(workspace.get() + c.offset, size_t(c.count)))
        return std::move(err).withContext(strCat(
            "collective ", segment, " of ", program.collectives.size()));
      // It waited for everything enqueued before it.
      enqueued.clear();
    }
    if (Error err = runSegment(id, segment, cuts[segment], cuts[segment + 1]))
      return err;
  }
  return Error::success();
}

Error GpuExecutor::Impl::runSegment(ProgramId id, size_t segment,
                                    size_t begin, size_t end) {
  Program &program = programs[id];
  const char *name = kProgramNames[id];
  if (begin == end)
    return Error::success();
  if (launchBlocking) {
    for (size_t i = begin; i < end; ++i) {
      PreparedLaunch &p = program.launches[i];
      std::string call = strCat("cuLaunchKernel(kernel '", p.kernel, "')");
      if (Error err = check(d.cuLaunchKernel(
                                p.function, p.grid[0], p.grid[1], p.grid[2],
                                p.block[0], p.block[1], p.block[2],
                                p.sharedBytes, compute.get(),
                                p.pointers.data(), nullptr),
                            call))
        return err;
      enqueued = strCat("kernel '", p.kernel, "' of ", name);
      if (Error err = waitFor(d.cuStreamSynchronize(compute.get()),
                              strCat("running kernel '", p.kernel, "' of ",
                                     name, ": cuStreamSynchronize")))
        return err;
    }
    return Error::success();
  }
  std::string graphName =
      program.graphs.size() == 1
          ? strCat(name, " graph")
          : strCat(name, " graph ", segment + 1, " of ", program.graphs.size());
  if (!program.graphs[segment])
    if (Error err = capture(id, segment, begin, end))
      return std::move(err).withContext(strCat("capturing the ", graphName));
  if (Error err = check(d.cuGraphLaunch(program.graphs[segment].get(),
                                        compute.get()),
                        strCat("cuGraphLaunch(", graphName, ")")))
    return err;
  if (enqueued.find(name) == std::string::npos)
    enqueued += strCat(enqueued.empty() ? "" : ", ", "the ", name, " graph");
  return Error::success();
}

Error GpuExecutor::Impl::writeParams(int block, CUstream stream) {
  uint8_t *p = paramBlock[block];
  std::memset(p, 0, TRAINCC_GPU_PARAM_BYTES);
  std::memcpy(p + TRAINCC_GPU_PARAM_LR, &lr, sizeof(lr));
  std::memcpy(p + TRAINCC_GPU_PARAM_GRAD_SCALE, &gradScale, sizeof(gradScale));
  std::memcpy(p + TRAINCC_GPU_PARAM_STEP, &step, sizeof(step));
  std::memcpy(p + TRAINCC_GPU_PARAM_SEED, &seed, sizeof(seed));
  std::memcpy(p + TRAINCC_GPU_PARAM_REPLICAS, &replicas, sizeof(replicas));
  return check(d.cuMemcpyHtoDAsync(params.get(), p, TRAINCC_GPU_PARAM_BYTES,
                                   stream),
               "cuMemcpyHtoDAsync_v2(parameter block)");
}

Error GpuExecutor::Impl::drain() {
  if (Error err = waitFor(d.cuStreamSynchronize(compute.get()),
                          "cuStreamSynchronize"))
    return err;
  drainedLosses.insert(drainedLosses.end(), lossRing,
                       lossRing + pendingLosses);
  pendingLosses = 0;
  return Error::success();
}

void GpuExecutor::setReplicaMean(ReplicaMean mean, int replicas) {
  impl_->replicaMean = std::move(mean);
  impl_->replicas = impl_->replicaMean ? float(replicas) : 1.0f;
}

unsigned long long GpuExecutor::stateArena() const {
  return impl_->state.get();
}
void *GpuExecutor::computeStream() const { return impl_->compute.get(); }
const CudaDriver &GpuExecutor::driver() const { return impl_->d; }

GpuExecutor::GpuExecutor(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

GpuExecutor::~GpuExecutor() {
  if (!impl_)
    return;
  // Let enqueued work finish before its buffers go.
  if (impl_->copy)
    impl_->d.cuStreamSynchronize(impl_->copy.get());
  if (impl_->compute)
    impl_->d.cuStreamSynchronize(impl_->compute.get());
}

Expected<std::unique_ptr<GpuExecutor>>
GpuExecutor::create(std::shared_ptr<const CudaDriver> driver,
                    const ModelInfo &model, const uint8_t *hostState,
                    int ordinal) {
  if (!model.abi->gpu)
    return makeError("this trainer was built without CUDA kernels (compile "
                     "with traincc --target cuda)");
  Expected<CudaDeviceInfo> device = queryCudaDevice(*driver, ordinal);
  if (!device)
    return device.takeError();
  auto impl = std::make_unique<Impl>(std::move(driver), model);
  Impl &m = *impl;
  const CudaDriver &d = m.d;
  const char *blocking = std::getenv("TRAINCC_CUDA_LAUNCH_BLOCKING");
  m.launchBlocking = blocking && std::strcmp(blocking, "1") == 0;

  CUdevice dev = 0;
  if (Error err = m.check(d.cuDeviceGet(&dev, ordinal), "cuDeviceGet"))
    return err;
  CUcontext context = nullptr;
  if (Error err = m.check(d.cuDevicePrimaryCtxRetain(&context, dev),
                          "cuDevicePrimaryCtxRetain"))
    return err;
  m.context = PrimaryContext(&d, dev);
  if (Error err = m.check(d.cuCtxSetCurrent(context), "cuCtxSetCurrent"))
    return err;
  for (Owned<CUstream> *stream : {&m.compute, &m.copy}) {
    CUstream handle = nullptr;
    if (Error err = m.check(d.cuStreamCreate(&handle, CU_STREAM_NON_BLOCKING),
                            "cuStreamCreate"))
      return err;
    *stream = Owned<CUstream>(handle, d.cuStreamDestroy);
  }
  std::string moduleKind;
  if (Error err = m.loadModules(*device, moduleKind))
    return err;

  const traincc_model &abi = *model.abi;
  m.inputBytes = gpuBufferBytes(abi, TRAINCC_GPU_ARG_INPUT);
  m.targetBytes = gpuBufferBytes(abi, TRAINCC_GPU_ARG_TARGET);
  m.outputBytes = gpuBufferBytes(abi, TRAINCC_GPU_ARG_OUTPUT);
  m.lossBytes = gpuBufferBytes(abi, TRAINCC_GPU_ARG_LOSS);
  struct {
    Owned<CUdeviceptr> *buffer;
    uint64_t bytes;
    const char *what;
  } buffers[] = {
      {&m.state, abi.state_bytes, "state arena"},
      {&m.workspace, m.gpu.workspace_bytes, "workspace"},
      {&m.params, TRAINCC_GPU_PARAM_BYTES, "parameter block"},
      {&m.input[0], m.inputBytes, "inputs"},
      {&m.input[1], m.inputBytes, "inputs"},
      {&m.target[0], m.targetBytes, "targets"},
      {&m.target[1], m.targetBytes, "targets"},
      {&m.output, m.outputBytes, "outputs"},
      {&m.loss, m.lossBytes, "losses"},
  };
  CUstream compute = m.compute.get();
  for (auto &b : buffers) {
    if (Error err = m.allocate(*b.buffer, b.bytes, b.what))
      return err;
    // Zeroed, as the CPU workspace is: a plan may rely on it.
    if (Error err = m.check(d.cuMemsetD8Async(b.buffer->get(), 0,
                                              size_t(roundUp(b.bytes)),
                                              compute),
                            "cuMemsetD8Async"))
      return err;
  }

  // One pinned block for all staging.
  uint64_t sizes[] = {m.inputBytes, m.inputBytes, m.targetBytes,
                      m.targetBytes, TRAINCC_GPU_PARAM_BYTES,
                      TRAINCC_GPU_PARAM_BYTES, TRAINCC_GPU_PARAM_BYTES,
                      TRAINCC_GPU_PARAM_BYTES, kLossRing * sizeof(float),
                      m.outputBytes, m.lossBytes};
  uint64_t total = 0;
  for (uint64_t s : sizes)
    total += roundUp(s);
  void *host = nullptr;
  if (Error err = m.check(d.cuMemHostAlloc(&host, size_t(total), 0),
                          "cuMemHostAlloc"))
    return std::move(err).withContext(
        strCat("allocating ", total, " bytes of pinned host memory"));
  m.pinned = Owned<void *>(host, d.cuMemFreeHost);
  uint8_t *carve = static_cast<uint8_t *>(host);
  uint8_t *parts[std::size(sizes)];
  for (size_t i = 0; i < std::size(sizes); ++i) {
    parts[i] = carve;
    carve += roundUp(sizes[i]);
  }
  m.stagingInput[0] = parts[0];
  m.stagingInput[1] = parts[1];
  m.stagingTarget[0] = parts[2];
  m.stagingTarget[1] = parts[3];
  for (int i = 0; i < 4; ++i)
    m.paramBlock[i] = parts[4 + i];
  m.lossRing = reinterpret_cast<float *>(parts[8]);
  m.evalOutput = reinterpret_cast<float *>(parts[9]);
  m.evalLosses = reinterpret_cast<float *>(parts[10]);

  for (Owned<CUevent> *event : {&m.inputReady[0], &m.inputReady[1],
                                &m.slotFree[0], &m.slotFree[1],
                                &m.applyDone}) {
    CUevent handle = nullptr;
    if (Error err = m.check(d.cuEventCreate(&handle, CU_EVENT_DISABLE_TIMING),
                            "cuEventCreate"))
      return err;
    *event = Owned<CUevent>(handle, d.cuEventDestroy);
  }
  if (Error err = m.prepare(*device))
    return err;

  std::unique_ptr<GpuExecutor> executor(new GpuExecutor(std::move(impl)));
  executor->device_ = *device;
  executor->moduleKind_ = moduleKind;
  if (Error err = executor->copyStateToDevice(hostState))
    return err;
  return executor;
}

Error GpuExecutor::microStep(const void *input, const void *target,
                             float gradScale, uint64_t seed) {
  Impl &m = *impl_;
  const CudaDriver &d = m.d;
  int s = int(m.microSteps % 2);
  // Step 1: slot s was last used by micro-step i-2; wait until its work is
  // done so that its staging and device buffers can be overwritten.
  if (m.slotUsed[s])
    if (Error err = m.waitFor(d.cuEventSynchronize(m.slotFree[s].get()),
                              "cuEventSynchronize"))
      return err;
  // Steps 2 and 3: stage and upload on the copy stream.
  std::memcpy(m.stagingInput[s], input, size_t(m.inputBytes));
  if (Error err = m.check(d.cuMemcpyHtoDAsync(m.input[s].get(),
                                              m.stagingInput[s],
                                              size_t(m.inputBytes),
                                              m.copy.get()),
                          "cuMemcpyHtoDAsync_v2(input)"))
    return err;
  if (m.targetBytes > 0 && target) {
    std::memcpy(m.stagingTarget[s], target, size_t(m.targetBytes));
    if (Error err = m.check(d.cuMemcpyHtoDAsync(m.target[s].get(),
                                                m.stagingTarget[s],
                                                size_t(m.targetBytes),
                                                m.copy.get()),
                            "cuMemcpyHtoDAsync_v2(target)"))
      return err;
  }
  if (Error err = m.check(d.cuEventRecord(m.inputReady[s].get(), m.copy.get()),
                          "cuEventRecord"))
    return err;
  // Step 4: the compute stream runs the step once the upload is done.
  CUstream compute = m.compute.get();
  if (Error err = m.check(
          d.cuStreamWaitEvent(compute, m.inputReady[s].get(), 0),
          "cuStreamWaitEvent"))
    return err;
  m.gradScale = gradScale;
  m.seed = seed;
  if (Error err = m.writeParams(s, compute))
    return err;
  if (Error err = m.run(s == 0 ? kMicro0 : kMicro1))
    return err;
  if (m.pendingLosses == kLossRing)
    if (Error err = m.drain())
      return err;
  if (Error err = m.check(d.cuMemcpyDtoHAsync(m.lossRing + m.pendingLosses,
                                              m.loss.get(), sizeof(float),
                                              compute),
                          "cuMemcpyDtoHAsync_v2(loss)"))
    return err;
  ++m.pendingLosses;
  if (Error err = m.check(d.cuEventRecord(m.slotFree[s].get(), compute),
                          "cuEventRecord"))
    return err;
  m.slotUsed[s] = true;
  ++m.microSteps;
  return Error::success();
}

Error GpuExecutor::collectLosses(std::vector<float> &losses) {
  Impl &m = *impl_;
  if (Error err = m.drain())
    return err;
  losses.insert(losses.end(), m.drainedLosses.begin(), m.drainedLosses.end());
  m.drainedLosses.clear();
  return Error::success();
}

Error GpuExecutor::applyStep(float lr, int64_t step) {
  Impl &m = *impl_;
  const CudaDriver &d = m.d;
  // The pinned block of the previous apply_step may not be copied yet.
  if (m.applyUsed)
    if (Error err = m.waitFor(d.cuEventSynchronize(m.applyDone.get()),
                              "cuEventSynchronize"))
      return err;
  m.lr = lr;
  m.step = step;
  if (Error err = m.writeParams(kApplyParams, m.compute.get()))
    return err;
  if (Error err = m.run(kApply))
    return err;
  if (Error err = m.check(d.cuEventRecord(m.applyDone.get(), m.compute.get()),
                          "cuEventRecord"))
    return err;
  m.applyUsed = true;
  return Error::success();
}

Error GpuExecutor::evalStep(const void *input, const void *target,
                            float *output, float *losses) {
  Impl &m = *impl_;
  const CudaDriver &d = m.d;
  CUstream compute = m.compute.get();
  // Everything on the compute stream, after all earlier work (slot 0's
  // buffers may still be in use by a micro-step).
  if (Error err = m.waitFor(d.cuStreamSynchronize(m.copy.get()),
                            "cuStreamSynchronize"))
    return err;
  std::memcpy(m.stagingInput[0], input, size_t(m.inputBytes));
  if (Error err = m.check(d.cuMemcpyHtoDAsync(m.input[0].get(),
                                              m.stagingInput[0],
                                              size_t(m.inputBytes), compute),
                          "cuMemcpyHtoDAsync_v2(input)"))
    return err;
  if (m.targetBytes > 0) {
    Error err = Error::success();
    if (target) {
      std::memcpy(m.stagingTarget[0], target, size_t(m.targetBytes));
      err = m.check(d.cuMemcpyHtoDAsync(m.target[0].get(), m.stagingTarget[0],
                                        size_t(m.targetBytes), compute),
                    "cuMemcpyHtoDAsync_v2(target)");
    } else {
      // No targets (predict): the plan still computes losses, from zeros
      // (class 0), which keeps label indices in range; they are ignored.
      err = m.check(d.cuMemsetD8Async(m.target[0].get(), 0,
                                      size_t(m.targetBytes), compute),
                    "cuMemsetD8Async(target)");
    }
    if (err)
      return err;
  }
  if (Error err = m.writeParams(kEvalParams, compute))
    return err;
  if (Error err = m.run(kEval))
    return err;
  if (Error err = m.check(d.cuMemcpyDtoHAsync(m.evalOutput, m.output.get(),
                                              size_t(m.outputBytes), compute),
                          "cuMemcpyDtoHAsync_v2(output)"))
    return err;
  if (target && losses)
    if (Error err = m.check(d.cuMemcpyDtoHAsync(m.evalLosses, m.loss.get(),
                                                size_t(m.lossBytes), compute),
                            "cuMemcpyDtoHAsync_v2(losses)"))
      return err;
  if (Error err = m.waitFor(d.cuStreamSynchronize(compute),
                            "cuStreamSynchronize"))
    return err;
  std::memcpy(output, m.evalOutput, size_t(m.outputBytes));
  if (target && losses)
    std::memcpy(losses, m.evalLosses, size_t(m.lossBytes));
  return Error::success();
}

Error GpuExecutor::copyStateToHost(uint8_t *hostState,
                                   const ArenaRanges &ranges) {
  Impl &m = *impl_;
  const CudaDriver &d = m.d;
  if (Error err = m.waitFor(d.cuStreamSynchronize(m.copy.get()),
                            "cuStreamSynchronize"))
    return err;
  ArenaRanges all = {{0, m.model.abi->state_bytes}};
  for (auto [offset, bytes] : ranges.empty() ? all : ranges)
    if (bytes > 0)
      if (Error err = m.check(
              d.cuMemcpyDtoHAsync(hostState + offset, m.state.get() + offset,
                                  size_t(bytes), m.compute.get()),
              "cuMemcpyDtoHAsync_v2(state arena)"))
        return err;
  return m.waitFor(d.cuStreamSynchronize(m.compute.get()),
                   "cuStreamSynchronize");
}

Error GpuExecutor::copyStateToDevice(const uint8_t *hostState,
                                     const ArenaRanges &ranges) {
  Impl &m = *impl_;
  const CudaDriver &d = m.d;
  // Enqueued steps read and write the arena; they go first.
  if (Error err = m.waitFor(d.cuStreamSynchronize(m.copy.get()),
                            "cuStreamSynchronize"))
    return err;
  ArenaRanges all = {{0, m.model.abi->state_bytes}};
  for (auto [offset, bytes] : ranges.empty() ? all : ranges)
    if (bytes > 0)
      if (Error err = m.check(
              d.cuMemcpyHtoDAsync(m.state.get() + offset, hostState + offset,
                                  size_t(bytes), m.compute.get()),
              "cuMemcpyHtoDAsync_v2(state arena)"))
        return err;
  return m.waitFor(d.cuStreamSynchronize(m.compute.get()),
                   "cuStreamSynchronize");
}

} // namespace traincc::rt
