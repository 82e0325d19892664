//===- CudaDriver.cpp - The CUDA driver API, loaded at run time -----------===//

#include "traincc/runtime/exec/CudaDriver.h"

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>

namespace traincc::rt {

using namespace cuda;

namespace {

template <typename Fn>
Error bind(void *library, const std::string &path, const char *symbol,
           Fn &slot) {
  dlerror();
  void *address = dlsym(library, symbol);
  if (!address)
    return makeError(path, ": the CUDA driver lacks '", symbol,
                     "' (a driver for CUDA 12 or newer is needed)");
  slot = reinterpret_cast<Fn>(address);
  return Error::success();
}

} // namespace

Expected<std::unique_ptr<CudaDriver>> CudaDriver::load() {
  const char *override = std::getenv("TRAINCC_LIBCUDA");
  std::string path = override && *override ? override : "libcuda.so.1";
  void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    return makeError("cannot load the CUDA driver: ", why ? why : path,
                     override && *override ? " (from TRAINCC_LIBCUDA)"
                                           : " (is an NVIDIA driver installed?)");
  }
  std::unique_ptr<CudaDriver> d(new CudaDriver());
  d->path_ = path;
  // Names as exported by libcuda: the _v2 symbols are the current ABI of
  // the calls cuda.h redirects.
  Error err = Error::success();
  auto b = [&](const char *symbol, auto &slot) {
    if (!err)
      err = bind(library, path, symbol, slot);
  };
  b("cuInit", d->cuInit);
  b("cuDriverGetVersion", d->cuDriverGetVersion);
  b("cuGetErrorName", d->cuGetErrorName);
  b("cuGetErrorString", d->cuGetErrorString);
  b("cuDeviceGetCount", d->cuDeviceGetCount);
  b("cuDeviceGet", d->cuDeviceGet);
  b("cuDeviceGetName", d->cuDeviceGetName);
  b("cuDeviceGetAttribute", d->cuDeviceGetAttribute);
  b("cuDeviceTotalMem_v2", d->cuDeviceTotalMem);
  b("cuDevicePrimaryCtxRetain", d->cuDevicePrimaryCtxRetain);
  b("cuDevicePrimaryCtxRelease_v2", d->cuDevicePrimaryCtxRelease);
  b("cuCtxSetCurrent", d->cuCtxSetCurrent);
  b("cuModuleLoadDataEx", d->cuModuleLoadDataEx);
  b("cuModuleUnload", d->cuModuleUnload);
  b("cuModuleGetFunction", d->cuModuleGetFunction);
  b("cuFuncSetAttribute", d->cuFuncSetAttribute);
  b("cuMemAlloc_v2", d->cuMemAlloc);
  b("cuMemFree_v2", d->cuMemFree);
  b("cuMemHostAlloc", d->cuMemHostAlloc);
  b("cuMemFreeHost", d->cuMemFreeHost);
  b("cuMemsetD8Async", d->cuMemsetD8Async);
  b("cuMemcpyHtoDAsync_v2", d->cuMemcpyHtoDAsync);
  b("cuMemcpyDtoHAsync_v2", d->cuMemcpyDtoHAsync);
  b("cuStreamCreate", d->cuStreamCreate);
  b("cuStreamDestroy_v2", d->cuStreamDestroy);
  b("cuStreamSynchronize", d->cuStreamSynchronize);
  b("cuStreamWaitEvent", d->cuStreamWaitEvent);
  b("cuLaunchKernel", d->cuLaunchKernel);
  b("cuStreamBeginCapture_v2", d->cuStreamBeginCapture);
  b("cuStreamEndCapture", d->cuStreamEndCapture);
  b("cuGraphInstantiateWithFlags", d->cuGraphInstantiateWithFlags);
  b("cuGraphLaunch", d->cuGraphLaunch);
  b("cuGraphExecDestroy", d->cuGraphExecDestroy);
  b("cuGraphDestroy", d->cuGraphDestroy);
  b("cuEventCreate", d->cuEventCreate);
  b("cuEventRecord", d->cuEventRecord);
  b("cuEventSynchronize", d->cuEventSynchronize);
  b("cuEventElapsedTime", d->cuEventElapsedTime);
  b("cuEventDestroy_v2", d->cuEventDestroy);
  if (err)
    return err;
  if (CUresult r = d->cuInit(0)) {
    if (r == CUDA_ERROR_NO_DEVICE)
      return makeError("no CUDA device: cuInit failed: ", d->describe(r));
    return d->check(r, "cuInit");
  }
  return d;
}

