// RUN: traincc-opt %s -split-input-file -traincc-order-gpu-loops | FileCheck %s

// Tests that a split sum's second stage (partials [R, C] summed over R, the
// reduction loop first) gets its parallel loop first: one GPU thread per
// channel instead of one thread for every channel. The maps are renumbered,
// the body is unchanged.
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @second_stage
// CHECK: linalg.generic {indexing_maps = [#[[P]], #[[C]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%{{.*}} : memref<8x64xf32>) outs(%{{.*}} : memref<64xf32>)
// CHECK: arith.addf
#p = affine_map<(r, c) -> (r, c)>
#c = affine_map<(r, c) -> (c)>
func.func @second_stage(%partial: memref<8x64xf32>, %out: memref<64xf32>) {
  linalg.generic {indexing_maps = [#p, #c], iterator_types = ["reduction", "parallel"]}
      ins(%partial : memref<8x64xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that an op summing image rows into partials [n, c, w] while it
// writes every point (traincc-fuse-sums-into-producers' merged op) keeps its
// parallel loops in order and gets the row loop innermost: one thread per
// [n, c, w], neighbouring threads on neighbouring w.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
// CHECK-DAG: #[[PART:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @row_partials
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[X]], #[[PART]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
#x = affine_map<(n, c, h, w) -> (n, c, h, w)>
#part = affine_map<(n, c, h, w) -> (n, c, w)>
func.func @row_partials(%g: memref<2x3x8x8xf32>, %dy: memref<2x3x8x8xf32>,
                        %partial: memref<2x3x8xf32>) {
  linalg.generic {indexing_maps = [#x, #x, #part], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%g : memref<2x3x8x8xf32>) outs(%dy, %partial : memref<2x3x8x8xf32>, memref<2x3x8xf32>) {
  ^bb0(%v: f32, %out: f32, %acc: f32):
    %zero = arith.constant 0.0 : f32
    %m = arith.maximumf %v, %zero : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %m, %s : f32, f32
  }
  return
}

// -----

// Tests that linalg.index follows its loop to the new position.
// CHECK-DAG: #[[SECOND:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @index
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: %[[I0:.*]] = linalg.index 0 : index
// CHECK: %[[I1:.*]] = linalg.index 1 : index
// CHECK: %[[R:.*]] = affine.apply #[[SECOND]](%[[I0]], %[[I1]])
// CHECK: arith.index_cast %[[R]]
#p = affine_map<(r, c) -> (r, c)>
#c = affine_map<(r, c) -> (c)>
func.func @index(%in: memref<8x64xf32>, %out: memref<64xf32>) {
  linalg.generic {indexing_maps = [#p, #c], iterator_types = ["reduction", "parallel"]}
      ins(%in : memref<8x64xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = linalg.index 0 : index
    %ri = arith.index_cast %r : index to i32
    %rf = arith.sitofp %ri : i32 to f32
    %t = arith.mulf %v, %rf : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that ops whose reduction loops are already innermost, ops without
// parallel loops (one thread whatever the order) and ops on tensors are
// left alone.
// CHECK-LABEL: func.func @left_alone
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: iterator_types = ["reduction", "reduction"]
// CHECK: iterator_types = ["reduction", "parallel"]
#id = affine_map<(i, j) -> (i, j)>
#i = affine_map<(i, j) -> (i)>
#j = affine_map<(i, j) -> (j)>
#s = affine_map<(i, j) -> ()>
func.func @left_alone(%in: memref<8x64xf32>, %rows: memref<8xf32>,
                      %total: memref<f32>, %t: tensor<8x64xf32>,
                      %tout: tensor<64xf32>) -> tensor<64xf32> {
  linalg.generic {indexing_maps = [#id, #i], iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<8x64xf32>) outs(%rows : memref<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction", "reduction"]}
      ins(%in : memref<8x64xf32>) outs(%total : memref<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  %r = linalg.generic {indexing_maps = [#id, #j], iterator_types = ["reduction", "parallel"]}
      ins(%t : tensor<8x64xf32>) outs(%tout : tensor<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
