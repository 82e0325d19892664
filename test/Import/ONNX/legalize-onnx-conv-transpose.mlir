// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx | FileCheck %s

// Tests that ConvTranspose is a train.conv_backward_data of the input with
// the weight, sized by ONNX's formula (stride 2, pads 1/0 and 0/1, output
// padding 1 on the first axis: 2 * (3 - 1) + 1 + 3 - 1 = 7 and
// 2 * (4 - 1) + 3 - 1 = 8), with the bias added per channel.

// CHECK-LABEL: func.func @conv_transpose
// CHECK: %[[Y:.*]] = train.conv_backward_data %arg0, %arg1 strides [2, 2] pads [1, 0, 0, 1] dilations [1, 1] groups 1 : (tensor<2x3x3x4xf32>, tensor<3x2x3x3xf32>) -> tensor<2x2x7x8xf32>
// CHECK: %[[B:.*]] = train.reshape %arg2 : tensor<2xf32> -> tensor<2x1x1xf32>
// CHECK: %[[Z:.*]] = train.add %[[Y]], %[[B]]
// CHECK: return %[[Z]]
func.func @conv_transpose(%x: tensor<2x3x3x4xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<2xf32>) -> tensor<*xf32> {
  %0 = train.onnx_node "ConvTranspose"(%x, %w, %b) {node_name = "up", onnx_attrs = {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 1>, output_padding = array<i64: 1, 0>}} : (tensor<2x3x3x4xf32>, tensor<3x2x3x3xf32>, tensor<2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Tests that output_shape and SAME_UPPER derive the pads (the odd one at
// the end), that groups multiply the output channels, and that no bias
// means no add.

// CHECK-LABEL: func.func @conv_transpose_same
// CHECK: train.conv_backward_data %arg0, %arg1 strides [2, 2] pads [0, 0, 1, 1] dilations [1, 1] groups 2 : (tensor<1x4x3x3xf32>, tensor<4x1x3x3xf32>) -> tensor<1x2x6x6xf32>
// CHECK-NOT: train.add
// CHECK: train.conv_backward_data %arg0, %arg1 strides [2, 2] pads [1, 1, 0, 0]
// CHECK-SAME: -> tensor<1x2x6x6xf32>
func.func @conv_transpose_same(%x: tensor<1x4x3x3xf32>, %w: tensor<4x1x3x3xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %0 = train.onnx_node "ConvTranspose"(%x, %w) {node_name = "upper", onnx_attrs = {group = 2 : i64, strides = array<i64: 2, 2>, auto_pad = "SAME_UPPER"}} : (tensor<1x4x3x3xf32>, tensor<4x1x3x3xf32>) -> tensor<*xf32>
  %1 = train.onnx_node "ConvTranspose"(%x, %w) {node_name = "shape", onnx_attrs = {group = 2 : i64, strides = array<i64: 2, 2>, output_shape = array<i64: 6, 6>}} : (tensor<1x4x3x3xf32>, tensor<4x1x3x3xf32>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}
