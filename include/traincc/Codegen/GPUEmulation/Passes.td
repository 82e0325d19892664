//===- Passes.td - GPU kernels run on the CPU --------------*- tablegen -*-===//

#ifndef TRAINCC_CODEGEN_GPUEMULATION_PASSES_TD
#define TRAINCC_CODEGEN_GPUEMULATION_PASSES_TD

include "mlir/Pass/PassBase.td"

def EmulateMmaSyncPass : Pass<"traincc-emulate-mma-sync", "mlir::ModuleOp"> {
  let summary = "Rewrites the warp-collective nvvm.mma.sync of GPU kernels "
                "into an exchange through shared memory (emulation only)";
  let description = [{
    Runs on outlined kernels (`gpu.func` with a known block size) before
    `traincc-gpu-kernels-to-cpu`, which runs a block's threads as fibers
    that meet at every barrier. Each `nvvm.mma.sync` m16n8k16 (row-major
    f16 or bf16 A, column-major B, f32 C and D) becomes: every lane stores
    its A and B fragments, converted exactly to f32, at their places
    (PTX ISA fragment layouts; lane = 4 * groupID + threadID_in_group) in
    its warp's part of a new workgroup buffer (warps x group x 384 f32); a
    `gpu.barrier`; every lane computes its four D elements from the whole
    warp's A and B; a `gpu.barrier`. Each D element is its C plus the 16
    products A[r][k] * B[k][c] (exact in f32) added in increasing k, each
    addition rounded to f32. Tensor cores add in another order and with
    their own rounding, so results may differ from a GPU's in the last
    bits. Up to 8 consecutive mma.sync of a block that do not depend on
    each other (nor does anything between them) share one exchange. The
    barriers are block-wide: every thread of the block must execute every
    mma.sync, as on the GPU every lane of a warp must.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
  ];
}

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
