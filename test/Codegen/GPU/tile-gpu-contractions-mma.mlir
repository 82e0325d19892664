// RUN: traincc-opt %s -split-input-file -traincc-tile-gpu-contractions -cse | FileCheck %s
// RUN: traincc-opt %s -split-input-file -traincc-tile-gpu-contractions=tensor-cores=false | FileCheck %s --check-prefix=SCALAR

// Tests that a bf16 x bf16 -> f32 matmul runs on the tensor cores: 128
// threads (2 x 2 warps) per 64 x 32 output tile (M = 100 in two tiles, N =
// 30 in one), both inputs staged as rows of 32 K terms (+8 halves of
// padding) in shared memory, terms past K = 40 as zeros. Each step of the K
// loop (two: 40 = 32 + 8) stores the carried slices, loads the next ones
// and runs two mma.sync deep on each warp's 2 x 2 fragments of 16 x 8:
// 8 mma.sync m16n8k16 on A and B fragments of two bf16 each, packed into
// i32 (the first in the low half), accumulating into f32. Outputs are
// stored where in range.
// CHECK-LABEL: func.func @matmul_bf16
// CHECK-SAME: (%[[A:.*]]: memref<100x40xbf16>, %[[B:.*]]: memref<40x30xbf16>, %[[C:.*]]: memref<100x30xf32>)
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{[^)]*}} = %[[TWO]], {{[^)]*}}) threads({{.*}}) in ({{[^)]*}} = %[[THREADS]], {{[^)]*}})
// CHECK-SAME: workgroup(%[[SA:.*]] : memref<64x40xbf16, #gpu.address_space<workgroup>>, %[[SB:.*]] : memref<32x40xbf16, #gpu.address_space<workgroup>>)
// CHECK-COUNT-16: memref.load %[[C]]
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : bf16
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[ZERO]] : bf16
// CHECK: %[[STEPS:.*]]:40 = scf.for %{{.*}} = %{{.*}} to %[[TWO]] step
// CHECK-COUNT-16: memref.store %{{.*}}, %[[SA]]
// CHECK-COUNT-8: memref.store %{{.*}}, %[[SB]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[SA]]
// CHECK-NEXT: arith.bitcast %{{.*}} : bf16 to i16
// CHECK-NEXT: arith.extui %{{.*}} : i16 to i32
// CHECK-NEXT: arith.shli
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-COUNT-7: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: gpu.barrier
// CHECK: scf.yield
// CHECK: scf.if
// CHECK-NEXT: memref.store %[[STEPS]]#0, %[[C]]
// SCALAR-LABEL: func.func @matmul_bf16
// SCALAR-NOT: nvvm.mma.sync
// SCALAR: workgroup(%{{.*}} : memref<16x65xbf16, #gpu.address_space<workgroup>>
// SCALAR-NOT: nvvm.mma.sync
func.func @matmul_bf16(%a: memref<100x40xbf16>, %b: memref<40x30xbf16>, %c: memref<100x30xf32>) {
  linalg.matmul ins(%a, %b : memref<100x40xbf16>, memref<40x30xbf16>) outs(%c : memref<100x30xf32>)
  return
}

// -----

// Tests an f16 convolution (implicit GEMM: M = 128 in two 64-row tiles,
// N = 8 in a 16-wide tile of one fragment per warp, K = 27 in one step,
// zero-padded to 32): accumulators start from the fill constant, and the
// fragments are vector<2xf16>.
// CHECK-LABEL: func.func @conv_f16
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%{{.*}} : memref<64x40xf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<16x40xf16, #gpu.address_space<workgroup>>)
// CHECK: llvm.bitcast %{{.*}} : i32 to vector<2xf16>
// CHECK: nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-COUNT-3: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: return
func.func @conv_f16(%x: memref<2x3x10x10xf16>, %w: memref<8x3x3x3xf16>, %y: memref<2x8x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x8x8x8xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : memref<2x3x10x10xf16>, memref<8x3x3x3xf16>) outs(%y : memref<2x8x8x8xf32>)
  return
}

