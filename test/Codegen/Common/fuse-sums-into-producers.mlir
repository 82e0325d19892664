// RUN: traincc-opt %s -split-input-file -traincc-fuse-sums-into-producers | FileCheck %s

// Tests that BatchNorm's backward sums (of dy and of dy * (x - mean)) move
// into the ReLU mask that computes dy: one op writes dy at every point and
// adds the terms into zero-filled partials per image and row lane, its
// row loop now a reduction; a second op adds each channel's partials into
// the sums' initial values. dy keeps its other reader.
// CHECK-DAG: #[[ALL:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-DAG: #[[PARTIAL:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[STAGE:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[STAGE_OUT:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @batchnorm_backward_sums
// CHECK-SAME: (%[[G:.*]]: tensor<4x8x16x16xf32>, %[[Y:.*]]: tensor<4x8x16x16xf32>, %[[X:.*]]: tensor<4x8x16x16xf32>, %[[MEAN:.*]]: tensor<8xf32>)
// CHECK: %[[P1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x8x16xf32>)
// CHECK: %[[P2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x8x16xf32>)
// CHECK: %[[MERGED:.*]]:3 = linalg.generic {indexing_maps = [#[[ALL]], #[[ALL]], #[[ALL]], #[[C]], #[[ALL]], #[[PARTIAL]], #[[PARTIAL]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[G]], %[[Y]], %[[X]], %[[MEAN]] :
// CHECK-SAME: outs(%{{.*}}, %[[P1]], %[[P2]] :
// CHECK: %[[MASKED:.*]] = arith.select
// CHECK: %[[S1:.*]] = arith.addf %{{.*}}, %[[MASKED]] : f32
// CHECK: arith.subf
// CHECK: %[[TERM:.*]] = arith.mulf %[[MASKED]], %{{.*}} : f32
// CHECK: %[[S2:.*]] = arith.addf %{{.*}}, %[[TERM]] : f32
// CHECK: linalg.yield %[[MASKED]], %[[S1]], %[[S2]]
// CHECK: %[[SUMS:.*]]:2 = linalg.generic {indexing_maps = [#[[STAGE]], #[[STAGE]], #[[STAGE_OUT]], #[[STAGE_OUT]]], iterator_types = ["reduction", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[MERGED]]#1, %[[MERGED]]#2 :
// CHECK: return %[[MERGED]]#0, %[[SUMS]]#0, %[[SUMS]]#1
#all = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>
func.func @batchnorm_backward_sums(%g: tensor<4x8x16x16xf32>, %y: tensor<4x8x16x16xf32>, %x: tensor<4x8x16x16xf32>, %mean: tensor<8xf32>)
    -> (tensor<4x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8x16x16xf32>
  %dy = linalg.generic {indexing_maps = [#all, #all, #all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%g, %y : tensor<4x8x16x16xf32>, tensor<4x8x16x16xf32>) outs(%empty : tensor<4x8x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %pos = arith.cmpf ogt, %b, %zero : f32
    %m = arith.select %pos, %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x8x16x16xf32>
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %sums:2 = linalg.generic {indexing_maps = [#all, #all, #chan, #chan, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy, %x, %mean : tensor<4x8x16x16xf32>, tensor<4x8x16x16xf32>, tensor<8xf32>) outs(%init, %init : tensor<8xf32>, tensor<8xf32>) {
  ^bb0(%d: f32, %xv: f32, %mu: f32, %s: f32, %t: f32):
    %s1 = arith.addf %s, %d : f32
    %c = arith.subf %xv, %mu : f32
    %p = arith.mulf %d, %c : f32
    %t1 = arith.addf %t, %p : f32
    linalg.yield %s1, %t1 : f32, f32
  } -> (tensor<8xf32>, tensor<8xf32>)
  return %dy, %sums#0, %sums#1 : tensor<4x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests a producer in a pooling window's space (max pooling's gradient,
// per output pixel and window offset, written [n, c, oh, kh, ow, kw]) that
// the sums read through a collapse_shape: the merged op runs in the
// producer's loops, reads x expanded like dy, and its partials are laid
// out like a row of dy (output pixel and window offset) per image and
// channel; the rows' loops (output row, window row) are its reductions.
// CHECK-DAG: #[[POOLED:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[WINDOW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4, d3, d5)>
// CHECK-DAG: #[[CHAN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1)>
// CHECK-DAG: #[[PARTIAL:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d5)>
// CHECK-LABEL: func.func @pooling_gradient_sums
// CHECK: %[[XW:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2, 3], [4, 5]] output_shape [2, 4, 4, 2, 4, 2]
// CHECK: tensor<2x4x8x8xf32> into tensor<2x4x4x2x4x2xf32>
// CHECK: %[[MERGED:.*]]:3 = linalg.generic {indexing_maps = [#[[POOLED]], #[[WINDOW]], #[[CHAN]], #[[WINDOW]], #[[PARTIAL]], #[[PARTIAL]]], iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%{{.*}}, %[[XW]], %{{.*}} :
// CHECK: } -> (tensor<2x4x4x2x4x2xf32>, tensor<2x4x4x2xf32>, tensor<2x4x4x2xf32>)
// CHECK: tensor.collapse_shape %[[MERGED]]#0
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction"]
// CHECK-SAME: ins(%[[MERGED]]#1, %[[MERGED]]#2 :
#pooled = affine_map<(n, c, oh, ow, kh, kw) -> (n, c, oh, ow)>
#window = affine_map<(n, c, oh, ow, kh, kw) -> (n, c, oh, kh, ow, kw)>
#all = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>
func.func @pooling_gradient_sums(%g: tensor<2x4x4x4xf32>, %x: tensor<2x4x8x8xf32>, %mean: tensor<4xf32>)
    -> (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x4x4x2x4x2xf32>
  %dy6 = linalg.generic {indexing_maps = [#pooled, #window], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%g : tensor<2x4x4x4xf32>) outs(%empty : tensor<2x4x4x2x4x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %half = arith.constant 0.25 : f32
    %m = arith.mulf %a, %half : f32
    linalg.yield %m : f32
  } -> tensor<2x4x4x2x4x2xf32>
  %dy = tensor.collapse_shape %dy6 [[0], [1], [2, 3], [4, 5]] : tensor<2x4x4x2x4x2xf32> into tensor<2x4x8x8xf32>
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %sums:2 = linalg.generic {indexing_maps = [#all, #all, #chan, #chan, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy, %x, %mean : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<4xf32>) outs(%init, %init : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%d: f32, %xv: f32, %mu: f32, %s: f32, %t: f32):
    %s1 = arith.addf %s, %d : f32
    %c = arith.subf %xv, %mu : f32
    %p = arith.mulf %d, %c : f32
    %t1 = arith.addf %t, %p : f32
    linalg.yield %s1, %t1 : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  return %dy, %sums#0, %sums#1 : tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests BatchNorm's two sums as two ops (traincc-fuse-elementwise leaves
// sibling sums apart for the GPU kernels), with a second BatchNorm's sum
// of the same dy (a residual block's shortcut): all three join the producer
// in one rewrite, each with its own partials and its own second stage. The
// sum of dy alone joins because the others bring the producer in.
// CHECK-LABEL: func.func @separate_sums
// CHECK: %[[MERGED:.*]]:4 = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK: %[[MASKED:.*]] = arith.select
// CHECK: %[[S:.*]] = arith.addf %{{.*}}, %[[MASKED]] : f32
// CHECK: %[[T1:.*]] = arith.addf
// CHECK: %[[T2:.*]] = arith.addf
// CHECK: linalg.yield %[[MASKED]], %[[S]], %[[T1]], %[[T2]]
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[MERGED]]#1 :
// CHECK: %[[TERM1:.*]] = linalg.generic {{.*}} ins(%[[MERGED]]#2 :
// CHECK: %[[TERM2:.*]] = linalg.generic {{.*}} ins(%[[MERGED]]#3 :
// CHECK: return %[[MERGED]]#0, %[[SUM]], %[[TERM1]], %[[TERM2]]
#all = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>
func.func @separate_sums(%g: tensor<4x8x16x16xf32>, %y: tensor<4x8x16x16xf32>, %x: tensor<4x8x16x16xf32>, %mean: tensor<8xf32>, %x2: tensor<4x8x16x16xf32>, %mean2: tensor<8xf32>)
    -> (tensor<4x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8x16x16xf32>
  %dy = linalg.generic {indexing_maps = [#all, #all, #all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%g, %y : tensor<4x8x16x16xf32>, tensor<4x8x16x16xf32>) outs(%empty : tensor<4x8x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %pos = arith.cmpf ogt, %b, %zero : f32
    %m = arith.select %pos, %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x8x16x16xf32>
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#all, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy : tensor<4x8x16x16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%d: f32, %s: f32):
    %s1 = arith.addf %s, %d : f32
    linalg.yield %s1 : f32
  } -> tensor<8xf32>
  %term1 = linalg.generic {indexing_maps = [#all, #all, #chan, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy, %x, %mean : tensor<4x8x16x16xf32>, tensor<4x8x16x16xf32>, tensor<8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%d: f32, %xv: f32, %mu: f32, %t: f32):
    %c = arith.subf %xv, %mu : f32
    %p = arith.mulf %d, %c : f32
    %t1 = arith.addf %t, %p : f32
    linalg.yield %t1 : f32
  } -> tensor<8xf32>
  %term2 = linalg.generic {indexing_maps = [#all, #all, #chan, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy, %x2, %mean2 : tensor<4x8x16x16xf32>, tensor<4x8x16x16xf32>, tensor<8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%d: f32, %xv: f32, %mu: f32, %t: f32):
    %c = arith.subf %xv, %mu : f32
    %p = arith.mulf %d, %c : f32
    %t1 = arith.addf %t, %p : f32
    linalg.yield %t1 : f32
  } -> tensor<8xf32>
  return %dy, %sum, %term1, %term2 : tensor<4x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests that a sum over the batch alone (a dense layer's weighted terms,
// [n, k] -> [k]) stays apart: without image rows, the partials would be as
// large as dy.
// CHECK-LABEL: func.func @batch_sum
// CHECK: iterator_types = ["parallel", "parallel"]
// CHECK: linalg.fill
// CHECK: iterator_types = ["reduction", "parallel"]
#nk = affine_map<(n, k) -> (n, k)>
#k = affine_map<(n, k) -> (k)>
func.func @batch_sum(%a: tensor<16x32xf32>, %x: tensor<16x32xf32>) -> (tensor<16x32xf32>, tensor<32xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<16x32xf32>
  %d = linalg.generic {indexing_maps = [#nk, #nk], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<16x32xf32>) outs(%empty : tensor<16x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<16x32xf32>
  %e = tensor.empty() : tensor<32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %s = linalg.generic {indexing_maps = [#nk, #nk, #k], iterator_types = ["reduction", "parallel"]}
      ins(%d, %x : tensor<16x32xf32>, tensor<16x32xf32>) outs(%init : tensor<32xf32>) {
  ^bb0(%dv: f32, %xv: f32, %acc: f32):
    %p = arith.mulf %dv, %xv : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<32xf32>
  return %d, %s : tensor<16x32xf32>, tensor<32xf32>
}

// -----

// Tests the sums that stay apart: a sum of the producer's result alone (a
// bias gradient, read back from cache right after it was written); a sum
// of a convolution's output (left to traincc-fuse-conv-channel-sums); a
// sum whose terms read a running output (not a plain sum); a sum without
// a batch loop before its parallel one.
// CHECK-LABEL: func.func @stay_apart
// CHECK-COUNT-2: iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK: iterator_types = ["reduction", "parallel", "reduction", "reduction"]
// CHECK: iterator_types = ["reduction", "parallel", "reduction", "reduction"]
// CHECK: iterator_types = ["reduction", "parallel", "reduction", "reduction"]
// CHECK: iterator_types = ["parallel", "reduction", "reduction", "reduction"]
// CHECK-NOT: linalg.generic
#all = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>
#cfirst = affine_map<(c, n, h, w) -> (n, c, h, w)>
#cout = affine_map<(c, n, h, w) -> (c)>
func.func @stay_apart(%g: tensor<4x8x16x16xf32>, %x: tensor<4x8x18x18xf32>, %w: tensor<8x8x3x3xf32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8x16x16xf32>
  %dy = linalg.generic {indexing_maps = [#all, #all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%g : tensor<4x8x16x16xf32>) outs(%empty : tensor<4x8x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x8x16x16xf32>
  %dy2 = linalg.generic {indexing_maps = [#all, #all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%g : tensor<4x8x16x16xf32>) outs(%empty : tensor<4x8x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.minimumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x8x16x16xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8x16x16xf32>) -> tensor<4x8x16x16xf32>
  %conv = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<4x8x18x18xf32>, tensor<8x8x3x3xf32>) outs(%filled : tensor<4x8x16x16xf32>) -> tensor<4x8x16x16xf32>
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %bias = linalg.generic {indexing_maps = [#all, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy : tensor<4x8x16x16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%d: f32, %acc: f32):
    %r = arith.addf %acc, %d : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %mean = linalg.generic {indexing_maps = [#all, #all, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%conv, %g : tensor<4x8x16x16xf32>, tensor<4x8x16x16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%d: f32, %o: f32, %acc: f32):
    %p = arith.mulf %d, %o : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %running = linalg.generic {indexing_maps = [#all, #all, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy2, %g : tensor<4x8x16x16xf32>, tensor<4x8x16x16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%d: f32, %o: f32, %acc: f32):
    %p = arith.mulf %d, %acc : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %late = linalg.generic {indexing_maps = [#cfirst, #cfirst, #cout], iterator_types = ["parallel", "reduction", "reduction", "reduction"]}
      ins(%dy2, %g : tensor<4x8x16x16xf32>, tensor<4x8x16x16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%d: f32, %o: f32, %acc: f32):
    %p = arith.mulf %d, %o : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %bias, %mean, %running, %late : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
