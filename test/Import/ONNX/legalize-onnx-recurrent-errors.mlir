// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx -verify-diagnostics

// Tests that the batch-first layout is refused by name.
func.func @lstm_layout(%x: tensor<3x2x4xf32>, %w: tensor<1x20x4xf32>, %r: tensor<1x20x5xf32>) {
  // expected-error @+1 {{node 'lstm' (LSTM): attribute 'layout' = 1 is not supported}}
  %y = train.onnx_node "LSTM"(%x, %w, %r) {node_name = "lstm", onnx_attrs = {hidden_size = 5 : i64, layout = 1 : i64}} : (tensor<3x2x4xf32>, tensor<1x20x4xf32>, tensor<1x20x5xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that cell clipping is refused by name.
func.func @lstm_clip(%x: tensor<2x3x4xf32>, %w: tensor<1x20x4xf32>, %r: tensor<1x20x5xf32>) {
  // expected-error @+1 {{node 'lstm' (LSTM): attribute 'clip' is not supported (cell clipping)}}
  %y = train.onnx_node "LSTM"(%x, %w, %r) {node_name = "lstm", onnx_attrs = {hidden_size = 5 : i64, clip = 1.0 : f32}} : (tensor<2x3x4xf32>, tensor<1x20x4xf32>, tensor<1x20x5xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that activations other than the defaults are refused.
func.func @gru_activations(%x: tensor<2x3x4xf32>, %w: tensor<1x15x4xf32>, %r: tensor<1x15x5xf32>) {
  // expected-error @+1 {{node 'gru' (GRU): attribute 'activations' must be the default (Sigmoid, Tanh per direction)}}
  %y = train.onnx_node "GRU"(%x, %w, %r) {node_name = "gru", onnx_attrs = {hidden_size = 5 : i64, activations = ["Relu", "Tanh"]}} : (tensor<2x3x4xf32>, tensor<1x15x4xf32>, tensor<1x15x5xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that peepholes are refused.
func.func @lstm_peepholes(%x: tensor<2x3x4xf32>, %w: tensor<1x20x4xf32>, %r: tensor<1x20x5xf32>, %p: tensor<1x15xf32>) {
  %none = train.onnx_none
  // expected-error @+1 {{node 'lstm' (LSTM): input 7 (P, peepholes) is not supported}}
  %y = train.onnx_node "LSTM"(%x, %w, %r, %none, %none, %none, %none, %p) {node_name = "lstm", onnx_attrs = {hidden_size = 5 : i64}} : (tensor<2x3x4xf32>, tensor<1x20x4xf32>, tensor<1x20x5xf32>, none, none, none, none, tensor<1x15xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that run-time sequence lengths are refused.
func.func @gru_sequence_lens(%x: tensor<2x3x4xf32>, %w: tensor<1x15x4xf32>, %r: tensor<1x15x5xf32>, %lens: tensor<3xi32>) {
  %none = train.onnx_none
  // expected-error @+1 {{node 'gru' (GRU): input 4 (sequence_lens) is not supported unless every length is the sequence length 2}}
  %y = train.onnx_node "GRU"(%x, %w, %r, %none, %lens) {node_name = "gru", onnx_attrs = {hidden_size = 5 : i64}} : (tensor<2x3x4xf32>, tensor<1x15x4xf32>, tensor<1x15x5xf32>, none, tensor<3xi32>) -> tensor<*xf32>
  return
}

// -----

// Tests that W must have the shape hidden_size implies.
func.func @lstm_weight_shape(%x: tensor<2x3x4xf32>, %w: tensor<1x16x4xf32>, %r: tensor<1x20x5xf32>) {
  // expected-error @+1 {{node 'lstm' (LSTM): input 1 (W) is 'tensor<1x16x4xf32>', expected shape [1, 20, 4] of 'f32'}}
  %y = train.onnx_node "LSTM"(%x, %w, %r) {node_name = "lstm", onnx_attrs = {hidden_size = 5 : i64}} : (tensor<2x3x4xf32>, tensor<1x16x4xf32>, tensor<1x20x5xf32>) -> tensor<*xf32>
  return
}
