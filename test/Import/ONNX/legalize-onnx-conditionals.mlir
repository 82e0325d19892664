// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx | FileCheck %s

// Tests that a comparison of computed float data is a train.compare and
// Where on it a train.select (torch.where(x > 0, x, 0.1 * x)).

// CHECK-LABEL: func.func @where_computed
// CHECK: %[[ZERO:.*]] = train.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[C:.*]] = train.compare gt %arg0, %[[ZERO]] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xi1>
// CHECK: %[[S:.*]] = train.mul
// CHECK: %[[Y:.*]] = train.select %[[C]], %arg0, %[[S]] : (tensor<2x8xi1>, tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK: return %[[Y]]
func.func @where_computed(%x: tensor<2x8xf32>) -> tensor<*xf32> {
  %zero = train.onnx_node "Constant"() {node_name = "z", onnx_attrs = {value = dense<0.0> : tensor<f32>}} : () -> tensor<f32>
  %tenth = train.onnx_node "Constant"() {node_name = "t", onnx_attrs = {value = dense<0.1> : tensor<f32>}} : () -> tensor<f32>
  %c = train.onnx_node "Greater"(%x, %zero) {node_name = "gt", onnx_attrs = {}} : (tensor<2x8xf32>, tensor<f32>) -> tensor<*xi1>
  %s = train.onnx_node "Mul"(%x, %tenth) {node_name = "m", onnx_attrs = {}} : (tensor<2x8xf32>, tensor<f32>) -> tensor<*xf32>
  %y = train.onnx_node "Where"(%c, %x, %s) {node_name = "w", onnx_attrs = {}} : (tensor<*xi1>, tensor<2x8xf32>, tensor<*xf32>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

// Tests that each comparison op gets its predicate, with broadcasting.

// CHECK-LABEL: func.func @predicates
// CHECK: train.compare eq %arg0, %arg1 : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xi1>
// CHECK: train.compare lt %arg0, %arg1
// CHECK: train.compare le %arg0, %arg1
// CHECK: train.compare gt %arg0, %arg1
// CHECK: train.compare ge %arg0, %arg1
func.func @predicates(%x: tensor<2x8xf32>, %y: tensor<8xf32>) -> (tensor<*xi1>, tensor<*xi1>, tensor<*xi1>, tensor<*xi1>, tensor<*xi1>) {
  %0 = train.onnx_node "Equal"(%x, %y) {node_name = "eq", onnx_attrs = {}} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<*xi1>
  %1 = train.onnx_node "Less"(%x, %y) {node_name = "lt", onnx_attrs = {}} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<*xi1>
  %2 = train.onnx_node "LessOrEqual"(%x, %y) {node_name = "le", onnx_attrs = {}} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<*xi1>
  %3 = train.onnx_node "Greater"(%x, %y) {node_name = "gt", onnx_attrs = {}} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<*xi1>
  %4 = train.onnx_node "GreaterOrEqual"(%x, %y) {node_name = "ge", onnx_attrs = {}} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<*xi1>
  return %0, %1, %2, %3, %4 : tensor<*xi1>, tensor<*xi1>, tensor<*xi1>, tensor<*xi1>, tensor<*xi1>
}

// -----

// Tests that masked_fill by a constant mask (an attention mask) selects
// between the computed scores and a constant, the mask kept as a constant.

// CHECK-LABEL: func.func @masked_fill
// CHECK: %[[MASK:.*]] = train.constant dense<[true, false, false]> : tensor<3xi1>
// CHECK: %[[FILL:.*]] = train.constant dense<0xFF800000> : tensor<f32>
// CHECK: train.select %[[MASK]], %[[FILL]], %arg0 : (tensor<3xi1>, tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @masked_fill(%x: tensor<2x3xf32>) -> tensor<*xf32> {
  %m = train.onnx_node "Constant"() {node_name = "m", onnx_attrs = {value = dense<[true, false, false]> : tensor<3xi1>}} : () -> tensor<3xi1>
  %f = train.onnx_node "Constant"() {node_name = "f", onnx_attrs = {value = dense<0xFF800000> : tensor<f32>}} : () -> tensor<f32>
  %y = train.onnx_node "Where"(%m, %f, %x) {node_name = "w", onnx_attrs = {}} : (tensor<3xi1>, tensor<f32>, tensor<2x3xf32>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

// Tests that comparisons and Where on constants fold (integer shape
// arithmetic): no compare or select is left.

// CHECK-LABEL: func.func @folded
// CHECK-NOT: train.compare
// CHECK-NOT: train.select
// CHECK: %[[Y:.*]] = train.constant dense<[1, 8, 3]> : tensor<3xi64>
// CHECK: return %[[Y]]
func.func @folded() -> tensor<3xi64> {
  %a = train.onnx_node "Constant"() {node_name = "a", onnx_attrs = {value = dense<[1, 2, 3]> : tensor<3xi64>}} : () -> tensor<3xi64>
  %b = train.onnx_node "Constant"() {node_name = "b", onnx_attrs = {value = dense<2> : tensor<i64>}} : () -> tensor<i64>
  %c = train.onnx_node "LessOrEqual"(%a, %b) {node_name = "le", onnx_attrs = {}} : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %n = train.onnx_node "GreaterOrEqual"(%a, %b) {node_name = "ge", onnx_attrs = {}} : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %x = train.onnx_node "Constant"() {node_name = "x", onnx_attrs = {value = dense<[7, 8, 9]> : tensor<3xi64>}} : () -> tensor<3xi64>
  %w = train.onnx_node "Where"(%c, %x, %a) {node_name = "w", onnx_attrs = {}} : (tensor<3xi1>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %y = train.onnx_node "Where"(%n, %w, %a) {node_name = "w2", onnx_attrs = {}} : (tensor<3xi1>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %y : tensor<3xi64>
}
