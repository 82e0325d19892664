// RUN: traincc-opt %s -split-input-file -traincc-split-shared-fills | FileCheck %s

// Tests that a fill of zeros that CSE shared between two accumulating ops
// (and read by a third) becomes one fill per destination, each on its own
// tensor.empty and placed before its user, so that bufferization fills
// each destination in place instead of copying one filled buffer into
// both. The op that only reads the zeros keeps the original fill.
// CHECK-LABEL: func.func @shared_zeros
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[Z0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<4x8xf32>)
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[Z1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<4x8xf32>)
// CHECK-NEXT: linalg.matmul ins(%arg0, %arg1 : {{.*}}) outs(%[[Z1]] : tensor<4x8xf32>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[Z2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<4x8xf32>)
// CHECK-NEXT: %[[M:.*]] = linalg.matmul ins(%arg0, %arg2 : {{.*}}) outs(%[[Z2]] : tensor<4x8xf32>)
// CHECK: linalg.add ins(%[[M]], %[[Z0]] : {{.*}})
func.func @shared_zeros(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>, %c: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = linalg.matmul ins(%a, %c : tensor<4x16xf32>, tensor<16x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %2 = linalg.add ins(%1, %z : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Tests that a fill with one destination stays as it is.
// CHECK-LABEL: func.func @single
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT: linalg.fill
func.func @single(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
