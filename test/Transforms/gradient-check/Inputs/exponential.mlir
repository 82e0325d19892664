// Gradient-check cases for train.exp and train.log and the ONNX ops that
// import as compositions with them or with relu, minimum and maximum
// (lib/Import/ONNX/LegalizeActivations.cpp): Elu, Selu, Softplus, Neg,
// Abs, PRelu with a trainable per-channel slope, and Split (GLU's halves).
// Inputs are standard normal: the kinks at 0 are hit with probability ~0.

module @exp_log {
  train.param @shift trainable : tensor<3x8xf64>
  func.func @forward(%x: tensor<3x8xf64>) -> tensor<3x8xf64> {
    %s = train.read_param @shift : tensor<3x8xf64>
    %x1 = train.add %x, %s : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
    %e = train.exp %x1 : tensor<3x8xf64>
    %l = train.log %e : tensor<3x8xf64>
    %y = train.mul %e, %l : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
    return %y : tensor<3x8xf64>
  }
}

// -----

module @elu_selu_softplus {
  train.param @shift trainable : tensor<3x8xf64>
  func.func @forward(%x: tensor<3x8xf64>) -> tensor<*xf64> {
    %s = train.read_param @shift : tensor<3x8xf64>
    %two = train.constant dense<2.0> : tensor<f64>
    %x0 = train.add %x, %s : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
    %x1 = train.mul %x0, %two : (tensor<3x8xf64>, tensor<f64>) -> tensor<3x8xf64>
    %a = train.onnx_node "Elu"(%x1) {node_name = "elu", onnx_attrs = {alpha = 2.0 : f32}} : (tensor<3x8xf64>) -> tensor<*xf64>
    %b = train.onnx_node "Selu"(%x1) {node_name = "selu", onnx_attrs = {}} : (tensor<3x8xf64>) -> tensor<*xf64>
    %c = train.onnx_node "Softplus"(%x1) {node_name = "softplus", onnx_attrs = {}} : (tensor<3x8xf64>) -> tensor<*xf64>
    %ab = train.onnx_node "Mul"(%a, %b) {node_name = "ab", onnx_attrs = {}} : (tensor<*xf64>, tensor<*xf64>) -> tensor<*xf64>
    %y = train.onnx_node "Mul"(%ab, %c) {node_name = "y", onnx_attrs = {}} : (tensor<*xf64>, tensor<*xf64>) -> tensor<*xf64>
    return %y : tensor<*xf64>
  }
}

// -----

module @neg_abs_prelu {
  train.param @slope trainable : tensor<3x1x1xf64>
  train.param @shift trainable : tensor<2x3x4x4xf64>
  func.func @forward(%x: tensor<2x3x4x4xf64>) -> tensor<*xf64> {
    %a = train.read_param @slope : tensor<3x1x1xf64>
    %s = train.read_param @shift : tensor<2x3x4x4xf64>
    %x1 = train.add %x, %s : (tensor<2x3x4x4xf64>, tensor<2x3x4x4xf64>) -> tensor<2x3x4x4xf64>
    %p = train.onnx_node "PRelu"(%x1, %a) {node_name = "prelu", onnx_attrs = {}} : (tensor<2x3x4x4xf64>, tensor<3x1x1xf64>) -> tensor<*xf64>
    %n = train.onnx_node "Neg"(%x1) {node_name = "neg", onnx_attrs = {}} : (tensor<2x3x4x4xf64>) -> tensor<*xf64>
    %b = train.onnx_node "Abs"(%n) {node_name = "abs", onnx_attrs = {}} : (tensor<*xf64>) -> tensor<*xf64>
    %y = train.onnx_node "Mul"(%p, %b) {node_name = "y", onnx_attrs = {}} : (tensor<*xf64>, tensor<*xf64>) -> tensor<*xf64>
    return %y : tensor<*xf64>
  }
}

// -----

// GLU: the first half times the sigmoid of the second; an uneven split of
// opset 18 (num_outputs 3 over 8: 3, 3, 2) whose middle part is unused.
module @split_glu {
  train.param @shift trainable : tensor<3x8xf64>
  func.func @forward(%x: tensor<3x8xf64>) -> tensor<*xf64> {
    %s = train.read_param @shift : tensor<3x8xf64>
    %x1 = train.mul %x, %s : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
    %h:2 = train.onnx_node "Split"(%x1) {node_name = "halves", onnx_attrs = {axis = -1 : i64}} : (tensor<3x8xf64>) -> (tensor<*xf64>, tensor<*xf64>)
    %g = train.onnx_node "Sigmoid"(%h#1) {node_name = "gate", onnx_attrs = {}} : (tensor<*xf64>) -> tensor<*xf64>
    %glu = train.onnx_node "Mul"(%h#0, %g) {node_name = "glu", onnx_attrs = {}} : (tensor<*xf64>, tensor<*xf64>) -> tensor<*xf64>
    %t:3 = train.onnx_node "Split"(%x1) {node_name = "thirds", onnx_attrs = {axis = 1 : i64, num_outputs = 3 : i64}} : (tensor<3x8xf64>) -> (tensor<*xf64>, tensor<*xf64>, tensor<*xf64>)
    %y = train.onnx_node "Concat"(%glu, %t#2) {node_name = "y", onnx_attrs = {axis = 1 : i64}} : (tensor<*xf64>, tensor<*xf64>) -> tensor<*xf64>
    return %y : tensor<*xf64>
  }
}
