// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx | FileCheck %s

// Tests that a forward LSTM is unrolled over its 2 steps: one Gemm projects
// every step's input with W and Wb, each step adds its recurrent Gemm with R
// and Rb, takes sigmoid of the i, o, f gates and tanh of the candidate, and
// Y and Y_h are built from the hidden states; no LSTM node is left.

// CHECK-LABEL: func.func @lstm_forward
// CHECK-NOT: train.onnx_node
// CHECK: %[[XS:.*]] = train.reshape %arg0 : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK: %[[PROJ:.*]] = train.gemm %[[XS]], %{{.*}}, %{{.*}} {trans_b = true} : (tensor<6x4xf32>, tensor<20x4xf32>, tensor<20xf32>) -> tensor<6x20xf32>
// CHECK: %[[H0:.*]] = train.constant dense<0.000000e+00> : tensor<3x5xf32>
// CHECK: %[[X0:.*]] = train.slice %[[PROJ]] starts [0, 0] ends [3, 20]
// CHECK: %[[REC:.*]] = train.gemm %[[H0]], %{{.*}}, %{{.*}} {trans_b = true}
// CHECK: %[[G:.*]] = train.add %[[X0]], %[[REC]]
// CHECK: %[[IOF:.*]] = train.sigmoid %{{.*}} : tensor<3x15xf32>
// CHECK: train.tanh %{{.*}} : tensor<3x5xf32>
// CHECK: train.slice %[[PROJ]] starts [3, 0] ends [6, 20]
// CHECK-NOT: train.slice %[[PROJ]]
// CHECK: %[[Y:.*]] = train.reshape %{{.*}} : tensor<6x5xf32> -> tensor<2x1x3x5xf32>
// CHECK: %[[YH:.*]] = train.reshape %{{.*}} : tensor<3x5xf32> -> tensor<1x3x5xf32>
// CHECK: return %[[Y]], %[[YH]]
func.func @lstm_forward(%x: tensor<2x3x4xf32>, %w: tensor<1x20x4xf32>, %r: tensor<1x20x5xf32>, %b: tensor<1x40xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %none = train.onnx_none
  %y, %yh, %yc = train.onnx_node "LSTM"(%x, %w, %r, %b) {node_name = "lstm", onnx_attrs = {hidden_size = 5 : i64}} : (tensor<2x3x4xf32>, tensor<1x20x4xf32>, tensor<1x20x5xf32>, tensor<1x40xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  return %y, %yh : tensor<*xf32>, tensor<*xf32>
}

// -----

// Tests that a bidirectional GRU (linear_before_reset, as PyTorch exports
// it) runs its second direction backwards from its initial state and joins
// both directions' states along axis 1 of Y and axis 0 of Y_h.

// CHECK-LABEL: func.func @gru_bidirectional
// CHECK-NOT: train.onnx_node
// CHECK: train.slice %arg3 starts [0, 0, 0] ends [1, 3, 5]
// CHECK: train.slice %arg3 starts [1, 0, 0] ends [2, 3, 5]
// The backward direction starts at the last step.
// CHECK: train.slice %{{.*}} starts [3, 0] ends [6, 15]
// CHECK: %[[Y:.*]] = train.concat %{{.*}}, %{{.*}} axis 1 : (tensor<2x1x3x5xf32>, tensor<2x1x3x5xf32>) -> tensor<2x2x3x5xf32>
// CHECK: %[[YH:.*]] = train.concat %{{.*}}, %{{.*}} axis 0 : (tensor<1x3x5xf32>, tensor<1x3x5xf32>) -> tensor<2x3x5xf32>
// CHECK: return %[[Y]], %[[YH]]
func.func @gru_bidirectional(%x: tensor<2x3x4xf32>, %w: tensor<2x15x4xf32>, %r: tensor<2x15x5xf32>, %h0: tensor<2x3x5xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %none = train.onnx_none
  %y, %yh = train.onnx_node "GRU"(%x, %w, %r, %none, %none, %h0) {node_name = "gru", onnx_attrs = {hidden_size = 5 : i64, direction = "bidirectional", linear_before_reset = 1 : i64}} : (tensor<2x3x4xf32>, tensor<2x15x4xf32>, tensor<2x15x5xf32>, none, none, tensor<2x3x5xf32>) -> (tensor<*xf32>, tensor<*xf32>)
  return %y, %yh : tensor<*xf32>, tensor<*xf32>
}
