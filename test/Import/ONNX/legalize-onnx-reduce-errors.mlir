// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx -verify-diagnostics

// Tests that ReduceSum's axes must be a constant.
func.func @reduce_axes_not_constant(%x: tensor<2x3xf32>, %axes: tensor<1xi64>) {
  // expected-error @+1 {{node 'sum' (ReduceSum): input 1 (axes) must be a constant: traincc compiles static shapes}}
  %0 = train.onnx_node "ReduceSum"(%x, %axes) {node_name = "sum", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<*xf32>
  return
}

// -----

// Tests that an axis given twice is refused.
func.func @reduce_axis_twice(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{node 'mean' (ReduceMean): axis -1 is given twice}}
  %0 = train.onnx_node "ReduceMean"(%x) {node_name = "mean", onnx_attrs = {axes = array<i64: 1, -1>}} : (tensor<2x3xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that an axis out of range is refused.
func.func @reduce_axis_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{node 'max' (ReduceMax): axis 2 is out of range for rank 2}}
  %0 = train.onnx_node "ReduceMax"(%x) {node_name = "max", onnx_attrs = {axes = array<i64: 2>}} : (tensor<2x3xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that the maximum of no elements is refused.
func.func @reduce_max_empty(%x: tensor<2x0xf32>) {
  // expected-error @+1 {{node 'max' (ReduceMax): the maximum of an empty set of elements}}
  %0 = train.onnx_node "ReduceMax"(%x) {node_name = "max", onnx_attrs = {axes = array<i64: 1>}} : (tensor<2x0xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that Pad names an unsupported mode.
func.func @pad_mode(%x: tensor<2x3xf32>) {
  %p = train.constant dense<[0, 1, 0, 1]> : tensor<4xi64>
  // expected-error @+1 {{node 'pad' (Pad): mode 'wrap' is not supported (constant, reflect, edge are)}}
  %0 = train.onnx_node "Pad"(%x, %p) {node_name = "pad", onnx_attrs = {mode = "wrap"}} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<*xf32>
  return
}

// -----

// Tests that Pad's pads must be a constant of twice the rank.
func.func @pad_pads(%x: tensor<2x3xf32>, %q: tensor<4xi64>) {
  // expected-error @+1 {{node 'dynamic' (Pad): input 1 (pads) must be a constant: traincc compiles static shapes}}
  %0 = train.onnx_node "Pad"(%x, %q) {node_name = "dynamic", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<*xf32>
  %p = train.constant dense<[0, 1]> : tensor<2xi64>
  // expected-error @+1 {{node 'short' (Pad): expected 4 pads for rank 2, got 2}}
  %1 = train.onnx_node "Pad"(%x, %p) {node_name = "short", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32>
  return
}

// -----

// Tests that reflect pads must stay inside the axis, and crops too.
func.func @pad_reflect_range(%x: tensor<2x3xf32>) {
  %p = train.constant dense<[0, 3, 0, 0]> : tensor<4xi64>
  // expected-error @+1 {{node 'reflect' (Pad): reflect pads of 3 need more than the 3 elements of axis 1}}
  %0 = train.onnx_node "Pad"(%x, %p) {node_name = "reflect", onnx_attrs = {mode = "reflect"}} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<*xf32>
  %c = train.constant dense<[0, -2, 0, -2]> : tensor<4xi64>
  // expected-error @+1 {{node 'crop' (Pad): pads -2 and -2 crop more than the 3 elements of axis 1}}
  %1 = train.onnx_node "Pad"(%x, %c) {node_name = "crop", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<*xf32>
  return
}
