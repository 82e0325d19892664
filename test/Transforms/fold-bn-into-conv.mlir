// RUN: traincc-opt %s -split-input-file -traincc-fold-bn-into-conv | FileCheck %s

// Tests that an evaluation BatchNorm of a convolution becomes one
// convolution whose weight is W scaled per output channel (bn_apply with
// zero mean and bias on a [1, M, C*kh*kw] view) and whose bias is the
// conv bias normalised and shifted by the BatchNorm.
// CHECK-LABEL: module @conv_bias_bn
// CHECK: func.func @eval_step(%[[X:.*]]: tensor<2x3x6x6xf32>)
// CHECK-DAG: %[[W:.*]] = train.read_param @conv.weight
// CHECK-DAG: %[[B:.*]] = train.read_param @conv.bias
// CHECK-DAG: %[[G:.*]] = train.read_param @bn.weight
// CHECK-DAG: %[[BETA:.*]] = train.read_param @bn.bias
// CHECK-DAG: %[[M:.*]] = train.read_param @bn.running_mean
// CHECK-DAG: %[[V:.*]] = train.read_param @bn.running_var
// CHECK: %[[ZERO:.*]] = train.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[WV:.*]] = train.reshape %[[W]] : tensor<4x3x3x3xf32> -> tensor<1x4x27xf32>
// CHECK: %[[WS:.*]] = train.bn_apply %[[WV]], %[[ZERO]], %[[V]], %[[G]], %[[ZERO]] epsilon 1.000000e-03 : tensor<1x4x27xf32>, tensor<4xf32>
// CHECK: %[[W2:.*]] = train.reshape %[[WS]] : tensor<1x4x27xf32> -> tensor<4x3x3x3xf32>
// CHECK: %[[BV:.*]] = train.reshape %[[B]] : tensor<4xf32> -> tensor<1x4xf32>
// CHECK: %[[BS:.*]] = train.bn_apply %[[BV]], %[[M]], %[[V]], %[[G]], %[[BETA]] epsilon 1.000000e-03 : tensor<1x4xf32>, tensor<4xf32>
// CHECK: %[[B2:.*]] = train.reshape %[[BS]] : tensor<1x4xf32> -> tensor<4xf32>
// CHECK: %[[Y:.*]] = train.conv %[[X]], %[[W2]], %[[B2]] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1
// CHECK: train.relu %[[Y]]
// CHECK-NOT: train.bn_apply
module @conv_bias_bn {
  train.param @conv.weight trainable : tensor<4x3x3x3xf32>
  train.param @conv.bias trainable : tensor<4xf32>
  train.param @bn.weight trainable : tensor<4xf32>
  train.param @bn.bias trainable : tensor<4xf32>
  train.param @bn.running_mean running_mean : tensor<4xf32>
  train.param @bn.running_var running_var : tensor<4xf32>
  func.func @eval_step(%x: tensor<2x3x6x6xf32>) -> tensor<2x4x6x6xf32> {
    %w = train.read_param @conv.weight : tensor<4x3x3x3xf32>
    %b = train.read_param @conv.bias : tensor<4xf32>
    %c = train.conv %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
    %g = train.read_param @bn.weight : tensor<4xf32>
    %beta = train.read_param @bn.bias : tensor<4xf32>
    %m = train.read_param @bn.running_mean : tensor<4xf32>
    %v = train.read_param @bn.running_var : tensor<4xf32>
    %y = train.bn_apply %c, %m, %v, %g, %beta epsilon 1.0e-03 : tensor<2x4x6x6xf32>, tensor<4xf32>
    %r = train.relu %y : tensor<2x4x6x6xf32>
    return %r : tensor<2x4x6x6xf32>
  }
}

// -----

