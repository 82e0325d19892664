// RUN: traincc-opt %s -split-input-file | traincc-opt -split-input-file | FileCheck %s
// RUN: traincc-opt %s -split-input-file --mlir-print-op-generic | traincc-opt -split-input-file | FileCheck %s

// Tests that the losses and their gradients round-trip.
// CHECK-LABEL: func.func @losses
func.func @losses(%logits: tensor<8x10xf32>, %labels: tensor<8xi64>, %g: tensor<f32>,
                  %p: tensor<8x4xf32>, %t: tensor<8x4xf32>) {
  // CHECK: train.softmax_cross_entropy %{{.*}}, %{{.*}} reduction mean : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  %0 = train.softmax_cross_entropy %logits, %labels reduction mean : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  // CHECK: train.softmax_cross_entropy %{{.*}}, %{{.*}} reduction none : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<8xf32>
  %1 = train.softmax_cross_entropy %logits, %labels reduction none : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<8xf32>
  // CHECK: train.softmax_cross_entropy_backward
  %2 = train.softmax_cross_entropy_backward %g, %logits, %labels : (tensor<f32>, tensor<8x10xf32>, tensor<8xi64>) -> tensor<8x10xf32>
  // CHECK: train.mse %{{.*}}, %{{.*}} reduction mean
  %3 = train.mse %p, %t reduction mean : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<f32>
  // CHECK: train.mse_backward
  %4 = train.mse_backward %g, %p, %t : (tensor<f32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return
}

// -----

// Tests that reductions, broadcasts and layer gradients round-trip.
// CHECK-LABEL: func.func @layer_gradients
func.func @layer_gradients(%x: tensor<8x3x8x8xf32>, %w: tensor<16x3x3x3xf32>, %dy: tensor<8x16x8x8xf32>,
                           %stats: tensor<16xf32>, %y: tensor<8x16x8x8xf32>, %dp: tensor<8x16x4x4xf32>,
                           %g: tensor<8x16x1x1xf32>) {
  // CHECK: train.reduce_sum %{{.*}} axes [0, 2, 3] : (tensor<8x16x8x8xf32>) -> tensor<16xf32>
  %0 = train.reduce_sum %dy axes [0, 2, 3] : (tensor<8x16x8x8xf32>) -> tensor<16xf32>
  // CHECK: train.sum_to %{{.*}} : tensor<8x16x8x8xf32> -> tensor<16x1x1xf32>
  %1 = train.sum_to %dy : tensor<8x16x8x8xf32> -> tensor<16x1x1xf32>
  // CHECK: train.broadcast_to %{{.*}} : tensor<8x16x1x1xf32> -> tensor<8x16x8x8xf32>
  %2 = train.broadcast_to %g : tensor<8x16x1x1xf32> -> tensor<8x16x8x8xf32>
  // CHECK: train.conv_backward_data %{{.*}}, %{{.*}} strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1
  %3 = train.conv_backward_data %dy, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<8x16x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<8x3x8x8xf32>
  // CHECK: train.conv_backward_filter %{{.*}}, %{{.*}} strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1
  %4 = train.conv_backward_filter %x, %dy strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<8x3x8x8xf32>, tensor<8x16x8x8xf32>) -> tensor<16x3x3x3xf32>
  // CHECK: train.batch_norm_backward %{{.*}} epsilon 9.99999974E-6 : tensor<8x16x8x8xf32>, tensor<16xf32>
  %5:3 = train.batch_norm_backward %dy, %y, %stats, %stats, %stats epsilon 1.0e-05 : tensor<8x16x8x8xf32>, tensor<16xf32>
  // CHECK: train.relu_backward
  %6 = train.relu_backward %dy, %y : tensor<8x16x8x8xf32>
  // CHECK: train.leaky_relu_backward %{{.*}} alpha
  %7 = train.leaky_relu_backward %dy, %y alpha 1.0e-02 : tensor<8x16x8x8xf32>
  // CHECK: train.clip_backward %{{.*}}, %{{.*}} min 0.000000e+00 max 6.000000e+00
  %8 = train.clip_backward %dy, %y min 0.0 max 6.0 : tensor<8x16x8x8xf32>
  // CHECK: train.sigmoid_backward
  %9 = train.sigmoid_backward %dy, %y : tensor<8x16x8x8xf32>
  // CHECK: train.tanh_backward
  %10 = train.tanh_backward %dy, %y : tensor<8x16x8x8xf32>
  // CHECK: train.erf_backward
  %erf_dx = train.erf_backward %dy, %y : tensor<8x16x8x8xf32>
  // CHECK: train.softmax_backward %{{.*}} axis 1
  %11 = train.softmax_backward %dy, %y axis 1 : tensor<8x16x8x8xf32>
  // CHECK: train.log_softmax_backward %{{.*}} axis 1
  %12 = train.log_softmax_backward %dy, %y axis 1 : tensor<8x16x8x8xf32>
  // CHECK: train.max_pool_backward %{{.*}} kernel [2, 2] strides [2, 2]
  %13 = train.max_pool_backward %dp, %y kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : (tensor<8x16x4x4xf32>, tensor<8x16x8x8xf32>) -> tensor<8x16x8x8xf32>
  // CHECK: train.avg_pool_backward %{{.*}} kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] {count_include_pad = true}
  %14 = train.avg_pool_backward %dp kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] {count_include_pad = true} : (tensor<8x16x4x4xf32>) -> tensor<8x16x8x8xf32>
  // CHECK: train.slice_backward %{{.*}} starts [0, 0, 0, 0] ends [8, 16, 8, 8] steps [1, 1, 2, 2]
  %15 = train.slice_backward %dp starts [0, 0, 0, 0] ends [8, 16, 8, 8] steps [1, 1, 2, 2] : (tensor<8x16x4x4xf32>) -> tensor<8x16x8x8xf32>
  return
}

