// RUN: traincc-opt %s -split-input-file -traincc-outline-parallel-loops="min-work=64 outline-serial=false" | FileCheck %s
// RUN: traincc-opt %s -split-input-file -traincc-outline-parallel-loops=min-work=64 | FileCheck %s --check-prefix=SERIAL

// Tests that a large op moves into a body over a range of its outermost
// parallel loop, called once over the whole range; that buffers no other
// argument aliases are noalias while two views of one buffer are not; and
// that constants the body uses are cloned into it.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[A:.*]]: memref<8x16xf32>, %[[B:.*]]: memref<8x16xf32>, %[[C:.*]]: memref<128xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: call @step_par0(%[[A]], %[[B]], %[[C0]], %[[C8]]) : (memref<8x16xf32>, memref<8x16xf32>, index, index) -> ()
// CHECK-NEXT: %[[V1:.*]] = memref.collapse_shape %[[A]]
// CHECK-NEXT: %[[V2:.*]] = memref.collapse_shape %[[A]]
// CHECK-NEXT: %[[C0B:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[C128:.*]] = arith.constant 128 : index
// CHECK-NEXT: call @step_par1(%[[V1]], %[[V2]], %[[C]], %[[C0B]], %[[C128]])
// CHECK-NEXT: return
// CHECK: func.func private @step_par1(%{{.*}}: memref<128xf32>, %{{.*}}: memref<128xf32>, %{{.*}}: memref<128xf32> {llvm.noalias}, %{{.*}}: index, %{{.*}}: index) attributes {traincc.parallel_body}
// CHECK: func.func private @step_par0(%[[X:.*]]: memref<8x16xf32> {llvm.noalias}, %[[Y:.*]]: memref<8x16xf32> {llvm.noalias}, %[[BEGIN:.*]]: index, %[[END:.*]]: index) attributes {traincc.parallel_body}
// CHECK: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[SIZE:.*]] = arith.subi %[[END]], %[[BEGIN]] : index
// CHECK: %[[XS:.*]] = memref.subview %[[X]][%[[BEGIN]], 0] [%[[SIZE]], 16] [1, 1]
// CHECK: %[[YS:.*]] = memref.subview %[[Y]][%[[BEGIN]], 0] [%[[SIZE]], 16] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[XS]] : {{.*}}) outs(%[[YS]] : {{.*}})
// CHECK: arith.mulf %{{.*}}, %[[TWO]]
#id = affine_map<(i, j) -> (i, j)>
#id1 = affine_map<(i) -> (i)>
func.func @step(%a: memref<8x16xf32>, %b: memref<8x16xf32>, %c: memref<128xf32>) {
  %two = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<8x16xf32>) outs(%b : memref<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %two : f32
    linalg.yield %m : f32
  }
  %flat1 = memref.collapse_shape %a [[0, 1]] : memref<8x16xf32> into memref<128xf32>
  %flat2 = memref.collapse_shape %a [[0, 1]] : memref<8x16xf32> into memref<128xf32>
  linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%flat1, %flat2 : memref<128xf32>, memref<128xf32>) outs(%c : memref<128xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that small ops, ops without a parallel loop and ops on views of
// dynamic offset (which bare pointers cannot describe) stay inline.
// CHECK-LABEL: func.func @stay
// CHECK-NOT: call
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: func.func private
#id1 = affine_map<(i) -> (i)>
#sum = affine_map<(i) -> ()>
func.func @stay(%small: memref<4xf32>, %big: memref<1024xf32>, %total: memref<f32>, %at: index) {
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%small : memref<4xf32>) outs(%small : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#id1, #sum], iterator_types = ["reduction"]}
      ins(%big : memref<1024xf32>) outs(%total : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  %half = memref.subview %big[%at] [512] [1] : memref<1024xf32> to memref<512xf32, strided<[1], offset: ?>>
  linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]}
      outs(%half : memref<512xf32, strided<[1], offset: ?>>) {
  ^bb0(%out: f32):
    %z = arith.constant 0.0 : f32
    linalg.yield %z : f32
  }
  return
}

// -----

