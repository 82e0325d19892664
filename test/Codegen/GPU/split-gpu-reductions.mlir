// RUN: traincc-opt %s -split-input-file -traincc-split-gpu-reductions | FileCheck %s

// Tests that a per-channel sum over N*H*W (BatchNorm statistics, 8192 terms
// for each of 4 channels) becomes a zero-filled partial sum per (n, c), with
// n now parallel, and a final sum over n added into the original output.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @channel_sums
// CHECK-SAME: (%[[IN:.*]]: memref<8x4x32x32xf32>, %[[OUT:.*]]: memref<4xf32>)
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<8x4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[PARTIAL]] : memref<8x4xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[P]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[IN]] : {{.*}}) outs(%[[PARTIAL]] : {{.*}})
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[ID2]], #[[C]]], iterator_types = ["reduction", "parallel"]} ins(%[[PARTIAL]] : memref<8x4xf32>) outs(%[[OUT]] : memref<4xf32>)
// CHECK: ^bb0(%[[PART:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[SUM:.*]] = arith.addf %[[ACC]], %[[PART]] : f32
// CHECK: linalg.yield %[[SUM]]
#x = affine_map<(n, c, h, w) -> (n, c, h, w)>
#c = affine_map<(n, c, h, w) -> (c)>
func.func @channel_sums(%in: memref<8x4x32x32xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [#x, #c], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%in : memref<8x4x32x32xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a sum whose partials would be short (16 terms) is still split
// when there are many of them (4096 per output, a thread each).
// CHECK-LABEL: func.func @many_short_partials
// CHECK: memref.alloc() : memref<4096x8xf32>
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: iterator_types = ["reduction", "parallel"]
func.func @many_short_partials(%in: memref<4096x8x16xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, c, k) -> (n, c, k)>, affine_map<(n, c, k) -> (c)>], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%in : memref<4096x8x16xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that sums with enough outputs to fill the GPU with blocks (1024),
// few terms (2048: one block per output does them), partials both short
// (196 terms) and few (128 per output: fewer threads than a block per
// output), a single reduction loop, or a body that is not `out + f(inputs)`
// (a maximum) stay as they are: traincc-map-gpu-reductions maps them whole.
// CHECK-LABEL: func.func @unchanged
// CHECK-NOT: memref.alloc
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT: linalg.generic
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#x3 = affine_map<(i, j, k) -> (i, j, k)>
#r3 = affine_map<(i, j, k) -> (i)>
func.func @unchanged(%a: memref<1024x64x64xf32>, %rows: memref<1024xf32>, %b: memref<4x8192xf32>, %m: memref<4xf32>, %c: memref<4x64x64xf32>, %d: memref<4x32x64xf32>, %e: memref<128x64x14x14xf32>, %ch: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%e : memref<128x64x14x14xf32>) outs(%ch : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x3, #r3], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%a : memref<1024x64x64xf32>) outs(%rows : memref<1024xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x3, #r3], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%d : memref<4x32x64xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b : memref<4x8192xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x3, #r3], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%c : memref<4x64x64xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.maximumf %acc, %v : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests split-K of a contraction whose tiled kernel would have few tiles
// with long loops: a convolution's filter gradient (12 weights, 32 x 64 x 64
// terms each) becomes per-sample partial sums, a batch of GEMMs, and their
// sum over samples.
// CHECK-LABEL: func.func @filter_gradient
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<32x2x2x3xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]
// CHECK-SAME: outs(%[[PARTIAL]]
// CHECK: linalg.generic {{.*}} ins(%[[PARTIAL]] : memref<32x2x2x3xf32>) outs(%{{.*}} : memref<2x2x3xf32>)
#xin = affine_map<(n, co, ci, h, w, k) -> (n, ci, h + k, w)>
#dy = affine_map<(n, co, ci, h, w, k) -> (n, co, h, w)>
#dw = affine_map<(n, co, ci, h, w, k) -> (co, ci, k)>
func.func @filter_gradient(%x: memref<32x2x66x64xf32>, %g: memref<32x2x64x64xf32>, %dw: memref<2x2x3xf32>) {
  linalg.generic {indexing_maps = [#xin, #dy, #dw], iterator_types = ["reduction", "parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%x, %g : memref<32x2x66x64xf32>, memref<32x2x64x64xf32>) outs(%dw : memref<2x2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a contraction stays whole when its tiles already fill the GPU
// (1152 x 1024 outputs: 288 tiles of 64 x 64).
// CHECK-LABEL: func.func @contraction_kept_whole
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
#a = affine_map<(i, j, r, k) -> (i, r, k)>
#b = affine_map<(i, j, r, k) -> (r, k, j)>
#c = affine_map<(i, j, r, k) -> (i, j)>
func.func @contraction_kept_whole(%a: memref<1152x32x128xf32>, %b: memref<32x128x1024xf32>, %c: memref<1152x1024xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : memref<1152x32x128xf32>, memref<32x128x1024xf32>) outs(%c : memref<1152x1024xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a contraction whose partials per position of its outer
// reduction loop would take more than 64 MiB (1024 x 1024 outputs, 256
// tiles, split 32 ways: 128 MiB) has that loop strip-mined into the fewest
// parts that give 264 tiles: 2 parts of 16, 8 MiB of partials. Both inputs
// are viewed with the loop's axis expanded; the parts are split as usual.
// CHECK-LABEL: func.func @contraction_strip_mined
// CHECK-SAME: (%[[A:.*]]: memref<1024x32x128xf32>, %[[B:.*]]: memref<32x128x1024xf32>, %[[C:.*]]: memref<1024x1024xf32>)
// CHECK: %[[AE:.*]] = memref.expand_shape %[[A]] {{\[}}[0], [1, 2], [3]] output_shape [1024, 2, 16, 128]
// CHECK: %[[BE:.*]] = memref.expand_shape %[[B]] {{\[}}[0, 1], [2], [3]] output_shape [2, 16, 128, 1024]
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<2x1024x1024xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[AE]], %[[BE]] : {{.*}}) outs(%[[PARTIAL]]
// CHECK: linalg.generic {{.*}} ins(%[[PARTIAL]] : memref<2x1024x1024xf32>) outs(%[[C]] : memref<1024x1024xf32>)
#a = affine_map<(i, j, r, k) -> (i, r, k)>
#b = affine_map<(i, j, r, k) -> (r, k, j)>
#c = affine_map<(i, j, r, k) -> (i, j)>
func.func @contraction_strip_mined(%a: memref<1024x32x128xf32>, %b: memref<32x128x1024xf32>, %c: memref<1024x1024xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : memref<1024x32x128xf32>, memref<32x128x1024xf32>) outs(%c : memref<1024x1024xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests split-K of a contraction with a single reduction loop (a classifier
// over 3136 flattened features, whose 64 x 10 outputs are one tile): the
// loop is strip-mined into 49 parts of 64 terms by viewing both inputs as
// [.., 49, 64], and the parts are split as usual.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d3)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d0, d3)>
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @classifier
// CHECK-SAME: (%[[XIN:.*]]: memref<64x3136xf32>, %[[WIN:.*]]: memref<10x3136xf32>, %[[Y:.*]]: memref<64x10xf32>)
// CHECK: %[[XE:.*]] = memref.expand_shape %[[XIN]] {{\[}}[0], [1, 2]] output_shape [64, 49, 64]
// CHECK: %[[WE:.*]] = memref.expand_shape %[[WIN]] {{\[}}[0], [1, 2]] output_shape [10, 49, 64]
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<49x64x10xf32>
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[P]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[XE]], %[[WE]] : {{.*}}) outs(%[[PARTIAL]]
// CHECK: linalg.generic {{.*}} ins(%[[PARTIAL]] : memref<49x64x10xf32>) outs(%[[Y]] : memref<64x10xf32>)
#x = affine_map<(i, j, k) -> (i, k)>
#w = affine_map<(i, j, k) -> (j, k)>
#y = affine_map<(i, j, k) -> (i, j)>
func.func @classifier(%x: memref<64x3136xf32>, %w: memref<10x3136xf32>, %y: memref<64x10xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<64x3136xf32>, memref<10x3136xf32>) outs(%y : memref<64x10xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a single reduction loop read through a compound index (a 1-D
// convolution's window) is not strip-mined: no axis could be split.
// CHECK-LABEL: func.func @window
// CHECK-NOT: memref.expand_shape
// CHECK-NOT: memref.alloc
#in = affine_map<(n, f, o, k) -> (n, o + k)>
#flt = affine_map<(n, f, o, k) -> (f, k)>
#out = affine_map<(n, f, o, k) -> (n, f, o)>
func.func @window(%x: memref<4x4099xf32>, %w: memref<8x4096xf32>, %y: memref<4x8x4xf32>) {
  linalg.generic {indexing_maps = [#in, #flt, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<4x4099xf32>, memref<8x4096xf32>) outs(%y : memref<4x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that named contractions are split too (as generics): a linear
// layer's matmul with 12 outputs and 8192 terms, in 128 parts of 64.
// CHECK-LABEL: func.func @linear
// CHECK: memref.alloc() : memref<128x4x3xf32>
// CHECK-NOT: linalg.matmul
func.func @linear(%x: memref<4x8192xf32>, %w: memref<8192x3xf32>, %y: memref<4x3xf32>) {
  linalg.matmul ins(%x, %w : memref<4x8192xf32>, memref<8192x3xf32>) outs(%y : memref<4x3xf32>)
  return
}
