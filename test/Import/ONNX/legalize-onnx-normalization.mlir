// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx | FileCheck %s

// Tests that LayerNormalization normalises over the axes from `axis` on:
// a mean by sum_to to the kept shape, the centred input, its mean square
// plus epsilon under a square root, then Scale and B broadcast.

// CHECK-LABEL: func.func @layer_norm
// CHECK: %[[N:.*]] = train.constant dense<6.250000e-02> : tensor<f32>
// CHECK: %[[SUM:.*]] = train.sum_to %arg0 : tensor<2x3x4x4xf32> -> tensor<2x3x1x1xf32>
// CHECK: %[[MEAN:.*]] = train.mul %[[SUM]], %[[N]]
// CHECK: %[[C:.*]] = train.sub %arg0, %[[MEAN]]
// CHECK: %[[SQ:.*]] = train.mul %[[C]], %[[C]]
// CHECK: %[[SQSUM:.*]] = train.sum_to %[[SQ]] : tensor<2x3x4x4xf32> -> tensor<2x3x1x1xf32>
// CHECK: %[[VAR:.*]] = train.mul %[[SQSUM]], %[[N]]
// CHECK: %[[EPS:.*]] = train.constant dense<1.000000e-03> : tensor<f32>
// CHECK: %[[VEPS:.*]] = train.add %[[VAR]], %[[EPS]]
// CHECK: %[[STD:.*]] = train.sqrt %[[VEPS]]
// CHECK: %[[NORM:.*]] = train.div %[[C]], %[[STD]]
// CHECK: %[[SCALED:.*]] = train.mul %[[NORM]], %arg1 : (tensor<2x3x4x4xf32>, tensor<4x4xf32>) -> tensor<2x3x4x4xf32>
// CHECK: %[[Y:.*]] = train.add %[[SCALED]], %arg2
// CHECK: return %[[Y]]
func.func @layer_norm(%x: tensor<2x3x4x4xf32>, %s: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<*xf32> {
  %0 = train.onnx_node "LayerNormalization"(%x, %s, %b) {node_name = "ln", onnx_attrs = {axis = 2 : i64, epsilon = 1.0e-3 : f32}} : (tensor<2x3x4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Tests that LayerNormalization without B stops after the scale, and that
// the default axis is the last one.

// CHECK-LABEL: func.func @layer_norm_no_bias
// CHECK: train.sum_to %arg0 : tensor<2x8xf32> -> tensor<2x1xf32>
// CHECK: %[[Y:.*]] = train.mul %{{.*}}, %arg1 : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
// CHECK-NOT: train.add %[[Y]]
// CHECK: return %[[Y]]
func.func @layer_norm_no_bias(%x: tensor<2x8xf32>, %s: tensor<8xf32>) -> tensor<*xf32> {
  %0 = train.onnx_node "LayerNormalization"(%x, %s) {node_name = "ln", onnx_attrs = {}} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Tests that LayerNormalization's optional Mean and InvStdDev outputs are
// the mean and 1 / sqrt(var + eps), of the kept shape.

// CHECK-LABEL: func.func @layer_norm_statistics
// CHECK: %[[SUM:.*]] = train.sum_to %arg0 : tensor<2x8xf32> -> tensor<2x1xf32>
// CHECK: %[[MEAN:.*]] = train.mul %[[SUM]]
// CHECK: %[[STD:.*]] = train.sqrt
// CHECK: %[[ONE:.*]] = train.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[INV:.*]] = train.div %[[ONE]], %[[STD]] : (tensor<f32>, tensor<2x1xf32>) -> tensor<2x1xf32>
// CHECK: return %{{.*}}, %[[MEAN]], %[[INV]]
func.func @layer_norm_statistics(%x: tensor<2x8xf32>, %s: tensor<8xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0:3 = train.onnx_node "LayerNormalization"(%x, %s) {node_name = "ln", onnx_attrs = {}} : (tensor<2x8xf32>, tensor<8xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  return %0#0, %0#1, %0#2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Tests that InstanceNormalization normalises each (sample, channel) over
// the spatial axes and scales and shifts per channel.

// CHECK-LABEL: func.func @instance_norm
// CHECK: train.sum_to %arg0 : tensor<2x3x4x5xf32> -> tensor<2x3x1x1xf32>
// CHECK: %[[S:.*]] = train.reshape %arg1 : tensor<3xf32> -> tensor<3x1x1xf32>
// CHECK: %[[B:.*]] = train.reshape %arg2 : tensor<3xf32> -> tensor<3x1x1xf32>
// CHECK: %[[Y:.*]] = train.mul %{{.*}}, %[[S]]
// CHECK: %[[Z:.*]] = train.add %[[Y]], %[[B]]
// CHECK: return %[[Z]]
func.func @instance_norm(%x: tensor<2x3x4x5xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<*xf32> {
  %0 = train.onnx_node "InstanceNormalization"(%x, %s, %b) {node_name = "in", onnx_attrs = {epsilon = 1.0e-3 : f32}} : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Tests that GroupNormalization normalises each (sample, group) as a
// [N, G, C/G * spatial] tensor, with per-channel scale and bias (opset 21)
// applied after the reshape back, or per-group ones (opset 18) before it.

// CHECK-LABEL: func.func @group_norm
// CHECK: %[[G:.*]] = train.reshape %arg0 : tensor<2x6x4xf32> -> tensor<2x3x8xf32>
// CHECK: train.sum_to %[[G]] : tensor<2x3x8xf32> -> tensor<2x3x1xf32>
// CHECK: %[[N:.*]] = train.div
// CHECK: %[[BACK:.*]] = train.reshape %[[N]] : tensor<2x3x8xf32> -> tensor<2x6x4xf32>
// CHECK: %[[S:.*]] = train.reshape %arg1 : tensor<6xf32> -> tensor<6x1xf32>
// CHECK: train.mul %[[BACK]], %[[S]]
// CHECK: %[[G2:.*]] = train.reshape %arg0 : tensor<2x6x4xf32> -> tensor<2x3x8xf32>
// CHECK: %[[N2:.*]] = train.div
// CHECK: %[[S2:.*]] = train.reshape %arg3 : tensor<3xf32> -> tensor<3x1xf32>
// CHECK: %[[Y2:.*]] = train.mul %[[N2]], %[[S2]] : (tensor<2x3x8xf32>, tensor<3x1xf32>) -> tensor<2x3x8xf32>
// CHECK: %[[Z2:.*]] = train.add %[[Y2]]
// CHECK: train.reshape %[[Z2]] : tensor<2x3x8xf32> -> tensor<2x6x4xf32>
func.func @group_norm(%x: tensor<2x6x4xf32>, %s: tensor<6xf32>, %b: tensor<6xf32>, %sg: tensor<3xf32>, %bg: tensor<3xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %0 = train.onnx_node "GroupNormalization"(%x, %s, %b) {node_name = "gn", onnx_attrs = {num_groups = 3 : i64}} : (tensor<2x6x4xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<*xf32>
  %1 = train.onnx_node "GroupNormalization"(%x, %sg, %bg) {node_name = "gn18", onnx_attrs = {num_groups = 3 : i64}} : (tensor<2x6x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}
