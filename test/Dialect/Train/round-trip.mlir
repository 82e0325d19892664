// RUN: traincc-opt %s -split-input-file | traincc-opt -split-input-file | FileCheck %s
// RUN: traincc-opt %s -split-input-file --mlir-print-op-generic | traincc-opt -split-input-file | FileCheck %s

// Tests that parameters print their name first, the kind as a word and the
// initial value without a second type, and that every kind round-trips.

// CHECK-LABEL: module @params
// CHECK: train.param @fc.weight trainable : tensor<10x64xf32> = dense<0.000000e+00>{{$}}
// CHECK: train.param @"conv/1.bias" frozen : tensor<2xf32> = dense<[1.000000e+00, 2.500000e+00]>{{$}}
// CHECK: train.param @bn.running_mean running_mean : tensor<64xf32>{{$}}
// CHECK: train.param @bn.running_var running_var : tensor<64xf32>{{$}}
// CHECK: train.param @steps frozen : tensor<i64> = dense<3> {sym_visibility = "private"}{{$}}
// CHECK: train.param @mask frozen : tensor<2xi1> = dense<[true, false]>{{$}}
// CHECK-LABEL: func.func @read
// CHECK: %[[W:.*]] = train.read_param @fc.weight : tensor<10x64xf32>
// CHECK: return %[[W]]
module @params {
  train.param @"fc.weight" trainable : tensor<10x64xf32> = dense<0.0>
  train.param @"conv/1.bias" frozen : tensor<2xf32> = dense<[1.0, 2.5]>
  train.param @"bn.running_mean" running_mean : tensor<64xf32>
  train.param @"bn.running_var" running_var : tensor<64xf32>
  train.param @steps frozen : tensor<i64> = dense<3> {sym_visibility = "private"}
  train.param @mask frozen : tensor<2xi1> = dense<[true, false]>
  func.func @read() -> tensor<10x64xf32> {
    %w = train.read_param @"fc.weight" : tensor<10x64xf32>
    return %w : tensor<10x64xf32>
  }
}

// -----

// Tests that an initial value held as a resource blob round-trips.

// CHECK-LABEL: module @resource
// CHECK: train.param @w trainable : tensor<2xf32> = dense_resource<blob1>{{$}}
module @resource {
  train.param @w trainable : tensor<2xf32> = dense_resource<blob1>
}
{-#
  dialect_resources: {
    builtin: {
      blob1: "0x040000000000803F00000040"
    }
  }
#-}

// -----

// Tests that constants and the ONNX import scaffolding round-trip.

// CHECK-LABEL: func.func @scaffolding
// CHECK: train.constant dense<[64, -1]> : tensor<2xi64>
// CHECK: %[[NONE:.*]] = train.onnx_none
// CHECK: train.onnx_node "Relu"(%{{.*}}) {node_name = "relu1"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: train.onnx_node "Clip"(%{{.*}}, %[[NONE]], %[[NONE]]) {node_name = "clip", onnx_attrs = {foo = 1 : i64}} : (tensor<?x8xf32>, none, none) -> (tensor<?x8xf32>, tensor<*xf32>)
// CHECK: train.onnx_node "NoOp"() {node_name = ""} : () -> ()
func.func @scaffolding(%x: tensor<4x8xf32>, %d: tensor<?x8xf32>) -> tensor<2xi64> {
  %shape = train.constant dense<[64, -1]> : tensor<2xi64>
  %none = train.onnx_none
  %y = train.onnx_node "Relu"(%x) {node_name = "relu1", onnx_attrs = {}}
      : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %c:2 = train.onnx_node "Clip"(%d, %none, %none)
      {node_name = "clip", onnx_attrs = {foo = 1 : i64}}
      : (tensor<?x8xf32>, none, none) -> (tensor<?x8xf32>, tensor<*xf32>)
  train.onnx_node "NoOp"() {node_name = ""} : () -> ()
  return %shape : tensor<2xi64>
}

// -----

// Tests that convolution round-trips with and without bias, with groups and
// asymmetric pads.

// CHECK-LABEL: func.func @conv
// CHECK: train.conv %{{.*}}, %{{.*}}, %{{.*}} strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<8x16x32x32xf32>
// CHECK: train.conv %{{.*}}, %{{.*}} strides [2] pads [0, 1] dilations [2] groups 4 : (tensor<2x8x9xf16>, tensor<12x2x3xf16>) -> tensor<2x12x3xf16>
func.func @conv(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>,
                %b: tensor<16xf32>, %x1: tensor<2x8x9xf16>,
                %w1: tensor<12x2x3xf16>)
    -> (tensor<8x16x32x32xf32>, tensor<2x12x3xf16>) {
  %y = train.conv %x, %w, %b strides [1, 1] pads [1, 1, 1, 1]
      dilations [1, 1] groups 1
      : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>)
      -> tensor<8x16x32x32xf32>
  %y1 = train.conv %x1, %w1 strides [2] pads [0, 1] dilations [2] groups 4
      : (tensor<2x8x9xf16>, tensor<12x2x3xf16>) -> tensor<2x12x3xf16>
  return %y, %y1 : tensor<8x16x32x32xf32>, tensor<2x12x3xf16>
}

