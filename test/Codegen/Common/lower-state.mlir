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

// -----

// Tests that an SGD step with weight_copy and skip_if is one generic that
// also writes the new parameter rounded to bf16 into the copy, reads the
// flag in the kernel, and keeps every old value where the flag is set.
// CHECK-LABEL: func.func @sgd_copy_skip
// CHECK-SAME: (%[[F:.*]]: tensor<f32> {train.state = @found_inf}, %[[G:.*]]: tensor<4xf32> {train.state = @w.grad}, %[[P:.*]]: tensor<4xf32> {train.state = @w}, %[[C:.*]]: tensor<4xbf16> {train.state = @w.bf16}
// CHECK: %[[UPD:.*]]:2 = linalg.generic {{.*}} ins(%[[G]], %{{.*}}, %{{.*}}, %[[F]] : tensor<4xf32>, f32, f32, tensor<f32>) outs(%[[P]], %[[C]] : tensor<4xf32>, tensor<4xbf16>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %[[FLAG:.*]]: f32, %[[OLDP:.*]]: f32, %[[OLDC:.*]]: bf16):
// CHECK: %[[NEWP:.*]] = arith.subf %[[OLDP]]
// CHECK: %[[NEWC:.*]] = arith.truncf %[[NEWP]] : f32 to bf16
// CHECK: %[[SKIP:.*]] = arith.cmpf une, %[[FLAG]]
// CHECK: %[[P2:.*]] = arith.select %[[SKIP]], %[[OLDP]], %[[NEWP]] : f32
// CHECK: %[[C2:.*]] = arith.select %[[SKIP]], %[[OLDC]], %[[NEWC]] : bf16
// CHECK: linalg.yield %[[P2]], %[[C2]]
// CHECK: return %[[UPD]]#0, %[[UPD]]#1
train.param @w trainable : tensor<4xf32>
train.param @w.grad gradient : tensor<4xf32>
train.param @w.bf16 weight_copy : tensor<4xbf16> {source = @w}
train.param @found_inf loss_scaler : tensor<f32>
func.func @sgd_copy_skip(%lr: f32, %step: i64) {
  %found = train.read_param @found_inf : tensor<f32>
  train.sgd_update @w, @w.grad weight_copy @w.bf16 lr %lr step %step skip_if %found
  return
}

// -----

// Tests that Adam's weight copy is a fourth output of its generic, and that
// without skip_if no flag is read.
// CHECK-LABEL: func.func @adam_copy
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf16>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-NOT: arith.cmpf
// CHECK-NOT: arith.select
// CHECK: linalg.yield
train.param @w trainable : tensor<4xf32>
train.param @w.grad gradient : tensor<4xf32>
train.param @w.f16 weight_copy : tensor<4xf16> {source = @w}
train.param @m optimizer_state : tensor<4xf32>
train.param @v optimizer_state : tensor<4xf32>
func.func @adam_copy(%lr: f32, %step: i64) {
  train.adam_update @w, @w.grad, @m, @v weight_copy @w.f16 lr %lr step %step
  return
}

// -----

// Tests that a skipped running-statistics update keeps both statistics.
// CHECK-LABEL: func.func @running_skip
// CHECK-SAME: (%[[RM:.*]]: tensor<3xf32> {train.state = @rm}, %[[RV:.*]]: tensor<3xf32> {train.state = @rv}, %{{.*}}: tensor<3xf32>, %{{.*}}: tensor<3xf32>, %[[F:.*]]: tensor<f32>)
// CHECK: linalg.generic {{.*}}, %[[F]] : tensor<3xf32>, tensor<3xf32>, f32, f32, f32, tensor<f32>) outs(%[[RM]], %[[RV]] : tensor<3xf32>, tensor<3xf32>)
// CHECK: %[[SKIP:.*]] = arith.cmpf une
// CHECK: arith.select %[[SKIP]]
// CHECK: arith.select %[[SKIP]]
train.param @rm running_mean : tensor<3xf32>
train.param @rv running_var : tensor<3xf32>
func.func @running_skip(%mean: tensor<3xf32>, %var: tensor<3xf32>, %found: tensor<f32>) {
  train.bn_running_update @rm, @rv, %mean, %var momentum 1.0e-01 count 8 skip_if %found : tensor<3xf32>
  return
}

// -----

// Tests that assign with only_if selects between the value and the old
// contents where the flag is set, and that a plain assign stays a copy.
// CHECK-LABEL: func.func @assign_only_if
// CHECK-SAME: (%[[B:.*]]: tensor<3xf32> {train.state = @b}, %[[V:.*]]: tensor<3xf32>, %[[F:.*]]: tensor<f32>)
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[V]], %[[F]] : tensor<3xf32>, tensor<f32>) outs(%[[B]] : tensor<3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[FLAG:.*]]: f32, %[[OLD:.*]]: f32):
// CHECK: %[[SET:.*]] = arith.cmpf une, %[[FLAG]]
// CHECK: arith.select %[[SET]], %[[IN]], %[[OLD]]
// CHECK: %[[C:.*]] = linalg.copy ins(%[[V]] : tensor<3xf32>) outs(%[[R]] : tensor<3xf32>)
// CHECK: return %[[C]]
train.param @b running_mean : tensor<3xf32>
func.func @assign_only_if(%v: tensor<3xf32>, %found: tensor<f32>) {
  train.assign @b, %v only_if %found : tensor<3xf32>
  train.assign @b, %v : tensor<3xf32>
  return
}

