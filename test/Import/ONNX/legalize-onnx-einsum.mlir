// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx | FileCheck %s

// Tests that attention's Einsum "bhid,bhjd->bhij" is one batched matmul:
// the second operand transposed to [batch, contracted, own] and both
// flattened to three axes, the result reshaped back.

// CHECK-LABEL: func.func @scores
// CHECK: %[[A:.*]] = train.reshape %arg0 : tensor<2x3x4x5xf32> -> tensor<6x4x5xf32>
// CHECK: %[[BT:.*]] = train.transpose %arg1 perm [0, 1, 3, 2] : (tensor<2x3x6x5xf32>) -> tensor<2x3x5x6xf32>
// CHECK: %[[B:.*]] = train.reshape %[[BT]] : tensor<2x3x5x6xf32> -> tensor<6x5x6xf32>
// CHECK: %[[M:.*]] = train.matmul %[[A]], %[[B]] : (tensor<6x4x5xf32>, tensor<6x5x6xf32>) -> tensor<6x4x6xf32>
// CHECK: %[[Y:.*]] = train.reshape %[[M]] : tensor<6x4x6xf32> -> tensor<2x3x4x6xf32>
// CHECK-NOT: train.transpose
// CHECK: return %[[Y]]
func.func @scores(%q: tensor<2x3x4x5xf32>, %k: tensor<2x3x6x5xf32>) -> tensor<*xf32> {
  %0 = train.onnx_node "Einsum"(%q, %k) {node_name = "e", onnx_attrs = {equation = "bhid,bhjd->bhij"}} : (tensor<2x3x4x5xf32>, tensor<2x3x6x5xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Tests that a single operand is permuted, and that an output order other
// than [batch, own A, own B] is a final transpose.

// CHECK-LABEL: func.func @permutes
// CHECK: train.transpose %arg0 perm [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK: %[[M:.*]] = train.matmul
// CHECK: train.transpose %{{.*}} perm [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
func.func @permutes(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %0 = train.onnx_node "Einsum"(%x) {node_name = "t", onnx_attrs = {equation = "ij->ji"}} : (tensor<2x3xf32>) -> tensor<*xf32>
  %1 = train.onnx_node "Einsum"(%x, %w) {node_name = "p", onnx_attrs = {equation = "ij, jk -> ki"}} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}
