//===- KernelReport.h - the kernels of each step and their cost -*- C++ -*-===//
//
// Internal to the driver: what `traincc --report` lists after a compile that
// reaches code generation, and what `info` prints from the trainer. Each
// step function is a sequence of kernels, CPU loop nests (the linalg ops of
// the bufferized step) or GPU launches (the gpu.launch_func ops after the
// GPU kernel pipeline), and each kernel has a cost in the same two units:
//
//   bytes: what it reads plus what it writes, each buffer once per direction
//          (a buffer read and written counts twice), at its full size. For
//          a loop nest, its memref operands (an output counts as read only
//          if the body uses its value); for a launch, the buffers its body
//          loads from and stores to in global memory, each traced to its
//          typed view of a kernel argument (the workspace slice of a
//          temporary, a state tensor, the input). Shared-memory tiles and
//          re-reads through caches are not counted: this is the traffic a
//          kernel would have with perfect reuse, the measure fusion lowers.
//   FLOPs: floating-point arithmetic (arith and math ops on floats, fma
//          as 2) in the body of each linalg op, times its iterations, so a
//          matmul or convolution counts 2 per multiply-accumulate. On the
//          GPU the kernel bodies are tiled and guarded, so their FLOPs are
//          not counted from the kernels but carried over from the linalg
//          ops each kernel was generated from (by location: see
//          GPUCostTracker); a linalg op that the GPU pipeline splits over
//          several launches counts in the first.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_LIB_DRIVER_KERNELREPORT_H
#define TRAINCC_LIB_DRIVER_KERNELREPORT_H

#include "traincc/Codegen/Common/KernelCost.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace traincc {

/// The kernels of one step function, in execution order.
struct StepCost {
  std::vector<KernelCost> kernels;
  /// FLOPs of linalg ops that no launch was found to run (GPU only; zero
  /// unless a pass drops locations).
  uint64_t unattributedFlops = 0;

  uint64_t bytes() const;
  uint64_t flops() const;
};

/// The three step functions' kernels on one target.
struct StepCosts {
  StepCost microStep, applyStep, evalStep;
};

/// The CPU loop nests of the step functions of a bufferized module (after
/// buildBufferizePipeline, before the CPU lowering).
StepCosts measureLoopNests(mlir::ModuleOp bufferized);

/// Measures the GPU launches of a module going through the GPU pipeline:
/// `tag` the bufferized module (each linalg op's location gets a name that
/// the kernels generated from it inherit), then `measure` it once the
/// kernels are outlined (before NVVM lowering), which also removes the
/// names again so that the rest of the pipeline sees the original
/// locations.
class GPUCostTracker {
public:
  void tag(mlir::ModuleOp bufferized);
  StepCosts measure(mlir::ModuleOp outlined);

private:
  struct Tagged {
    std::string name;
    uint64_t flops;
    unsigned step; // index into micro_step, apply_step, eval_step
  };
  std::vector<Tagged> tagged_;
};

/// Prints the kernel table of each step and the totals (--report). `cpu`
/// and `gpu` may be null.
void printKernelReport(const StepCosts *cpu, const StepCosts *gpu,
                       llvm::raw_ostream &os);

/// "123.4 MB", "1.23 GFLOP": decimal units.
std::string formatBytes(uint64_t bytes);
std::string formatFlops(uint64_t flops);

} // namespace traincc

#endif // TRAINCC_LIB_DRIVER_KERNELREPORT_H
