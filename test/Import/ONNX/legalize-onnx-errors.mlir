// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx -verify-diagnostics

// Tests that every unsupported node is reported at once, each with its
// name and op type, together with nodes whose handler fails, followed by
// one summary on the module; a node fed by a failed one is not reported
// again.

// expected-error @+1 {{the model uses unsupported ONNX ops: Foo (2 nodes), Bar (1 node)}}
module {
  func.func @all_at_once(%x: tensor<2x3xf32>, %i: tensor<2xi64>) {
    // expected-error @+1 {{node 'foo1' (Foo): unsupported ONNX op 'Foo'}}
    %0 = train.onnx_node "Foo"(%x) {node_name = "foo1", onnx_attrs = {}} : (tensor<2x3xf32>) -> tensor<*xf32>
    %1 = train.onnx_node "Relu"(%0) {node_name = "after_foo", onnx_attrs = {}} : (tensor<*xf32>) -> tensor<*xf32>
    // expected-error @+1 {{node 'bar' (Bar): unsupported ONNX op 'Bar'}}
    %2 = train.onnx_node "Bar"(%x) {node_name = "bar", onnx_attrs = {}} : (tensor<2x3xf32>) -> tensor<*xf32>
    // expected-error @+1 {{node 'relu_int' (Relu): input 0 (X) has unsupported type 'tensor<2xi64>': expected a float tensor}}
    %3 = train.onnx_node "Relu"(%i) {node_name = "relu_int", onnx_attrs = {}} : (tensor<2xi64>) -> tensor<*xi64>
    // expected-error @+1 {{node 'foo2' (Foo): unsupported ONNX op 'Foo'}}
    %4 = train.onnx_node "Foo"(%x) {node_name = "foo2", onnx_attrs = {}} : (tensor<2x3xf32>) -> tensor<*xf32>
    return
  }
}

// -----

// Tests that an op of another domain is unsupported even where the default
// domain has an op of that name, and that the messages name its domain.

// expected-error @+1 {{the model uses unsupported ONNX ops: com.microsoft.Gelu (1 node), com.microsoft.Relu (1 node)}}
module {
  func.func @other_domain(%x: tensor<2x3xf32>) {
    // expected-error @+1 {{node 'gelu' (Gelu): unsupported ONNX op 'Gelu' of domain 'com.microsoft'}}
    %0 = train.onnx_node "Gelu"(%x) {node_name = "gelu", domain = "com.microsoft", onnx_attrs = {}} : (tensor<2x3xf32>) -> tensor<*xf32>
    // expected-error @+1 {{node 'relu' (Relu): unsupported ONNX op 'Relu' of domain 'com.microsoft'}}
    %1 = train.onnx_node "Relu"(%x) {node_name = "relu", domain = "com.microsoft", onnx_attrs = {}} : (tensor<2x3xf32>) -> tensor<*xf32>
    return
  }
}

// -----

//===----------------------------------------------------------------------===//
// Inputs, outputs and results (shared by all handlers)
//===----------------------------------------------------------------------===//

// Tests that a missing required input is named.
func.func @missing_input() {
  %none = train.onnx_none
  // expected-error @+1 {{node 'r' (Relu): input 0 (X) is missing}}
  %0 = train.onnx_node "Relu"(%none) {node_name = "r", onnx_attrs = {}} : (none) -> tensor<*xf32>
  return
}

// -----

// Tests that a dynamic input shape is refused with the type.
func.func @dynamic_input(%x: tensor<?x3xf32>) {
  // expected-error @+1 {{input 0 (X) needs a static shape, got 'tensor<?x3xf32>'}}
  %0 = train.onnx_node "Relu"(%x) {node_name = "r", onnx_attrs = {}} : (tensor<?x3xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that arithmetic on a non-constant integer tensor names the type.
func.func @integer_data(%x: tensor<2xi64>, %y: tensor<2xi64>) {
  // expected-error @+1 {{node 'add' (Add): input 0 (A) has unsupported type 'tensor<2xi64>': expected a float tensor}}
  %0 = train.onnx_node "Add"(%x, %y) {node_name = "add", onnx_attrs = {}} : (tensor<2xi64>, tensor<2xi64>) -> tensor<*xi64>
  return
}

// -----

// Tests that a used extra output that a handler does not produce is an
// error, named or not.
func.func @extra_output_used(%x: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{output 1 is used but not supported}}
  %0:2 = train.onnx_node "Relu"(%x) {node_name = "r", onnx_attrs = {}} : (tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xf32>)
  return %0#1 : tensor<*xf32>
}

// -----

// Tests that Dropout's mask output may not be used.
func.func @dropout_mask_used(%x: tensor<2x3xf32>) -> tensor<*xi1> {
  // expected-error @+1 {{node 'd' (Dropout): output 1 (mask) is used but not supported}}
  %0:2 = train.onnx_node "Dropout"(%x) {node_name = "d", onnx_attrs = {}} : (tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xi1>)
  return %0#1 : tensor<*xi1>
}

// -----

// Tests that a node without outputs is refused.
func.func @no_outputs(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{node 'r' (Relu): has no outputs}}
  train.onnx_node "Relu"(%x) {node_name = "r", onnx_attrs = {}} : (tensor<2x3xf32>) -> ()
  return
}

// -----

// Tests that a static declared type that disagrees with the Train op's
// shape function is reported.
func.func @declared_type_mismatch(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{result type 'tensor<2x3xf32>' differs from the type 'tensor<2x4xf32>' that ONNX shape inference declared}}
  %0 = train.onnx_node "Relu"(%x) {node_name = "r", onnx_attrs = {}} : (tensor<2x3xf32>) -> tensor<2x4xf32>
  return
}

