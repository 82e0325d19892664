// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx | FileCheck %s

// Tests that Gelu is x/2 (1 + erf(x / sqrt 2)).

// CHECK-LABEL: func.func @gelu
// CHECK: %[[R2:.*]] = train.constant dense<0.7071067{{[0-9]*}}> : tensor<f32>
// CHECK: %[[S:.*]] = train.mul %arg0, %[[R2]]
// CHECK: %[[E:.*]] = train.erf %[[S]]
// CHECK: %[[ONE:.*]] = train.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[P:.*]] = train.add %[[E]], %[[ONE]]
// CHECK: %[[HALF:.*]] = train.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[H:.*]] = train.mul %arg0, %[[HALF]]
// CHECK: %[[Y:.*]] = train.mul %[[H]], %[[P]]
// CHECK: return %[[Y]]
func.func @gelu(%x: tensor<2x8xf32>) -> tensor<*xf32> {
  %0 = train.onnx_node "Gelu"(%x) {node_name = "g", onnx_attrs = {}} : (tensor<2x8xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Tests that Gelu with approximate "tanh" uses tanh of
// sqrt(2/pi) (x + 0.044715 x^3), and no erf.

// CHECK-LABEL: func.func @gelu_tanh
// CHECK-NOT: train.erf
// CHECK: %[[X2:.*]] = train.mul %arg0, %arg0
// CHECK: %[[X3:.*]] = train.mul %[[X2]], %arg0
// CHECK: %[[T:.*]] = train.tanh
// CHECK-NOT: train.erf
// CHECK: return
func.func @gelu_tanh(%x: tensor<2x8xf32>) -> tensor<*xf32> {
  %0 = train.onnx_node "Gelu"(%x) {node_name = "g", onnx_attrs = {approximate = "tanh"}} : (tensor<2x8xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Tests that Exp and Log are Train ops, Neg a product with -1 and Abs the
// maximum of x and -x.

// CHECK-LABEL: func.func @exp_log_neg_abs
// CHECK: %[[E:.*]] = train.exp %arg0
// CHECK: %[[L:.*]] = train.log %arg0
// CHECK: %[[M1:.*]] = train.constant dense<-1.000000e+00> : tensor<f32>
// CHECK: %[[N:.*]] = train.mul %arg0, %[[M1]]
// CHECK: %[[N2:.*]] = train.mul %arg0, %{{.*}}
// CHECK: %[[A:.*]] = train.maximum %arg0, %[[N2]]
// CHECK: return %[[E]], %[[L]], %[[N]], %[[A]]
func.func @exp_log_neg_abs(%x: tensor<2x8xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = train.onnx_node "Exp"(%x) {node_name = "e", onnx_attrs = {}} : (tensor<2x8xf32>) -> tensor<*xf32>
  %1 = train.onnx_node "Log"(%x) {node_name = "l", onnx_attrs = {}} : (tensor<2x8xf32>) -> tensor<*xf32>
  %2 = train.onnx_node "Neg"(%x) {node_name = "n", onnx_attrs = {}} : (tensor<2x8xf32>) -> tensor<*xf32>
  %3 = train.onnx_node "Abs"(%x) {node_name = "a", onnx_attrs = {}} : (tensor<2x8xf32>) -> tensor<*xf32>
  return %0, %1, %2, %3 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Tests that Elu is relu(x) + alpha (exp(min(x, 0)) - 1) and Selu gamma
// times the same with its own alpha.

// CHECK-LABEL: func.func @elu_selu
// CHECK: %[[Z:.*]] = train.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[NEG:.*]] = train.minimum %arg0, %[[Z]]
// CHECK: %[[E:.*]] = train.exp %[[NEG]]
// CHECK: %[[EM1:.*]] = train.sub %[[E]]
// CHECK: %[[ALPHA:.*]] = train.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[T:.*]] = train.mul %[[EM1]], %[[ALPHA]]
// CHECK: %[[R:.*]] = train.relu %arg0
// CHECK: %[[ELU:.*]] = train.add %[[R]], %[[T]]
// CHECK: train.constant dense<1.67326319> : tensor<f32>
// CHECK: %[[GAMMA:.*]] = train.constant dense<1.05070102> : tensor<f32>
// CHECK: %[[SELU:.*]] = train.mul %{{.*}}, %[[GAMMA]]
// CHECK: return %[[ELU]], %[[SELU]]
func.func @elu_selu(%x: tensor<2x8xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %0 = train.onnx_node "Elu"(%x) {node_name = "elu", onnx_attrs = {alpha = 2.0 : f32}} : (tensor<2x8xf32>) -> tensor<*xf32>
  %1 = train.onnx_node "Selu"(%x) {node_name = "selu", onnx_attrs = {}} : (tensor<2x8xf32>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// Tests that Softplus is relu(x) + log(1 + exp(-|x|)), which does not
// overflow.

// CHECK-LABEL: func.func @softplus
// CHECK: %[[ABS:.*]] = train.maximum %arg0
// CHECK: %[[NABS:.*]] = train.mul %[[ABS]]
// CHECK: %[[E:.*]] = train.exp %[[NABS]]
// CHECK: %[[P:.*]] = train.add %[[E]]
// CHECK: %[[L:.*]] = train.log %[[P]]
// CHECK: %[[R:.*]] = train.relu %arg0
// CHECK: %[[Y:.*]] = train.add %[[R]], %[[L]]
// CHECK: return %[[Y]]
func.func @softplus(%x: tensor<2x8xf32>) -> tensor<*xf32> {
  %0 = train.onnx_node "Softplus"(%x) {node_name = "sp", onnx_attrs = {}} : (tensor<2x8xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Tests that PRelu is relu(x) + slope * min(x, 0), and that a 1-D slope of
// the channel count that does not broadcast (the opset-6 form of
// PyTorch's converted models) is reshaped to [C, 1, 1].

// CHECK-LABEL: func.func @prelu
// CHECK: %[[S:.*]] = train.reshape %arg1 : tensor<3xf32> -> tensor<3x1x1xf32>
// CHECK: %[[NEG:.*]] = train.minimum %arg0
// CHECK: %[[T:.*]] = train.mul %[[NEG]], %[[S]] : (tensor<2x3x4x5xf32>, tensor<3x1x1xf32>) -> tensor<2x3x4x5xf32>
// CHECK: %[[R:.*]] = train.relu %arg0
// CHECK: %[[Y:.*]] = train.add %[[R]], %[[T]]
// CHECK: return %[[Y]]
func.func @prelu(%x: tensor<2x3x4x5xf32>, %s: tensor<3xf32>) -> tensor<*xf32> {
  %0 = train.onnx_node "PRelu"(%x, %s) {node_name = "p", onnx_attrs = {}} : (tensor<2x3x4x5xf32>, tensor<3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Tests that Split is one slice per used output: sizes from the split
// input, equal parts, and opset 18's num_outputs (ceil(8 / 3) = 3, 3, 2);
// an unused output gets no slice.

// CHECK-LABEL: func.func @split
// CHECK: %[[A:.*]] = train.slice %arg0 starts [0, 0] ends [2, 2] steps [1, 1]
// CHECK: %[[B:.*]] = train.slice %arg0 starts [0, 2] ends [2, 8] steps [1, 1]
// CHECK: %[[C:.*]] = train.slice %arg0 starts [0, 4] ends [2, 8] steps [1, 1]
// CHECK: %[[D:.*]] = train.slice %arg0 starts [0, 6] ends [2, 8] steps [1, 1]
// CHECK-NOT: train.slice
// CHECK: return %[[A]], %[[B]], %[[C]], %[[D]]
func.func @split(%x: tensor<2x8xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %sizes = train.constant dense<[2, 6]> : tensor<2xi64>
  %0:2 = train.onnx_node "Split"(%x, %sizes) {node_name = "s", onnx_attrs = {axis = 1 : i64}} : (tensor<2x8xf32>, tensor<2xi64>) -> (tensor<*xf32>, tensor<*xf32>)
  %1:2 = train.onnx_node "Split"(%x) {node_name = "h", onnx_attrs = {axis = -1 : i64}} : (tensor<2x8xf32>) -> (tensor<*xf32>, tensor<*xf32>)
  %2:3 = train.onnx_node "Split"(%x) {node_name = "t", onnx_attrs = {axis = 1 : i64, num_outputs = 3 : i64}} : (tensor<2x8xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  return %0#0, %0#1, %1#1, %2#2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}
