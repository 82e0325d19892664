// Gradient-check cases for ONNX Where on computed data (train.select, its
// condition from train.compare; lib/Import/ONNX/LegalizeConditionals.cpp):
// the gradient goes to the picked operand, summed over broadcast axes, and
// nothing to the condition.

// torch.where(h > 0, h, 0.1 * h) on a parameter-dependent h: both sides
// active, the condition computed from them too.
module @where_leaky {
  train.param @shift trainable : tensor<2x3x4xf64>
  func.func @forward(%x: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
    %s = train.read_param @shift : tensor<2x3x4xf64>
    %h = train.add %x, %s : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %zero = train.constant dense<0.0> : tensor<f64>
    %tenth = train.constant dense<0.1> : tensor<f64>
    %c = train.onnx_node "Greater"(%h, %zero) {node_name = "gt", onnx_attrs = {}} : (tensor<2x3x4xf64>, tensor<f64>) -> tensor<2x3x4xi1>
    %l = train.mul %h, %tenth : (tensor<2x3x4xf64>, tensor<f64>) -> tensor<2x3x4xf64>
    %y = train.onnx_node "Where"(%c, %h, %l) {node_name = "w", onnx_attrs = {}} : (tensor<2x3x4xi1>, tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %t = train.tanh %y : tensor<2x3x4xf64>
    return %t : tensor<2x3x4xf64>
  }
}

// -----

// Broadcast operands: a condition over the last axis from the data, a
// per-row parameter on one side and a scalar parameter on the other.
module @where_broadcast {
  train.param @shift trainable : tensor<2x3x4xf64>
  train.param @row trainable : tensor<3x1xf64>
  train.param @fill trainable : tensor<1xf64>
  func.func @forward(%x: tensor<2x3x4xf64>, %probe: tensor<4xf64>) -> tensor<2x3x4xf64> {
    %s = train.read_param @shift : tensor<2x3x4xf64>
    %r = train.read_param @row : tensor<3x1xf64>
    %f = train.read_param @fill : tensor<1xf64>
    %h = train.mul %x, %s : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %hr = train.add %h, %r : (tensor<2x3x4xf64>, tensor<3x1xf64>) -> tensor<2x3x4xf64>
    %zero = train.constant dense<0.0> : tensor<f64>
    %c = train.onnx_node "LessOrEqual"(%probe, %zero) {node_name = "le", onnx_attrs = {}} : (tensor<4xf64>, tensor<f64>) -> tensor<4xi1>
    %y = train.onnx_node "Where"(%c, %f, %hr) {node_name = "w", onnx_attrs = {}} : (tensor<4xi1>, tensor<1xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %t = train.tanh %y : tensor<2x3x4xf64>
    return %t : tensor<2x3x4xf64>
  }
}

// -----

// masked_fill by a constant mask (attention): the masked positions get no
// gradient.
module @where_constant_mask {
  train.param @scores trainable : tensor<2x3x3xf64>
  func.func @forward(%x: tensor<2x3x3xf64>) -> tensor<2x3x3xf64> {
    %p = train.read_param @scores : tensor<2x3x3xf64>
    %h = train.mul %x, %p : (tensor<2x3x3xf64>, tensor<2x3x3xf64>) -> tensor<2x3x3xf64>
    %mask = train.constant dense<[[false, true, true], [false, false, true], [false, false, false]]> : tensor<3x3xi1>
    %fill = train.constant dense<-1.0e4> : tensor<f64>
    %y = train.onnx_node "Where"(%mask, %fill, %h) {node_name = "w", onnx_attrs = {}} : (tensor<3x3xi1>, tensor<f64>, tensor<2x3x3xf64>) -> tensor<2x3x3xf64>
    %sm = train.softmax %y axis 2 : tensor<2x3x3xf64>
    return %sm : tensor<2x3x3xf64>
  }
}