// -----

// Tests that f32 contractions, and low-precision ones that do not
// accumulate in f32 exactly as out + a * b, keep the scalar kernel.
// CHECK-LABEL: func.func @matmul_f32
// CHECK-NOT: nvvm.mma.sync
// CHECK: workgroup(%{{.*}} : memref<16x65xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: nvvm.mma.sync
// CHECK-LABEL: func.func @matmul_bf16_out
// CHECK-NOT: nvvm.mma.sync
// CHECK: workgroup(%{{.*}} : memref<16x65xbf16, #gpu.address_space<workgroup>>
// CHECK-NOT: nvvm.mma.sync
func.func @matmul_f32(%a: memref<100x40xf32>, %b: memref<40x30xf32>, %c: memref<100x30xf32>) {
  linalg.matmul ins(%a, %b : memref<100x40xf32>, memref<40x30xf32>) outs(%c : memref<100x30xf32>)
  return
}
func.func @matmul_bf16_out(%a: memref<100x40xbf16>, %b: memref<40x30xbf16>, %c: memref<100x30xbf16>) {
  linalg.matmul ins(%a, %b : memref<100x40xbf16>, memref<40x30xbf16>) outs(%c : memref<100x30xbf16>)
  return
}

// -----

// Tests that a marked f16 convolution (traincc.channel_partials; M = 128 in
// two 64-row tiles, N = 8 in a 16-wide tile) sums its channels in the
// tensor-core kernel's epilogue: each thread holds two channels (2t and
// 2t + 1 of its fragment column) of 4 outputs each, and stores their sums
// in row 8 * (warp / 2) + groupID of the shared buffer; after a barrier,
// one thread per channel adds the 16 rows in order.
// CHECK-LABEL: func.func @conv_f16_partials
// CHECK-SAME: %[[P:[^:]*]]: memref<2x8xf32>)
// CHECK: gpu.launch blocks(%[[BX:[^,]*]], {{.*}}) threads(%[[T:[^,]*]],
// CHECK-SAME: workgroup(%{{.*}} : memref<64x40xf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<16x40xf16, #gpu.address_space<workgroup>>, %[[SP:.*]] : memref<16x16xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[WARP:.*]] = arith.divui %[[T]], %c32 : index
// CHECK: %[[LANE:.*]] = arith.remui %[[T]], %c32 : index
// CHECK: %[[GROUP:.*]] = arith.divui %[[LANE]], %c4 : index
// CHECK: %[[WARPM:.*]] = arith.divui %[[WARP]], %c2 : index
// CHECK: nvvm.mma.sync
// CHECK: %[[ROW:.*]] = arith.muli %[[WARPM]], %c8 : index
// CHECK: %[[OWNER:.*]] = arith.addi %[[ROW]], %[[GROUP]] : index
// CHECK-COUNT-2: memref.store %{{.*}}, %[[SP]][%[[OWNER]], %{{.*}}]
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for %{{.*}} = %c1 to %c16
// CHECK: memref.store %{{.*}}, %[[P]][%[[BX]], %{{.*}}] : memref<2x8xf32>
// CHECK-NOT: linalg
// CHECK: return
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#tiles = affine_map<(n, f, oh, ow, c, kh, kw) -> ((n * 64 + oh * 8 + ow) floordiv 64, f)>
func.func @conv_f16_partials(%x: memref<2x3x10x10xf16>, %w: memref<8x3x3x3xf16>, %y: memref<2x8x8x8xf32>, %p: memref<2x8xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out, #tiles], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<2x3x10x10xf16>, memref<8x3x3x3xf16>) outs(%y, %p : memref<2x8x8x8xf32>, memref<2x8xf32>) attrs = {traincc.channel_partials} {
  ^bb0(%a: f16, %b: f16, %acc: f32, %s: f32):
    %ea = arith.extf %a : f16 to f32
    %eb = arith.extf %b : f16 to f32
    %m = arith.mulf %ea, %eb : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r, %s : f32, f32
  }
  return
}