std::string CudaDriver::describe(CUresult result) const {
  const char *name = nullptr, *text = nullptr;
  if (!cuGetErrorName || cuGetErrorName(result, &name) != CUDA_SUCCESS ||
      !name)
    name = nullptr;
  if (!cuGetErrorString || cuGetErrorString(result, &text) != CUDA_SUCCESS ||
      !text)
    text = nullptr;
  std::string out = name ? std::string(name) : strCat("CUDA error ", result);
  if (text)
    out += strCat(" (", text, ")");
  return out;
}

Error CudaDriver::check(CUresult result, std::string_view call) const {
  if (result == CUDA_SUCCESS)
    return Error::success();
  return makeError(call, " failed: ", describe(result));
}

std::string CudaDeviceInfo::describe() const {
  char memory[32];
  std::snprintf(memory, sizeof(memory), "%.1f GiB",
                double(totalMemory) / double(1ull << 30));
  return strCat(name, " (compute capability ", ccMajor, ".", ccMinor, ", ",
                multiprocessors, " SMs, ", memory, ")");
}

Expected<CudaDeviceInfo> queryCudaDevice(const CudaDriver &driver,
                                         int ordinal) {
  int count = 0;
  if (Error err = driver.check(driver.cuDeviceGetCount(&count),
                               "cuDeviceGetCount"))
    return err;
  if (count == 0)
    return makeError("no CUDA device (cuDeviceGetCount found none)");
  if (ordinal < 0 || ordinal >= count)
    return makeError("CUDA device ", ordinal, " does not exist (", count,
                     " device", count == 1 ? "" : "s", ")");
  CUdevice device = 0;
  if (Error err = driver.check(driver.cuDeviceGet(&device, ordinal),
                               "cuDeviceGet"))
    return err;
  CudaDeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  if (Error err = driver.check(
          driver.cuDeviceGetName(name, int(sizeof(name)) - 1, device),
          "cuDeviceGetName"))
    return err;
  info.name = name;
  struct {
    int attribute;
    int *value;
    const char *what;
  } attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info.ccMajor,
       "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)"},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info.ccMinor,
       "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)"},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info.multiprocessors,
       "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)"},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &info.maxThreadsPerBlock,
       "cuDeviceGetAttribute(MAX_THREADS_PER_BLOCK)"},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &info.maxBlock[0],
       "cuDeviceGetAttribute(MAX_BLOCK_DIM_X)"},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, &info.maxBlock[1],
       "cuDeviceGetAttribute(MAX_BLOCK_DIM_Y)"},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, &info.maxBlock[2],
       "cuDeviceGetAttribute(MAX_BLOCK_DIM_Z)"},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &info.maxGrid[0],
       "cuDeviceGetAttribute(MAX_GRID_DIM_X)"},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &info.maxGrid[1],
       "cuDeviceGetAttribute(MAX_GRID_DIM_Y)"},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &info.maxGrid[2],
       "cuDeviceGetAttribute(MAX_GRID_DIM_Z)"},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &info.maxShared,
       "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK)"},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       &info.maxSharedOptIn,
       "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)"},
  };
  for (auto &a : attributes)
    if (Error err = driver.check(
            driver.cuDeviceGetAttribute(a.value, a.attribute, device), a.what))
      return err;
  size_t memory = 0;
  if (Error err = driver.check(driver.cuDeviceTotalMem(&memory, device),
                               "cuDeviceTotalMem_v2"))
    return err;
  info.totalMemory = memory;
  if (Error err = driver.check(driver.cuDriverGetVersion(&info.driverVersion),
                               "cuDriverGetVersion"))
    return err;
  return info;
}

} // namespace traincc::rt
