// RUN: traincc-opt %s -split-input-file -traincc-tile-gpu-contractions -cse | FileCheck %s

// Tests that a matmul becomes one launch of 256-thread blocks over 64x32
// output tiles (M = 100 rounds up to two blocks, N = 30 to one 32-wide
// tile), staging 16-deep slices of both inputs in padded shared memory. The
// accumulators start from the output; the first slices are loaded before
// the K loop, and each step stores the slices it carries into shared
// memory, loads the next ones into registers and only then computes, so the
// loads overlap the arithmetic. The step loop (40 = 16 + 16 + 8) applies
// only the terms that exist in its last step, barriers fence the shared
// tiles, and only the outputs in range are stored.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: memref<100x40xf32>, %[[B:.*]]: memref<40x30xf32>, %[[C:.*]]: memref<100x30xf32>)
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[TWO]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]]) threads({{.*}}) in ({{.*}} = %[[THREADS]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]])
// CHECK-SAME: workgroup(%[[SA:.*]] : memref<16x65xf32, #gpu.address_space<workgroup>>, %[[SB:.*]] : memref<16x33xf32, #gpu.address_space<workgroup>>)
// CHECK-COUNT-8: memref.load %[[C]]
// CHECK-COUNT-4: memref.load %[[A]]
// CHECK-COUNT-2: memref.load %[[B]]
// CHECK: %[[STEPS:.*]]:14 = scf.for %[[STEP:.*]] = %{{.*}} to %{{.*}} step %[[ONE]] iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK-COUNT-4: memref.store %{{.*}}, %[[SA]]
// CHECK-COUNT-2: memref.store %{{.*}}, %[[SB]]
// CHECK: gpu.barrier
// CHECK-COUNT-4: memref.load %[[A]]
// CHECK-COUNT-2: memref.load %[[B]]
// CHECK: %[[LEFT:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK: %[[COUNT:.*]] = arith.minui %{{.*}}, %[[LEFT]] : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[COUNT]] step %[[ONE]]
// CHECK-COUNT-4: memref.load %[[SA]]
// CHECK-COUNT-2: memref.load %[[SB]]
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK-NEXT: memref.store %[[STEPS]]#0, %[[C]]
func.func @matmul(%a: memref<100x40xf32>, %b: memref<40x30xf32>, %c: memref<100x30xf32>) {
  linalg.matmul ins(%a, %b : memref<100x40xf32>, memref<40x30xf32>) outs(%c : memref<100x30xf32>)
  return
}

// -----

