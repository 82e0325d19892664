// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx -verify-diagnostics

// Tests that comparisons of computed integer data stay unsupported.
func.func @equal_computed_integers(%x: tensor<2xi64>) {
  %c = train.constant dense<1> : tensor<2xi64>
  // expected-error @+1 {{node 'e' (Equal): comparison of computed data is supported for float tensors only}}
  %0 = train.onnx_node "Equal"(%x, %c) {node_name = "e", onnx_attrs = {}} : (tensor<2xi64>, tensor<2xi64>) -> tensor<*xi1>
  return
}

// -----

// Tests that Where choosing between computed integers stays unsupported.
func.func @where_computed_integers(%c: tensor<2xi1>, %x: tensor<2xi64>) {
  // expected-error @+1 {{node 'w' (Where): Where on computed data is supported between float tensors only}}
  %0 = train.onnx_node "Where"(%c, %x, %x) {node_name = "w", onnx_attrs = {}} : (tensor<2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<*xi64>
  return
}

// -----

// Tests that a computed condition must be a bool tensor.
func.func @where_condition_type(%c: tensor<2xf32>, %x: tensor<2xf32>) {
  // expected-error @+1 {{node 'w' (Where): input 0 (condition) must be a bool tensor, got 'tensor<2xf32>'}}
  %0 = train.onnx_node "Where"(%c, %x, %x) {node_name = "w", onnx_attrs = {}} : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that a computed condition must broadcast with the values.
func.func @where_computed_shapes(%c: tensor<3xi1>, %x: tensor<2x4xf32>) {
  // expected-error @+1 {{node 'w' (Where): condition shape [3] does not broadcast with [2, 4]}}
  %0 = train.onnx_node "Where"(%c, %x, %x) {node_name = "w", onnx_attrs = {}} : (tensor<3xi1>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<*xf32>
  return
}

