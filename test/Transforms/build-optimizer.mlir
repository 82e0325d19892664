// RUN: split-file %s %t --leading-lines
// RUN: traincc-opt %t/params.mlir -traincc-build-optimizer | FileCheck %s --check-prefixes=CHECK,SGD
// RUN: traincc-opt %t/params.mlir -traincc-build-optimizer='momentum=0.9 dampening=0.1 weight-decay=0.01' | FileCheck %s --check-prefixes=CHECK,MOM
// RUN: traincc-opt %t/params.mlir -traincc-build-optimizer='momentum=0.9 nesterov=true' | FileCheck %s --check-prefixes=CHECK,NEST
// RUN: traincc-opt %t/params.mlir -traincc-build-optimizer='optimizer=adam beta1=0.8 beta2=0.99 eps=1e-6 weight-decay=0.01' | FileCheck %s --check-prefixes=CHECK,ADAM
// RUN: traincc-opt %t/params.mlir -traincc-build-optimizer='optimizer=adamw weight-decay=0.05 no-decay=.*[.]bias|bn[.].*' | FileCheck %s --check-prefixes=CHECK,ADAMW
// RUN: traincc-opt %t/apply-step.mlir -split-input-file -verify-diagnostics -traincc-build-optimizer | FileCheck %s --check-prefix=APPLY
// RUN: not traincc-opt %t/unknown-optimizer.mlir -traincc-build-optimizer=optimizer=rmsprop 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: traincc-opt %t/invalid-no-decay.mlir -verify-diagnostics -traincc-build-optimizer='weight-decay=0.1 no-decay=bias)|(.*'
// RUN: traincc-opt %t/nesterov-without-momentum.mlir -verify-diagnostics -traincc-build-optimizer=nesterov=true
// RUN: traincc-opt %t/mixed-precision.mlir -traincc-build-optimizer='optimizer=adam' | FileCheck %s --check-prefix=MIXED

//--- params.mlir

// Tests that each trainable parameter with a gradient buffer gets one
// update in a new @apply_step(lr, step), followed by clearing its gradient,
// in declaration order; frozen parameters, BatchNorm state and parameters
// without a gradient get none.
// CHECK-LABEL: module attributes
// SGD-SAME: train.optimizer = "sgd"
// ADAM-SAME: train.optimizer = "adam"
// ADAMW-SAME: train.optimizer = "adamw"

// Plain SGD needs no state.
// SGD-NOT: optimizer_state

// SGD with momentum: one buffer per parameter.
// MOM: train.param @fc.weight trainable
// MOM-NEXT: train.param @fc.weight.momentum_buffer optimizer_state : tensor<3x4xf32>
// MOM: train.param @fc.bias trainable
// MOM-NEXT: train.param @fc.bias.momentum_buffer optimizer_state : tensor<3xf32>
// MOM-NOT: @frozen.momentum_buffer
// MOM-NOT: @bn.running_mean.momentum_buffer
// MOM-NOT: @no_grad.momentum_buffer

// Adam and AdamW: two moments per parameter.
// ADAM: train.param @fc.weight trainable
// ADAM-DAG: train.param @fc.weight.exp_avg optimizer_state : tensor<3x4xf32>
// ADAM-DAG: train.param @fc.weight.exp_avg_sq optimizer_state : tensor<3x4xf32>
// ADAM: train.param @fc.bias trainable
// ADAMW: train.param @fc.weight.exp_avg_sq optimizer_state
// ADAMW: train.param @fc.weight.exp_avg optimizer_state