// -----

// Tests that an attribute newer than the model's opset is refused.
module attributes {train.onnx_opset = 9 : i64} {
  func.func @attr_too_new(%x: tensor<1x1x4x4xf32>) {
    // expected-error @+1 {{attribute 'ceil_mode' needs opset 10 or later, the model imports opset 9}}
    %0 = train.onnx_node "MaxPool"(%x) {node_name = "p", onnx_attrs = {ceil_mode = 1 : i64, kernel_shape = array<i64: 2, 2>}} : (tensor<1x1x4x4xf32>) -> tensor<*xf32>
    return
  }
}

// -----

// Tests that a shape function's reason becomes an error on the node rather
// than an abort.
func.func @shape_function_reason(%x: tensor<1x4x5x5xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+1 {{node 'c' (Conv): groups = 3 must divide the input channels (4) and the filters (6)}}
  %0 = train.onnx_node "Conv"(%x, %w) {node_name = "c", onnx_attrs = {group = 3 : i64}} : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that a fold may not materialise a huge constant.
func.func @fold_too_large() {
  %x = train.constant dense<1> : tensor<1xi64>
  %s = train.constant dense<[65536, 65536]> : tensor<2xi64>
  // expected-error @+1 {{folding would create a constant of shape [65536, 65536], more than 4194304 elements}}
  %0 = train.onnx_node "Expand"(%x, %s) {node_name = "e", onnx_attrs = {}} : (tensor<1xi64>, tensor<2xi64>) -> tensor<*xi64>
  return
}

// -----

// Tests that folding checks element types, broadcasting and division by
// zero.
func.func @fold_types() {
  %a = train.constant dense<1> : tensor<2xi64>
  %b = train.constant dense<1> : tensor<2xi32>
  // expected-error @+1 {{operand element types differ: 'i64' and 'i32'}}
  %0 = train.onnx_node "Add"(%a, %b) {node_name = "add", onnx_attrs = {}} : (tensor<2xi64>, tensor<2xi32>) -> tensor<*xi64>
  return
}

// -----

// Tests that folding refuses shapes that do not broadcast.
func.func @fold_broadcast() {
  %a = train.constant dense<1> : tensor<2xi64>
  %b = train.constant dense<1> : tensor<3xi64>
  // expected-error @+1 {{shapes [2] and [3] do not broadcast}}
  %0 = train.onnx_node "Mul"(%a, %b) {node_name = "mul", onnx_attrs = {}} : (tensor<2xi64>, tensor<3xi64>) -> tensor<*xi64>
  return
}

// -----

// Tests that folding refuses an integer division by zero.
func.func @fold_division_by_zero() {
  %a = train.constant dense<[4, 2]> : tensor<2xi64>
  %b = train.constant dense<[2, 0]> : tensor<2xi64>
  // expected-error @+1 {{integer division by zero}}
  %0 = train.onnx_node "Div"(%a, %b) {node_name = "div", onnx_attrs = {}} : (tensor<2xi64>, tensor<2xi64>) -> tensor<*xi64>
  return
}

// -----

// Tests that an axis out of range names the rank.
func.func @axis_out_of_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{node 'sm' (Softmax): axis 2 is out of range for rank 2}}
  %0 = train.onnx_node "Softmax"(%x) {node_name = "sm", onnx_attrs = {axis = 2 : i64}} : (tensor<2x3xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that a handler refuses to create a result of rank above 32.
func.func @rank_limit(%x: tensor<1xf32>) {
  %s = train.constant dense<1> : tensor<33xi64>
  // expected-error @+1 {{result rank 33 exceeds the supported maximum of 32}}
  %0 = train.onnx_node "Reshape"(%x, %s) {node_name = "r", onnx_attrs = {}} : (tensor<1xf32>, tensor<33xi64>) -> tensor<*xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// NN
//===----------------------------------------------------------------------===//

// Tests that Conv needs an N x C x spatial input.
func.func @conv_rank(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>) {
  // expected-error @+1 {{input 0 (X) must have rank 3 or more (N, C, spatial...), got 'tensor<2x3xf32>'}}
  %0 = train.onnx_node "Conv"(%x, %w) {node_name = "c", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that Conv's weight must have the input's rank.
func.func @conv_weight_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+1 {{weight rank 3 differs from input rank 4}}
  %0 = train.onnx_node "Conv"(%x, %w) {node_name = "c", onnx_attrs = {}} : (tensor<1x3x8x8xf32>, tensor<4x3x3xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that strides need one entry per spatial axis.
func.func @conv_strides_count(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{strides has 1 entries, expected 2}}
  %0 = train.onnx_node "Conv"(%x, %w) {node_name = "c", onnx_attrs = {strides = array<i64: 2>}} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that kernel_shape must match the weight.
func.func @conv_kernel_mismatch(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{kernel_shape [5, 5] does not match the weight's spatial sizes [3, 3]}}
  %0 = train.onnx_node "Conv"(%x, %w) {node_name = "c", onnx_attrs = {kernel_shape = array<i64: 5, 5>}} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that auto_pad SAME needs the spatial sizes it divides by the
// strides.
func.func @conv_same_dynamic(%x: tensor<1x3x?x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{auto_pad 'SAME_UPPER' needs static spatial sizes, got 'tensor<1x3x?x8xf32>'}}
  %0 = train.onnx_node "Conv"(%x, %w) {node_name = "c", onnx_attrs = {auto_pad = "SAME_UPPER"}} : (tensor<1x3x?x8xf32>, tensor<4x3x3x3xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that a dynamic batch is refused even where the window is fine.
func.func @conv_dynamic_batch(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{input 0 (X) needs a static shape, got 'tensor<?x3x8x8xf32>'}}
  %0 = train.onnx_node "Conv"(%x, %w) {node_name = "c", onnx_attrs = {}} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that an unknown auto_pad value is refused.
func.func @unknown_auto_pad(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{unknown auto_pad 'SAME'}}
  %0 = train.onnx_node "MaxPool"(%x) {node_name = "p", onnx_attrs = {auto_pad = "SAME", kernel_shape = array<i64: 2, 2>}} : (tensor<1x3x8x8xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that pooling needs kernel_shape.
func.func @pool_kernel_missing(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{node 'p' (MaxPool): kernel_shape is missing}}
  %0 = train.onnx_node "MaxPool"(%x) {node_name = "p", onnx_attrs = {}} : (tensor<1x3x8x8xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that kernel_shape needs one entry per spatial axis.
func.func @pool_kernel_count(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{node 'p' (AveragePool): kernel_shape has 1 entries, expected 2}}
  %0 = train.onnx_node "AveragePool"(%x) {node_name = "p", onnx_attrs = {kernel_shape = array<i64: 2>}} : (tensor<1x3x8x8xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that a zero stride is refused before any division by it.
func.func @pool_zero_stride(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{strides must be positive}}
  %0 = train.onnx_node "MaxPool"(%x) {node_name = "p", onnx_attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 0, 1>}} : (tensor<1x3x8x8xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that window sizes beyond int32 are refused before they overflow the
// window arithmetic.
func.func @pool_huge_kernel(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{kernel_shape value 4294967296 is too large}}
  %0 = train.onnx_node "MaxPool"(%x) {node_name = "p", onnx_attrs = {kernel_shape = array<i64: 4294967296, 1>}} : (tensor<1x3x8x8xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that MaxPool's Indices output may not be used.
func.func @max_pool_indices_used(%x: tensor<1x3x8x8xf32>) -> tensor<*xi64> {
  // expected-error @+1 {{node 'p' (MaxPool): output 1 (Indices) is used but not supported}}
  %0:2 = train.onnx_node "MaxPool"(%x) {node_name = "p", onnx_attrs = {kernel_shape = array<i64: 2, 2>}} : (tensor<1x3x8x8xf32>) -> (tensor<*xf32>, tensor<*xi64>)
  return %0#1 : tensor<*xi64>
}

// -----

// Tests that a running statistic whose initializer is also the BatchNorm's
// scale (torch.onnx.export in evaluation mode merges the all-ones running
// variance with the all-ones weight) is refused with the re-export option.
module {
  train.param @"f.2.weight" trainable : tensor<4xf32>
  train.param @"f.2.bias" trainable : tensor<4xf32>
  train.param @"f.2.running_mean" trainable : tensor<4xf32>
  func.func @bn_aliased_scale(%x: tensor<2x4x3x3xf32>) -> tensor<*xf32> {
    %s = train.read_param @"f.2.weight" : tensor<4xf32>
    %b = train.read_param @"f.2.bias" : tensor<4xf32>
    %m = train.read_param @"f.2.running_mean" : tensor<4xf32>
    // expected-error @+1 {{node 'bn' (BatchNormalization): input 4 (input_var) is initializer 'f.2.weight', which the model also uses elsewhere; BatchNorm running statistics are updated in place and need initializers of their own (torch.onnx.export merges equal initializers in evaluation mode: re-export with torch.onnx.export(..., training=torch.onnx.TrainingMode.TRAINING))}}
    %y = train.onnx_node "BatchNormalization"(%x, %s, %b, %m, %s) {node_name = "bn", onnx_attrs = {}} : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32>
    return %y : tensor<*xf32>
  }
}

// -----

// Tests that two BatchNorms sharing one running-mean initializer are
// refused (at the first; the second depends on it and is not reported).
module {
  train.param @w trainable : tensor<4xf32>
  train.param @mean trainable : tensor<4xf32>
  train.param @var1 trainable : tensor<4xf32>
  train.param @var2 trainable : tensor<4xf32>
  func.func @bn_shared_mean(%x: tensor<2x4x3x3xf32>) -> tensor<*xf32> {
    %s = train.read_param @w : tensor<4xf32>
    %m = train.read_param @mean : tensor<4xf32>
    %v1 = train.read_param @var1 : tensor<4xf32>
    %v2 = train.read_param @var2 : tensor<4xf32>
    // expected-error @+1 {{node 'bn1' (BatchNormalization): input 3 (input_mean) is initializer 'mean', which the model also uses elsewhere}}
    %y1 = train.onnx_node "BatchNormalization"(%x, %s, %s, %m, %v1) {node_name = "bn1", onnx_attrs = {}} : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32>
    %y2 = train.onnx_node "BatchNormalization"(%y1, %s, %s, %m, %v2) {node_name = "bn2", onnx_attrs = {}} : (tensor<*xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32>
    return %y2 : tensor<*xf32>
  }
}

// -----

// Tests that opset-7 BatchNormalization with spatial = 0 is refused.
module attributes {train.onnx_opset = 7 : i64} {
  func.func @bn_spatial0(%x: tensor<2x4xf32>, %s: tensor<4xf32>) {
    // expected-error @+1 {{node 'bn' (BatchNormalization): spatial = 0 (statistics per activation rather than per channel) is not supported}}
    %0 = train.onnx_node "BatchNormalization"(%x, %s, %s, %s, %s) {node_name = "bn", onnx_attrs = {spatial = 0 : i64}} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32>
    return
  }
}

// -----

// Tests that a momentum outside [0, 1] is refused.
func.func @bn_momentum(%x: tensor<2x4xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{momentum 1.500000e+00 must be in [0, 1]}}
  %0 = train.onnx_node "BatchNormalization"(%x, %s, %s, %s, %s) {node_name = "bn", onnx_attrs = {momentum = 1.5 : f32}} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that an updated running statistic may not be used in inference
// mode, where ONNX does not define it.
module attributes {train.onnx_opset = 15 : i64} {
  train.param @m trainable : tensor<4xf32>
  func.func @bn_running_mean_used(%x: tensor<2x4xf32>, %s: tensor<4xf32>) -> tensor<*xf32> {
    %m = train.read_param @m : tensor<4xf32>
    // expected-error @+1 {{output 1 (running_mean) is used but not supported}}
    %0:3 = train.onnx_node "BatchNormalization"(%x, %s, %s, %m, %m) {node_name = "bn", onnx_attrs = {training_mode = 0 : i64}} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
    return %0#1 : tensor<*xf32>
  }
}

// -----

// Tests that the batch statistics BatchNormalization-9..13 outputs are not
// supported.
module attributes {train.onnx_opset = 9 : i64} {
  func.func @bn_saved_var_used(%x: tensor<2x4xf32>, %s: tensor<4xf32>) -> tensor<*xf32> {
    // expected-error @+1 {{output 4 (saved_var) is used but not supported}}
    %0:5 = train.onnx_node "BatchNormalization"(%x, %s, %s, %s, %s) {node_name = "bn", onnx_attrs = {}} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
    return %0#4 : tensor<*xf32>
  }
}

// -----

// Tests that a declared running-statistic type that differs from the
// computed one is reported.
module attributes {train.onnx_opset = 15 : i64} {
  func.func @bn_running_var_type(%x: tensor<2x4xf32>, %s: tensor<4xf32>) -> tensor<5xf32> {
    // expected-error @+1 {{output 2 (running_var) has type 'tensor<4xf32>', ONNX shape inference declared 'tensor<5xf32>'}}
    %0:3 = train.onnx_node "BatchNormalization"(%x, %s, %s, %s, %s) {node_name = "bn", onnx_attrs = {training_mode = 1 : i64}} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<5xf32>)
    return %0#2 : tensor<5xf32>
  }
}

// -----

// Tests that Gemm needs C before opset 11.
module attributes {train.onnx_opset = 9 : i64} {
  func.func @gemm_without_c(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) {
    %none = train.onnx_none
    // expected-error @+1 {{node 'fc' (Gemm): input 2 (C) is required before opset 11}}
    %0 = train.onnx_node "Gemm"(%a, %b, %none) {node_name = "fc", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<3x4xf32>, none) -> tensor<*xf32>
    return
  }
}

// -----

// Tests that Dropout's ratio input must be a constant.
module attributes {train.onnx_opset = 13 : i64} {
  func.func @dropout_ratio_not_constant(%x: tensor<2x3xf32>, %r: tensor<f32>) {
    // expected-error @+1 {{input 1 (ratio) must be a constant scalar: traincc trains every Dropout with a compile-time ratio}}
    %0 = train.onnx_node "Dropout"(%x, %r) {node_name = "d", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<f32>) -> tensor<*xf32>
    return
  }
}

// -----

// Tests that a Dropout ratio of 1 is refused.
module attributes {train.onnx_opset = 10 : i64} {
  func.func @dropout_ratio_range(%x: tensor<2x3xf32>) {
    // expected-error @+1 {{ratio 1.000000e+00 must be in [0, 1)}}
    %0 = train.onnx_node "Dropout"(%x) {node_name = "d", onnx_attrs = {ratio = 1.0 : f32}} : (tensor<2x3xf32>) -> tensor<*xf32>
    return
  }
}

// -----

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// Tests that a Clip bound that is not a constant must hold one value.
module attributes {train.onnx_opset = 13 : i64} {
  func.func @clip_min_tensor_not_scalar(%x: tensor<2x3xf32>, %lo: tensor<3xf32>) {
    // expected-error @+1 {{node 'c' (Clip): input 1 (min) must hold one value, got 'tensor<3xf32>'}}
    %0 = train.onnx_node "Clip"(%x, %lo) {node_name = "c", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<*xf32>
    return
  }
}

// -----

// Tests that a Clip bound that is not a constant must be a float tensor of
// the input's element type.
module attributes {train.onnx_opset = 13 : i64} {
  func.func @clip_max_tensor_type(%x: tensor<2x3xf32>, %hi: tensor<f16>) {
    %none = train.onnx_none
    // expected-error @+1 {{node 'c' (Clip): operands must share one element type, got 'f32' and 'f16'}}
    %0 = train.onnx_node "Clip"(%x, %none, %hi) {node_name = "c", onnx_attrs = {}} : (tensor<2x3xf32>, none, tensor<f16>) -> tensor<*xf32>
    return
  }
}

// -----

// Tests that a Max of inputs that do not broadcast is refused, naming the
// shapes.
module attributes {train.onnx_opset = 13 : i64} {
  func.func @max_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
    // expected-error @+1 {{node 'm' (Max): shapes [2, 3] and [4] do not broadcast}}
    %0 = train.onnx_node "Max"(%a, %b) {node_name = "m", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<*xf32>
    return
  }
}

// -----

// Tests that Min before opset 8 does not broadcast.
module attributes {train.onnx_opset = 7 : i64} {
  func.func @min_opset7_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
    // expected-error @+1 {{node 'm' (Min): inputs 'tensor<2x3xf32>' and 'tensor<3xf32>' differ; broadcasting needs opset 8 or later}}
    %0 = train.onnx_node "Min"(%a, %b) {node_name = "m", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<*xf32>
    return
  }
}

// -----

// Tests that Max of integer tensors that are not constants is refused
// (traincc trains float models; integer Max only folds in shape
// sub-graphs).
module attributes {train.onnx_opset = 13 : i64} {
  func.func @max_int(%a: tensor<3xi64>, %b: tensor<3xi64>) {
    // expected-error @+1 {{node 'm' (Max): input 0 (data_0) has unsupported type 'tensor<3xi64>': expected a float tensor}}
    %0 = train.onnx_node "Max"(%a, %b) {node_name = "m", onnx_attrs = {}} : (tensor<3xi64>, tensor<3xi64>) -> tensor<*xi64>
    return
  }
}

// -----

// Tests that Clip bounds must be scalars.
module attributes {train.onnx_opset = 13 : i64} {
  func.func @clip_max_not_scalar(%x: tensor<2x3xf32>) {
    %none = train.onnx_none
    %hi = train.constant dense<[1.0, 2.0]> : tensor<2xf32>
    // expected-error @+1 {{input 2 (max) must hold one value, got 'tensor<2xf32>'}}
    %0 = train.onnx_node "Clip"(%x, %none, %hi) {node_name = "c", onnx_attrs = {}} : (tensor<2x3xf32>, none, tensor<2xf32>) -> tensor<*xf32>
    return
  }
}

// -----

// Tests that a Clip with min above max is refused.
module attributes {train.onnx_opset = 10 : i64} {
  func.func @clip_min_above_max(%x: tensor<2x3xf32>) {
    // expected-error @+1 {{min 6.000000e+00 exceeds max 0.000000e+00}}
    %0 = train.onnx_node "Clip"(%x) {node_name = "c", onnx_attrs = {min = 6.0 : f32, max = 0.0 : f32}} : (tensor<2x3xf32>) -> tensor<*xf32>
    return
  }
}

// -----

// Tests that Identity needs its input.
func.func @identity_missing_input() {
  %none = train.onnx_none
  // expected-error @+1 {{node 'id' (Identity): input 0 (input) is missing}}
  %0 = train.onnx_node "Identity"(%none) {node_name = "id", onnx_attrs = {}} : (none) -> tensor<*xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Shape and data movement
//===----------------------------------------------------------------------===//

// Tests that an axis named twice (here 0 and -3 of rank 3) is refused.
func.func @unsqueeze_repeated_axis(%x: tensor<2xf32>) {
  %axes = train.constant dense<[0, -3]> : tensor<2xi64>
  // expected-error @+1 {{axis -3 appears more than once}}
  %0 = train.onnx_node "Unsqueeze"(%x, %axes) {node_name = "u", onnx_attrs = {}} : (tensor<2xf32>, tensor<2xi64>) -> tensor<*xf32>
  return
}

// -----

// Tests that opset-13 Unsqueeze needs constant axes.
func.func @unsqueeze_axes_not_constant(%x: tensor<2xf32>, %axes: tensor<1xi64>) {
  // expected-error @+1 {{node 'u' (Unsqueeze): input 1 (axes) is not a constant}}
  %0 = train.onnx_node "Unsqueeze"(%x, %axes) {node_name = "u", onnx_attrs = {}} : (tensor<2xf32>, tensor<1xi64>) -> tensor<*xf32>
  return
}

// -----

// Tests that opset-11 Unsqueeze needs its axes attribute.
module attributes {train.onnx_opset = 11 : i64} {
  func.func @unsqueeze_axes_missing(%x: tensor<2xf32>) {
    // expected-error @+1 {{node 'u' (Unsqueeze): axes are missing}}
    %0 = train.onnx_node "Unsqueeze"(%x) {node_name = "u", onnx_attrs = {}} : (tensor<2xf32>) -> tensor<*xf32>
    return
  }
}

// -----

// Tests that Squeeze refuses an axis whose size is not 1.
func.func @squeeze_non_unit(%x: tensor<1x3xf32>) {
  %axes = train.constant dense<1> : tensor<1xi64>
  // expected-error @+1 {{cannot squeeze axis 1 of size 3}}
  %0 = train.onnx_node "Squeeze"(%x, %axes) {node_name = "s", onnx_attrs = {}} : (tensor<1x3xf32>, tensor<1xi64>) -> tensor<*xf32>
  return
}

// -----

// Tests that Gather on non-constant data checks constant indices against
// the axis, and needs integer indices.
func.func @gather_data(%x: tensor<4x3xf32>, %f: tensor<2xf32>) {
  %i = train.constant dense<[0, -5]> : tensor<2xi64>
  // expected-error @+1 {{node 'g' (Gather): index -5 is out of range for axis 0 of size 4}}
  %0 = train.onnx_node "Gather"(%x, %i) {node_name = "g", onnx_attrs = {}} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<*xf32>
  // expected-error @+1 {{node 'h' (Gather): input 1 (indices) must be int32 or int64, got 'tensor<2xf32>'}}
  %1 = train.onnx_node "Gather"(%x, %f) {node_name = "h", onnx_attrs = {}} : (tensor<4x3xf32>, tensor<2xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that Gather needs constant integer indices.
func.func @gather_indices(%i: tensor<i64>) {
  %d = train.constant dense<[1, 2]> : tensor<2xi64>
  // expected-error @+1 {{input 1 (indices) is not a constant integer tensor}}
  %0 = train.onnx_node "Gather"(%d, %i) {node_name = "g", onnx_attrs = {}} : (tensor<2xi64>, tensor<i64>) -> tensor<*xi64>
  return
}

// -----

// Tests that Gather refuses an index past the axis.
func.func @gather_index_range() {
  %d = train.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %i = train.constant dense<4> : tensor<i64>
  // expected-error @+1 {{index 4 is out of range for axis 0 of size 4}}
  %0 = train.onnx_node "Gather"(%d, %i) {node_name = "g", onnx_attrs = {}} : (tensor<4xi64>, tensor<i64>) -> tensor<*xi64>
  return
}

// -----

// Tests that Concat needs its axis attribute.
func.func @concat_no_axis(%x: tensor<2xf32>) {
  // expected-error @+1 {{node 'c' (Concat): attribute 'axis' is missing}}
  %0 = train.onnx_node "Concat"(%x, %x) {node_name = "c", onnx_attrs = {}} : (tensor<2xf32>, tensor<2xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that Concat needs an input.
func.func @concat_no_inputs() {
  // expected-error @+1 {{node 'c' (Concat): needs at least one input}}
  %0 = train.onnx_node "Concat"() {node_name = "c", onnx_attrs = {axis = 0 : i64}} : () -> tensor<*xf32>
  return
}

// -----

// Tests that folding Concat checks the shapes off the axis.
func.func @concat_fold_shapes() {
  %a = train.constant dense<1> : tensor<2x2xi64>
  %b = train.constant dense<1> : tensor<3x1xi64>
  // expected-error @+1 {{inputs 'tensor<2x2xi64>' and 'tensor<3x1xi64>' cannot be concatenated along axis 1}}
  %0 = train.onnx_node "Concat"(%a, %b) {node_name = "c", onnx_attrs = {axis = 1 : i64}} : (tensor<2x2xi64>, tensor<3x1xi64>) -> tensor<*xi64>
  return
}

// -----

// Tests that Reshape needs its shape input.
func.func @reshape_shape_missing(%x: tensor<2x3xf32>) {
  %none = train.onnx_none
  // expected-error @+1 {{input 1 (shape) is missing}}
  %0 = train.onnx_node "Reshape"(%x, %none) {node_name = "r", onnx_attrs = {}} : (tensor<2x3xf32>, none) -> tensor<*xf32>
  return
}

// -----

// Tests that a Reshape whose shape does not fold is refused (shapes are
// static).
func.func @reshape_shape_not_constant(%x: tensor<2x3xf32>, %s: tensor<2xi64>) {
  // expected-error @+1 {{node 'r' (Reshape): shape input is not a constant}}
  %0 = train.onnx_node "Reshape"(%x, %s) {node_name = "r", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32>
  return
}

// -----

// Tests that a 0 in Reshape's shape must have an input axis to copy.
func.func @reshape_zero_past_rank(%x: tensor<2x3xf32>) {
  %s = train.constant dense<[1, 6, 0]> : tensor<3xi64>
  // expected-error @+1 {{shape entry 2 is 0 but the input has no axis 2 to copy}}
  %0 = train.onnx_node "Reshape"(%x, %s) {node_name = "r", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<*xf32>
  return
}

// -----

// Tests that Reshape infers at most one -1.
func.func @reshape_two_inferred(%x: tensor<2x3xf32>) {
  %s = train.constant dense<[-1, -1]> : tensor<2xi64>
  // expected-error @+1 {{shape has more than one -1}}
  %0 = train.onnx_node "Reshape"(%x, %s) {node_name = "r", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32>
  return
}

// -----

// Tests that Reshape refuses negative entries other than -1.
func.func @reshape_negative_entry(%x: tensor<2x3xf32>) {
  %s = train.constant dense<[-2, 3]> : tensor<2xi64>
  // expected-error @+1 {{shape entry 0 is -2}}
  %0 = train.onnx_node "Reshape"(%x, %s) {node_name = "r", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32>
  return
}

// -----

// Tests that Reshape refuses a shape with another element count.
func.func @reshape_count(%x: tensor<2x3xf32>) {
  %s = train.constant dense<[4, -1]> : tensor<2xi64>
  // expected-error @+1 {{cannot reshape 'tensor<2x3xf32>' into [4, -1]}}
  %0 = train.onnx_node "Reshape"(%x, %s) {node_name = "r", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32>
  return
}

// -----

// Tests that Flatten's axis may be rank but not beyond.
func.func @flatten_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{node 'f' (Flatten): axis 3 is out of range [-2, 2]}}
  %0 = train.onnx_node "Flatten"(%x) {node_name = "f", onnx_attrs = {axis = 3 : i64}} : (tensor<2x3xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that Transpose's perm must be a permutation.
func.func @transpose_perm(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{perm [0, 0] is not a permutation of 2 axes}}
  %0 = train.onnx_node "Transpose"(%x) {node_name = "t", onnx_attrs = {perm = array<i64: 0, 0>}} : (tensor<2x3xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that Slice's starts must be constant.
func.func @slice_starts_not_constant(%x: tensor<4xf32>, %s: tensor<1xi64>) {
  %e = train.constant dense<2> : tensor<1xi64>
  // expected-error @+1 {{node 's' (Slice): input 1 (starts) is not a constant}}
  %0 = train.onnx_node "Slice"(%x, %s, %e) {node_name = "s", onnx_attrs = {}} : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xf32>
  return
}

// -----

// Tests that opset-9 Slice needs its starts attribute.
module attributes {train.onnx_opset = 9 : i64} {
  func.func @slice_starts_missing(%x: tensor<4xf32>) {
    // expected-error @+1 {{node 's' (Slice): starts are missing}}
    %0 = train.onnx_node "Slice"(%x) {node_name = "s", onnx_attrs = {ends = array<i64: 2>}} : (tensor<4xf32>) -> tensor<*xf32>
    return
  }
}

// -----

// Tests that Slice's starts, ends, axes and steps must agree in length.
func.func @slice_lengths(%x: tensor<4x4xf32>) {
  %s = train.constant dense<[0, 0]> : tensor<2xi64>
  %e = train.constant dense<2> : tensor<1xi64>
  // expected-error @+1 {{starts, ends, axes and steps differ in length}}
  %0 = train.onnx_node "Slice"(%x, %s, %e) {node_name = "s", onnx_attrs = {}} : (tensor<4x4xf32>, tensor<2xi64>, tensor<1xi64>) -> tensor<*xf32>
  return
}

// -----

// Tests that a zero Slice step is refused.
func.func @slice_zero_step(%x: tensor<4xf32>) {
  %s = train.constant dense<0> : tensor<1xi64>
  %e = train.constant dense<2> : tensor<1xi64>
  %a = train.constant dense<0> : tensor<1xi64>
  %st = train.constant dense<0> : tensor<1xi64>
  // expected-error @+1 {{step of axis 0 is zero}}
  %0 = train.onnx_node "Slice"(%x, %s, %e, %a, %st) {node_name = "s", onnx_attrs = {}} : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

// Tests that a Constant of a type Train tensors cannot hold is refused.
func.func @constant_element_type() {
  // expected-error @+1 {{node 'c' (Constant): constant of unsupported element type 'i8'}}
  %0 = train.onnx_node "Constant"() {node_name = "c", onnx_attrs = {value = dense<1> : tensor<2xi8>}} : () -> tensor<*xi8>
  return
}

// -----

// Tests that sparse Constants are refused.
func.func @constant_sparse() {
  // expected-error @+1 {{attribute 'sparse_value' is not supported}}
  %0 = train.onnx_node "Constant"() {node_name = "c", onnx_attrs = {sparse_value = unit}} : () -> tensor<*xf32>
  return
}

// -----

// Tests that a Constant needs a value.
func.func @constant_without_value() {
  // expected-error @+1 {{node 'c' (Constant): has no value attribute}}
  %0 = train.onnx_node "Constant"() {node_name = "c", onnx_attrs = {}} : () -> tensor<*xf32>
  return
}

// -----

// Tests that ConstantOfShape needs a constant shape.
func.func @constant_of_shape_input(%s: tensor<2xi64>) {
  // expected-error @+1 {{input 0 (input) is not a constant shape}}
  %0 = train.onnx_node "ConstantOfShape"(%s) {node_name = "c", onnx_attrs = {}} : (tensor<2xi64>) -> tensor<*xf32>
  return
}

// -----

// Tests that ConstantOfShape refuses negative dimensions.
func.func @constant_of_shape_negative() {
  %s = train.constant dense<[2, -1]> : tensor<2xi64>
  // expected-error @+1 {{shape has a negative dimension}}
  %0 = train.onnx_node "ConstantOfShape"(%s) {node_name = "c", onnx_attrs = {}} : (tensor<2xi64>) -> tensor<*xf32>
  return
}

// -----

// Tests that ConstantOfShape refuses a shape with too many elements.
func.func @constant_of_shape_overflow() {
  %s = train.constant dense<[4294967296, 4294967296]> : tensor<2xi64>
  // expected-error @+1 {{shape holds more than 4294967296 elements}}
  %0 = train.onnx_node "ConstantOfShape"(%s) {node_name = "c", onnx_attrs = {}} : (tensor<2xi64>) -> tensor<*xf32>
  return
}

// -----

// Tests that ConstantOfShape's value must be one element.
func.func @constant_of_shape_value() {
  %s = train.constant dense<2> : tensor<1xi64>
  // expected-error @+1 {{attribute 'value' must hold one element, got 'tensor<2xf32>'}}
  %0 = train.onnx_node "ConstantOfShape"(%s) {node_name = "c", onnx_attrs = {value = dense<1.0> : tensor<2xf32>}} : (tensor<1xi64>) -> tensor<*xf32>
  return
}

// -----

// Tests that Range needs constant scalars.
func.func @range_not_constant(%limit: tensor<i64>) {
  %a = train.constant dense<0> : tensor<i64>
  // expected-error @+1 {{node 'r' (Range): input 1 (limit) is not a constant scalar}}
  %0 = train.onnx_node "Range"(%a, %limit, %a) {node_name = "r", onnx_attrs = {}} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<*xi64>
  return
}

// -----

// Tests that Range's operands must share a type.
func.func @range_types() {
  %a = train.constant dense<0> : tensor<i64>
  %b = train.constant dense<3> : tensor<i32>
  // expected-error @+1 {{start, limit and delta differ in type}}
  %0 = train.onnx_node "Range"(%a, %b, %a) {node_name = "r", onnx_attrs = {}} : (tensor<i64>, tensor<i32>, tensor<i64>) -> tensor<*xi64>
  return
}

// -----

// Tests that Range refuses a zero delta.
func.func @range_zero_delta() {
  %a = train.constant dense<0> : tensor<i64>
  %b = train.constant dense<3> : tensor<i64>
  // expected-error @+1 {{delta is zero}}
  %0 = train.onnx_node "Range"(%a, %b, %a) {node_name = "r", onnx_attrs = {}} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<*xi64>
  return
}

// -----

// Tests that Range refuses to fold a huge sequence.
func.func @range_too_long() {
  %a = train.constant dense<0> : tensor<i64>
  %b = train.constant dense<1000000000> : tensor<i64>
  %d = train.constant dense<1> : tensor<i64>
  // expected-error @+1 {{range of 1.000000e+09 elements is too long}}
  %0 = train.onnx_node "Range"(%a, %b, %d) {node_name = "r", onnx_attrs = {}} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<*xi64>
  return
}

// -----

// Tests that Cast needs its to attribute.
func.func @cast_without_to(%x: tensor<2xf32>) {
  // expected-error @+1 {{node 'c' (Cast): attribute 'to' is missing}}
  %0 = train.onnx_node "Cast"(%x) {node_name = "c", onnx_attrs = {}} : (tensor<2xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that Cast to a type Train tensors cannot hold is refused.
func.func @cast_to_uint8(%x: tensor<2xf32>) {
  // expected-error @+1 {{cast to ONNX data type 2 is not supported}}
  %0 = train.onnx_node "Cast"(%x) {node_name = "c", onnx_attrs = {to = 2 : i64}} : (tensor<2xf32>) -> tensor<*xui8>
  return
}

// -----

// Tests that a Cast that would change non-constant data between a float
// and an integer type is refused (float to float is train.cast).
func.func @cast_non_constant(%x: tensor<2xf32>) {
  // expected-error @+1 {{cast of a non-constant tensor from 'f32' to 'i64' is not supported}}
  %0 = train.onnx_node "Cast"(%x) {node_name = "c", onnx_attrs = {to = 7 : i64}} : (tensor<2xf32>) -> tensor<*xi64>
  return
}

// -----

// Tests that Where needs a bool condition.
func.func @where_types() {
  %c = train.constant dense<1> : tensor<2xi64>
  // expected-error @+1 {{expects a bool condition and two values of one type}}
  %0 = train.onnx_node "Where"(%c, %c, %c) {node_name = "w", onnx_attrs = {}} : (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<*xi64>
  return
}

// -----

// Tests that Where's inputs must broadcast.
func.func @where_shapes() {
  %c = train.constant dense<true> : tensor<2xi1>
  %x = train.constant dense<1> : tensor<3xi64>
  // expected-error @+1 {{input shapes do not broadcast}}
  %0 = train.onnx_node "Where"(%c, %x, %x) {node_name = "w", onnx_attrs = {}} : (tensor<2xi1>, tensor<3xi64>, tensor<3xi64>) -> tensor<*xi64>
  return
}

// -----

// Tests that Expand of computed data takes float tensors only (integer
// data must fold).
func.func @expand_data(%x: tensor<3xi64>) {
  %s = train.constant dense<[2, 3]> : tensor<2xi64>
  // expected-error @+1 {{Expand of non-constant data is supported for float tensors of static shape only}}
  %0 = train.onnx_node "Expand"(%x, %s) {node_name = "e", onnx_attrs = {}} : (tensor<3xi64>, tensor<2xi64>) -> tensor<*xi64>
  return
}

// -----

// Tests that Expand needs a constant shape.
func.func @expand_shape_not_constant(%s: tensor<2xi64>) {
  %x = train.constant dense<1> : tensor<3xi64>
  // expected-error @+1 {{node 'e' (Expand): input 1 (shape) is not a constant}}
  %0 = train.onnx_node "Expand"(%x, %s) {node_name = "e", onnx_attrs = {}} : (tensor<3xi64>, tensor<2xi64>) -> tensor<*xi64>
  return
}

// -----

// Tests that Expand refuses a shape its input does not broadcast to.
func.func @expand_shape() {
  %x = train.constant dense<1> : tensor<3xi64>
  %s = train.constant dense<[2, 4]> : tensor<2xi64>
  // expected-error @+1 {{input of type 'tensor<3xi64>' cannot be expanded to [2, 4]; if the model was exported at another batch size than the --batch-size it is compiled for, export it at batch size 1 or at that batch size}}
  %0 = train.onnx_node "Expand"(%x, %s) {node_name = "e", onnx_attrs = {}} : (tensor<3xi64>, tensor<2xi64>) -> tensor<*xi64>
  return
}

// -----

// Tests that Pow names an exponent it cannot express and one that is not a
// constant.
func.func @pow_exponent(%x: tensor<2x3xf32>, %y: tensor<f32>) {
  %e = train.constant dense<1.5> : tensor<f32>
  // expected-error @+1 {{node 'pow' (Pow): exponent 1.500000e+00 is not supported (only 0.5, 1, 2, 3, 4 and their negatives)}}
  %0 = train.onnx_node "Pow"(%x, %e) {node_name = "pow", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<f32>) -> tensor<*xf32>
  // expected-error @+1 {{node 'pow2' (Pow): input 1 (Y) must be a constant scalar exponent}}
  %1 = train.onnx_node "Pow"(%x, %y) {node_name = "pow2", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<f32>) -> tensor<*xf32>
  return
}

// -----

// Tests that Tile needs one repeat per axis and constant repeats.
func.func @tile_repeats(%x: tensor<2x3xf32>, %r: tensor<2xi64>) {
  %one = train.constant dense<[2]> : tensor<1xi64>
  // expected-error @+1 {{node 't' (Tile): expected 2 repeats (one per axis), got 1}}
  %0 = train.onnx_node "Tile"(%x, %one) {node_name = "t", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<*xf32>
  // expected-error @+1 {{node 'u' (Tile): input 1 (repeats) is not a constant}}
  %1 = train.onnx_node "Tile"(%x, %r) {node_name = "u", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32>
  return
}
