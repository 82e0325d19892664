// RUN: traincc-opt %s -canonicalize -split-input-file | FileCheck %s

// Tests that a reduce_sum over no axes folds to its input.
// CHECK-LABEL: func.func @reduce_sum_no_axes
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK-NOT: train.reduce_sum
// CHECK: return %[[X]]
func.func @reduce_sum_no_axes(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = train.reduce_sum %x axes [] : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Tests that a reduce_sum over an axis stays, even a size-1 axis (it still
// drops the axis).
// CHECK-LABEL: func.func @reduce_sum_axes
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>, %[[Y:.*]]: tensor<1x16xf32>)
// CHECK: %[[R0:.*]] = train.reduce_sum %[[X]] axes [0]
// CHECK: %[[R1:.*]] = train.reduce_sum %[[Y]] axes [0]
// CHECK: return %[[R0]], %[[R1]]
func.func @reduce_sum_axes(%x: tensor<8x16xf32>, %y: tensor<1x16xf32>)
    -> (tensor<16xf32>, tensor<16xf32>) {
  %0 = train.reduce_sum %x axes [0] : (tensor<8x16xf32>) -> tensor<16xf32>
  %1 = train.reduce_sum %y axes [0] : (tensor<1x16xf32>) -> tensor<16xf32>
  return %0, %1 : tensor<16xf32>, tensor<16xf32>
}

// -----

// Tests that a sum_to its own type folds to its input.
// CHECK-LABEL: func.func @sum_to_same_type
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK-NOT: train.sum_to
// CHECK: return %[[X]]
func.func @sum_to_same_type(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = train.sum_to %x : tensor<8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Tests that a sum_to that reduces stays, also when only a size-1 axis is
// kept and the element count drops.
// CHECK-LABEL: func.func @sum_to_reduces
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK: %[[S0:.*]] = train.sum_to %[[X]] : tensor<8x16xf32> -> tensor<16xf32>
// CHECK: %[[S1:.*]] = train.sum_to %[[X]] : tensor<8x16xf32> -> tensor<1x16xf32>
// CHECK: return %[[S0]], %[[S1]]
func.func @sum_to_reduces(%x: tensor<8x16xf32>)
    -> (tensor<16xf32>, tensor<1x16xf32>) {
  %0 = train.sum_to %x : tensor<8x16xf32> -> tensor<16xf32>
  %1 = train.sum_to %x : tensor<8x16xf32> -> tensor<1x16xf32>
  return %0, %1 : tensor<16xf32>, tensor<1x16xf32>
}

// -----

// Tests that a broadcast_to its own type folds to its input.
// CHECK-LABEL: func.func @broadcast_to_same_type
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK-NOT: train.broadcast_to
// CHECK: return %[[X]]
func.func @broadcast_to_same_type(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = train.broadcast_to %x : tensor<8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Tests that broadcasting a splat constant folds to a splat constant of the
// result type.
// CHECK-LABEL: func.func @broadcast_to_splat
// CHECK-NOT: train.broadcast_to
// CHECK: %[[C:.*]] = train.constant dense<2.500000e+00> : tensor<8x16xf32>
// CHECK-NOT: train.broadcast_to
// CHECK: return %[[C]]
func.func @broadcast_to_splat() -> tensor<8x16xf32> {
  %c = train.constant dense<2.5> : tensor<1x16xf32>
  %0 = train.broadcast_to %c : tensor<1x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Tests that broadcasts of a non-splat constant and of a non-constant stay.
// CHECK-LABEL: func.func @broadcast_to_stays
// CHECK-SAME: (%[[X:.*]]: tensor<16xf32>)
// CHECK: %[[C:.*]] = train.constant dense<{{\[\[}}1.000000e+00], [2.000000e+00]]> : tensor<2x1xf32>
// CHECK: %[[B0:.*]] = train.broadcast_to %[[C]] : tensor<2x1xf32> -> tensor<2x16xf32>
// CHECK: %[[B1:.*]] = train.broadcast_to %[[X]] : tensor<16xf32> -> tensor<2x16xf32>
// CHECK: return %[[B0]], %[[B1]]
func.func @broadcast_to_stays(%x: tensor<16xf32>)
    -> (tensor<2x16xf32>, tensor<2x16xf32>) {
  %c = train.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %0 = train.broadcast_to %c : tensor<2x1xf32> -> tensor<2x16xf32>
  %1 = train.broadcast_to %x : tensor<16xf32> -> tensor<2x16xf32>
  return %0, %1 : tensor<2x16xf32>, tensor<2x16xf32>
}

// -----

// Tests that an unused gradient op is removed (they are pure) but state
// updates stay although nothing uses them.
// CHECK-LABEL: func.func @dead_ops
// CHECK-NOT: train.reduce_sum
// CHECK-NOT: train.dropout_mask
// CHECK: train.accumulate @g
// CHECK: train.zero @g
module {
  train.param @g gradient : tensor<16xf32>
  func.func @dead_ops(%x: tensor<8x16xf32>, %s: f32, %seed: i64) {
    %0 = train.reduce_sum %x axes [0] : (tensor<8x16xf32>) -> tensor<16xf32>
    %m = train.dropout_mask %seed ratio 5.0e-01 stream 0 : tensor<8x16xf32>
    %1 = train.sum_to %x : tensor<8x16xf32> -> tensor<16xf32>
    train.accumulate @g, %1 scale %s : tensor<16xf32>
    train.zero @g
    return
  }
}
