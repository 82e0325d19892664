// Gradient-check cases for the ONNX ops that import as compositions of
// Train ops in lib/Import/ONNX/LegalizeNormalization.cpp and
// LegalizeActivations.cpp, written as train.onnx_node and legalised first:
// LayerNormalization with trainable Scale and B over one and over two
// trailing axes, InstanceNormalization, GroupNormalization with per-channel
// and per-group scale and bias, Gelu in its exact (erf) and tanh forms,
// Expand of a trainable class token over the batch (a broadcast_to, whose
// gradient sums back), GlobalMaxPool and Einsum.

module @layer_norm_last_axis {
  train.param @scale trainable : tensor<8xf64>
  train.param @bias trainable : tensor<8xf64>
  train.param @shift trainable : tensor<3x4x8xf64>
  func.func @forward(%x: tensor<3x4x8xf64>) -> tensor<*xf64> {
    %s = train.read_param @scale : tensor<8xf64>
    %b = train.read_param @bias : tensor<8xf64>
    %t = train.read_param @shift : tensor<3x4x8xf64>
    %x1 = train.mul %x, %t : (tensor<3x4x8xf64>, tensor<3x4x8xf64>) -> tensor<3x4x8xf64>
    %y = train.onnx_node "LayerNormalization"(%x1, %s, %b) {node_name = "ln", onnx_attrs = {axis = -1 : i64, epsilon = 1.0e-5 : f32}} : (tensor<3x4x8xf64>, tensor<8xf64>, tensor<8xf64>) -> tensor<*xf64>
    return %y : tensor<*xf64>
  }
}

// -----

module @layer_norm_two_axes {
  train.param @scale trainable : tensor<4x5xf64>
  train.param @shift trainable : tensor<2x3x4x5xf64>
  func.func @forward(%x: tensor<2x3x4x5xf64>) -> tensor<*xf64> {
    %s = train.read_param @scale : tensor<4x5xf64>
    %t = train.read_param @shift : tensor<2x3x4x5xf64>
    %x1 = train.add %x, %t : (tensor<2x3x4x5xf64>, tensor<2x3x4x5xf64>) -> tensor<2x3x4x5xf64>
    %y = train.onnx_node "LayerNormalization"(%x1, %s) {node_name = "ln", onnx_attrs = {axis = 2 : i64, epsilon = 1.0e-2 : f32}} : (tensor<2x3x4x5xf64>, tensor<4x5xf64>) -> tensor<*xf64>
    return %y : tensor<*xf64>
  }
}

// -----

// Inputs scaled by 2 so that both tails of the gate are covered.
module @gelu_forms {
  train.param @shift trainable : tensor<3x8xf64>
  func.func @forward(%x: tensor<3x8xf64>) -> tensor<*xf64> {
    %s = train.read_param @shift : tensor<3x8xf64>
    %two = train.constant dense<2.0> : tensor<f64>
    %x0 = train.add %x, %s : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
    %x1 = train.mul %x0, %two : (tensor<3x8xf64>, tensor<f64>) -> tensor<3x8xf64>
    %a = train.onnx_node "Gelu"(%x1) {node_name = "exact", onnx_attrs = {}} : (tensor<3x8xf64>) -> tensor<*xf64>
    %b = train.onnx_node "Gelu"(%x1) {node_name = "tanh", onnx_attrs = {approximate = "tanh"}} : (tensor<3x8xf64>) -> tensor<*xf64>
    %y = train.onnx_node "Mul"(%a, %b) {node_name = "y", onnx_attrs = {}} : (tensor<*xf64>, tensor<*xf64>) -> tensor<*xf64>
    return %y : tensor<*xf64>
  }
}

// -----

module @expand_class_token {
  train.param @cls trainable : tensor<1x1x6xf64>
  func.func @forward(%x: tensor<3x4x6xf64>) -> tensor<*xf64> {
    %c = train.read_param @cls : tensor<1x1x6xf64>
    %shape = train.constant dense<[3, 1, 1]> : tensor<3xi64>
    %e = train.onnx_node "Expand"(%c, %shape) {node_name = "expand", onnx_attrs = {}} : (tensor<1x1x6xf64>, tensor<3xi64>) -> tensor<*xf64>
    %y = train.onnx_node "Concat"(%e, %x) {node_name = "cat", onnx_attrs = {axis = 1 : i64}} : (tensor<*xf64>, tensor<3x4x6xf64>) -> tensor<*xf64>
    return %y : tensor<*xf64>
  }
}

// -----

