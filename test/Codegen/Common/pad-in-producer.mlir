// RUN: traincc-opt %s -split-input-file -traincc-pad-in-producer | FileCheck %s

// Tests that the ReLU whose result a convolution reads padded writes that
// result into the interior of a zero-filled tensor of the padded shape,
// which then stands for the pad (an insert_slice of the same slice, which
// bufferizes to nothing); the ReLU's other user reads it unchanged.
// CHECK-LABEL: func.func @relu_then_padded
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: tensor.empty() : tensor<2x3x4x4xf32>
// CHECK: %[[ZERO2:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x3x6x6xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[ZERO2]] : f32) outs(%[[E]] : tensor<2x3x6x6xf32>)
// CHECK: %[[IN:.*]] = tensor.extract_slice %[[F]][0, 0, 1, 1] [2, 3, 4, 4] [1, 1, 1, 1]
// CHECK: %[[R:.*]] = linalg.generic {{.*}} outs(%[[IN]] : tensor<2x3x4x4xf32>)
// CHECK-NOT: tensor.pad
// CHECK: %[[P:.*]] = tensor.insert_slice %[[R]] into %[[F]][0, 0, 1, 1] [2, 3, 4, 4] [1, 1, 1, 1]
// CHECK: return %[[P]], %[[R]]
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @relu_then_padded(%x: tensor<2x3x4x4xf32>) -> (tensor<2x3x6x6xf32>, tensor<2x3x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x4x4xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<2x3x4x4xf32>) outs(%e : tensor<2x3x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x3x4x4xf32>
  %p = tensor.pad %r low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x3x4x4xf32> to tensor<2x3x6x6xf32>
  return %p, %r : tensor<2x3x6x6xf32>, tensor<2x3x4x4xf32>
}

// -----

// Tests what stays a pad: a function argument padded (no producer), and a
// generic that accumulates into its destination (reads it).
// CHECK-LABEL: func.func @untouched
// CHECK-COUNT-2: tensor.pad
// CHECK-NOT: tensor.insert_slice
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @untouched(%x: tensor<4x4xf32>, %acc: tensor<4x4xf32>) -> (tensor<6x6xf32>, tensor<6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x4xf32> to tensor<6x6xf32>
  %s = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<4x4xf32>
  %q = tensor.pad %s low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x4xf32> to tensor<6x6xf32>
  return %p, %q : tensor<6x6xf32>, tensor<6x6xf32>
}

// -----

// Tests that a pad whose value is not one constant (it depends on the
// position) stays a pad.
// CHECK-LABEL: func.func @position_dependent_padding
// CHECK: tensor.pad
// CHECK-NOT: tensor.insert_slice
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @position_dependent_padding(%x: tensor<4x4xf32>) -> tensor<6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32>
  %p = tensor.pad %r low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    %v = arith.index_cast %i : index to i32
    %f = arith.sitofp %v : i32 to f32
    tensor.yield %f : f32
  } : tensor<4x4xf32> to tensor<6x6xf32>
  return %p : tensor<6x6xf32>
}
