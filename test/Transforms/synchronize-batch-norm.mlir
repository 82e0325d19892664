// RUN: traincc-opt %s -split-input-file -verify-diagnostics --traincc-synchronize-batch-norm | FileCheck %s

// Tests that the statistics and the backward op of @micro_step become
// synchronized and that the running update counts the values of every
// replica (batches = replica_count); the rest of the step is unchanged.
// CHECK-LABEL: module @micro
// CHECK: %[[MEAN:.*]], %[[VAR:.*]] = train.bn_stats %[[H:.*]] synchronized
// CHECK: train.bn_apply %[[H]], %[[MEAN]], %[[VAR]]
// CHECK: %[[N:.*]] = train.replica_count : tensor<f32>
// CHECK: train.bn_running_update @bn.running_mean, @bn.running_var, %[[MEAN]], %[[VAR]] momentum 1.000000e-01 count 4 batches %[[N]]
// CHECK: train.batch_norm_backward {{.*}} epsilon 9.99999974E-6 synchronized
// CHECK-NOT: synchronized
module @micro {
  train.param @bn.weight trainable : tensor<3xf32>
  train.param @bn.weight.grad gradient : tensor<3xf32>
  train.param @bn.bias trainable : tensor<3xf32>
  train.param @bn.bias.grad gradient : tensor<3xf32>
  train.param @bn.running_mean running_mean : tensor<3xf32>
  train.param @bn.running_var running_var : tensor<3xf32>
  func.func @micro_step(%x: tensor<4x3xf32>, %t: tensor<4x3xf32>, %gs: f32) -> tensor<f32> {
    %g = train.read_param @bn.weight : tensor<3xf32>
    %b = train.read_param @bn.bias : tensor<3xf32>
    %mean, %var = train.bn_stats %x : (tensor<4x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
    %y = train.bn_apply %x, %mean, %var, %g, %b epsilon 1.0e-05 : tensor<4x3xf32>, tensor<3xf32>
    train.bn_running_update @bn.running_mean, @bn.running_var, %mean, %var momentum 1.0e-01 count 4 : tensor<3xf32>
    %l = train.mse %y, %t reduction mean : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<f32>
    %one = train.constant dense<1.0> : tensor<f32>
    %dy = train.mse_backward %one, %y, %t : (tensor<f32>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    %dx, %dg, %db = train.batch_norm_backward %dy, %x, %mean, %var, %g epsilon 1.0e-05 : tensor<4x3xf32>, tensor<3xf32>
    train.accumulate @bn.weight.grad, %dg scale %gs : tensor<3xf32>
    train.accumulate @bn.bias.grad, %db scale %gs : tensor<3xf32>
    return %l : tensor<f32>
  }
  func.func @eval_step(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
    %m = train.read_param @bn.running_mean : tensor<3xf32>
    %v = train.read_param @bn.running_var : tensor<3xf32>
    %g = train.read_param @bn.weight : tensor<3xf32>
    %b = train.read_param @bn.bias : tensor<3xf32>
    %y = train.bn_apply %x, %m, %v, %g, %b epsilon 1.0e-05 : tensor<4x3xf32>, tensor<3xf32>
    return %y : tensor<4x3xf32>
  }
}

// -----

// Tests that statistics pooled over the micro-batches of a step
// (--bn-stats step) count every replica's values too: the pooled count is
// multiplied by the replica count in @apply_step.
// CHECK-LABEL: module @pooled
// CHECK: func.func @apply_step
// CHECK: %[[K:.*]] = train.read_param @bn.running_mean.pooled_count
// CHECK: %[[N:.*]] = train.replica_count : tensor<f32>
// CHECK: %[[KN:.*]] = train.mul %[[K]], %[[N]]
// CHECK: train.bn_running_update {{.*}} count 4 batches %[[KN]]
module @pooled {
  train.param @bn.running_mean running_mean : tensor<3xf32>
  train.param @bn.running_var running_var : tensor<3xf32>
  train.param @bn.running_mean.pooled_count bn_accumulator : tensor<f32>
  func.func @micro_step(%x: tensor<4x3xf32>) -> tensor<3xf32> {
    %mean, %var = train.bn_stats %x : (tensor<4x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
    return %mean : tensor<3xf32>
  }
  func.func @apply_step(%lr: f32, %step: i64) {
    %k = train.read_param @bn.running_mean.pooled_count : tensor<f32>
    %m = train.read_param @bn.running_mean : tensor<3xf32>
    %v = train.read_param @bn.running_var : tensor<3xf32>
    train.bn_running_update @bn.running_mean, @bn.running_var, %m, %v momentum 1.0e-01 count 4 batches %k : tensor<3xf32>, tensor<f32>
    return
  }
}

// -----

// Tests that a model whose running variance is biased (its producer's
// convention) is refused: the correction's count would depend on the
// replicas.
// expected-error @below {{--sync-bn: this model's BatchNorm keeps a biased running variance}}
module @biased attributes {train.bn_running_variance = "biased"} {
  func.func @micro_step(%x: tensor<4x3xf32>) -> tensor<3xf32> {
    %mean, %var = train.bn_stats %x : (tensor<4x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
    return %mean : tensor<3xf32>
  }
}

// -----

// Tests that f64 statistics (gradient checks) are refused: the runtime
// averages float32.
module @f64 {
  func.func @micro_step(%x: tensor<4x3xf64>) -> tensor<3xf64> {
    // expected-error @below {{--sync-bn: synchronised statistics must be f32, got 'tensor<3xf64>'}}
    %mean, %var = train.bn_stats %x : (tensor<4x3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
    return %mean : tensor<3xf64>
  }
}
