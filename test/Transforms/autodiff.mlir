// RUN: traincc-opt %s -split-input-file -verify-diagnostics -traincc-autodiff | FileCheck %s

// Tests that @loss becomes @micro_step with grad_scale placed before the
// seed, that a convolution with bias gets filter and bias gradients
// accumulated with that scale into new gradient buffers, and that the first
// layer computes no input gradient.
// CHECK-LABEL: module @conv_first_layer
// CHECK: train.param @w trainable
// CHECK-NEXT: train.param @w.grad gradient : tensor<4x1x3x3xf32>
// CHECK: train.param @b trainable
// CHECK-NEXT: train.param @b.grad gradient : tensor<4xf32>
// CHECK-NOT: func.func @loss
// CHECK: func.func @micro_step(%[[X:.*]]: tensor<2x1x5x5xf32>, %[[T:.*]]: tensor<2x4x5x5xf32>, %[[GS:.*]]: f32 {train.name = "grad_scale"}, %{{.*}}: i64 {train.name = "seed"}) -> (tensor<f32> {train.name = "loss"})
// CHECK: %[[W:.*]] = train.read_param @w
// CHECK: %[[Y:.*]] = train.conv %[[X]], %[[W]]
// CHECK: %[[L:.*]] = train.mse %[[Y]], %[[T]] reduction mean
// CHECK: %[[ONE:.*]] = train.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DY:.*]] = train.mse_backward %[[ONE]], %[[Y]], %[[T]]
// CHECK-NOT: train.conv_backward_data
// CHECK: %[[DW:.*]] = train.conv_backward_filter %[[X]], %[[DY]] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x1x5x5xf32>, tensor<2x4x5x5xf32>) -> tensor<4x1x3x3xf32>
// CHECK: %[[DB:.*]] = train.reduce_sum %[[DY]] axes [0, 2, 3] : (tensor<2x4x5x5xf32>) -> tensor<4xf32>
// CHECK: train.accumulate @w.grad, %[[DW]] scale %[[GS]] : tensor<4x1x3x3xf32>
// CHECK: train.accumulate @b.grad, %[[DB]] scale %[[GS]] : tensor<4xf32>
// CHECK: return %[[L]] : tensor<f32>
module @conv_first_layer {
  train.param @w trainable : tensor<4x1x3x3xf32>
  train.param @b trainable : tensor<4xf32>
  func.func @loss(%x: tensor<2x1x5x5xf32>, %t: tensor<2x4x5x5xf32>, %seed: i64 {train.name = "seed"}) -> tensor<f32> {
    %w = train.read_param @w : tensor<4x1x3x3xf32>
    %b = train.read_param @b : tensor<4xf32>
    %y = train.conv %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x1x5x5xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
    %l = train.mse %y, %t reduction mean : (tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a second convolution without bias passes the gradient on to
// its input (conv_backward_data with its attributes) and gets no bias
// gradient, and that grad_scale comes last when there is no seed.
// CHECK-LABEL: module @conv_no_bias
// CHECK: func.func @micro_step(%[[X:.*]]: tensor<1x2x6x6xf32>, %[[T:.*]]: tensor<1x4x3x3xf32>, %[[GS:.*]]: f32 {train.name = "grad_scale"}) -> (tensor<f32> {train.name = "loss"})
// CHECK: %[[W1:.*]] = train.read_param @w1
// CHECK: %[[H:.*]] = train.conv %[[X]], %[[W1]]
// CHECK: %[[W2:.*]] = train.read_param @w2
// CHECK: %[[Y:.*]] = train.conv %[[H]], %[[W2]]
// CHECK: %[[DY:.*]] = train.mse_backward
// CHECK: %[[DH:.*]] = train.conv_backward_data %[[DY]], %[[W2]] strides [2, 2] pads [0, 0, 1, 1] dilations [1, 1] groups 2 : (tensor<1x4x3x3xf32>, tensor<4x1x2x2xf32>) -> tensor<1x2x6x6xf32>
// CHECK: %[[DW2:.*]] = train.conv_backward_filter %[[H]], %[[DY]] strides [2, 2] pads [0, 0, 1, 1] dilations [1, 1] groups 2
// CHECK-NOT: train.reduce_sum
// CHECK-NOT: train.conv_backward_data
// CHECK: %[[DW1:.*]] = train.conv_backward_filter %[[X]], %[[DH]]
// CHECK: train.accumulate @w1.grad, %[[DW1]] scale %[[GS]]
// CHECK: train.accumulate @w2.grad, %[[DW2]] scale %[[GS]]
module @conv_no_bias {
  train.param @w1 trainable : tensor<2x2x1x1xf32>
  train.param @w2 trainable : tensor<4x1x2x2xf32>
  func.func @loss(%x: tensor<1x2x6x6xf32>, %t: tensor<1x4x3x3xf32>) -> tensor<f32> {
    %w1 = train.read_param @w1 : tensor<2x2x1x1xf32>
    %h = train.conv %x, %w1 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x2x6x6xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x6x6xf32>
    %w2 = train.read_param @w2 : tensor<4x1x2x2xf32>
    %y = train.conv %h, %w2 strides [2, 2] pads [0, 0, 1, 1] dilations [1, 1] groups 2 : (tensor<1x2x6x6xf32>, tensor<4x1x2x2xf32>) -> tensor<1x4x3x3xf32>
    %l = train.mse %y, %t reduction mean : (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a training-mode bn_apply (its statistics are bn_stats of its
// own input) differentiates through batch_norm_backward, which gives the
// input, scale and bias gradients; the running-statistics update is left
// as it is.
// CHECK-LABEL: module @batch_norm
// CHECK: %[[W:.*]] = train.read_param @w
// CHECK: %[[H:.*]] = train.mul %{{.*}}, %[[W]]
// CHECK: %[[G:.*]] = train.read_param @bn.weight
// CHECK: %[[MEAN:.*]], %[[VAR:.*]] = train.bn_stats %[[H]]
// CHECK: %[[Y:.*]] = train.bn_apply %[[H]], %[[MEAN]], %[[VAR]], %[[G]]
// CHECK: train.bn_running_update @bn.running_mean, @bn.running_var, %[[MEAN]], %[[VAR]]
// CHECK: %[[DY:.*]] = train.mse_backward
// CHECK: %[[DX:.*]], %[[DG:.*]], %[[DB:.*]] = train.batch_norm_backward %[[DY]], %[[H]], %[[MEAN]], %[[VAR]], %[[G]] epsilon 9.99999974E-6 : tensor<4x3xf32>, tensor<3xf32>
// CHECK: %[[DW0:.*]] = train.mul %[[DX]], %{{.*}}
// CHECK: %[[DW:.*]] = train.sum_to %[[DW0]] : tensor<4x3xf32> -> tensor<3xf32>
// CHECK: train.accumulate @w.grad, %[[DW]]
// CHECK: train.accumulate @bn.weight.grad, %[[DG]]
// CHECK: train.accumulate @bn.bias.grad, %[[DB]]
// CHECK-NOT: train.accumulate
module @batch_norm {
  train.param @w trainable : tensor<3xf32>
  train.param @bn.weight trainable : tensor<3xf32>
  train.param @bn.bias trainable : tensor<3xf32>
  train.param @bn.running_mean running_mean : tensor<3xf32>
  train.param @bn.running_var running_var : tensor<3xf32>
  func.func @loss(%x: tensor<4x3xf32>, %t: tensor<4x3xf32>) -> tensor<f32> {
    %w = train.read_param @w : tensor<3xf32>
    %h = train.mul %x, %w : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %g = train.read_param @bn.weight : tensor<3xf32>
    %b = train.read_param @bn.bias : tensor<3xf32>
    %mean, %var = train.bn_stats %h : (tensor<4x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
    %y = train.bn_apply %h, %mean, %var, %g, %b epsilon 1.0e-05 : tensor<4x3xf32>, tensor<3xf32>
    train.bn_running_update @bn.running_mean, @bn.running_var, %mean, %var momentum 1.0e-01 count 4 : tensor<3xf32>
    %l = train.mse %y, %t reduction mean : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests the gemm rule for trans_b (a Linear layer): the weight gradient is
// dy^T x, the bias gradient sums dy over the batch, the data input gets
// nothing.
// CHECK-LABEL: module @gemm_linear
// CHECK: %[[Y:.*]] = train.gemm %[[X:.*]], %[[W:.*]], %{{.*}} {trans_b = true}
// CHECK: %[[DY:.*]] = train.mse_backward
// CHECK-NOT: train.gemm %[[DY]], %[[W]]
// CHECK: %[[DW:.*]] = train.gemm %[[DY]], %[[X]] {trans_a = true} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
// CHECK: %[[DB:.*]] = train.sum_to %[[DY]] : tensor<2x3xf32> -> tensor<3xf32>
// CHECK: train.accumulate @w.grad, %[[DW]]
// CHECK: train.accumulate @b.grad, %[[DB]]
module @gemm_linear {
  train.param @w trainable : tensor<3x4xf32>
  train.param @b trainable : tensor<3xf32>
  func.func @loss(%x: tensor<2x4xf32>, %t: tensor<2x3xf32>) -> tensor<f32> {
    %w = train.read_param @w : tensor<3x4xf32>
    %b = train.read_param @b : tensor<3xf32>
    %y = train.gemm %x, %w, %b {trans_b = true} : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %l = train.mse %y, %t reduction mean : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests the gemm rule without transposes: dA = dy B^T, dB = A^T dy.
// CHECK-LABEL: module @gemm_plain
// CHECK: %[[A:.*]] = train.read_param @a
// CHECK: %[[B:.*]] = train.read_param @b
// CHECK: %[[DY:.*]] = train.mse_backward
// CHECK: %[[DA:.*]] = train.gemm %[[DY]], %[[B]] {trans_b = true} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
// CHECK: %[[DB:.*]] = train.gemm %[[A]], %[[DY]] {trans_a = true} : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK: train.accumulate @a.grad, %[[DA]]
// CHECK: train.accumulate @b.grad, %[[DB]]
module @gemm_plain {
  train.param @a trainable : tensor<2x4xf32>
  train.param @b trainable : tensor<4x3xf32>
  func.func @loss(%t: tensor<2x3xf32>) -> tensor<f32> {
    %a = train.read_param @a : tensor<2x4xf32>
    %b = train.read_param @b : tensor<4x3xf32>
    %y = train.gemm %a, %b : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
    %l = train.mse %y, %t reduction mean : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests the gemm rule with both operands transposed and alpha: dA = alpha
// B^T dy^T and dB = alpha dy^T A^T, each a transposed gemm keeping alpha;
// beta scales the gradient of C before it is summed to C's shape.
// CHECK-LABEL: module @gemm_transposed
// CHECK: %[[A:.*]] = train.read_param @a
// CHECK: %[[B:.*]] = train.read_param @b
// CHECK: %[[DY:.*]] = train.mse_backward
// CHECK: %[[DA:.*]] = train.gemm %[[B]], %[[DY]] {alpha = 5.000000e-01 : f32, trans_a = true, trans_b = true} : (tensor<3x4xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
// CHECK: %[[DB:.*]] = train.gemm %[[DY]], %[[A]] {alpha = 5.000000e-01 : f32, trans_a = true, trans_b = true} : (tensor<2x3xf32>, tensor<4x2xf32>) -> tensor<3x4xf32>
// CHECK: %[[BETA:.*]] = train.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[DC0:.*]] = train.mul %[[DY]], %[[BETA]]
// CHECK: %[[DC:.*]] = train.sum_to %[[DC0]] : tensor<2x3xf32> -> tensor<1x3xf32>
// CHECK: train.accumulate @a.grad, %[[DA]]
// CHECK: train.accumulate @b.grad, %[[DB]]
// CHECK: train.accumulate @c.grad, %[[DC]]
module @gemm_transposed {
  train.param @a trainable : tensor<4x2xf32>
  train.param @b trainable : tensor<3x4xf32>
  train.param @c trainable : tensor<1x3xf32>
  func.func @loss(%t: tensor<2x3xf32>) -> tensor<f32> {
    %a = train.read_param @a : tensor<4x2xf32>
    %b = train.read_param @b : tensor<3x4xf32>
    %c = train.read_param @c : tensor<1x3xf32>
    %y = train.gemm %a, %b, %c {trans_a = true, trans_b = true, alpha = 5.0e-01 : f32, beta = 2.0 : f32} : (tensor<4x2xf32>, tensor<3x4xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
    %l = train.mse %y, %t reduction mean : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests the gemm rule with only A transposed: dA = B dy^T, dB = A dy.
// CHECK-LABEL: module @gemm_trans_a
// CHECK: %[[A:.*]] = train.read_param @a
// CHECK: %[[B:.*]] = train.read_param @b
// CHECK: %[[DY:.*]] = train.mse_backward
// CHECK: %[[DA:.*]] = train.gemm %[[B]], %[[DY]] {trans_b = true} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
// CHECK: %[[DB:.*]] = train.gemm %[[A]], %[[DY]] : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
module @gemm_trans_a {
  train.param @a trainable : tensor<4x2xf32>
  train.param @b trainable : tensor<4x3xf32>
  func.func @loss(%t: tensor<2x3xf32>) -> tensor<f32> {
    %a = train.read_param @a : tensor<4x2xf32>
    %b = train.read_param @b : tensor<4x3xf32>
    %y = train.gemm %a, %b {trans_a = true} : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
    %l = train.mse %y, %t reduction mean : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests the matmul rule with a batched operand: each gradient is a matmul
// with the other operand's last two axes swapped, summed over the
// broadcast batch axis where the operand has none.
// CHECK-LABEL: module @matmul
// CHECK: %[[A:.*]] = train.read_param @a : tensor<3x4xf32>
// CHECK: %[[B:.*]] = train.read_param @b : tensor<2x4x5xf32>
// CHECK: %[[DY:.*]] = train.mse_backward
// CHECK: %[[BT:.*]] = train.transpose %[[B]] perm [0, 2, 1]
// CHECK: %[[DA0:.*]] = train.matmul %[[DY]], %[[BT]] : (tensor<2x3x5xf32>, tensor<2x5x4xf32>) -> tensor<2x3x4xf32>
// CHECK: %[[DA:.*]] = train.sum_to %[[DA0]] : tensor<2x3x4xf32> -> tensor<3x4xf32>
// CHECK: %[[AT:.*]] = train.transpose %[[A]] perm [1, 0]
// CHECK: %[[DB:.*]] = train.matmul %[[AT]], %[[DY]] : (tensor<4x3xf32>, tensor<2x3x5xf32>) -> tensor<2x4x5xf32>
// CHECK-NOT: train.sum_to
// CHECK: train.accumulate @a.grad, %[[DA]]
// CHECK: train.accumulate @b.grad, %[[DB]]
module @matmul {
  train.param @a trainable : tensor<3x4xf32>
  train.param @b trainable : tensor<2x4x5xf32>
  func.func @loss(%t: tensor<2x3x5xf32>) -> tensor<f32> {
    %a = train.read_param @a : tensor<3x4xf32>
    %b = train.read_param @b : tensor<2x4x5xf32>
    %y = train.matmul %a, %b : (tensor<3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
    %l = train.mse %y, %t reduction mean : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a broadcast add sends dy unchanged to the full-shape operand
// and sums it over the broadcast axes for the smaller one.
// CHECK-LABEL: module @add_broadcast
// CHECK: %[[DY:.*]] = train.mse_backward
// CHECK: %[[DB:.*]] = train.sum_to %[[DY]] : tensor<2x3xf32> -> tensor<3xf32>
// CHECK: train.accumulate @a.grad, %[[DY]]
// CHECK: train.accumulate @b.grad, %[[DB]]
module @add_broadcast {
  train.param @a trainable : tensor<2x3xf32>
  train.param @b trainable : tensor<3xf32>
  func.func @loss(%t: tensor<2x3xf32>) -> tensor<f32> {
    %a = train.read_param @a : tensor<2x3xf32>
    %b = train.read_param @b : tensor<3xf32>
    %y = train.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %l = train.mse %y, %t reduction mean : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that sub negates the gradient of its right operand, and that an
// inactive left operand (data) gets nothing.
// CHECK-LABEL: module @sub_broadcast
// CHECK: %[[DY:.*]] = train.mse_backward
// CHECK: %[[NEG:.*]] = train.constant dense<-1.000000e+00> : tensor<f32>
// CHECK: %[[DB0:.*]] = train.mul %[[DY]], %[[NEG]]
// CHECK: %[[DB:.*]] = train.sum_to %[[DB0]] : tensor<2x3xf32> -> tensor<2x1xf32>
// CHECK: train.accumulate @b.grad, %[[DB]]
// CHECK-NOT: train.accumulate
module @sub_broadcast {
  train.param @b trainable : tensor<2x1xf32>
  func.func @loss(%x: tensor<2x3xf32>, %t: tensor<2x3xf32>) -> tensor<f32> {
    %b = train.read_param @b : tensor<2x1xf32>
    %y = train.sub %x, %b : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
    %l = train.mse %y, %t reduction mean : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that select sends dy to the picked operand and zero to the other
// (the same condition, two selects), summed over broadcast axes, and that
// the condition, a comparison of active values, gets nothing.
// CHECK-LABEL: module @select_broadcast
// CHECK: %[[C:.*]] = train.compare gt
// CHECK: %[[DY:.*]] = train.mse_backward
// CHECK: %[[ZERO:.*]] = train.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[DA:.*]] = train.select %[[C]], %[[DY]], %[[ZERO]] : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: %[[DB0:.*]] = train.select %[[C]], %[[ZERO]], %[[DY]]
// CHECK: %[[DB:.*]] = train.sum_to %[[DB0]] : tensor<2x3xf32> -> tensor<3xf32>
// CHECK-NOT: train.compare
// CHECK: train.accumulate @a.grad, %[[DA]]
// CHECK: train.accumulate @b.grad, %[[DB]]
module @select_broadcast {
  train.param @a trainable : tensor<2x3xf32>
  train.param @b trainable : tensor<3xf32>
  func.func @loss(%t: tensor<2x3xf32>) -> tensor<f32> {
    %a = train.read_param @a : tensor<2x3xf32>
    %b = train.read_param @b : tensor<3xf32>
    %c = train.compare gt %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    %y = train.select %c, %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %l = train.mse %y, %t reduction mean : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that mul multiplies dy by the other operand, summing to the
// parameter's broadcast shape; the data operand gets no gradient.
// CHECK-LABEL: module @mul_broadcast
// CHECK: %[[S:.*]] = train.read_param @s
// CHECK: %[[DY:.*]] = train.mse_backward
// CHECK-NOT: train.mul %[[DY]], %[[S]]
// CHECK: %[[DS0:.*]] = train.mul %[[DY]], %[[X:.*]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[DS:.*]] = train.sum_to %[[DS0]] : tensor<2x3xf32> -> tensor<f32>
// CHECK: train.accumulate @s.grad, %[[DS]] scale %{{.*}} : tensor<f32>
module @mul_broadcast {
  train.param @s trainable : tensor<f32>
  func.func @loss(%x: tensor<2x3xf32>, %t: tensor<2x3xf32>) -> tensor<f32> {
    %s = train.read_param @s : tensor<f32>
    %y = train.mul %x, %s : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    %l = train.mse %y, %t reduction mean : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests the div rule: d(a/b)/da = dy / b and d(a/b)/db = -dy * y / b,
// each summed to its operand's shape.
// CHECK-LABEL: module @div_broadcast
// CHECK: %[[A:.*]] = train.read_param @a
// CHECK: %[[B:.*]] = train.read_param @b
// CHECK: %[[Y:.*]] = train.div %[[A]], %[[B]]
// CHECK: %[[DY:.*]] = train.mse_backward
// CHECK: %[[DA:.*]] = train.div %[[DY]], %[[B]]
// CHECK: %[[P:.*]] = train.mul %[[DY]], %[[Y]]
// CHECK: %[[Q:.*]] = train.div %[[P]], %[[B]]
// CHECK: %[[NEG:.*]] = train.constant dense<-1.000000e+00>
// CHECK: %[[DB0:.*]] = train.mul %[[Q]], %[[NEG]]
// CHECK: %[[DB:.*]] = train.sum_to %[[DB0]] : tensor<2x3xf32> -> tensor<3xf32>
// CHECK: train.accumulate @a.grad, %[[DA]]
// CHECK: train.accumulate @b.grad, %[[DB]]
module @div_broadcast {
  train.param @a trainable : tensor<2x3xf32>
  train.param @b trainable : tensor<3xf32>
  func.func @loss(%t: tensor<2x3xf32>) -> tensor<f32> {
    %a = train.read_param @a : tensor<2x3xf32>
    %b = train.read_param @b : tensor<3xf32>
    %y = train.div %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %l = train.mse %y, %t reduction mean : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests the activation rules, in reverse order: leaky_relu and clip take
// their input, relu its output (the same mask); sigmoid and tanh their output; softmax and log_softmax
// their output and axis.
// CHECK-LABEL: module @activations
// CHECK: %[[W:.*]] = train.read_param @w
// CHECK: %[[R:.*]] = train.relu %[[W]]
// CHECK: %[[LR:.*]] = train.leaky_relu %[[R]]
// CHECK: %[[C:.*]] = train.clip %[[LR]]
// CHECK: %[[S:.*]] = train.sigmoid %[[C]]
// CHECK: %[[T:.*]] = train.tanh %[[S]]
// CHECK: %[[SM:.*]] = train.softmax %[[T]]
// CHECK: %[[LS:.*]] = train.log_softmax %[[SM]]
// CHECK: %[[D0:.*]] = train.mse_backward %{{.*}}, %[[LS]]
// CHECK: %[[D1:.*]] = train.log_softmax_backward %[[D0]], %[[LS]] axis 1
// CHECK: %[[D2:.*]] = train.softmax_backward %[[D1]], %[[SM]] axis 0
// CHECK: %[[D3:.*]] = train.tanh_backward %[[D2]], %[[T]]
// CHECK: %[[D4:.*]] = train.sigmoid_backward %[[D3]], %[[S]]
// CHECK: %[[D5:.*]] = train.clip_backward %[[D4]], %[[LR]] min 0.000000e+00 max 6.000000e+00
// CHECK: %[[D6:.*]] = train.leaky_relu_backward %[[D5]], %[[R]] alpha 0.00999999977
// CHECK: %[[D7:.*]] = train.relu_backward %[[D6]], %[[R]]
// CHECK: train.accumulate @w.grad, %[[D7]]
module @activations {
  train.param @w trainable : tensor<2x3xf32>
  func.func @loss(%t: tensor<2x3xf32>) -> tensor<f32> {
    %w = train.read_param @w : tensor<2x3xf32>
    %r = train.relu %w : tensor<2x3xf32>
    %lr = train.leaky_relu %r alpha 1.0e-02 : tensor<2x3xf32>
    %c = train.clip %lr min 0.0 max 6.0 : tensor<2x3xf32>
    %s = train.sigmoid %c : tensor<2x3xf32>
    %th = train.tanh %s : tensor<2x3xf32>
    %sm = train.softmax %th axis 0 : tensor<2x3xf32>
    %ls = train.log_softmax %sm axis 1 : tensor<2x3xf32>
    %l = train.mse %ls, %t reduction mean : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests the exp rule (the gradient times the result) and the log rule (the
// gradient divided by the input).
// CHECK-LABEL: module @exp_log
// CHECK: %[[W:.*]] = train.read_param @w
// CHECK: %[[E:.*]] = train.exp %[[W]]
// CHECK: %[[L:.*]] = train.log %[[E]]
// CHECK: %[[D0:.*]] = train.mse_backward %{{.*}}, %[[L]]
// CHECK: %[[D1:.*]] = train.div %[[D0]], %[[E]]
// CHECK: %[[D2:.*]] = train.mul %[[D1]], %[[E]]
// CHECK: train.accumulate @w.grad, %[[D2]]
module @exp_log {
  train.param @w trainable : tensor<2x3xf32>
  func.func @loss(%t: tensor<2x3xf32>) -> tensor<f32> {
    %w = train.read_param @w : tensor<2x3xf32>
    %e = train.exp %w : tensor<2x3xf32>
    %l = train.log %e : tensor<2x3xf32>
    %m = train.mse %l, %t reduction mean : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<f32>
    return %m : tensor<f32>
  }
}

// -----

// Tests the conv_backward_data rule (ONNX ConvTranspose): a convolution of
// the result's gradient for the input, a filter gradient for the weight,
// both with the op's attributes.
// CHECK-LABEL: module @conv_transpose
// CHECK: %[[X:.*]] = train.read_param @x
// CHECK: %[[W:.*]] = train.read_param @w
// CHECK: %[[D0:.*]] = train.mse_backward
// CHECK-DAG: train.conv %[[D0]], %[[W]] strides [2, 2] pads [1, 1, 0, 0] dilations [1, 1] groups 1 : (tensor<1x2x6x6xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
// CHECK-DAG: train.conv_backward_filter %[[D0]], %[[X]] strides [2, 2] pads [1, 1, 0, 0] dilations [1, 1] groups 1 : (tensor<1x2x6x6xf32>, tensor<1x3x3x3xf32>) -> tensor<3x2x3x3xf32>
module @conv_transpose {
  train.param @x trainable : tensor<1x3x3x3xf32>
  train.param @w trainable : tensor<3x2x3x3xf32>
  func.func @loss(%t: tensor<1x2x6x6xf32>) -> tensor<f32> {
    %x = train.read_param @x : tensor<1x3x3x3xf32>
    %w = train.read_param @w : tensor<3x2x3x3xf32>
    %y = train.conv_backward_data %x, %w strides [2, 2] pads [1, 1, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x3x3xf32>, tensor<3x2x3x3xf32>) -> tensor<1x2x6x6xf32>
    %m = train.mse %y, %t reduction mean : (tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>) -> tensor<f32>
    return %m : tensor<f32>
  }
}

// -----

// Tests the pooling rules: max_pool_backward reads the pool's input,
// avg_pool_backward only its attributes, and global average pooling spreads
// dy over the spatial positions scaled by 1 / (H * W).
// CHECK-LABEL: module @pools
// CHECK: %[[W:.*]] = train.read_param @w
// CHECK: %[[M:.*]] = train.max_pool %[[W]]
// CHECK: %[[A:.*]] = train.avg_pool %[[M]]
// CHECK: %[[G:.*]] = train.global_avg_pool %[[A]]
// CHECK: %[[DG:.*]] = train.mse_backward
// CHECK: %[[SPREAD:.*]] = train.broadcast_to %[[DG]] : tensor<1x2x1x1xf32> -> tensor<1x2x3x3xf32>
// CHECK: %[[NINTH:.*]] = train.constant dense<0.111111112> : tensor<f32>
// CHECK: %[[DA:.*]] = train.mul %[[SPREAD]], %[[NINTH]]
// CHECK: %[[DM:.*]] = train.avg_pool_backward %[[DA]] kernel [2, 2] strides [1, 1] pads [0, 0, 0, 0] {count_include_pad = true} : (tensor<1x2x3x3xf32>) -> tensor<1x2x4x4xf32>
// CHECK: %[[DW:.*]] = train.max_pool_backward %[[DM]], %[[W]] kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : (tensor<1x2x4x4xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
// CHECK: train.accumulate @w.grad, %[[DW]]
module @pools {
  train.param @w trainable : tensor<1x2x8x8xf32>
  func.func @loss(%t: tensor<1x2x1x1xf32>) -> tensor<f32> {
    %w = train.read_param @w : tensor<1x2x8x8xf32>
    %m = train.max_pool %w kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : (tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32>
    %a = train.avg_pool %m kernel [2, 2] strides [1, 1] pads [0, 0, 0, 0] {count_include_pad = true} : (tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xf32>
    %g = train.global_avg_pool %a : (tensor<1x2x3x3xf32>) -> tensor<1x2x1x1xf32>
    %l = train.mse %g, %t reduction mean : (tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests the data-movement rules: a slice goes back through slice_backward,
// a concat hands each active input its slice of dy (none to the data
// input), a transpose transposes back with the inverse permutation, and
// reshape, flatten and identity reshape dy to their input.
// CHECK-LABEL: module @data_movement
// CHECK: %[[W:.*]] = train.read_param @w : tensor<2x3x4xf32>
// CHECK: %[[TR:.*]] = train.transpose %[[W]] perm [1, 2, 0] : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
// CHECK: %[[FL:.*]] = train.flatten %[[TR]]
// CHECK: %[[ID:.*]] = train.identity %[[FL]]
// CHECK: %[[RS:.*]] = train.reshape %[[ID]]
// CHECK: %[[BACK:.*]] = train.reshape %[[RS]]
// CHECK: %[[CC:.*]] = train.concat %[[X:.*]], %[[BACK]] axis 0
// CHECK: %[[SL:.*]] = train.slice %[[CC]]
// CHECK: %[[D0:.*]] = train.mse_backward
// CHECK: %[[D1:.*]] = train.slice_backward %[[D0]] starts [1, 0] ends [4, 8] steps [2, 1] : (tensor<2x8xf32>) -> tensor<4x8xf32>
// CHECK-NOT: train.slice %[[D1]] starts [0, 0]
// CHECK: %[[D2:.*]] = train.slice %[[D1]] starts [1, 0] ends [4, 8] steps [1, 1] : (tensor<4x8xf32>) -> tensor<3x8xf32>
// CHECK: %[[D3:.*]] = train.reshape %[[D2]] : tensor<3x8xf32> -> tensor<24xf32>
// CHECK: %[[D4:.*]] = train.reshape %[[D3]] : tensor<24xf32> -> tensor<3x8xf32>
// CHECK: %[[D5:.*]] = train.reshape %[[D4]] : tensor<3x8xf32> -> tensor<3x4x2xf32>
// CHECK: %[[D6:.*]] = train.transpose %[[D5]] perm [2, 0, 1] : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
// CHECK: train.accumulate @w.grad, %[[D6]]
module @data_movement {
  train.param @w trainable : tensor<2x3x4xf32>
  func.func @loss(%x: tensor<1x8xf32>, %t: tensor<2x8xf32>) -> tensor<f32> {
    %w = train.read_param @w : tensor<2x3x4xf32>
    %tr = train.transpose %w perm [1, 2, 0] : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
    %fl = train.flatten %tr axis 1 : (tensor<3x4x2xf32>) -> tensor<3x8xf32>
    %id = train.identity %fl : tensor<3x8xf32>
    %rs = train.reshape %id : tensor<3x8xf32> -> tensor<24xf32>
    %back = train.reshape %rs : tensor<24xf32> -> tensor<3x8xf32>
    %cc = train.concat %x, %back axis 0 : (tensor<1x8xf32>, tensor<3x8xf32>) -> tensor<4x8xf32>
    %sl = train.slice %cc starts [1, 0] ends [4, 8] steps [2, 1] : (tensor<4x8xf32>) -> tensor<2x8xf32>
    %l = train.mse %sl, %t reduction mean : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests the cross-entropy rule: softmax_cross_entropy_backward of the
// logits with the labels.
// CHECK-LABEL: module @cross_entropy
// CHECK: %[[W:.*]] = train.read_param @w
// CHECK: %[[Y:.*]] = train.add %[[X:.*]], %[[W]]
// CHECK: %[[ONE:.*]] = train.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DY:.*]] = train.softmax_cross_entropy_backward %[[ONE]], %[[Y]], %[[T:.*]] : (tensor<f32>, tensor<2x5xf32>, tensor<2xi64>) -> tensor<2x5xf32>
// CHECK: %[[DW:.*]] = train.sum_to %[[DY]] : tensor<2x5xf32> -> tensor<5xf32>
// CHECK: train.accumulate @w.grad, %[[DW]]
module @cross_entropy {
  train.param @w trainable : tensor<5xf32>
  func.func @loss(%x: tensor<2x5xf32>, %t: tensor<2xi64>) -> tensor<f32> {
    %w = train.read_param @w : tensor<5xf32>
    %y = train.add %x, %w : (tensor<2x5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
    %l = train.softmax_cross_entropy %y, %t reduction mean : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that mse differentiates its target too when the target depends on
// a parameter: the negated prediction gradient.
// CHECK-LABEL: module @mse_both
// CHECK: %[[P:.*]] = train.read_param @p
// CHECK: %[[Q:.*]] = train.read_param @q
// CHECK: %[[DP:.*]] = train.mse_backward %{{.*}}, %[[P]], %[[Q]]
// CHECK-DAG: %[[DQ0:.*]] = train.mse_backward %{{.*}}, %[[P]], %[[Q]]
// CHECK-DAG: %[[NEG:.*]] = train.constant dense<-1.000000e+00>
// CHECK: %[[DQ:.*]] = train.mul %[[DQ0]], %[[NEG]]
// CHECK: train.accumulate @p.grad, %[[DP]]
// CHECK: train.accumulate @q.grad, %[[DQ]]
module @mse_both {
  train.param @p trainable : tensor<2x3xf32>
  train.param @q trainable : tensor<2x3xf32>
  func.func @loss() -> tensor<f32> {
    %p = train.read_param @p : tensor<2x3xf32>
    %q = train.read_param @q : tensor<2x3xf32>
    %l = train.mse %p, %q reduction mean : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that frozen parameters and running statistics get no gradient
// buffer, no accumulation and no gradient computation on their behalf.
// CHECK-LABEL: module @frozen
// CHECK-NOT: train.param @w1.grad
// CHECK: train.param @w2.grad gradient
// CHECK-NOT: train.param @w1.grad
// CHECK: %[[DY:.*]] = train.mse_backward
// CHECK: %[[DW2:.*]] = train.conv_backward_filter %{{.*}}, %[[DY]]
// CHECK-NOT: train.conv_backward_data
// CHECK-NOT: train.conv_backward_filter
// CHECK: train.accumulate @w2.grad, %[[DW2]]
// CHECK-NOT: train.accumulate @w1.grad
module @frozen {
  train.param @w1 frozen : tensor<2x1x1x1xf32>
  train.param @w2 trainable : tensor<2x2x1x1xf32>
  func.func @loss(%x: tensor<1x1x2x2xf32>, %t: tensor<1x2x2x2xf32>) -> tensor<f32> {
    %w1 = train.read_param @w1 : tensor<2x1x1x1xf32>
    %h = train.conv %x, %w1 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
    %w2 = train.read_param @w2 : tensor<2x2x1x1xf32>
    %y = train.conv %h, %w2 strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32>
    %l = train.mse %y, %t reduction mean : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a parameter read twice (a shared weight) gets one gradient
// buffer and one accumulation of the sum of both reads' gradients.
// CHECK-LABEL: module @shared
// CHECK: train.param @w.grad gradient
// CHECK-NOT: train.param @w.grad
// CHECK: %[[W1:.*]] = train.read_param @w
// CHECK: %[[W2:.*]] = train.read_param @w
// CHECK: %[[DY:.*]] = train.mse_backward
// CHECK: %[[D1:.*]] = train.mul %[[DY]], %[[W2]]
// CHECK: %[[D2:.*]] = train.mul %[[DY]], %[[W1]]
// CHECK: %[[SUM:.*]] = train.add %[[D1]], %[[D2]]
// CHECK: train.accumulate @w.grad, %[[SUM]]
// CHECK-NOT: train.accumulate
module @shared {
  train.param @w trainable : tensor<3xf32>
  func.func @loss(%t: tensor<3xf32>) -> tensor<f32> {
    %w1 = train.read_param @w : tensor<3xf32>
    %w2 = train.read_param @w : tensor<3xf32>
    %y = train.mul %w1, %w2 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %l = train.mse %y, %t reduction mean : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a loss that depends on no trainable parameter yields a
// micro-step with no gradient at all.
// CHECK-LABEL: module @nothing_to_train
// CHECK: func.func @micro_step(%{{.*}}: tensor<2x3xf32>, %{{.*}}: tensor<2x3xf32>, %{{.*}}: f32 {train.name = "grad_scale"})
// CHECK-NOT: train.mse_backward
// CHECK-NOT: train.accumulate
// CHECK-NOT: gradient
module @nothing_to_train {
  train.param @w frozen : tensor<2x3xf32>
  func.func @loss(%x: tensor<2x3xf32>, %t: tensor<2x3xf32>) -> tensor<f32> {
    %w = train.read_param @w : tensor<2x3xf32>
    %y = train.add %x, %w : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %l = train.mse %y, %t reduction mean : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that an op without a gradient rule is refused when it lies on the
// path from a parameter to the loss...
module {
  train.param @w trainable : tensor<2x3xf32>
  func.func @loss(%t: tensor<3xf32>) -> tensor<f32> {
    %w = train.read_param @w : tensor<2x3xf32>
    // expected-error @+1 {{no gradient rule for 'train.reduce_sum'}}
    %s = train.reduce_sum %w axes [0] : (tensor<2x3xf32>) -> tensor<3xf32>
    %l = train.mse %s, %t reduction mean : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// ...but not when it only touches data.
// CHECK-LABEL: module @rule_free_data_path
// CHECK: train.reduce_sum %{{.*}} axes [0]
// CHECK: train.accumulate @w.grad
module @rule_free_data_path {
  train.param @w trainable : tensor<3xf32>
  func.func @loss(%x: tensor<2x3xf32>, %t: tensor<3xf32>) -> tensor<f32> {
    %s = train.reduce_sum %x axes [0] : (tensor<2x3xf32>) -> tensor<3xf32>
    %w = train.read_param @w : tensor<3xf32>
    %y = train.mul %s, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %l = train.mse %y, %t reduction mean : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that an inference-mode BatchNorm left in @loss (explicit-training-
// mode not run) has no gradient rule.
module {
  train.param @g trainable : tensor<3xf32>
  func.func @loss(%x: tensor<4x3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %t: tensor<4x3xf32>) -> tensor<f32> {
    %g = train.read_param @g : tensor<3xf32>
    // expected-error @+1 {{no gradient rule for 'train.batch_norm'}}
    %y = train.batch_norm %x, %g, %g, %m, %v epsilon 1.0e-05 momentum 1.0e-01 : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %l = train.mse %y, %t reduction mean : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a bn_apply with statistics other than its input's batch
// statistics (running statistics) has no gradient rule.
module {
  train.param @g trainable : tensor<3xf32>
  func.func @loss(%x: tensor<4x3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %t: tensor<4x3xf32>) -> tensor<f32> {
    %g = train.read_param @g : tensor<3xf32>
    // expected-error @+1 {{no gradient rule for bn_apply with statistics that are not the batch statistics of its input}}
    %y = train.bn_apply %x, %m, %v, %g, %g epsilon 1.0e-05 : tensor<4x3xf32>, tensor<3xf32>
    %l = train.mse %y, %t reduction mean : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a matmul with a vector operand has no gradient rule.
module {
  train.param @w trainable : tensor<3xf32>
  func.func @loss(%x: tensor<2x3xf32>, %t: tensor<2xf32>) -> tensor<f32> {
    %w = train.read_param @w : tensor<3xf32>
    // expected-error @+1 {{no gradient rule for matmul with a vector operand}}
    %y = train.matmul %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
    %l = train.mse %y, %t reduction mean : (tensor<2xf32>, tensor<2xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that only a mean loss is differentiated.
module {
  train.param @w trainable : tensor<1x4xf32>
  func.func @loss(%t: tensor<1xi64>) -> tensor<f32> {
    %w = train.read_param @w : tensor<1x4xf32>
    // expected-error @+1 {{only a mean loss can be differentiated}}
    %l = train.softmax_cross_entropy %w, %t reduction none : (tensor<1x4xf32>, tensor<1xi64>) -> tensor<1xf32>
    %s = train.reshape %l : tensor<1xf32> -> tensor<f32>
    return %s : tensor<f32>
  }
}

// -----

module {
  train.param @w trainable : tensor<1x4xf32>
  func.func @loss(%t: tensor<1x4xf32>) -> tensor<f32> {
    %w = train.read_param @w : tensor<1x4xf32>
    // expected-error @+1 {{only a mean loss can be differentiated}}
    %l = train.mse %w, %t reduction none : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1xf32>
    %s = train.reshape %l : tensor<1xf32> -> tensor<f32>
    return %s : tensor<f32>
  }
}

// -----

// Tests that a multi-result op on the differentiated path is refused.
module {
  train.param @g trainable : tensor<3xf32>
  func.func @loss(%dy: tensor<4x3xf32>, %x: tensor<4x3xf32>, %m: tensor<3xf32>, %t: tensor<4x3xf32>) -> tensor<f32> {
    %g = train.read_param @g : tensor<3xf32>
    // expected-error @+1 {{no gradient rule for 'train.batch_norm_backward'}}
    %dx, %dg, %db = train.batch_norm_backward %dy, %x, %m, %m, %g epsilon 1.0e-05 : tensor<4x3xf32>, tensor<3xf32>
    %l = train.mse %dx, %t reduction mean : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that the loss must be a 0-d tensor.
module {
  train.param @w trainable : tensor<3xf32>
  // expected-error @+1 {{the loss must be a scalar tensor, got 'tensor<3xf32>'}}
  func.func @loss() -> tensor<3xf32> {
    %w = train.read_param @w : tensor<3xf32>
    return %w : tensor<3xf32>
  }
}

// -----

// Tests that the pass needs the @loss that append-loss makes.
// expected-error @+1 {{expected a single-block @loss function with one result (run traincc-append-loss first)}}
module {
  func.func @forward(%x: tensor<3xf32>) -> tensor<3xf32> {
    return %x : tensor<3xf32>
  }
}

// -----

// expected-error @+1 {{expected a single-block @loss function with one result (run traincc-append-loss first)}}
module {
  func.func @loss(%x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
    return %x, %x : tensor<f32>, tensor<f32>
  }
}

// -----

// Tests mixed precision and loss scaling: a read of a weight's bf16 copy is
// differentiated as a read of the master weight, whose f32 gradient buffer
// receives the bf16 gradient cast back; the backward pass starts at the
// scaled loss (the seed is multiplied by the scale), and @micro_step
// returns the unscaled loss. The seed is divided by K (grad_scale) rather
// than the gradients as they accumulate, as PyTorch's scaler.scale(loss / K)
// does, so that low-precision gradients overflow when PyTorch's do.
// CHECK-LABEL: module @mixed_precision
// CHECK: train.param @w trainable : tensor<3x4xf32>
// CHECK-NEXT: train.param @w.grad gradient : tensor<3x4xf32>
// CHECK-NOT: @w.bf16.grad
// CHECK: func.func @micro_step
// CHECK: %[[LOSS:.*]] = train.softmax_cross_entropy
// CHECK: %[[SCALE:.*]] = train.read_param @loss_scaler.scale
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[SEED:.*]] = train.scale_loss %{{.*}}, %[[SCALE]] by %[[K:.*]] : tensor<f32>
// CHECK: train.softmax_cross_entropy_backward %[[SEED]]
// CHECK: %[[DW:.*]] = train.gemm {{.*}} -> tensor<3x4xbf16>
// CHECK: %[[DW32:.*]] = train.cast %[[DW]] : tensor<3x4xbf16> to tensor<3x4xf32>
// CHECK: train.accumulate @w.grad, %[[DW32]] scale %[[ONE]] : tensor<3x4xf32>
// CHECK: return %[[LOSS]] : tensor<f32>
module @mixed_precision {
  train.param @w trainable : tensor<3x4xf32>
  train.param @w.bf16 weight_copy : tensor<3x4xbf16> {source = @w}
  train.param @loss_scaler.scale loss_scaler : tensor<f32> = dense<65536.0>
  func.func @loss(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> tensor<f32> {
    %x16 = train.cast %x : tensor<2x4xf32> to tensor<2x4xbf16>
    %w = train.read_param @w.bf16 : tensor<3x4xbf16>
    %y = train.gemm %x16, %w {trans_b = true} : (tensor<2x4xbf16>, tensor<3x4xbf16>) -> tensor<2x3xbf16>
    %y32 = train.cast %y : tensor<2x3xbf16> to tensor<2x3xf32>
    %l = train.softmax_cross_entropy %y32, %t reduction mean : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<f32>
    %s = train.read_param @loss_scaler.scale : tensor<f32>
    %scaled = train.scale_loss %l, %s : tensor<f32>
    return %scaled : tensor<f32>
  }
}

// -----

// Tests the reduction and gather rules: sum_to goes back through a
// broadcast_to, broadcast_to through a sum_to, reduce_max through
// reduce_max_backward (which reads the input and the maxima), and a gather
// of a parameter through gather_backward with the same indices; the
// integer indices get no gradient.
// CHECK-LABEL: module @reductions
// CHECK: %[[W:.*]] = train.read_param @w : tensor<4x3xf32>
// CHECK: %[[G:.*]] = train.gather %[[W]], %[[I:.*]] axis 0
// CHECK: %[[S:.*]] = train.sum_to %[[G]] : tensor<2x3xf32> -> tensor<1x3xf32>
// CHECK: %[[B:.*]] = train.broadcast_to %[[S]] : tensor<1x3xf32> -> tensor<5x3xf32>
// CHECK: %[[M:.*]] = train.reduce_max %[[B]] : tensor<5x3xf32> -> tensor<1x1xf32>
// CHECK: %[[DM:.*]] = train.mse_backward
// CHECK: %[[DB:.*]] = train.reduce_max_backward %[[DM]], %[[B]], %[[M]]
// CHECK: %[[DS:.*]] = train.sum_to %[[DB]] : tensor<5x3xf32> -> tensor<1x3xf32>
// CHECK: %[[DG:.*]] = train.broadcast_to %[[DS]] : tensor<1x3xf32> -> tensor<2x3xf32>
// CHECK: %[[DW:.*]] = train.gather_backward %[[DG]], %[[I]] axis 0 : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
// CHECK: train.accumulate @w.grad, %[[DW]]
module @reductions {
  train.param @w trainable : tensor<4x3xf32>
  func.func @loss(%t: tensor<1x1xf32>) -> tensor<f32> {
    %w = train.read_param @w : tensor<4x3xf32>
    %i = train.constant dense<[3, 3]> : tensor<2xi64>
    %g = train.gather %w, %i axis 0 : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
    %s = train.sum_to %g : tensor<2x3xf32> -> tensor<1x3xf32>
    %b = train.broadcast_to %s : tensor<1x3xf32> -> tensor<5x3xf32>
    %m = train.reduce_max %b : tensor<5x3xf32> -> tensor<1x1xf32>
    %l = train.mse %m, %t reduction mean : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
