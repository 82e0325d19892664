// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx -verify-diagnostics

// Tests that Mod and Not on computed data are refused by name (they fold on
// constants only).
func.func @mod_computed(%x: tensor<4xf32>) {
  %y = train.constant dense<2.0> : tensor<f32>
  // expected-error @+1 {{node 'm' (Mod): Mod on computed data (input 0) is not supported; only its use on constants (shape arithmetic) folds}}
  %0 = train.onnx_node "Mod"(%x, %y) {node_name = "m", onnx_attrs = {fmod = 1 : i64}} : (tensor<4xf32>, tensor<f32>) -> tensor<*xf32>
  return
}

// -----

// Tests that integer Mod by zero and float Mod without fmod are refused.
func.func @mod_zero() {
  %a = train.constant dense<[1, 2]> : tensor<2xi64>
  %b = train.constant dense<[1, 0]> : tensor<2xi64>
  // expected-error @+1 {{node 'm' (Mod): integer Mod by zero}}
  %0 = train.onnx_node "Mod"(%a, %b) {node_name = "m", onnx_attrs = {}} : (tensor<2xi64>, tensor<2xi64>) -> tensor<*xi64>
  return
}

// -----

func.func @mod_float_fmod0() {
  %a = train.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // expected-error @+1 {{node 'm' (Mod): fmod=0 is defined for integers only; float inputs need fmod=1}}
  %0 = train.onnx_node "Mod"(%a, %a) {node_name = "m", onnx_attrs = {}} : (tensor<2xf32>, tensor<2xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that out-of-range indices and reductions are refused.
func.func @scatter_out_of_range() {
  %d = train.constant dense<0> : tensor<3xi64>
  %i = train.constant dense<[[3]]> : tensor<1x1xi64>
  %u = train.constant dense<[1]> : tensor<1xi64>
  // expected-error @+1 {{node 's' (ScatterND): index 3 is out of range for axis 0 of size 3}}
  %0 = train.onnx_node "ScatterND"(%d, %i, %u) {node_name = "s", onnx_attrs = {}} : (tensor<3xi64>, tensor<1x1xi64>, tensor<1xi64>) -> tensor<*xi64>
  return
}

// -----

func.func @scatter_reduction() {
  %d = train.constant dense<0> : tensor<3xi64>
  %i = train.constant dense<[[1]]> : tensor<1x1xi64>
  %u = train.constant dense<[1]> : tensor<1xi64>
  // expected-error @+1 {{node 's' (ScatterND): reduction 'add' is not supported (only 'none')}}
  %0 = train.onnx_node "ScatterND"(%d, %i, %u) {node_name = "s", onnx_attrs = {reduction = "add"}} : (tensor<3xi64>, tensor<1x1xi64>, tensor<1xi64>) -> tensor<*xi64>
  return
}

// -----

// Tests that ScatterND of computed updates is refused (computed data with
// constant updates is a masked overwrite).
func.func @scatter_computed_updates(%x: tensor<4xf32>, %u: tensor<1xf32>) {
  %i = train.constant dense<[[1]]> : tensor<1x1xi64>
  // expected-error @+1 {{node 's' (ScatterND): ScatterND of computed updates (input 2) is not supported; only constant updates}}
  %0 = train.onnx_node "ScatterND"(%x, %i, %u) {node_name = "s", onnx_attrs = {}} : (tensor<4xf32>, tensor<1x1xi64>, tensor<1xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that Not of computed data is refused.
func.func @not_computed(%x: tensor<3xi1>) {
  // expected-error @+1 {{node 'n' (Not): Not on computed data (input 0) is not supported; only its use on constants (shape arithmetic) folds}}
  %0 = train.onnx_node "Not"(%x) {node_name = "n", onnx_attrs = {}} : (tensor<3xi1>) -> tensor<*xi1>
  return
}
