// RUN: split-file %s %t --leading-lines
// RUN: traincc-opt %t/micro.mlir -traincc-loss-scaling='precision=fp16' | FileCheck %s --check-prefixes=CHECK,DYNAMIC
// RUN: traincc-opt %t/micro.mlir -traincc-loss-scaling='precision=bf16 loss-scale=dynamic init-scale=1e30 interval=3' | FileCheck %s --check-prefixes=CHECK,CUSTOM
// RUN: traincc-opt %t/micro.mlir -traincc-loss-scaling='precision=fp16 loss-scale=128' | FileCheck %s --check-prefixes=CHECK,STATIC
// RUN: traincc-opt %t/micro.mlir -traincc-loss-scaling='precision=bf16' | FileCheck %s --check-prefix=NONE
// RUN: traincc-opt %t/micro.mlir -traincc-loss-scaling='precision=fp16 loss-scale=none' | FileCheck %s --check-prefix=NONE
// RUN: traincc-opt %t/micro.mlir -traincc-loss-scaling | FileCheck %s --check-prefix=NONE
// RUN: traincc-opt %t/step.mlir -traincc-loss-scaling='precision=fp16' | FileCheck %s --check-prefix=STEP
// RUN: not traincc-opt %t/micro.mlir -traincc-loss-scaling='loss-scale=dynamic' 2>&1 | FileCheck %s --check-prefix=FP32
// RUN: not traincc-opt %t/micro.mlir -traincc-loss-scaling='precision=fp16 loss-scale=0' 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not traincc-opt %t/micro.mlir -traincc-loss-scaling='precision=fp16 loss-scale=-4' 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not traincc-opt %t/micro.mlir -traincc-loss-scaling='precision=fp16 loss-scale=big' 2>&1 | FileCheck %s --check-prefix=WORD
// RUN: not traincc-opt %t/micro.mlir -traincc-loss-scaling='precision=fp16 init-scale=1e40' 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not traincc-opt %t/micro.mlir -traincc-loss-scaling='precision=fp16 interval=0' 2>&1 | FileCheck %s --check-prefix=INTERVAL
// RUN: traincc-opt %t/f64-loss.mlir -verify-diagnostics -traincc-loss-scaling='precision=fp16'
// RUN: traincc-opt %t/no-loss.mlir -verify-diagnostics -traincc-loss-scaling='precision=bf16 loss-scale=dynamic'

//--- micro.mlir

// Tests that the scaler's state follows the parameters (GradScaler's
// initial scale 65536 unless told), that @loss returns the scaled loss,
// and that @apply_step, created here, unscales and checks first, restores
// the per-micro-batch running statistics when the step is skipped, backs
// them up for the next step and updates the scale last.
// CHECK: train.param @bn.running_mean running_mean : tensor<4xf32>
// CHECK-NEXT: train.param @bn.running_mean.step_start step_backup : tensor<4xf32> = dense<0.000000e+00> {source = @bn.running_mean}
// CHECK: train.param @bn.running_var running_var : tensor<4xf32>
// CHECK-NEXT: train.param @bn.running_var.step_start step_backup : tensor<4xf32> = dense<1.000000e+00> {source = @bn.running_var}
// DYNAMIC: train.param @loss_scaler.scale loss_scaler : tensor<f32> = dense<6.553600e+04>
// CUSTOM: train.param @loss_scaler.scale loss_scaler : tensor<f32> = dense<1.000000e+30>
// STATIC: train.param @loss_scaler.scale loss_scaler : tensor<f32> = dense<1.280000e+02>
// CHECK-NEXT: train.param @loss_scaler.growth_tracker loss_scaler : tensor<i64> = dense<0>
// CHECK-NEXT: train.param @loss_scaler.found_inf loss_scaler : tensor<f32> = dense<0.000000e+00>
// CHECK-LABEL: func.func @loss
// CHECK: %[[L:.*]] = train.softmax_cross_entropy
// CHECK-NEXT: %[[S:.*]] = train.read_param @loss_scaler.scale : tensor<f32>
// CHECK-NEXT: %[[SL:.*]] = train.scale_loss %[[L]], %[[S]] : tensor<f32>
// CHECK-NEXT: return %[[SL]] : tensor<f32>
// CHECK-LABEL: func.func @apply_step
// CHECK-NEXT: train.unscale_check_finite @loss_scaler.scale, @loss_scaler.found_inf
// CHECK-NEXT: %[[F:.*]] = train.read_param @loss_scaler.found_inf : tensor<f32>
// CHECK-NEXT: %[[M0:.*]] = train.read_param @bn.running_mean.step_start : tensor<4xf32>
// CHECK-NEXT: train.assign @bn.running_mean, %[[M0]] only_if %[[F]] : tensor<4xf32>
// CHECK-NEXT: %[[V0:.*]] = train.read_param @bn.running_var.step_start : tensor<4xf32>
// CHECK-NEXT: train.assign @bn.running_var, %[[V0]] only_if %[[F]] : tensor<4xf32>
// CHECK-NEXT: %[[M1:.*]] = train.read_param @bn.running_mean : tensor<4xf32>
// CHECK-NEXT: train.assign @bn.running_mean.step_start, %[[M1]] : tensor<4xf32>
// CHECK-NEXT: %[[V1:.*]] = train.read_param @bn.running_var : tensor<4xf32>
// CHECK-NEXT: train.assign @bn.running_var.step_start, %[[V1]] : tensor<4xf32>
// DYNAMIC-NEXT: train.update_loss_scale @loss_scaler.scale, @loss_scaler.growth_tracker, @loss_scaler.found_inf growth 2.000000e+00 backoff 5.000000e-01 interval 2000
// CUSTOM-NEXT: train.update_loss_scale @loss_scaler.scale, @loss_scaler.growth_tracker, @loss_scaler.found_inf growth 2.000000e+00 backoff 5.000000e-01 interval 3
// Tests that a fixed scale never changes, though steps are still skipped.
// STATIC-NEXT: train.update_loss_scale @loss_scaler.scale, @loss_scaler.growth_tracker, @loss_scaler.found_inf growth 1.000000e+00 backoff 1.000000e+00 interval 1
// CHECK-NEXT: return

