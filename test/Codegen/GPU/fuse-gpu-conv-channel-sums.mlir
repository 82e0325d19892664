// RUN: traincc-opt %s -split-input-file -traincc-fuse-gpu-conv-channel-sums | FileCheck %s

// Tests that the per-channel sum of a convolution's output (read through a
// collapse_shape that keeps [batch, channel]) becomes the convolution's
// marked second output: one partial per channel and 64-position tile of
// M = (n, oh, ow) = 128, the tiles of the tiled kernel's blocks. The named
// convolution becomes a linalg.generic that passes the partials through,
// the fill of its output stays in front of it, and the sum adds the
// partials over the tiles where the sum was.
// CHECK: #[[TILES:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> ((d0 * 64 + d2 * 8 + d3) floordiv 64, d1)>
// CHECK-LABEL: func.func @fused
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg2 : memref<2x8x8x8xf32>)
// CHECK-NEXT: %[[P:.*]] = memref.alloc() : memref<2x8xf32>
// CHECK-NEXT: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #[[TILES]]]
// CHECK-SAME: outs(%arg2, %[[P]] : memref<2x8x8x8xf32>, memref<2x8xf32>)
// CHECK-SAME: traincc.channel_partials
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %[[PASS:.*]]: f32):
// CHECK: linalg.yield %{{.*}}, %[[PASS]] : f32, f32
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg3 : memref<8xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["reduction", "parallel"]}
// CHECK-SAME: ins(%[[P]] : memref<2x8xf32>) outs(%arg3 : memref<8xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return
#all = affine_map<(n, c, p) -> (n, c, p)>
#chan = affine_map<(n, c, p) -> (c)>
func.func @fused(%x: memref<2x3x10x10xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x8x8x8xf32>, %sum: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x8x8x8xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : memref<2x3x10x10xf32>, memref<8x3x3x3xf32>) outs(%y : memref<2x8x8x8xf32>)
  linalg.fill ins(%zero : f32) outs(%sum : memref<8xf32>)
  %flat = memref.collapse_shape %y [[0], [1], [2, 3]] : memref<2x8x8x8xf32> into memref<2x8x64xf32>
  linalg.generic {indexing_maps = [#all, #chan], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%flat : memref<2x8x64xf32>) outs(%sum : memref<8xf32>) {
  ^bb0(%v: f32, %t: f32):
    %a = arith.addf %t, %v : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// Tests that an M of at most 64 positions (one tile) has one partial per
// channel, at tile 0, and that the marks of earlier passes and other
// readers of the output before the sum stay.
// CHECK: #[[ONE:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (0, d1)>
// CHECK-LABEL: func.func @one_tile
// CHECK: %[[P:.*]] = memref.alloc() : memref<1x32xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #[[ONE]]]
// CHECK-SAME: outs(%arg2, %[[P]] : memref<1x32x4x4xf32>, memref<1x32xf32>)
// CHECK-SAME: {traincc.channel_partials, traincc.zero_init}
// CHECK: memref.copy %arg2, %arg4
// CHECK: ins(%[[P]] : memref<1x32xf32>) outs(%arg3 : memref<32xf32>)
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#all = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>
func.func @one_tile(%x: memref<1x3x6x6xf32>, %w: memref<32x3x3x3xf32>, %y: memref<1x32x4x4xf32>, %sum: memref<32xf32>, %copy: memref<1x32x4x4xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x3x6x6xf32>, memref<32x3x3x3xf32>) outs(%y : memref<1x32x4x4xf32>) attrs = {traincc.zero_init} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.copy %y, %copy : memref<1x32x4x4xf32> to memref<1x32x4x4xf32>
  linalg.generic {indexing_maps = [#all, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%y : memref<1x32x4x4xf32>) outs(%sum : memref<32xf32>) {
  ^bb0(%v: f32, %t: f32):
    %a = arith.addf %t, %v : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// Tests that the variance after the mean (squares around the partials'
// total over the count) becomes moments of the same tiles: counts and m2
// next to the partials, the mark traincc.channel_moments, and a second
// stage over the tiles that adds each tile's m2 and its mean's distance
// from the mean. A variance around a mean that goes to the runtime in
// between (a synchronized BatchNorm's replica mean) stays.
// CHECK-LABEL: func.func @variance
// CHECK: %[[P:.*]] = memref.alloc() : memref<2x8xf32>
// CHECK-NEXT: %[[K:.*]] = memref.alloc() : memref<2x8xf32>
// CHECK-NEXT: %[[Q:.*]] = memref.alloc() : memref<2x8xf32>
// CHECK-NEXT: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #[[TILES:.*]], #[[TILES]], #[[TILES]]]
// CHECK-SAME: outs(%arg2, %[[P]], %[[K]], %[[Q]] : memref<2x8x8x8xf32>, memref<2x8xf32>, memref<2x8xf32>, memref<2x8xf32>)
// CHECK-SAME: {traincc.channel_moments, traincc.channel_partials}
// CHECK: ins(%[[P]] : memref<2x8xf32>) outs(%arg3 : memref<8xf32>)
// CHECK: ins(%arg3 : memref<8xf32>) outs(%arg4 : memref<8xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["reduction", "parallel"]}
// CHECK-SAME: ins(%[[P]], %[[K]], %[[Q]], %arg4 : memref<2x8xf32>, memref<2x8xf32>, memref<2x8xf32>, memref<8xf32>) outs(%arg5 : memref<8xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return
// CHECK-LABEL: func.func @variance_kept
// CHECK-NOT: traincc.channel_moments
// CHECK: ins(%arg2, %arg4 : memref<2x8x8x8xf32>, memref<8xf32>) outs(%arg5 : memref<8xf32>)
#all = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>
#vec = affine_map<(c) -> (c)>
func.func private @replica_mean(i64)
func.func @variance(%x: memref<2x3x10x10xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x8x8x8xf32>, %sum: memref<8xf32>, %mean: memref<8xf32>, %var: memref<8xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : memref<2x3x10x10xf32>, memref<8x3x3x3xf32>) outs(%y : memref<2x8x8x8xf32>)
  linalg.generic {indexing_maps = [#all, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%y : memref<2x8x8x8xf32>) outs(%sum : memref<8xf32>) {
  ^bb0(%v: f32, %t: f32):
    %a = arith.addf %t, %v : f32
    linalg.yield %a : f32
  }
  %count = arith.constant 128.0 : f32
  linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%sum : memref<8xf32>) outs(%mean : memref<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.divf %v, %count : f32
    linalg.yield %d : f32
  }
  linalg.generic {indexing_maps = [#all, #chan, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%y, %mean : memref<2x8x8x8xf32>, memref<8xf32>) outs(%var : memref<8xf32>) {
  ^bb0(%v: f32, %m: f32, %t: f32):
    %d = arith.subf %v, %m : f32
    %q = arith.mulf %d, %d : f32
    %a = arith.addf %t, %q : f32
    linalg.yield %a : f32
  }
  return
}
func.func @variance_kept(%x: memref<2x3x10x10xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x8x8x8xf32>, %sum: memref<8xf32>, %mean: memref<8xf32>, %var: memref<8xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : memref<2x3x10x10xf32>, memref<8x3x3x3xf32>) outs(%y : memref<2x8x8x8xf32>)
  linalg.generic {indexing_maps = [#all, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%y : memref<2x8x8x8xf32>) outs(%sum : memref<8xf32>) {
  ^bb0(%v: f32, %t: f32):
    %a = arith.addf %t, %v : f32
    linalg.yield %a : f32
  }
  %count = arith.constant 128.0 : f32
  linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%sum : memref<8xf32>) outs(%mean : memref<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.divf %v, %count : f32
    linalg.yield %d : f32
  }
  %address = memref.extract_aligned_pointer_as_index %mean : memref<8xf32> -> index
  %pointer = arith.index_cast %address : index to i64
  call @replica_mean(%pointer) : (i64) -> ()
  linalg.generic {indexing_maps = [#all, #chan, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%y, %mean : memref<2x8x8x8xf32>, memref<8xf32>) outs(%var : memref<8xf32>) {
  ^bb0(%v: f32, %m: f32, %t: f32):
    %d = arith.subf %v, %m : f32
    %q = arith.mulf %d, %d : f32
    %a = arith.addf %t, %q : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// Tests that a convolution with just too few tiles for the GPU (ResNet-18's
// last stage at batch 128: 128 x 16 x 512 outputs, 256 tiles) keeps its
// sums in the epilogue: split-K per input channel would need 2 GiB of
// partials, and the split into 2 parts that traincc-split-gpu-reductions
// makes of other such contractions gives way to the fusion.
// CHECK-LABEL: func.func @few_tiles
// CHECK: memref.alloc() : memref<32x512xf32>
// CHECK: linalg.generic
// CHECK-SAME: traincc.channel_partials
#all = affine_map<(n, c, p) -> (n, c, p)>
#chan = affine_map<(n, c, p) -> (c)>
func.func @few_tiles(%x: memref<128x512x6x6xf32>, %w: memref<512x512x3x3xf32>, %y: memref<128x512x4x4xf32>, %sum: memref<512xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<128x512x4x4xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : memref<128x512x6x6xf32>, memref<512x512x3x3xf32>) outs(%y : memref<128x512x4x4xf32>)
  linalg.fill ins(%zero : f32) outs(%sum : memref<512xf32>)
  %flat = memref.collapse_shape %y [[0], [1], [2, 3]] : memref<128x512x4x4xf32> into memref<128x512x16xf32>
  linalg.generic {indexing_maps = [#all, #chan], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%flat : memref<128x512x16xf32>) outs(%sum : memref<512xf32>) {
  ^bb0(%v: f32, %t: f32):
    %a = arith.addf %t, %v : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// Tests what is left alone: a convolution too small for a tiled kernel
// (N = 4), a grouped convolution (its group loop is a batch of the GEMM
// view, and the output's second index), an output written again before
// the sum, and a private function (not a GPU step).
// CHECK-NOT: memref.alloc
// CHECK-NOT: traincc.channel_partials
#all = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>
#gin = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, c, oh + kh, ow + kw)>
#gw = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (g, f, c, kh, kw)>
#gout = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, f, oh, ow)>
#gall = affine_map<(n, g, f, h, w) -> (n, g, f, h, w)>
#gchan = affine_map<(n, g, f, h, w) -> (g)>
func.func @too_small(%x: memref<1x3x6x6xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x4x4xf32>, %sum: memref<4xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : memref<1x3x6x6xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x4x4xf32>)
  linalg.generic {indexing_maps = [#all, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%y : memref<1x4x4x4xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%v: f32, %t: f32):
    %a = arith.addf %t, %v : f32
    linalg.yield %a : f32
  }
  return
}
func.func @grouped(%x: memref<2x2x3x10x10xf32>, %w: memref<2x8x3x3x3xf32>, %y: memref<2x2x8x8x8xf32>, %sum: memref<2xf32>) {
  linalg.generic {indexing_maps = [#gin, #gw, #gout], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<2x2x3x10x10xf32>, memref<2x8x3x3x3xf32>) outs(%y : memref<2x2x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#gall, #gchan], iterator_types = ["reduction", "parallel", "reduction", "reduction", "reduction"]}
      ins(%y : memref<2x2x8x8x8xf32>) outs(%sum : memref<2xf32>) {
  ^bb0(%v: f32, %t: f32):
    %a = arith.addf %t, %v : f32
    linalg.yield %a : f32
  }
  return
}
func.func @written_between(%x: memref<2x3x10x10xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x8x8x8xf32>, %sum: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : memref<2x3x10x10xf32>, memref<8x3x3x3xf32>) outs(%y : memref<2x8x8x8xf32>)
  linalg.generic {indexing_maps = [#all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%y : memref<2x8x8x8xf32>) {
  ^bb0(%v: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#all, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%y : memref<2x8x8x8xf32>) outs(%sum : memref<8xf32>) {
  ^bb0(%v: f32, %t: f32):
    %a = arith.addf %t, %v : f32
    linalg.yield %a : f32
  }
  return
}
func.func private @helper(%x: memref<2x3x10x10xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x8x8x8xf32>, %sum: memref<8xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : memref<2x3x10x10xf32>, memref<8x3x3x3xf32>) outs(%y : memref<2x8x8x8xf32>)
  linalg.generic {indexing_maps = [#all, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%y : memref<2x8x8x8xf32>) outs(%sum : memref<8xf32>) {
  ^bb0(%v: f32, %t: f32):
    %a = arith.addf %t, %v : f32
    linalg.yield %a : f32
  }
  return
}
