// Tests that kernels whose threads synchronise (workgroup memory,
// gpu.barrier at the top level and in loops) compute on the fake CUDA
// driver exactly what they compute on a GPU: traincc's emulation passes
// compile them for the CPU (as `traincc --emit=cuda-emulation` does) and
// the fake driver runs each block's threads as fibers that wait for each
// other at every barrier. Run one thread after another, each kernel below
// reads shared memory that no thread has written yet (NaN).
// RUN: rm -rf %t && mkdir -p %t
// RUN: traincc-opt %s -traincc-gpu-kernels-to-cpu \
// RUN:   -traincc-cpu-codegen-pipeline=threads=false \
// RUN:   -traincc-emulation-entry-points -o %t/kernels.mlir
// RUN: mlir-translate --mlir-to-llvmir %t/kernels.mlir -o %t/kernels.ll
// RUN: llc -O2 -filetype=obj -relocation-model=pic %t/kernels.ll -o %t/kernels.o
// RUN: c++ -shared %t/kernels.o -o %t/kernels.so

// A shared-memory tree reduction: block b sums in[256 b .. 256 b + 255]
// (in[i] = i), 65536 b + 32640.
// RUN: env TRAINCC_FAKE_CUDA_EMULATION=%t/kernels.so \
// RUN:   traincc-fake-cuda-launch %fake_libcuda block_sums 4 256 1024 4 \
// RUN:   | FileCheck %s --check-prefix=SUMS
// SUMS: 32640
// SUMS-NEXT: 98176
// SUMS-NEXT: 163712
// SUMS-NEXT: 229248
// SUMS-NOT: {{.}}

// Reversal through shared memory, with a two-dimensional block (8 x 32
// threads, linear id ty * 8 + tx): out[256 b + t] = in[256 b + 255 - t].
// RUN: env TRAINCC_FAKE_CUDA_EMULATION=%t/kernels.so \
// RUN:   traincc-fake-cuda-launch %fake_libcuda reverse 2 8x32 512 512 \
// RUN:   > %t/reverse.txt
// RUN: awk '{ i = NR - 1; want = i - i %% 256 + 255 - i %% 256; \
// RUN:   if ($1 != want) { print "out[" i "] = " $1 ", want " want; bad = 1 } } \
// RUN:   END { if (!bad) print "reversed " NR }' %t/reverse.txt \
// RUN:   | FileCheck %s --check-prefix=REVERSE
// REVERSE: reversed 512

// Threads that return while the others wait at a barrier (undefined on a
// GPU, a hang at best) fail the kernel, naming it, and the error sticks.
// RUN: env TRAINCC_FAKE_CUDA_EMULATION=%t/kernels.so \
// RUN:   not traincc-fake-cuda-launch %fake_libcuda early_exit 2x1x1 64 64 64 \
// RUN:   2>&1 | FileCheck %s --check-prefix=DEADLOCK
// DEADLOCK: fake CUDA: kernel 'early_exit': block (0, 0, 0): 32 of 64 threads returned while the others wait at barrier 2 (a deadlock on a GPU)
// DEADLOCK-NEXT: cuStreamSynchronize failed: CUDA_ERROR_LAUNCH_FAILED
// DEADLOCK-NEXT: cuMemcpyDtoHAsync failed: CUDA_ERROR_LAUNCH_FAILED

module attributes {gpu.container_module} {
  gpu.module @traincc_kernels {
    gpu.func @block_sums(%in: memref<1024xf32>, %out: memref<4xf32>)
        workgroup(%partial : memref<256xf32, #gpu.address_space<workgroup>>)
        kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c128 = arith.constant 128 : index
      %bx = gpu.block_id x
      %tx = gpu.thread_id x
      %n = gpu.block_dim x
      %base = arith.muli %bx, %n : index
      %i = arith.addi %base, %tx : index
      %v = memref.load %in[%i] : memref<1024xf32>
      memref.store %v, %partial[%tx] : memref<256xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      // Strides 128, 64, ..., 1: thread t < s adds partial[t + s].
      scf.for %k = %c0 to %c8 step %c1 {
        %s = arith.shrui %c128, %k : index
        %active = arith.cmpi ult, %tx, %s : index
        scf.if %active {
          %j = arith.addi %tx, %s : index
          %a = memref.load %partial[%tx] : memref<256xf32, #gpu.address_space<workgroup>>
          %b = memref.load %partial[%j] : memref<256xf32, #gpu.address_space<workgroup>>
          %sum = arith.addf %a, %b : f32
          memref.store %sum, %partial[%tx] : memref<256xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
      }
      %first = arith.cmpi eq, %tx, %c0 : index
      scf.if %first {
        %total = memref.load %partial[%c0] : memref<256xf32, #gpu.address_space<workgroup>>
        memref.store %total, %out[%bx] : memref<4xf32>
      }
      gpu.return
    }

    gpu.func @reverse(%in: memref<512xf32>, %out: memref<512xf32>)
        workgroup(%buffer : memref<256xf32, #gpu.address_space<workgroup>>)
        kernel {
      %c255 = arith.constant 255 : index
      %c256 = arith.constant 256 : index
      %bx = gpu.block_id x
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %nx = gpu.block_dim x
      %row = arith.muli %ty, %nx : index
      %t = arith.addi %row, %tx : index
      %base = arith.muli %bx, %c256 : index
      %i = arith.addi %base, %t : index
      %v = memref.load %in[%i] : memref<512xf32>
      %mirror = arith.subi %c255, %t : index
      memref.store %v, %buffer[%mirror] : memref<256xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %w = memref.load %buffer[%t] : memref<256xf32, #gpu.address_space<workgroup>>
      memref.store %w, %out[%i] : memref<512xf32>
      gpu.return
    }

    // Every thread passes the first barrier; the upper half returns before
    // the second.
    gpu.func @early_exit(%in: memref<64xf32>, %out: memref<64xf32>) kernel {
      %c32 = arith.constant 32 : index
      %tx = gpu.thread_id x
      gpu.barrier
      %low = arith.cmpi ult, %tx, %c32 : index
      scf.if %low {
        gpu.barrier
      }
      %v = memref.load %in[%tx] : memref<64xf32>
      memref.store %v, %out[%tx] : memref<64xf32>
      gpu.return
    }
  }
}
