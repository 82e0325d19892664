// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx -verify-diagnostics

// Tests that the weight must have one row per input channel.
func.func @conv_transpose_weight(%x: tensor<1x4x3x3xf32>, %w: tensor<3x1x3x3xf32>) {
  // expected-error @+1 {{node 'up' (ConvTranspose): weight 'tensor<3x1x3x3xf32>' does not match the 4 input channels in 1 groups}}
  %0 = train.onnx_node "ConvTranspose"(%x, %w) {node_name = "up", onnx_attrs = {}} : (tensor<1x4x3x3xf32>, tensor<3x1x3x3xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that output padding must stay below the stride.
func.func @conv_transpose_output_padding(%x: tensor<1x4x3x3xf32>, %w: tensor<4x1x3x3xf32>) {
  // expected-error @+1 {{node 'up' (ConvTranspose): strides and dilations must be positive and output_padding below the stride}}
  %0 = train.onnx_node "ConvTranspose"(%x, %w) {node_name = "up", onnx_attrs = {output_padding = array<i64: 1, 0>}} : (tensor<1x4x3x3xf32>, tensor<4x1x3x3xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that pads that leave no output are refused.
func.func @conv_transpose_pads(%x: tensor<1x4x1x1xf32>, %w: tensor<4x1x1x1xf32>) {
  // expected-error @+1 {{node 'up' (ConvTranspose): pads 1 and 0 of axis 2 leave no output}}
  %0 = train.onnx_node "ConvTranspose"(%x, %w) {node_name = "up", onnx_attrs = {pads = array<i64: 1, 0, 0, 0>}} : (tensor<1x4x1x1xf32>, tensor<4x1x1x1xf32>) -> tensor<*xf32>
  return
}
