// RUN: traincc-opt %s -split-input-file -traincc-pool-before-relu | FileCheck %s

// Tests that a max pooling of a ReLU it alone reads becomes the ReLU of the
// pooling of the ReLU's input, in every function, with the pooling's
// attributes kept (padded, overlapping 3x3/2 windows with ceil_mode too).
// CHECK-LABEL: func.func @loss
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8x8xf32>)
// CHECK: %[[P:.*]] = train.max_pool %[[X]] kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : (tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32>
// CHECK: %[[R:.*]] = train.relu %[[P]] : tensor<2x4x4x4xf32>
// CHECK: return %[[R]]
// CHECK-LABEL: func.func @eval_step
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x9x9xf32>)
// CHECK: %[[P:.*]] = train.max_pool %[[X]] kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] {ceil_mode = true} : (tensor<2x4x9x9xf32>) -> tensor<2x4x5x5xf32>
// CHECK: %[[R:.*]] = train.relu %[[P]] : tensor<2x4x5x5xf32>
// CHECK: return %[[R]]
func.func @loss(%x: tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32> {
  %r = train.relu %x : tensor<2x4x8x8xf32>
  %p = train.max_pool %r kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : (tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32>
  return %p : tensor<2x4x4x4xf32>
}
func.func @eval_step(%x: tensor<2x4x9x9xf32>) -> tensor<2x4x5x5xf32> {
  %r = train.relu %x : tensor<2x4x9x9xf32>
  %p = train.max_pool %r kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] {ceil_mode = true} : (tensor<2x4x9x9xf32>) -> tensor<2x4x5x5xf32>
  return %p : tensor<2x4x5x5xf32>
}

// -----

// Tests that a ReLU another op also reads stays before the pooling: it is
// materialised anyway, and moving it would compute it twice.
// CHECK-LABEL: func.func @relu_used_twice
// CHECK: %[[R:.*]] = train.relu
// CHECK: train.max_pool %[[R]]
// CHECK-NOT: train.relu
func.func @relu_used_twice(%x: tensor<2x4x8x8xf32>) -> (tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>) {
  %r = train.relu %x : tensor<2x4x8x8xf32>
  %p = train.max_pool %r kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : (tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32>
  return %p, %r : tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>
}

// -----

// Tests that other monotonic activations stay where they are: a sigmoid
// can round two different inputs to one value, which would change the
// winning position and so the gradient.
// CHECK-LABEL: func.func @sigmoid_then_pool
// CHECK: %[[S:.*]] = train.sigmoid
// CHECK: train.max_pool %[[S]]
func.func @sigmoid_then_pool(%x: tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32> {
  %s = train.sigmoid %x : tensor<2x4x8x8xf32>
  %p = train.max_pool %s kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : (tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32>
  return %p : tensor<2x4x4x4xf32>
}
