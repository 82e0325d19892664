// RUN: traincc-opt %s -split-input-file -traincc-absorb-zero-fills | FileCheck %s

// Tests that the +0.0 fill of a matmul's output goes and the matmul is
// marked to start from zero; ops on other buffers (a copy into a disjoint
// view of the same workspace) and calls without memref operands (kernel
// timers) may come in between.
// CHECK-LABEL: func.func @absorbed
// CHECK-NOT: linalg.fill
// CHECK: memref.copy
// CHECK: call @timer()
// CHECK: linalg.generic
// CHECK-SAME: traincc.zero_init
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
func.func private @timer()
func.func @absorbed(%a: memref<8x32xf32>, %b: memref<32x8xf32>, %ws: memref<2048xi8>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1024 = arith.constant 1024 : index
  %out = memref.view %ws[%c0][] : memref<2048xi8> to memref<8x8xf32>
  %tmp = memref.view %ws[%c1024][] : memref<2048xi8> to memref<32x8xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<8x8xf32>)
  memref.copy %b, %tmp : memref<32x8xf32> to memref<32x8xf32>
  call @timer() : () -> ()
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %tmp : memref<8x32xf32>, memref<32x8xf32>) outs(%out : memref<8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a fill generalized to a linalg.generic and collapsed to one
// loop (as the CPU pipeline has it) is absorbed too: it fills the same
// elements through a reshape, and reshaping the buffer in between does
// not access it.
// CHECK-LABEL: func.func @generalized
// CHECK-NOT: linalg.yield %{{.*}} : f32
// CHECK: linalg.generic
// CHECK-SAME: traincc.zero_init
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
#scalar = affine_map<(i) -> ()>
#id = affine_map<(i) -> (i)>
func.func @generalized(%a: memref<8x32xf32>, %b: memref<32x8xf32>, %out: memref<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %flat = memref.collapse_shape %out [[0, 1]] : memref<8x8xf32> into memref<64xf32>
  linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%flat : memref<64xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  %again = memref.expand_shape %flat [[0, 1]] output_shape [8, 8] : memref<64xf32> into memref<8x8xf32>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x32xf32>, memref<32x8xf32>) outs(%again : memref<8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that fills stay where the filled values are read before the
// matmul (a copy out of the buffer), where the fill is not +0.0 (-0.0
// would not round as a sum from +0.0 does), and where the op after the
// fill is not a multiply-add.
// CHECK-LABEL: func.func @kept
// CHECK: linalg.fill
// CHECK: memref.copy
// CHECK: linalg.generic
// CHECK-NOT: traincc.zero_init
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK-NOT: traincc.zero_init
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK-NOT: traincc.zero_init
// CHECK: return
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
func.func @kept(%a: memref<8x32xf32>, %b: memref<32x8xf32>, %out: memref<8x8xf32>, %seen: memref<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %negzero = arith.constant -0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<8x8xf32>)
  memref.copy %out, %seen : memref<8x8xf32> to memref<8x8xf32>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x32xf32>, memref<32x8xf32>) outs(%out : memref<8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%negzero : f32) outs(%out : memref<8x8xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x32xf32>, memref<32x8xf32>) outs(%out : memref<8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%out : memref<8x8xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%seen : memref<8x8xf32>) outs(%out : memref<8x8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}
