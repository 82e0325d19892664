// RUN: traincc-opt %s -split-input-file -traincc-order-loops-for-vectorization | FileCheck %s

// Tests that a convolution's filter window (3 iterations) leaves the
// innermost position to the output width, along which the output and the
// input are contiguous; the other loops keep their order.
// CHECK: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d5 + d6)>
// CHECK: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>
// CHECK: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>
// CHECK-LABEL: func.func @conv
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[W]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]}
// CHECK-NOT: reassoc
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
func.func @conv(%x: memref<2x3x10x10xf32>, %w: memref<4x3x3x3xf32>, %y: memref<2x4x8x8xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<2x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a reduction becomes innermost when it is the only long
// contiguous loop (a filter gradient: the output is 3x3 per channel pair),
// and that its sum may then be reassociated across vector lanes.
// CHECK: #[[DY:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>
// CHECK-LABEL: func.func @filter_gradient
// CHECK: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
#x = affine_map<(f, c, kh, kw, n, oh, ow) -> (n, c, oh + kh, ow + kw)>
#dy = affine_map<(f, c, kh, kw, n, oh, ow) -> (n, f, oh, ow)>
#dw = affine_map<(f, c, kh, kw, n, oh, ow) -> (f, c, kh, kw)>
func.func @filter_gradient(%x: memref<2x3x18x18xf32>, %dy: memref<2x4x16x16xf32>, %dw: memref<4x3x3x3xf32>) {
  linalg.generic {indexing_maps = [#x, #dy, #dw], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : memref<2x3x18x18xf32>, memref<2x4x16x16xf32>) outs(%dw : memref<4x3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a transposing copy keeps the loop along which the stored
// output is contiguous innermost, although the input is strided there.
// CHECK-LABEL: func.func @transpose
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%{{.*}} : memref<16x32xf32>) outs(%{{.*}} : memref<32x16xf32>)
#t = affine_map<(i, j) -> (j, i)>
#id = affine_map<(i, j) -> (i, j)>
func.func @transpose(%a: memref<16x32xf32>, %b: memref<32x16xf32>) {
  linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<16x32xf32>) outs(%b : memref<32x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// Tests that a per-channel sum keeps its contiguous pixel loop innermost,
// the sum in a register, rather than walking the channels with a stride to
// store the output contiguously.
// CHECK: #[[ROWS:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK: #[[CHANNEL:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @channel_sum
// CHECK: indexing_maps = [#[[ROWS]], #[[CHANNEL]]], iterator_types = ["reduction", "parallel", "reduction"]
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
#rows = affine_map<(n, c, p) -> (n, c, p)>
#channel = affine_map<(n, c, p) -> (c)>
func.func @channel_sum(%x: memref<4x32x784xf32>, %sum: memref<32xf32>) {
  linalg.generic {indexing_maps = [#rows, #channel], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%x : memref<4x32x784xf32>) outs(%sum : memref<32xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that an op marked traincc.keep_loop_order (a Winograd transform,
// whose short position loop innermost is unrolled whole) keeps its order
// although another loop is longer and contiguous.
// CHECK: #[[KEPT:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @kept_order
// CHECK: indexing_maps = [#[[KEPT]], #[[KEPT]]], iterator_types = ["parallel", "parallel"]
// CHECK-SAME: traincc.keep_loop_order
#kept = affine_map<(i, x) -> (x, i)>
func.func @kept_order(%a: memref<4x64xf32>, %b: memref<4x64xf32>) {
  linalg.generic {indexing_maps = [#kept, #kept], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x64xf32>) outs(%b : memref<4x64xf32>) attrs = {traincc.keep_loop_order} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// Tests that an op writing an output at every point while it sums over the
// batch (traincc-fuse-sums-into-producers' partials) keeps a parallel loop
// innermost, the one along which its operands are contiguous, however
// short, and that its sums are not reassociated: each lane adds its terms
// in batch order. The batch loop would score higher innermost, since the
// partials stay in a register along it.
// CHECK-LABEL: func.func @ordered_sums
// CHECK: iterator_types = ["parallel", "reduction", "parallel"]
// CHECK-NOT: reassoc
#every = affine_map<(c, n, w) -> (n, c, w)>
#partial = affine_map<(c, n, w) -> (c, w)>
func.func @ordered_sums(%x: memref<64x8x4xf32>, %dy: memref<64x8x4xf32>, %p: memref<8x4xf32>) {
  linalg.generic {indexing_maps = [#every, #every, #partial], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : memref<64x8x4xf32>) outs(%dy, %p : memref<64x8x4xf32>, memref<8x4xf32>) {
  ^bb0(%in: f32, %out: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %in, %s : f32, f32
  }
  return
}