// Tests that a convolution without bias gets one: the BatchNorm of a zero
// bias, (0 - mean) * factor + beta.
// CHECK-LABEL: module @conv_no_bias_bn
// CHECK-DAG: %[[M:.*]] = train.read_param @bn.running_mean
// CHECK-DAG: %[[BETA:.*]] = train.read_param @bn.bias
// CHECK: %[[ZERO:.*]] = train.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[BV:.*]] = train.reshape %[[ZERO]] : tensor<4xf32> -> tensor<1x4xf32>
// CHECK: %[[BS:.*]] = train.bn_apply %[[BV]], %[[M]], %{{.*}}, %{{.*}}, %[[BETA]]
// CHECK: %[[B2:.*]] = train.reshape %[[BS]] : tensor<1x4xf32> -> tensor<4xf32>
// CHECK: %[[Y:.*]] = train.conv %{{.*}}, %{{.*}}, %[[B2]] strides [2, 2]
// CHECK: return %[[Y]]
module @conv_no_bias_bn {
  train.param @conv.weight trainable : tensor<4x3x3x3xf32>
  train.param @bn.weight trainable : tensor<4xf32>
  train.param @bn.bias trainable : tensor<4xf32>
  train.param @bn.running_mean running_mean : tensor<4xf32>
  train.param @bn.running_var running_var : tensor<4xf32>
  func.func @eval_step(%x: tensor<2x3x6x6xf32>) -> tensor<2x4x3x3xf32> {
    %w = train.read_param @conv.weight : tensor<4x3x3x3xf32>
    %c = train.conv %x, %w strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x3x3xf32>
    %g = train.read_param @bn.weight : tensor<4xf32>
    %beta = train.read_param @bn.bias : tensor<4xf32>
    %m = train.read_param @bn.running_mean : tensor<4xf32>
    %v = train.read_param @bn.running_var : tensor<4xf32>
    %y = train.bn_apply %c, %m, %v, %g, %beta epsilon 1.0e-05 : tensor<2x4x3x3xf32>, tensor<4xf32>
    return %y : tensor<2x4x3x3xf32>
  }
}

// -----