// Tests that a convolution is an implicit GEMM: M = (n, oh, ow) = 128 in
// two 64-row tiles, N = f = 8 in one 16-wide tile, K = (c, kh, kw) = 27 in
// two steps. The input is staged along M (its innermost index follows ow,
// so neighbouring threads load neighbouring elements), the filter along K
// (its innermost index is kw), and the padded-window index is the op's own
// indexing map.
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d2 + d5)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3 + d6)>
// CHECK-LABEL: func.func @conv
// CHECK-SAME: (%[[X:.*]]: memref<2x3x10x10xf32>, %[[W:.*]]: memref<8x3x3x3xf32>, %[[Y:.*]]: memref<2x8x8x8xf32>)
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c1, {{.*}} = %c1)
// CHECK-SAME: workgroup(%[[SX:.*]] : memref<16x65xf32, #gpu.address_space<workgroup>>, %[[SW:.*]] : memref<16x17xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[TX:.*]] = arith.remui %{{.*}}, %c16 : index
// CHECK: %[[TY:.*]] = arith.divui %{{.*}}, %c16 : index
// CHECK: %[[M:.*]] = arith.remui %{{.*}}, %c64 : index
// CHECK: %[[K:.*]] = arith.divui %{{.*}}, %c64 : index
// CHECK: affine.apply #[[ROW]]
// CHECK: affine.apply #[[COL]]
// CHECK: memref.load %[[X]]
// CHECK: memref.load %[[W]]
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[SX]][%[[K]], %[[M]]]
// CHECK: memref.store %{{.*}}, %[[SW]][%[[TX]], %[[TY]]]
// CHECK: gpu.barrier
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
func.func @conv(%x: memref<2x3x10x10xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x8x8x8xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<2x3x10x10xf32>, memref<8x3x3x3xf32>) outs(%y : memref<2x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that loops both inputs use are batches, one per block along z (a
// filter gradient split per sample: 4 samples, each a 72 x 8 x 36 GEMM).
// CHECK-LABEL: func.func @batched
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %[[BZ:.*]]) in ({{.*}} = %c2, {{.*}} = %c1, {{.*}} = %c4)
// CHECK: memref.load %{{.*}}[%[[BZ]],
#x = affine_map<(n, f, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#dy = affine_map<(n, f, c, kh, kw, oh, ow) -> (n, f, oh, ow)>
#p = affine_map<(n, f, c, kh, kw, oh, ow) -> (n, f, c, kh, kw)>
func.func @batched(%x: memref<4x8x8x8xf32>, %dy: memref<4x8x6x6xf32>, %partial: memref<4x8x8x3x3xf32>) {
  linalg.generic {indexing_maps = [#x, #dy, #p], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %dy : memref<4x8x8x8xf32>, memref<4x8x6x6xf32>) outs(%partial : memref<4x8x8x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests what is left to traincc-map-to-gpu: a contraction too small for a
// tile, a matrix-vector product (N = 1 would idle 15 of 16 threads), a sum
// of one input, two inputs without a reduction, and private functions (not
// GPU steps).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: gpu.launch
// CHECK: linalg.matmul
// CHECK: linalg.matvec
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-LABEL: func.func private @helper
// CHECK-NOT: gpu.launch
// CHECK: linalg.matmul
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @left_alone(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>,
                      %big: memref<512x512xf32>, %sums: memref<512xf32>, %sq: memref<512x512xf32>) {
  linalg.matmul ins(%a, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  linalg.matvec ins(%big, %sums : memref<512x512xf32>, memref<512xf32>) outs(%sums : memref<512xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%big : memref<512x512xf32>) outs(%sums : memref<512xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%big, %big : memref<512x512xf32>, memref<512x512xf32>) outs(%sq : memref<512x512xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %p = arith.mulf %u, %v : f32
    linalg.yield %p : f32
  }
  return
}
func.func private @helper(%a: memref<128x128xf32>, %c: memref<128x128xf32>) {
  linalg.matmul ins(%a, %a : memref<128x128xf32>, memref<128x128xf32>) outs(%c : memref<128x128xf32>)
  return
}

// -----

// Tests that an output zero-filled just before (views in between) is not
// filled by a kernel of its own and read back: the accumulators start from
// the fill's constant and the fill is gone. A fill of another buffer, or
// one with a write in between, stays.
// CHECK-LABEL: func.func @filled
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[OUT:.*]] = memref.view
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK-NOT: memref.load %[[OUT]][
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]],
// CHECK: memref.store %{{.*}}, %[[OUT]]
// CHECK-LABEL: func.func @filled_elsewhere
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<64x64xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<64x64xf32>)
// CHECK: memref.store
// CHECK: gpu.launch
func.func @filled(%ws: memref<16384xi8>, %a: memref<64x64xf32>, %b: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %out = memref.view %ws[%c0][] : memref<16384xi8> to memref<64x64xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<64x64xf32>)
  %a2 = memref.subview %a[0, 0] [64, 64] [1, 1] : memref<64x64xf32> to memref<64x64xf32, strided<[64, 1]>>
  linalg.matmul ins(%a2, %b : memref<64x64xf32, strided<[64, 1]>>, memref<64x64xf32>) outs(%out : memref<64x64xf32>)
  return
}
func.func @filled_elsewhere(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>, %d: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  linalg.fill ins(%zero : f32) outs(%d : memref<64x64xf32>)
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
  memref.store %one, %c[%c0, %c0] : memref<64x64xf32>
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// Tests that a convolution marked traincc.channel_partials (M = (n, oh, ow)
// = 128 in two 64-row tiles, N = 8 in a 16-wide tile: 4 outputs of one
// channel per thread) sums its channels in the kernel's epilogue: each
// thread adds its outputs in range (the others selected away) and stores
// the sum in the row of its position along M (thread % 16: neighbouring
// threads hold neighbouring pixels, the output's contiguous dimension) of
// a 16 x 16 shared buffer; after a barrier, thread t
// of the channels in range adds the 16 rows of column t in order and
// stores the block's partial at [block x, channel]. No sum is left after
// the kernel.
// CHECK-LABEL: func.func @channel_partials
// CHECK-SAME: %[[P:[^:]*]]: memref<2x8xf32>)
// CHECK: gpu.launch blocks(%[[BX:[^,]*]], {{.*}}) in ({{.*}} = %c2, {{.*}} = %c1, {{.*}} = %c1) threads(%[[T:[^,]*]],
// CHECK-SAME: workgroup(%{{.*}} : memref<16x65xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16x17xf32, #gpu.address_space<workgroup>>, %[[SP:.*]] : memref<16x16xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[OWNER:.*]] = arith.remui %[[T]], %c16 : index
// CHECK: %[[STEPS:.*]]:{{[0-9]+}} = scf.for
// CHECK: memref.store %[[STEPS]]#3, %arg2
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[S0:.*]] = arith.select %{{.*}}, %[[STEPS]]#0, %[[ZERO]] : f32
// CHECK-NEXT: %[[A0:.*]] = arith.addf %[[ZERO]], %[[S0]] : f32
// CHECK-NEXT: %[[S1:.*]] = arith.select %{{.*}}, %[[STEPS]]#1, %[[ZERO]] : f32
// CHECK-NEXT: %[[A1:.*]] = arith.addf %[[A0]], %[[S1]] : f32
// CHECK-COUNT-2: arith.addf
// CHECK: memref.store %{{.*}}, %[[SP]][%[[OWNER]], %{{.*}}]
// CHECK-NEXT: gpu.barrier
// CHECK: %[[CHANNEL:.*]] = arith.addi %{{.*}}, %[[T]] : index
// CHECK: scf.if
// CHECK-NEXT: %[[FIRST:.*]] = memref.load %[[SP]][%c0, %[[T]]]
// CHECK-NEXT: %[[SUM:.*]] = scf.for %[[ROW:.*]] = %c1 to %c16 step %c1 iter_args(%[[ACC:.*]] = %[[FIRST]]) -> (f32)
// CHECK-NEXT: %[[V:.*]] = memref.load %[[SP]][%[[ROW]], %[[T]]]
// CHECK-NEXT: arith.addf %[[ACC]], %[[V]] : f32
// CHECK: memref.store %[[SUM]], %[[P]][%[[BX]], %[[CHANNEL]]] : memref<2x8xf32>
// CHECK-NOT: linalg
// CHECK: return
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#tiles = affine_map<(n, f, oh, ow, c, kh, kw) -> ((n * 64 + oh * 8 + ow) floordiv 64, f)>
func.func @channel_partials(%x: memref<2x3x10x10xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x8x8x8xf32>, %p: memref<2x8xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out, #tiles], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<2x3x10x10xf32>, memref<8x3x3x3xf32>) outs(%y, %p : memref<2x8x8x8xf32>, memref<2x8xf32>) attrs = {traincc.channel_partials} {
  ^bb0(%a: f32, %b: f32, %acc: f32, %s: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r, %s : f32, f32
  }
  return
}

// -----

// Tests that a convolution also marked traincc.channel_moments computes
// the moments of the same partials: each thread also stores the count of
// its outputs in range and their squares around their own mean (the
// sum over the count), in two more 16 x 16 shared buffers; after the
// barrier, thread t merges the 16 rows of column t in order with Chan's
// formula (the means' squared distance weighted by n * n' / (n + n')) and
// stores the block's sum, count and m2 at [block x, channel].
// CHECK-LABEL: func.func @channel_moments
// CHECK-SAME: %[[P:[^:]*]]: memref<2x8xf32>, %[[K:[^:]*]]: memref<2x8xf32>, %[[Q:[^:]*]]: memref<2x8xf32>)
// CHECK: gpu.launch blocks(%[[BX:[^,]*]], {{.*}} threads(%[[T:[^,]*]],
// CHECK-SAME: %[[SP:[^ ]*]] : memref<16x16xf32, #gpu.address_space<workgroup>>, %[[SK:[^ ]*]] : memref<16x16xf32, #gpu.address_space<workgroup>>, %[[SQ:[^ ]*]] : memref<16x16xf32, #gpu.address_space<workgroup>>)
// CHECK: memref.store %[[SUM:.*]], %[[SP]][
// CHECK: %[[AT_LEAST:.*]] = arith.maximumf %[[COUNT:.*]], %{{.*}} : f32
// CHECK: %[[MEAN:.*]] = arith.divf %[[SUM]], %[[AT_LEAST]] : f32
// CHECK: %[[D:.*]] = arith.subf %{{.*}}, %[[MEAN]] : f32
// CHECK: %[[C:.*]] = arith.select %{{.*}}, %[[D]], %{{.*}} : f32
// CHECK: arith.mulf %[[C]], %[[C]] : f32
// CHECK: memref.store %[[COUNT]], %[[SK]][
// CHECK: memref.store %{{.*}}, %[[SQ]][
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for %{{.*}} = %c1 to %c16 step %c1 iter_args(%[[S:.*]] = %{{.*}}, %[[N:.*]] = %{{.*}}, %[[M:.*]] = %{{.*}}) -> (f32, f32, f32)
// CHECK: %[[RS:.*]] = memref.load %[[SP]]
// CHECK: %[[RN:.*]] = memref.load %[[SK]]
// CHECK: %[[RM:.*]] = memref.load %[[SQ]]
// CHECK: %[[NEWS:.*]] = arith.addf %[[S]], %[[RS]] : f32
// CHECK: %[[MA:.*]] = arith.divf %[[S]],
// CHECK: %[[MR:.*]] = arith.divf %[[RS]],
// CHECK: %[[DELTA:.*]] = arith.subf %[[MR]], %[[MA]] : f32
// CHECK: %[[NEWN:.*]] = arith.addf %[[N]], %[[RN]] : f32
// CHECK: %[[NN:.*]] = arith.mulf %[[N]], %[[RN]] : f32
// CHECK: %[[W:.*]] = arith.divf %[[NN]],
// CHECK: %[[BOTH:.*]] = arith.addf %[[M]], %[[RM]] : f32
// CHECK: %[[DD:.*]] = arith.mulf %[[DELTA]], %[[DELTA]] : f32
// CHECK: %[[SPREAD:.*]] = arith.mulf %[[DD]], %[[W]] : f32
// CHECK: %[[NEWM:.*]] = arith.addf %[[BOTH]], %[[SPREAD]] : f32
// CHECK: scf.yield %[[NEWS]], %[[NEWN]], %[[NEWM]] : f32, f32, f32
// CHECK: memref.store %{{.*}}#0, %[[P]][%[[BX]],
// CHECK: memref.store %{{.*}}#1, %[[K]][%[[BX]],
// CHECK: memref.store %{{.*}}#2, %[[Q]][%[[BX]],
// CHECK-NOT: linalg
// CHECK: return
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#tiles = affine_map<(n, f, oh, ow, c, kh, kw) -> ((n * 64 + oh * 8 + ow) floordiv 64, f)>
func.func @channel_moments(%x: memref<2x3x10x10xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x8x8x8xf32>, %p: memref<2x8xf32>, %k: memref<2x8xf32>, %q: memref<2x8xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out, #tiles, #tiles, #tiles], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<2x3x10x10xf32>, memref<8x3x3x3xf32>) outs(%y, %p, %k, %q : memref<2x8x8x8xf32>, memref<2x8xf32>, memref<2x8xf32>, memref<2x8xf32>) attrs = {traincc.channel_moments, traincc.channel_partials} {
  ^bb0(%a: f32, %b: f32, %acc: f32, %s: f32, %n: f32, %m2: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r, %s, %n, %m2 : f32, f32, f32, f32
  }
  return
}

// -----

// Tests that a convolution with moments too small for a tiled kernel
// (N = 4) gets, after it, the partials' sum, then the counts (one per
// output) and the squares around the sums over the counts, each zero
// filled first.
// CHECK-LABEL: func.func @moments_too_small
// CHECK: linalg.generic
// CHECK-SAME: outs(%arg2 : memref<1x4x4x4xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg3 : memref<1x4xf32>)
// CHECK: ins(%arg2 : memref<1x4x4x4xf32>) outs(%arg3 : memref<1x4xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg4 : memref<1x4xf32>)
// CHECK: ins(%arg2 : memref<1x4x4x4xf32>) outs(%arg4 : memref<1x4xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg5 : memref<1x4xf32>)
// CHECK: ins(%arg2, %arg3, %arg4 : memref<1x4x4x4xf32>, memref<1x4xf32>, memref<1x4xf32>) outs(%arg5 : memref<1x4xf32>)
// CHECK: arith.divf
// CHECK-NOT: traincc.channel
// CHECK: return
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#one = affine_map<(n, f, oh, ow, c, kh, kw) -> (0, f)>
func.func @moments_too_small(%x: memref<1x3x6x6xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x4x4xf32>, %p: memref<1x4xf32>, %k: memref<1x4xf32>, %q: memref<1x4xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out, #one, #one, #one], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x3x6x6xf32>, memref<4x3x3x3xf32>) outs(%y, %p, %k, %q : memref<1x4x4x4xf32>, memref<1x4xf32>, memref<1x4xf32>, memref<1x4xf32>) attrs = {traincc.channel_moments, traincc.channel_partials} {
  ^bb0(%a: f32, %b: f32, %acc: f32, %s: f32, %n: f32, %m2: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r, %s, %n, %m2 : f32, f32, f32, f32
  }
  return
}

// -----

// Tests the marked convolutions whose partials the kernel does not
// compute: one too small for a tiled kernel (N = 4), and one whose
// partials are not the kernel's tiles (32 positions each). Each becomes the
// convolution alone (its other marks kept), then a zero fill of the
// partials and a sum of the output into them by the mark's map.
// CHECK-DAG: #[[ONE:.*]] = affine_map<(d0, d1, d2, d3) -> (0, d1)>
// CHECK-DAG: #[[HALF:.*]] = affine_map<(d0, d1, d2, d3) -> ((d0 * 64 + d2 * 8 + d3) floordiv 32, d1)>
// CHECK-LABEL: func.func @too_small
// CHECK: linalg.generic
// CHECK-SAME: outs(%arg2 : memref<1x4x4x4xf32>) attrs = {traincc.zero_init}
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg3 : memref<1x4xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[ONE]]], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%arg2 : memref<1x4x4x4xf32>) outs(%arg3 : memref<1x4xf32>)
// CHECK-LABEL: func.func @other_tiles
// CHECK: gpu.launch
// CHECK-NOT: memref.store %{{.*}}, %arg3
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg3 : memref<4x8xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[HALF]]], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%arg2 : memref<2x8x8x8xf32>) outs(%arg3 : memref<4x8xf32>)
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#one = affine_map<(n, f, oh, ow, c, kh, kw) -> (0, f)>
#half = affine_map<(n, f, oh, ow, c, kh, kw) -> ((n * 64 + oh * 8 + ow) floordiv 32, f)>
func.func @too_small(%x: memref<1x3x6x6xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x4x4xf32>, %p: memref<1x4xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out, #one], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x3x6x6xf32>, memref<4x3x3x3xf32>) outs(%y, %p : memref<1x4x4x4xf32>, memref<1x4xf32>) attrs = {traincc.channel_partials, traincc.zero_init} {
  ^bb0(%a: f32, %b: f32, %acc: f32, %s: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r, %s : f32, f32
  }
  return
}
func.func @other_tiles(%x: memref<2x3x10x10xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x8x8x8xf32>, %p: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out, #half], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<2x3x10x10xf32>, memref<8x3x3x3xf32>) outs(%y, %p : memref<2x8x8x8xf32>, memref<4x8xf32>) attrs = {traincc.channel_partials} {
  ^bb0(%a: f32, %b: f32, %acc: f32, %s: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r, %s : f32, f32
  }
  return
}