// CHECK: func.func @apply_step(%[[LR:.*]]: f32 {train.name = "lr"}, %[[STEP:.*]]: i64 {train.name = "step"})
// SGD-NEXT: train.sgd_update @fc.weight, @fc.weight.grad lr %[[LR]] step %[[STEP]]{{$}}
// SGD-NEXT: train.zero @fc.weight.grad
// SGD-NEXT: train.sgd_update @fc.bias, @fc.bias.grad lr %[[LR]] step %[[STEP]]{{$}}
// SGD-NEXT: train.zero @fc.bias.grad
// SGD-NEXT: train.sgd_update @bn.weight, @bn.weight.grad lr %[[LR]] step %[[STEP]]{{$}}
// SGD-NEXT: train.zero @bn.weight.grad
// SGD-NEXT: return
// MOM-NEXT: train.sgd_update @fc.weight, @fc.weight.grad, @fc.weight.momentum_buffer lr %[[LR]] step %[[STEP]] {dampening = 1.000000e-01 : f32, momentum = 0.899999976 : f32, weight_decay = 0.00999999977 : f32}
// MOM-NEXT: train.zero @fc.weight.grad
// MOM-NEXT: train.sgd_update @fc.bias, @fc.bias.grad, @fc.bias.momentum_buffer lr %[[LR]] step %[[STEP]] {dampening = 1.000000e-01 : f32, momentum = 0.899999976 : f32, weight_decay = 0.00999999977 : f32}
// NEST-NEXT: train.sgd_update @fc.weight, @fc.weight.grad, @fc.weight.momentum_buffer lr %[[LR]] step %[[STEP]] {momentum = 0.899999976 : f32, nesterov = true}
// ADAM-NEXT: train.adam_update @fc.weight, @fc.weight.grad, @fc.weight.exp_avg, @fc.weight.exp_avg_sq lr %[[LR]] step %[[STEP]] {beta1 = 8.000000e-01 : f32, beta2 = 9.900000e-01 : f32, epsilon = 9.99999997E-7 : f32, weight_decay = 0.00999999977 : f32}
// ADAM-NEXT: train.zero @fc.weight.grad
// ADAM-NEXT: train.adam_update @fc.bias, @fc.bias.grad, @fc.bias.exp_avg, @fc.bias.exp_avg_sq lr %[[LR]] step %[[STEP]] {beta1 = 8.000000e-01 : f32, beta2 = 9.900000e-01 : f32, epsilon = 9.99999997E-7 : f32, weight_decay = 0.00999999977 : f32}

// Tests that no-decay exempts matching parameters from weight decay only.
// ADAMW-NEXT: train.adam_update @fc.weight, @fc.weight.grad, @fc.weight.exp_avg, @fc.weight.exp_avg_sq lr %[[LR]] step %[[STEP]] {decoupled = true, weight_decay = 5.000000e-02 : f32}
// ADAMW-NEXT: train.zero @fc.weight.grad
// ADAMW-NEXT: train.adam_update @fc.bias, @fc.bias.grad, @fc.bias.exp_avg, @fc.bias.exp_avg_sq lr %[[LR]] step %[[STEP]] {decoupled = true}
// ADAMW-NEXT: train.zero @fc.bias.grad
// ADAMW-NEXT: train.adam_update @bn.weight, @bn.weight.grad, @bn.weight.exp_avg, @bn.weight.exp_avg_sq lr %[[LR]] step %[[STEP]] {decoupled = true}
// ADAMW-NEXT: train.zero @bn.weight.grad
// ADAMW-NEXT: return
// CHECK-NOT: @frozen,
// CHECK-NOT: @no_grad,
// CHECK-NOT: @bn.running_mean,
module {
  train.param @fc.weight trainable : tensor<3x4xf32>
  train.param @fc.weight.grad gradient : tensor<3x4xf32>
  train.param @fc.bias trainable : tensor<3xf32>
  train.param @fc.bias.grad gradient : tensor<3xf32>
  train.param @frozen frozen : tensor<3xf32>
  train.param @no_grad trainable : tensor<3xf32>
  train.param @bn.weight trainable : tensor<3xf32>
  train.param @bn.weight.grad gradient : tensor<3xf32>
  train.param @bn.running_mean running_mean : tensor<3xf32>
}

//--- apply-step.mlir