// -----

// Tests that explicit BatchNorm, buffers, optimizers and masks round-trip.
train.param @w trainable : tensor<16xf32>
train.param @"w.grad" gradient : tensor<16xf32>
train.param @"w.momentum" optimizer_state : tensor<16xf32>
train.param @"w.exp_avg" optimizer_state : tensor<16xf32>
train.param @"w.exp_avg_sq" optimizer_state : tensor<16xf32>
train.param @rm running_mean : tensor<16xf32>
train.param @rv running_var : tensor<16xf32>
// CHECK-LABEL: func.func @step
func.func @step(%x: tensor<8x16x4x4xf32>, %s: f32, %lr: f32, %step: i64, %seed: i64) {
  %w = train.read_param @w : tensor<16xf32>
  // CHECK: %[[MEAN:.*]], %[[VAR:.*]] = train.bn_stats
  %mean, %var = train.bn_stats %x : (tensor<8x16x4x4xf32>) -> (tensor<16xf32>, tensor<16xf32>)
  // CHECK: train.bn_apply %{{.*}}, %[[MEAN]], %[[VAR]]
  %y = train.bn_apply %x, %mean, %var, %w, %w epsilon 1.0e-05 : tensor<8x16x4x4xf32>, tensor<16xf32>
  // CHECK: train.bn_running_update @rm, @rv, %[[MEAN]], %[[VAR]] momentum 1.000000e-01 count 128 : tensor<16xf32>
  train.bn_running_update @rm, @rv, %mean, %var momentum 1.0e-01 count 128 : tensor<16xf32>
  // CHECK: train.accumulate @w.grad, %{{.*}} scale %{{.*}} : tensor<16xf32>
  train.accumulate @"w.grad", %mean scale %s : tensor<16xf32>
  // CHECK: train.assign @w.momentum
  train.assign @"w.momentum", %var : tensor<16xf32>
  // CHECK: train.sgd_update @w, @w.grad, @w.momentum lr %{{.*}} step %{{.*}} {momentum = 0.899999976 : f32, nesterov = true}
  train.sgd_update @w, @"w.grad", @"w.momentum" lr %lr step %step {momentum = 0.9 : f32, nesterov = true}
  // CHECK: train.sgd_update @w, @w.grad lr
  train.sgd_update @w, @"w.grad" lr %lr step %step
  // CHECK: train.adam_update @w, @w.grad, @w.exp_avg, @w.exp_avg_sq lr %{{.*}} step %{{.*}} {decoupled = true
  train.adam_update @w, @"w.grad", @"w.exp_avg", @"w.exp_avg_sq" lr %lr step %step {decoupled = true, weight_decay = 1.0e-02 : f32}
  // CHECK: train.zero @w.grad
  train.zero @"w.grad"
  // CHECK: train.dropout_mask %{{.*}} ratio 5.000000e-01 stream 3 : tensor<8x16xf32>
  %m = train.dropout_mask %seed ratio 5.0e-01 stream 3 : tensor<8x16xf32>
  return
}