// -----

// Tests that a convolution marked traincc.epilogue applies the op after it
// (a ReLU mask that also adds BatchNorm's two backward terms into partials
// per 64-position M tile and channel) to each finished accumulator: the
// kernel loads the mask's other inputs at the output's position, stores
// the masked value into the mask's output and nothing into the
// convolution's, and sums each channel's two terms through two 16 x 16
// shared buffers into its block's partials. Neither the mask nor the
// partials' zero fills are left.
// CHECK-LABEL: func.func @epilogue
// CHECK-SAME: (%{{[^:]*}}: memref<2x3x10x10xf32>, %{{[^:]*}}: memref<8x3x3x3xf32>, %[[DX:[^:]*]]: memref<2x8x8x8xf32>, %[[Y:[^:]*]]: memref<2x8x8x8xf32>, %[[A:[^:]*]]: memref<2x8x8x8xf32>, %[[MEAN:[^:]*]]: memref<8xf32>, %[[G:[^:]*]]: memref<2x8x8x8xf32>, %[[P1:[^:]*]]: memref<2x8xf32>, %[[P2:[^:]*]]: memref<2x8xf32>)
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK-SAME: workgroup({{.*}}, %[[S1:[^ ]*]] : memref<16x16xf32, #gpu.address_space<workgroup>>, %[[S2:[^ ]*]] : memref<16x16xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: memref.store %{{.*}}, %[[DX]][
// CHECK: memref.load %[[Y]]
// CHECK: memref.load %[[A]]
// CHECK: memref.load %[[MEAN]]
// CHECK: arith.cmpf ogt
// CHECK: arith.select
// CHECK: scf.if
// CHECK-NEXT: memref.store %{{.*}}, %[[G]]
// CHECK-NOT: memref.store %{{.*}}, %[[DX]][
// CHECK: memref.store %{{.*}}, %[[S1]]
// CHECK: memref.store %{{.*}}, %[[S2]]
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[P1]]
// CHECK: memref.store %{{.*}}, %[[P2]]
// CHECK-NOT: linalg
// CHECK: return
#ep = affine_map<(n, f, oh, ow) -> (n, f, oh, ow)>
#epc = affine_map<(n, f, oh, ow) -> (f)>
#ept = affine_map<(n, f, oh, ow) -> ((n * 64 + oh * 8 + ow) floordiv 64, f)>
func.func @epilogue(%x: memref<2x3x10x10xf32>, %w: memref<8x3x3x3xf32>, %dx: memref<2x8x8x8xf32>, %y: memref<2x8x8x8xf32>, %a: memref<2x8x8x8xf32>, %mean: memref<8xf32>, %g: memref<2x8x8x8xf32>, %p1: memref<2x8xf32>, %p2: memref<2x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%p1 : memref<2x8xf32>)
  linalg.fill ins(%zero : f32) outs(%p2 : memref<2x8xf32>)
  linalg.fill ins(%zero : f32) outs(%dx : memref<2x8x8x8xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, traincc.epilogue}
      ins(%x, %w : memref<2x3x10x10xf32>, memref<8x3x3x3xf32>) outs(%dx : memref<2x8x8x8xf32>)
  linalg.generic {indexing_maps = [#ep, #ep, #ep, #epc, #ep, #ept, #ept], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dx, %y, %a, %mean : memref<2x8x8x8xf32>, memref<2x8x8x8xf32>, memref<2x8x8x8xf32>, memref<8xf32>)
      outs(%g, %p1, %p2 : memref<2x8x8x8xf32>, memref<2x8xf32>, memref<2x8xf32>) {
  ^bb0(%d: f32, %yv: f32, %av: f32, %m: f32, %o: f32, %s1: f32, %s2: f32):
    %pos = arith.cmpf ogt, %yv, %zero : f32
    %masked = arith.select %pos, %d, %zero : f32
    %t1 = arith.addf %s1, %masked : f32
    %centred = arith.subf %av, %m : f32
    %prod = arith.mulf %masked, %centred : f32
    %t2 = arith.addf %s2, %prod : f32
    linalg.yield %masked, %t1, %t2 : f32, f32, f32
  }
  return
}

// -----

// Tests that an epilogue whose partials are not the kernel's blocks (tiles
// of 32 positions) stays apart: the kernel stores the convolution's output
// and the mask reads it after.
// CHECK-LABEL: func.func @epilogue_apart
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg4 : memref<4x8xf32>)
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %arg2[
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg2, %arg3 : memref<2x8x8x8xf32>, memref<2x8x8x8xf32>) outs(%arg5, %arg4 : memref<2x8x8x8xf32>, memref<4x8xf32>)
#ep = affine_map<(n, f, oh, ow) -> (n, f, oh, ow)>
#half = affine_map<(n, f, oh, ow) -> ((n * 64 + oh * 8 + ow) floordiv 32, f)>
func.func @epilogue_apart(%x: memref<2x3x10x10xf32>, %w: memref<8x3x3x3xf32>, %dx: memref<2x8x8x8xf32>, %y: memref<2x8x8x8xf32>, %p: memref<4x8xf32>, %g: memref<2x8x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%p : memref<4x8xf32>)
  linalg.fill ins(%zero : f32) outs(%dx : memref<2x8x8x8xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, traincc.epilogue}
      ins(%x, %w : memref<2x3x10x10xf32>, memref<8x3x3x3xf32>) outs(%dx : memref<2x8x8x8xf32>)
  linalg.generic {indexing_maps = [#ep, #ep, #ep, #half], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dx, %y : memref<2x8x8x8xf32>, memref<2x8x8x8xf32>) outs(%g, %p : memref<2x8x8x8xf32>, memref<4x8xf32>) {
  ^bb0(%d: f32, %yv: f32, %o: f32, %s: f32):
    %pos = arith.cmpf ogt, %yv, %zero : f32
    %masked = arith.select %pos, %d, %zero : f32
    %t = arith.addf %s, %masked : f32
    linalg.yield %masked, %t : f32, f32
  }
  return
}
