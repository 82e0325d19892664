// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx -verify-diagnostics

// Tests that an unknown Gelu approximation is refused.
func.func @gelu_approximate(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{node 'g' (Gelu): approximate 'sigmoid' is not one of 'none' and 'tanh'}}
  %0 = train.onnx_node "Gelu"(%x) {node_name = "g", onnx_attrs = {approximate = "sigmoid"}} : (tensor<2x8xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that a slope that does not broadcast to the input is refused.
func.func @prelu_slope(%x: tensor<2x3x4xf32>, %s: tensor<5xf32>) {
  // expected-error @+1 {{node 'p' (PRelu): slope of type 'tensor<5xf32>' does not broadcast to the input type 'tensor<2x3x4xf32>'}}
  %0 = train.onnx_node "PRelu"(%x, %s) {node_name = "p", onnx_attrs = {}} : (tensor<2x3x4xf32>, tensor<5xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that split sizes must cover the axis.
func.func @split_sizes(%x: tensor<2x8xf32>) {
  %sizes = train.constant dense<[2, 5]> : tensor<2xi64>
  // expected-error @+1 {{node 's' (Split): split sizes of 2 parts adding up to 7 do not cover 2 outputs of the 8 elements of axis 1}}
  %0:2 = train.onnx_node "Split"(%x, %sizes) {node_name = "s", onnx_attrs = {axis = 1 : i64}} : (tensor<2x8xf32>, tensor<2xi64>) -> (tensor<*xf32>, tensor<*xf32>)
  return
}

// -----

// Tests that equal parts must divide the axis (before opset 18's
// num_outputs).
func.func @split_uneven(%x: tensor<2x7xf32>) {
  // expected-error @+1 {{node 's' (Split): cannot split 7 elements into 2 equal parts}}
  %0:2 = train.onnx_node "Split"(%x) {node_name = "s", onnx_attrs = {axis = 1 : i64}} : (tensor<2x7xf32>) -> (tensor<*xf32>, tensor<*xf32>)
  return
}

// -----

// Tests that split sizes must be a constant.
func.func @split_not_constant(%x: tensor<2x8xf32>, %sizes: tensor<2xi64>) {
  // expected-error @+1 {{node 's' (Split): input 1 (split) must be a constant: traincc compiles static shapes}}
  %0:2 = train.onnx_node "Split"(%x, %sizes) {node_name = "s", onnx_attrs = {axis = 1 : i64}} : (tensor<2x8xf32>, tensor<2xi64>) -> (tensor<*xf32>, tensor<*xf32>)
  return
}
