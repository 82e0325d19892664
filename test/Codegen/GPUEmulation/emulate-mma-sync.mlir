// RUN: traincc-opt %s -traincc-emulate-mma-sync | FileCheck %s

// Tests that each warp-collective mma.sync becomes an exchange through a
// new workgroup buffer (one warp of 32 threads, one mma.sync: 1 x 1 x 384
// f32): every lane stores its 8 A and 4 B elements (converted to f32) at
// their places in its warp's scratch, a barrier, every lane sums its four
// D elements over k = 0..15 from the scratch, a barrier; the extractions
// of the result become the sums.
// CHECK-LABEL: gpu.func @mma
// CHECK-SAME: workgroup(%[[SCRATCH:.*]] : memref<1x1x384xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: nvvm.mma.sync
// CHECK-COUNT-12: memref.store %{{.*}}, %[[SCRATCH]]
// CHECK: gpu.barrier
// CHECK: %[[D:.*]]:4 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK-COUNT-4: arith.mulf
// CHECK: gpu.barrier
// CHECK-NOT: llvm.extractvalue
// CHECK: memref.store %[[D]]#0, %{{.*}}
// CHECK: memref.store %[[D]]#1, %{{.*}}
// CHECK: memref.store %[[D]]#2, %{{.*}}
// CHECK: memref.store %[[D]]#3, %{{.*}}

// Runs it: A[r][k] = r * 16 + k, B[k][n] = (k * 8 + n) / 128 (in bf16,
// exactly), C[r][n] = r * 8 + n; out[r * 8 + n] must be exactly
// C[r][n] + sum_k A[r][k] * B[k][n] (every partial sum is exact in f32).
// RUN: rm -rf %t && mkdir -p %t
// RUN: traincc-opt %s -traincc-emulate-mma-sync -traincc-gpu-kernels-to-cpu \
// RUN:   -traincc-cpu-codegen-pipeline=threads=false \
// RUN:   -traincc-emulation-entry-points -o %t/kernels.mlir
// RUN: mlir-translate --mlir-to-llvmir %t/kernels.mlir -o %t/kernels.ll
// RUN: llc -O2 -filetype=obj -relocation-model=pic %t/kernels.ll -o %t/kernels.o
// RUN: c++ -shared %t/kernels.o -o %t/kernels.so
// RUN: env TRAINCC_FAKE_CUDA_EMULATION=%t/kernels.so \
// RUN:   traincc-fake-cuda-launch %fake_libcuda mma 1 32 512 128 > %t/d.txt
// RUN: awk '{ i = NR - 1; r = int(i / 8); n = i %% 8; want = r * 8 + n; \
// RUN:   for (k = 0; k < 16; ++k) want += (r * 16 + k) * (k * 8 + n) / 128; \
// RUN:   if ($1 != want) { print "D[" r "][" n "] = " $1 ", want " want; bad = 1 } } \
// RUN:   END { if (!bad) print "exact " NR }' %t/d.txt | FileCheck %s --check-prefix=VALUES
// VALUES: exact 128