// -----

// Tests that batch normalisation, gemm (non-default attributes printed in
// the dictionary) and matmul (vector operands included) round-trip.

// CHECK-LABEL: func.func @dense
// CHECK: train.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} epsilon 9.99999974E-6 momentum 1.000000e-01 : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
// CHECK: train.gemm %{{.*}}, %{{.*}}, %{{.*}} {trans_b = true} : (tensor<8x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<8x10xf32>
// CHECK: train.gemm %{{.*}}, %{{.*}} {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32, trans_a = true} : (tensor<64x8xf32>, tensor<64x10xf32>) -> tensor<8x10xf32>
// CHECK: train.matmul %{{.*}}, %{{.*}} : (tensor<2x8x16xf32>, tensor<16x4xf32>) -> tensor<2x8x4xf32>
// CHECK: train.matmul %{{.*}}, %{{.*}} : (tensor<16xf32>, tensor<3x16x4xf32>) -> tensor<3x4xf32>
// CHECK: train.matmul %{{.*}}, %{{.*}} : (tensor<16xf32>, tensor<16xf32>) -> tensor<f32>
func.func @dense(%x: tensor<8x16x4x4xf32>, %gamma: tensor<16xf32>,
                 %beta: tensor<16xf32>, %mean: tensor<16xf32>,
                 %var: tensor<16xf32>, %m: tensor<8x64xf32>,
                 %w: tensor<10x64xf32>, %b: tensor<10xf32>,
                 %mt: tensor<64x8xf32>, %wt: tensor<64x10xf32>,
                 %a: tensor<2x8x16xf32>, %c: tensor<16x4xf32>,
                 %v: tensor<16xf32>, %bc: tensor<3x16x4xf32>) {
  %y = train.batch_norm %x, %gamma, %beta, %mean, %var epsilon 1.0e-05
      momentum 1.0e-01 : (tensor<8x16x4x4xf32>, tensor<16xf32>,
      tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
  %g = train.gemm %m, %w, %b {trans_b = true}
      : (tensor<8x64xf32>, tensor<10x64xf32>, tensor<10xf32>)
      -> tensor<8x10xf32>
  %g1 = train.gemm %mt, %wt {trans_a = true, alpha = 0.5 : f32, beta = 2.0 : f32}
      : (tensor<64x8xf32>, tensor<64x10xf32>) -> tensor<8x10xf32>
  %p = train.matmul %a, %c
      : (tensor<2x8x16xf32>, tensor<16x4xf32>) -> tensor<2x8x4xf32>
  %p1 = train.matmul %v, %bc
      : (tensor<16xf32>, tensor<3x16x4xf32>) -> tensor<3x4xf32>
  %p2 = train.matmul %v, %v : (tensor<16xf32>, tensor<16xf32>) -> tensor<f32>
  return
}

// -----

// Tests that the broadcasting binary ops round-trip.

// CHECK-LABEL: func.func @binary
// CHECK: train.add %{{.*}}, %{{.*}} : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
// CHECK: train.sub %{{.*}}, %{{.*}} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: train.mul %{{.*}}, %{{.*}} : (tensor<8x16xf32>, tensor<1xf32>) -> tensor<8x16xf32>
// CHECK: train.div %{{.*}}, %{{.*}} : (tensor<8x16xf32>, tensor<1xf32>) -> tensor<8x16xf32>
// CHECK: train.add %{{.*}}, %{{.*}} : (tensor<8x1xbf16>, tensor<3xbf16>) -> tensor<8x3xbf16>
func.func @binary(%x: tensor<8x16xf32>, %b: tensor<16xf32>,
                  %y: tensor<8x16xf32>, %s: tensor<1xf32>,
                  %c: tensor<8x1xbf16>, %r: tensor<3xbf16>) {
  %z0 = train.add %x, %b
      : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %z1 = train.sub %x, %y
      : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %z2 = train.mul %x, %s
      : (tensor<8x16xf32>, tensor<1xf32>) -> tensor<8x16xf32>
  %z3 = train.div %x, %s
      : (tensor<8x16xf32>, tensor<1xf32>) -> tensor<8x16xf32>
  %z4 = train.add %c, %r
      : (tensor<8x1xbf16>, tensor<3xbf16>) -> tensor<8x3xbf16>
  return
}

// -----

// Tests that maximum and minimum round-trip, with broadcasting of a 0-d
// bound and of both operands.

// CHECK-LABEL: func.func @select
// CHECK: train.maximum %{{.*}}, %{{.*}} : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
// CHECK: train.minimum %{{.*}}, %{{.*}} : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
// CHECK: train.maximum %{{.*}}, %{{.*}} : (tensor<8x1xbf16>, tensor<3xbf16>) -> tensor<8x3xbf16>
// CHECK: train.minimum %{{.*}}, %{{.*}} : (tensor<3xbf16>, tensor<8x1xbf16>) -> tensor<8x3xbf16>
func.func @select(%x: tensor<8x16xf32>, %lo: tensor<f32>, %hi: tensor<f32>,
                  %c: tensor<8x1xbf16>, %r: tensor<3xbf16>) {
  %z0 = train.maximum %x, %lo
      : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  %z1 = train.minimum %z0, %hi
      : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  %z2 = train.maximum %c, %r
      : (tensor<8x1xbf16>, tensor<3xbf16>) -> tensor<8x3xbf16>
  %z3 = train.minimum %r, %c
      : (tensor<3xbf16>, tensor<8x1xbf16>) -> tensor<8x3xbf16>
  return
}

// -----

// Tests that compare prints its predicate as a word and gives a bool
// tensor of the broadcast shape, and that select broadcasts its three
// operands.

// CHECK-LABEL: func.func @compare_select
// CHECK: %[[C:.*]] = train.compare gt %{{.*}}, %{{.*}} : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xi1>
// CHECK: train.compare eq %{{.*}}, %{{.*}} : (tensor<8x1xbf16>, tensor<3xbf16>) -> tensor<8x3xi1>
// CHECK: train.select %[[C]], %{{.*}}, %{{.*}} : (tensor<8x16xi1>, tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
// CHECK: train.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<16xi1>, tensor<8x1xf32>, tensor<f32>) -> tensor<8x16xf32>
func.func @compare_select(%x: tensor<8x16xf32>, %zero: tensor<f32>,
                          %a: tensor<8x1xbf16>, %b: tensor<3xbf16>,
                          %m: tensor<16xi1>, %col: tensor<8x1xf32>) {
  %c = train.compare gt %x, %zero
      : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xi1>
  %e = train.compare eq %a, %b
      : (tensor<8x1xbf16>, tensor<3xbf16>) -> tensor<8x3xi1>
  %y = train.select %c, %x, %zero
      : (tensor<8x16xi1>, tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  %z = train.select %m, %col, %zero
      : (tensor<16xi1>, tensor<8x1xf32>, tensor<f32>) -> tensor<8x16xf32>
  return
}

// -----

// Tests that the unary ops, clip with either bound or none, dropout and
// softmax round-trip.

// CHECK-LABEL: func.func @unary
// CHECK: train.relu %{{.*}} : tensor<8x16xf32>
// CHECK: train.leaky_relu %{{.*}} alpha 0.00999999977 : tensor<8x16xf32>
// CHECK: train.clip %{{.*}} min 0.000000e+00 max 6.000000e+00 : tensor<8x16xf32>
// CHECK: train.clip %{{.*}} max 1.000000e+00 : tensor<8x16xf32>
// CHECK: train.clip %{{.*}} min -1.000000e+00 : tensor<8x16xf32>
// CHECK: train.clip %{{.*}} : tensor<8x16xf32>
// CHECK: train.sigmoid %{{.*}} : tensor<8x16xf32>
// CHECK: train.tanh %{{.*}} : tensor<8x16xf64>
// CHECK: train.dropout %{{.*}} ratio 5.000000e-01 : tensor<8x16xf32>
// CHECK: train.softmax %{{.*}} axis 1 : tensor<8x10xf32>
// CHECK: train.log_softmax %{{.*}} axis 0 : tensor<8x10xf32>
// CHECK: train.tanh %{{.*}} : tensor<8x16xf32>
// CHECK: train.log_softmax %{{.*}} axis 1 : tensor<8x10xf32>
// CHECK: train.sqrt %{{.*}} : tensor<8x16xf32>
// CHECK: train.erf %{{.*}} : tensor<8x16xf32>
// CHECK: train.exp %{{.*}} : tensor<8x16xf32>
// CHECK: train.log %{{.*}} : tensor<8x16xf64>
func.func @unary(%x: tensor<8x16xf32>, %d: tensor<8x16xf64>,
                 %l: tensor<8x10xf32>) {
  %0 = train.relu %x : tensor<8x16xf32>
  %1 = train.leaky_relu %x alpha 1.0e-02 : tensor<8x16xf32>
  %2 = train.clip %x min 0.0 max 6.0 : tensor<8x16xf32>
  %3 = train.clip %x max 1.0 : tensor<8x16xf32>
  %4 = train.clip %x min -1.0 : tensor<8x16xf32>
  %5 = train.clip %x : tensor<8x16xf32>
  %6 = train.sigmoid %x : tensor<8x16xf32>
  %7 = train.tanh %d : tensor<8x16xf64>
  %8 = train.dropout %x ratio 5.0e-01 : tensor<8x16xf32>
  %9 = train.softmax %l axis 1 : tensor<8x10xf32>
  %10 = train.log_softmax %l axis 0 : tensor<8x10xf32>
  %11 = train.tanh %x : tensor<8x16xf32>
  %12 = train.log_softmax %l axis 1 : tensor<8x10xf32>
  %13 = train.sqrt %x : tensor<8x16xf32>
  %14 = train.erf %x : tensor<8x16xf32>
  %15 = train.exp %x : tensor<8x16xf32>
  %16 = train.log %d : tensor<8x16xf64>
  return
}

// -----

// Tests that pooling round-trips with ceil mode, count_include_pad and
// dilations. The ceil mode sizes are PyTorch's: a window one short of
// fitting still counts (%3), a last window starting in the end padding does
// not (%4).

// CHECK-LABEL: func.func @pool
// CHECK: train.max_pool %{{.*}} kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : (tensor<8x16x28x28xf32>) -> tensor<8x16x14x14xf32>
// CHECK: train.max_pool %{{.*}} kernel [3] strides [2] pads [1, 1] dilations [2] {ceil_mode = true} : (tensor<1x2x10xf32>) -> tensor<1x2x5xf32>
// CHECK: train.avg_pool %{{.*}} kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] {count_include_pad = true} : (tensor<8x16x8x8xf32>) -> tensor<8x16x8x8xf32>
// CHECK: train.avg_pool %{{.*}} kernel [3] strides [2] pads [0, 0] {ceil_mode = true} : (tensor<1x1x2xf32>) -> tensor<1x1x1xf32>
// CHECK: train.max_pool %{{.*}} kernel [2] strides [2] pads [1, 1] dilations [1] {ceil_mode = true} : (tensor<1x1x5xf32>) -> tensor<1x1x3xf32>
// CHECK: train.global_avg_pool %{{.*}} : (tensor<8x64x7x7xf32>) -> tensor<8x64x1x1xf32>
func.func @pool(%x: tensor<8x16x28x28xf32>, %x1: tensor<1x2x10xf32>,
                %x2: tensor<8x16x8x8xf32>, %x3: tensor<1x1x2xf32>,
                %x4: tensor<8x64x7x7xf32>, %x5: tensor<1x1x5xf32>) {
  %0 = train.max_pool %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0]
      dilations [1, 1] : (tensor<8x16x28x28xf32>) -> tensor<8x16x14x14xf32>
  %1 = train.max_pool %x1 kernel [3] strides [2] pads [1, 1] dilations [2]
      {ceil_mode = true} : (tensor<1x2x10xf32>) -> tensor<1x2x5xf32>
  %2 = train.avg_pool %x2 kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1]
      {count_include_pad = true}
      : (tensor<8x16x8x8xf32>) -> tensor<8x16x8x8xf32>
  %3 = train.avg_pool %x3 kernel [3] strides [2] pads [0, 0]
      {ceil_mode = true} : (tensor<1x1x2xf32>) -> tensor<1x1x1xf32>
  %4 = train.max_pool %x5 kernel [2] strides [2] pads [1, 1] dilations [1]
      {ceil_mode = true} : (tensor<1x1x5xf32>) -> tensor<1x1x3xf32>
  %5 = train.global_avg_pool %x4
      : (tensor<8x64x7x7xf32>) -> tensor<8x64x1x1xf32>
  return
}

