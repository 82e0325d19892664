// RUN: traincc-opt %s -split-input-file -traincc-map-gpu-reductions | FileCheck %s
// RUN: traincc-opt %s -split-input-file -traincc-map-gpu-reductions="block-size=64" | FileCheck %s --check-prefix=SMALL
// RUN: traincc-opt %s -split-input-file -traincc-map-gpu-reductions="min-reduction=64" | FileCheck %s --check-prefix=FEW
// RUN: not traincc-opt %s -split-input-file -traincc-map-gpu-reductions="block-size=100" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: block-size must be a power of two from 2 to 1024

// Tests that a per-channel sum over N*H*W (a BatchNorm variance) becomes a
// launch with one block of 256 threads per channel: the per-channel mean is
// read once, each thread sums a strided share of the 2048 terms from 0 with
// the op's body, the block halves its active threads between barriers in a
// 256-element workgroup buffer, and thread 0 adds the total to the output.
// CHECK-LABEL: func.func @channel_variance
// CHECK-SAME: (%[[IN:.*]]: memref<8x4x16x16xf32>, %[[MEAN:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>)
// CHECK-NOT: linalg.generic
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C4]], %{{.*}}, %{{.*}}) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C256]], %{{.*}}, %{{.*}}) workgroup(%[[SH:.*]] : memref<256xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[M:.*]] = memref.load %[[MEAN]][%[[B]]]
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ACC:.*]] = scf.for %[[TERM:.*]] = %[[T]] to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[ZERO]]) -> (f32)
// CHECK: %[[X:.*]] = memref.load %[[IN]][%{{.*}}, %[[B]], %{{.*}}, %{{.*}}]
// CHECK: %[[D:.*]] = arith.subf %[[X]], %[[M]]
// CHECK: %[[SQ:.*]] = arith.mulf %[[D]], %[[D]]
// CHECK: %[[S:.*]] = arith.addf %[[A]], %[[SQ]]
// CHECK: scf.yield %[[S]]
// CHECK: memref.store %[[ACC]], %[[SH]][%[[T]]]
// CHECK-NEXT: gpu.barrier
// CHECK: %[[C128:.*]] = arith.constant 128 : index
// CHECK: %[[LOW:.*]] = arith.cmpi ult, %[[T]], %[[C128]]
// CHECK: scf.if %[[LOW]]
// CHECK: %[[OTHER:.*]] = arith.addi %[[T]]
// CHECK: %[[MINE:.*]] = memref.load %[[SH]][%[[T]]]
// CHECK: %[[THEIRS:.*]] = memref.load %[[SH]][%[[OTHER]]]
// CHECK: %[[PAIR:.*]] = arith.addf %[[MINE]], %[[THEIRS]]
// CHECK: memref.store %[[PAIR]], %[[SH]][%[[T]]]
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-6: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[T]]
// CHECK: scf.if %[[FIRST]]
// CHECK: %[[P0:.*]] = memref.load %[[SH]][%{{.*}}]
// CHECK: %[[P1:.*]] = memref.load %[[SH]][%{{.*}}]
// CHECK: %[[TOTAL:.*]] = arith.addf %[[P0]], %[[P1]]
// CHECK: %[[OLD:.*]] = memref.load %[[OUT]][%[[B]]]
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[TOTAL]]
// CHECK: memref.store %[[NEW]], %[[OUT]][%[[B]]]
// CHECK: gpu.terminator