// -----

// Tests that the mixed-precision and loss-scaling ops and operands
// round-trip: casts, weight copies and step backups naming their source,
// the scaled loss, unscaling, the scale update, conditional assignment and
// skipped updates that rewrite a weight copy.
// CHECK-LABEL: module @loss_scaling
// CHECK: train.param @w.bf16 weight_copy : tensor<3x4xbf16> {source = @w}
// CHECK: train.param @rm.step_start step_backup : tensor<4xf32> {source = @rm}
// CHECK: train.cast %{{.*}} : tensor<2x4xf32> to tensor<2x4xbf16>
// CHECK: train.scale_loss %{{.*}}, %{{.*}} : tensor<f32>
// CHECK: train.unscale_check_finite @loss_scaler.scale, @loss_scaler.found_inf
// CHECK: train.sgd_update @w, @w.grad weight_copy @w.bf16 lr %{{.*}} step %{{.*}} skip_if %{{.*}}
// CHECK: train.adam_update @w, @w.grad, @w.m, @w.v weight_copy @w.bf16 lr %{{.*}} step %{{.*}} skip_if %{{.*}}
// CHECK: train.assign @rm, %{{.*}} only_if %{{.*}} : tensor<4xf32>
// CHECK: train.bn_running_update @rm, @rv, %{{.*}}, %{{.*}} momentum 1.000000e-01 count 8 skip_if %{{.*}} : tensor<4xf32>
// CHECK: train.update_loss_scale @loss_scaler.scale, @loss_scaler.growth_tracker, @loss_scaler.found_inf growth 2.000000e+00 backoff 5.000000e-01 interval 2000
module @loss_scaling {
  train.param @w trainable : tensor<3x4xf32>
  train.param @w.grad gradient : tensor<3x4xf32>
  train.param @w.m optimizer_state : tensor<3x4xf32>
  train.param @w.v optimizer_state : tensor<3x4xf32>
  train.param @w.bf16 weight_copy : tensor<3x4xbf16> {source = @w}
  train.param @rm running_mean : tensor<4xf32>
  train.param @rv running_var : tensor<4xf32>
  train.param @rm.step_start step_backup : tensor<4xf32> {source = @rm}
  train.param @loss_scaler.scale loss_scaler : tensor<f32> = dense<65536.0>
  train.param @loss_scaler.growth_tracker loss_scaler : tensor<i64> = dense<0>
  train.param @loss_scaler.found_inf loss_scaler : tensor<f32> = dense<0.0>
  func.func @f(%x: tensor<2x4xf32>, %l: tensor<f32>, %lr: f32, %step: i64, %stat: tensor<4xf32>) -> (tensor<2x4xbf16>, tensor<f32>) {
    %0 = train.cast %x : tensor<2x4xf32> to tensor<2x4xbf16>
    %s = train.read_param @loss_scaler.scale : tensor<f32>
    %1 = train.scale_loss %l, %s : tensor<f32>
    train.unscale_check_finite @loss_scaler.scale, @loss_scaler.found_inf
    %found = train.read_param @loss_scaler.found_inf : tensor<f32>
    train.sgd_update @w, @w.grad weight_copy @w.bf16 lr %lr step %step skip_if %found
    train.adam_update @w, @w.grad, @w.m, @w.v weight_copy @w.bf16 lr %lr step %step skip_if %found
    train.assign @rm, %stat only_if %found : tensor<4xf32>
    train.bn_running_update @rm, @rv, %stat, %stat momentum 0.1 count 8 skip_if %found : tensor<4xf32>
    train.update_loss_scale @loss_scaler.scale, @loss_scaler.growth_tracker, @loss_scaler.found_inf growth 2.0 backoff 0.5 interval 2000
    return %0, %1 : tensor<2x4xbf16>, tensor<f32>
  }
}

