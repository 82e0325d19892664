// RUN: split-file %s %t --leading-lines
// RUN: traincc-opt %t/cnn.mlir -traincc-insert-casts=precision=bf16 | FileCheck %s --check-prefixes=CHECK,BF16
// RUN: traincc-opt %t/cnn.mlir -traincc-insert-casts=precision=fp16 | FileCheck %s --check-prefixes=CHECK,FP16
// RUN: traincc-opt %t/cnn.mlir -traincc-insert-casts=precision=fp32 | FileCheck %s --check-prefix=FP32
// RUN: traincc-opt %t/mixed.mlir -traincc-insert-casts=precision=bf16 | FileCheck %s --check-prefix=MIXED
// RUN: not traincc-opt %t/cnn.mlir -traincc-insert-casts=precision=fp8 2>&1 | FileCheck %s --check-prefix=UNKNOWN

//--- cnn.mlir

// Tests that convolutions and the classifier take low-precision operands:
// the input through a cast, the weights through a weight_copy of each
// master weight (declared after it, initial value rounded); that
// BatchNorm reads the low-precision activation as it is, with f32
// statistics, scale and bias, and writes a low-precision result (so the
// backward pass keeps the bf16 activation, not an f32 copy); that ReLU and
// pooling follow their operand (low); that the loss takes f32 logits; and
// that no cast touches the BatchNorm statistics, the running-statistics
// update or the loss itself.
// CHECK: train.param @conv.weight trainable : tensor<4x1x3x3xf32>
// BF16-NEXT: train.param @conv.weight.bf16 weight_copy : tensor<4x1x3x3xbf16> = dense<1.250000e-01> {source = @conv.weight}
// FP16-NEXT: train.param @conv.weight.f16 weight_copy : tensor<4x1x3x3xf16> = dense<1.250000e-01> {source = @conv.weight}
// BF16: train.param @fc.bias.bf16 weight_copy : tensor<3xbf16> = dense<[1.000980e-01, 0.000000e+00, -5.000000e-01]> {source = @fc.bias}
// FP16: train.param @fc.bias.f16 weight_copy : tensor<3xf16> = dense<[9.997550e-02, 0.000000e+00, -5.000000e-01]> {source = @fc.bias}
// CHECK-NOT: @bn.weight.{{b?f16}}
// CHECK-NOT: @bn.running_mean.{{b?f16}}

// CHECK-LABEL: func.func @loss
// BF16: %[[X:.*]] = train.cast %arg0 : tensor<2x1x6x6xf32> to tensor<2x1x6x6xbf16>
// BF16: %[[W:.*]] = train.read_param @conv.weight.bf16 : tensor<4x1x3x3xbf16>
// BF16: %[[C:.*]] = train.conv %[[X]], %[[W]], %{{.*}} {{.*}} -> tensor<2x4x6x6xbf16>
// BF16-NOT: train.cast
// BF16: %[[MEAN:.*]], %[[VAR:.*]] = train.bn_stats %[[C]] : (tensor<2x4x6x6xbf16>) -> (tensor<4xf32>, tensor<4xf32>)
// BF16-NEXT: %[[N16:.*]] = train.bn_apply %[[C]], %[[MEAN]], %[[VAR]], {{.*}} : tensor<2x4x6x6xbf16>, tensor<4xf32>
// BF16-NEXT: train.bn_running_update @bn.running_mean, @bn.running_var, %[[MEAN]], %[[VAR]] {{.*}} : tensor<4xf32>
// BF16: %[[R:.*]] = train.relu %[[N16]] : tensor<2x4x6x6xbf16>
// BF16: %[[P:.*]] = train.max_pool %[[R]] {{.*}} -> tensor<2x4x3x3xbf16>
// BF16: %[[F:.*]] = train.reshape %[[P]] : tensor<2x4x3x3xbf16> -> tensor<2x36xbf16>
// BF16: %[[G:.*]] = train.gemm %[[F]], %{{.*}}, %{{.*}} {trans_b = true} : (tensor<2x36xbf16>, tensor<3x36xbf16>, tensor<3xbf16>) -> tensor<2x3xbf16>
// BF16: %[[G32:.*]] = train.cast %[[G]] : tensor<2x3xbf16> to tensor<2x3xf32>
// BF16: %[[L:.*]] = train.softmax_cross_entropy %[[G32]], %arg1 reduction mean : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<f32>
// BF16: return %[[L]] : tensor<f32>
// FP16: train.conv {{.*}} -> tensor<2x4x6x6xf16>
// FP16: train.gemm {{.*}} -> tensor<2x3xf16>

// Tests that the master weights are no longer read where only
// contractions used them, and that evaluation computes in the same types
// and returns the declared f32 outputs.
// CHECK-NOT: train.read_param @conv.weight :
// CHECK-LABEL: func.func @eval_step
// BF16: train.conv {{.*}} -> tensor<2x4x6x6xbf16>
// BF16: train.bn_apply {{.*}} : tensor<2x4x6x6xbf16>, tensor<4xf32>
// BF16: %[[EG:.*]] = train.gemm {{.*}} -> tensor<2x3xbf16>
// BF16: %[[EG32:.*]] = train.cast %[[EG]] : tensor<2x3xbf16> to tensor<2x3xf32>
// BF16: return %[[EG32]] : tensor<2x3xf32>