// Tests that without loss scaling (bf16's default, none, fp32) nothing
// changes.
// NONE-NOT: loss_scaler
// NONE-NOT: scale_loss
// NONE-NOT: @apply_step
module @micro {
  train.param @fc.weight trainable : tensor<3x4xf32> = dense<0.5>
  train.param @bn.weight trainable : tensor<4xf32> = dense<1.0>
  train.param @bn.bias trainable : tensor<4xf32> = dense<0.0>
  train.param @bn.running_mean running_mean : tensor<4xf32> = dense<0.0>
  train.param @bn.running_var running_var : tensor<4xf32> = dense<1.0>
  func.func @loss(%arg0: tensor<2x4xf32> {train.name = "input"}, %arg1: tensor<2xi64> {train.name = "target"}) -> tensor<f32> {
    %0 = train.read_param @bn.weight : tensor<4xf32>
    %1 = train.read_param @bn.bias : tensor<4xf32>
    %mean, %variance = train.bn_stats %arg0 : (tensor<2x4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    %2 = train.bn_apply %arg0, %mean, %variance, %0, %1 epsilon 9.99999974E-6 : tensor<2x4xf32>, tensor<4xf32>
    train.bn_running_update @bn.running_mean, @bn.running_var, %mean, %variance momentum 1.000000e-01 count 2 : tensor<4xf32>
    %3 = train.read_param @fc.weight : tensor<3x4xf32>
    %4 = train.gemm %2, %3 {trans_b = true} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
    %5 = train.softmax_cross_entropy %4, %arg1 reduction mean : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<f32>
    return %5 : tensor<f32>
  }
}

// FP32: error: --loss-scale dynamic needs --precision fp16 or bf16: fp32 gradients do not underflow
// ZERO: error: --loss-scale must be positive, got 0
// NEGATIVE: error: --loss-scale must be positive, got -4
// WORD: error: --loss-scale must be dynamic, none or a number, got 'big'
// HUGE: error: --loss-scale-init must be a positive f32 number
// INTERVAL: error: --loss-scale-growth-interval must be positive, got 0

//--- step.mlir

// Tests that with statistics pooled over the step (bn-stats=step) the
// running statistics, updated once in @apply_step, are skipped instead of
// backed up.
// STEP-NOT: step_backup
// STEP-LABEL: func.func @apply_step
// STEP-NEXT: train.unscale_check_finite @loss_scaler.scale, @loss_scaler.found_inf
// STEP-NEXT: %[[F:.*]] = train.read_param @loss_scaler.found_inf : tensor<f32>
// STEP: train.bn_running_update @bn.running_mean, @bn.running_var, %{{.*}}, %{{.*}} momentum 1.000000e-01 count 2 batches %{{.*}} skip_if %[[F]] : tensor<4xf32>, tensor<f32>
// STEP: train.update_loss_scale
// STEP-NEXT: return
module @step {
  train.param @bn.weight trainable : tensor<4xf32> = dense<1.0>
  train.param @bn.bias trainable : tensor<4xf32> = dense<0.0>
  train.param @bn.running_mean running_mean : tensor<4xf32> = dense<0.0>
  train.param @bn.running_var running_var : tensor<4xf32> = dense<1.0>
  train.param @bn.mean_sum bn_accumulator : tensor<4xf32>
  train.param @bn.var_sum bn_accumulator : tensor<4xf32>
  train.param @bn.batches bn_accumulator : tensor<f32>
  func.func @loss(%arg0: tensor<2x4xf32> {train.name = "input"}) -> tensor<f32> {
    %0 = train.read_param @bn.weight : tensor<4xf32>
    %1 = train.read_param @bn.bias : tensor<4xf32>
    %mean, %variance = train.bn_stats %arg0 : (tensor<2x4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    %2 = train.bn_apply %arg0, %mean, %variance, %0, %1 epsilon 9.99999974E-6 : tensor<2x4xf32>, tensor<4xf32>
    %3 = train.reduce_sum %2 axes [0, 1] : (tensor<2x4xf32>) -> tensor<f32>
    return %3 : tensor<f32>
  }
  func.func @apply_step(%arg0: f32 {train.name = "lr"}, %arg1: i64 {train.name = "step"}) {
    %0 = train.read_param @bn.mean_sum : tensor<4xf32>
    %1 = train.read_param @bn.var_sum : tensor<4xf32>
    %2 = train.read_param @bn.batches : tensor<f32>
    train.bn_running_update @bn.running_mean, @bn.running_var, %0, %1 momentum 1.000000e-01 count 2 batches %2 : tensor<4xf32>, tensor<f32>
    return
  }
}

//--- f64-loss.mlir

// Tests that the loss to scale is an f32 scalar (an f64 model's is not).
module {
  // expected-error @below {{loss scaling needs an f32 scalar loss, got 'tensor<f64>'}}
  func.func @loss(%arg0: tensor<2xf64>) -> tensor<f64> {
    %0 = train.reduce_sum %arg0 axes [0] : (tensor<2xf64>) -> tensor<f64>
    return %0 : tensor<f64>
  }
}

//--- no-loss.mlir

// Tests that the pass needs the loss function append-loss builds.
// expected-error @below {{expected a @loss function with one result (run traincc-append-loss first)}}
module {
}