// -----

// Tests mixed-precision BatchNorm: an f16/bf16 input with f32 statistics,
// scale and bias; the input gradient in the input's type, the parameter
// gradients in f32.
// CHECK-LABEL: func.func @mixed_batch_norm
// CHECK: train.bn_stats %{{.*}} : (tensor<8x16x4x4xbf16>) -> (tensor<16xf32>, tensor<16xf32>)
// CHECK: train.bn_apply {{.*}} : tensor<8x16x4x4xbf16>, tensor<16xf32>
// CHECK: train.batch_norm_backward {{.*}} : tensor<8x16x4x4xbf16>, tensor<16xf32>
func.func @mixed_batch_norm(%x: tensor<8x16x4x4xbf16>, %g: tensor<16xf32>) -> (tensor<8x16x4x4xbf16>, tensor<16xf32>) {
  %mean, %var = train.bn_stats %x : (tensor<8x16x4x4xbf16>) -> (tensor<16xf32>, tensor<16xf32>)
  %y = train.bn_apply %x, %mean, %var, %g, %g epsilon 1.0e-05 : tensor<8x16x4x4xbf16>, tensor<16xf32>
  %dx, %dg, %db = train.batch_norm_backward %y, %x, %mean, %var, %g epsilon 1.0e-05 : tensor<8x16x4x4xbf16>, tensor<16xf32>
  return %dx, %dg : tensor<8x16x4x4xbf16>, tensor<16xf32>
}

// -----

// Tests synchronized BatchNorm (traincc --sync-bn): the marker on the
// statistics and the backward op, and the replica count.
// CHECK-LABEL: func.func @synchronized_batch_norm
// CHECK: train.bn_stats %{{.*}} synchronized : (tensor<8x16xf32>) -> (tensor<16xf32>, tensor<16xf32>)
// CHECK: train.batch_norm_backward {{.*}} epsilon 9.99999974E-6 synchronized : tensor<8x16xf32>, tensor<16xf32>
// CHECK: train.replica_count : tensor<f32>
func.func @synchronized_batch_norm(%x: tensor<8x16xf32>, %g: tensor<16xf32>) -> (tensor<8x16xf32>, tensor<f32>) {
  %mean, %var = train.bn_stats %x synchronized : (tensor<8x16xf32>) -> (tensor<16xf32>, tensor<16xf32>)
  %dx, %dg, %db = train.batch_norm_backward %x, %x, %mean, %var, %g epsilon 1.0e-05 synchronized : tensor<8x16xf32>, tensor<16xf32>
  %n = train.replica_count : tensor<f32>
  return %dx, %n : tensor<8x16xf32>, tensor<f32>
}

// -----

// Tests that the gradients of reduce_max and gather round-trip.
// CHECK-LABEL: func.func @reduce_max_gather_backward
// CHECK: train.reduce_max_backward %arg0, %arg1, %arg2 : (tensor<2x1x4xf32>, tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32>
// CHECK: train.gather_backward %arg3, %arg4 axis 1 : (tensor<2x5x3xf32>, tensor<5xi32>) -> tensor<2x7x3xf32>
func.func @reduce_max_gather_backward(%dy: tensor<2x1x4xf32>, %x: tensor<2x3x4xf32>, %y: tensor<2x1x4xf32>,
                                      %dg: tensor<2x5x3xf32>, %i: tensor<5xi32>)
    -> (tensor<2x3x4xf32>, tensor<2x7x3xf32>) {
  %0 = train.reduce_max_backward %dy, %x, %y : (tensor<2x1x4xf32>, tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32>
  %1 = train.gather_backward %dg, %i axis 1 : (tensor<2x5x3xf32>, tensor<5xi32>) -> tensor<2x7x3xf32>
  return %0, %1 : tensor<2x3x4xf32>, tensor<2x7x3xf32>
}
