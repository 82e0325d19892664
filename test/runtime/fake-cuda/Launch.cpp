//===- Launch.cpp - Launches one kernel through a CUDA driver, for tests --===//
//
// traincc-fake-cuda-launch LIBCUDA KERNEL GRID BLOCK IN OUT
//
// Loads the driver LIBCUDA (the fake one, whose TRAINCC_FAKE_CUDA_EMULATION
// library implements KERNEL), launches KERNEL(float in[IN], float out[OUT])
// over GRID x BLOCK (each `X` or `XxYxZ`) with in[i] = i, and prints out[],
// one value a line; a failing call is printed and the run goes on, so that
// a sticky error shows in the calls after it. Tests hand-written kernels
// compiled by traincc's emulation passes (test/runtime/cuda-emulation-*).
//
//===----------------------------------------------------------------------===//

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using CUresult = int;
using CUdeviceptr = unsigned long long;

struct Driver {
  void *library = nullptr;
  bool failed = false;

  template <typename Fn> Fn get(const char *name) {
    void *symbol = dlsym(library, name);
    if (!symbol) {
      std::fprintf(stderr, "error: %s not found\n", name);
      std::exit(2);
    }
    return reinterpret_cast<Fn>(symbol);
  }

  /// Prints a failed call of `call` by its error name.
  void check(CUresult result, const char *call) {
    if (result == 0)
      return;
    failed = true;
    const char *name = nullptr;
    get<CUresult (*)(CUresult, const char **)>("cuGetErrorName")(result,
                                                                &name);
    std::fprintf(stderr, "%s failed: %s\n", call, name ? name : "?");
  }
};

bool parseDims(const char *text, unsigned dims[3]) {
  dims[0] = dims[1] = dims[2] = 1;
  char *end = nullptr;
  for (int i = 0; i < 3; ++i) {
    dims[i] = unsigned(std::strtoul(text, &end, 10));
    if (!dims[i])
      return false;
    if (*end == '\0')
      return true;
    if (*end != 'x')
      return false;
    text = end + 1;
  }
  return false;
}

} // namespace

int main(int argc, char **argv) {
  unsigned grid[3], block[3];
  if (argc != 7 || !parseDims(argv[3], grid) || !parseDims(argv[4], block)) {
    std::fprintf(stderr, "usage: %s LIBCUDA KERNEL GRID BLOCK IN OUT\n",
                 argv[0]);
    return 2;
  }
  size_t inCount = std::strtoul(argv[5], nullptr, 10);
  size_t outCount = std::strtoul(argv[6], nullptr, 10);
  Driver d;
  d.library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!d.library) {
    std::fprintf(stderr, "error: %s\n", dlerror());
    return 2;
  }
  auto cuInit = d.get<CUresult (*)(unsigned)>("cuInit");
  auto cuDevicePrimaryCtxRetain =
      d.get<CUresult (*)(void **, int)>("cuDevicePrimaryCtxRetain");
  auto cuCtxSetCurrent = d.get<CUresult (*)(void *)>("cuCtxSetCurrent");
  auto cuModuleLoadDataEx =
      d.get<CUresult (*)(void **, const void *, unsigned, int *, void **)>(
          "cuModuleLoadDataEx");
  auto cuModuleGetFunction =
      d.get<CUresult (*)(void **, void *, const char *)>(
          "cuModuleGetFunction");
  auto cuMemAlloc = d.get<CUresult (*)(CUdeviceptr *, size_t)>("cuMemAlloc_v2");
  auto cuStreamCreate = d.get<CUresult (*)(void **, unsigned)>("cuStreamCreate");
  auto cuMemcpyHtoDAsync =
      d.get<CUresult (*)(CUdeviceptr, const void *, size_t, void *)>(
          "cuMemcpyHtoDAsync_v2");
  auto cuMemcpyDtoHAsync =
      d.get<CUresult (*)(void *, CUdeviceptr, size_t, void *)>(
          "cuMemcpyDtoHAsync_v2");
  auto cuLaunchKernel = d.get<CUresult (*)(
      void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
      unsigned, void *, void **, void **)>("cuLaunchKernel");
  auto cuStreamSynchronize =
      d.get<CUresult (*)(void *)>("cuStreamSynchronize");

  void *context = nullptr, *module = nullptr, *function = nullptr;
  void *stream = nullptr;
  d.check(cuInit(0), "cuInit");
  d.check(cuDevicePrimaryCtxRetain(&context, 0), "cuDevicePrimaryCtxRetain");
  d.check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  std::string ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
                    ".visible .entry " +
                    std::string(argv[2]) +
                    "(.param .u64 in, .param .u64 out)\n{\n}\n";
  d.check(cuModuleLoadDataEx(&module, ptx.c_str(), 0, nullptr, nullptr),
          "cuModuleLoadDataEx");
  d.check(cuModuleGetFunction(&function, module, argv[2]),
          "cuModuleGetFunction");
  if (d.failed)
    return 1;
  std::vector<float> in(inCount), out(outCount);
  for (size_t i = 0; i < inCount; ++i)
    in[i] = float(i);
  CUdeviceptr inDevice = 0, outDevice = 0;
  d.check(cuMemAlloc(&inDevice, inCount * sizeof(float)), "cuMemAlloc");
  d.check(cuMemAlloc(&outDevice, outCount * sizeof(float)), "cuMemAlloc");
  d.check(cuStreamCreate(&stream, 0), "cuStreamCreate");
  if (d.failed)
    return 1;
  d.check(cuMemcpyHtoDAsync(inDevice, in.data(), inCount * sizeof(float),
                            stream),
          "cuMemcpyHtoDAsync");
  void *params[] = {&inDevice, &outDevice};
  d.check(cuLaunchKernel(function, grid[0], grid[1], grid[2], block[0],
                         block[1], block[2], 0, stream, params, nullptr),
          "cuLaunchKernel");
  d.check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  d.check(cuMemcpyDtoHAsync(out.data(), outDevice, outCount * sizeof(float),
                            stream),
          "cuMemcpyDtoHAsync");
  if (d.failed)
    return 1;
  for (float value : out)
    std::printf("%.9g\n", double(value));
  return 0;
}
