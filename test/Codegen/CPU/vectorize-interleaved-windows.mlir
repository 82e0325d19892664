// RUN: traincc-opt %s -split-input-file -traincc-vectorize-interleaved-windows | FileCheck %s

// Tests 2x2 max pooling with stride 2 on 14-wide output rows: each chunk
// of 16 outputs loads 32 input elements of a row at once (masked to the
// 28 of the row), splits them into the even and odd columns by shuffles,
// and takes the maximum with the output, in the order kw = 0, 1. The
// window's rows (kh, a reduction of 2) are unrolled inside the chunk: the
// output is loaded once before them and stored once after them. The
// loops left are n, c, oh, the rows oh even ones first, then odd ones: the
// next row's output starts 14 elements on, inside the 16 just stored.
// CHECK-LABEL: func.func @max_pool
// CHECK: %[[IN:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [%{{.*}}], strides: [1] : memref<f32> to memref<?xf32, strided<[1]>>
// CHECK: memref.reinterpret_cast
// CHECK: %[[OUT:.*]] = memref.reinterpret_cast
// CHECK: scf.for %{{.*}} = %{{.*}} to %c2{{(_[0-9]+)?}} step
// CHECK: scf.for %{{.*}} = %{{.*}} to %c4{{(_[0-9]+)?}} step
// CHECK: scf.for %[[PARITY:.*]] = %{{.*}} to %c2{{(_[0-9]+)?}} step %c1
// CHECK: scf.for %{{.*}} = %[[PARITY]] to %c14{{(_[0-9]+)?}} step %c2{{(_[0-9]+)?}}
// CHECK: scf.for %[[OW:.*]] = %{{.*}} to %{{.*}} step %c16
// CHECK-NOT: scf.for
// CHECK: %[[LANES:.*]] = vector.create_mask %{{.*}} : vector<16xi1>
// CHECK: %[[ROWMASK:.*]] = vector.create_mask %{{.*}} : vector<32xi1>
// CHECK: %[[OLD:.*]] = vector.maskedload %[[OUT]][%{{.*}}], %[[LANES]], %{{.*}} : memref<?xf32, strided<[1]>>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: %[[ROW0:.*]] = vector.maskedload %[[IN]][%{{.*}}], %[[ROWMASK]], %{{.*}} : memref<?xf32, strided<[1]>>, vector<32xi1>, vector<32xf32> into vector<32xf32>
// CHECK: %[[EVEN0:.*]] = vector.shuffle %[[ROW0]], %[[ROW0]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
// CHECK: %[[ODD0:.*]] = vector.shuffle %[[ROW0]], %[[ROW0]] [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31]
// CHECK: %[[M0:.*]] = arith.maximumf %[[EVEN0]], %[[OLD]] : vector<16xf32>
// CHECK: %[[M1:.*]] = arith.maximumf %[[ODD0]], %[[M0]] : vector<16xf32>
// CHECK-NOT: vector.maskedstore
// CHECK: %[[ROW1:.*]] = vector.maskedload %[[IN]][%{{.*}}], %[[ROWMASK]]
// CHECK: %[[EVEN1:.*]] = vector.shuffle %[[ROW1]], %[[ROW1]] [0, 2,
// CHECK: %[[ODD1:.*]] = vector.shuffle %[[ROW1]], %[[ROW1]] [1, 3,
// CHECK: %[[M2:.*]] = arith.maximumf %[[EVEN1]], %[[M1]] : vector<16xf32>
// CHECK: %[[M3:.*]] = arith.maximumf %[[ODD1]], %[[M2]] : vector<16xf32>
// CHECK: vector.maskedstore %[[OUT]][%{{.*}}], %[[LANES]], %[[M3]]
// CHECK-NOT: vector.maskedstore
// CHECK-NOT: linalg.generic
#x = affine_map<(n, c, oh, ow, kh, kw) -> (n, c, 2 * oh + kh, 2 * ow + kw)>
#k = affine_map<(n, c, oh, ow, kh, kw) -> (kh, kw)>
#y = affine_map<(n, c, oh, ow, kh, kw) -> (n, c, oh, ow)>
func.func @max_pool(%x: memref<2x4x28x28xf32>, %k: memref<2x2xf32>, %y: memref<2x4x14x14xf32>) {
  linalg.generic {indexing_maps = [#x, #k, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %k : memref<2x4x28x28xf32>, memref<2x2xf32>) outs(%y : memref<2x4x14x14xf32>) {
  ^bb0(%in: f32, %unused: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Tests the gradient of such a pooling, written through the input viewed
// as [n, c, oh, kh, ow, kw]: each output's gradient goes to its window's
// winner (the flat offset kh * 2 + kw, from linalg.index) and zero to the
// others. The 7-wide rows take 8 lanes; kw is a constant per phase, ow a
// vector of indices; the two phases' results are interleaved by shuffles
// into one contiguous store of 16.
// CHECK-LABEL: func.func @max_pool_gradient
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8
// CHECK: %[[GRAD:.*]] = vector.maskedload %{{.*}} : memref<?xf32, strided<[1]>>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK: %[[WIN:.*]] = vector.maskedload %{{.*}} : memref<?xi32, strided<[1]>>, vector<8xi1>, vector<8xi32> into vector<8xi32>
// CHECK: %[[P0:.*]] = arith.select %{{.*}}, %[[GRAD]], %{{.*}} : vector<8xi1>, vector<8xf32>
// CHECK: %[[P1:.*]] = arith.select %{{.*}}, %[[GRAD]], %{{.*}} : vector<8xi1>, vector<8xf32>
// CHECK: %[[BOTH:.*]] = vector.shuffle %[[P0]], %[[P1]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
// CHECK: %[[ROW:.*]] = vector.shuffle %[[BOTH]], %[[BOTH]] [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15]
// CHECK: vector.maskedstore %{{.*}}, %{{.*}}, %[[ROW]] : memref<?xf32, strided<[1]>>, vector<16xi1>, vector<16xf32>
#g = affine_map<(n, c, oh, ow, kh, kw) -> (n, c, oh, ow)>
#dx = affine_map<(n, c, oh, ow, kh, kw) -> (n, c, oh, kh, ow, kw)>
#kh = affine_map<(d0, d1) -> (d0 * 2 + d1)>
func.func @max_pool_gradient(%grad: memref<2x4x7x7xf32>, %winners: memref<2x4x7x7xi32>, %dx: memref<2x4x7x2x7x2xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#g, #g, #dx], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%grad, %winners : memref<2x4x7x7xf32>, memref<2x4x7x7xi32>) outs(%dx : memref<2x4x7x2x7x2xf32>) {
  ^bb0(%g: f32, %w: i32, %old: f32):
    %i = linalg.index 4 : index
    %j = linalg.index 5 : index
    %offset = affine.apply #kh(%i, %j)
    %offset32 = arith.index_cast %offset : index to i32
    %won = arith.cmpi eq, %offset32, %w : i32
    %r = arith.select %won, %g, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Tests the loops around the chunks of a pooling gradient that comes with
// the channels innermost (n, oh, kh, ow, kw, c: as
// traincc-order-loops-for-vectorization leaves a 7-wide one, 7 being
// shorter than a vector): they walk memory in order, n, c, oh, kh, instead
// of jumping a channel plane per chunk.
// CHECK-LABEL: func.func @channels_innermost
// CHECK: scf.for %{{.*}} = %{{.*}} to %c2{{(_[0-9]+)?}} step
// CHECK: scf.for %{{.*}} = %{{.*}} to %c3{{(_[0-9]+)?}} step
// CHECK: scf.for %{{.*}} = %{{.*}} to %c7{{(_[0-9]+)?}} step
// CHECK: scf.for %{{.*}} = %{{.*}} to %c2{{(_[0-9]+)?}} step
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8
// CHECK-NOT: scf.for
// CHECK: vector.maskedstore %{{.*}} vector<16xf32>
// CHECK-NOT: linalg.generic
#gc = affine_map<(n, oh, kh, ow, kw, c) -> (n, c, oh, ow)>
#dxc = affine_map<(n, oh, kh, ow, kw, c) -> (n, c, oh, kh, ow, kw)>
#khc = affine_map<(d0, d1) -> (d0 * 2 + d1)>
func.func @channels_innermost(%grad: memref<2x3x7x7xf32>, %winners: memref<2x3x7x7xi32>, %dx: memref<2x3x7x2x7x2xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#gc, #gc, #dxc], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%grad, %winners : memref<2x3x7x7xf32>, memref<2x3x7x7xi32>) outs(%dx : memref<2x3x7x2x7x2xf32>) {
  ^bb0(%g: f32, %w: i32, %old: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 4 : index
    %offset = affine.apply #khc(%i, %j)
    %offset32 = arith.index_cast %offset : index to i32
    %won = arith.cmpi eq, %offset32, %w : i32
    %r = arith.select %won, %g, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Tests that a reduction outside the window row that is too long to unroll
// (20) stays a loop: the output is loaded and stored once per step of it,
// and the sum keeps its order (r, then kw).
// CHECK-LABEL: func.func @long_reduction
// CHECK: scf.for %{{.*}} = %{{.*}} to %c3{{(_[0-9]+)?}} step
// CHECK: scf.for %{{.*}} = %{{.*}} to %c20{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}}
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8
// CHECK: vector.maskedload %{{.*}} vector<8xf32>
// CHECK: vector.maskedload %{{.*}} vector<16xf32>
// CHECK: vector.maskedstore
// CHECK-NOT: linalg.generic
#xl = affine_map<(n, r, ow, kw) -> (n, r, 2 * ow + kw)>
#kl = affine_map<(n, r, ow, kw) -> (kw)>
#yl = affine_map<(n, r, ow, kw) -> (n, ow)>
func.func @long_reduction(%x: memref<3x20x14xf32>, %k: memref<2xf32>, %y: memref<3x7xf32>) {
  linalg.generic {indexing_maps = [#xl, #kl, #yl], iterator_types = ["parallel", "reduction", "parallel", "reduction"]}
      ins(%x, %k : memref<3x20x14xf32>, memref<2xf32>) outs(%y : memref<3x7xf32>) {
  ^bb0(%in: f32, %unused: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests what stays a linalg op: windows that overlap (3 wide, stride 2:
// the row is not one interleaving), a window loop followed by another
// reduction (running it innermost would reorder the sum), and a body with
// an op that is not lane by lane (a loop).
// CHECK-LABEL: func.func @untouched
// CHECK-COUNT-3: linalg.generic
#x3 = affine_map<(n, ow, kw) -> (n, 2 * ow + kw)>
#k3 = affine_map<(n, ow, kw) -> (kw)>
#y3 = affine_map<(n, ow, kw) -> (n, ow)>
#xr = affine_map<(ow, kw, n) -> (n, 2 * ow + kw)>
#kr = affine_map<(ow, kw, n) -> (kw)>
#yr = affine_map<(ow, kw, n) -> (ow)>
func.func @untouched(%x: memref<4x29xf32>, %k3: memref<3xf32>, %k2: memref<2xf32>, %y: memref<4x14xf32>, %x2: memref<4x28xf32>, %y2: memref<14xf32>) {
  linalg.generic {indexing_maps = [#x3, #k3, #y3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %k3 : memref<4x29xf32>, memref<3xf32>) outs(%y : memref<4x14xf32>) {
  ^bb0(%in: f32, %unused: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#xr, #kr, #yr], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x2, %k2 : memref<4x28xf32>, memref<2xf32>) outs(%y2 : memref<14xf32>) {
  ^bb0(%in: f32, %unused: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x3, #k3, #y3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x2, %k2 : memref<4x28xf32>, memref<2xf32>) outs(%y : memref<4x14xf32>) {
  ^bb0(%in: f32, %unused: f32, %acc: f32):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %acc) -> (f32) {
      %s = arith.addf %in, %a : f32
      scf.yield %s : f32
    }
    linalg.yield %r : f32
  }
  return
}
