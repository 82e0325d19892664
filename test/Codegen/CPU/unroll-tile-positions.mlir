// RUN: traincc-opt %s -split-input-file -traincc-unroll-tile-positions | FileCheck %s

// Tests that a transform marked traincc.keep_loop_order becomes loops whose
// short innermost ones (the tile positions p and the 2 tiles t) are
// unrolled whole: the position index is a constant in each copy, and only
// the loop over the 64 rows i is left.
// CHECK-LABEL: func.func @transform
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %c64
// CHECK-NOT: scf.for
// CHECK-COUNT-4: memref.store
// CHECK-NOT: memref.store
// CHECK-NOT: scf.for
// CHECK: return
#in = affine_map<(i, t, p) -> (i, t * 2 + p)>
#out = affine_map<(i, t, p) -> (p, i, t)>
func.func @transform(%a: memref<64x4xf32>, %b: memref<2x64x2xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : memref<64x4xf32>) outs(%b : memref<2x64x2xf32>) attrs = {traincc.keep_loop_order} {
  ^bb0(%x: f32, %o: f32):
    %p = linalg.index 2 : index
    %c0 = arith.constant 0 : index
    %first = arith.cmpi eq, %p, %c0 : index
    %n = arith.negf %x : f32
    %s = arith.select %first, %x, %n : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that an unmarked op stays a linalg op, and that a marked one stops
// unrolling at the first loop longer than max-trips (4): the 8 tiles stay
// a loop.
// CHECK-LABEL: func.func @untouched_and_long
// CHECK: linalg.generic
// CHECK: scf.for %{{.*}} = %{{.*}} to %c64
// CHECK: scf.for %{{.*}} = %{{.*}} to %c8
// CHECK-COUNT-2: memref.store
// CHECK-NOT: memref.store
#in2 = affine_map<(i, t, p) -> (i, t * 2 + p)>
#out2 = affine_map<(i, t, p) -> (p, i, t)>
func.func @untouched_and_long(%a: memref<64x16xf32>, %b: memref<2x64x8xf32>, %c: memref<2x64x8xf32>) {
  linalg.generic {indexing_maps = [#in2, #out2], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : memref<64x16xf32>) outs(%b : memref<2x64x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#in2, #out2], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : memref<64x16xf32>) outs(%c : memref<2x64x8xf32>) attrs = {traincc.keep_loop_order} {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}
