// RUN: traincc-opt %s -split-input-file -traincc-fuse-gpu-conv-epilogues | FileCheck %s

// Tests that a convolution's data gradient whose output (a temporary) is
// read once, by the ReLU mask that also sums BatchNorm's two backward terms
// into partial sums per image row, moves down to the mask (past an op that
// touches neither its inputs nor its output), with the fill of its output,
// and is marked traincc.epilogue. The mask runs over the convolution's
// parallel loops (n, f, oh, ow) and reads its output at the convolution's
// indices; its row partials become partials per 64-position M tile
// (M = (n, oh, ow) = 128: two tiles) and channel, zero-filled before the
// convolution, and the second stages add the tiles' partials. Every loop
// but the channel's is then a reduction of the partials. The row partials
// and their fills go.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[CHAN:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-DAG: #[[TILES:.*]] = affine_map<(d0, d1, d2, d3) -> ((d0 * 64 + d2 * 8 + d3) floordiv 64, d1)>
// CHECK-LABEL: func.func @mask_and_sums
// CHECK: %[[DX:.*]] = memref.alloc() : memref<2x8x8x8xf32>
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg8 : memref<4xf32>)
// CHECK-NOT: memref<2x8x8xf32>
// CHECK: %[[P1:.*]] = memref.alloc() : memref<2x8xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[P1]] : memref<2x8xf32>)
// CHECK-NEXT: %[[P2:.*]] = memref.alloc() : memref<2x8xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[P2]] : memref<2x8xf32>)
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[DX]] : memref<2x8x8x8xf32>)
// CHECK-NEXT: linalg.conv_2d_nchw_fchw {{.*}}traincc.epilogue{{.*}} outs(%[[DX]] : memref<2x8x8x8xf32>)
// CHECK-NEXT: linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]], #[[CHAN]], #[[ID]], #[[TILES]], #[[TILES]]], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[DX]], %arg2, %arg3, %arg4 : memref<2x8x8x8xf32>, memref<2x8x8x8xf32>, memref<2x8x8x8xf32>, memref<8xf32>)
// CHECK-SAME: outs(%arg5, %[[P1]], %[[P2]] : memref<2x8x8x8xf32>, memref<2x8xf32>, memref<2x8xf32>)
// CHECK: arith.cmpf ogt
// CHECK: linalg.yield
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg6 : memref<8xf32>)
// CHECK-NEXT: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[P1]] : memref<2x8xf32>) outs(%arg6 : memref<8xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg7 : memref<8xf32>)
// CHECK-NEXT: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[P2]] : memref<2x8xf32>) outs(%arg7 : memref<8xf32>)
// CHECK-NOT: memref<2x8x8xf32>
// CHECK: return
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>
#rows = affine_map<(n, c, h, w) -> (n, c, w)>
#r3 = affine_map<(n, c, w) -> (n, c, w)>
#c3 = affine_map<(n, c, w) -> (c)>
func.func @mask_and_sums(%x: memref<2x3x10x10xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x8x8x8xf32>, %a: memref<2x8x8x8xf32>, %mean: memref<8xf32>, %g: memref<2x8x8x8xf32>, %s: memref<8xf32>, %t: memref<8xf32>, %other: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %dx = memref.alloc() : memref<2x8x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%dx : memref<2x8x8x8xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : memref<2x3x10x10xf32>, memref<8x3x3x3xf32>) outs(%dx : memref<2x8x8x8xf32>)
  linalg.fill ins(%zero : f32) outs(%other : memref<4xf32>)
  %r1 = memref.alloc() : memref<2x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%r1 : memref<2x8x8xf32>)
  %r2 = memref.alloc() : memref<2x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%r2 : memref<2x8x8xf32>)
  linalg.generic {indexing_maps = [#id, #id, #id, #chan, #id, #rows, #rows], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%dx, %y, %a, %mean : memref<2x8x8x8xf32>, memref<2x8x8x8xf32>, memref<2x8x8x8xf32>, memref<8xf32>)
      outs(%g, %r1, %r2 : memref<2x8x8x8xf32>, memref<2x8x8xf32>, memref<2x8x8xf32>) {
  ^bb0(%d: f32, %yv: f32, %av: f32, %m: f32, %o: f32, %p1: f32, %p2: f32):
    %pos = arith.cmpf ogt, %yv, %zero : f32
    %masked = arith.select %pos, %d, %zero : f32
    %s1 = arith.addf %p1, %masked : f32
    %centred = arith.subf %av, %m : f32
    %prod = arith.mulf %masked, %centred : f32
    %s2 = arith.addf %p2, %prod : f32
    linalg.yield %masked, %s1, %s2 : f32, f32, f32
  }
  linalg.fill ins(%zero : f32) outs(%s : memref<8xf32>)
  linalg.generic {indexing_maps = [#r3, #c3], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%r1 : memref<2x8x8xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %n = arith.addf %acc, %v : f32
    linalg.yield %n : f32
  }
  linalg.fill ins(%zero : f32) outs(%t : memref<8xf32>)
  linalg.generic {indexing_maps = [#r3, #c3], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%r2 : memref<2x8x8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %n = arith.addf %acc, %v : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// Tests that a mask without sums, reading the output of a grouped
// convolution's data gradient (one group: a unit batch loop) through a
// collapse_shape that drops the group, stays all-parallel over the
// convolution's parallel loops (n, g, c, h, w), not indexing the group, and
// that it may update its other input in place.
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[DROP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
// CHECK-LABEL: func.func @grouped_mask
// CHECK: linalg.generic {{.*}}traincc.epilogue
// CHECK: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: linalg.generic {indexing_maps = [#[[OUT]], #[[DROP]], #[[DROP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%{{.*}}, %arg2 : memref<2x1x8x8x8xf32>, memref<2x8x8x8xf32>) outs(%arg2 : memref<2x8x8x8xf32>)
#gin = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, c, oh + kh, ow + kw)>
#gw = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (g, c, f, kh, kw)>
#gout = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, f, oh, ow)>
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @grouped_mask(%x: memref<2x1x3x10x10xf32>, %w: memref<1x3x8x3x3xf32>, %y: memref<2x8x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %dx = memref.alloc() : memref<2x1x8x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%dx : memref<2x1x8x8x8xf32>)
  linalg.generic {indexing_maps = [#gin, #gw, #gout], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<2x1x3x10x10xf32>, memref<1x3x8x3x3xf32>) outs(%dx : memref<2x1x8x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  %flat = memref.collapse_shape %dx [[0], [1, 2], [3], [4]] : memref<2x1x8x8x8xf32> into memref<2x8x8x8xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%flat, %y : memref<2x8x8x8xf32>, memref<2x8x8x8xf32>) outs(%y : memref<2x8x8x8xf32>) {
  ^bb0(%d: f32, %yv: f32, %o: f32):
    %pos = arith.cmpf ogt, %yv, %zero : f32
    %masked = arith.select %pos, %d, %zero : f32
    linalg.yield %masked : f32
  }
  return
}

// -----

// Tests that a matmul's [B*T, N] output read as [B, T, N] (a linear layer
// of a transformer, then its bias) takes the bias in its epilogue: the
// bias's loops over the matmul's (m, n) read its [B, T, N] output at
// (m floordiv T, m mod T, n).
// CHECK-DAG: #[[MN:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[N:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[BTN:.*]] = affine_map<(d0, d1) -> (d0 floordiv 8, d0 mod 8, d1)>
// CHECK-LABEL: func.func @linear_bias
// CHECK: linalg.matmul {traincc.epilogue}
// CHECK-NEXT: linalg.generic {indexing_maps = [#[[MN]], #[[N]], #[[BTN]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%{{.*}}, %arg2 : memref<16x16xf32>, memref<16xf32>) outs(%arg3 : memref<2x8x16xf32>)
#n = affine_map<(b, t, n) -> (n)>
#btn = affine_map<(b, t, n) -> (b, t, n)>
func.func @linear_bias(%a: memref<16x16xf32>, %w: memref<16x16xf32>, %bias: memref<16xf32>, %y: memref<2x8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %mm = memref.alloc() : memref<16x16xf32>
  linalg.fill ins(%zero : f32) outs(%mm : memref<16x16xf32>)
  linalg.matmul ins(%a, %w : memref<16x16xf32>, memref<16x16xf32>) outs(%mm : memref<16x16xf32>)
  %bt = memref.expand_shape %mm [[0, 1], [2]] output_shape [2, 8, 16] : memref<16x16xf32> into memref<2x8x16xf32>
  linalg.generic {indexing_maps = [#n, #btn, #btn], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%bias, %bt : memref<16xf32>, memref<2x8x16xf32>) outs(%y : memref<2x8x16xf32>) {
  ^bb0(%b: f32, %v: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that of two convolutions whose outputs one op adds (a residual
// block's two data gradients), the first becomes the op's epilogue, moving
// past the second, which then stays apart: it would otherwise come between
// the first and its epilogue.
// CHECK-LABEL: func.func @two_producers
// CHECK: linalg.conv_2d_nchw_fchw ins(%{{.*}}, %arg2 : {{.*}}) outs(%[[B:[^ ]*]] : memref<2x8x8x8xf32>)
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.conv_2d_nchw_fchw {{.*}}traincc.epilogue{{.*}} outs(%[[A:[^ ]*]] : memref<2x8x8x8xf32>)
// CHECK-NEXT: linalg.generic
// CHECK-SAME: ins(%[[A]], %[[B]] :
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @two_producers(%x: memref<2x3x10x10xf32>, %w: memref<8x3x3x3xf32>, %v: memref<8x3x3x3xf32>, %g: memref<2x8x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<2x8x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<2x8x8x8xf32>)
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<2x3x10x10xf32>, memref<8x3x3x3xf32>) outs(%a : memref<2x8x8x8xf32>)
  %b = memref.alloc() : memref<2x8x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%b : memref<2x8x8x8xf32>)
  linalg.conv_2d_nchw_fchw ins(%x, %v : memref<2x3x10x10xf32>, memref<8x3x3x3xf32>) outs(%b : memref<2x8x8x8xf32>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%a, %b : memref<2x8x8x8xf32>, memref<2x8x8x8xf32>) outs(%g : memref<2x8x8x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests the cases left apart: the output read again after the mask, an op
// between the two that writes the convolution's filter, an output that is
// an argument of the step (not a temporary), and a mask that writes the
// convolution's input.
// CHECK-LABEL: func.func @read_again
// CHECK-NOT: traincc.epilogue
// CHECK-LABEL: func.func @input_written
// CHECK-NOT: traincc.epilogue
// CHECK-LABEL: func.func @not_temporary
// CHECK-NOT: traincc.epilogue
// CHECK-LABEL: func.func @writes_input
// CHECK-NOT: traincc.epilogue
// CHECK: return
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @read_again(%x: memref<2x3x10x10xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x8x8x8xf32>, %g: memref<2x8x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %dx = memref.alloc() : memref<2x8x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%dx : memref<2x8x8x8xf32>)
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<2x3x10x10xf32>, memref<8x3x3x3xf32>) outs(%dx : memref<2x8x8x8xf32>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%dx, %y : memref<2x8x8x8xf32>, memref<2x8x8x8xf32>) outs(%g : memref<2x8x8x8xf32>) {
  ^bb0(%d: f32, %yv: f32, %o: f32):
    %s = arith.addf %d, %yv : f32
    linalg.yield %s : f32
  }
  memref.copy %dx, %y : memref<2x8x8x8xf32> to memref<2x8x8x8xf32>
  return
}
func.func @input_written(%x: memref<2x3x10x10xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x8x8x8xf32>, %g: memref<2x8x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %dx = memref.alloc() : memref<2x8x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%dx : memref<2x8x8x8xf32>)
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<2x3x10x10xf32>, memref<8x3x3x3xf32>) outs(%dx : memref<2x8x8x8xf32>)
  linalg.fill ins(%zero : f32) outs(%w : memref<8x3x3x3xf32>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%dx, %y : memref<2x8x8x8xf32>, memref<2x8x8x8xf32>) outs(%g : memref<2x8x8x8xf32>) {
  ^bb0(%d: f32, %yv: f32, %o: f32):
    %s = arith.addf %d, %yv : f32
    linalg.yield %s : f32
  }
  return
}
func.func @not_temporary(%x: memref<2x3x10x10xf32>, %w: memref<8x3x3x3xf32>, %dx: memref<2x8x8x8xf32>, %g: memref<2x8x8x8xf32>) {
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<2x3x10x10xf32>, memref<8x3x3x3xf32>) outs(%dx : memref<2x8x8x8xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%dx : memref<2x8x8x8xf32>) outs(%g : memref<2x8x8x8xf32>) {
  ^bb0(%d: f32, %o: f32):
    linalg.yield %d : f32
  }
  return
}
func.func @writes_input(%x: memref<2x8x10x10xf32>, %w: memref<8x8x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %dx = memref.alloc() : memref<2x8x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%dx : memref<2x8x8x8xf32>)
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<2x8x10x10xf32>, memref<8x8x3x3xf32>) outs(%dx : memref<2x8x8x8xf32>)
  %view = memref.subview %x[0, 0, 1, 1] [2, 8, 8, 8] [1, 1, 1, 1] : memref<2x8x10x10xf32> to memref<2x8x8x8xf32, strided<[800, 100, 10, 1], offset: 11>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%dx : memref<2x8x8x8xf32>) outs(%view : memref<2x8x8x8xf32, strided<[800, 100, 10, 1], offset: 11>>) {
  ^bb0(%d: f32, %o: f32):
    linalg.yield %d : f32
  }
  return
}