module @instance_norm {
  train.param @scale trainable : tensor<3xf64>
  train.param @bias trainable : tensor<3xf64>
  train.param @shift trainable : tensor<2x3x4x4xf64>
  func.func @forward(%x: tensor<2x3x4x4xf64>) -> tensor<*xf64> {
    %s = train.read_param @scale : tensor<3xf64>
    %b = train.read_param @bias : tensor<3xf64>
    %t = train.read_param @shift : tensor<2x3x4x4xf64>
    %x1 = train.mul %x, %t : (tensor<2x3x4x4xf64>, tensor<2x3x4x4xf64>) -> tensor<2x3x4x4xf64>
    %y = train.onnx_node "InstanceNormalization"(%x1, %s, %b) {node_name = "in", onnx_attrs = {epsilon = 1.0e-3 : f32}} : (tensor<2x3x4x4xf64>, tensor<3xf64>, tensor<3xf64>) -> tensor<*xf64>
    return %y : tensor<*xf64>
  }
}

// -----

// Per-channel (opset 21) and per-group (opset 18) scale and bias.
module @group_norm {
  train.param @scale trainable : tensor<6xf64>
  train.param @bias trainable : tensor<6xf64>
  train.param @group_scale trainable : tensor<2xf64>
  train.param @group_bias trainable : tensor<2xf64>
  train.param @shift trainable : tensor<2x6x3x2xf64>
  func.func @forward(%x: tensor<2x6x3x2xf64>) -> tensor<*xf64> {
    %s = train.read_param @scale : tensor<6xf64>
    %b = train.read_param @bias : tensor<6xf64>
    %gs = train.read_param @group_scale : tensor<2xf64>
    %gb = train.read_param @group_bias : tensor<2xf64>
    %t = train.read_param @shift : tensor<2x6x3x2xf64>
    %x1 = train.add %x, %t : (tensor<2x6x3x2xf64>, tensor<2x6x3x2xf64>) -> tensor<2x6x3x2xf64>
    %a = train.onnx_node "GroupNormalization"(%x1, %s, %b) {node_name = "gn", onnx_attrs = {num_groups = 3 : i64}} : (tensor<2x6x3x2xf64>, tensor<6xf64>, tensor<6xf64>) -> tensor<*xf64>
    %c = train.onnx_node "GroupNormalization"(%x1, %gs, %gb) {node_name = "gn18", onnx_attrs = {num_groups = 2 : i64}} : (tensor<2x6x3x2xf64>, tensor<2xf64>, tensor<2xf64>) -> tensor<*xf64>
    %y = train.onnx_node "Mul"(%a, %c) {node_name = "y", onnx_attrs = {}} : (tensor<*xf64>, tensor<*xf64>) -> tensor<*xf64>
    return %y : tensor<*xf64>
  }
}

// -----

// GlobalMaxPool (standard normal inputs: no ties).
module @global_max_pool {
  train.param @shift trainable : tensor<2x3x4x5xf64>
  func.func @forward(%x: tensor<2x3x4x5xf64>) -> tensor<*xf64> {
    %t = train.read_param @shift : tensor<2x3x4x5xf64>
    %x1 = train.mul %x, %t : (tensor<2x3x4x5xf64>, tensor<2x3x4x5xf64>) -> tensor<2x3x4x5xf64>
    %y = train.onnx_node "GlobalMaxPool"(%x1) {node_name = "gmp", onnx_attrs = {}} : (tensor<2x3x4x5xf64>) -> tensor<*xf64>
    return %y : tensor<*xf64>
  }
}

// -----

// Einsum as attention writes it: scores and the weighted sum.
module @einsum_attention {
  train.param @k trainable : tensor<2x2x3x4xf64>
  train.param @v trainable : tensor<2x2x3x4xf64>
  func.func @forward(%q: tensor<2x2x3x4xf64>) -> tensor<*xf64> {
    %k = train.read_param @k : tensor<2x2x3x4xf64>
    %v = train.read_param @v : tensor<2x2x3x4xf64>
    %s = train.onnx_node "Einsum"(%q, %k) {node_name = "scores", onnx_attrs = {equation = "bhid,bhjd->bhij"}} : (tensor<2x2x3x4xf64>, tensor<2x2x3x4xf64>) -> tensor<*xf64>
    %y = train.onnx_node "Einsum"(%s, %v) {node_name = "sum", onnx_attrs = {equation = "bhij,bhjd->bdhi"}} : (tensor<*xf64>, tensor<2x2x3x4xf64>) -> tensor<*xf64>
    return %y : tensor<*xf64>
  }
}
