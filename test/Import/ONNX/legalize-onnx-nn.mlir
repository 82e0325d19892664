// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx | FileCheck %s

// Tests that a 2-D Conv with explicit pads, strides and a bias becomes
// train.conv whose result type comes from its shape function, not from the
// node's dynamic declared type, and that the function signature follows.

// CHECK-LABEL: func.func @conv_2d
// CHECK-SAME: -> tensor<2x4x4x4xf32>
// CHECK: %[[W:.*]] = train.read_param @w
// CHECK: %[[B:.*]] = train.read_param @b
// CHECK: %[[CONV:.*]] = train.conv %arg0, %[[W]], %[[B]] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32>
// CHECK-NOT: train.onnx_node
// CHECK: return %[[CONV]] : tensor<2x4x4x4xf32>
module attributes {train.onnx_opset = 15 : i64} {
  train.param @w trainable : tensor<4x3x3x3xf32>
  train.param @b trainable : tensor<4xf32>
  func.func @conv_2d(%x: tensor<2x3x8x8xf32>) -> tensor<?x4x?x?xf32> {
    %w = train.read_param @w : tensor<4x3x3x3xf32>
    %b = train.read_param @b : tensor<4xf32>
    %y = train.onnx_node "Conv"(%x, %w, %b) {node_name = "c1", onnx_attrs = {dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<?x4x?x?xf32>
    return %y : tensor<?x4x?x?xf32>
  }
}

// -----

// Tests that a 1-D Conv without kernel_shape, strides or pads takes its
// kernel from the weight and the defaults for the rest, and keeps its
// dilation.

// CHECK-LABEL: func.func @conv_1d
// CHECK: train.conv %arg0, %arg1 strides [1] pads [0, 0] dilations [2] groups 1 : (tensor<2x3x10xf32>, tensor<5x3x3xf32>) -> tensor<2x5x6xf32>
func.func @conv_1d(%x: tensor<2x3x10xf32>, %w: tensor<5x3x3xf32>) -> tensor<*xf32> {
  %y = train.onnx_node "Conv"(%x, %w) {node_name = "c", onnx_attrs = {dilations = array<i64: 2>}} : (tensor<2x3x10xf32>, tensor<5x3x3xf32>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

// Tests that a grouped 3-D Conv with auto_pad VALID and an omitted bias
// (train.onnx_none) has no bias operand and zero pads, and that the
// onnx_none goes away.

// CHECK-LABEL: func.func @conv_3d_groups_valid
// CHECK-NOT: train.onnx_none
// CHECK: train.conv %arg0, %arg1 strides [1, 1, 1] pads [0, 0, 0, 0, 0, 0] dilations [1, 1, 1] groups 2 : (tensor<1x4x4x4x4xf32>, tensor<6x2x2x2x2xf32>) -> tensor<1x6x3x3x3xf32>
// CHECK-NOT: train.onnx_none
func.func @conv_3d_groups_valid(%x: tensor<1x4x4x4x4xf32>, %w: tensor<6x2x2x2x2xf32>) -> tensor<*xf32> {
  %none = train.onnx_none
  %y = train.onnx_node "Conv"(%x, %w, %none) {node_name = "c", onnx_attrs = {auto_pad = "VALID", group = 2 : i64, pads = array<i64: 5, 5, 5, 5, 5, 5>}} : (tensor<1x4x4x4x4xf32>, tensor<6x2x2x2x2xf32>, none) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

// Tests that auto_pad SAME_UPPER puts the odd unit of padding at the end
// and SAME_LOWER at the beginning (8 wide, kernel 3, stride 2: output 4,
// one unit of padding), and that with a dilation of 2 (extent 5) at stride 1
// the padding splits evenly.

// CHECK-LABEL: func.func @conv_same
// CHECK: train.conv %arg0, %arg1 strides [2, 2] pads [0, 0, 1, 1] dilations [1, 1] groups 1 : {{.*}} -> tensor<1x2x4x4xf32>
// CHECK: train.conv %arg0, %arg1 strides [2, 2] pads [1, 1, 0, 0] dilations [1, 1] groups 1 : {{.*}} -> tensor<1x2x4x4xf32>
// CHECK: train.conv %arg0, %arg1 strides [1, 1] pads [2, 2, 2, 2] dilations [2, 2] groups 1 : {{.*}} -> tensor<1x2x8x8xf32>
func.func @conv_same(%x: tensor<1x1x8x8xf32>, %w: tensor<2x1x3x3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %a = train.onnx_node "Conv"(%x, %w) {node_name = "upper", onnx_attrs = {auto_pad = "SAME_UPPER", strides = array<i64: 2, 2>}} : (tensor<1x1x8x8xf32>, tensor<2x1x3x3xf32>) -> tensor<*xf32>
  %b = train.onnx_node "Conv"(%x, %w) {node_name = "lower", onnx_attrs = {auto_pad = "SAME_LOWER", strides = array<i64: 2, 2>}} : (tensor<1x1x8x8xf32>, tensor<2x1x3x3xf32>) -> tensor<*xf32>
  %c = train.onnx_node "Conv"(%x, %w) {node_name = "dilated", onnx_attrs = {auto_pad = "SAME_UPPER", dilations = array<i64: 2, 2>}} : (tensor<1x1x8x8xf32>, tensor<2x1x3x3xf32>) -> tensor<*xf32>
  return %a, %b, %c : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Tests that an opset-15 BatchNormalization exported in training mode, with
// its two running-statistic outputs unused, becomes the trainable
// train.batch_norm with PyTorch's momentum (1 - 0.9), and that its running
// statistics are retagged as training state while scale and bias stay
// trainable.

// CHECK-LABEL: module @bn_opset15
// CHECK: train.param @bn.weight trainable
// CHECK: train.param @bn.bias trainable
// CHECK: train.param @bn.running_mean running_mean
// CHECK: train.param @bn.running_var running_var
// CHECK: %[[M:.*]] = train.read_param @bn.running_mean
// CHECK: %[[V:.*]] = train.read_param @bn.running_var
// CHECK: %[[BN:.*]] = train.batch_norm %arg0, %{{.*}}, %{{.*}}, %[[M]], %[[V]] epsilon 9.99999974E-6 momentum 1.000000e-01 : {{.*}} -> tensor<2x4x3x3xf32>
// CHECK: return %[[BN]]
module @bn_opset15 attributes {train.onnx_opset = 15 : i64} {
  train.param @"bn.weight" trainable : tensor<4xf32>
  train.param @"bn.bias" trainable : tensor<4xf32>
  train.param @"bn.running_mean" trainable : tensor<4xf32>
  train.param @"bn.running_var" trainable : tensor<4xf32>
  func.func @forward(%x: tensor<2x4x3x3xf32>) -> tensor<*xf32> {
    %s = train.read_param @"bn.weight" : tensor<4xf32>
    %b = train.read_param @"bn.bias" : tensor<4xf32>
    %m = train.read_param @"bn.running_mean" : tensor<4xf32>
    %v = train.read_param @"bn.running_var" : tensor<4xf32>
    %y:3 = train.onnx_node "BatchNormalization"(%x, %s, %b, %m, %v) {node_name = "bn", onnx_attrs = {epsilon = 9.99999974E-6 : f32, momentum = 0.899999976 : f32, training_mode = 1 : i64}} : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
    return %y#0 : tensor<*xf32>
  }
}

// -----

// Tests that the running-statistic outputs of a training-mode
// BatchNormalization, when used, are computed as ONNX defines them:
// input_mean * momentum + batch_mean * (1 - momentum), and likewise with the
// biased batch variance of train.bn_stats; Y stays the trainable
// train.batch_norm.

// CHECK-LABEL: func.func @bn_running_outputs
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x3xf32>, %[[S:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>, %[[M:.*]]: tensor<4xf32>, %[[V:.*]]: tensor<4xf32>)
// CHECK: %[[BN:.*]] = train.batch_norm %[[X]], %[[S]], %[[B]], %[[M]], %[[V]] epsilon 9.99999974E-6 momentum 2.500000e-01
// CHECK: %[[MEAN:.*]], %[[VAR:.*]] = train.bn_stats %[[X]]
// CHECK-DAG: %[[TAKE:.*]] = train.constant dense<2.500000e-01> : tensor<f32>
// CHECK-DAG: %[[KEEP:.*]] = train.constant dense<7.500000e-01> : tensor<f32>
// CHECK: %[[OLDM:.*]] = train.mul %[[M]], %[[KEEP]]
// CHECK: %[[NEWM:.*]] = train.mul %[[MEAN]], %[[TAKE]]
// CHECK: %[[RM:.*]] = train.add %[[OLDM]], %[[NEWM]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[OLDV:.*]] = train.mul %[[V]], %[[KEEP]]
// CHECK: %[[NEWV:.*]] = train.mul %[[VAR]], %[[TAKE]]
// CHECK: %[[RV:.*]] = train.add %[[OLDV]], %[[NEWV]]
// CHECK: return %[[BN]], %[[RM]], %[[RV]]
module attributes {train.onnx_opset = 15 : i64} {
  func.func @bn_running_outputs(%x: tensor<2x4x3xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %y:3 = train.onnx_node "BatchNormalization"(%x, %s, %b, %m, %v) {node_name = "bn", onnx_attrs = {momentum = 0.75 : f32, training_mode = 1 : i64}} : (tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
    return %y#0, %y#1, %y#2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Tests that a used running variance alone does not compute the running
// mean.

// CHECK-LABEL: func.func @bn_running_var_only
// CHECK: %{{.*}}, %[[VAR:.*]] = train.bn_stats
// CHECK-NOT: train.add
// CHECK: train.mul %[[VAR]]
// CHECK: train.add
// CHECK-NOT: train.add
// CHECK: return
module attributes {train.onnx_opset = 15 : i64} {
  func.func @bn_running_var_only(%x: tensor<2x4xf32>, %s: tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %y:3 = train.onnx_node "BatchNormalization"(%x, %s, %s, %s, %s) {node_name = "bn", onnx_attrs = {training_mode = 1 : i64}} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
    return %y#0, %y#2 : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Tests that the older five-output BatchNormalization (opset 9) with unused
// extra outputs imports the same way, with ONNX's defaults (epsilon 1e-5,
// momentum 0.9) when the attributes are absent.

// CHECK-LABEL: func.func @bn_opset9
// CHECK: train.batch_norm %arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} epsilon 9.99999974E-6 momentum 1.000000e-01 : {{.*}} -> tensor<2x4xf32>
module attributes {train.onnx_opset = 9 : i64} {
  train.param @s trainable : tensor<4xf32>
  train.param @m trainable : tensor<4xf32>
  train.param @v trainable : tensor<4xf32>
  func.func @bn_opset9(%x: tensor<2x4xf32>) -> tensor<*xf32> {
    %s = train.read_param @s : tensor<4xf32>
    %m = train.read_param @m : tensor<4xf32>
    %v = train.read_param @v : tensor<4xf32>
    %y:5 = train.onnx_node "BatchNormalization"(%x, %s, %s, %m, %v) {node_name = "bn", onnx_attrs = {}} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
    return %y#0 : tensor<*xf32>
  }
}

// -----

// Tests that opset-7 BatchNormalization with spatial = 1 (the per-channel
// form) is accepted and keeps its momentum conversion.

// CHECK-LABEL: func.func @bn_opset7_spatial
// CHECK: train.batch_norm {{.*}} epsilon 1.000000e-03 momentum 2.000000e-01
module attributes {train.onnx_opset = 7 : i64} {
  train.param @m trainable : tensor<4xf32>
  train.param @v trainable : tensor<4xf32>
  func.func @bn_opset7_spatial(%x: tensor<2x4x2x2xf32>, %s: tensor<4xf32>) -> tensor<*xf32> {
    %m = train.read_param @m : tensor<4xf32>
    %v = train.read_param @v : tensor<4xf32>
    %y = train.onnx_node "BatchNormalization"(%x, %s, %s, %m, %v) {node_name = "bn", onnx_attrs = {epsilon = 1.0e-3 : f32, momentum = 0.8 : f32, spatial = 1 : i64}} : (tensor<2x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32>
    return %y : tensor<*xf32>
  }
}

// -----

// Tests that Gemm keeps transA/transB/alpha/beta and its bias, and that a
// Gemm without C is accepted from opset 11 on.

// CHECK-LABEL: func.func @gemm
// CHECK: %[[G:.*]] = train.gemm %arg0, %arg1, %arg2 {alpha = 2.000000e+00 : f32, beta = 5.000000e-01 : f32, trans_b = true} : (tensor<8x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<8x10xf32>
// CHECK: train.gemm %arg3, %[[G]] {{{.*}}trans_a = true{{.*}}} : (tensor<8x3xf32>, tensor<8x10xf32>) -> tensor<3x10xf32>
func.func @gemm(%x: tensor<8x64xf32>, %w: tensor<10x64xf32>, %b: tensor<10xf32>, %y: tensor<8x3xf32>) -> tensor<*xf32> {
  %g = train.onnx_node "Gemm"(%x, %w, %b) {node_name = "fc", onnx_attrs = {alpha = 2.0 : f32, beta = 0.5 : f32, transB = 1 : i64}} : (tensor<8x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<8x10xf32>
  %none = train.onnx_none
  %h = train.onnx_node "Gemm"(%y, %g, %none) {node_name = "fc2", onnx_attrs = {transA = 1 : i64}} : (tensor<8x3xf32>, tensor<8x10xf32>, none) -> tensor<*xf32>
  return %h : tensor<*xf32>
}

// -----

// Tests that MatMul broadcasts a matrix over a batch of matrices.

// CHECK-LABEL: func.func @matmul
// CHECK: train.matmul %arg0, %arg1 : (tensor<2x8x16xf32>, tensor<16x4xf32>) -> tensor<2x8x4xf32>
func.func @matmul(%a: tensor<2x8x16xf32>, %b: tensor<16x4xf32>) -> tensor<*xf32> {
  %y = train.onnx_node "MatMul"(%a, %b) {node_name = "mm", onnx_attrs = {}} : (tensor<2x8x16xf32>, tensor<16x4xf32>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

// Tests that MaxPool keeps pads, strides, dilations and ceil_mode (opset 10
// and later), and that an unused Indices output is dropped, whatever its
// storage_order.

// CHECK-LABEL: func.func @max_pool
// CHECK: %[[P:.*]] = train.max_pool %arg0 kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] {ceil_mode = true} : (tensor<1x2x8x8xf32>) -> tensor<1x2x5x5xf32>
// CHECK: train.max_pool %[[P]] kernel [2, 2] strides [1, 1] pads [0, 0, 0, 0] dilations [2, 2] : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
module attributes {train.onnx_opset = 12 : i64} {
  func.func @max_pool(%x: tensor<1x2x8x8xf32>) -> tensor<*xf32> {
    %p:2 = train.onnx_node "MaxPool"(%x) {node_name = "p", onnx_attrs = {ceil_mode = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, storage_order = 1 : i64}} : (tensor<1x2x8x8xf32>) -> (tensor<*xf32>, tensor<*xi64>)
    %q = train.onnx_node "MaxPool"(%p#0) {node_name = "q", onnx_attrs = {kernel_shape = array<i64: 2, 2>, dilations = array<i64: 2, 2>}} : (tensor<*xf32>) -> tensor<*xf32>
    return %q : tensor<*xf32>
  }
}

// -----

// Tests that MaxPool with auto_pad SAME_UPPER pads to ceil(8 / 3) = 3
// windows and ignores ceil_mode, as ONNX defines it.

// CHECK-LABEL: func.func @max_pool_same
// CHECK: train.max_pool %arg0 kernel [3, 3] strides [3, 3] pads [0, 0, 1, 1] dilations [1, 1] : (tensor<1x2x8x8xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NOT: ceil_mode
func.func @max_pool_same(%x: tensor<1x2x8x8xf32>) -> tensor<*xf32> {
  %p = train.onnx_node "MaxPool"(%x) {node_name = "p", onnx_attrs = {auto_pad = "SAME_UPPER", ceil_mode = 1 : i64, kernel_shape = array<i64: 3, 3>, strides = array<i64: 3, 3>}} : (tensor<1x2x8x8xf32>) -> tensor<*xf32>
  return %p : tensor<*xf32>
}

// -----

// Tests that an opset-8 MaxPool (no ceil_mode or dilations yet) gets floor
// windows and unit dilations.

// CHECK-LABEL: func.func @max_pool_opset8
// CHECK: train.max_pool %arg0 kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : (tensor<1x2x7x7xf32>) -> tensor<1x2x3x3xf32>
module attributes {train.onnx_opset = 8 : i64} {
  func.func @max_pool_opset8(%x: tensor<1x2x7x7xf32>) -> tensor<*xf32> {
    %p = train.onnx_node "MaxPool"(%x) {node_name = "p", onnx_attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}} : (tensor<1x2x7x7xf32>) -> tensor<*xf32>
    return %p : tensor<*xf32>
  }
}

// -----

// Tests that AveragePool keeps count_include_pad and ceil_mode, and that
// GlobalAveragePool keeps size-1 spatial axes.

// CHECK-LABEL: func.func @average_pool
// CHECK: %[[A:.*]] = train.avg_pool %arg0 kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] {ceil_mode = true, count_include_pad = true} : (tensor<1x2x8x8xf32>) -> tensor<1x2x5x5xf32>
// CHECK: train.global_avg_pool %[[A]] : (tensor<1x2x5x5xf32>) -> tensor<1x2x1x1xf32>
func.func @average_pool(%x: tensor<1x2x8x8xf32>) -> tensor<*xf32> {
  %a = train.onnx_node "AveragePool"(%x) {node_name = "a", onnx_attrs = {ceil_mode = 1 : i64, count_include_pad = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}} : (tensor<1x2x8x8xf32>) -> tensor<*xf32>
  %g = train.onnx_node "GlobalAveragePool"(%a) {node_name = "g", onnx_attrs = {}} : (tensor<*xf32>) -> tensor<*xf32>
  return %g : tensor<*xf32>
}

// -----

// Tests that AveragePool with auto_pad SAME_LOWER puts the odd padding unit
// first and does not count padding by default.

// CHECK-LABEL: func.func @average_pool_same_lower
// CHECK: train.avg_pool %arg0 kernel [2] strides [1] pads [1, 0] : (tensor<1x2x5xf32>) -> tensor<1x2x5xf32>
// CHECK-NOT: count_include_pad
func.func @average_pool_same_lower(%x: tensor<1x2x5xf32>) -> tensor<*xf32> {
  %a = train.onnx_node "AveragePool"(%x) {node_name = "a", onnx_attrs = {auto_pad = "SAME_LOWER", kernel_shape = array<i64: 2>}} : (tensor<1x2x5xf32>) -> tensor<*xf32>
  return %a : tensor<*xf32>
}

// -----

// Tests that opset-15 Dropout reads its ratio from a constant input, ignores
// training_mode, drops the unused mask, and leaves no constant behind.

// CHECK-LABEL: func.func @dropout_opset15
// CHECK-NOT: train.constant
// CHECK: %[[D:.*]] = train.dropout %arg0 ratio 3.000000e-01 : tensor<2x16xf32>
// CHECK-NOT: train.constant
// CHECK: return %[[D]]
module attributes {train.onnx_opset = 15 : i64} {
  func.func @dropout_opset15(%x: tensor<2x16xf32>) -> tensor<*xf32> {
    %r = train.onnx_node "Constant"() {node_name = "r", onnx_attrs = {value = dense<3.000000e-01> : tensor<f32>}} : () -> tensor<f32>
    %t = train.onnx_node "Constant"() {node_name = "t", onnx_attrs = {value = dense<true> : tensor<i1>}} : () -> tensor<i1>
    %d:2 = train.onnx_node "Dropout"(%x, %r, %t) {node_name = "d", onnx_attrs = {}} : (tensor<2x16xf32>, tensor<f32>, tensor<i1>) -> (tensor<*xf32>, tensor<*xi1>)
    return %d#0 : tensor<*xf32>
  }
}

// -----

// Tests that opset-10 Dropout reads the ratio attribute.

// CHECK-LABEL: func.func @dropout_opset10
// CHECK: train.dropout %arg0 ratio 2.500000e-01
module attributes {train.onnx_opset = 10 : i64} {
  func.func @dropout_opset10(%x: tensor<2x16xf32>) -> tensor<*xf32> {
    %d = train.onnx_node "Dropout"(%x) {node_name = "d", onnx_attrs = {ratio = 2.500000e-01 : f32}} : (tensor<2x16xf32>) -> tensor<*xf32>
    return %d : tensor<*xf32>
  }
}

// -----

// Tests that opset-12 Dropout without a ratio input uses the default 0.5.

// CHECK-LABEL: func.func @dropout_default
// CHECK: train.dropout %arg0 ratio 5.000000e-01
module attributes {train.onnx_opset = 12 : i64} {
  func.func @dropout_default(%x: tensor<2x16xf32>) -> tensor<*xf32> {
    %d = train.onnx_node "Dropout"(%x) {node_name = "d", onnx_attrs = {}} : (tensor<2x16xf32>) -> tensor<*xf32>
    return %d : tensor<*xf32>
  }
}

// -----

// Tests that BatchNormalization whose running statistics are graph inputs
// (as in ONNX's own node tests) imports with them as operands; only building
// a trainer needs them to be parameters.
// CHECK-LABEL: func.func @bn_stats_from_inputs
// CHECK: train.batch_norm %arg0, %arg1, %arg1, %arg2, %arg3
// CHECK-NOT: train.onnx_node
func.func @bn_stats_from_inputs(%x: tensor<2x4xf32>, %s: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<*xf32> {
  %0 = train.onnx_node "BatchNormalization"(%x, %s, %s, %m, %v) {node_name = "bn", onnx_attrs = {}} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