// Tests that an op writing the interior of a padded buffer (a view of
// static offset and strides) is split across threads too: the body takes
// the whole buffer and rebuilds the view.
// CHECK-LABEL: func.func @padded_interior
// CHECK-SAME: (%[[X:.*]]: memref<8x16x16xf32>, %[[P:.*]]: memref<8x18x18xf32>)
// CHECK: call @padded_interior_par0(%[[X]], %[[P]], %{{.*}}, %{{.*}}) : (memref<8x16x16xf32>, memref<8x18x18xf32>, index, index) -> ()
// CHECK: func.func private @padded_interior_par0(%{{.*}}: memref<8x16x16xf32> {llvm.noalias}, %[[PB:.*]]: memref<8x18x18xf32> {llvm.noalias}, %{{.*}}: index, %{{.*}}: index)
// CHECK: %[[VIEW:.*]] = memref.reinterpret_cast %[[PB]] to offset: [19], sizes: [8, 16, 16], strides: [324, 18, 1] : memref<8x18x18xf32> to memref<8x16x16xf32, strided<[324, 18, 1], offset: 19>>
// CHECK: memref.subview %[[VIEW]]
#id3 = affine_map<(n, h, w) -> (n, h, w)>
func.func @padded_interior(%x: memref<8x16x16xf32>, %padded: memref<8x18x18xf32>) {
  %interior = memref.subview %padded[0, 1, 1] [8, 16, 16] [1, 1, 1] : memref<8x18x18xf32> to memref<8x16x16xf32, strided<[324, 18, 1], offset: 19>>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<8x16x16xf32>) outs(%interior : memref<8x16x16xf32, strided<[324, 18, 1], offset: 19>>) {
  ^bb0(%in: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %in, %z : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Tests that a copy into a strided view (a strided convolution's data
// gradient phase going into its interleaved output) becomes a linalg.copy
// split across threads, while a contiguous copy stays memref.copy (memcpy).
// CHECK-LABEL: func.func @strided_copy
// CHECK-SAME: (%[[PHASE:.*]]: memref<8x16x16xf32>, %[[OUT:.*]]: memref<8x32x32xf32>, %[[SAME:.*]]: memref<8x16x16xf32>)
// CHECK: call @strided_copy_par0(%[[PHASE]], %[[OUT]], %{{.*}}, %{{.*}})
// CHECK-NEXT: memref.copy %[[PHASE]], %[[SAME]]
// CHECK: func.func private @strided_copy_par0
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [33], sizes: [8, 16, 16], strides: [1024, 64, 2]
// CHECK: linalg.copy
func.func @strided_copy(%phase: memref<8x16x16xf32>, %out: memref<8x32x32xf32>, %same: memref<8x16x16xf32>) {
  %odd = memref.subview %out[0, 1, 1] [8, 16, 16] [1, 2, 2] : memref<8x32x32xf32> to memref<8x16x16xf32, strided<[1024, 64, 2], offset: 33>>
  memref.copy %phase, %odd : memref<8x16x16xf32> to memref<8x16x16xf32, strided<[1024, 64, 2], offset: 33>>
  memref.copy %phase, %same : memref<8x16x16xf32> to memref<8x16x16xf32>
  return
}

// -----

// Tests that an op is only split along a loop that indexes its output
// directly: slices along `i` of `out[i * 16 + j]` would still be disjoint,
// but the pass does not reason about that and keeps the op whole.
// CHECK-LABEL: func.func @flattening
// CHECK-NOT: call
#id2 = affine_map<(i, j) -> (i, j)>
#flat = affine_map<(i, j) -> (i * 16 + j)>
func.func @flattening(%a: memref<8x16xf32>, %b: memref<128xf32>) {
  linalg.generic {indexing_maps = [#id2, #flat], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<8x16xf32>) outs(%b : memref<128xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// Tests that an op too small to split stays inline without outline-serial
// and, with it, moves into a function called directly (no range).
// CHECK-LABEL: func.func @small
// CHECK-NOT: call
// CHECK: linalg.generic
// SERIAL-LABEL: func.func @small
// SERIAL-SAME: (%[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<4xf32>)
// SERIAL-NEXT: call @small_seq0(%[[A]], %[[B]]) : (memref<4xf32>, memref<4xf32>) -> ()
// SERIAL-NEXT: return
// SERIAL: func.func private @small_seq0(%{{.*}}: memref<4xf32> {llvm.noalias}, %{{.*}}: memref<4xf32> {llvm.noalias}) attributes {traincc.serial_body}
// SERIAL-NEXT: linalg.generic
#id4 = affine_map<(i) -> (i)>
func.func @small(%a: memref<4xf32>, %b: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// Tests that views of one workspace at disjoint constant byte offsets are
// noalias, while overlapping ones are not.
// CHECK-LABEL: func.func @workspace_views
// CHECK: func.func private @workspace_views_par1(%{{.*}}: memref<64xf32>, %{{.*}}: memref<64xf32>, %{{.*}}: index, %{{.*}}: index)
// CHECK: func.func private @workspace_views_par0(%{{.*}}: memref<64xf32> {llvm.noalias}, %{{.*}}: memref<64xf32> {llvm.noalias}, %{{.*}}: index, %{{.*}}: index)
#id1 = affine_map<(i) -> (i)>
func.func @workspace_views(%ws: memref<1024xi8>) {
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  %c128 = arith.constant 128 : index
  %a = memref.view %ws[%c0][] : memref<1024xi8> to memref<64xf32>
  %b = memref.view %ws[%c256][] : memref<1024xi8> to memref<64xf32>
  %c = memref.view %ws[%c128][] : memref<1024xi8> to memref<64xf32>
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%a : memref<64xf32>) outs(%b : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%a : memref<64xf32>) outs(%c : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %in : f32
    linalg.yield %s : f32
  }
  return
}