// -----

// Tests that the data-movement ops round-trip.

// CHECK-LABEL: func.func @data_movement
// CHECK: train.reshape %{{.*}} : tensor<8x16x2x2xf32> -> tensor<8x64xf32>
// CHECK: train.flatten %{{.*}} axis 1 : (tensor<8x16x2x2xf32>) -> tensor<8x64xf32>
// CHECK: train.flatten %{{.*}} axis 0 : (tensor<8x16x2x2xf32>) -> tensor<1x512xf32>
// CHECK: train.transpose %{{.*}} perm [1, 0] : (tensor<8x16xf32>) -> tensor<16x8xf32>
// CHECK: train.concat %{{.*}}, %{{.*}} axis 1 : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<8x20xf32>
// CHECK: train.slice %{{.*}} starts [0, 2] ends [8, 10] steps [1, 2] : (tensor<8x16xf32>) -> tensor<8x4xf32>
// CHECK: train.slice %{{.*}} starts [7, 15] ends [-1, 0] steps [-1, -4] : (tensor<8x16xf32>) -> tensor<8x4xf32>
// CHECK: train.identity %{{.*}} : tensor<8x16xf32>
// CHECK: train.reshape %{{.*}} : tensor<3xi64> -> tensor<1x3xi64>
func.func @data_movement(%x: tensor<8x16x2x2xf32>, %m: tensor<8x16xf32>,
                         %b: tensor<8x4xf32>, %i: tensor<3xi64>) {
  %0 = train.reshape %x : tensor<8x16x2x2xf32> -> tensor<8x64xf32>
  %1 = train.flatten %x axis 1 : (tensor<8x16x2x2xf32>) -> tensor<8x64xf32>
  %2 = train.flatten %x axis 0 : (tensor<8x16x2x2xf32>) -> tensor<1x512xf32>
  %3 = train.transpose %m perm [1, 0] : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %4 = train.concat %m, %b axis 1
      : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<8x20xf32>
  %5 = train.slice %m starts [0, 2] ends [8, 10] steps [1, 2]
      : (tensor<8x16xf32>) -> tensor<8x4xf32>
  %6 = train.slice %m starts [7, 15] ends [-1, 0] steps [-1, -4]
      : (tensor<8x16xf32>) -> tensor<8x4xf32>
  %7 = train.identity %m : tensor<8x16xf32>
  %8 = train.reshape %i : tensor<3xi64> -> tensor<1x3xi64>
  return
}

// -----

// Tests that reduce_max (keepdims form) and gather round-trip.
// CHECK-LABEL: func.func @reduce_max_gather
// CHECK: train.reduce_max %arg0 : tensor<2x3x4xf32> -> tensor<2x1x1xf32>
// CHECK: train.gather %arg1, %arg2 axis 0 : (tensor<10x4xf32>, tensor<2x5xi64>) -> tensor<2x5x4xf32>
func.func @reduce_max_gather(%x: tensor<2x3x4xf32>, %t: tensor<10x4xf32>, %i: tensor<2x5xi64>)
    -> (tensor<2x1x1xf32>, tensor<2x5x4xf32>) {
  %0 = train.reduce_max %x : tensor<2x3x4xf32> -> tensor<2x1x1xf32>
  %1 = train.gather %t, %i axis 0 : (tensor<10x4xf32>, tensor<2x5xi64>) -> tensor<2x5x4xf32>
  return %0, %1 : tensor<2x1x1xf32>, tensor<2x5x4xf32>
}
