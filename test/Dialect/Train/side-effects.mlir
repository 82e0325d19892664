// RUN: traincc-opt %s -cse -split-input-file | FileCheck %s

// Tests that CSE merges equal pure ops and parameter reads, but never two
// dropouts of one tensor: each draws its own mask.
// CHECK-LABEL: func.func @dropout_masks
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK: %[[R:.*]] = train.relu %[[X]]
// CHECK-NOT: train.relu
// CHECK: %[[D0:.*]] = train.dropout %[[R]] ratio 5.000000e-01
// CHECK: %[[D1:.*]] = train.dropout %[[R]] ratio 5.000000e-01
// CHECK: return %[[R]], %[[R]], %[[D0]], %[[D1]]
func.func @dropout_masks(%x: tensor<8x16xf32>)
    -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %r0 = train.relu %x : tensor<8x16xf32>
  %r1 = train.relu %x : tensor<8x16xf32>
  %d0 = train.dropout %r0 ratio 0.5 : tensor<8x16xf32>
  %d1 = train.dropout %r1 ratio 0.5 : tensor<8x16xf32>
  return %r0, %r1, %d0, %d1
      : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// Tests that two reads of one parameter with nothing in between merge.
// CHECK-LABEL: func.func @reads
// CHECK: %[[W:.*]] = train.read_param @w
// CHECK-NOT: train.read_param
// CHECK: return %[[W]], %[[W]]
module {
  train.param @w trainable : tensor<4xf32>
  func.func @reads() -> (tensor<4xf32>, tensor<4xf32>) {
    %0 = train.read_param @w : tensor<4xf32>
    %1 = train.read_param @w : tensor<4xf32>
    return %0, %1 : tensor<4xf32>, tensor<4xf32>
  }
}
