// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx -verify-diagnostics

// Tests that an axis out of range is refused.
func.func @layer_norm_axis(%x: tensor<2x8xf32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{node 'ln' (LayerNormalization): axis 2 is out of range for rank 2}}
  %0 = train.onnx_node "LayerNormalization"(%x, %s) {node_name = "ln", onnx_attrs = {axis = 2 : i64}} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that a Scale that does not broadcast against the input is refused.
func.func @layer_norm_scale_shape(%x: tensor<2x8xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{node 'ln' (LayerNormalization):}}
  %0 = train.onnx_node "LayerNormalization"(%x, %s) {node_name = "ln", onnx_attrs = {}} : (tensor<2x8xf32>, tensor<3xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that InstanceNormalization's scale has one value per channel.
func.func @instance_norm_scale(%x: tensor<2x3x4xf32>, %s: tensor<4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{node 'in' (InstanceNormalization): scale of type 'tensor<4xf32>' is not a vector of 3 elements (one per channel)}}
  %0 = train.onnx_node "InstanceNormalization"(%x, %s, %b) {node_name = "in", onnx_attrs = {}} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that num_groups must divide the channels.
func.func @group_norm_groups(%x: tensor<2x6x4xf32>, %s: tensor<6xf32>) {
  // expected-error @+1 {{node 'gn' (GroupNormalization): num_groups 4 does not divide the 6 channels}}
  %0 = train.onnx_node "GroupNormalization"(%x, %s, %s) {node_name = "gn", onnx_attrs = {num_groups = 4 : i64}} : (tensor<2x6x4xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<*xf32>
  return
}
