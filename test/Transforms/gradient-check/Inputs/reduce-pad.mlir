// Gradient-check cases for reductions over any axes (sum_to, reduce_max,
// and the ONNX ReduceSum/ReduceMean/ReduceMax that import as them), the
// ONNX ops that import as compositions of Train ops (HardSigmoid,
// HardSwish, Pad in each mode), written as train.onnx_node and legalised
// first, and Gather on data (an embedding lookup). Inputs are standard
// normal: ties of the maximum and the kinks of the hard activations (+-3)
// are hit with probability ~0.

module @sum_to_keepdims {
  train.param @shift trainable : tensor<2x3x4xf64>
  func.func @forward(%x: tensor<2x3x4xf64>) -> tensor<2x1x4xf64> {
    %s = train.read_param @shift : tensor<2x3x4xf64>
    %x1 = train.mul %x, %s : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %y = train.sum_to %x1 : tensor<2x3x4xf64> -> tensor<2x1x4xf64>
    return %y : tensor<2x1x4xf64>
  }
}

// -----

module @reduce_max {
  train.param @shift trainable : tensor<2x3x4x5xf64>
  func.func @forward(%x: tensor<2x3x4x5xf64>) -> tensor<2x1x4x1xf64> {
    %s = train.read_param @shift : tensor<2x3x4x5xf64>
    %x1 = train.add %x, %s : (tensor<2x3x4x5xf64>, tensor<2x3x4x5xf64>) -> tensor<2x3x4x5xf64>
    %y = train.reduce_max %x1 : tensor<2x3x4x5xf64> -> tensor<2x1x4x1xf64>
    return %y : tensor<2x1x4x1xf64>
  }
}

// -----

// ReduceMean over two axes without keepdims, ReduceSum with an axes input
// with and without keepdims, ReduceMax over a negative axis.
module @onnx_reduce {
  train.param @shift trainable : tensor<2x3x4x5xf64>
  func.func @forward(%x: tensor<2x3x4x5xf64>) -> tensor<*xf64> {
    %s = train.read_param @shift : tensor<2x3x4x5xf64>
    %x1 = train.mul %x, %s : (tensor<2x3x4x5xf64>, tensor<2x3x4x5xf64>) -> tensor<2x3x4x5xf64>
    %mean = train.onnx_node "ReduceMean"(%x1) {node_name = "mean", onnx_attrs = {axes = array<i64: 1, 2>, keepdims = 0 : i64}} : (tensor<2x3x4x5xf64>) -> tensor<*xf64>
    %axes = train.constant dense<[1]> : tensor<1xi64>
    %sum = train.onnx_node "ReduceSum"(%x1, %axes) {node_name = "sum", onnx_attrs = {}} : (tensor<2x3x4x5xf64>, tensor<1xi64>) -> tensor<*xf64>
    %max = train.onnx_node "ReduceMax"(%x1) {node_name = "max", onnx_attrs = {axes = array<i64: -3>, keepdims = 0 : i64}} : (tensor<2x3x4x5xf64>) -> tensor<*xf64>
    %sum2 = train.onnx_node "ReduceSum"(%sum, %axes) {node_name = "sum2", onnx_attrs = {keepdims = 0 : i64}} : (tensor<*xf64>, tensor<1xi64>) -> tensor<*xf64>
    %a = train.onnx_node "Mul"(%sum2, %max) {node_name = "a", onnx_attrs = {}} : (tensor<*xf64>, tensor<*xf64>) -> tensor<*xf64>
    %b = train.onnx_node "ReduceMean"(%a) {node_name = "b", onnx_attrs = {axes = array<i64: 1>, keepdims = 0 : i64}} : (tensor<*xf64>) -> tensor<*xf64>
    %y = train.onnx_node "Add"(%mean, %b) {node_name = "y", onnx_attrs = {}} : (tensor<*xf64>, tensor<*xf64>) -> tensor<*xf64>
    return %y : tensor<*xf64>
  }
}

// -----

