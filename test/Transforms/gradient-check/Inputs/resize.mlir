// Gradient-check cases for ONNX Resize and Upsample, which import as
// per-axis products with constant interpolation matrices, or a reshape and
// a broadcast for nearest upsampling by an integer factor
// (lib/Import/ONNX/LegalizeResize.cpp), and Tile (Keras 3's nearest
// UpSampling2D; LegalizeConstants.cpp).

// PyTorch's nearest upsampling by 2 (asymmetric, floor): the broadcast
// form, whose gradient sums each 2x2 block.
module @resize_nearest_repeat {
  train.param @shift trainable : tensor<1x2x3x3xf64>
  func.func @forward(%x: tensor<1x2x3x3xf64>) -> tensor<1x2x6x6xf64> {
    %s = train.read_param @shift : tensor<1x2x3x3xf64>
    %h = train.mul %x, %s : (tensor<1x2x3x3xf64>, tensor<1x2x3x3xf64>) -> tensor<1x2x3x3xf64>
    %none = train.onnx_none
    %scales = train.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
    %y = train.onnx_node "Resize"(%h, %none, %scales) {node_name = "up", onnx_attrs = {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"}} : (tensor<1x2x3x3xf64>, none, tensor<4xf32>) -> tensor<1x2x6x6xf64>
    %t = train.tanh %y : tensor<1x2x6x6xf64>
    return %t : tensor<1x2x6x6xf64>
  }
}

// -----

// Bilinear with half_pixel coordinates, a fractional scale on the last
// axis (3 * 1.5 -> 4).
module @resize_linear_half_pixel {
  train.param @shift trainable : tensor<2x1x3x3xf64>
  func.func @forward(%x: tensor<2x1x3x3xf64>) -> tensor<2x1x6x4xf64> {
    %s = train.read_param @shift : tensor<2x1x3x3xf64>
    %h = train.mul %x, %s : (tensor<2x1x3x3xf64>, tensor<2x1x3x3xf64>) -> tensor<2x1x3x3xf64>
    %none = train.onnx_none
    %scales = train.constant dense<[1.0, 1.0, 2.0, 1.5]> : tensor<4xf32>
    %y = train.onnx_node "Resize"(%h, %none, %scales) {node_name = "up", onnx_attrs = {mode = "linear"}} : (tensor<2x1x3x3xf64>, none, tensor<4xf32>) -> tensor<2x1x6x4xf64>
    %t = train.tanh %y : tensor<2x1x6x4xf64>
    return %t : tensor<2x1x6x4xf64>
  }
}

// -----

// Cubic downsampling by sizes with align_corners, and nearest
// round_prefer_ceil upsampling after it: a product per axis each time.
module @resize_cubic_then_nearest {
  train.param @shift trainable : tensor<1x2x5x6xf64>
  func.func @forward(%x: tensor<1x2x5x6xf64>) -> tensor<1x2x5x6xf64> {
    %s = train.read_param @shift : tensor<1x2x5x6xf64>
    %h = train.add %x, %s : (tensor<1x2x5x6xf64>, tensor<1x2x5x6xf64>) -> tensor<1x2x5x6xf64>
    %none = train.onnx_none
    %sizes = train.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
    %d = train.onnx_node "Resize"(%h, %none, %none, %sizes) {node_name = "down", onnx_attrs = {mode = "cubic", coordinate_transformation_mode = "align_corners"}} : (tensor<1x2x5x6xf64>, none, none, tensor<4xi64>) -> tensor<1x2x3x4xf64>
    %scales = train.constant dense<[1.0, 1.0, 1.7, 1.5]> : tensor<4xf32>
    %u = train.onnx_node "Resize"(%d, %none, %scales) {node_name = "up", onnx_attrs = {mode = "nearest", nearest_mode = "round_prefer_ceil"}} : (tensor<1x2x3x4xf64>, none, tensor<4xf32>) -> tensor<1x2x5x6xf64>
    %t = train.tanh %u : tensor<1x2x5x6xf64>
    return %t : tensor<1x2x5x6xf64>
  }
}

// -----

// Linear antialiased downsampling (Resize-18) with exclude_outside.
module @resize_linear_antialias {
  train.param @shift trainable : tensor<1x1x8x6xf64>
  func.func @forward(%x: tensor<1x1x8x6xf64>) -> tensor<1x1x4x3xf64> {
    %s = train.read_param @shift : tensor<1x1x8x6xf64>
    %h = train.mul %x, %s : (tensor<1x1x8x6xf64>, tensor<1x1x8x6xf64>) -> tensor<1x1x8x6xf64>
    %none = train.onnx_none
    %scales = train.constant dense<[0.5, 0.5]> : tensor<2xf32>
    %y = train.onnx_node "Resize"(%h, %none, %scales) {node_name = "down", onnx_attrs = {mode = "linear", antialias = 1 : i64, exclude_outside = 1 : i64, axes = array<i64: 2, 3>}} : (tensor<1x1x8x6xf64>, none, tensor<2xf32>) -> tensor<1x1x4x3xf64>
    %t = train.tanh %y : tensor<1x1x4x3xf64>
    return %t : tensor<1x1x4x3xf64>
  }
}

// -----

// Tile repeating two axes of computed data: the gradient sums the copies.
module @tile_repeat {
  train.param @shift trainable : tensor<1x3x2x2xf64>
  func.func @forward(%x: tensor<1x3x2x2xf64>) -> tensor<1x3x4x6xf64> {
    %s = train.read_param @shift : tensor<1x3x2x2xf64>
    %h = train.mul %x, %s : (tensor<1x3x2x2xf64>, tensor<1x3x2x2xf64>) -> tensor<1x3x2x2xf64>
    %r = train.constant dense<[1, 1, 2, 3]> : tensor<4xi64>
    %y = train.onnx_node "Tile"(%h, %r) {node_name = "tile", onnx_attrs = {}} : (tensor<1x3x2x2xf64>, tensor<4xi64>) -> tensor<1x3x4x6xf64>
    %t = train.tanh %y : tensor<1x3x4x6xf64>
    return %t : tensor<1x3x4x6xf64>
  }
}
