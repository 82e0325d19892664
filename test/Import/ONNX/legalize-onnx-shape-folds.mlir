// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx | FileCheck %s

// Tests that Mod folds with broadcasting: fmod=0 gives the divisor's sign
// (Python's %), fmod=1 the dividend's (C's fmod), for integers and floats.

// CHECK-LABEL: func.func @mod
// CHECK-DAG: train.constant dense<[1, 2, 0, -2]> : tensor<4xi64>
// CHECK-DAG: train.constant dense<[1, -1, 0, -2]> : tensor<4xi64>
// CHECK-DAG: train.constant dense<[1.500000e+00, -1.500000e+00]> : tensor<2xf32>
// CHECK-NOT: train.onnx_node
func.func @mod() -> (tensor<*xi64>, tensor<*xi64>, tensor<*xf32>) {
  %a = train.constant dense<[7, -7, 6, -2]> : tensor<4xi64>
  %b = train.constant dense<[3, 3, 3, -3]> : tensor<4xi64>
  %python = train.onnx_node "Mod"(%a, %b) {node_name = "m0", onnx_attrs = {}} : (tensor<4xi64>, tensor<4xi64>) -> tensor<*xi64>
  %c = train.onnx_node "Mod"(%a, %b) {node_name = "m1", onnx_attrs = {fmod = 1 : i64}} : (tensor<4xi64>, tensor<4xi64>) -> tensor<*xi64>
  %x = train.constant dense<[5.5, -5.5]> : tensor<2xf32>
  %y = train.constant dense<2.0> : tensor<f32>
  %f = train.onnx_node "Mod"(%x, %y) {node_name = "m2", onnx_attrs = {fmod = 1 : i64}} : (tensor<2xf32>, tensor<f32>) -> tensor<*xf32>
  return %python, %c, %f : tensor<*xi64>, tensor<*xi64>, tensor<*xf32>
}

// -----

// Tests the sub-graph torchvision's swin builds its shifted-window mask
// with: ScatterND writes region ids into a zero tensor (index tuples that
// address rows, and single elements with a negative index), and Not of
// Equal marks the differing pairs; all of it folds.

// CHECK-LABEL: func.func @swin_mask
// CHECK-DAG: train.constant dense<{{\[}}[0, 0, 0], [1, 1, 1], [0, 0, 2]]> : tensor<3x3xi64>
// CHECK-DAG: train.constant dense<[false, true, false]> : tensor<3xi1>
// CHECK-NOT: train.onnx_node
func.func @swin_mask() -> (tensor<*xi64>, tensor<*xi1>) {
  %zeros = train.constant dense<0> : tensor<3x3xi64>
  %rows = train.constant dense<[[1]]> : tensor<1x1xi64>
  %ones = train.constant dense<[[1, 1, 1]]> : tensor<1x3xi64>
  %s0 = train.onnx_node "ScatterND"(%zeros, %rows, %ones) {node_name = "s0", onnx_attrs = {}} : (tensor<3x3xi64>, tensor<1x1xi64>, tensor<1x3xi64>) -> tensor<3x3xi64>
  %corner = train.constant dense<[[-1, 2]]> : tensor<1x2xi64>
  %two = train.constant dense<[2]> : tensor<1xi64>
  %s1 = train.onnx_node "ScatterND"(%s0, %corner, %two) {node_name = "s1", onnx_attrs = {reduction = "none"}} : (tensor<3x3xi64>, tensor<1x2xi64>, tensor<1xi64>) -> tensor<*xi64>
  %l = train.constant dense<[1, 2, 3]> : tensor<3xi64>
  %r = train.constant dense<[1, 5, 3]> : tensor<3xi64>
  %eq = train.onnx_node "Equal"(%l, %r) {node_name = "eq", onnx_attrs = {}} : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  %ne = train.onnx_node "Not"(%eq) {node_name = "not", onnx_attrs = {}} : (tensor<3xi1>) -> tensor<*xi1>
  return %s1, %ne : tensor<*xi64>, tensor<*xi1>
}

// -----

// Tests that ScatterND of constant updates into computed data (swin_v2
// zeroes the key third of a copy of its qkv bias) is a masked overwrite,
// data * keep + written, through ops that have gradients.

// CHECK-LABEL: func.func @scatter_computed
// CHECK: %[[KEEP:.*]] = train.constant dense<[1.000000e+00, 0.000000e+00, 0.000000e+00, 1.000000e+00]> : tensor<4xf32>
// CHECK: %[[KEPT:.*]] = train.mul %arg0, %[[KEEP]]
// CHECK: %[[WRITTEN:.*]] = train.constant dense<[0.000000e+00, 5.000000e+00, 6.000000e+00, 0.000000e+00]> : tensor<4xf32>
// CHECK: %[[SUM:.*]] = train.add %[[KEPT]], %[[WRITTEN]]
// CHECK: return %[[SUM]]
// CHECK-NOT: train.onnx_node
func.func @scatter_computed(%x: tensor<4xf32>) -> tensor<*xf32> {
  %i = train.constant dense<[[1], [2]]> : tensor<2x1xi64>
  %u = train.constant dense<[5.0, 6.0]> : tensor<2xf32>
  %0 = train.onnx_node "ScatterND"(%x, %i, %u) {node_name = "s", onnx_attrs = {}} : (tensor<4xf32>, tensor<2x1xi64>, tensor<2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
