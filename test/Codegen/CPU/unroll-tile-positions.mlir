// RUN: traincc-opt %s -split-input-file -traincc-unroll-tile-positions | FileCheck %s
// RUN: traincc-opt %s -split-input-file -traincc-unroll-tile-positions="max-copies=4" | FileCheck %s --check-prefix=FEW

// Tests that a transform marked traincc.keep_loop_order becomes loops whose
// two innermost ones (the tile positions q and p) are unrolled whole, the
// position indices constants in each copy, and then the loop over the 2
// tiles t while the body is copied at most max-copies times (64: 8 copies;
// 4: the tile loop stays). The loop over the 64 rows i is left.
// CHECK-LABEL: func.func @transform
// CHECK-NOT: linalg.generic
// CHECK: scf.for %{{.*}} = %{{.*}} to %c64
// CHECK-NOT: scf.for
// CHECK-COUNT-8: memref.store
// CHECK-NOT: memref.store
// CHECK-NOT: scf.for
// CHECK: return
// FEW-LABEL: func.func @transform
// FEW: scf.for %{{.*}} = %{{.*}} to %c64
// FEW: scf.for %{{.*}} = %{{.*}} to %c2
// FEW-COUNT-4: memref.store
// FEW-NOT: memref.store
// FEW: return
#in = affine_map<(i, t, p, q) -> (i, t * 4 + p * 2 + q)>
#out = affine_map<(i, t, p, q) -> (p, q, i, t)>
func.func @transform(%a: memref<64x8xf32>, %b: memref<2x2x64x2xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%a : memref<64x8xf32>) outs(%b : memref<2x2x64x2xf32>) attrs = {traincc.keep_loop_order} {
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
// unrolling at the first loop longer than max-trips (4): the 8 positions
// stay a loop.
// CHECK-LABEL: func.func @untouched_and_long
// CHECK: linalg.generic
// CHECK: scf.for %{{.*}} = %{{.*}} to %c64
// CHECK: scf.for %{{.*}} = %{{.*}} to %c2
// CHECK: scf.for %{{.*}} = %{{.*}} to %c8
// CHECK-COUNT-1: memref.store
// CHECK-NOT: memref.store
#in2 = affine_map<(i, t, p) -> (i, t * 8 + p)>
#out2 = affine_map<(i, t, p) -> (t, i, p)>
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
