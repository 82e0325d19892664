//===- Passes.td - GPU kernels run on the CPU --------------*- tablegen -*-===//

#ifndef TRAINCC_CODEGEN_GPUEMULATION_PASSES_TD
#define TRAINCC_CODEGEN_GPUEMULATION_PASSES_TD

include "mlir/Pass/PassBase.td"

def GPUKernelsToCPUPass : Pass<"traincc-gpu-kernels-to-cpu", "mlir::ModuleOp"> {
  let summary = "Turns the kernels of @traincc_kernels into CPU functions "
                "that emulate one GPU thread (for testing without a GPU)";
  let description = [{
    CI has no GPU, yet the GPU path (MapToGPU, the workspace plan, launch
    plans, the runtime's CUDA backend) must be checked numerically. This
    pass replaces the module's contents by the kernels of
    `@traincc_kernels`, each as a `func.func` with the kernel's arguments
    followed by twelve `index` arguments: block id, thread id, grid size and
    block size (x, y, z), which stand for the `gpu` id and dimension ops.
    A kernel with workgroup (shared) buffers or `gpu.barrier` is marked
    `traincc.cooperative_kernel` (the byte size of each workgroup buffer):
    its workgroup buffers become arguments (plain memrefs of static shape)
    between its own arguments and the indices, its private buffers
    `memref.alloca`, and each barrier a call of `@traincc_emu.barrier`.
    Other `gpu` ops (shuffles, ...) are refused. After lowering to LLVM,
    `traincc-emulation-entry-points` adds the loop over all threads of a
    launch.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def EmulationEntryPointsPass
    : Pass<"traincc-emulation-entry-points", "mlir::ModuleOp"> {
  let summary = "Adds cuLaunchKernel-like entry points to emulated kernels";
  let description = [{
    Runs on the LLVM dialect after `traincc-gpu-kernels-to-cpu` and the CPU
    lowering. For each emulated kernel `@k` it adds
    `void @traincc_emu_k(void **params, const uint32_t grid[3],
    const uint32_t block[3])`, which runs `@k` for every block and thread of
    the launch in order, each kernel argument read from `params` as
    cuLaunchKernel reads it. The fake CUDA driver of the runtime tests calls
    these in place of PTX. A cooperative kernel's threads must wait for each
    other at barriers: its entry point gives each block one shared area
    (0xff-filled) and calls the exported function pointer
    `int32_t (*traincc_emu_run_block_hook)(void (*thread)(void *, uint64_t),
    void *context, uint64_t threads)`, which runs the block's threads as
    fibers; `@traincc_emu.barrier` calls `void (*traincc_emu_barrier_hook)()`.
    The driver sets both after loading the library.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // TRAINCC_CODEGEN_GPUEMULATION_PASSES_TD
