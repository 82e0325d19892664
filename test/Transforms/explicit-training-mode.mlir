// RUN: split-file %s %t --leading-lines
// RUN: traincc-opt %t/micro.mlir -split-input-file -verify-diagnostics -traincc-explicit-training-mode | FileCheck %s
// RUN: traincc-opt %t/micro.mlir -split-input-file -verify-diagnostics -traincc-explicit-training-mode=bn-stats=micro | FileCheck %s
// RUN: traincc-opt %t/step.mlir -split-input-file -verify-diagnostics -traincc-explicit-training-mode='bn-stats=step' | FileCheck %s --check-prefix=STEP
// RUN: not traincc-opt %t/unknown-bn-stats.mlir -traincc-explicit-training-mode=bn-stats=batch 2>&1 | FileCheck %s --check-prefix=UNKNOWN

//--- micro.mlir

// Tests that a training BatchNorm becomes batch statistics, normalisation
// with them and one running-statistics update per micro-batch counting
// N*H*W values per channel, while @eval_step normalises with the running
// statistics; @loss gets a trailing seed argument.
// CHECK-LABEL: module @conv_bn
// CHECK: func.func @loss(%[[X:.*]]: tensor<2x3x4x5xf32>, %{{.*}}: i64 {train.name = "seed"}) -> tensor<f32>
// CHECK: %[[G:.*]] = train.read_param @bn.weight
// CHECK: %[[B:.*]] = train.read_param @bn.bias
// CHECK: %[[MEAN:.*]], %[[VAR:.*]] = train.bn_stats %[[X]] : (tensor<2x3x4x5xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK: %[[Y:.*]] = train.bn_apply %[[X]], %[[MEAN]], %[[VAR]], %[[G]], %[[B]] epsilon 9.99999974E-6
// CHECK: train.bn_running_update @bn.running_mean, @bn.running_var, %[[MEAN]], %[[VAR]] momentum 1.000000e-01 count 40 : tensor<3xf32>
// CHECK: train.reduce_sum %[[Y]]
// CHECK-NOT: train.batch_norm
// CHECK: func.func @eval_step(%[[EX:.*]]: tensor<2x3x4x5xf32>) -> (tensor<f32>, tensor<2xf32>)
// CHECK-DAG: %[[EG:.*]] = train.read_param @bn.weight
// CHECK-DAG: %[[EB:.*]] = train.read_param @bn.bias
// CHECK-DAG: %[[RM:.*]] = train.read_param @bn.running_mean
// CHECK-DAG: %[[RV:.*]] = train.read_param @bn.running_var
// CHECK: train.bn_apply %[[EX]], %[[RM]], %[[RV]], %[[EG]], %[[EB]] epsilon 9.99999974E-6
// CHECK-NOT: train.bn_stats
// CHECK-NOT: train.bn_running_update
// CHECK-NOT: train.batch_norm
module @conv_bn {
  train.param @bn.weight trainable : tensor<3xf32>
  train.param @bn.bias trainable : tensor<3xf32>
  train.param @bn.running_mean running_mean : tensor<3xf32>
  train.param @bn.running_var running_var : tensor<3xf32>
  func.func @loss(%x: tensor<2x3x4x5xf32>) -> tensor<f32> {
    %g = train.read_param @bn.weight : tensor<3xf32>
    %b = train.read_param @bn.bias : tensor<3xf32>
    %m = train.read_param @bn.running_mean : tensor<3xf32>
    %v = train.read_param @bn.running_var : tensor<3xf32>
    %y = train.batch_norm %x, %g, %b, %m, %v epsilon 1.0e-05 momentum 1.0e-01 : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>
    %l = train.reduce_sum %y axes [0, 1, 2, 3] : (tensor<2x3x4x5xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
  func.func @eval_step(%x: tensor<2x3x4x5xf32>) -> (tensor<f32>, tensor<2xf32>) {
    %g = train.read_param @bn.weight : tensor<3xf32>
    %b = train.read_param @bn.bias : tensor<3xf32>
    %m = train.read_param @bn.running_mean : tensor<3xf32>
    %v = train.read_param @bn.running_var : tensor<3xf32>
    %y = train.batch_norm %x, %g, %b, %m, %v epsilon 1.0e-05 momentum 1.0e-01 : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>
    %l = train.reduce_sum %y axes [0, 1, 2, 3] : (tensor<2x3x4x5xf32>) -> tensor<f32>
    %s = train.broadcast_to %l : tensor<f32> -> tensor<2xf32>
    return %l, %s : tensor<f32>, tensor<2xf32>
  }
}

// -----

// Tests that a BatchNorm over [N, C] (BatchNorm1d) counts N values per
// channel and keeps the model's momentum.
// CHECK-LABEL: module @dense_bn
// CHECK: train.bn_stats %{{.*}} : (tensor<8x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK: train.bn_running_update @bn.running_mean, @bn.running_var, %{{.*}}, %{{.*}} momentum 2.500000e-01 count 8 : tensor<3xf32>
module @dense_bn {
  train.param @bn.weight trainable : tensor<3xf32>
  train.param @bn.bias trainable : tensor<3xf32>
  train.param @bn.running_mean running_mean : tensor<3xf32>
  train.param @bn.running_var running_var : tensor<3xf32>
  func.func @loss(%x: tensor<8x3xf32>) -> tensor<8x3xf32> {
    %g = train.read_param @bn.weight : tensor<3xf32>
    %b = train.read_param @bn.bias : tensor<3xf32>
    %m = train.read_param @bn.running_mean : tensor<3xf32>
    %v = train.read_param @bn.running_var : tensor<3xf32>
    %y = train.batch_norm %x, %g, %b, %m, %v epsilon 1.0e-05 momentum 2.5e-01 : (tensor<8x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
    return %y : tensor<8x3xf32>
  }
  func.func @eval_step(%x: tensor<8x3xf32>) -> tensor<8x3xf32> {
    return %x : tensor<8x3xf32>
  }
}

// -----

// Tests that each dropout of @loss becomes a multiplication by a mask of
// its own stream keyed by the seed argument, and that @eval_step drops
// dropout altogether.
// CHECK-LABEL: module @dropout
// CHECK: func.func @loss(%[[X:.*]]: tensor<4x6xf32>, %[[T:.*]]: tensor<4xi64>, %[[SEED:.*]]: i64 {train.name = "seed"})
// CHECK: %[[M0:.*]] = train.dropout_mask %[[SEED]] ratio 5.000000e-01 stream 0 : tensor<4x6xf32>
// CHECK: %[[D0:.*]] = train.mul %[[X]], %[[M0]]
// CHECK: %[[R:.*]] = train.relu %[[D0]]
// CHECK: %[[M1:.*]] = train.dropout_mask %[[SEED]] ratio 2.000000e-01 stream 1 : tensor<4x6xf32>
// CHECK: %[[D1:.*]] = train.mul %[[R]], %[[M1]]
// CHECK: train.softmax_cross_entropy %[[D1]], %[[T]] reduction mean
// CHECK: func.func @eval_step(%[[EX:.*]]: tensor<4x6xf32>, %[[ET:.*]]: tensor<4xi64>) -> (tensor<4x6xf32>, tensor<4xf32>)
// CHECK-NOT: train.dropout
// CHECK: %[[ER:.*]] = train.relu %[[EX]]
// CHECK-NOT: train.dropout
// CHECK: train.softmax_cross_entropy %[[ER]], %[[ET]] reduction none
module @dropout {
  func.func @loss(%x: tensor<4x6xf32>, %t: tensor<4xi64>) -> tensor<f32> {
    %d = train.dropout %x ratio 5.0e-01 : tensor<4x6xf32>
    %r = train.relu %d : tensor<4x6xf32>
    %e = train.dropout %r ratio 2.0e-01 : tensor<4x6xf32>
    %l = train.softmax_cross_entropy %e, %t reduction mean : (tensor<4x6xf32>, tensor<4xi64>) -> tensor<f32>
    return %l : tensor<f32>
  }
  func.func @eval_step(%x: tensor<4x6xf32>, %t: tensor<4xi64>) -> (tensor<4x6xf32>, tensor<4xf32>) {
    %d = train.dropout %x ratio 5.0e-01 : tensor<4x6xf32>
    %r = train.relu %d : tensor<4x6xf32>
    %e = train.dropout %r ratio 2.0e-01 : tensor<4x6xf32>
    %l = train.softmax_cross_entropy %e, %t reduction none : (tensor<4x6xf32>, tensor<4xi64>) -> tensor<4xf32>
    return %e, %l : tensor<4x6xf32>, tensor<4xf32>
  }
}

// -----

// Tests that a model without BatchNorm or dropout still gets the seed
// argument (the runtime calls every model alike) and nothing else.
// CHECK-LABEL: module @plain
// CHECK: func.func @loss(%{{.*}}: tensor<4x6xf32>, %{{.*}}: i64 {train.name = "seed"}) -> tensor<f32>
// CHECK-NOT: train.dropout_mask
// CHECK: func.func @eval_step(%{{.*}}: tensor<4x6xf32>) -> tensor<f32>
// CHECK-NOT: func.func @apply_step
module @plain {
  func.func @loss(%x: tensor<4x6xf32>) -> tensor<f32> {
    %l = train.reduce_sum %x axes [0, 1] : (tensor<4x6xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
  func.func @eval_step(%x: tensor<4x6xf32>) -> tensor<f32> {
    %l = train.reduce_sum %x axes [0, 1] : (tensor<4x6xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that the pass needs the functions append-loss makes.
// expected-error @+1 {{expected @loss and @eval_step (run traincc-append-loss first)}}
module {
  func.func @forward(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
    return %x : tensor<4x6xf32>
  }
}

// -----

// Tests that the running statistics of a training BatchNorm must be
// parameters it can update.
module {
  train.param @bn.weight trainable : tensor<3xf32>
  train.param @bn.bias trainable : tensor<3xf32>
  func.func @loss(%x: tensor<8x3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<8x3xf32> {
    %g = train.read_param @bn.weight : tensor<3xf32>
    %b = train.read_param @bn.bias : tensor<3xf32>
    // expected-error @+1 {{running statistics of a trained BatchNorm must be parameters (ONNX initializers)}}
    %y = train.batch_norm %x, %g, %b, %m, %v epsilon 1.0e-05 momentum 1.0e-01 : (tensor<8x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
    return %y : tensor<8x3xf32>
  }
  func.func @eval_step(%x: tensor<8x3xf32>) -> tensor<8x3xf32> {
    return %x : tensor<8x3xf32>
  }
}

// -----

// Tests that a training BatchNorm with one value per channel (batch size 1,
// no spatial axes) is refused, as PyTorch does.
module {
  train.param @bn.weight trainable : tensor<3xf32>
  train.param @bn.bias trainable : tensor<3xf32>
  train.param @bn.running_mean running_mean : tensor<3xf32>
  train.param @bn.running_var running_var : tensor<3xf32>
  func.func @loss(%x: tensor<1x3xf32>) -> tensor<1x3xf32> {
    %g = train.read_param @bn.weight : tensor<3xf32>
    %b = train.read_param @bn.bias : tensor<3xf32>
    %m = train.read_param @bn.running_mean : tensor<3xf32>
    %v = train.read_param @bn.running_var : tensor<3xf32>
    // expected-error @+1 {{a BatchNorm in training needs more than one value per channel, got 1 for input 'tensor<1x3xf32>'}}
    %y = train.batch_norm %x, %g, %b, %m, %v epsilon 1.0e-05 momentum 1.0e-01 : (tensor<1x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
    return %y : tensor<1x3xf32>
  }
  func.func @eval_step(%x: tensor<1x3xf32>) -> tensor<1x3xf32> {
    return %x : tensor<1x3xf32>
  }
}

// -----

// Tests that a model whose framework updates the running variance with the
// biased batch variance (module attribute from the importer: tf2onnx and
// jax2onnx models) gets it scaled by (n - 1) / n = 1 - 1/40 before the
// update, which corrects by n / (n - 1).
// CHECK-LABEL: module @biased
// CHECK: %[[MEAN:.*]], %[[VAR:.*]] = train.bn_stats
// CHECK: %[[FACTOR:.*]] = train.constant dense<9.750000e-01> : tensor<f32>
// CHECK: %[[BIASED:.*]] = train.mul %[[VAR]], %[[FACTOR]]
// CHECK: train.bn_running_update @bn.running_mean, @bn.running_var, %[[MEAN]], %[[BIASED]] momentum 0.00999999977 count 40
module @biased attributes {train.bn_running_variance = "biased"} {
  train.param @bn.weight trainable : tensor<3xf32>
  train.param @bn.bias trainable : tensor<3xf32>
  train.param @bn.running_mean running_mean : tensor<3xf32>
  train.param @bn.running_var running_var : tensor<3xf32>
  func.func @loss(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> {
    %g = train.read_param @bn.weight : tensor<3xf32>
    %b = train.read_param @bn.bias : tensor<3xf32>
    %m = train.read_param @bn.running_mean : tensor<3xf32>
    %v = train.read_param @bn.running_var : tensor<3xf32>
    %y = train.batch_norm %x, %g, %b, %m, %v epsilon 1.0e-03 momentum 1.0e-02 : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>
    return %y : tensor<2x3x4x5xf32>
  }
  func.func @eval_step(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> {
    return %x : tensor<2x3x4x5xf32>
  }
}

//--- step.mlir

// Tests that bn-stats=step accumulates each micro-batch's mean, mean of
// squares and a micro-batch count (one counter per BatchNorm, in the
// statistics' element type) into pooled buffers, and updates the running
// statistics once in a new @apply_step from the pooled statistics, clearing
// each accumulator after its BatchNorm's update.
// STEP-LABEL: module @two_bn
// STEP-DAG: train.param @bn1.running_mean.pooled_mean bn_accumulator : tensor<3xf32>
// STEP-DAG: train.param @bn1.running_mean.pooled_square bn_accumulator : tensor<3xf32>
// STEP-DAG: train.param @bn1.running_mean.pooled_count bn_accumulator : tensor<f32>
// STEP-DAG: train.param @bn2.running_mean.pooled_mean bn_accumulator : tensor<3xf32>
// STEP-DAG: train.param @bn2.running_mean.pooled_square bn_accumulator : tensor<3xf32>
// STEP-DAG: train.param @bn2.running_mean.pooled_count bn_accumulator : tensor<f32>
// STEP: func.func @loss(%[[X:.*]]: tensor<2x3x4xf32>, %{{.*}}: i64 {train.name = "seed"})
// STEP: %[[MEAN:.*]], %[[VAR:.*]] = train.bn_stats %[[X]]
// STEP: train.bn_apply %[[X]], %[[MEAN]], %[[VAR]]
// STEP: %[[SQ:.*]] = train.mul %[[MEAN]], %[[MEAN]]
// STEP: %[[M2:.*]] = train.add %[[VAR]], %[[SQ]]
// STEP: train.accumulate @bn1.running_mean.pooled_mean, %[[MEAN]] scale %{{.*}} : tensor<3xf32>
// STEP: train.accumulate @bn1.running_mean.pooled_square, %[[M2]] scale %{{.*}} : tensor<3xf32>
// STEP: %[[UNIT:.*]] = train.constant dense<1.000000e+00> : tensor<f32>
// STEP: train.accumulate @bn1.running_mean.pooled_count, %[[UNIT]] scale %{{.*}} : tensor<f32>
// STEP: train.bn_stats
// STEP: train.accumulate @bn2.running_mean.pooled_mean
// STEP: train.accumulate @bn2.running_mean.pooled_square
// STEP: train.accumulate @bn2.running_mean.pooled_count
// STEP-NOT: train.bn_running_update
// STEP: func.func @eval_step
// STEP-NOT: train.bn_running_update
// STEP: func.func @apply_step(%{{.*}}: f32 {train.name = "lr"}, %{{.*}}: i64 {train.name = "step"})
// STEP: %[[N:.*]] = train.read_param @bn1.running_mean.pooled_count : tensor<f32>
// STEP: %[[SUM:.*]] = train.read_param @bn1.running_mean.pooled_mean
// STEP: %[[PM:.*]] = train.div %[[SUM]], %[[N]]
// STEP: %[[SQSUM:.*]] = train.read_param @bn1.running_mean.pooled_square
// STEP: %[[PS:.*]] = train.div %[[SQSUM]], %[[N]]
// STEP: %[[PM2:.*]] = train.mul %[[PM]], %[[PM]]
// STEP: %[[PV:.*]] = train.sub %[[PS]], %[[PM2]]
// STEP: train.bn_running_update @bn1.running_mean, @bn1.running_var, %[[PM]], %[[PV]] momentum 1.000000e-01 count 8 batches %[[N]] : tensor<3xf32>, tensor<f32>
// STEP: train.zero @bn1.running_mean.pooled_mean
// STEP: train.zero @bn1.running_mean.pooled_square
// STEP: train.zero @bn1.running_mean.pooled_count
// STEP: %[[N2:.*]] = train.read_param @bn2.running_mean.pooled_count
// STEP: train.bn_running_update @bn2.running_mean, @bn2.running_var, %{{.*}}, %{{.*}} momentum 1.000000e-01 count 8 batches %[[N2]]
// STEP: train.zero @bn2.running_mean.pooled_mean
// STEP: train.zero @bn2.running_mean.pooled_square
// STEP: train.zero @bn2.running_mean.pooled_count
// STEP-NEXT: return
module @two_bn {
  train.param @bn1.weight trainable : tensor<3xf32>
  train.param @bn1.bias trainable : tensor<3xf32>
  train.param @bn1.running_mean running_mean : tensor<3xf32>
  train.param @bn1.running_var running_var : tensor<3xf32>
  train.param @bn2.weight trainable : tensor<3xf32>
  train.param @bn2.bias trainable : tensor<3xf32>
  train.param @bn2.running_mean running_mean : tensor<3xf32>
  train.param @bn2.running_var running_var : tensor<3xf32>
  func.func @loss(%x: tensor<2x3x4xf32>) -> tensor<f32> {
    %g1 = train.read_param @bn1.weight : tensor<3xf32>
    %b1 = train.read_param @bn1.bias : tensor<3xf32>
    %m1 = train.read_param @bn1.running_mean : tensor<3xf32>
    %v1 = train.read_param @bn1.running_var : tensor<3xf32>
    %y1 = train.batch_norm %x, %g1, %b1, %m1, %v1 epsilon 1.0e-05 momentum 1.0e-01 : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
    %g2 = train.read_param @bn2.weight : tensor<3xf32>
    %b2 = train.read_param @bn2.bias : tensor<3xf32>
    %m2 = train.read_param @bn2.running_mean : tensor<3xf32>
    %v2 = train.read_param @bn2.running_var : tensor<3xf32>
    %y2 = train.batch_norm %y1, %g2, %b2, %m2, %v2 epsilon 1.0e-05 momentum 1.0e-01 : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
    %l = train.reduce_sum %y2 axes [0, 1, 2] : (tensor<2x3x4xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
  func.func @eval_step(%x: tensor<2x3x4xf32>) -> tensor<f32> {
    %l = train.reduce_sum %x axes [0, 1, 2] : (tensor<2x3x4xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that bn-stats=step without BatchNorm declares no counter and makes
// no @apply_step.
// STEP-LABEL: module @no_bn
// STEP-NOT: bn_micro_batches
// STEP-NOT: @apply_step
module @no_bn {
  func.func @loss(%x: tensor<4x6xf32>) -> tensor<f32> {
    %l = train.reduce_sum %x axes [0, 1] : (tensor<4x6xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
  func.func @eval_step(%x: tensor<4x6xf32>) -> tensor<f32> {
    %l = train.reduce_sum %x axes [0, 1] : (tensor<4x6xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that the pooled update is appended to an existing @apply_step.
// STEP-LABEL: module @existing_apply
// STEP: func.func @apply_step(%{{.*}}: f32, %{{.*}}: i64)
// STEP-NEXT: train.zero @other
// STEP-NEXT: train.read_param @bn.running_mean.pooled_count
// STEP: train.bn_running_update @bn.running_mean
// STEP: train.zero @bn.running_mean.pooled_count
// STEP-NEXT: return
module @existing_apply {
  train.param @other bn_accumulator : tensor<3xf32>
  train.param @bn.weight trainable : tensor<3xf32>
  train.param @bn.bias trainable : tensor<3xf32>
  train.param @bn.running_mean running_mean : tensor<3xf32>
  train.param @bn.running_var running_var : tensor<3xf32>
  func.func @loss(%x: tensor<8x3xf32>) -> tensor<8x3xf32> {
    %g = train.read_param @bn.weight : tensor<3xf32>
    %b = train.read_param @bn.bias : tensor<3xf32>
    %m = train.read_param @bn.running_mean : tensor<3xf32>
    %v = train.read_param @bn.running_var : tensor<3xf32>
    %y = train.batch_norm %x, %g, %b, %m, %v epsilon 1.0e-05 momentum 1.0e-01 : (tensor<8x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
    return %y : tensor<8x3xf32>
  }
  func.func @eval_step(%x: tensor<8x3xf32>) -> tensor<8x3xf32> {
    return %x : tensor<8x3xf32>
  }
  func.func @apply_step(%lr: f32, %step: i64) {
    train.zero @other
    return
  }
}

// -----

// Tests that an @apply_step the pass cannot append to is refused.
module {
  train.param @bn.weight trainable : tensor<3xf32>
  train.param @bn.bias trainable : tensor<3xf32>
  train.param @bn.running_mean running_mean : tensor<3xf32>
  train.param @bn.running_var running_var : tensor<3xf32>
  func.func @loss(%x: tensor<8x3xf32>) -> tensor<8x3xf32> {
    %g = train.read_param @bn.weight : tensor<3xf32>
    %b = train.read_param @bn.bias : tensor<3xf32>
    %m = train.read_param @bn.running_mean : tensor<3xf32>
    %v = train.read_param @bn.running_var : tensor<3xf32>
    %y = train.batch_norm %x, %g, %b, %m, %v epsilon 1.0e-05 momentum 1.0e-01 : (tensor<8x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
    return %y : tensor<8x3xf32>
  }
  func.func @eval_step(%x: tensor<8x3xf32>) -> tensor<8x3xf32> {
    return %x : tensor<8x3xf32>
  }
  // expected-error @+1 {{@apply_step must be a function with a body and the type '(f32, i64) -> ()' (lr, step)}}
  func.func private @apply_step(f32, i64)
}

// -----

// Tests that with the biased running-variance convention the pooled
// variance of K micro-batches of 8 values is scaled by 1 - 1/(8 K) before
// the update.
// STEP-LABEL: module @biased_step
// STEP: func.func @apply_step
// STEP: %[[N:.*]] = train.read_param @bn.running_mean.pooled_count : tensor<f32>
// STEP: %[[PV:.*]] = train.sub
// STEP: %[[COUNT:.*]] = train.constant dense<8.000000e+00> : tensor<f32>
// STEP: %[[VALUES:.*]] = train.mul %[[COUNT]], %[[N]]
// STEP: %[[INV:.*]] = train.div %{{.*}}, %[[VALUES]]
// STEP: %[[FACTOR:.*]] = train.sub %{{.*}}, %[[INV]]
// STEP: %[[BIASED:.*]] = train.mul %[[PV]], %[[FACTOR]]
// STEP: train.bn_running_update @bn.running_mean, @bn.running_var, %{{.*}}, %[[BIASED]] momentum {{.*}} count 8 batches %[[N]]
module @biased_step attributes {train.bn_running_variance = "biased"} {
  train.param @bn.weight trainable : tensor<3xf32>
  train.param @bn.bias trainable : tensor<3xf32>
  train.param @bn.running_mean running_mean : tensor<3xf32>
  train.param @bn.running_var running_var : tensor<3xf32>
  func.func @loss(%x: tensor<8x3xf32>) -> tensor<8x3xf32> {
    %g = train.read_param @bn.weight : tensor<3xf32>
    %b = train.read_param @bn.bias : tensor<3xf32>
    %m = train.read_param @bn.running_mean : tensor<3xf32>
    %v = train.read_param @bn.running_var : tensor<3xf32>
    %y = train.batch_norm %x, %g, %b, %m, %v epsilon 1.0e-03 momentum 1.0e-02 : (tensor<8x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
    return %y : tensor<8x3xf32>
  }
  func.func @eval_step(%x: tensor<8x3xf32>) -> tensor<8x3xf32> {
    return %x : tensor<8x3xf32>
  }
}

//--- unknown-bn-stats.mlir

// Tests that an unknown bn-stats mode is refused when the option is parsed.
// UNKNOWN: for the --bn-stats option: Cannot find option named 'batch'!
module {
}
