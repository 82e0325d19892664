// RUN: traincc-opt %s -split-input-file -traincc-pad-in-producer | FileCheck %s

// Tests that the ReLU whose result a convolution reads padded writes that
// result into the interior of a zero-filled tensor of the padded shape,
// which then stands for the pad (an insert_slice of the same slice, which
// bufferizes to nothing); the ReLU's other user, elementwise, reads that
// interior, whose rows (16) are a vector long.
// CHECK-LABEL: func.func @relu_then_padded
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: tensor.empty() : tensor<2x3x4x16xf32>
// CHECK: %[[ZERO2:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x3x6x18xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[ZERO2]] : f32) outs(%[[E]] : tensor<2x3x6x18xf32>)
// CHECK: %[[IN:.*]] = tensor.extract_slice %[[F]][0, 0, 1, 1] [2, 3, 4, 16] [1, 1, 1, 1]
// CHECK: %[[R:.*]] = linalg.generic {{.*}} outs(%[[IN]] : tensor<2x3x4x16xf32>)
// CHECK-NOT: tensor.pad
// CHECK: %[[P:.*]] = tensor.insert_slice %[[R]] into %[[F]][0, 0, 1, 1] [2, 3, 4, 16] [1, 1, 1, 1]
// CHECK: %[[B:.*]] = tensor.extract_slice %[[P]][0, 0, 1, 1] [2, 3, 4, 16] [1, 1, 1, 1]
// CHECK: %[[N:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<2x3x4x16xf32>)
// CHECK: return %[[P]], %[[N]]
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @relu_then_padded(%x: tensor<2x3x4x16xf32>) -> (tensor<2x3x6x18xf32>, tensor<2x3x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x4x16xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<2x3x4x16xf32>) outs(%e : tensor<2x3x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x3x4x16xf32>
  %p = tensor.pad %r low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x3x4x16xf32> to tensor<2x3x6x18xf32>
  %e2 = tensor.empty() : tensor<2x3x4x16xf32>
  %n = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r : tensor<2x3x4x16xf32>) outs(%e2 : tensor<2x3x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.negf %in : f32
    linalg.yield %m : f32
  } -> tensor<2x3x4x16xf32>
  return %p, %n : tensor<2x3x6x18xf32>, tensor<2x3x4x16xf32>
}

// -----

// Tests that with rows shorter than a vector (4), the elementwise user reads
// a whole buffer: the ReLU writes its result there and, a second time, into
// the padded interior.
// CHECK-LABEL: func.func @short_rows
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x3x6x6xf32>)
// CHECK: %[[IN:.*]] = tensor.extract_slice %[[F]][0, 0, 1, 1] [2, 3, 4, 4] [1, 1, 1, 1]
// CHECK: %[[R:.*]]:2 = linalg.generic {{.*}} outs(%{{.*}}, %[[IN]] : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>)
// CHECK: %[[P:.*]] = tensor.insert_slice %[[R]]#1 into %[[F]]
// CHECK: linalg.generic {{.*}} ins(%[[R]]#0 : tensor<2x3x4x4xf32>)
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @short_rows(%x: tensor<2x3x4x4xf32>) -> (tensor<2x3x6x6xf32>, tensor<2x3x4x4xf32>) {
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
  %e2 = tensor.empty() : tensor<2x3x4x4xf32>
  %n = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r : tensor<2x3x4x4xf32>) outs(%e2 : tensor<2x3x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.negf %in : f32
    linalg.yield %m : f32
  } -> tensor<2x3x4x4xf32>
  return %p, %n : tensor<2x3x6x6xf32>, tensor<2x3x4x4xf32>
}

// -----

