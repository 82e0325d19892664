// RUN: traincc-opt %s -split-input-file -traincc-recompute-activations | FileCheck %s
// RUN: traincc-opt %s -split-input-file -traincc-recompute-activations=max-chain=1 | FileCheck %s --check-prefix=SHORT
// RUN: not traincc-opt %s -traincc-recompute-activations=max-chain=0 2>&1 | FileCheck %s --check-prefix=ERROR

// Tests that the BN apply and ReLU outputs the backward pass reads are
// computed again from the kept convolution output right before their first
// backward use, marked train.recomputed, and that the backward ops read the
// clones; the convolution output itself (not cheap) stays. With
// max-chain=1 only BN apply (one op) is recomputed: the ReLU would need two.
// CHECK-LABEL: module @bn_relu
// CHECK: %[[C:.*]] = train.conv
// CHECK: %[[MEAN:.*]], %[[VAR:.*]] = train.bn_stats %[[C]]
// CHECK: %[[Y:.*]] = train.bn_apply %[[C]], %[[MEAN]], %[[VAR]], %[[G:.*]], %[[B:.*]] epsilon
// CHECK-NOT: recomputed
// CHECK: %[[R:.*]] = train.relu %[[Y]] :
// CHECK: %[[P:.*]] = train.max_pool %[[R]]
// CHECK: %[[L:.*]] = train.mse
// CHECK: %[[D:.*]] = train.mse_backward
// CHECK: %[[Y2:.*]] = train.bn_apply %[[C]], %[[MEAN]], %[[VAR]], %[[G]], %[[B]] epsilon {{.*}} {train.recomputed}
// CHECK: %[[R2:.*]] = train.relu %[[Y2]] {train.recomputed}
// CHECK: %[[DP:.*]] = train.max_pool_backward %[[D]], %[[R2]]
// CHECK: %[[DR:.*]] = train.relu_backward %[[DP]], %[[Y2]]
// CHECK: train.batch_norm_backward %[[DR]], %[[C]], %[[MEAN]], %[[VAR]]
// CHECK: return %[[L]]
// SHORT-LABEL: module @bn_relu
// SHORT: %[[R:.*]] = train.relu
// SHORT-NOT: train.recomputed
// SHORT: train.max_pool_backward %{{.*}}, %[[R]] kernel
// SHORT: %[[Y2:.*]] = train.bn_apply {{.*}} {train.recomputed}
// SHORT: train.relu_backward %{{.*}}, %[[Y2]] :
module @bn_relu {
  train.param @w trainable : tensor<4x1x3x3xf32>
  train.param @g trainable : tensor<4xf32>
  train.param @b trainable : tensor<4xf32>
  func.func @micro_step(%x: tensor<2x1x4x4xf32> {train.name = "input"}, %t: tensor<2x4x2x2xf32> {train.name = "target"}, %gs: f32 {train.name = "grad_scale"}) -> (tensor<f32> {train.name = "loss"}) {
    %one = train.constant dense<1.000000e+00> : tensor<f32>
    %w = train.read_param @w : tensor<4x1x3x3xf32>
    %c = train.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x1x4x4xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x4x4xf32>
    %g = train.read_param @g : tensor<4xf32>
    %b = train.read_param @b : tensor<4xf32>
    %mean, %var = train.bn_stats %c : (tensor<2x4x4x4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    %y = train.bn_apply %c, %mean, %var, %g, %b epsilon 9.99999974E-6 : tensor<2x4x4x4xf32>, tensor<4xf32>
    %r = train.relu %y : tensor<2x4x4x4xf32>
    %p = train.max_pool %r kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : (tensor<2x4x4x4xf32>) -> tensor<2x4x2x2xf32>
    %l = train.mse %p, %t reduction mean : (tensor<2x4x2x2xf32>, tensor<2x4x2x2xf32>) -> tensor<f32>
    %d = train.mse_backward %one, %p, %t : (tensor<f32>, tensor<2x4x2x2xf32>, tensor<2x4x2x2xf32>) -> tensor<2x4x2x2xf32>
    %dp = train.max_pool_backward %d, %r kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : (tensor<2x4x2x2xf32>, tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
    %dr = train.relu_backward %dp, %y : tensor<2x4x4x4xf32>
    %dx, %dg, %db = train.batch_norm_backward %dr, %c, %mean, %var, %g epsilon 9.99999974E-6 : tensor<2x4x4x4xf32>, tensor<4xf32>
    %dw = train.conv_backward_filter %x, %dx strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x1x4x4xf32>, tensor<2x4x4x4xf32>) -> tensor<4x1x3x3xf32>
    train.accumulate @w.grad, %dw scale %gs : tensor<4x1x3x3xf32>
    train.accumulate @g.grad, %dg scale %gs : tensor<4xf32>
    train.accumulate @b.grad, %db scale %gs : tensor<4xf32>
    return %l : tensor<f32>
  }
  train.param @w.grad gradient : tensor<4x1x3x3xf32>
  train.param @g.grad gradient : tensor<4xf32>
  train.param @b.grad gradient : tensor<4xf32>
}

// -----

// Tests that a cheap value whose input the backward pass does not keep (a
// pooling output only the forward pass reads) is kept, not recomputed: its
// recomputation would keep the pooling output alive instead.
// CHECK-LABEL: module @input_not_kept
// CHECK-NOT: train.recomputed
// CHECK: train.sigmoid_backward %{{.*}}, %[[S:.*]] :
// CHECK: return
module @input_not_kept {
  func.func @micro_step(%x: tensor<2x4x4x4xf32> {train.name = "input"}, %t: tensor<2x4x2x2xf32> {train.name = "target"}, %gs: f32 {train.name = "grad_scale"}) -> (tensor<f32> {train.name = "loss"}) {
    %one = train.constant dense<1.000000e+00> : tensor<f32>
    %p = train.max_pool %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : (tensor<2x4x4x4xf32>) -> tensor<2x4x2x2xf32>
    %s = train.sigmoid %p : tensor<2x4x2x2xf32>
    %l = train.mse %s, %t reduction mean : (tensor<2x4x2x2xf32>, tensor<2x4x2x2xf32>) -> tensor<f32>
    %d = train.mse_backward %one, %s, %t : (tensor<f32>, tensor<2x4x2x2xf32>, tensor<2x4x2x2xf32>) -> tensor<2x4x2x2xf32>
    %ds = train.sigmoid_backward %d, %s : tensor<2x4x2x2xf32>
    return %l : tensor<f32>
  }
}

// ERROR: error: traincc-recompute-activations: max-chain must be at least 1, got 0
