// RUN: traincc-opt %s -traincc-training-pipeline | FileCheck %s --implicit-check-not='train.batch_norm %' --implicit-check-not='train.dropout %'
// RUN: traincc-opt %s -traincc-training-pipeline='freeze=conv[.].* optimizer=adamw weight-decay=0.01 no-decay=.*bias bn-stats=step' | FileCheck %s --check-prefix=STEP
// RUN: traincc-opt %s -traincc-training-pipeline='loss=mse momentum=0.9 nesterov=true' | FileCheck %s --check-prefix=MSE
// RUN: traincc-opt %s -traincc-training-pipeline='no-fuse=true' | FileCheck %s --check-prefix=NOFUSE

// Tests that the pipeline turns a small conv-BN-ReLU-pool-dropout-linear
// forward graph into @micro_step, @eval_step and @apply_step.

// Default: cross-entropy, BatchNorm statistics per micro-batch, plain SGD.
// CHECK-LABEL: module attributes {train.loss = "cross-entropy", train.optimizer = "sgd"}
// CHECK-NOT: func.func @forward
// CHECK: func.func @micro_step(%[[X:.*]]: tensor<2x1x4x4xf32> {train.name = "input"}, %[[T:.*]]: tensor<2xi64> {train.name = "target"}, %[[GS:.*]]: f32 {train.name = "grad_scale"}, %[[SEED:.*]]: i64 {train.name = "seed"}) -> (tensor<f32> {train.name = "loss"})
// CHECK: %[[C:.*]] = train.conv %[[X]]
// Canonicalisation removed the dead reads of the running statistics.
// CHECK-NOT: train.read_param @bn.running_mean
// CHECK: %[[MEAN:.*]], %[[VAR:.*]] = train.bn_stats %[[C]]
// CHECK: train.bn_running_update @bn.running_mean, @bn.running_var, %[[MEAN]], %[[VAR]] momentum 1.000000e-01 count 32
// CHECK: %[[MASK:.*]] = train.dropout_mask %[[SEED]] ratio 5.000000e-01 stream 0
// CHECK: %[[L:.*]] = train.softmax_cross_entropy %{{.*}}, %[[T]] reduction mean
// CHECK: train.softmax_cross_entropy_backward
// The backward pass reuses the forward dropout mask.
// CHECK: train.mul %{{.*}}, %[[MASK]]
// CHECK: train.batch_norm_backward
// CHECK-NOT: train.conv_backward_data
// CHECK: train.conv_backward_filter %[[X]]
// CHECK: train.accumulate @conv.weight.grad, %{{.*}} scale %[[GS]]
// CHECK: train.accumulate @fc.bias.grad, %{{.*}} scale %[[GS]]
// CHECK: return %[[L]]
// CHECK: func.func @eval_step(%{{.*}}: tensor<2x1x4x4xf32> {train.name = "input"}, %{{.*}}: tensor<2xi64> {train.name = "target"}) -> (tensor<2x3xf32> {train.name = "logits"}, tensor<2xf32> {train.name = "loss"})
// CHECK-NOT: train.dropout
// CHECK-NOT: train.bn_stats
// The evaluation step's BatchNorm is folded into the convolution's weights.
// CHECK: %[[FOLDED:.*]] = train.reshape %{{.*}} : tensor<1x4x9xf32> -> tensor<4x1x3x3xf32>
// CHECK: %[[EC:.*]] = train.conv %{{.*}}, %[[FOLDED]]
// The ReLU runs after the max pooling, on the pooled tensor.
// CHECK-NEXT: %[[EP:.*]] = train.max_pool %[[EC]]
// CHECK-NEXT: train.relu %[[EP]]
// CHECK: train.softmax_cross_entropy %{{.*}} reduction none
// CHECK: func.func @apply_step(%{{.*}}: f32 {train.name = "lr"}, %{{.*}}: i64 {train.name = "step"})
// CHECK-COUNT-6: train.sgd_update