// Tests that fp32 changes nothing.
// FP32-NOT: train.cast
// FP32-NOT: weight_copy
module @cnn {
  train.param @conv.weight trainable : tensor<4x1x3x3xf32> = dense<0.125>
  train.param @conv.bias trainable : tensor<4xf32> = dense<0.0>
  train.param @bn.weight trainable : tensor<4xf32> = dense<1.0>
  train.param @bn.bias trainable : tensor<4xf32> = dense<0.0>
  train.param @bn.running_mean running_mean : tensor<4xf32> = dense<0.0>
  train.param @bn.running_var running_var : tensor<4xf32> = dense<1.0>
  train.param @fc.weight trainable : tensor<3x36xf32> = dense<0.01>
  train.param @fc.bias trainable : tensor<3xf32> = dense<[0.1, 0.0, -0.5]>
  func.func @loss(%arg0: tensor<2x1x6x6xf32> {train.name = "input"}, %arg1: tensor<2xi64> {train.name = "target"}) -> tensor<f32> {
    %0 = train.read_param @conv.weight : tensor<4x1x3x3xf32>
    %1 = train.read_param @conv.bias : tensor<4xf32>
    %2 = train.conv %arg0, %0, %1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x1x6x6xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
    %3 = train.read_param @bn.weight : tensor<4xf32>
    %4 = train.read_param @bn.bias : tensor<4xf32>
    %mean, %variance = train.bn_stats %2 : (tensor<2x4x6x6xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    %5 = train.bn_apply %2, %mean, %variance, %3, %4 epsilon 9.99999974E-6 : tensor<2x4x6x6xf32>, tensor<4xf32>
    train.bn_running_update @bn.running_mean, @bn.running_var, %mean, %variance momentum 1.000000e-01 count 72 : tensor<4xf32>
    %6 = train.relu %5 : tensor<2x4x6x6xf32>
    %7 = train.max_pool %6 kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : (tensor<2x4x6x6xf32>) -> tensor<2x4x3x3xf32>
    %8 = train.reshape %7 : tensor<2x4x3x3xf32> -> tensor<2x36xf32>
    %9 = train.read_param @fc.weight : tensor<3x36xf32>
    %10 = train.read_param @fc.bias : tensor<3xf32>
    %11 = train.gemm %8, %9, %10 {trans_b = true} : (tensor<2x36xf32>, tensor<3x36xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %12 = train.softmax_cross_entropy %11, %arg1 reduction mean : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<f32>
    return %12 : tensor<f32>
  }
  func.func @eval_step(%arg0: tensor<2x1x6x6xf32> {train.name = "input"}) -> (tensor<2x3xf32> {train.name = "logits"}) {
    %0 = train.read_param @conv.weight : tensor<4x1x3x3xf32>
    %1 = train.read_param @conv.bias : tensor<4xf32>
    %2 = train.conv %arg0, %0, %1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x1x6x6xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
    %3 = train.read_param @bn.weight : tensor<4xf32>
    %4 = train.read_param @bn.bias : tensor<4xf32>
    %5 = train.read_param @bn.running_mean : tensor<4xf32>
    %6 = train.read_param @bn.running_var : tensor<4xf32>
    %7 = train.bn_apply %2, %5, %6, %3, %4 epsilon 9.99999974E-6 : tensor<2x4x6x6xf32>, tensor<4xf32>
    %8 = train.relu %7 : tensor<2x4x6x6xf32>
    %9 = train.max_pool %8 kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : (tensor<2x4x6x6xf32>) -> tensor<2x4x3x3xf32>
    %10 = train.reshape %9 : tensor<2x4x3x3xf32> -> tensor<2x36xf32>
    %11 = train.read_param @fc.weight : tensor<3x36xf32>
    %12 = train.read_param @fc.bias : tensor<3xf32>
    %13 = train.gemm %10, %11, %12 {trans_b = true} : (tensor<2x36xf32>, tensor<3x36xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    return %13 : tensor<2x3xf32>
  }
}

//--- mixed.mlir

// Tests the rule for an elementwise op whose operands disagree: a
// parameter or constant joins the low-precision activation (PyTorch's
// autocast converts the weight), while two activations meet in f32 (type
// promotion); and that a softmax computes in f32 and stays there.
// MIXED-LABEL: func.func @loss
// MIXED: %[[M:.*]] = train.matmul {{.*}} -> tensor<2x3xbf16>
// MIXED: %[[B:.*]] = train.read_param @shift.bf16 : tensor<3xbf16>
// MIXED: %[[A:.*]] = train.add %[[M]], %[[B]] : (tensor<2x3xbf16>, tensor<3xbf16>) -> tensor<2x3xbf16>
// MIXED: %[[A32:.*]] = train.cast %[[A]] : tensor<2x3xbf16> to tensor<2x3xf32>
// MIXED: %[[S:.*]] = train.softmax %[[A32]] {{.*}} : tensor<2x3xf32>
// MIXED: %[[T:.*]] = train.tanh %[[A]] : tensor<2x3xbf16>
// MIXED: %[[T32:.*]] = train.cast %[[T]] : tensor<2x3xbf16> to tensor<2x3xf32>
// MIXED: %[[SUM:.*]] = train.add %[[S]], %[[T32]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// MIXED: train.reduce_sum %[[SUM]]
module @mixed {
  train.param @w trainable : tensor<4x3xf32> = dense<0.5>
  train.param @shift trainable : tensor<3xf32> = dense<0.25>
  func.func @loss(%arg0: tensor<2x4xf32> {train.name = "input"}) -> tensor<f32> {
    %0 = train.read_param @w : tensor<4x3xf32>
    %1 = train.matmul %arg0, %0 : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
    %2 = train.read_param @shift : tensor<3xf32>
    %3 = train.add %1, %2 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %4 = train.softmax %3 axis 1 : tensor<2x3xf32>
    %5 = train.tanh %3 : tensor<2x3xf32>
    %6 = train.add %4, %5 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %7 = train.reduce_sum %6 axes [0, 1] : (tensor<2x3xf32>) -> tensor<f32>
    return %7 : tensor<f32>
  }
}

// UNKNOWN: for the --precision option: Cannot find option named 'fp8'!
