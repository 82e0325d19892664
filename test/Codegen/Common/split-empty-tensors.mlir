// RUN: traincc-opt %s -split-input-file -traincc-split-empty-tensors | FileCheck %s

// Tests that in a step with a recomputed op, a tensor.empty that CSE shared
// between a forward op and a backward op becomes one per use, each placed
// before its user, so that bufferization gives them separate buffers.
// CHECK-LABEL: func.func @shared
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: %[[A:.*]] = linalg.generic {{.*}} outs(%[[E1]] : tensor<8xf32>)
// CHECK: %[[E2:.*]] = tensor.empty() {train.recomputed} : tensor<8xf32>
// CHECK: %[[E3:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[E3]] : tensor<8xf32>)
#map = affine_map<(d0) -> (d0)>
func.func @shared(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %r = tensor.empty() {train.recomputed} : tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %a, %b : tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests that a step without recomputed ops keeps its shared tensor.empty
// (its forward values live into the backward pass anyway).
// CHECK-LABEL: func.func @no_recomputation
// CHECK-COUNT-1: tensor.empty
// CHECK-NOT: tensor.empty
#map = affine_map<(d0) -> (d0)>
func.func @no_recomputation(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %a, %b : tensor<8xf32>, tensor<8xf32>
}
