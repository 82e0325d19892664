// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx -verify-diagnostics

// Tests that tf_crop_and_resize is refused by name.
func.func @crop_and_resize(%x: tensor<1x1x4x4xf32>) {
  %roi = train.constant dense<[0.0, 0.0, 0.2, 0.2, 1.0, 1.0, 0.8, 0.8]> : tensor<8xf32>
  %s = train.constant dense<[1.0, 1.0, 0.5, 0.5]> : tensor<4xf32>
  // expected-error @+1 {{node 'r' (Resize): coordinate_transformation_mode 'tf_crop_and_resize' is not supported}}
  %0 = train.onnx_node "Resize"(%x, %roi, %s) {node_name = "r", onnx_attrs = {mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize"}} : (tensor<1x1x4x4xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that computed scales are refused: shapes are static.
func.func @computed_scales(%x: tensor<1x1x4x4xf32>, %s: tensor<4xf32>) {
  %none = train.onnx_none
  // expected-error @+1 {{node 'r' (Resize): input 2 (scales) must be a float constant: traincc compiles static shapes}}
  %0 = train.onnx_node "Resize"(%x, %none, %s) {node_name = "r", onnx_attrs = {}} : (tensor<1x1x4x4xf32>, none, tensor<4xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that there must be one scale per axis.
func.func @scale_count(%x: tensor<1x1x4x4xf32>) {
  %none = train.onnx_none
  %s = train.constant dense<[2.0, 2.0]> : tensor<2xf32>
  // expected-error @+1 {{node 'r' (Resize): expected 4 scales (one per axis), got 2}}
  %0 = train.onnx_node "Resize"(%x, %none, %s) {node_name = "r", onnx_attrs = {}} : (tensor<1x1x4x4xf32>, none, tensor<2xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that an unknown mode is refused.
func.func @unknown_mode(%x: tensor<1x1x4x4xf32>) {
  %none = train.onnx_none
  %s = train.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  // expected-error @+1 {{node 'r' (Resize): mode 'area' is not supported}}
  %0 = train.onnx_node "Resize"(%x, %none, %s) {node_name = "r", onnx_attrs = {mode = "area"}} : (tensor<1x1x4x4xf32>, none, tensor<4xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that a scale giving an empty output is refused.
func.func @empty_output(%x: tensor<1x1x4x4xf32>) {
  %none = train.onnx_none
  %s = train.constant dense<[1.0, 1.0, 0.1, 1.0]> : tensor<4xf32>
  // expected-error @+1 {{node 'r' (Resize): scale 1.000000e-01 of axis 2 (size 4) gives no valid output size}}
  %0 = train.onnx_node "Resize"(%x, %none, %s) {node_name = "r", onnx_attrs = {}} : (tensor<1x1x4x4xf32>, none, tensor<4xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that sizes that change the batch axis (traced at the export's batch
// size) are refused, saying how to re-export.
func.func @batch_axis(%x: tensor<8x1x4x4xf32>) {
  %none = train.onnx_none
  %sizes = train.constant dense<[1, 1, 8, 8]> : tensor<4xi64>
  // expected-error @+1 {{node 'r' (Resize): it resizes the batch axis 0 from 8 to 1; if the model was exported at another batch size than the --batch-size it is compiled for, export it with a dynamic batch axis or at that batch size}}
  %0 = train.onnx_node "Resize"(%x, %none, %none, %sizes) {node_name = "r", onnx_attrs = {}} : (tensor<8x1x4x4xf32>, none, none, tensor<4xi64>) -> tensor<*xf32>
  return
}

// -----

// Tests that unknown coordinate transformations, nearest modes and aspect
// policies are refused by name.
func.func @unknown_attributes(%x: tensor<1x1x4x4xf32>) {
  %none = train.onnx_none
  %s = train.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %sizes = train.constant dense<[1, 1, 8, 8]> : tensor<4xi64>
  // expected-error @+1 {{node 'a' (Resize): unknown coordinate_transformation_mode 'corners'}}
  %0 = train.onnx_node "Resize"(%x, %none, %s) {node_name = "a", onnx_attrs = {coordinate_transformation_mode = "corners"}} : (tensor<1x1x4x4xf32>, none, tensor<4xf32>) -> tensor<*xf32>
  // expected-error @+1 {{node 'b' (Resize): unknown nearest_mode 'round'}}
  %1 = train.onnx_node "Resize"(%x, %none, %s) {node_name = "b", onnx_attrs = {nearest_mode = "round"}} : (tensor<1x1x4x4xf32>, none, tensor<4xf32>) -> tensor<*xf32>
  // expected-error @+1 {{node 'c' (Resize): unknown keep_aspect_ratio_policy 'fit'}}
  %2 = train.onnx_node "Resize"(%x, %none, %none, %sizes) {node_name = "c", onnx_attrs = {keep_aspect_ratio_policy = "fit"}} : (tensor<1x1x4x4xf32>, none, none, tensor<4xi64>) -> tensor<*xf32>
  return
}

// -----

// Tests that scales and sizes exclude each other, that one is needed, and
// that sizes must be constant.
func.func @scales_and_sizes(%x: tensor<1x1x4x4xf32>, %z: tensor<4xi64>) {
  %none = train.onnx_none
  %s = train.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %sizes = train.constant dense<[1, 1, 8, 8]> : tensor<4xi64>
  // expected-error @+1 {{node 'a' (Resize): only one of scales and sizes may be given}}
  %0 = train.onnx_node "Resize"(%x, %none, %s, %sizes) {node_name = "a", onnx_attrs = {}} : (tensor<1x1x4x4xf32>, none, tensor<4xf32>, tensor<4xi64>) -> tensor<*xf32>
  // expected-error @+1 {{node 'b' (Resize): neither scales nor sizes is given}}
  %1 = train.onnx_node "Resize"(%x, %none, %none) {node_name = "b", onnx_attrs = {}} : (tensor<1x1x4x4xf32>, none, none) -> tensor<*xf32>
  // expected-error @+1 {{node 'c' (Resize): input 3 (sizes) must be an integer constant: traincc compiles static shapes}}
  %2 = train.onnx_node "Resize"(%x, %none, %none, %z) {node_name = "c", onnx_attrs = {}} : (tensor<1x1x4x4xf32>, none, none, tensor<4xi64>) -> tensor<*xf32>
  return
}

// -----

// Tests that Upsample-7 needs its scales attribute.
module attributes {train.onnx_opset = 7 : i64} {
  func.func @upsample_attribute(%x: tensor<1x1x4x4xf32>) {
    // expected-error @+1 {{node 'u' (Upsample): attribute 'scales' is missing}}
    %0 = train.onnx_node "Upsample"(%x) {node_name = "u", onnx_attrs = {mode = "nearest"}} : (tensor<1x1x4x4xf32>) -> tensor<*xf32>
    return
  }
}
