//===- CudaDriver.h - The CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// Trainers are built without CUDA headers or libraries and must run on
// machines without a GPU, so the driver API is opened with dlopen
// ("libcuda.so.1", or the file named by TRAINCC_LIBCUDA, which tests point
// at a fake driver) and its few entry points are declared here with the
// types and constants of cuda.h that the runtime uses. A missing library,
// a missing entry point or a failing call is an Error naming the call and
// the driver's error name and text; nothing here aborts.
//
// The library stays loaded for the life of the process: unloading libcuda
// while its helper threads run is not safe.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_EXEC_CUDADRIVER_H
#define TRAINCC_RUNTIME_EXEC_CUDADRIVER_H

#include "traincc/runtime/support/Error.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace traincc::rt {

/// The subset of cuda.h the runtime uses (same names, same values).
namespace cuda {
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;

enum : CUresult {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_UNKNOWN = 999,
};

// CUjit_option
enum : int {
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_LOG_VERBOSE = 12,
};

// CUdevice_attribute
enum : int {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};

// CUfunction_attribute
enum : int { CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8 };

// Flags.
enum : unsigned {
  CU_STREAM_NON_BLOCKING = 1,
  CU_EVENT_DEFAULT = 0,
  CU_EVENT_DISABLE_TIMING = 2,
  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
};
} // namespace cuda

/// The driver's entry points, named as in cuda.h without their _v2 suffix
/// (the _v2 symbol is the one loaded where cuda.h maps the name to it).
class CudaDriver {
public:
  /// Opens TRAINCC_LIBCUDA or libcuda.so.1, resolves every entry point and
  /// calls cuInit(0). No device is an error too (CUDA_ERROR_NO_DEVICE).
  static Expected<std::unique_ptr<CudaDriver>> load();

  /// Success for CUDA_SUCCESS, else "CALL failed: CUDA_ERROR_X (text)".
  Error check(cuda::CUresult result, std::string_view call) const;
  /// "CUDA_ERROR_X (text)".
  std::string describe(cuda::CUresult result) const;
  /// The file that was opened.
  const std::string &libraryPath() const { return path_; }

  using CUresult = cuda::CUresult;
  using CUdevice = cuda::CUdevice;
  using CUdeviceptr = cuda::CUdeviceptr;
  using CUcontext = cuda::CUcontext;
  using CUmodule = cuda::CUmodule;
  using CUfunction = cuda::CUfunction;
  using CUstream = cuda::CUstream;
  using CUevent = cuda::CUevent;
  using CUgraph = cuda::CUgraph;
  using CUgraphExec = cuda::CUgraphExec;

  CUresult (*cuInit)(unsigned flags) = nullptr;
  CUresult (*cuDriverGetVersion)(int *version) = nullptr;
  CUresult (*cuGetErrorName)(CUresult error, const char **name) = nullptr;
  CUresult (*cuGetErrorString)(CUresult error, const char **text) = nullptr;
  CUresult (*cuDeviceGetCount)(int *count) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice *device, int ordinal) = nullptr;
  CUresult (*cuDeviceGetName)(char *name, int length, CUdevice device) =
      nullptr;
  CUresult (*cuDeviceGetAttribute)(int *value, int attribute,
                                   CUdevice device) = nullptr;
  CUresult (*cuDeviceTotalMem)(size_t *bytes, CUdevice device) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *context,
                                       CUdevice device) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext context) = nullptr;
  CUresult (*cuModuleLoadDataEx)(CUmodule *module, const void *image,
                                 unsigned numOptions, int *options,
                                 void **optionValues) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule module) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction *function, CUmodule module,
                                  const char *name) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction function, int attribute,
                                 int value) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr *pointer, size_t bytes) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr pointer) = nullptr;
  CUresult (*cuMemHostAlloc)(void **pointer, size_t bytes,
                             unsigned flags) = nullptr;
  CUresult (*cuMemFreeHost)(void *pointer) = nullptr;
  CUresult (*cuMemsetD8Async)(CUdeviceptr pointer, unsigned char value,
                              size_t bytes, CUstream stream) = nullptr;
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr destination, const void *source,
                                size_t bytes, CUstream stream) = nullptr;
  CUresult (*cuMemcpyDtoHAsync)(void *destination, CUdeviceptr source,
                                size_t bytes, CUstream stream) = nullptr;
  CUresult (*cuStreamCreate)(CUstream *stream, unsigned flags) = nullptr;
  CUresult (*cuStreamDestroy)(CUstream stream) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream stream) = nullptr;
  CUresult (*cuStreamWaitEvent)(CUstream stream, CUevent event,
                                unsigned flags) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned gridX,
                             unsigned gridY, unsigned gridZ, unsigned blockX,
                             unsigned blockY, unsigned blockZ,
                             unsigned sharedBytes, CUstream stream,
                             void **kernelParams, void **extra) = nullptr;
  CUresult (*cuStreamBeginCapture)(CUstream stream, int mode) = nullptr;
  CUresult (*cuStreamEndCapture)(CUstream stream, CUgraph *graph) = nullptr;
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *exec, CUgraph graph,
                                          unsigned long long flags) = nullptr;
  CUresult (*cuGraphLaunch)(CUgraphExec exec, CUstream stream) = nullptr;
  CUresult (*cuGraphExecDestroy)(CUgraphExec exec) = nullptr;
  CUresult (*cuGraphDestroy)(CUgraph graph) = nullptr;
  CUresult (*cuEventCreate)(CUevent *event, unsigned flags) = nullptr;
  CUresult (*cuEventRecord)(CUevent event, CUstream stream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent event) = nullptr;
  CUresult (*cuEventElapsedTime)(float *milliseconds, CUevent start,
                                 CUevent end) = nullptr;
  CUresult (*cuEventDestroy)(CUevent event) = nullptr;

private:
  CudaDriver() = default;
  std::string path_;
};

/// What `info` and the first progress line say about a CUDA device.
struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;
  int ccMajor = 0, ccMinor = 0;
  int multiprocessors = 0;
  uint64_t totalMemory = 0;
  int driverVersion = 0; // 12040 for CUDA 12.4
  // Launch limits, checked when the plans are loaded.
  int maxThreadsPerBlock = 0;
  int maxBlock[3] = {}, maxGrid[3] = {};
  int maxShared = 0;      // dynamic shared memory per block without opt-in
  int maxSharedOptIn = 0; // with cuFuncSetAttribute's opt-in

  /// "NVIDIA H200 (compute capability 9.0, 132 SMs, 139.8 GiB)".
  std::string describe() const;
};

/// Device `ordinal` (CUDA_VISIBLE_DEVICES decides which GPUs count).
Expected<CudaDeviceInfo> queryCudaDevice(const CudaDriver &driver,
                                         int ordinal);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_EXEC_CUDADRIVER_H
