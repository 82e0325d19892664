// RUN: traincc-opt %s -split-input-file -traincc-lower-state | FileCheck %s

// Tests that parameter reads become leading arguments in first-use order and
// that a function without state is left alone.
// CHECK-LABEL: func.func @reads
// CHECK-SAME: (%[[W:.*]]: tensor<4xf32> {train.state = @w}, %[[B:.*]]: tensor<4xf32> {train.state = @b}, %[[X:.*]]: tensor<4xf32>)
// CHECK-NOT: train.read_param
// CHECK: %[[S:.*]] = arith.addf
// CHECK: return %[[S]] : tensor<4xf32>
// CHECK-LABEL: func.func @stateless(%{{.*}}: tensor<2xf32>) -> tensor<2xf32>
train.param @w trainable : tensor<4xf32>
train.param @b trainable : tensor<4xf32>
func.func @reads(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = train.read_param @w : tensor<4xf32>
  %b = train.read_param @b : tensor<4xf32>
  %s = arith.addf %w, %b : tensor<4xf32>
  return %s : tensor<4xf32>
}
func.func @stateless(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// Tests that accumulate becomes a destination-passing linalg.generic on the
// buffer's argument and that the final value is returned as a state result.
// CHECK-LABEL: func.func @accumulate
// CHECK-SAME: (%[[G:.*]]: tensor<4xf32> {train.state = @w.grad}, %[[V:.*]]: tensor<4xf32>, %[[S:.*]]: f32) -> (tensor<4xf32> {train.state = @w.grad})
// CHECK: %[[NEW:.*]] = linalg.generic {{.*}} ins(%[[V]], %[[S]] : tensor<4xf32>, f32) outs(%[[G]] : tensor<4xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: return %[[NEW]]
train.param @w trainable : tensor<4xf32>
train.param @w.grad gradient : tensor<4xf32>
func.func @accumulate(%v: tensor<4xf32>, %s: f32) {
  train.accumulate @w.grad, %v scale %s : tensor<4xf32>
  return
}

// -----

// Tests that an SGD step with momentum updates parameter and buffer in one
// generic (buffer = gradient on step 1), and that zero becomes a fill of the
// gradient's current value.
// CHECK-LABEL: func.func @sgd
// CHECK-SAME: (%[[G:.*]]: tensor<4xf32> {train.state = @w.grad}, %[[M:.*]]: tensor<4xf32> {train.state = @w.momentum_buffer}, %[[P:.*]]: tensor<4xf32> {train.state = @w}
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : i64
// CHECK: %[[UPD:.*]]:2 = linalg.generic {{.*}} ins(%[[G]], {{.*}}) outs(%[[P]], %[[M]] : tensor<4xf32>, tensor<4xf32>)
// CHECK: arith.select
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[G]] : tensor<4xf32>)
// CHECK: return %[[UPD]]#0, %[[UPD]]#1, %[[Z]]
train.param @w trainable : tensor<4xf32>
train.param @w.grad gradient : tensor<4xf32>
train.param @w.momentum_buffer optimizer_state : tensor<4xf32>
func.func @sgd(%lr: f32, %step: i64) {
  train.sgd_update @w, @w.grad, @w.momentum_buffer lr %lr step %step {momentum = 9.0e-01 : f32}
  train.zero @w.grad
  return
}

// -----

// Tests that Adam computes its bias corrections in f64 from the step count
// and updates parameter and both moments in one generic.
// CHECK-LABEL: func.func @adam
// CHECK: arith.sitofp %{{.*}} : i64 to f64
// CHECK: math.powf
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: math.sqrt
train.param @w trainable : tensor<4xf32>
train.param @w.grad gradient : tensor<4xf32>
train.param @m optimizer_state : tensor<4xf32>
train.param @v optimizer_state : tensor<4xf32>
func.func @adam(%lr: f32, %step: i64) {
  train.adam_update @w, @w.grad, @m, @v lr %lr step %step
  return
}

// -----

// Tests that a running-statistics update applies the unbiased correction
// n / (n - 1), with n scaled by the pooled micro-batch count when given.
// CHECK-LABEL: func.func @running
// CHECK: %[[COUNT:.*]] = arith.constant 8.000000e+00 : f32
// CHECK: %[[N:.*]] = tensor.extract
// CHECK: %[[TOTAL:.*]] = arith.mulf %[[COUNT]], %[[N]]
// CHECK: arith.subf %[[TOTAL]]
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xf32>)
train.param @rm running_mean : tensor<3xf32>
train.param @rv running_var : tensor<3xf32>
func.func @running(%mean: tensor<3xf32>, %var: tensor<3xf32>, %k: tensor<f32>) {
  train.bn_running_update @rm, @rv, %mean, %var momentum 1.0e-01 count 8 batches %k : tensor<3xf32>, tensor<f32>
  return
}
