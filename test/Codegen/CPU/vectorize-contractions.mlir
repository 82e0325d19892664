// RUN: traincc-opt %s -split-input-file -traincc-vectorize-contractions | FileCheck %s
// RUN: traincc-opt %s -split-input-file -traincc-vectorize-contractions="avx512bf16=true" | FileCheck %s --check-prefix=DOT
// RUN: traincc-opt %s -split-input-file -traincc-vectorize-contractions="cache-bytes=4096" | FileCheck %s --check-prefix=BLOCK
// RUN: traincc-opt %s -split-input-file -traincc-vectorize-contractions="vector-width=8" | FileCheck %s --check-prefix=AVX2

// Tests that an f16 convolution with f32 accumulation whose innermost loop
// is the (parallel) output width becomes a loop over 16-lane vectors: the
// 14-wide row is one masked vector of outputs, kept in registers across
// the three reduction loops, the weight broadcast, the input row read
// masked, both widened to f32 and multiplied-added with one rounding. The
// register tile is an outer product: the input does not move with the
// output channel f (4 long), the weight not with the row oh (14 long), so
// 2 channels x 7 rows accumulate side by side (9 loads for 14 vector
// multiply-adds, the fewest per multiply-add among divisors that fit 16
// accumulators). vdpbf16ps is for bf16 only.
// CHECK-LABEL: func.func @conv_f16
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[F:.*]] = %{{.*}} to %{{.*}} step %c2
// CHECK: scf.for %[[OH:.*]] = %{{.*}} to %{{.*}} step %c7
// CHECK: %[[MASK:.*]] = vector.create_mask %{{.*}} : vector<16xi1>
// CHECK: %[[OUT0:.*]] = vector.maskedload %arg2[{{.*}}], %[[MASK]], %{{.*}} : memref<2x4x14x14xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK-COUNT-13: vector.maskedload %arg2
// CHECK: %[[ACC:.*]]:14 = scf.for {{.*}} iter_args(%{{.*}} = %[[OUT0]], {{.*}}) -> (vector<16xf32>,
// CHECK: %[[X0:.*]] = vector.maskedload %arg0[{{.*}}], {{.*}} : memref<2x3x16x16xf16>, vector<16xi1>, vector<16xf16> into vector<16xf16>
// CHECK: %[[XW0:.*]] = arith.extf %[[X0]] : vector<16xf16> to vector<16xf32>
// CHECK: %[[W0:.*]] = memref.load %arg1
// CHECK: %[[WB0:.*]] = vector.broadcast %[[W0]] : f16 to vector<16xf16>
// CHECK: %[[WW0:.*]] = arith.extf %[[WB0]] : vector<16xf16> to vector<16xf32>
// CHECK: vector.fma %[[XW0]], %[[WW0]], %{{.*}} : vector<16xf32>
// The second channel reuses the input row, loads its own weight.
// CHECK-NOT: vector.maskedload %arg0
// CHECK: memref.load %arg1
// CHECK-NOT: vector.maskedload %arg0
// CHECK: vector.fma %[[XW0]], %{{.*}}, %{{.*}} : vector<16xf32>
// The next row reuses the first channel's weight.
// CHECK: %[[X1:.*]] = vector.maskedload %arg0
// CHECK: %[[XW1:.*]] = arith.extf %[[X1]]
// CHECK-NOT: memref.load %arg1
// CHECK: vector.fma %[[XW1]], %[[WW0]], %{{.*}} : vector<16xf32>
// CHECK-COUNT-11: vector.fma
// The 3x3 kernel loops are unrolled (9 steps; the channel loop stays): 8
// more steps of 14 multiply-adds.
// CHECK-COUNT-112: vector.fma
// CHECK-NOT: vector.fma
// CHECK: vector.maskedstore %arg2[{{.*}}], %[[MASK]], %[[ACC]]#0 : memref<2x4x14x14xf32>, vector<16xi1>, vector<16xf32>
// CHECK-COUNT-13: vector.maskedstore %arg2
// DOT-LABEL: func.func @conv_f16
// DOT-NOT: x86vector
// DOT: return
#in = affine_map<(n, f, oh, c, kh, kw, ow) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, c, kh, kw, ow) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, c, kh, kw, ow) -> (n, f, oh, ow)>
func.func @conv_f16(%x: memref<2x3x16x16xf16>, %w: memref<4x3x3x3xf16>, %y: memref<2x4x14x14xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]}
      ins(%x, %w : memref<2x3x16x16xf16>, memref<4x3x3x3xf16>) outs(%y : memref<2x4x14x14xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %0 = arith.extf %b : f16 to f32
    %1 = arith.extf %a : f16 to f32
    %m = arith.mulf %1, %0 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests a bf16 filter gradient, whose innermost loop is a reduction along
// which both inputs are contiguous: vectors of partial sums run across all
// three reduction loops, and each one's lanes are summed once and added to
// its output. The tile: the input x does not move with the output channel
// f (4), the output gradient dy not with the filter column kw (3): all
// 4 x 3 outputs at once (7 loads for 12 multiply-adds); the row's one
// vector step is unrolled into its row loop. Without
// AVX512-BF16, the products are f32 multiply-adds of widened operands (16
// lanes); with it, vdpbf16ps takes 32 bf16 per step.
// CHECK-LABEL: func.func @filter_gradient_bf16
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c4
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c3
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK: %[[ACC:.*]]:12 = scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], {{.*}}) -> (vector<16xf32>,
// CHECK: scf.for
// CHECK: vector.create_mask %{{.*}} : vector<16xi1>
// CHECK-COUNT-7: vector.maskedload
// CHECK-NOT: vector.maskedload
// CHECK: %[[SUM:.*]] = vector.reduction <add>, %[[ACC]]#0 fastmath<reassoc> : vector<16xf32> into f32
// CHECK: %[[OLD:.*]] = memref.load %arg2
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[SUM]] : f32
// CHECK: memref.store %[[NEW]], %arg2
// CHECK: vector.reduction <add>, %[[ACC]]#1
// CHECK: vector.reduction <add>, %[[ACC]]#2
// DOT-LABEL: func.func @filter_gradient_bf16
// DOT: vector.create_mask %{{.*}} : vector<32xi1>
// DOT: %[[A:.*]] = vector.maskedload %arg{{.}}{{.*}} into vector<32xbf16>
// DOT: %[[B:.*]] = vector.maskedload %arg{{.}}{{.*}} into vector<32xbf16>
// DOT: x86vector.avx512.dot %{{.*}}, %{{.*}}, %{{.*}} : vector<32xbf16> -> vector<16xf32>
// DOT: vector.reduction <add>
#x = affine_map<(f, c, kh, kw, n, oh, ow) -> (n, c, oh + kh, ow + kw)>
#dy = affine_map<(f, c, kh, kw, n, oh, ow) -> (n, f, oh, ow)>
#dw = affine_map<(f, c, kh, kw, n, oh, ow) -> (f, c, kh, kw)>
func.func @filter_gradient_bf16(%x: memref<2x3x16x16xbf16>, %dy: memref<2x4x14x14xbf16>, %dw: memref<4x3x3x3xf32>) {
  linalg.generic {indexing_maps = [#x, #dy, #dw], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : memref<2x3x16x16xbf16>, memref<2x4x14x14xbf16>) outs(%dw : memref<4x3x3x3xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.extf %b : bf16 to f32
    %m = arith.mulf %0, %1 : f32
    %s = arith.addf %acc, %m fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests an f32 filter gradient on one thread's range of output channels
// (dynamic length, as traincc-outline-parallel-loops leaves it): the tile
// steps over the multiples of its factor along that loop (4 channels x 3
// columns, fused multiply-adds of f32 loads, no widening), and the
// remaining channels run one at a time with the 3 columns.
// CHECK-LABEL: func.func @filter_gradient_f32_range
// CHECK: %[[F:.*]] = memref.dim %arg1, %c1
// CHECK: %[[REM:.*]] = arith.remsi %[[F]], %c4
// CHECK: %[[WHOLE:.*]] = arith.subi %[[F]], %[[REM]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[WHOLE]] step %c4
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c3
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-NOT: arith.extf
// CHECK: vector.fma %{{.*}} : vector<16xf32>
// CHECK: scf.for %{{.*}} = %[[WHOLE]] to %[[F]] step %c1
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c3
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK: vector.fma
#x32 = affine_map<(f, c, kh, kw, n, oh, ow) -> (n, c, oh + kh, ow + kw)>
#dy32 = affine_map<(f, c, kh, kw, n, oh, ow) -> (n, f, oh, ow)>
#dw32 = affine_map<(f, c, kh, kw, n, oh, ow) -> (f, c, kh, kw)>
func.func @filter_gradient_f32_range(%x: memref<2x3x16x16xf32>, %dy: memref<2x?x14x14xf32, strided<[784, 196, 14, 1], offset: ?>>, %dw: memref<?x3x3x3xf32, strided<[27, 9, 3, 1], offset: ?>>) {
  linalg.generic {indexing_maps = [#x32, #dy32, #dw32], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : memref<2x3x16x16xf32>, memref<2x?x14x14xf32, strided<[784, 196, 14, 1], offset: ?>>) outs(%dw : memref<?x3x3x3xf32, strided<[27, 9, 3, 1], offset: ?>>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests a filter gradient packed with its input channels innermost
// (traincc-pack-convolution-windows): the innermost loop k is parallel
// (64 outputs of dw, 4 vectors) and dy does not move with it, x not with
// the output channel f. No outer loop leaves dy in place, so the tile's
// second side is neighbouring vectors along k: 4 channels x 4 vectors,
// 8 loads (4 of x, 4 broadcasts of dy) for 16 multiply-adds, the outputs
// loaded once and stored once.
// CHECK-LABEL: func.func @filter_gradient_channels_innermost
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c4
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %c64
// CHECK-COUNT-4: vector.create_mask
// CHECK-COUNT-16: vector.maskedload %arg2
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: scf.for
// CHECK: vector.maskedload %arg0
// CHECK-COUNT-4: memref.load %arg1
// CHECK: vector.maskedload %arg0
// CHECK-NOT: memref.load %arg1
// CHECK: vector.maskedload %arg0
// CHECK-NOT: memref.load %arg1
// CHECK: vector.maskedload %arg0
// CHECK-NOT: memref.load %arg1
// CHECK-COUNT-4: vector.fma
// CHECK-COUNT-16: vector.maskedstore %arg2
// With 4 KiB for a reduction block, n is blocked: 64 x 16 + 8 x 16 floats
// of input per step of n, so one n per block, around the whole nest.
// BLOCK-LABEL: func.func @filter_gradient_channels_innermost
// BLOCK: scf.for %[[N:.*]] = %{{.*}} to %c4 step %c1 {
// BLOCK: %[[END:.*]] = arith.minsi %{{.*}}, %c4
// BLOCK: scf.for %{{.*}} = %{{.*}} to %c8 step %c4
// BLOCK: scf.for %{{.*}} = %{{.*}} to %c64 step %c64
// BLOCK: scf.for %{{.*}} = %[[N]] to %[[END]] step %c1
// With 8-lane vectors (8 accumulators, as on AVX2), 2 channels x 4
// vectors and 4 channels x 2 vectors both load 6 values per 8
// multiply-adds; the second loads 2 vectors of x and 4 broadcasts of dy
// where the first loads 4 and 2: 4 x 2.
// AVX2-LABEL: func.func @filter_gradient_channels_innermost
// AVX2: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c4
// AVX2: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
#xt = affine_map<(f, n, p, k) -> (n, p, k)>
#dyt = affine_map<(f, n, p, k) -> (n, f, p)>
#dwt = affine_map<(f, n, p, k) -> (f, k)>
func.func @filter_gradient_channels_innermost(%x: memref<4x16x64xf32>, %dy: memref<4x8x16xf32>, %dw: memref<8x64xf32>) {
  linalg.generic {indexing_maps = [#xt, #dyt, #dwt], iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
      ins(%x, %dy : memref<4x16x64xf32>, memref<4x8x16xf32>) outs(%dw : memref<8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a contraction marked traincc.cache_blocked (its producer laid
// its inputs out in cached blocks: the Winograd products) is not blocked
// over its reduction, whatever the cache size: the output-channel loop is
// the outermost.
// BLOCK-LABEL: func.func @cache_blocked
// BLOCK-NOT: scf.for
// BLOCK: scf.for %{{.*}} = %{{.*}} to %c8 step %c4
// BLOCK: scf.for %{{.*}} = %{{.*}} to %c64 step %c64
// BLOCK: scf.for %{{.*}} = %c0{{.*}} to %c4 step %c1 iter_args
#xt = affine_map<(f, n, p, k) -> (n, p, k)>
#dyt = affine_map<(f, n, p, k) -> (n, f, p)>
#dwt = affine_map<(f, n, p, k) -> (f, k)>
func.func @cache_blocked(%x: memref<4x16x64xf32>, %dy: memref<4x8x16xf32>, %dw: memref<8x64xf32>) {
  linalg.generic {indexing_maps = [#xt, #dyt, #dwt], iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
      ins(%x, %dy : memref<4x16x64xf32>, memref<4x8x16xf32>) outs(%dw : memref<8x64xf32>) attrs = {traincc.cache_blocked} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that contractions whose innermost loop reads an operand with a
// stride (f32 or bf16) stay linalg ops.
// CHECK-LABEL: func.func @untouched
// CHECK-COUNT-2: linalg.generic
// DOT-LABEL: func.func @untouched
// DOT-COUNT-2: linalg.generic
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
func.func @untouched(%a: memref<8x32xf32>, %b: memref<32x8xf32>, %c: memref<8x8xf32>,
                     %a16: memref<8x32xbf16>, %b16: memref<32x8xbf16>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x32xf32>, memref<32x8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a16, %b16 : memref<8x32xbf16>, memref<32x8xbf16>) outs(%c : memref<8x8xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %m = arith.mulf %0, %1 : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a contraction whose zero fill traincc-absorb-zero-fills
// dropped starts its accumulators from +0.0: the outputs are not loaded
// (only stored), and a reduction's lane sum is added to +0.0 instead of the
// output. With blocks over n, only the first block starts from zero: the
// later ones load the outputs (a mask of no lanes in the first).
// CHECK-LABEL: func.func @zero_init
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK-NOT: vector.maskedload %arg2
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]],
// CHECK: vector.fma
// CHECK: vector.maskedstore %arg2
// CHECK: %[[SUM:.*]] = vector.reduction <add>
// CHECK-NOT: memref.load %arg5
// CHECK: %[[NEW:.*]] = arith.addf %{{.*}}, %[[SUM]] : f32
// CHECK: memref.store %[[NEW]], %arg5
// CHECK-NOT: linalg.fill
// CHECK: return
// BLOCK-LABEL: func.func @zero_init
// BLOCK: scf.for %[[N:.*]] = %{{.*}} to %c4 step %c1 {
// BLOCK: %[[FIRST:.*]] = arith.cmpi eq, %[[N]], %c0
// BLOCK: %[[NONE:.*]] = arith.constant dense<false> : vector<16xi1>
// BLOCK: %[[MASK:.*]] = arith.select %[[FIRST]], %[[NONE]], %{{.*}} : vector<16xi1>
// BLOCK: vector.maskedload %arg2[{{.*}}], %[[MASK]]
#xt = affine_map<(f, n, p, k) -> (n, p, k)>
#dyt = affine_map<(f, n, p, k) -> (n, f, p)>
#dwt = affine_map<(f, n, p, k) -> (f, k)>
#x32 = affine_map<(f, c, kh, kw, n, oh, ow) -> (n, c, oh + kh, ow + kw)>
#dy32 = affine_map<(f, c, kh, kw, n, oh, ow) -> (n, f, oh, ow)>
#dw32 = affine_map<(f, c, kh, kw, n, oh, ow) -> (f, c, kh, kw)>
func.func @zero_init(%x: memref<4x16x64xf32>, %dy: memref<4x8x16xf32>, %dw: memref<8x64xf32>,
                     %x4: memref<2x3x16x16xf32>, %dy4: memref<2x4x14x14xf32>, %dw4: memref<4x3x3x3xf32>) {
  linalg.generic {indexing_maps = [#xt, #dyt, #dwt], iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
      ins(%x, %dy : memref<4x16x64xf32>, memref<4x8x16xf32>) outs(%dw : memref<8x64xf32>) attrs = {traincc.zero_init} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x32, #dy32, #dw32], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x4, %dy4 : memref<2x3x16x16xf32>, memref<2x4x14x14xf32>) outs(%dw4 : memref<4x3x3x3xf32>) attrs = {traincc.zero_init} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a marked contraction the pass does not rewrite (its innermost
// loop reads an input with a stride) gets its zero fill back.
// CHECK-LABEL: func.func @zero_init_untouched
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: linalg.fill ins(%[[ZERO]] : f32) outs(%arg2 : memref<8x8xf32>)
// CHECK: linalg.generic
// CHECK-NOT: traincc.zero_init
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
func.func @zero_init_untouched(%a: memref<8x32xf32>, %b: memref<32x8xf32>, %c: memref<8x8xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x32xf32>, memref<32x8xf32>) outs(%c : memref<8x8xf32>) attrs = {traincc.zero_init} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a convolution marked traincc.channel_sums (by
// traincc-fuse-conv-channel-sums) adds each tile's stored vectors into its
// second output at [n, f]: masked-off lanes as zero, the tile's 7 rows of
// one channel together, then their lanes. With blocks over the input
// channels, only the last block, whose outputs are final, adds them.
// CHECK-LABEL: func.func @channel_sums
// CHECK-NOT: linalg.generic
// CHECK: vector.maskedstore %arg2[{{.*}}], %[[MASK:.*]], %[[ACC:.*]] :
// CHECK-COUNT-13: vector.maskedstore %arg2
// CHECK-NOT: scf.if
// CHECK: %[[L0:.*]] = arith.select %[[MASK]], %[[ACC]], %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: arith.select
// CHECK: %[[L2:.*]] = arith.select
// CHECK: arith.addf %[[L0]], %[[L2]] : vector<16xf32>
// CHECK: %[[SUM:.*]] = vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<16xf32> into f32
// CHECK: %[[OLD:.*]] = memref.load %arg3[
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[SUM]] : f32
// CHECK: memref.store %[[NEW]], %arg3[
// CHECK: vector.reduction <add>
// CHECK-NOT: vector.reduction
// CHECK-NOT: traincc.channel_sums
// CHECK: return
// BLOCK-LABEL: func.func @channel_sums
// BLOCK: scf.for %{{.*}} = %{{.*}} to %[[C8:.*]] step %{{.*}} {
// BLOCK: %[[END:.*]] = arith.minsi %{{.*}}, %[[C8]] : index
// BLOCK: %[[LAST:.*]] = arith.cmpi eq, %[[END]], %{{.*}} : index
// BLOCK: vector.maskedstore %arg2
// BLOCK: scf.if %[[LAST]] {
// BLOCK: vector.reduction <add>
// BLOCK: memref.store %{{.*}}, %arg3[
#in = affine_map<(n, f, oh, c, kh, kw, ow) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, c, kh, kw, ow) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, c, kh, kw, ow) -> (n, f, oh, ow)>
#sums = affine_map<(n, f, oh, c, kh, kw, ow) -> (n, f)>
func.func @channel_sums(%x: memref<2x8x16x16xf32>, %w: memref<4x8x3x3xf32>, %y: memref<2x4x14x14xf32>, %s: memref<2x4xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out, #sums], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]}
      ins(%x, %w : memref<2x8x16x16xf32>, memref<4x8x3x3xf32>) outs(%y, %s : memref<2x4x14x14xf32>, memref<2x4xf32>) attrs = {traincc.channel_sums} {
  ^bb0(%a: f32, %b: f32, %acc: f32, %sum: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r, %sum : f32, f32
  }
  return
}

// -----

// Tests that a marked convolution the pass does not rewrite (its innermost
// loop reads the input with a stride) is left without its second output,
// and a loop nest after it adds its outputs into the sums.
// CHECK-LABEL: func.func @channel_sums_untouched
// CHECK: linalg.generic
// CHECK-NOT: traincc.channel_sums
// CHECK-SAME: outs(%arg2 : memref<2x4x14x14xf32>)
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// CHECK-SAME: ins(%arg2 : memref<2x4x14x14xf32>) outs(%arg3 : memref<2x4xf32>)
// CHECK: arith.addf
// CHECK: return
#in = affine_map<(n, f, oh, c, kh, kw, ow) -> (n, c, oh + kh, 2 * ow + kw)>
#w = affine_map<(n, f, oh, c, kh, kw, ow) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, c, kh, kw, ow) -> (n, f, oh, ow)>
#sums = affine_map<(n, f, oh, c, kh, kw, ow) -> (n, f)>
func.func @channel_sums_untouched(%x: memref<2x3x16x30xf32>, %w: memref<4x3x3x3xf32>, %y: memref<2x4x14x14xf32>, %s: memref<2x4xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out, #sums], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]}
      ins(%x, %w : memref<2x3x16x30xf32>, memref<4x3x3x3xf32>) outs(%y, %s : memref<2x4x14x14xf32>, memref<2x4xf32>) attrs = {traincc.channel_sums} {
  ^bb0(%a: f32, %b: f32, %acc: f32, %sum: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r, %sum : f32, f32
  }
  return
}

// -----

// Tests that a convolution also marked traincc.channel_moments merges each
// [n, f]'s stored vectors into its counts (third output) and m2 (fourth):
// the group's lane count, its mean (its sum over the count), its squares
// around that mean (masked-off lanes zero), then Chan's merge with the
// running moments, whose mean is the old sum over the old count.
// CHECK-LABEL: func.func @channel_moments
// CHECK: %[[SUM:.*]] = vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<16xf32> into f32
// CHECK: %[[OLD:.*]] = memref.load %arg3[
// CHECK: memref.store %{{.*}}, %arg3[
// CHECK: %[[COUNT:.*]] = arith.sitofp %{{.*}} : i64 to f32
// CHECK: %[[ATLEAST:.*]] = arith.maximumf %[[COUNT]], %{{.*}} : f32
// CHECK: %[[MEAN:.*]] = arith.divf %[[SUM]], %[[ATLEAST]] : f32
// CHECK: %[[MEANS:.*]] = vector.broadcast %[[MEAN]] : f32 to vector<16xf32>
// CHECK: %[[D:.*]] = arith.subf %{{.*}}, %[[MEANS]] : vector<16xf32>
// CHECK: %[[C:.*]] = arith.select %{{.*}}, %[[D]], %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: vector.fma %[[C]], %[[C]], %{{.*}} : vector<16xf32>
// CHECK: %[[SQUARES:.*]] = vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<16xf32> into f32
// CHECK: %[[N:.*]] = memref.load %arg4[
// CHECK: %[[Q:.*]] = memref.load %arg5[
// CHECK: %[[TOTAL:.*]] = arith.addf %[[N]], %[[COUNT]] : f32
// CHECK: %[[OLDMEAN:.*]] = arith.divf %[[OLD]], %{{.*}} : f32
// CHECK: %[[DELTA:.*]] = arith.subf %[[MEAN]], %[[OLDMEAN]] : f32
// CHECK: %[[NN:.*]] = arith.mulf %[[N]], %[[COUNT]] : f32
// CHECK: %[[W:.*]] = arith.divf %[[NN]], %{{.*}} : f32
// CHECK: %[[QQ:.*]] = arith.addf %[[Q]], %[[SQUARES]] : f32
// CHECK: %[[DD:.*]] = arith.mulf %[[DELTA]], %[[DELTA]] : f32
// CHECK: %[[DW:.*]] = arith.mulf %[[DD]], %[[W]] : f32
// CHECK: %[[M2:.*]] = arith.addf %[[QQ]], %[[DW]] : f32
// CHECK: memref.store %[[TOTAL]], %arg4[
// CHECK: memref.store %[[M2]], %arg5[
// CHECK-NOT: traincc.channel_moments
// CHECK: return
#in = affine_map<(n, f, oh, c, kh, kw, ow) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, c, kh, kw, ow) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, c, kh, kw, ow) -> (n, f, oh, ow)>
#sums = affine_map<(n, f, oh, c, kh, kw, ow) -> (n, f)>
func.func @channel_moments(%x: memref<2x8x16x16xf32>, %w: memref<4x8x3x3xf32>, %y: memref<2x4x14x14xf32>, %s: memref<2x4xf32>, %k: memref<2x4xf32>, %q: memref<2x4xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out, #sums, #sums, #sums], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]}
      ins(%x, %w : memref<2x8x16x16xf32>, memref<4x8x3x3xf32>) outs(%y, %s, %k, %q : memref<2x4x14x14xf32>, memref<2x4xf32>, memref<2x4xf32>, memref<2x4xf32>) attrs = {traincc.channel_moments, traincc.channel_sums} {
  ^bb0(%a: f32, %b: f32, %acc: f32, %sum: f32, %count: f32, %m2: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r, %sum, %count, %m2 : f32, f32, f32, f32
  }
  return
}

// -----

// Tests that a convolution with channel moments the pass does not rewrite
// (a strided innermost input) gets nests after it that sum its outputs,
// count them, and sum their squares around the sums over the counts.
// CHECK-LABEL: func.func @channel_moments_untouched
// CHECK: linalg.generic
// CHECK-NOT: traincc.channel
// CHECK-SAME: outs(%arg2 : memref<2x4x14x14xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg2 : memref<2x4x14x14xf32>) outs(%arg3 : memref<2x4xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg2 : memref<2x4x14x14xf32>) outs(%arg4 : memref<2x4xf32>)
// CHECK: arith.addf %{{.*}}, %cst
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg2, %arg3, %arg4 : memref<2x4x14x14xf32>, memref<2x4xf32>, memref<2x4xf32>) outs(%arg5 : memref<2x4xf32>)
// CHECK: arith.divf
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: return
#in = affine_map<(n, f, oh, c, kh, kw, ow) -> (n, c, oh + kh, 2 * ow + kw)>
#w = affine_map<(n, f, oh, c, kh, kw, ow) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, c, kh, kw, ow) -> (n, f, oh, ow)>
#sums = affine_map<(n, f, oh, c, kh, kw, ow) -> (n, f)>
func.func @channel_moments_untouched(%x: memref<2x3x16x30xf32>, %w: memref<4x3x3x3xf32>, %y: memref<2x4x14x14xf32>, %s: memref<2x4xf32>, %k: memref<2x4xf32>, %q: memref<2x4xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out, #sums, #sums, #sums], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]}
      ins(%x, %w : memref<2x3x16x30xf32>, memref<4x3x3x3xf32>) outs(%y, %s, %k, %q : memref<2x4x14x14xf32>, memref<2x4xf32>, memref<2x4xf32>, memref<2x4xf32>) attrs = {traincc.channel_moments, traincc.channel_sums} {
  ^bb0(%a: f32, %b: f32, %acc: f32, %sum: f32, %count: f32, %m2: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r, %sum, %count, %m2 : f32, f32, f32, f32
  }
  return
}

// -----

// Tests a convolution packed with its output positions innermost
// (traincc-pack-convolution-windows on a 4x4 stage): y[n, f, p] +=
// x[n, k, p] * w[f, k]. The weight moves with neither the image n nor the
// innermost p, so both can be the tile's second side. With 16-lane
// vectors p is one vector: 4 channels x 4 images. With 8 lanes p is 2
// vectors, as cheap as 2 images: the neighbouring vectors of one image
// are taken, 4 channels x 2 vectors, and the images follow one another.
// CHECK-LABEL: func.func @conv_positions_innermost
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c4
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c4
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// AVX2-LABEL: func.func @conv_positions_innermost
// AVX2: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1
// AVX2: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c4
// AVX2: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2: vector.maskedload %arg0
// AVX2-COUNT-4: memref.load %arg1
// AVX2: vector.maskedload %arg0
// AVX2-NOT: memref.load %arg1
// AVX2: scf.yield
#xp = affine_map<(n, f, k, p) -> (n, k, p)>
#wp = affine_map<(n, f, k, p) -> (f, k)>
#yp = affine_map<(n, f, k, p) -> (n, f, p)>
func.func @conv_positions_innermost(%x: memref<4x32x16xf32>, %w: memref<8x32xf32>, %y: memref<4x8x16xf32>) {
  linalg.generic {indexing_maps = [#xp, #wp, #yp], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<4x32x16xf32>, memref<8x32xf32>) outs(%y : memref<4x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