module attributes {gpu.container_module} {
  gpu.module @traincc_kernels {
    // bf16(in[i] * scale) | bf16(in[j] * scale) << 16, for values that
    // bf16 holds exactly (the upper half of their f32).
    func.func @pack(%in: memref<512xf32>, %i: index, %j: index, %scale: f32) -> i32 {
      %c16 = arith.constant 16 : i32
      %x = memref.load %in[%i] : memref<512xf32>
      %y = memref.load %in[%j] : memref<512xf32>
      %xs = arith.mulf %x, %scale : f32
      %ys = arith.mulf %y, %scale : f32
      %xb = arith.bitcast %xs : f32 to i32
      %yb = arith.bitcast %ys : f32 to i32
      %lo = arith.shrui %xb, %c16 : i32
      %hi0 = arith.shrui %yb, %c16 : i32
      %hi = arith.shli %hi0, %c16 : i32
      %p = arith.ori %lo, %hi : i32
      return %p : i32
    }
    gpu.func @mma(%in: memref<512xf32>, %out: memref<128xf32>) kernel
        attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %one = arith.constant 1.0 : f32
      %b_scale = arith.constant 0.0078125 : f32
      %lane = gpu.thread_id x
      %g = arith.divui %lane, %c4 : index
      %t = arith.remui %lane, %c4 : index
      %t2 = arith.muli %t, %c2 : index
      %g8 = arith.addi %g, %c8 : index
      %t28 = arith.addi %t2, %c8 : index
      // A[r][k] at in[r * 16 + k]: (g, 2t), (g + 8, 2t), (g, 2t + 8), (g + 8, 2t + 8).
      %ga = arith.muli %g, %c16 : index
      %g8a = arith.muli %g8, %c16 : index
      %a0i = arith.addi %ga, %t2 : index
      %a1i = arith.addi %g8a, %t2 : index
      %a2i = arith.addi %ga, %t28 : index
      %a3i = arith.addi %g8a, %t28 : index
      %a0j = arith.addi %a0i, %c1 : index
      %a1j = arith.addi %a1i, %c1 : index
      %a2j = arith.addi %a2i, %c1 : index
      %a3j = arith.addi %a3i, %c1 : index
      %a0 = func.call @pack(%in, %a0i, %a0j, %one) : (memref<512xf32>, index, index, f32) -> i32
      %a1 = func.call @pack(%in, %a1i, %a1j, %one) : (memref<512xf32>, index, index, f32) -> i32
      %a2 = func.call @pack(%in, %a2i, %a2j, %one) : (memref<512xf32>, index, index, f32) -> i32
      %a3 = func.call @pack(%in, %a3i, %a3j, %one) : (memref<512xf32>, index, index, f32) -> i32
      // B[k][n] at in[k * 8 + n] / 128: (2t, g) and (2t + 1, g); (2t + 8, g) and (2t + 9, g).
      %b0k = arith.muli %t2, %c8 : index
      %b0i = arith.addi %b0k, %g : index
      %b0j = arith.addi %b0i, %c8 : index
      %b1k = arith.muli %t28, %c8 : index
      %b1i = arith.addi %b1k, %g : index
      %b1j = arith.addi %b1i, %c8 : index
      %b0 = func.call @pack(%in, %b0i, %b0j, %b_scale) : (memref<512xf32>, index, index, f32) -> i32
      %b1 = func.call @pack(%in, %b1i, %b1j, %b_scale) : (memref<512xf32>, index, index, f32) -> i32
      // C[r][n] at in[r * 8 + n]: (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1).
      %gc = arith.muli %g, %c8 : index
      %g8c = arith.muli %g8, %c8 : index
      %c0i = arith.addi %gc, %t2 : index
      %c1i = arith.addi %c0i, %c1 : index
      %c2i = arith.addi %g8c, %t2 : index
      %c3i = arith.addi %c2i, %c1 : index
      %cv0 = memref.load %in[%c0i] : memref<512xf32>
      %cv1 = memref.load %in[%c1i] : memref<512xf32>
      %cv2 = memref.load %in[%c2i] : memref<512xf32>
      %cv3 = memref.load %in[%c3i] : memref<512xf32>
      %d = nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%b0, %b1] C[%cv0, %cv1, %cv2, %cv3] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      %d0 = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
      %d1 = llvm.extractvalue %d[1] : !llvm.struct<(f32, f32, f32, f32)>
      %d2 = llvm.extractvalue %d[2] : !llvm.struct<(f32, f32, f32, f32)>
      %d3 = llvm.extractvalue %d[3] : !llvm.struct<(f32, f32, f32, f32)>
      memref.store %d0, %out[%c0i] : memref<128xf32>
      memref.store %d1, %out[%c1i] : memref<128xf32>
      memref.store %d2, %out[%c2i] : memref<128xf32>
      memref.store %d3, %out[%c3i] : memref<128xf32>
      gpu.return
    }
  }
}