// Frozen convolution, AdamW without decay on biases, pooled BatchNorm
// statistics updated in @apply_step.
// STEP-LABEL: module attributes {train.loss = "cross-entropy", train.optimizer = "adamw"}
// STEP: train.param @conv.weight frozen
// STEP: train.param @conv.bias frozen
// STEP-NOT: @conv.weight.grad
// STEP-NOT: @conv.bias.grad
// STEP: func.func @micro_step
// STEP: train.accumulate @bn.running_mean.pooled_count
// STEP-NOT: train.bn_running_update
// STEP-NOT: train.conv_backward
// STEP: train.accumulate @bn.weight.grad
// STEP-NOT: train.accumulate @conv
// STEP: func.func @apply_step
// STEP-NEXT: train.adam_update @bn.weight, {{.*}} {decoupled = true, weight_decay = 0.00999999977 : f32}
// STEP: train.adam_update @bn.bias, {{.*}} {decoupled = true}
// STEP: train.adam_update @fc.weight, {{.*}} {decoupled = true, weight_decay = 0.00999999977 : f32}
// STEP: train.adam_update @fc.bias, {{.*}} {decoupled = true}
// STEP: train.bn_running_update @bn.running_mean, @bn.running_var, {{.*}} count 32 batches
// STEP: train.zero @bn.running_mean.pooled_count
// STEP-NEXT: return

// MSE on the logits and Nesterov SGD.
// MSE-LABEL: module attributes {train.loss = "mse", train.optimizer = "sgd"}
// MSE: train.param @conv.weight.momentum_buffer optimizer_state
// MSE: func.func @micro_step(%{{.*}}: tensor<2x1x4x4xf32> {train.name = "input"}, %{{.*}}: tensor<2x3xf32> {train.name = "target"},
// MSE: train.mse_backward
// MSE: func.func @apply_step
// MSE-NEXT: train.sgd_update @conv.weight, @conv.weight.grad, @conv.weight.momentum_buffer lr %{{.*}} step %{{.*}} {momentum = 0.899999976 : f32, nesterov = true}
module {
  train.param @conv.weight trainable : tensor<4x1x3x3xf32>
  train.param @conv.bias trainable : tensor<4xf32>
  train.param @bn.weight trainable : tensor<4xf32>
  train.param @bn.bias trainable : tensor<4xf32>
  train.param @bn.running_mean running_mean : tensor<4xf32>
  train.param @bn.running_var running_var : tensor<4xf32>
  train.param @fc.weight trainable : tensor<3x16xf32>
  train.param @fc.bias trainable : tensor<3xf32>
  func.func @forward(%x: tensor<2x1x4x4xf32> {train.name = "input"}) -> (tensor<2x3xf32> {train.name = "logits"}) {
    %w = train.read_param @conv.weight : tensor<4x1x3x3xf32>
    %b = train.read_param @conv.bias : tensor<4xf32>
    %c = train.conv %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x1x4x4xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32>
    %g = train.read_param @bn.weight : tensor<4xf32>
    %bb = train.read_param @bn.bias : tensor<4xf32>
    %m = train.read_param @bn.running_mean : tensor<4xf32>
    %v = train.read_param @bn.running_var : tensor<4xf32>
    %n = train.batch_norm %c, %g, %bb, %m, %v epsilon 1.0e-05 momentum 1.0e-01 : (tensor<2x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32>
    %r = train.relu %n : tensor<2x4x4x4xf32>
    %p = train.max_pool %r kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : (tensor<2x4x4x4xf32>) -> tensor<2x4x2x2xf32>
    %f = train.flatten %p axis 1 : (tensor<2x4x2x2xf32>) -> tensor<2x16xf32>
    %d = train.dropout %f ratio 5.0e-01 : tensor<2x16xf32>
    %fw = train.read_param @fc.weight : tensor<3x16xf32>
    %fb = train.read_param @fc.bias : tensor<3xf32>
    %y = train.gemm %d, %fw, %fb {trans_b = true} : (tensor<2x16xf32>, tensor<3x16xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    return %y : tensor<2x3xf32>
  }
}

// Tests that no-fuse=true keeps the evaluation step's BatchNorm after the
// convolution.
// NOFUSE-LABEL: func.func @eval_step
// NOFUSE: %[[C:.*]] = train.conv %{{.*}}, %{{.*}}, %{{.*}} strides
// NOFUSE: %[[N:.*]] = train.bn_apply %[[C]]
// NOFUSE-NEXT: %[[R:.*]] = train.relu %[[N]]
// NOFUSE-NEXT: train.max_pool %[[R]]
