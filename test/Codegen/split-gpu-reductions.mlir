// RUN: traincc-opt %s -split-input-file -traincc-split-gpu-reductions | FileCheck %s

// Tests that a per-channel sum over N*H*W (BatchNorm statistics) becomes a
// zero-filled partial sum per (n, c), with n now parallel, and a final sum
// over n added into the original output.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @channel_sums
// CHECK-SAME: (%[[IN:.*]]: memref<8x4x16x16xf32>, %[[OUT:.*]]: memref<4xf32>)
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<8x4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[PARTIAL]] : memref<8x4xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[P]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[IN]] : {{.*}}) outs(%[[PARTIAL]] : {{.*}})
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[ID2]], #[[C]]], iterator_types = ["reduction", "parallel"]} ins(%[[PARTIAL]] : memref<8x4xf32>) outs(%[[OUT]] : memref<4xf32>)
// CHECK: ^bb0(%[[PART:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[SUM:.*]] = arith.addf %[[ACC]], %[[PART]] : f32
// CHECK: linalg.yield %[[SUM]]
#x = affine_map<(n, c, h, w) -> (n, c, h, w)>
#c = affine_map<(n, c, h, w) -> (c)>
func.func @channel_sums(%in: memref<8x4x16x16xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [#x, #c], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%in : memref<8x4x16x16xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that sums with many outputs, few terms, a single reduction loop,
// or a body that is not `out + f(inputs)` (a maximum) stay as they are.
// CHECK-LABEL: func.func @unchanged
// CHECK-NOT: memref.alloc
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @unchanged(%a: memref<65536x512xf32>, %rows: memref<65536xf32>, %b: memref<4x1024xf32>, %m: memref<4xf32>, %c: memref<4x32x32xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<65536x512xf32>) outs(%rows : memref<65536xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b : memref<4x1024xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i)>], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%c : memref<4x32x32xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.maximumf %acc, %v : f32
    linalg.yield %s : f32
  }
  return
}