// Inputs scaled by 4 so that both the linear parts and the saturated ones
// are covered.
module @hard_activations {
  train.param @shift trainable : tensor<3x8xf64>
  func.func @forward(%x: tensor<3x8xf64>) -> tensor<*xf64> {
    %s = train.read_param @shift : tensor<3x8xf64>
    %four = train.constant dense<4.0> : tensor<f64>
    %x0 = train.add %x, %s : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
    %x1 = train.mul %x0, %four : (tensor<3x8xf64>, tensor<f64>) -> tensor<3x8xf64>
    %a = train.onnx_node "HardSwish"(%x1) {node_name = "hs", onnx_attrs = {}} : (tensor<3x8xf64>) -> tensor<*xf64>
    %b = train.onnx_node "HardSigmoid"(%x1) {node_name = "hsig", onnx_attrs = {alpha = 2.500000e-01 : f32, beta = 4.000000e-01 : f32}} : (tensor<3x8xf64>) -> tensor<*xf64>
    %y = train.onnx_node "Mul"(%a, %b) {node_name = "y", onnx_attrs = {}} : (tensor<*xf64>, tensor<*xf64>) -> tensor<*xf64>
    return %y : tensor<*xf64>
  }
}

// -----

// Pad in each mode on an NCHW tensor; the reflect pads crop the width by
// one at the end (a negative pad).
module @pad_modes {
  train.param @shift trainable : tensor<2x3x4x5xf64>
  func.func @forward(%x: tensor<2x3x4x5xf64>) -> tensor<*xf64> {
    %s = train.read_param @shift : tensor<2x3x4x5xf64>
    %x1 = train.mul %x, %s : (tensor<2x3x4x5xf64>, tensor<2x3x4x5xf64>) -> tensor<2x3x4x5xf64>
    %p1 = train.constant dense<[0, 0, 1, 2, 0, 0, 2, 0]> : tensor<8xi64>
    %v = train.constant dense<1.5> : tensor<f64>
    %c = train.onnx_node "Pad"(%x1, %p1, %v) {node_name = "constant", onnx_attrs = {mode = "constant"}} : (tensor<2x3x4x5xf64>, tensor<8xi64>, tensor<f64>) -> tensor<*xf64>
    %e = train.onnx_node "Pad"(%x1, %p1) {node_name = "edge", onnx_attrs = {mode = "edge"}} : (tensor<2x3x4x5xf64>, tensor<8xi64>) -> tensor<*xf64>
    %p2 = train.constant dense<[0, 0, 1, 3, 0, 0, 2, -1]> : tensor<8xi64>
    %r = train.onnx_node "Pad"(%x1, %p2) {node_name = "reflect", onnx_attrs = {mode = "reflect"}} : (tensor<2x3x4x5xf64>, tensor<8xi64>) -> tensor<*xf64>
    %ce = train.onnx_node "Mul"(%c, %e) {node_name = "ce", onnx_attrs = {}} : (tensor<*xf64>, tensor<*xf64>) -> tensor<*xf64>
    %y = train.onnx_node "Mul"(%ce, %r) {node_name = "y", onnx_attrs = {}} : (tensor<*xf64>, tensor<*xf64>) -> tensor<*xf64>
    return %y : tensor<*xf64>
  }
}

// -----

// An embedding lookup: ONNX Gather on a trainable table with indices that
// repeat (their gradients add up) and count from the end; then Gather along
// axis 1 of a computed tensor.
module @gather {
  train.param @table trainable : tensor<5x3xf64>
  func.func @forward(%x: tensor<2x4x3xf64>) -> tensor<*xf64> {
    %t = train.read_param @table : tensor<5x3xf64>
    %ids = train.constant dense<[[0, 3, 3, -1], [2, 0, 4, 3]]> : tensor<2x4xi64>
    %e = train.onnx_node "Gather"(%t, %ids) {node_name = "embed", onnx_attrs = {}} : (tensor<5x3xf64>, tensor<2x4xi64>) -> tensor<*xf64>
    %h = train.onnx_node "Mul"(%e, %x) {node_name = "h", onnx_attrs = {}} : (tensor<*xf64>, tensor<2x4x3xf64>) -> tensor<*xf64>
    %pick = train.constant dense<[1, 1, 2]> : tensor<3xi32>
    %y = train.onnx_node "Gather"(%h, %pick) {node_name = "pick", onnx_attrs = {axis = 1 : i64}} : (tensor<*xf64>, tensor<3xi32>) -> tensor<*xf64>
    return %y : tensor<*xf64>
  }
}