// -----

// Tests that unscale_check_finite multiplies every gradient (and nothing
// else) by the f32 rounding of the f64 reciprocal of the scale, sums
// non-finite indicators of all gradients into found_inf and clamps it to 1.
// CHECK-LABEL: func.func @unscale
// CHECK-SAME: (%[[F:.*]]: tensor<f32> {train.state = @found_inf}, %[[S:.*]]: tensor<f32> {train.state = @scale}, %[[GA:.*]]: tensor<4xf32> {train.state = @a.grad}, %[[GB:.*]]: tensor<2x3xf32> {train.state = @b.grad})
// CHECK: %[[SCALE:.*]] = tensor.extract %[[S]][]
// CHECK: %[[WIDE:.*]] = arith.extf %[[SCALE]] : f32 to f64
// CHECK: %[[RECIP:.*]] = arith.divf %{{.*}}, %[[WIDE]] : f64
// CHECK: %[[INV:.*]] = arith.truncf %[[RECIP]] : f64 to f32
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[F]] : tensor<f32>)
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%[[INV]] : f32) outs(%[[GA]] : tensor<4xf32>)
// CHECK: arith.mulf
// CHECK: %[[SA:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[A]] : tensor<4xf32>) outs(%[[ZERO]] : tensor<f32>)
// CHECK: math.absf
// CHECK: arith.cmpf one
// CHECK: arith.addf
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%[[INV]] : f32) outs(%[[GB]] : tensor<2x3xf32>)
// CHECK: %[[SB:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[B]] : tensor<2x3xf32>) outs(%[[SA]] : tensor<f32>)
// CHECK: %[[FOUND:.*]] = linalg.generic {{.*}} outs(%[[SB]] : tensor<f32>)
// CHECK: arith.minimumf
// CHECK: return %[[A]], %[[B]], %[[FOUND]]
train.param @a trainable : tensor<4xf32>
train.param @a.grad gradient : tensor<4xf32>
train.param @b.grad gradient : tensor<2x3xf32>
train.param @scale loss_scaler : tensor<f32>
train.param @found_inf loss_scaler : tensor<f32>
func.func @unscale() {
  train.unscale_check_finite @scale, @found_inf
  return
}

// -----

// Tests that update_loss_scale is one 0-d generic over scale and growth
// tracker: back off and reset on overflow, else count, and grow (if the
// grown scale is finite) and reset at the interval.
// CHECK-LABEL: func.func @update_scale
// CHECK-SAME: (%[[F:.*]]: tensor<f32> {train.state = @found_inf}, %[[T:.*]]: tensor<i64> {train.state = @tracker}, %[[S:.*]]: tensor<f32> {train.state = @scale})
// CHECK: %[[NEW:.*]]:2 = linalg.generic {{.*}} iterator_types = []} ins(%[[F]] : tensor<f32>) outs(%[[S]], %[[T]] : tensor<f32>, tensor<i64>)
// CHECK-NEXT: ^bb0(%[[FOUND:.*]]: f32, %[[SCALE:.*]]: f32, %[[COUNT:.*]]: i64):
// CHECK: %[[BACKOFF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[SHRUNK:.*]] = arith.mulf %[[SCALE]], %[[BACKOFF]]
// CHECK: %[[NEXT:.*]] = arith.addi %[[COUNT]]
// CHECK: %[[INTERVAL:.*]] = arith.constant 2000 : i64
// CHECK: %[[DUE:.*]] = arith.cmpi eq, %[[NEXT]], %[[INTERVAL]]
// CHECK: %[[GROWTH:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[GROWN:.*]] = arith.mulf %[[SCALE]], %[[GROWTH]]
// CHECK: math.absf %[[GROWN]]
// CHECK: arith.select %[[DUE]]
// CHECK: %[[SKIP:.*]] = arith.cmpf une, %[[FOUND]]
// CHECK: %[[S2:.*]] = arith.select %[[SKIP]], %[[SHRUNK]]
// CHECK: %[[T2:.*]] = arith.select %[[SKIP]]
// CHECK: linalg.yield %[[S2]], %[[T2]]
// CHECK: return %[[NEW]]#0, %[[NEW]]#1
train.param @scale loss_scaler : tensor<f32>
train.param @tracker loss_scaler : tensor<i64>
train.param @found_inf loss_scaler : tensor<f32>
func.func @update_scale() {
  train.update_loss_scale @scale, @tracker, @found_inf growth 2.0 backoff 5.0e-01 interval 2000
  return
}
