// RUN: traincc-opt %s -split-input-file -traincc-fuse-conv-channel-sums | FileCheck %s

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
// a second input (BatchNorm's variance around the mean), and a grouped
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
