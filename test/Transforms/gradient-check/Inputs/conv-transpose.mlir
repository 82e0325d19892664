// Gradient-check cases for ONNX ConvTranspose, which imports as
// train.conv_backward_data (lib/Import/ONNX/LegalizeConvTranspose.cpp)
// with a per-channel bias: its gradient rule (a convolution for the input,
// a filter gradient for the weight) with strides, pads, output padding,
// dilations and groups.

module @conv_transpose_strided {
  train.param @w trainable : tensor<3x2x3x3xf64>
  train.param @b trainable : tensor<2xf64>
  train.param @shift trainable : tensor<2x3x3x4xf64>
  func.func @forward(%x: tensor<2x3x3x4xf64>) -> tensor<*xf64> {
    %w = train.read_param @w : tensor<3x2x3x3xf64>
    %b = train.read_param @b : tensor<2xf64>
    %s = train.read_param @shift : tensor<2x3x3x4xf64>
    %x1 = train.mul %x, %s : (tensor<2x3x3x4xf64>, tensor<2x3x3x4xf64>) -> tensor<2x3x3x4xf64>
    %y = train.onnx_node "ConvTranspose"(%x1, %w, %b) {node_name = "up", onnx_attrs = {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 1>, output_padding = array<i64: 1, 0>}} : (tensor<2x3x3x4xf64>, tensor<3x2x3x3xf64>, tensor<2xf64>) -> tensor<*xf64>
    return %y : tensor<*xf64>
  }
}

// -----

module @conv_transpose_grouped_dilated {
  train.param @w trainable : tensor<4x1x2x2xf64>
  train.param @shift trainable : tensor<1x4x3x3xf64>
  func.func @forward(%x: tensor<1x4x3x3xf64>) -> tensor<*xf64> {
    %w = train.read_param @w : tensor<4x1x2x2xf64>
    %s = train.read_param @shift : tensor<1x4x3x3xf64>
    %x1 = train.add %x, %s : (tensor<1x4x3x3xf64>, tensor<1x4x3x3xf64>) -> tensor<1x4x3x3xf64>
    %y = train.onnx_node "ConvTranspose"(%x1, %w) {node_name = "up", onnx_attrs = {group = 2 : i64, dilations = array<i64: 2, 2>}} : (tensor<1x4x3x3xf64>, tensor<4x1x2x2xf64>) -> tensor<*xf64>
    return %y : tensor<*xf64>
  }
}
