// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx | FileCheck %s

// Tests that ReduceSum and ReduceMean become a train.sum_to to the keepdims
// shape (the mean divided by the count), reshaped when keepdims is 0, and
// that ReduceMax becomes a train.reduce_max; negative axes count from the
// end, and no axes means all of them.

// CHECK-LABEL: func.func @reductions
// CHECK: %[[SUM:.*]] = train.sum_to %arg0 : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
// CHECK: %[[MSUM:.*]] = train.sum_to %arg0 : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
// CHECK: %[[N:.*]] = train.constant dense<4.000000e+00> : tensor<f32>
// CHECK: %[[MEAN:.*]] = train.div %[[MSUM]], %[[N]]
// CHECK: %[[FLAT:.*]] = train.reshape %[[MEAN]] : tensor<2x3x1xf32> -> tensor<2x3xf32>
// CHECK: %[[MAX:.*]] = train.reduce_max %arg0 : tensor<2x3x4xf32> -> tensor<1x1x1xf32>
// CHECK: return %[[SUM]], %[[FLAT]], %[[MAX]]
func.func @reductions(%x: tensor<2x3x4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %axes = train.constant dense<[-2]> : tensor<1xi64>
  %0 = train.onnx_node "ReduceSum"(%x, %axes) {node_name = "sum", onnx_attrs = {}} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<*xf32>
  %1 = train.onnx_node "ReduceMean"(%x) {node_name = "mean", onnx_attrs = {axes = array<i64: 2>, keepdims = 0 : i64}} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  %2 = train.onnx_node "ReduceMax"(%x) {node_name = "max", onnx_attrs = {}} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Tests that ReduceSumSquare is the sum of x * x and ReduceL2 its square
// root (swin_v2's F.normalize), both through ops that have gradients; the
// sum is raised to float32's smallest normal first, so that a zero norm
// passes no (infinite) gradient.

// CHECK-LABEL: func.func @squares
// CHECK: %[[SQ:.*]] = train.mul %arg0, %arg0
// CHECK: %[[SUMSQ:.*]] = train.sum_to %[[SQ]] : tensor<2x3xf32> -> tensor<2x1xf32>
// CHECK: %[[SQ2:.*]] = train.mul %arg0, %arg0
// CHECK: %[[SUM2:.*]] = train.sum_to %[[SQ2]] : tensor<2x3xf32> -> tensor<2x1xf32>
// CHECK: %[[TINY:.*]] = train.constant dense<1.17549435E-38> : tensor<f32>
// CHECK: %[[SAFE:.*]] = train.maximum %[[SUM2]], %[[TINY]]
// CHECK: %[[NORM:.*]] = train.sqrt %[[SAFE]]
// CHECK: %[[FLAT:.*]] = train.reshape %[[NORM]] : tensor<2x1xf32> -> tensor<2xf32>
// CHECK: return %[[SUMSQ]], %[[FLAT]]
func.func @squares(%x: tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %0 = train.onnx_node "ReduceSumSquare"(%x) {node_name = "sumsq", onnx_attrs = {axes = array<i64: -1>}} : (tensor<2x3xf32>) -> tensor<*xf32>
  %1 = train.onnx_node "ReduceL2"(%x) {node_name = "l2", onnx_attrs = {axes = array<i64: 1>, keepdims = 0 : i64}} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// Tests that ReduceSum with empty axes and noop_with_empty_axes is its
// input.

// CHECK-LABEL: func.func @reduce_sum_noop
// CHECK-NOT: train.sum_to
// CHECK: return %arg0
func.func @reduce_sum_noop(%x: tensor<2x3xf32>) -> tensor<*xf32> {
  %axes = train.constant dense<> : tensor<0xi64>
  %0 = train.onnx_node "ReduceSum"(%x, %axes) {node_name = "sum", onnx_attrs = {noop_with_empty_axes = 1 : i64}} : (tensor<2x3xf32>, tensor<0xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Tests that HardSigmoid is a multiply-add clipped to [0, 1], and HardSwish
// the input times that gate with alpha 1/6 and beta 1/2.

// CHECK-LABEL: func.func @hard_activations
// CHECK: %[[A:.*]] = train.constant dense<2.500000e-01> : tensor<f32>
// CHECK: %[[SA:.*]] = train.mul %arg0, %[[A]]
// CHECK: %[[B:.*]] = train.constant dense<4.000000e-01> : tensor<f32>
// CHECK: %[[SB:.*]] = train.add %[[SA]], %[[B]]
// CHECK: %[[SIG:.*]] = train.clip %[[SB]] min 0.000000e+00 max 1.000000e+00
// CHECK: %[[SIXTH:.*]] = train.constant dense<0.166666672> : tensor<f32>
// CHECK: %[[S6:.*]] = train.mul %arg0, %[[SIXTH]]
// CHECK: %[[HALF:.*]] = train.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[SH:.*]] = train.add %[[S6]], %[[HALF]]
// CHECK: %[[GATE:.*]] = train.clip %[[SH]] min 0.000000e+00 max 1.000000e+00
// CHECK: %[[SWISH:.*]] = train.mul %arg0, %[[GATE]]
// CHECK: return %[[SIG]], %[[SWISH]]
func.func @hard_activations(%x: tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %0 = train.onnx_node "HardSigmoid"(%x) {node_name = "hsig", onnx_attrs = {alpha = 2.500000e-01 : f32, beta = 4.000000e-01 : f32}} : (tensor<2x3xf32>) -> tensor<*xf32>
  %1 = train.onnx_node "HardSwish"(%x) {node_name = "hswish", onnx_attrs = {}} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// Tests that constant-mode Pad concatenates constant blocks along each
// padded axis (and only those), with the constant_value input.

// CHECK-LABEL: func.func @pad_constant
// CHECK: %[[LOW:.*]] = train.constant dense<1.500000e+00> : tensor<2x3x1x4xf32>
// CHECK: %[[HIGH:.*]] = train.constant dense<1.500000e+00> : tensor<2x3x2x4xf32>
// CHECK: %[[H:.*]] = train.concat %[[LOW]], %arg0, %[[HIGH]] axis 2
// CHECK-SAME: -> tensor<2x3x7x4xf32>
// CHECK-NOT: train.concat
// CHECK: return %[[H]]
func.func @pad_constant(%x: tensor<2x3x4x4xf32>) -> tensor<*xf32> {
  %pads = train.constant dense<[0, 0, 1, 0, 0, 0, 2, 0]> : tensor<8xi64>
  %value = train.constant dense<1.5> : tensor<f32>
  %0 = train.onnx_node "Pad"(%x, %pads, %value) {node_name = "pad", onnx_attrs = {}} : (tensor<2x3x4x4xf32>, tensor<8xi64>, tensor<f32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Tests that reflect-mode Pad takes reversed slices (x[2], x[1] before,
// x[2] after for 2 and 1 elements of an axis of 4), edge mode broadcast
// edge slices, and that a negative pad crops.

// CHECK-LABEL: func.func @pad_reflect_edge
// CHECK: %[[BEFORE:.*]] = train.slice %arg0 starts [0, 2] ends [3, 0] steps [1, -1]
// CHECK: %[[AFTER:.*]] = train.slice %arg0 starts [0, 2] ends [3, 1] steps [1, -1]
// CHECK: %[[R:.*]] = train.concat %[[BEFORE]], %arg0, %[[AFTER]] axis 1
// CHECK: %[[CROP:.*]] = train.slice %arg0 starts [0, 0] ends [3, 3] steps [1, 1]
// CHECK: %[[EDGE:.*]] = train.slice %[[CROP]] starts [0, 0] ends [3, 1] steps [1, 1]
// CHECK: %[[SPREAD:.*]] = train.broadcast_to %[[EDGE]] : tensor<3x1xf32> -> tensor<3x2xf32>
// CHECK: %[[E:.*]] = train.concat %[[SPREAD]], %[[CROP]] axis 1
// CHECK: return %[[R]], %[[E]]
func.func @pad_reflect_edge(%x: tensor<3x4xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %p1 = train.constant dense<[0, 2, 0, 1]> : tensor<4xi64>
  %0 = train.onnx_node "Pad"(%x, %p1) {node_name = "reflect", onnx_attrs = {mode = "reflect"}} : (tensor<3x4xf32>, tensor<4xi64>) -> tensor<*xf32>
  %p2 = train.constant dense<[0, 2, 0, -1]> : tensor<4xi64>
  %1 = train.onnx_node "Pad"(%x, %p2) {node_name = "edge", onnx_attrs = {mode = "edge"}} : (tensor<3x4xf32>, tensor<4xi64>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// Tests that Gather on data that is not a constant (an embedding table, with
// run-time token indices) becomes a train.gather whose result replaces the
// gathered axis by the indices' shape.

// CHECK-LABEL: func.func @gather_embedding
// CHECK: %[[T:.*]] = train.read_param @table
// CHECK: %[[E:.*]] = train.gather %[[T]], %arg0 axis 0 : (tensor<10x4xf32>, tensor<2x5xi64>) -> tensor<2x5x4xf32>
// CHECK: return %[[E]]
module {
  train.param @table trainable : tensor<10x4xf32>
  func.func @gather_embedding(%ids: tensor<2x5xi64>) -> tensor<*xf32> {
    %t = train.read_param @table : tensor<10x4xf32>
    %0 = train.onnx_node "Gather"(%t, %ids) {node_name = "embed", onnx_attrs = {}} : (tensor<10x4xf32>, tensor<2x5xi64>) -> tensor<*xf32>
    return %0 : tensor<*xf32>
  }
}

// -----

// Tests that GlobalMaxPool is a train.reduce_max over the spatial axes,
// kept as 1.

// CHECK-LABEL: func.func @global_max_pool
// CHECK: %[[M:.*]] = train.reduce_max %arg0 : tensor<2x3x4x5xf32> -> tensor<2x3x1x1xf32>
// CHECK: return %[[M]]
func.func @global_max_pool(%x: tensor<2x3x4x5xf32>) -> tensor<*xf32> {
  %0 = train.onnx_node "GlobalMaxPool"(%x) {node_name = "gmp", onnx_attrs = {}} : (tensor<2x3x4x5xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