// Tests that a grouped (here depthwise) convolution folds too: output
// channel o reads only W[o], so the per-output-channel scaling is the same.
// CHECK-LABEL: module @grouped_conv_bn
// CHECK: train.reshape %{{.*}} : tensor<4x1x3x3xf32> -> tensor<1x4x9xf32>
// CHECK: %[[Y:.*]] = train.conv %{{.*}}, %{{.*}}, %{{.*}} strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 4
// CHECK: return %[[Y]]
module @grouped_conv_bn {
  train.param @conv.weight trainable : tensor<4x1x3x3xf32>
  train.param @bn.weight trainable : tensor<4xf32>
  train.param @bn.bias trainable : tensor<4xf32>
  train.param @bn.running_mean running_mean : tensor<4xf32>
  train.param @bn.running_var running_var : tensor<4xf32>
  func.func @eval_step(%x: tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32> {
    %w = train.read_param @conv.weight : tensor<4x1x3x3xf32>
    %c = train.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 4 : (tensor<2x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x6x6xf32>
    %g = train.read_param @bn.weight : tensor<4xf32>
    %beta = train.read_param @bn.bias : tensor<4xf32>
    %m = train.read_param @bn.running_mean : tensor<4xf32>
    %v = train.read_param @bn.running_var : tensor<4xf32>
    %y = train.bn_apply %c, %m, %v, %g, %beta epsilon 1.0e-05 : tensor<2x4x6x6xf32>, tensor<4xf32>
    return %y : tensor<2x4x6x6xf32>
  }
}

// -----

// Tests that a convolution whose result has another user keeps its
// BatchNorm: folding would change what the other user reads.
// CHECK-LABEL: module @conv_two_users
// CHECK: %[[C:.*]] = train.conv
// CHECK: %[[Y:.*]] = train.bn_apply %[[C]]
// CHECK: train.add %[[Y]], %[[C]]
module @conv_two_users {
  train.param @conv.weight trainable : tensor<4x3x3x3xf32>
  train.param @bn.weight trainable : tensor<4xf32>
  train.param @bn.bias trainable : tensor<4xf32>
  train.param @bn.running_mean running_mean : tensor<4xf32>
  train.param @bn.running_var running_var : tensor<4xf32>
  func.func @eval_step(%x: tensor<2x3x6x6xf32>) -> tensor<2x4x6x6xf32> {
    %w = train.read_param @conv.weight : tensor<4x3x3x3xf32>
    %c = train.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
    %g = train.read_param @bn.weight : tensor<4xf32>
    %beta = train.read_param @bn.bias : tensor<4xf32>
    %m = train.read_param @bn.running_mean : tensor<4xf32>
    %v = train.read_param @bn.running_var : tensor<4xf32>
    %y = train.bn_apply %c, %m, %v, %g, %beta epsilon 1.0e-05 : tensor<2x4x6x6xf32>, tensor<4xf32>
    %s = train.add %y, %c : (tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
    return %s : tensor<2x4x6x6xf32>
  }
}

// -----

// Tests that a BatchNorm of something other than a convolution (here a
// BatchNorm1d after a dense layer) stays.
// CHECK-LABEL: module @gemm_bn
// CHECK: %[[F:.*]] = train.gemm
// CHECK: train.bn_apply %[[F]]
// CHECK-NOT: train.conv
module @gemm_bn {
  train.param @fc.weight trainable : tensor<4x5xf32>
  train.param @bn.weight trainable : tensor<4xf32>
  train.param @bn.bias trainable : tensor<4xf32>
  train.param @bn.running_mean running_mean : tensor<4xf32>
  train.param @bn.running_var running_var : tensor<4xf32>
  func.func @eval_step(%x: tensor<2x5xf32>) -> tensor<2x4xf32> {
    %w = train.read_param @fc.weight : tensor<4x5xf32>
    %f = train.gemm %x, %w {trans_b = true} : (tensor<2x5xf32>, tensor<4x5xf32>) -> tensor<2x4xf32>
    %g = train.read_param @bn.weight : tensor<4xf32>
    %beta = train.read_param @bn.bias : tensor<4xf32>
    %m = train.read_param @bn.running_mean : tensor<4xf32>
    %v = train.read_param @bn.running_var : tensor<4xf32>
    %y = train.bn_apply %f, %m, %v, %g, %beta epsilon 1.0e-05 : tensor<2x4xf32>, tensor<4xf32>
    return %y : tensor<2x4xf32>
  }
}

// -----

// Tests that training is untouched: a convolution's BatchNorm in
// @micro_step normalises with batch statistics and stays, while the one in
// @eval_step folds.
// CHECK-LABEL: module @training_untouched
// CHECK: func.func @micro_step
// CHECK: %[[C:.*]] = train.conv
// CHECK: %[[MEAN:.*]], %[[VAR:.*]] = train.bn_stats %[[C]]
// CHECK: train.bn_apply %[[C]], %[[MEAN]], %[[VAR]]
// CHECK: func.func @eval_step
// CHECK: %[[Y:.*]] = train.conv
// CHECK-NEXT: return %[[Y]]
module @training_untouched {
  train.param @conv.weight trainable : tensor<4x3x3x3xf32>
  train.param @bn.weight trainable : tensor<4xf32>
  train.param @bn.bias trainable : tensor<4xf32>
  train.param @bn.running_mean running_mean : tensor<4xf32>
  train.param @bn.running_var running_var : tensor<4xf32>
  func.func @micro_step(%x: tensor<2x3x6x6xf32>) -> tensor<2x4x6x6xf32> {
    %w = train.read_param @conv.weight : tensor<4x3x3x3xf32>
    %c = train.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
    %g = train.read_param @bn.weight : tensor<4xf32>
    %beta = train.read_param @bn.bias : tensor<4xf32>
    %mean, %var = train.bn_stats %c : (tensor<2x4x6x6xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    %y = train.bn_apply %c, %mean, %var, %g, %beta epsilon 1.0e-05 : tensor<2x4x6x6xf32>, tensor<4xf32>
    return %y : tensor<2x4x6x6xf32>
  }
  func.func @eval_step(%x: tensor<2x3x6x6xf32>) -> tensor<2x4x6x6xf32> {
    %w = train.read_param @conv.weight : tensor<4x3x3x3xf32>
    %c = train.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
    %g = train.read_param @bn.weight : tensor<4xf32>
    %beta = train.read_param @bn.bias : tensor<4xf32>
    %m = train.read_param @bn.running_mean : tensor<4xf32>
    %v = train.read_param @bn.running_var : tensor<4xf32>
    %y = train.bn_apply %c, %m, %v, %g, %beta epsilon 1.0e-05 : tensor<2x4x6x6xf32>, tensor<4xf32>
    return %y : tensor<2x4x6x6xf32>
  }
}