// Tests a value that a reduction (a bias gradient) also reads: it keeps its
// own buffer, where the reduction reads whole rows, and its generic writes
// it a second time into the padded tensor's interior, in place of the
// pad's copy. A second generic, whose result a function's result reads,
// does the same.
// CHECK-LABEL: func.func @also_reduced
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<6x6xf32>)
// CHECK: %[[IN:.*]] = tensor.extract_slice %[[F]][1, 1] [4, 4] [1, 1]
// CHECK: %[[R:.*]]:2 = linalg.generic {{.*}} outs(%{{.*}}, %[[IN]] : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK: %[[M:.*]] = arith.maximumf
// CHECK: linalg.yield %[[M]], %[[M]] : f32, f32
// CHECK: %[[P:.*]] = tensor.insert_slice %[[R]]#1 into %[[F]][1, 1] [4, 4] [1, 1]
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[R]]#0 : tensor<4x4xf32>)
// CHECK: %[[R2:.*]]:2 = linalg.generic
// CHECK: %[[Q:.*]] = tensor.insert_slice %[[R2]]#1
// CHECK-NOT: tensor.pad
// CHECK: return %[[P]], %[[S]], %[[Q]], %[[R2]]#0
#map = affine_map<(d0, d1) -> (d0, d1)>
#sum = affine_map<(d0, d1) -> (d0)>
func.func @also_reduced(%x: tensor<4x4xf32>, %acc: tensor<4xf32>) -> (tensor<6x6xf32>, tensor<4xf32>, tensor<6x6xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32>
  %p = tensor.pad %r low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x4xf32> to tensor<6x6xf32>
  %s = linalg.generic {indexing_maps = [#map, #sum], iterator_types = ["parallel", "reduction"]} ins(%r : tensor<4x4xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %r2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.negf %in : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32>
  %q = tensor.pad %r2 low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x4xf32> to tensor<6x6xf32>
  return %p, %s, %q, %r2 : tensor<6x6xf32>, tensor<4xf32>, tensor<6x6xf32>, tensor<4x4xf32>
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

// -----

// Tests a reduction with two results (max pooling and its winner) whose
// first result is padded: its destination was a fill of -inf, so the
// interior of the zero-filled padded tensor is filled with -inf and the
// pooling reduces into it; the winner's destination is untouched.
// CHECK-LABEL: func.func @pooled_then_padded
// CHECK-DAG: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x2x4x4xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<1x2x4x4xf32>)
// CHECK: %[[IN:.*]] = tensor.extract_slice %[[F]][0, 0, 1, 1] [1, 2, 2, 2] [1, 1, 1, 1]
// CHECK: %[[INF:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[IN]] : tensor<1x2x2x2xf32>)
// CHECK: %[[R:.*]]:2 = linalg.generic {{.*}} outs(%[[INF]], %{{.*}} : tensor<1x2x2x2xf32>, tensor<1x2x2x2xi32>)
// CHECK-NOT: tensor.pad
// CHECK: %[[P:.*]] = tensor.insert_slice %[[R]]#0 into %[[F]][0, 0, 1, 1] [1, 2, 2, 2] [1, 1, 1, 1]
// CHECK: return %[[P]], %[[R]]#1
#in = affine_map<(n, c, h, w, kh, kw) -> (n, c, h * 2 + kh, w * 2 + kw)>
#window = affine_map<(n, c, h, w, kh, kw) -> (kh, kw)>
#out = affine_map<(n, c, h, w, kh, kw) -> (n, c, h, w)>
func.func @pooled_then_padded(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x2x2xi32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %none = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %ei = tensor.empty() : tensor<1x2x2x2xi32>
  %initi = linalg.fill ins(%none : i32) outs(%ei : tensor<1x2x2x2xi32>) -> tensor<1x2x2x2xi32>
  %w = tensor.empty() : tensor<2x2xf32>
  %r:2 = linalg.generic {indexing_maps = [#in, #window, #out, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : tensor<1x2x4x4xf32>, tensor<2x2xf32>) outs(%init, %initi : tensor<1x2x2x2xf32>, tensor<1x2x2x2xi32>) {
  ^bb0(%in: f32, %unused: f32, %out: f32, %outi: i32):
    %m = arith.maximumf %in, %out : f32
    %better = arith.cmpf ogt, %in, %out : f32
    %kh = linalg.index 4 : index
    %k = arith.index_cast %kh : index to i32
    %i = arith.select %better, %k, %outi : i32
    linalg.yield %m, %i : f32, i32
  } -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi32>)
  %p = tensor.pad %r#0 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x2x2x2xf32> to tensor<1x2x4x4xf32>
  return %p, %r#1 : tensor<1x2x4x4xf32>, tensor<1x2x2x2xi32>
}

// -----

// Tests the data-gradient lowering's padding (an insert_slice into a zero
// fill) of a generic that wrote over its own input: the generic writes into
// the interior of that fill, moved in front of it, and no longer over its
// input, which keeps its value.
// CHECK-LABEL: func.func @in_place_then_inserted
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x6x6xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<2x6x6xf32>)
// CHECK: %[[IN:.*]] = tensor.extract_slice %[[F]][0, 1, 1] [2, 4, 4] [1, 1, 1]
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[X:.*]], %{{.*}} : {{.*}}) outs(%[[IN]] : tensor<2x4x4xf32>)
// CHECK: %[[P:.*]] = tensor.insert_slice %[[R]] into %[[F]][0, 1, 1] [2, 4, 4] [1, 1, 1]
// CHECK: return %[[P]], %[[X]]
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @in_place_then_inserted(%x: tensor<2x4x4xf32>, %y: tensor<2x4x4xf32>) -> (tensor<2x6x6xf32>, tensor<2x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %y : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%x : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.mulf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x4x4xf32>
  %e = tensor.empty() : tensor<2x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x6x6xf32>) -> tensor<2x6x6xf32>
  %p = tensor.insert_slice %r into %f[0, 1, 1] [2, 4, 4] [1, 1, 1] : tensor<2x4x4xf32> into tensor<2x6x6xf32>
  return %p, %x : tensor<2x6x6xf32>, tensor<2x4x4xf32>
}

