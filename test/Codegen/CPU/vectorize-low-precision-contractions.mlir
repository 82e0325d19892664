// RUN: traincc-opt %s -split-input-file -traincc-vectorize-low-precision-contractions | FileCheck %s
// RUN: traincc-opt %s -split-input-file -traincc-vectorize-low-precision-contractions="avx512bf16=true" | FileCheck %s --check-prefix=DOT

// Tests that an f16 convolution with f32 accumulation whose innermost loop
// is the (parallel) output width becomes a loop over 16-lane vectors: the
// 14-wide row is one masked vector of outputs, kept in registers across
// the three reduction loops, the weight broadcast, the input row read
// masked, both widened to f32. Two neighbouring rows (the last
// outer parallel loop, 14 long, steps by 2) accumulate side by side, so
// that their adds do not wait for each other. vdpbf16ps is for bf16 only.
// CHECK-LABEL: func.func @conv_f16
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[OH:.*]] = %{{.*}} to %{{.*}} step %c2
// CHECK: %[[MASK:.*]] = vector.create_mask %{{.*}} : vector<16xi1>
// CHECK: %[[OUT0:.*]] = vector.maskedload %arg2[{{.*}}], %[[MASK]], %{{.*}} : memref<2x4x14x14xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: %[[OUT1:.*]] = vector.maskedload %arg2[{{.*}}], %[[MASK]], %{{.*}} : memref<2x4x14x14xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: %[[ACC:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[OUT0]], %{{.*}} = %[[OUT1]]) -> (vector<16xf32>, vector<16xf32>)
// CHECK: vector.maskedload %arg0[{{.*}}], {{.*}} : memref<2x3x16x16xf16>, vector<16xi1>, vector<16xf16> into vector<16xf16>
// CHECK: %[[W:.*]] = memref.load %arg1
// CHECK: vector.broadcast %[[W]] : f16 to vector<16xf16>
// CHECK: arith.extf %{{.*}} : vector<16xf16> to vector<16xf32>
// CHECK: arith.mulf %{{.*}} : vector<16xf32>
// CHECK: arith.addf %{{.*}} : vector<16xf32>
// CHECK: vector.maskedstore %arg2[{{.*}}], %[[MASK]], %[[ACC]]#0 : memref<2x4x14x14xf32>, vector<16xi1>, vector<16xf32>
// CHECK: vector.maskedstore %arg2[{{.*}}], %[[MASK]], %[[ACC]]#1 : memref<2x4x14x14xf32>, vector<16xi1>, vector<16xf32>
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
// three reduction loops, one per output of the last parallel loop (kw, 3
// long, all at once), and each one's lanes are summed once and added to its
// output. Without AVX512-BF16, the products are f32 multiplies of widened
// operands (16 lanes); with it, vdpbf16ps takes 32 bf16 per step.
// CHECK-LABEL: func.func @filter_gradient_bf16
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c3
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK: %[[ACC:.*]]:3 = scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]]) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: scf.for
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16
// CHECK: vector.create_mask %{{.*}} : vector<16xi1>
// CHECK: vector.maskedload %arg0{{.*}} into vector<16xbf16>
// CHECK: vector.maskedload %arg1{{.*}} into vector<16xbf16>
// CHECK: arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// CHECK: %[[SUM:.*]] = vector.reduction <add>, %[[ACC]]#0 fastmath<reassoc> : vector<16xf32> into f32
// CHECK: %[[OLD:.*]] = memref.load %arg2
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[SUM]] : f32
// CHECK: memref.store %[[NEW]], %arg2
// CHECK: vector.reduction <add>, %[[ACC]]#1
// CHECK: vector.reduction <add>, %[[ACC]]#2
// DOT-LABEL: func.func @filter_gradient_bf16
// DOT: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c32
// DOT: vector.create_mask %{{.*}} : vector<32xi1>
// DOT: %[[A:.*]] = vector.maskedload %arg0{{.*}} into vector<32xbf16>
// DOT: %[[B:.*]] = vector.maskedload %arg1{{.*}} into vector<32xbf16>
// DOT: x86vector.avx512.dot %{{.*}}, %[[A]], %[[B]] : vector<32xbf16> -> vector<16xf32>
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

// Tests that f32 contractions, and low-precision ones whose innermost loop
// reads an operand with a stride, stay linalg ops.
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
