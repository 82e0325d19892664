// RUN: traincc-opt %s -split-input-file -traincc-collapse-contiguous-loops | FileCheck %s

// Tests that an elementwise op over whole buffers becomes one loop over
// every element, and that a thread's slice of a batch (dynamic leading
// size, rows still without gaps) collapses the same way.
// CHECK-LABEL: func.func @elementwise
// CHECK: %[[A:.*]] = memref.collapse_shape %arg0 {{\[\[}}0, 1, 2, 3]] : memref<4x8x28x28xf32> into memref<25088xf32>
// CHECK: %[[B:.*]] = memref.collapse_shape %arg1 {{\[\[}}0, 1, 2, 3]]
// CHECK: %[[C:.*]] = memref.collapse_shape %arg2 {{\[\[}}0, 1, 2, 3]]
// CHECK: linalg.generic {{{.*}}iterator_types = ["parallel"]} ins(%[[A]], %[[B]] : memref<25088xf32>, memref<25088xf32>) outs(%[[C]] : memref<25088xf32>)
// CHECK: arith.maximumf
// CHECK-LABEL: func.func @slice
// CHECK: memref.collapse_shape %arg0 {{\[\[}}0, 1, 2, 3]] : memref<?x8x28x28xf32, strided<[6272, 784, 28, 1], offset: ?>> into memref<?xf32, strided<[1], offset: ?>>
// CHECK: linalg.generic {{{.*}}iterator_types = ["parallel"]}
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @elementwise(%a: memref<4x8x28x28xf32>, %b: memref<4x8x28x28xf32>, %c: memref<4x8x28x28xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%a, %b : memref<4x8x28x28xf32>, memref<4x8x28x28xf32>) outs(%c : memref<4x8x28x28xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %m = arith.maximumf %x, %y : f32
    linalg.yield %m : f32
  }
  return
}
func.func @slice(%a: memref<?x8x28x28xf32, strided<[6272, 784, 28, 1], offset: ?>>, %c: memref<?x8x28x28xf32, strided<[6272, 784, 28, 1], offset: ?>>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%a : memref<?x8x28x28xf32, strided<[6272, 784, 28, 1], offset: ?>>) outs(%c : memref<?x8x28x28xf32, strided<[6272, 784, 28, 1], offset: ?>>) {
  ^bb0(%x: f32, %z: f32):
    %m = arith.negf %x : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Tests a BatchNorm-style reduction: per-channel sums over N, H and W. H
// and W become one reduction loop of 784 (a per-channel operand reads
// neither); N stays apart (channels sit between it and H), and so does C
// (the iterator types differ).
// CHECK-LABEL: func.func @channel_sums
// CHECK: %[[X:.*]] = memref.collapse_shape %arg0 {{\[\[}}0], [1], [2, 3]] : memref<4x8x28x28xf32> into memref<4x8x784xf32>
// CHECK: linalg.generic {{{.*}}iterator_types = ["reduction", "parallel", "reduction"]} ins(%[[X]], %arg1 : memref<4x8x784xf32>, memref<8xf32>) outs(%arg2 : memref<8xf32>)
#x = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch = affine_map<(n, c, h, w) -> (c)>
func.func @channel_sums(%x: memref<4x8x28x28xf32>, %mean: memref<8xf32>, %sums: memref<8xf32>) {
  linalg.generic {indexing_maps = [#x, #ch, #ch], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x, %mean : memref<4x8x28x28xf32>, memref<8xf32>) outs(%sums : memref<8xf32>) {
  ^bb0(%v: f32, %m: f32, %acc: f32):
    %d = arith.subf %v, %m : f32
    %s = arith.addf %acc, %d : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests what stays as it is: rows with a gap between them (a padded
// buffer's interior), an operand that reads the two loops in the other
// order (a transpose), an op that reads its indices, and a convolution
// (its input is indexed by sums of loops).
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: memref.collapse_shape
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: memref.collapse_shape
#id2 = affine_map<(i, j) -> (i, j)>
#t2 = affine_map<(i, j) -> (j, i)>
#in = affine_map<(n, f, oh, c, kh, kw, ow) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, c, kh, kw, ow) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, c, kh, kw, ow) -> (n, f, oh, ow)>
func.func @untouched(%padded: memref<28x28xf32, strided<[30, 1], offset: 31>>, %dense: memref<28x28xf32>,
                     %x: memref<2x3x16x16xf32>, %w: memref<4x3x3x3xf32>, %y: memref<2x4x14x14xf32>) {
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%padded : memref<28x28xf32, strided<[30, 1], offset: 31>>) outs(%dense : memref<28x28xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#t2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%dense : memref<28x28xf32>) outs(%dense : memref<28x28xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%dense : memref<28x28xf32>) {
  ^bb0(%b: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = arith.addi %i, %j : index
    %ki = arith.index_cast %k : index to i32
    %kf = arith.sitofp %ki : i32 to f32
    linalg.yield %kf : f32
  }
  linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]}
      ins(%x, %w : memref<2x3x16x16xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x14x14xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
