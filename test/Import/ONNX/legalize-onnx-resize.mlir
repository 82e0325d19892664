// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx | FileCheck %s

// Tests that nearest upsampling by an integer factor (PyTorch's
// nn.Upsample: asymmetric coordinates, floor) is a reshape and a broadcast
// per axis, not a product; axes of scale 1 are left alone.

// CHECK-LABEL: func.func @nearest_repeat
// CHECK-NOT: train.matmul
// CHECK: %[[G:.*]] = train.reshape %arg0 : tensor<1x2x3x4xf32> -> tensor<1x2x3x1x4xf32>
// CHECK: %[[B:.*]] = train.broadcast_to %[[G]] : tensor<1x2x3x1x4xf32> -> tensor<1x2x3x2x4xf32>
// CHECK: %[[H:.*]] = train.reshape %[[B]] : tensor<1x2x3x2x4xf32> -> tensor<1x2x6x4xf32>
// CHECK: train.broadcast_to %{{.*}} : tensor<1x2x6x4x1xf32> -> tensor<1x2x6x4x2xf32>
// CHECK: %[[Y:.*]] = train.reshape %{{.*}} : tensor<1x2x6x4x2xf32> -> tensor<1x2x6x8xf32>
// CHECK-NOT: train.matmul
// CHECK: return %[[Y]]
func.func @nearest_repeat(%x: tensor<1x2x3x4xf32>) -> tensor<*xf32> {
  %roi = train.onnx_node "Constant"() {node_name = "roi", onnx_attrs = {value = dense<> : tensor<0xf32>}} : () -> tensor<0xf32>
  %s = train.onnx_node "Constant"() {node_name = "s", onnx_attrs = {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>}} : () -> tensor<4xf32>
  %y = train.onnx_node "Resize"(%x, %roi, %s) {node_name = "up", onnx_attrs = {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"}} : (tensor<1x2x3x4xf32>, tensor<0xf32>, tensor<4xf32>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

// Tests that linear resizing with half_pixel coordinates multiplies each
// resized axis by its interpolation matrix: rows (1, 0), (3/4, 1/4),
// (1/4, 3/4), (0, 1) for 2 -> 4; the last axis by the transpose.

// CHECK-LABEL: func.func @linear_half_pixel
// CHECK: %[[V:.*]] = train.reshape %arg0 : tensor<1x1x2x2xf32> -> tensor<1x2x2xf32>
// CHECK: %[[M:.*]] = train.constant dense<{{\[}}[1.000000e+00, 0.000000e+00], [7.500000e-01, 2.500000e-01], [2.500000e-01, 7.500000e-01], [0.000000e+00, 1.000000e+00]]> : tensor<4x2xf32>
// CHECK: %[[P:.*]] = train.matmul %[[M]], %[[V]] : (tensor<4x2xf32>, tensor<1x2x2xf32>) -> tensor<1x4x2xf32>
// CHECK: %[[H:.*]] = train.reshape %[[P]] : tensor<1x4x2xf32> -> tensor<1x1x4x2xf32>
// CHECK: %[[MT:.*]] = train.constant dense<{{\[}}[1.000000e+00, 7.500000e-01, 2.500000e-01, 0.000000e+00], [0.000000e+00, 2.500000e-01, 7.500000e-01, 1.000000e+00]]> : tensor<2x4xf32>
// CHECK: %[[Y:.*]] = train.matmul %[[H]], %[[MT]] : (tensor<1x1x4x2xf32>, tensor<2x4xf32>) -> tensor<1x1x4x4xf32>
// CHECK: return %[[Y]]
func.func @linear_half_pixel(%x: tensor<1x1x2x2xf32>) -> tensor<*xf32> {
  %s = train.onnx_node "Constant"() {node_name = "s", onnx_attrs = {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>}} : () -> tensor<4xf32>
  %none = train.onnx_none
  %y = train.onnx_node "Resize"(%x, %none, %s) {node_name = "up", onnx_attrs = {mode = "linear"}} : (tensor<1x1x2x2xf32>, none, tensor<4xf32>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

// Tests that sizes give the output size (scale = out / in) and that
// align_corners maps the end points onto each other: 3 -> 5 reads
// 0, 0.5, 1, 1.5, 2.

// CHECK-LABEL: func.func @sizes_align_corners
// CHECK: %[[MT:.*]] = train.constant dense<{{\[}}[1.000000e+00, 5.000000e-01, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 5.000000e-01, 1.000000e+00, 5.000000e-01, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 5.000000e-01, 1.000000e+00]]> : tensor<3x5xf32>
// CHECK: %[[Y:.*]] = train.matmul %arg0, %[[MT]] : (tensor<2x1x3xf32>, tensor<3x5xf32>) -> tensor<2x1x5xf32>
// CHECK: return %[[Y]]
func.func @sizes_align_corners(%x: tensor<2x1x3xf32>) -> tensor<*xf32> {
  %n = train.onnx_node "Constant"() {node_name = "n", onnx_attrs = {value = dense<> : tensor<0xf32>}} : () -> tensor<0xf32>
  %sizes = train.onnx_node "Constant"() {node_name = "sz", onnx_attrs = {value = dense<[2, 1, 5]> : tensor<3xi64>}} : () -> tensor<3xi64>
  %y = train.onnx_node "Resize"(%x, %n, %n, %sizes) {node_name = "up", onnx_attrs = {mode = "linear", coordinate_transformation_mode = "align_corners"}} : (tensor<2x1x3xf32>, tensor<0xf32>, tensor<0xf32>, tensor<3xi64>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

// Tests that Upsample (opset 9: scales as input 1) is nearest resizing with
// asymmetric coordinates.

// CHECK-LABEL: func.func @upsample_opset9
// CHECK-NOT: train.matmul
// CHECK: train.broadcast_to %{{.*}} : tensor<1x1x2x1x2xf32> -> tensor<1x1x2x3x2xf32>
// CHECK: train.reshape %{{.*}} : tensor<1x1x2x3x2xf32> -> tensor<1x1x6x2xf32>
module attributes {train.onnx_opset = 9 : i64} {
  func.func @upsample_opset9(%x: tensor<1x1x2x2xf32>) -> tensor<*xf32> {
    %s = train.onnx_node "Constant"() {node_name = "s", onnx_attrs = {value = dense<[1.0, 1.0, 3.0, 1.0]> : tensor<4xf32>}} : () -> tensor<4xf32>
    %y = train.onnx_node "Upsample"(%x, %s) {node_name = "up", onnx_attrs = {mode = "nearest"}} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<*xf32>
    return %y : tensor<*xf32>
  }
}

// -----

// Tests that nearest downsampling is a product with one-hot rows (half_pixel,
// round_prefer_floor: 4 -> 2 reads 0.5 -> 0 and 2.5 -> 2).

// CHECK-LABEL: func.func @nearest_downsample
// CHECK: %[[MT:.*]] = train.constant dense<{{\[}}[1.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00], [0.000000e+00, 0.000000e+00]]> : tensor<4x2xf32>
// CHECK: train.matmul %arg0, %[[MT]] : (tensor<1x4xf32>, tensor<4x2xf32>) -> tensor<1x2xf32>
func.func @nearest_downsample(%x: tensor<1x4xf32>) -> tensor<*xf32> {
  %none = train.onnx_none
  %s = train.onnx_node "Constant"() {node_name = "s", onnx_attrs = {value = dense<[1.0, 0.5]> : tensor<2xf32>}} : () -> tensor<2xf32>
  %y = train.onnx_node "Resize"(%x, %none, %s) {node_name = "down", onnx_attrs = {}} : (tensor<1x4xf32>, none, tensor<2xf32>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

// Tests Resize-18's axes with keep_aspect_ratio_policy not_larger: sizes
// (2, 2) for a 4 x 8 map ask for ratios 1/2 and 1/4, the smaller one
// scales both axes (1 x 2): rows 1.5 and 1.5, 5.5 of the input.

// CHECK-LABEL: func.func @aspect_not_larger
// CHECK: %[[H:.*]] = train.matmul {{.*}} -> tensor<1x1x8xf32>
// CHECK: %[[Y:.*]] = train.matmul {{.*}} -> tensor<1x1x1x2xf32>
// CHECK: return %[[Y]]
func.func @aspect_not_larger(%x: tensor<1x1x4x8xf32>) -> tensor<*xf32> {
  %none = train.onnx_none
  %sizes = train.constant dense<[2, 2]> : tensor<2xi64>
  %y = train.onnx_node "Resize"(%x, %none, %none, %sizes) {node_name = "r", onnx_attrs = {mode = "linear", axes = array<i64: 2, 3>, keep_aspect_ratio_policy = "not_larger"}} : (tensor<1x1x4x8xf32>, none, none, tensor<2xi64>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

// Tests that Upsample-7 reads its scales from the attribute.

// CHECK-LABEL: func.func @upsample_opset7
// CHECK: train.broadcast_to %{{.*}} : tensor<1x1x2x1x2xf32> -> tensor<1x1x2x2x2xf32>
// CHECK: train.broadcast_to %{{.*}} : tensor<1x1x4x2x1xf32> -> tensor<1x1x4x2x3xf32>
module attributes {train.onnx_opset = 7 : i64} {
  func.func @upsample_opset7(%x: tensor<1x1x2x2xf32>) -> tensor<*xf32> {
    %y = train.onnx_node "Upsample"(%x) {node_name = "up", onnx_attrs = {mode = "nearest", scales = array<f32: 1.0, 1.0, 2.0, 3.0>}} : (tensor<1x1x2x2xf32>) -> tensor<*xf32>
    return %y : tensor<*xf32>
  }
}
