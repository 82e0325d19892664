// RUN: traincc-opt %s -split-input-file -traincc-pack-convolution-windows | FileCheck %s
// RUN: traincc-opt %s -split-input-file -traincc-pack-convolution-windows -traincc-collapse-contiguous-loops | FileCheck %s --check-prefix=COLLAPSE
// RUN: traincc-opt %s -split-input-file -traincc-pack-convolution-windows="max-bytes=1024" | FileCheck %s --check-prefix=SMALL

// Tests a convolution with 4-wide output rows (a quarter of a 16-lane
// vector): its input windows are copied into a buffer indexed
// [n, c, kh, kw, oh, ow], which the convolution then reads plainly; the
// buffer is freed after it. With the collapse pass, oh and ow become one
// loop of 16 (and c, kh, kw one reduction of 72, as in the weight).
// Over the size limit, nothing changes.
// CHECK-LABEL: func.func @short_rows
// CHECK: %[[P:.*]] = memref.alloc() : memref<2x8x3x3x4x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[READ:.*]], #[[ID:.*]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : memref<2x8x6x6xf32>) outs(%[[P]] : memref<2x8x3x3x4x4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: linalg.generic {{.*}} ins(%[[P]], %arg1 : memref<2x8x3x3x4x4xf32>, memref<16x8x3x3xf32>) outs(%arg2 : memref<2x16x4x4xf32>)
// CHECK: arith.mulf
// CHECK: memref.dealloc %[[P]] : memref<2x8x3x3x4x4xf32>
// COLLAPSE-LABEL: func.func @short_rows
// COLLAPSE: memref.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3], [4, 5]] : memref<2x8x3x3x4x4xf32> into memref<2x72x16xf32>
// COLLAPSE: linalg.generic {{{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : memref<2x72x16xf32>, memref<16x72xf32>) outs(%{{.*}} : memref<2x16x16xf32>)
// SMALL-LABEL: func.func @short_rows
// SMALL-NOT: memref.alloc
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
func.func @short_rows(%x: memref<2x8x6x6xf32>, %w: memref<16x8x3x3xf32>, %y: memref<2x16x4x4xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<2x8x6x6xf32>, memref<16x8x3x3xf32>) outs(%y : memref<2x16x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests a stride-2 convolution with 16-wide rows (not short, but its input
// rows are read every other element): packed, the copy reading through
// the strided window, and a data gradient whose kernel is flipped
// (`oh - kh + 2`): the output positions are the loops with the positive
// stride.
// CHECK-DAG: #[[STRIDED:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2, d5 * 2 + d3)>
// CHECK-DAG: #[[FLIPPED:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 - d2 + 2, d5 - d3 + 2)>
// CHECK-LABEL: func.func @strided_and_flipped
// CHECK: %[[S:.*]] = memref.alloc() : memref<2x4x3x3x16x16xf32>
// CHECK: linalg.generic {indexing_maps = [#[[STRIDED]], {{.*}}]{{.*}} ins(%arg0 : memref<2x4x33x33xf32>) outs(%[[S]] : memref<2x4x3x3x16x16xf32>)
// CHECK: memref.dealloc %[[S]]
// CHECK: %[[F:.*]] = memref.alloc() : memref<2x8x3x3x4x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[FLIPPED]], {{.*}}]{{.*}} ins(%arg3 : memref<2x8x6x6xf32>) outs(%[[F]] : memref<2x8x3x3x4x4xf32>)
// CHECK: memref.dealloc %[[F]]
#sin = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, 2 * oh + kh, 2 * ow + kw)>
#sw = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#sout = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#dy = affine_map<(n, c, ih, iw, f, kh, kw) -> (n, f, ih - kh + 2, iw - kw + 2)>
#dw = affine_map<(n, c, ih, iw, f, kh, kw) -> (f, c, kh, kw)>
#dx = affine_map<(n, c, ih, iw, f, kh, kw) -> (n, c, ih, iw)>
func.func @strided_and_flipped(%x: memref<2x4x33x33xf32>, %w: memref<8x4x3x3xf32>, %y: memref<2x8x16x16xf32>,
                               %dy: memref<2x8x6x6xf32>, %w2: memref<8x4x3x3xf32>, %dx: memref<2x4x4x4xf32>) {
  linalg.generic {indexing_maps = [#sin, #sw, #sout], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<2x4x33x33xf32>, memref<8x4x3x3xf32>) outs(%y : memref<2x8x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#dy, #dw, #dx], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%dy, %w2 : memref<2x8x6x6xf32>, memref<8x4x3x3xf32>) outs(%dx : memref<2x4x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests the filter gradient of a convolution with 4-wide rows: its output
// dw is innermost along (c, kh, kw), so the packed input goes [n, oh, ow,
// c, kh, kw] (the windows' positions outside, a reduction), and the
// contraction then keeps vectors of dw's c*kh*kw outputs in registers.
// COLLAPSE merges (c, kh, kw) into one contiguous loop of 36.
// CHECK-DAG: #[[TRANSPOSED:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 + d4, d2 + d5)>
// CHECK-LABEL: func.func @filter_gradient_channels_innermost
// CHECK: %[[P:.*]] = memref.alloc() : memref<2x4x4x4x3x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[TRANSPOSED]], {{.*}}]{{.*}} ins(%arg0 : memref<2x4x6x6xf32>) outs(%[[P]] : memref<2x4x4x4x3x3xf32>)
// CHECK: ins(%[[P]], %arg1 : memref<2x4x4x4x3x3xf32>, memref<2x8x4x4xf32>)
// COLLAPSE-LABEL: func.func @filter_gradient_channels_innermost
// COLLAPSE: ins(%{{.*}}, %{{.*}} : memref<2x16x36xf32>, memref<2x8x16xf32>) outs(%{{.*}} : memref<8x36xf32>)
#fx = affine_map<(f, c, kh, kw, n, oh, ow) -> (n, c, oh + kh, ow + kw)>
#fdy = affine_map<(f, c, kh, kw, n, oh, ow) -> (n, f, oh, ow)>
#fdw = affine_map<(f, c, kh, kw, n, oh, ow) -> (f, c, kh, kw)>
func.func @filter_gradient_channels_innermost(%x: memref<2x4x6x6xf32>, %dy: memref<2x8x4x4xf32>, %dw: memref<8x4x3x3xf32>) {
  linalg.generic {indexing_maps = [#fx, #fdy, #fdw], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : memref<2x4x6x6xf32>, memref<2x8x4x4xf32>) outs(%dw : memref<8x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests a filter gradient whose dw rows (c * kh * kw = 576) are a multiple
// of 4 vectors (64 lanes): packed in panels of 64 of them, [576 / 64, n,
// oh, ow, 64], the copy finding each lane's (c, kh, kw) from the panel
// and the lane; the contraction runs over (panel, f, n, oh, ow, lane) and
// writes dw viewed as [8, 9, 64]. (The filter gradient above, 36 wide,
// stays plain.) COLLAPSE merges oh and ow.
// CHECK-DAG: #[[PANEL_READ:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, (d0 * 64 + d4) floordiv 9, ((d0 * 64 + d4) floordiv 3) mod 3 + d2, (d0 * 64 + d4) mod 3 + d3)>
// CHECK-DAG: #[[PANEL_X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d3, d4, d5)>
// CHECK-DAG: #[[PANEL_DY:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d2, d1, d3, d4)>
// CHECK-DAG: #[[PANEL_DW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d0, d5)>
// CHECK-LABEL: func.func @filter_gradient_panels
// CHECK: %[[P:.*]] = memref.alloc() : memref<9x2x4x4x64xf32>
// CHECK: linalg.generic {indexing_maps = [#[[PANEL_READ]], {{.*}}]{{.*}} ins(%arg0 : memref<2x64x6x6xf32>) outs(%[[P]] : memref<9x2x4x4x64xf32>)
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %arg2 {{\[\[}}0], [1, 2, 3]] : memref<8x64x3x3xf32> into memref<8x576xf32>
// CHECK: %[[DW:.*]] = memref.expand_shape %[[FLAT]] {{\[\[}}0], [1, 2]] output_shape [8, 9, 64] : memref<8x576xf32> into memref<8x9x64xf32>
// CHECK: linalg.generic {indexing_maps = [#[[PANEL_X]], #[[PANEL_DY]], #[[PANEL_DW]]], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%[[P]], %arg1 : memref<9x2x4x4x64xf32>, memref<2x8x4x4xf32>) outs(%[[DW]] : memref<8x9x64xf32>)
// CHECK: memref.dealloc %[[P]]
// COLLAPSE-LABEL: func.func @filter_gradient_panels
// COLLAPSE: ins(%{{.*}}, %{{.*}} : memref<9x2x16x64xf32>, memref<2x8x16xf32>) outs(%{{.*}} : memref<8x9x64xf32>)
#px = affine_map<(f, c, kh, kw, n, oh, ow) -> (n, c, oh + kh, ow + kw)>
#pdy = affine_map<(f, c, kh, kw, n, oh, ow) -> (n, f, oh, ow)>
#pdw = affine_map<(f, c, kh, kw, n, oh, ow) -> (f, c, kh, kw)>
func.func @filter_gradient_panels(%x: memref<2x64x6x6xf32>, %dy: memref<2x8x4x4xf32>, %dw: memref<8x64x3x3xf32>) {
  linalg.generic {indexing_maps = [#px, #pdy, #pdw], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : memref<2x64x6x6xf32>, memref<2x8x4x4xf32>) outs(%dw : memref<8x64x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests what is left alone: a convolution whose rows fill most of a vector
// (14 of 16 lanes) and unit stride, one with a dynamic batch, and an
// elementwise product (no window).
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: memref.alloc
#win = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#ww = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#wout = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#id = affine_map<(i) -> (i)>
func.func @untouched(%x: memref<2x4x16x16xf32>, %w: memref<8x4x3x3xf32>, %y: memref<2x8x14x14xf32>,
                     %xd: memref<?x4x6x6xf32>, %yd: memref<?x8x4x4xf32>, %v: memref<16xf32>) {
  linalg.generic {indexing_maps = [#win, #ww, #wout], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<2x4x16x16xf32>, memref<8x4x3x3xf32>) outs(%y : memref<2x8x14x14xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#win, #ww, #wout], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%xd, %w : memref<?x4x6x6xf32>, memref<8x4x3x3xf32>) outs(%yd : memref<?x8x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%v, %v : memref<16xf32>, memref<16xf32>) outs(%v : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