// -----

// Tests what stays an insert_slice: a strided one (a stride-2 data
// gradient's dilation), whose interior the generic would write with gaps.
// CHECK-LABEL: func.func @strided_insert
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x2xf32>)
// CHECK: linalg.fill
// CHECK: tensor.insert_slice {{.*}} [2, 2] [2, 2]
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @strided_insert(%x: tensor<2x2xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x2xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x2xf32>) outs(%e0 : tensor<2x2xf32>) {
  ^bb0(%a: f32, %out: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<2x2xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = tensor.insert_slice %r into %f[0, 0] [2, 2] [2, 2] : tensor<2x2xf32> into tensor<4x4xf32>
  return %p : tensor<4x4xf32>
}

// -----

// Tests a named pooling (the evaluation step's, without a winner search):
// it reduces into the interior, filled with -inf; a convolution (it sums
// products) keeps its whole output and stays padded.
// CHECK-LABEL: func.func @named_pooling_and_convolution
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x4x4xf32>)
// CHECK: %[[IN:.*]] = tensor.extract_slice %[[F]][0, 0, 1, 1] [1, 1, 2, 2] [1, 1, 1, 1]
// CHECK: %[[INF:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[IN]] : tensor<1x1x2x2xf32>)
// CHECK: linalg.pooling_nchw_max {{.*}} outs(%[[INF]] : tensor<1x1x2x2xf32>)
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK: tensor.pad
func.func @named_pooling_and_convolution(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x1x2x2xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %window = tensor.empty() : tensor<2x2xf32>
  %pooled = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %window : tensor<1x1x4x4xf32>, tensor<2x2xf32>) outs(%init : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %p = tensor.pad %pooled low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x1x2x2xf32> to tensor<1x1x4x4xf32>
  %ce = tensor.empty() : tensor<1x1x2x2xf32>
  %cinit = linalg.fill ins(%zero : f32) outs(%ce : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) outs(%cinit : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %q = tensor.pad %conv low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x1x2x2xf32> to tensor<1x1x4x4xf32>
  return %p, %q : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
}

// -----

// Tests that an op writing its first result once per point while it sums
// other outputs over a loop (traincc-fuse-sums-into-producers' partials)
// writes that result into the padded interior like an elementwise op: it
// is not a contraction, though its body multiplies and it has a
// reduction loop.
// CHECK-LABEL: func.func @summing_producer_padded
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x3x6x18xf32>)
// CHECK: %[[IN:.*]] = tensor.extract_slice %[[F]][0, 0, 1, 1] [2, 3, 4, 16] [1, 1, 1, 1]
// CHECK: %[[R:.*]]:2 = linalg.generic {{.*}} outs(%[[IN]], %{{.*}} : tensor<2x3x4x16xf32>, tensor<2x3x16xf32>)
// CHECK-NOT: tensor.pad
// CHECK: tensor.insert_slice %[[R]]#0 into %[[F]][0, 0, 1, 1] [2, 3, 4, 16] [1, 1, 1, 1]
#all = affine_map<(n, c, h, w) -> (n, c, h, w)>
#row = affine_map<(n, c, h, w) -> (n, c, w)>
func.func @summing_producer_padded(%x: tensor<2x3x4x16xf32>, %s: tensor<2x3x16xf32>) -> (tensor<2x3x6x18xf32>, tensor<2x3x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x4x16xf32>
  %r:2 = linalg.generic {indexing_maps = [#all, #all, #row], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x : tensor<2x3x4x16xf32>) outs(%e, %s : tensor<2x3x4x16xf32>, tensor<2x3x16xf32>) {
  ^bb0(%in: f32, %out: f32, %acc: f32):
    %m = arith.mulf %in, %in : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %m, %a : f32, f32
  } -> (tensor<2x3x4x16xf32>, tensor<2x3x16xf32>)
  %p = tensor.pad %r#0 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x3x4x16xf32> to tensor<2x3x6x18xf32>
  return %p, %r#1 : tensor<2x3x6x18xf32>, tensor<2x3x16xf32>
}