// With 64 threads a block has 64 partials and six barriers (after the
// strided sums, then after the levels of 32 down to 2).
// SMALL-LABEL: func.func @channel_variance
// SMALL: gpu.launch {{.*}} workgroup(%{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>)
// SMALL-COUNT-6: gpu.barrier
// SMALL-NOT: gpu.barrier
// SMALL: gpu.terminator
#x = affine_map<(n, c, h, w) -> (n, c, h, w)>
#c = affine_map<(n, c, h, w) -> (c)>
func.func @channel_variance(%in: memref<8x4x16x16xf32>, %mean: memref<4xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [#x, #c, #c], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%in, %mean : memref<8x4x16x16xf32>, memref<4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%v: f32, %m: f32, %acc: f32):
    %d = arith.subf %v, %m : f32
    %sq = arith.mulf %d, %d : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a row maximum (the output second in the body, as the
// log-softmax lowering writes it) starts each thread from -inf and combines
// partials and the output with maximumf, keeping the operand order.
// CHECK-LABEL: func.func @row_max
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c16{{.*}}) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in {{.*}} workgroup(%[[SH:.*]] : memref<256xf32,
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: scf.for {{.*}} iter_args(%[[A:.*]] = %[[NINF]])
// CHECK: %[[X:.*]] = memref.load %{{.*}}[%[[B]], %{{.*}}] : memref<16x4096xf32>
// CHECK: arith.maximumf %[[X]], %[[A]]
// CHECK: gpu.barrier
// CHECK: %[[MINE:.*]] = memref.load %[[SH]][%[[T]]]
// CHECK: %[[THEIRS:.*]] = memref.load %[[SH]]
// CHECK: arith.maximumf %[[THEIRS]], %[[MINE]]
// CHECK: %[[OLD:.*]] = memref.load %{{.*}}[%[[B]]] : memref<16xf32>
// CHECK: %[[NEW:.*]] = arith.maximumf %{{.*}}, %[[OLD]]
// CHECK: memref.store %[[NEW]]
func.func @row_max(%x: memref<16x4096xf32>, %m: memref<16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<16x4096xf32>) outs(%m : memref<16xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %v, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Tests that a sum into a 0-d output (a loss summed over the batch) with
// fewer terms than min-reduction is left alone, and once min-reduction
// allows it becomes a single block of the next power of two threads (128
// for 100 terms).
// CHECK-LABEL: func.func @scalar_sum
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
// FEW-LABEL: func.func @scalar_sum
// FEW: %[[C1:.*]] = arith.constant 1 : index
// FEW: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[C1]], {{.*}} workgroup(%{{.*}} : memref<128xf32,
// FEW: memref.load %{{.*}}[] : memref<f32>
// FEW: memref.store %{{.*}}, %{{.*}}[] : memref<f32>
func.func @scalar_sum(%x: memref<100xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%x : memref<100xf32>) outs(%s : memref<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Tests that reductions this pass does not map stay linalg ops for
// traincc-map-to-gpu: too many outputs (they fill the GPU with a thread
// each), two outputs (the cross-entropy kernel), a body reading
// linalg.index, a body that is not associative (out - x), a product (no
// identity handled), an output used twice in the body, and a parallel op.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: gpu.launch
// CHECK-COUNT-7: linalg.generic
// CHECK-NOT: gpu.launch
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @left_alone(%big: memref<65537x256xf32>, %rows: memref<65537xf32>, %x: memref<4x1024xf32>, %a: memref<4xf32>, %b: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%big : memref<65537x256xf32>) outs(%rows : memref<65537xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x1024xf32>) outs(%a, %b : memref<4xf32>, memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32, %acc2: f32):
    %s = arith.addf %acc, %v : f32
    %m = arith.maximumf %acc2, %v : f32
    linalg.yield %s, %m : f32, f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x1024xf32>) outs(%a : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %p = arith.mulf %v, %jf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x1024xf32>) outs(%a : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.subf %acc, %v : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x1024xf32>) outs(%a : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.mulf %acc, %v : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x1024xf32>) outs(%a : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %p = arith.mulf %acc, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x1024xf32>) outs(%x : memref<4x1024xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %v : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that only public functions with static shapes are mapped: a private
// helper and a dynamically shaped sum stay as they are.
// CHECK-LABEL: func.func private @helper
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
func.func private @helper(%x: memref<4x1024xf32>, %a: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x1024xf32>) outs(%a : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  return
}
func.func @dynamic(%x: memref<4x?xf32>, %a: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x?xf32>) outs(%a : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a half-precision sum keeps its element type in the workgroup
// buffer and starts from a half zero.
// CHECK-LABEL: func.func @half_sum
// CHECK: gpu.launch {{.*}} workgroup(%{{.*}} : memref<256xf16, #gpu.address_space<workgroup>>)
// CHECK: arith.constant 0.000000e+00 : f16
// CHECK: arith.addf {{.*}} : f16
func.func @half_sum(%x: memref<2x512xf16>, %a: memref<2xf16>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x512xf16>) outs(%a : memref<2xf16>) {
  ^bb0(%v: f16, %acc: f16):
    %s = arith.addf %acc, %v : f16
    linalg.yield %s : f16
  }
  return
}

// -----

// Tests that a sum into an output zero-filled just before (BatchNorm
// statistics into a fresh buffer) starts from the fill's constant: the fill
// is gone and thread 0 adds the total to that constant without reading the
// output.
// CHECK-LABEL: func.func @filled_sum
// CHECK-SAME: (%{{.*}}: memref<8x4096xf32>, %[[OUT:.*]]: memref<8xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK-NOT: memref.load %[[OUT]][
// CHECK: %[[NEW:.*]] = arith.addf %[[ZERO]], %{{.*}} : f32
// CHECK-NEXT: memref.store %[[NEW]], %[[OUT]]
#xr = affine_map<(i, j) -> (i, j)>
#r = affine_map<(i, j) -> (i)>
func.func @filled_sum(%x: memref<8x4096xf32>, %s: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<8xf32>)
  linalg.generic {indexing_maps = [#xr, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x4096xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sum = arith.addf %acc, %v : f32
    linalg.yield %sum : f32
  }
  return
}
