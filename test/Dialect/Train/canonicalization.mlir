// RUN: traincc-opt %s -canonicalize -split-input-file | FileCheck %s

// Tests that identity folds away.
// CHECK-LABEL: func.func @identity
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK-NOT: train.identity
// CHECK: return %[[X]], %[[X]]
func.func @identity(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = train.identity %x : tensor<8x16xf32>
  %1 = train.identity %0 : tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// Tests that dropout with ratio 0 folds away and any other ratio stays.
// CHECK-LABEL: func.func @dropout
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK: %[[D:.*]] = train.dropout %[[X]] ratio 5.000000e-01
// CHECK-NOT: train.dropout
// CHECK: return %[[X]], %[[D]]
func.func @dropout(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = train.dropout %x ratio 0.0 : tensor<8x16xf32>
  %1 = train.dropout %x ratio 0.5 : tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// Tests that an unused dropout is removed although it is not pure.
// CHECK-LABEL: func.func @dead_dropout
// CHECK-NOT: train.dropout
func.func @dead_dropout(%x: tensor<8x16xf32>) {
  %0 = train.dropout %x ratio 0.5 : tensor<8x16xf32>
  return
}

// -----

// Tests that adding a splat zero on either side folds away.
// CHECK-LABEL: func.func @add_zero
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK-NOT: train.add
// CHECK: return %[[X]], %[[X]]
func.func @add_zero(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %zero = train.constant dense<0.0> : tensor<16xf32>
  %0 = train.add %x, %zero
      : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %1 = train.add %zero, %x
      : (tensor<16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// Tests that a zero that broadcasts the other operand to a wider shape, or a
// non-zero constant, does not fold.
// CHECK-LABEL: func.func @add_zero_widens
// CHECK: %[[ZERO:.*]] = train.constant dense<0.000000e+00> : tensor<4x16xf32>
// CHECK: %[[ONE:.*]] = train.constant dense<1.000000e+00> : tensor<16xf32>
// CHECK: train.add %{{.*}}, %[[ZERO]] : (tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK: train.add %{{.*}}, %[[ONE]] : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
func.func @add_zero_widens(%x: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<16xf32>) {
  %zero = train.constant dense<0.0> : tensor<4x16xf32>
  %one = train.constant dense<1.0> : tensor<16xf32>
  %0 = train.add %x, %zero
      : (tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = train.add %x, %one
      : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %0, %1 : tensor<4x16xf32>, tensor<16xf32>
}

// -----

// Tests that multiplying by a splat one on either side folds away.
// CHECK-LABEL: func.func @mul_one
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK-NOT: train.mul
// CHECK: return %[[X]], %[[X]]
func.func @mul_one(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %one = train.constant dense<1.0> : tensor<1xf32>
  %0 = train.mul %x, %one
      : (tensor<8x16xf32>, tensor<1xf32>) -> tensor<8x16xf32>
  %1 = train.mul %one, %x
      : (tensor<1xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// Tests that a one that widens the other operand, or a non-splat constant
// holding ones in part, does not fold.
// CHECK-LABEL: func.func @mul_one_widens
// CHECK-COUNT-2: train.mul
// CHECK-NOT: train.mul
func.func @mul_one_widens(%x: tensor<1xf32>, %y: tensor<2xf32>)
    -> (tensor<8x1xf32>, tensor<2xf32>) {
  %one = train.constant dense<1.0> : tensor<8x1xf32>
  %mixed = train.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = train.mul %one, %x
      : (tensor<8x1xf32>, tensor<1xf32>) -> tensor<8x1xf32>
  %1 = train.mul %y, %mixed
      : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<8x1xf32>, tensor<2xf32>
}

// -----

// Tests that x - 0 and x / 1 fold away, but 0 - x and 1 / x do not.
// CHECK-LABEL: func.func @sub_div
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK-DAG: %[[ZERO:.*]] = train.constant dense<0.000000e+00>
// CHECK-DAG: %[[ONE:.*]] = train.constant dense<1.000000e+00>
// CHECK: %[[NEG:.*]] = train.sub %[[ZERO]], %[[X]]
// CHECK: %[[INV:.*]] = train.div %[[ONE]], %[[X]]
// CHECK: return %[[X]], %[[X]], %[[NEG]], %[[INV]]
func.func @sub_div(%x: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %zero = train.constant dense<0.0> : tensor<8xf32>
  %one = train.constant dense<1.0> : tensor<8xf32>
  %0 = train.sub %x, %zero : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = train.div %x, %one : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %2 = train.sub %zero, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %3 = train.div %one, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0, %1, %2, %3 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests that the maximum or minimum of a value with itself folds to it, as
// do a splat -inf under maximum and +inf under minimum on either side.
// CHECK-LABEL: func.func @select_neutral
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK-NOT: train.maximum
// CHECK-NOT: train.minimum
// CHECK: return %[[X]], %[[X]], %[[X]], %[[X]]
func.func @select_neutral(%x: tensor<8x16xf32>)
    -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %ninf = train.constant dense<0xFF800000> : tensor<16xf32>
  %pinf = train.constant dense<0x7F800000> : tensor<f32>
  %0 = train.maximum %x, %x
      : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = train.minimum %x, %x
      : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %2 = train.maximum %ninf, %x
      : (tensor<16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %3 = train.minimum %x, %pinf
      : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  return %0, %1, %2, %3
      : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// Tests that a finite splat (the gradient differs from an identity's at
// ties), the other infinity, or an infinity that widens the other operand
// does not fold, and that two splat constants fold to one.
// CHECK-LABEL: func.func @select_kept
// CHECK-DAG: %[[ZERO:.*]] = train.constant dense<0.000000e+00> : tensor<f32>
// CHECK-DAG: %[[PINF:.*]] = train.constant dense<0x7F800000> : tensor<f32>
// CHECK-DAG: %[[NINF:.*]] = train.constant dense<0xFF800000> : tensor<4x16xf32>
// CHECK-DAG: %[[FOLDED:.*]] = train.constant dense<2.000000e+00> : tensor<3xf32>
// CHECK: train.maximum %{{.*}}, %[[ZERO]] : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
// CHECK: train.maximum %{{.*}}, %[[PINF]] : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
// CHECK: train.maximum %{{.*}}, %[[NINF]] : (tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK: return {{.*}}, %[[FOLDED]]
func.func @select_kept(%x: tensor<16xf32>)
    -> (tensor<16xf32>, tensor<16xf32>, tensor<4x16xf32>, tensor<3xf32>) {
  %zero = train.constant dense<0.0> : tensor<f32>
  %pinf = train.constant dense<0x7F800000> : tensor<f32>
  %ninf = train.constant dense<0xFF800000> : tensor<4x16xf32>
  %two = train.constant dense<2.0> : tensor<f32>
  %five = train.constant dense<5.0> : tensor<3xf32>
  %0 = train.maximum %x, %zero
      : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %1 = train.maximum %x, %pinf
      : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %2 = train.maximum %x, %ninf
      : (tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %3 = train.minimum %two, %five
      : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1, %2, %3
      : tensor<16xf32>, tensor<16xf32>, tensor<4x16xf32>, tensor<3xf32>
}

// -----

// Tests that a chain of reshapes becomes one reshape of the original value.
// CHECK-LABEL: func.func @reshape_of_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<8x16x2x2xf32>)
// CHECK: %[[R:.*]] = train.reshape %[[X]] : tensor<8x16x2x2xf32> -> tensor<8x64xf32>
// CHECK-NOT: train.reshape
// CHECK: return %[[R]]
func.func @reshape_of_reshape(%x: tensor<8x16x2x2xf32>) -> tensor<8x64xf32> {
  %0 = train.reshape %x : tensor<8x16x2x2xf32> -> tensor<512xf32>
  %1 = train.reshape %0 : tensor<512xf32> -> tensor<8x4x16xf32>
  %2 = train.reshape %1 : tensor<8x4x16xf32> -> tensor<8x64xf32>
  return %2 : tensor<8x64xf32>
}

// -----

// Tests that a reshape chain back to the original shape disappears, and a
// reshape to the same type folds away.
// CHECK-LABEL: func.func @reshape_round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK-NOT: train.reshape
// CHECK: return %[[X]], %[[X]]
func.func @reshape_round_trip(%x: tensor<8x16xf32>)
    -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = train.reshape %x : tensor<8x16xf32> -> tensor<128xf32>
  %1 = train.reshape %0 : tensor<128xf32> -> tensor<8x16xf32>
  %2 = train.reshape %x : tensor<8x16xf32> -> tensor<8x16xf32>
  return %1, %2 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// Tests that a reshape of a constant becomes a constant of the new shape.
// CHECK-LABEL: func.func @reshape_of_constant
// CHECK-DAG: train.constant dense<{{\[}}[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
// CHECK-DAG: train.constant dense<5.000000e-01> : tensor<2x2xf32>
// CHECK-NOT: train.reshape
func.func @reshape_of_constant() -> (tensor<2x3xi64>, tensor<2x2xf32>) {
  %c = train.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi64>
  %s = train.constant dense<0.5> : tensor<4xf32>
  %0 = train.reshape %c : tensor<6xi64> -> tensor<2x3xi64>
  %1 = train.reshape %s : tensor<4xf32> -> tensor<2x2xf32>
  return %0, %1 : tensor<2x3xi64>, tensor<2x2xf32>
}

// -----

// Tests that flatten becomes a reshape, which then composes with a reshape
// that feeds it.
// CHECK-LABEL: func.func @flatten
// CHECK-SAME: (%[[X:.*]]: tensor<8x16x2x2xf32>)
// CHECK: %[[A:.*]] = train.reshape %[[X]] : tensor<8x16x2x2xf32> -> tensor<8x64xf32>
// CHECK: %[[B:.*]] = train.reshape %[[X]] : tensor<8x16x2x2xf32> -> tensor<1x512xf32>
// CHECK-NOT: train.flatten
// CHECK: return %[[A]], %[[B]]
func.func @flatten(%x: tensor<8x16x2x2xf32>) -> (tensor<8x64xf32>, tensor<1x512xf32>) {
  %0 = train.flatten %x axis 1 : (tensor<8x16x2x2xf32>) -> tensor<8x64xf32>
  %r = train.reshape %x : tensor<8x16x2x2xf32> -> tensor<8x16x4xf32>
  %1 = train.flatten %r axis 0 : (tensor<8x16x4xf32>) -> tensor<1x512xf32>
  return %0, %1 : tensor<8x64xf32>, tensor<1x512xf32>
}

// -----

// Tests that an identity transpose folds away and a non-identity one stays.
// CHECK-LABEL: func.func @transpose_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[T:.*]] = train.transpose %[[X]] perm [0, 2, 1]
// CHECK-NOT: train.transpose
// CHECK: return %[[X]], %[[T]]
func.func @transpose_identity(%x: tensor<2x3x4xf32>)
    -> (tensor<2x3x4xf32>, tensor<2x4x3xf32>) {
  %0 = train.transpose %x perm [0, 1, 2]
      : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %1 = train.transpose %x perm [0, 2, 1]
      : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  return %0, %1 : tensor<2x3x4xf32>, tensor<2x4x3xf32>
}

// -----

// Tests that a transpose of a transpose composes into one permutation.
// CHECK-LABEL: func.func @transpose_of_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[T:.*]] = train.transpose %[[X]] perm [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NOT: train.transpose
// CHECK: return %[[T]]
func.func @transpose_of_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = train.transpose %x perm [1, 2, 0]
      : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = train.transpose %0 perm [1, 2, 0]
      : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32>
  return %1 : tensor<4x2x3xf32>
}

// -----

// Tests that a transpose pair around a unary elementwise op (tf2onnx's
// NHWC ReLU between NCHW ops) cancels, attributes kept, and that a unary op
// with another use or without a transpose before it keeps its transpose.
// CHECK-LABEL: func.func @transpose_around_unary
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[Y:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[L:.*]] = train.leaky_relu %[[X]] alpha 2.000000e-01 : tensor<2x3x4xf32>
// CHECK: %[[R:.*]] = train.relu %[[Y]]
// CHECK: %[[T:.*]] = train.transpose %[[R]] perm [1, 2, 0]
// CHECK: return %[[L]], %[[T]]
func.func @transpose_around_unary(%x: tensor<2x3x4xf32>, %y: tensor<2x3x4xf32>)
    -> (tensor<2x3x4xf32>, tensor<3x4x2xf32>) {
  %0 = train.transpose %x perm [1, 2, 0]
      : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = train.leaky_relu %0 alpha 2.0e-01 : tensor<3x4x2xf32>
  %2 = train.transpose %1 perm [2, 0, 1]
      : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
  %3 = train.relu %y : tensor<2x3x4xf32>
  %4 = train.transpose %3 perm [1, 2, 0]
      : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  return %2, %4 : tensor<2x3x4xf32>, tensor<3x4x2xf32>
}

// -----

// Tests that transposes that cancel disappear.
// CHECK-LABEL: func.func @transpose_inverse
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NOT: train.transpose
// CHECK: return %[[X]]
func.func @transpose_inverse(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = train.transpose %x perm [1, 2, 0]
      : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = train.transpose %0 perm [2, 0, 1]
      : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// Tests that a transposed gemm operand becomes a trans flag, flipping one
// that is already set, and that gemm keeps an operand that is not a
// transpose.
// CHECK-LABEL: func.func @gemm_transpose
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x3xf32>, %[[C:.*]]: tensor<3xf32>)
// CHECK: train.gemm %[[A]], %[[B]], %[[C]] {trans_a = true} : (tensor<4x8xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
// CHECK: train.gemm %[[A]], %[[B]] {trans_a = true} : (tensor<4x8xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
// CHECK-NOT: train.transpose
func.func @gemm_transpose(%a: tensor<4x8xf32>, %b: tensor<4x3xf32>,
                          %c: tensor<3xf32>)
    -> (tensor<8x3xf32>, tensor<8x3xf32>) {
  %at = train.transpose %a perm [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %bt = train.transpose %b perm [1, 0] : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %0 = train.gemm %at, %b, %c
      : (tensor<8x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %1 = train.gemm %at, %bt {trans_b = true}
      : (tensor<8x4xf32>, tensor<3x4xf32>) -> tensor<8x3xf32>
  return %0, %1 : tensor<8x3xf32>, tensor<8x3xf32>
}

// -----

// Tests that a concat of one input folds to it and a concat of two stays.
// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK: %[[C:.*]] = train.concat %[[X]], %[[X]] axis 0
// CHECK: return %[[X]], %[[C]]
func.func @concat(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<16x16xf32>) {
  %0 = train.concat %x axis 1 : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = train.concat %x, %x axis 0
      : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<16x16xf32>
}

// -----

// Tests that a slice of every element folds away, and that slices that
// shorten, stride or reverse an axis stay.
// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK: %[[A:.*]] = train.slice %[[X]] starts [0, 0] ends [8, 15] steps [1, 1]
// CHECK: %[[B:.*]] = train.slice %[[X]] starts [0, 0] ends [8, 16] steps [1, 2]
// CHECK: %[[C:.*]] = train.slice %[[X]] starts [7, 0] ends [-1, 16] steps [-1, 1]
// CHECK: return %[[X]], %[[A]], %[[B]], %[[C]]
func.func @slice(%x: tensor<8x16xf32>)
    -> (tensor<8x16xf32>, tensor<8x15xf32>, tensor<8x8xf32>, tensor<8x16xf32>) {
  %0 = train.slice %x starts [0, 0] ends [8, 16] steps [1, 1]
      : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = train.slice %x starts [0, 0] ends [8, 15] steps [1, 1]
      : (tensor<8x16xf32>) -> tensor<8x15xf32>
  %2 = train.slice %x starts [0, 0] ends [8, 16] steps [1, 2]
      : (tensor<8x16xf32>) -> tensor<8x8xf32>
  %3 = train.slice %x starts [7, 0] ends [-1, 16] steps [-1, 1]
      : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0, %1, %2, %3
      : tensor<8x16xf32>, tensor<8x15xf32>, tensor<8x8xf32>, tensor<8x16xf32>
}

// -----

// Tests that equal constants are merged and unused ones removed.
// CHECK-LABEL: func.func @constants
// CHECK: %[[C:.*]] = train.constant dense<[1, 2]> : tensor<2xi64>
// CHECK-NOT: train.constant
// CHECK: return %[[C]], %[[C]]
func.func @constants() -> (tensor<2xi64>, tensor<2xi64>) {
  %0 = train.constant dense<[1, 2]> : tensor<2xi64>
  %1 = train.constant dense<[1, 2]> : tensor<2xi64>
  %2 = train.constant dense<3> : tensor<2xi64>
  return %0, %1 : tensor<2xi64>, tensor<2xi64>
}

// -----

// Tests that a cast to the same type folds away, a round trip through a
// wider type folds to the original value, a narrowing round trip does not
// (it rounds), and a cast of a constant folds with round-to-nearest-even.
// CHECK-LABEL: func.func @casts
// CHECK-SAME: (%[[X:.*]]: tensor<4xbf16>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-DAG: %[[C:.*]] = train.constant dense<1.000980e-01> : tensor<4xbf16>
// CHECK-DAG: %[[DOWN:.*]] = train.cast %[[Y]] : tensor<4xf32> to tensor<4xbf16>
// CHECK-DAG: %[[UP:.*]] = train.cast %[[DOWN]] : tensor<4xbf16> to tensor<4xf32>
// CHECK: return %[[X]], %[[X]], %[[UP]], %[[C]]
func.func @casts(%x: tensor<4xbf16>, %y: tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xbf16>, tensor<4xf32>, tensor<4xbf16>) {
  %0 = train.cast %x : tensor<4xbf16> to tensor<4xbf16>
  %1 = train.cast %x : tensor<4xbf16> to tensor<4xf32>
  %2 = train.cast %1 : tensor<4xf32> to tensor<4xbf16>
  %3 = train.cast %y : tensor<4xf32> to tensor<4xbf16>
  %4 = train.cast %3 : tensor<4xbf16> to tensor<4xf32>
  %c = train.constant dense<0.1> : tensor<4xf32>
  %5 = train.cast %c : tensor<4xf32> to tensor<4xbf16>
  return %0, %2, %4, %5 : tensor<4xbf16>, tensor<4xbf16>, tensor<4xf32>, tensor<4xbf16>
}
