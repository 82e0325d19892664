// RUN: traincc-opt %s -split-input-file -traincc-fuse-conv-channel-sums | FileCheck %s
// RUN: traincc-opt %s -split-input-file -traincc-fuse-conv-channel-sums=min-variance-terms=28 | FileCheck %s --check-prefix=FEW

// Tests that the per-channel sum of a convolution's output (read through a
// collapse_shape that keeps [batch, channel], a kernel timer in between)
// becomes the convolution's marked second output, zeroed before it, and a
// sum of that over the batch where the sum was.
// CHECK: #[[SUMSMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1)>
// CHECK-LABEL: func.func @fused
// CHECK: %[[SUMS:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[SUMS]] : memref<2x4xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #[[SUMSMAP]]]
// CHECK-SAME: outs(%arg2, %[[SUMS]] : memref<2x4x14x14xf32>, memref<2x4xf32>)
// CHECK-SAME: traincc.channel_sums
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %[[PASS:.*]]: f32):
// CHECK: linalg.yield %{{.*}}, %[[PASS]] : f32, f32
// CHECK: call @timer()
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["reduction", "parallel"]}
// CHECK-SAME: ins(%[[SUMS]] : memref<2x4xf32>) outs(%arg3 : memref<4xf32>)
// CHECK: memref.dealloc %[[SUMS]]
// CHECK-NOT: memref.collapse_shape
// CHECK: return
#in = affine_map<(n, f, oh, c, kh, kw, ow) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, c, kh, kw, ow) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, c, kh, kw, ow) -> (n, f, oh, ow)>
#all = affine_map<(n, c, p) -> (n, c, p)>
#chan = affine_map<(n, c, p) -> (c)>
func.func private @timer()
func.func @fused(%x: memref<2x3x16x16xf32>, %w: memref<4x3x3x3xf32>, %y: memref<2x4x14x14xf32>, %sum: memref<4xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]}
      ins(%x, %w : memref<2x3x16x16xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x14x14xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  call @timer() : () -> ()
  %flat = memref.collapse_shape %y [[0], [1], [2, 3]] : memref<2x4x14x14xf32> into memref<2x4x196xf32>
  linalg.generic {indexing_maps = [#all, #chan], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%flat : memref<2x4x196xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%v: f32, %t: f32):
    %a = arith.addf %t, %v fastmath<reassoc> : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// Tests that other readers of the convolution's output may come before the
// sum (its output stays whole), and that the marks of earlier passes stay.
// CHECK-LABEL: func.func @read_between
// CHECK: linalg.generic
// CHECK-SAME: {traincc.channel_sums, traincc.zero_init}
// CHECK: memref.copy %arg2, %arg4
// CHECK: ins(%{{.*}} : memref<2x4xf32>) outs(%arg3 : memref<4xf32>)
#in = affine_map<(n, f, c, k, ow) -> (n, c, ow + k)>
#w = affine_map<(n, f, c, k, ow) -> (f, c, k)>
#out = affine_map<(n, f, c, k, ow) -> (n, f, ow)>
#all = affine_map<(n, c, p) -> (n, c, p)>
#chan = affine_map<(n, c, p) -> (c)>
func.func @read_between(%x: memref<2x3x34xf32>, %w: memref<4x3x3xf32>, %y: memref<2x4x32xf32>, %sum: memref<4xf32>, %copy: memref<2x4x32xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%x, %w : memref<2x3x34xf32>, memref<4x3x3xf32>) outs(%y : memref<2x4x32xf32>) attrs = {traincc.zero_init} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.copy %y, %copy : memref<2x4x32xf32> to memref<2x4x32xf32>
  linalg.generic {indexing_maps = [#all, #chan], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%y : memref<2x4x32xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%v: f32, %t: f32):
    %a = arith.addf %t, %v : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// Tests what stays apart: a sum after an op that writes the output again
// (an in-place ReLU), a sum per image rather than per channel, a sum with
// a second input (a variance with no mean's sum before it), and a grouped
// convolution, whose output is a view [n, group, channel-in-group, w] of
// the [n, channel, w] buffer that the sum reads.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: traincc.channel_sums
// CHECK-NOT: memref.alloc
// CHECK: return
#in = affine_map<(n, f, c, k, ow) -> (n, c, ow + k)>
#w = affine_map<(n, f, c, k, ow) -> (f, c, k)>
#out = affine_map<(n, f, c, k, ow) -> (n, f, ow)>
#gin = affine_map<(n, g, f, c, k, ow) -> (n, g, c, ow + k)>
#gw = affine_map<(n, g, f, c, k, ow) -> (g, f, c, k)>
#gout = affine_map<(n, g, f, c, k, ow) -> (n, g, f, ow)>
#all = affine_map<(n, c, p) -> (n, c, p)>
#chan = affine_map<(n, c, p) -> (c)>
#image = affine_map<(n, c, p) -> (n)>
func.func @kept(%x: memref<2x3x34xf32>, %w: memref<4x3x3xf32>, %y: memref<2x4x32xf32>, %sum: memref<4xf32>, %per: memref<2xf32>, %mean: memref<4xf32>,
                %gx: memref<2x2x3x34xf32>, %gwt: memref<2x2x3x3xf32>, %gy: memref<2x4x32xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%x, %w : memref<2x3x34xf32>, memref<4x3x3xf32>) outs(%y : memref<2x4x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#all], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%y : memref<2x4x32xf32>) {
  ^bb0(%v: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#all, #chan], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%y : memref<2x4x32xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%v: f32, %t: f32):
    %a = arith.addf %t, %v : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%x, %w : memref<2x3x34xf32>, memref<4x3x3xf32>) outs(%y : memref<2x4x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#all, #image], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%y : memref<2x4x32xf32>) outs(%per : memref<2xf32>) {
  ^bb0(%v: f32, %t: f32):
    %a = arith.addf %t, %v : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#all, #chan, #chan], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%y, %mean : memref<2x4x32xf32>, memref<4xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%v: f32, %m: f32, %t: f32):
    %d = arith.subf %v, %m : f32
    %q = arith.mulf %d, %d : f32
    %a = arith.addf %t, %q : f32
    linalg.yield %a : f32
  }
  %groups = memref.expand_shape %gy [[0], [1, 2], [3]] output_shape [2, 2, 2, 32] : memref<2x4x32xf32> into memref<2x2x2x32xf32>
  linalg.generic {indexing_maps = [#gin, #gw, #gout], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%gx, %gwt : memref<2x2x3x34xf32>, memref<2x2x3x3xf32>) outs(%groups : memref<2x2x2x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#all, #chan], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%gy : memref<2x4x32xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%v: f32, %t: f32):
    %a = arith.addf %t, %v : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// Tests that the variance that follows the mean (squares around the sums
// divided by the count, read through a collapse_shape) becomes partial
// moments of the convolution: counts and m2 zeroed next to the sums, the
// mark traincc.channel_moments, and a second stage over the batch that
// adds each image's m2 and its mean's distance from the mean.
// CHECK-LABEL: func.func @variance
// CHECK: %[[SUMS:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[SUMS]] : memref<2x4xf32>)
// CHECK: %[[COUNTS:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[COUNTS]] : memref<2x4xf32>)
// CHECK: %[[M2:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[M2]] : memref<2x4xf32>)
// CHECK: linalg.generic
// CHECK-SAME: outs(%arg2, %[[SUMS]], %[[COUNTS]], %[[M2]] : memref<2x4x14x14xf32>, memref<2x4xf32>, memref<2x4xf32>, memref<2x4xf32>)
// CHECK-SAME: {traincc.channel_moments, traincc.channel_sums}
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %[[S:.*]]: f32, %[[K:.*]]: f32, %[[Q:.*]]: f32):
// CHECK: linalg.yield %{{.*}}, %[[S]], %[[K]], %[[Q]] : f32, f32, f32, f32
// CHECK: ins(%[[SUMS]] : memref<2x4xf32>) outs(%arg3 : memref<4xf32>)
// CHECK: ins(%arg3 : memref<4xf32>) outs(%arg4 : memref<4xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #[[CHAN:.*]], #[[CHAN]]], iterator_types = ["reduction", "parallel"]}
// CHECK-SAME: ins(%[[SUMS]], %[[COUNTS]], %[[M2]], %arg4 : memref<2x4xf32>, memref<2x4xf32>, memref<2x4xf32>, memref<4xf32>) outs(%arg5 : memref<4xf32>)
// CHECK: ^bb0(%[[PS:.*]]: f32, %[[PK:.*]]: f32, %[[PQ:.*]]: f32, %[[MEAN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[DIV:.*]] = arith.divf %[[PS]], %[[PK]] : f32
// CHECK: %[[OFF:.*]] = arith.subf %[[DIV]], %[[MEAN]] : f32
// CHECK: %[[SQ:.*]] = arith.mulf %[[OFF]], %[[OFF]] : f32
// CHECK: %[[W:.*]] = arith.mulf %[[PK]], %[[SQ]] : f32
// CHECK: %[[ALL:.*]] = arith.addf %[[PQ]], %[[W]] : f32
// CHECK: arith.addf %[[ACC]], %[[ALL]] : f32
// CHECK: memref.dealloc %[[SUMS]]
// CHECK: memref.dealloc %[[COUNTS]]
// CHECK: memref.dealloc %[[M2]]
// CHECK-NOT: memref.collapse_shape
// CHECK: return

// With fewer multiply-adds per output (27 here) than min-variance-terms,
// the mean's sum alone moves into the epilogue; the variance stays a pass
// over the output.
// FEW-LABEL: func.func @variance
// FEW-NOT: traincc.channel_moments
// FEW: {traincc.channel_sums}
// FEW-NOT: traincc.channel_moments
// FEW: ins(%arg3 : memref<4xf32>) outs(%arg4 : memref<4xf32>)
// FEW: ins(%{{.*}}, %arg4 : memref<2x4x196xf32>, memref<4xf32>) outs(%arg5 : memref<4xf32>)
#in = affine_map<(n, f, oh, c, kh, kw, ow) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, c, kh, kw, ow) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, c, kh, kw, ow) -> (n, f, oh, ow)>
#all = affine_map<(n, c, p) -> (n, c, p)>
#chan = affine_map<(n, c, p) -> (c)>
#vec = affine_map<(c) -> (c)>
func.func @variance(%x: memref<2x3x16x16xf32>, %w: memref<4x3x3x3xf32>, %y: memref<2x4x14x14xf32>, %sum: memref<4xf32>, %mean: memref<4xf32>, %var: memref<4xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]}
      ins(%x, %w : memref<2x3x16x16xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x14x14xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  %flat = memref.collapse_shape %y [[0], [1], [2, 3]] : memref<2x4x14x14xf32> into memref<2x4x196xf32>
  linalg.generic {indexing_maps = [#all, #chan], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%flat : memref<2x4x196xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%v: f32, %t: f32):
    %a = arith.addf %t, %v fastmath<reassoc> : f32
    linalg.yield %a : f32
  }
  %count = arith.constant 392.0 : f32
  linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%sum : memref<4xf32>) outs(%mean : memref<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.divf %v, %count : f32
    linalg.yield %d : f32
  }
  %flat2 = memref.collapse_shape %y [[0], [1], [2, 3]] : memref<2x4x14x14xf32> into memref<2x4x196xf32>
  linalg.generic {indexing_maps = [#all, #chan, #chan], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%flat2, %mean : memref<2x4x196xf32>, memref<4xf32>) outs(%var : memref<4xf32>) {
  ^bb0(%v: f32, %m: f32, %t: f32):
    %d = arith.subf %v, %m fastmath<reassoc> : f32
    %q = arith.mulf %d, %d fastmath<reassoc> : f32
    %a = arith.addf %t, %q fastmath<reassoc> : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// Tests that the variance stays apart (the mean's sum alone moves) when
// the mean goes to the runtime between its division and the variance (a
// synchronized BatchNorm averages it over the replicas through a
// pointer), and when the squares are taken around something other than
// the divided sum.
// CHECK-LABEL: func.func @variance_kept
// CHECK-NOT: traincc.channel_moments
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: ins(%arg2, %arg4 : memref<2x4x32xf32>, memref<4xf32>) outs(%arg5 : memref<4xf32>)
// CHECK-NOT: traincc.channel_moments
// CHECK: ins(%arg6, %arg8 : memref<2x4x32xf32>, memref<4xf32>) outs(%arg5 : memref<4xf32>)
// CHECK: return
#in = affine_map<(n, f, c, k, ow) -> (n, c, ow + k)>
#w = affine_map<(n, f, c, k, ow) -> (f, c, k)>
#out = affine_map<(n, f, c, k, ow) -> (n, f, ow)>
#all = affine_map<(n, c, p) -> (n, c, p)>
#chan = affine_map<(n, c, p) -> (c)>
#vec = affine_map<(c) -> (c)>
func.func private @replica_mean(i64)
func.func @variance_kept(%x: memref<2x3x34xf32>, %w: memref<4x3x3xf32>, %y: memref<2x4x32xf32>, %sum: memref<4xf32>, %mean: memref<4xf32>, %var: memref<4xf32>,
                         %y2: memref<2x4x32xf32>, %sum2: memref<4xf32>, %other: memref<4xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%x, %w : memref<2x3x34xf32>, memref<4x3x3xf32>) outs(%y : memref<2x4x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#all, #chan], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%y : memref<2x4x32xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%v: f32, %t: f32):
    %a = arith.addf %t, %v : f32
    linalg.yield %a : f32
  }
  %count = arith.constant 64.0 : f32
  linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%sum : memref<4xf32>) outs(%mean : memref<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.divf %v, %count : f32
    linalg.yield %d : f32
  }
  %address = memref.extract_aligned_pointer_as_index %mean : memref<4xf32> -> index
  %pointer = arith.index_cast %address : index to i64
  call @replica_mean(%pointer) : (i64) -> ()
  linalg.generic {indexing_maps = [#all, #chan, #chan], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%y, %mean : memref<2x4x32xf32>, memref<4xf32>) outs(%var : memref<4xf32>) {
  ^bb0(%v: f32, %m: f32, %t: f32):
    %d = arith.subf %v, %m : f32
    %q = arith.mulf %d, %d : f32
    %a = arith.addf %t, %q : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%x, %w : memref<2x3x34xf32>, memref<4x3x3xf32>) outs(%y2 : memref<2x4x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#all, #chan], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%y2 : memref<2x4x32xf32>) outs(%sum2 : memref<4xf32>) {
  ^bb0(%v: f32, %t: f32):
    %a = arith.addf %t, %v : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%sum2 : memref<4xf32>) outs(%mean : memref<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.divf %v, %count : f32
    linalg.yield %d : f32
  }
  linalg.generic {indexing_maps = [#all, #chan, #chan], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%y2, %other : memref<2x4x32xf32>, memref<4xf32>) outs(%var : memref<4xf32>) {
  ^bb0(%v: f32, %m: f32, %t: f32):
    %d = arith.subf %v, %m : f32
    %q = arith.mulf %d, %d : f32
    %a = arith.addf %t, %q : f32
    linalg.yield %a : f32
  }
  return
}
