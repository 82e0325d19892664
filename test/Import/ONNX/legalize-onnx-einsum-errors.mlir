// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx -verify-diagnostics

// Tests that a diagonal (a repeated label) is refused.
func.func @einsum_diagonal(%x: tensor<3x3xf32>) {
  // expected-error @+1 {{node 'e' (Einsum): repeated label 'i' in term 'ii' (a diagonal) is not supported}}
  %0 = train.onnx_node "Einsum"(%x) {node_name = "e", onnx_attrs = {equation = "ii->i"}} : (tensor<3x3xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that a sum over one operand alone is refused.
func.func @einsum_sum(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{node 'e' (Einsum): label 'j' is summed over one operand alone, which is not supported}}
  %0 = train.onnx_node "Einsum"(%x) {node_name = "e", onnx_attrs = {equation = "ij->i"}} : (tensor<3x4xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that an implicit output is refused.
func.func @einsum_implicit(%x: tensor<3x4xf32>, %y: tensor<4x5xf32>) {
  // expected-error @+1 {{node 'e' (Einsum): equation 'ij,jk' needs an explicit output (->) and no ellipsis}}
  %0 = train.onnx_node "Einsum"(%x, %y) {node_name = "e", onnx_attrs = {equation = "ij,jk"}} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that labels must agree in size.
func.func @einsum_sizes(%x: tensor<3x4xf32>, %y: tensor<5x6xf32>) {
  // expected-error @+1 {{node 'e' (Einsum): label 'j' has sizes 4 and 5}}
  %0 = train.onnx_node "Einsum"(%x, %y) {node_name = "e", onnx_attrs = {equation = "ij,jk->ik"}} : (tensor<3x4xf32>, tensor<5x6xf32>) -> tensor<*xf32>
  return
}