// Tests that the updates go first into an @apply_step an earlier pass made
// (the pooled BatchNorm update of bn-stats=step), before what it holds.
// APPLY-LABEL: module @pooled_bn
// APPLY: func.func @apply_step(%[[LR:.*]]: f32, %[[STEP:.*]]: i64)
// APPLY-NEXT: train.sgd_update @w, @w.grad lr %[[LR]] step %[[STEP]]
// APPLY-NEXT: train.zero @w.grad
// APPLY-NEXT: train.zero @bn.pooled
// APPLY-NEXT: return
// APPLY-NOT: func.func @apply_step
module @pooled_bn {
  train.param @w trainable : tensor<3xf32>
  train.param @w.grad gradient : tensor<3xf32>
  train.param @bn.pooled bn_accumulator : tensor<3xf32>
  func.func @apply_step(%lr: f32, %step: i64) {
    train.zero @bn.pooled
    return
  }
}

// -----

// Tests that a model with nothing to train still gets an (empty)
// @apply_step.
// APPLY-LABEL: module @nothing
// APPLY: func.func @apply_step(%{{.*}}: f32 {train.name = "lr"}, %{{.*}}: i64 {train.name = "step"}) {
// APPLY-NEXT: return
module @nothing {
  train.param @w frozen : tensor<3xf32>
}

// -----

// Tests that an existing @apply_step of another type is refused.
module {
  train.param @w trainable : tensor<3xf32>
  train.param @w.grad gradient : tensor<3xf32>
  // expected-error @+1 {{@apply_step must be a function with a body and the type '(f32, i64) -> ()' (lr, step)}}
  func.func @apply_step(%lr: f32) {
    return
  }
}

//--- unknown-optimizer.mlir

// Tests that an unknown optimizer is refused when the option is parsed.
// UNKNOWN: for the --optimizer option: Cannot find option named 'rmsprop'!
module {
}

//--- invalid-no-decay.mlir

// Tests that a no-decay regex is checked as written, before anchoring.
// expected-error @+1 {{invalid --no-decay regex 'bias)|(.*': parentheses not balanced}}
module {
}

//--- nesterov-without-momentum.mlir

// Tests that Nesterov momentum without momentum is refused (by the update's
// verifier, PyTorch refuses it too).
module {
  // expected-error @+1 {{'train.sgd_update' op nesterov needs momentum and zero dampening}}
  train.param @w trainable : tensor<3xf32>
  train.param @w.grad gradient : tensor<3xf32>
}

//--- mixed-precision.mlir

// Tests that under loss scaling the updates come after the unscaling and
// are skipped on its found_inf flag, and that a weight with a
// low-precision copy has the copy rewritten by its update.
// MIXED-LABEL: func.func @apply_step
// MIXED-NEXT: train.unscale_check_finite @loss_scaler.scale, @loss_scaler.found_inf
// MIXED-NEXT: %[[F:.*]] = train.read_param @loss_scaler.found_inf : tensor<f32>
// MIXED-NEXT: train.adam_update @w, @w.grad, @w.exp_avg, @w.exp_avg_sq weight_copy @w.bf16 lr %{{.*}} step %{{.*}} skip_if %[[F]]
// MIXED-NEXT: train.zero @w.grad
// MIXED-NEXT: train.adam_update @b, @b.grad, @b.exp_avg, @b.exp_avg_sq lr %{{.*}} step %{{.*}} skip_if %[[F]]
// MIXED-NEXT: train.zero @b.grad
// MIXED-NEXT: train.update_loss_scale
module {
  train.param @w trainable : tensor<3x4xf32>
  train.param @w.grad gradient : tensor<3x4xf32>
  train.param @w.bf16 weight_copy : tensor<3x4xbf16> {source = @w}
  train.param @b trainable : tensor<3xf32>
  train.param @b.grad gradient : tensor<3xf32>
  train.param @loss_scaler.scale loss_scaler : tensor<f32> = dense<65536.0>
  train.param @loss_scaler.growth_tracker loss_scaler : tensor<i64> = dense<0>
  train.param @loss_scaler.found_inf loss_scaler : tensor<f32> = dense<0.0>
  func.func @apply_step(%lr: f32 {train.name = "lr"}, %step: i64 {train.name = "step"}) {
    train.unscale_check_finite @loss_scaler.scale, @loss_scaler.found_inf
    train.update_loss_scale @loss_scaler.scale, @loss_scaler.growth_tracker, @loss_scaler.found_inf growth 2.0 backoff 0.5 interval 2000
    return
  }
}
