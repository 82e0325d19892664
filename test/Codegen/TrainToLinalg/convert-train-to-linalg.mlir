// RUN: traincc-opt %s -split-input-file --traincc-convert-train-to-linalg | FileCheck %s

// Tests that a 2-D convolution with one group becomes the named NCHW op on a
// zero-padded input, with the bias broadcast into its accumulator.

// CHECK-LABEL: func.func @conv_2d
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.0{{.*}} : f32
// CHECK: %[[PAD:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 0, 0]
// CHECK: tensor.yield %[[ZERO]]
// CHECK: %[[INIT:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<4xf32>) outs({{.*}} : tensor<1x4x4x4xf32>)
// CHECK: %[[Y:.*]] = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[PAD]], %[[W]] : {{.*}}) outs(%[[INIT]] : tensor<1x4x4x4xf32>)
// CHECK: return %[[Y]]
// CHECK-NOT: train.conv
func.func @conv_2d(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %y = train.conv %x, %w, %b strides [2, 2] pads [1, 1, 0, 0] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// -----

// Tests that a depthwise (grouped) convolution becomes a linalg.generic over
// N x G x C/G views of input, weight and accumulator, not the named op, and
// that an unpadded input is not padded.

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 + d6, d4 + d7)>
// CHECK-DAG: #[[WT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @conv_depthwise
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x6x6xf32>, %[[W:.*]]: tensor<4x1x3x3xf32>)
// CHECK-NOT: tensor.pad
// CHECK-DAG: %[[XG:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [1, 4, 1, 6, 6]
// CHECK-DAG: %[[WG:.*]] = tensor.expand_shape %[[W]] {{\[\[}}0, 1], [2], [3], [4]] output_shape [4, 1, 1, 3, 3]
// CHECK: %[[YG:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[WT]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[XG]], %[[WG]]
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[Y:.*]] = tensor.collapse_shape %[[YG]] {{\[\[}}0], [1, 2], [3], [4]] : tensor<1x4x1x4x4xf32> into tensor<1x4x4x4xf32>
// CHECK: return %[[Y]]
// CHECK-NOT: linalg.conv_2d_nchw_fchw
func.func @conv_depthwise(%x: tensor<1x4x6x6xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %y = train.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 4 : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// -----

// Tests that a 1-D f16 convolution with strides and dilations accumulates in
// f32 (bias extended into the accumulator) and rounds to f16 once at the end.

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d3 * 2 + d5 * 2)>
// CHECK-LABEL: func.func @conv_1d_f16
// CHECK: %[[INIT:.*]] = linalg.generic {{.*}} outs({{.*}} : tensor<2x5x3xf32>)
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: %[[ACC:.*]] = linalg.generic {indexing_maps = [#[[IN]], {{.*}}]{{.*}} outs(%{{.*}} : tensor<2x1x5x3xf32>)
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: %[[SUM:.*]] = tensor.collapse_shape %[[ACC]]
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<2x5x3xf32>) outs({{.*}} : tensor<2x5x3xf16>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: return %[[Y]] : tensor<2x5x3xf16>
func.func @conv_1d_f16(%x: tensor<2x3x10xf16>, %w: tensor<5x3x3xf16>, %b: tensor<5xf16>) -> tensor<2x5x3xf16> {
  %y = train.conv %x, %w, %b strides [2] pads [0, 0] dilations [2] groups 1 : (tensor<2x3x10xf16>, tensor<5x3x3xf16>, tensor<5xf16>) -> tensor<2x5x3xf16>
  return %y : tensor<2x5x3xf16>
}

// -----

// Tests that batch_norm lowers in inference form: a per-channel factor
// scale / sqrt(running_var + eps), then (x - running_mean) * factor + bias,
// with no batch statistics (no reduction).

// CHECK-DAG: #[[CH:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4x4xf32>, %[[S:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xf32>, %[[M:.*]]: tensor<3xf32>, %[[V:.*]]: tensor<3xf32>)
// CHECK-NOT: reduction
// CHECK: %[[F:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[V]] : tensor<3xf32>, tensor<3xf32>)
// CHECK: %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK: arith.addf %{{.*}}, %[[EPS]]
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[CH]], #[[CH]], #[[CH]], #{{.*}}], {{.*}} ins(%[[X]], %[[M]], %[[F]], %[[B]] :
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: reduction
func.func @batch_norm(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %y = train.batch_norm %x, %s, %b, %m, %v epsilon 1.0e-05 momentum 1.0e-01 : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  return %y : tensor<2x3x4x4xf32>
}

// -----

// Tests that gemm with trans_b becomes linalg.matmul with a transposed
// indexing map (no materialised transpose), the bias starting the
// accumulator (no zero fill).

// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @gemm_trans_b
// CHECK-SAME: (%[[A0:.*]]: tensor<8x64xf32>, %[[B0:.*]]: tensor<10x64xf32>, %[[C0:.*]]: tensor<10xf32>)
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.transpose
// CHECK: %[[INIT:.*]] = linalg.generic {{.*}} ins(%[[C0]] : tensor<10xf32>)
// CHECK: %[[Y:.*]] = linalg.matmul indexing_maps = [#[[A]], #[[BT]], #[[C]]] ins(%[[A0]], %[[B0]] : tensor<8x64xf32>, tensor<10x64xf32>) outs(%[[INIT]] : tensor<8x10xf32>)
// CHECK: return %[[Y]]
func.func @gemm_trans_b(%a: tensor<8x64xf32>, %w: tensor<10x64xf32>, %c: tensor<10xf32>) -> tensor<8x10xf32> {
  %y = train.gemm %a, %w, %c {trans_b = true} : (tensor<8x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<8x10xf32>
  return %y : tensor<8x10xf32>
}

// -----

// Tests that gemm with alpha != 1 on bf16 accumulates in f32 from zero and
// applies alpha, beta * C and the rounding in one epilogue.

// CHECK-LABEL: func.func @gemm_alpha_bf16
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x5xf32>)
// CHECK: %[[P:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x3xbf16>, tensor<3x5xbf16>) outs(%[[ZERO]] : tensor<4x5xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[P]], %{{.*}} : tensor<4x5xf32>, tensor<4x5xbf16>) outs(%{{.*}} : tensor<4x5xbf16>)
// CHECK: arith.constant 2.500000e-01 : f32
// CHECK: arith.constant 3.500000e-01 : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @gemm_alpha_bf16(%a: tensor<4x3xbf16>, %b: tensor<3x5xbf16>, %c: tensor<4x5xbf16>) -> tensor<4x5xbf16> {
  %y = train.gemm %a, %b, %c {alpha = 2.5e-01 : f32, beta = 3.5e-01 : f32} : (tensor<4x3xbf16>, tensor<3x5xbf16>, tensor<4x5xbf16>) -> tensor<4x5xbf16>
  return %y : tensor<4x5xbf16>
}

// -----

// Tests that matmul with equal batch axes becomes linalg.batch_matmul, and
// one with broadcasting batch axes a linalg.generic that reads the size-1
// batch axis at index 0.

// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d4)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>
// CHECK-LABEL: func.func @matmul_batch
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<2x4x5xf32>)
// CHECK-LABEL: func.func @matmul_broadcast
// CHECK-NOT: linalg.batch_matmul
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}{{.*}} outs(%{{.*}} : tensor<2x5x3x6xf64>)
func.func @matmul_batch(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %y = train.matmul %a, %b : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}
func.func @matmul_broadcast(%a: tensor<2x1x3x4xf64>, %b: tensor<5x4x6xf64>) -> tensor<2x5x3x6xf64> {
  %y = train.matmul %a, %b : (tensor<2x1x3x4xf64>, tensor<5x4x6xf64>) -> tensor<2x5x3x6xf64>
  return %y : tensor<2x5x3x6xf64>
}

// -----

// Tests that matmul with a vector right operand promotes it to a matrix,
// folds the left operand's batch axis into its rows for linalg.matmul, and
// drops the promoted axis from the result.

// CHECK-LABEL: func.func @matmul_vector
// CHECK-SAME: (%[[A:.*]]: tensor<2x3x4xf32>, %[[V:.*]]: tensor<4xf32>)
// CHECK-DAG: %[[COL:.*]] = tensor.expand_shape %[[V]] {{\[\[}}0, 1]] output_shape [4, 1]
// CHECK-DAG: %[[ROWS:.*]] = tensor.collapse_shape %[[A]] {{\[\[}}0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK: %[[P:.*]] = linalg.matmul ins(%[[ROWS]], %[[COL]] : tensor<6x4xf32>, tensor<4x1xf32>)
// CHECK: %[[Y:.*]] = tensor.collapse_shape %{{.*}} : tensor<2x3x1xf32> into tensor<2x3xf32>
// CHECK: return %[[Y]]
func.func @matmul_vector(%a: tensor<2x3x4xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  %y = train.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Tests that binary ops broadcast through their indexing maps: a missing
// leading axis is dropped, a size-1 axis that widens is read at index 0.

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[COL0:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[ROW0:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[A:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<16xf32>, %[[C:.*]]: tensor<8x1xf32>, %[[D:.*]]: tensor<1x16xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]] :
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[COL0]], #[[ROW0]], #[[ID]]], {{.*}} ins(%[[C]], %[[D]] :
// CHECK: arith.divf
// CHECK: linalg.generic {{.*}} ins(%[[SUM]], %{{.*}} :
// CHECK: arith.subf
// CHECK: arith.mulf
func.func @binary(%a: tensor<8x16xf32>, %b: tensor<16xf32>, %c: tensor<8x1xf32>, %d: tensor<1x16xf32>) -> tensor<8x16xf32> {
  %0 = train.add %a, %b : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %1 = train.div %c, %d : (tensor<8x1xf32>, tensor<1x16xf32>) -> tensor<8x16xf32>
  %2 = train.sub %0, %1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %3 = train.mul %2, %a : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}

// -----

// Tests that maximum and minimum become NaN-propagating arith.maximumf and
// arith.minimumf, a 0-d operand (a Clip bound) broadcast through an
// indexing map without dimensions.

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @select
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>, %[[LO:.*]]: tensor<f32>, %[[HI:.*]]: tensor<f32>)
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[SCALAR]], #[[ID]]], {{.*}} ins(%[[X]], %[[LO]] :
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[SCALAR]], #[[ID]]], {{.*}} ins(%[[MAX]], %[[HI]] :
// CHECK: arith.minimumf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: train.
func.func @select(%x: tensor<8x16xf32>, %lo: tensor<f32>, %hi: tensor<f32>) -> tensor<8x16xf32> {
  %0 = train.maximum %x, %lo : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  %1 = train.minimum %0, %hi : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// Tests the scalar bodies of the unary activations.

// CHECK-LABEL: func.func @activations
// CHECK: %[[R0:.*]] = arith.constant 0.0{{.*}} : f32
// CHECK: arith.maximumf %{{.*}}, %[[R0]] : f32
// CHECK: %[[L0:.*]] = arith.constant 0.0{{.*}} : f32
// CHECK: %[[ALPHA:.*]] = arith.constant 0.00999999977 : f32
// CHECK: %[[POS:.*]] = arith.cmpf oge, %[[LX:.*]], %[[L0]] : f32
// CHECK: %[[NEG:.*]] = arith.mulf %[[LX]], %[[ALPHA]] : f32
// CHECK: arith.select %[[POS]], %[[LX]], %[[NEG]] : f32
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: arith.constant 6.0{{.*}} : f32
// CHECK: arith.minimumf
// CHECK: %[[ONE:.*]] = arith.constant 1.0{{.*}} : f32
// CHECK: %[[MX:.*]] = arith.negf
// CHECK: %[[E:.*]] = math.exp %[[MX]]
// CHECK: %[[DEN:.*]] = arith.addf %[[ONE]], %[[E]]
// CHECK: arith.divf %[[ONE]], %[[DEN]]
// CHECK: math.tanh
// CHECK-NOT: train.
func.func @activations(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = train.relu %x : tensor<4xf32>
  %1 = train.leaky_relu %0 alpha 1.0e-02 : tensor<4xf32>
  %2 = train.clip %1 min 0.0 max 6.0 : tensor<4xf32>
  %3 = train.sigmoid %2 : tensor<4xf32>
  %4 = train.tanh %3 : tensor<4xf32>
  return %4 : tensor<4xf32>
}

// -----

// Tests that exp and log lower to math.exp and math.log.

// CHECK-LABEL: func.func @exp_log
// CHECK: math.exp
// CHECK: math.log
// CHECK-NOT: train.
func.func @exp_log(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = train.exp %x : tensor<4xf32>
  %1 = train.log %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Tests that a select whose condition is a compare computes the comparison
// inline from the compare's operands (broadcast straight to the result), and
// that a constant condition is read as i8: the select's generic takes no i1
// tensor. The compare's own lowering is left unused, for the canonicalizer.

// CHECK-LABEL: func.func @select_compare
// CHECK: %[[UNUSED:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<2x4xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<2x4xi1>)
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg2, %arg0, %arg1 : tensor<2x4xf32>, tensor<f32>, tensor<2x4xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: %[[C:.*]] = arith.cmpf ogt
// CHECK: arith.select %[[C]]
// CHECK: %[[MASK:.*]] = arith.constant dense<[1, 0, 0, 1]> : tensor<4xi8>
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg2, %[[MASK]] : tensor<2x4xf32>, tensor<f32>, tensor<4xi8>)
// CHECK: %[[M:.*]] = arith.cmpi ne
// CHECK: arith.select %[[M]]
// CHECK-NOT: train.
func.func @select_compare(%x: tensor<2x4xf32>, %y: tensor<4xf32>, %z: tensor<f32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %c = train.compare gt %x, %y : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
  %0 = train.select %c, %x, %z : (tensor<2x4xi1>, tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %m = train.constant dense<[true, false, false, true]> : tensor<4xi1>
  %1 = train.select %m, %x, %z : (tensor<4xi1>, tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Tests that a select on a condition from elsewhere (an argument) reads it
// as it is, and a compare whose result is returned is stored as i1.

// CHECK-LABEL: func.func @select_bool_argument
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4xi1>)
// CHECK: arith.cmpf ole
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1, %arg2 : tensor<4xf32>, tensor<4xf32>, tensor<4xi1>)
// CHECK: ^bb0(%[[T:.*]]: f32, %[[F:.*]]: f32, %[[B:.*]]: i1, %{{.*}}: f32):
// CHECK: arith.select %[[B]], %[[T]], %[[F]]
func.func @select_bool_argument(%x: tensor<4xf32>, %y: tensor<4xf32>, %b: tensor<4xi1>)
    -> (tensor<4xi1>, tensor<4xf32>) {
  %c = train.compare le %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %0 = train.select %b, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %c, %0 : tensor<4xi1>, tensor<4xf32>
}

// -----

// Tests that clip with one bound clamps on that side only.

// CHECK-LABEL: func.func @clip_max
// CHECK: arith.minimumf
// CHECK-NOT: arith.maximumf
func.func @clip_max(%x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = train.clip %x max 1.0 : tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// Tests that softmax subtracts the row maximum (a reduction from -inf)
// before exp, sums, and divides; the softmax axis is the reduction loop.

// CHECK-DAG: #[[ROWS:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG: #[[RED:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<2x10x3xf32>)
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MINIT:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[ROWS]], #[[RED]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<2x10x3xf32>) outs(%[[MINIT]] : tensor<2x3xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[MAX]] :
// CHECK: %[[D:.*]] = arith.subf
// CHECK: math.exp %[[D]]
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[MAX]], %[[SUM]] :
// CHECK: %[[D2:.*]] = arith.subf
// CHECK: %[[E2:.*]] = math.exp %[[D2]]
// CHECK: arith.divf %[[E2]]
func.func @softmax(%x: tensor<2x10x3xf32>) -> tensor<2x10x3xf32> {
  %0 = train.softmax %x axis 1 : tensor<2x10x3xf32>
  return %0 : tensor<2x10x3xf32>
}

// -----

// Tests that log_softmax of f16 works in f32 after the maximum and ends with
// (x - max) - log(sum), rounded to f16; no exp/div epilogue.

// CHECK-LABEL: func.func @log_softmax_f16
// CHECK: arith.constant 0xFC00 : f16
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.extf
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x6xf16>)
// CHECK: %[[D:.*]] = arith.subf %{{.*}}, %{{.*}} : f32
// CHECK: %[[L:.*]] = math.log %{{.*}} : f32
// CHECK: %[[R:.*]] = arith.subf %[[D]], %[[L]] : f32
// CHECK: arith.truncf %[[R]] : f32 to f16
// CHECK-NOT: arith.divf
func.func @log_softmax_f16(%x: tensor<4x6xf16>) -> tensor<4x6xf16> {
  %0 = train.log_softmax %x axis 1 : tensor<4x6xf16>
  return %0 : tensor<4x6xf16>
}

// -----

// Tests that max_pool pads with -inf, so padding never wins, and that in
// ceil mode the input is padded past its end so the last window fits.

// CHECK-LABEL: func.func @max_pool_ceil
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PAD:.*]] = tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[NINF]]
// CHECK: : tensor<1x2x5x5xf32> to tensor<1x2x6x6xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x3x3xf32>)
// CHECK: linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[PAD]], %{{.*}} : tensor<1x2x6x6xf32>, tensor<2x2xf32>) outs(%[[INIT]]
func.func @max_pool_ceil(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %y = train.max_pool %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] {ceil_mode = true} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  return %y : tensor<1x2x3x3xf32>
}

// -----

// Tests that a 3-D max_pool with dilations becomes a window linalg.generic
// (no named 3-D NCDHW pooling op exists) with dilated window reads.

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2 + d5 * 2, d3 + d6 * 2, d4 + d7 * 2)>
// CHECK-DAG: #[[K:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d6, d7)>
// CHECK-LABEL: func.func @max_pool_3d
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[K]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK: arith.maximumf
func.func @max_pool_3d(%x: tensor<1x2x5x5x5xf32>) -> tensor<1x2x3x3x3xf32> {
  %y = train.max_pool %x kernel [2, 2, 2] strides [1, 1, 1] pads [0, 0, 0, 0, 0, 0] dilations [2, 2, 2] : (tensor<1x2x5x5x5xf32>) -> tensor<1x2x3x3x3xf32>
  return %y : tensor<1x2x3x3x3xf32>
}

// -----

// Tests that avg_pool without count_include_pad divides by the number of
// real elements per window (per-axis counts 2, 3, 3, 2), and with it by the
// full window size.

// CHECK-LABEL: func.func @avg_pool_exclude_pad
// CHECK: %[[PAD:.*]] = tensor.pad
// CHECK: %[[SUM:.*]] = linalg.pooling_nchw_sum {{.*}} ins(%[[PAD]], %{{.*}} : tensor<1x2x6x6xf32>, tensor<3x3xf32>)
// CHECK: %[[CH:.*]] = arith.constant dense<[2.000000e+00, 3.000000e+00, 3.000000e+00, 2.000000e+00]> : tensor<4xf32>
// CHECK: %[[CW:.*]] = arith.constant dense<[2.000000e+00, 3.000000e+00, 3.000000e+00, 2.000000e+00]> : tensor<4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[SUM]], %[[CH]], %[[CW]] :
// CHECK: %[[N:.*]] = arith.mulf
// CHECK: arith.divf %{{.*}}, %[[N]]
// CHECK-LABEL: func.func @avg_pool_include_pad
// CHECK-NOT: dense<[
// CHECK: %[[NINE:.*]] = arith.constant 9.000000e+00 : f32
// CHECK: arith.divf %{{.*}}, %[[NINE]]
func.func @avg_pool_exclude_pad(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %y = train.avg_pool %x kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}
func.func @avg_pool_include_pad(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %y = train.avg_pool %x kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] {count_include_pad = true} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// Tests that in ceil mode avg_pool does not count the overhang past the end
// padding, even with count_include_pad: 1-D, 5 elements, kernel 2, stride 2
// gives windows of 2, 2 and 1.

// CHECK-LABEL: func.func @avg_pool_1d_ceil
// CHECK: tensor.pad %{{.*}} low[0, 0, 0] high[0, 0, 1]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: arith.constant dense<[2.000000e+00, 2.000000e+00, 1.000000e+00]> : tensor<3xf32>
func.func @avg_pool_1d_ceil(%x: tensor<1x1x5xf32>) -> tensor<1x1x3xf32> {
  %y = train.avg_pool %x kernel [2] strides [2] pads [0, 0] {ceil_mode = true, count_include_pad = true} : (tensor<1x1x5xf32>) -> tensor<1x1x3xf32>
  return %y : tensor<1x1x3xf32>
}

// -----

// Tests that global_avg_pool of f16 sums the spatial axes in f32 into N x C
// and divides into the N x C x 1 x 1 result.

// CHECK-LABEL: func.func @global_avg_pool_f16
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}} : tensor<2x3x4x4xf16>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x3x1x1xf16>)
// CHECK: arith.constant 1.600000e+01 : f32
// CHECK: arith.truncf
func.func @global_avg_pool_f16(%x: tensor<2x3x4x4xf16>) -> tensor<2x3x1x1xf16> {
  %y = train.global_avg_pool %x : (tensor<2x3x4x4xf16>) -> tensor<2x3x1x1xf16>
  return %y : tensor<2x3x1x1xf16>
}

// -----

// Tests that reshapes and flatten are collapse_shape / expand_shape views:
// a pure collapse, a pure expand, and reshapes that need both; never
// tensor.reshape when the blocks of axes are defined.

// CHECK-LABEL: func.func @reshapes
// CHECK-SAME: (%[[X:.*]]: tensor<8x16x2x2xf32>, %[[Y:.*]]: tensor<6x4xf32>)
// CHECK-NOT: tensor.reshape
// CHECK: %[[R0:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0], [1, 2, 3]] : tensor<8x16x2x2xf32> into tensor<8x64xf32>
// CHECK: %[[R1:.*]] = tensor.expand_shape %[[R0]] {{\[\[}}0], [1, 2]] output_shape [8, 16, 4]
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[Y]] {{\[\[}}0, 1]] : tensor<6x4xf32> into tensor<24xf32>
// CHECK: %[[R2:.*]] = tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [4, 6]
// CHECK: %[[ALL:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1, 2, 3]]
// CHECK: %[[R3:.*]] = tensor.expand_shape %[[ALL]] {{\[\[}}0, 1]] output_shape [1, 512]
// CHECK: return %[[R0]], %[[R1]], %[[R2]], %[[R3]]
func.func @reshapes(%x: tensor<8x16x2x2xf32>, %y: tensor<6x4xf32>) -> (tensor<8x64xf32>, tensor<8x16x4xf32>, tensor<4x6xf32>, tensor<1x512xf32>) {
  %0 = train.reshape %x : tensor<8x16x2x2xf32> -> tensor<8x64xf32>
  %1 = train.reshape %0 : tensor<8x64xf32> -> tensor<8x16x4xf32>
  %2 = train.reshape %y : tensor<6x4xf32> -> tensor<4x6xf32>
  %3 = train.flatten %x axis 0 : (tensor<8x16x2x2xf32>) -> tensor<1x512xf32>
  return %0, %1, %2, %3 : tensor<8x64xf32>, tensor<8x16x4xf32>, tensor<4x6xf32>, tensor<1x512xf32>
}

// -----

// Tests that a reshape with a zero-size axis, where blocks of axes are not
// defined, falls back to tensor.reshape with a constant shape.

// CHECK-LABEL: func.func @reshape_empty
// CHECK: %[[SHAPE:.*]] = arith.constant dense<[0, 4, 3]> : tensor<3xi64>
// CHECK: tensor.reshape %{{.*}}(%[[SHAPE]]) : (tensor<3x4x0xf32>, tensor<3xi64>) -> tensor<0x4x3xf32>
func.func @reshape_empty(%x: tensor<3x4x0xf32>) -> tensor<0x4x3xf32> {
  %0 = train.reshape %x : tensor<3x4x0xf32> -> tensor<0x4x3xf32>
  return %0 : tensor<0x4x3xf32>
}

// -----

// Tests that transpose (of any element type) is linalg.transpose with the
// same permutation convention.

// CHECK-LABEL: func.func @transpose
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x3x4xi64>) outs(%{{.*}} : tensor<4x2x3xi64>) permutation = [2, 0, 1]
func.func @transpose(%x: tensor<2x3x4xi64>) -> tensor<4x2x3xi64> {
  %y = train.transpose %x perm [2, 0, 1] : (tensor<2x3x4xi64>) -> tensor<4x2x3xi64>
  return %y : tensor<4x2x3xi64>
}

// -----

// Tests that concat inserts each input at its offset along the axis.

// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<8x4xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x20xf32>
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [8, 16] [1, 1]
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[B]] into %[[I0]][0, 16] [8, 4] [1, 1]
// CHECK: return %[[I1]]
func.func @concat(%a: tensor<8x16xf32>, %b: tensor<8x4xf32>) -> tensor<8x20xf32> {
  %y = train.concat %a, %b axis 1 : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<8x20xf32>
  return %y : tensor<8x20xf32>
}

// -----

// Tests that a positive-step slice is one strided extract_slice, and that a
// negative step reads start + step * i through a linalg.generic.

// CHECK-DAG: #[[REV:.*]] = affine_map<(d0, d1) -> (d0 * -2 + 7, d1)>
// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK: %[[S0:.*]] = tensor.extract_slice %[[X]][0, 2] [8, 4] [1, 2] : tensor<8x16xf32> to tensor<8x4xf32>
// CHECK: %[[S1:.*]] = linalg.generic {indexing_maps = [#[[REV]], #{{.*}}], {{.*}} ins(%[[X]] : tensor<8x16xf32>) outs(%{{.*}} : tensor<3x16xf32>)
// CHECK: return %[[S0]], %[[S1]]
func.func @slice(%x: tensor<8x16xf32>) -> (tensor<8x4xf32>, tensor<3x16xf32>) {
  %0 = train.slice %x starts [0, 2] ends [8, 10] steps [1, 2] : (tensor<8x16xf32>) -> tensor<8x4xf32>
  %1 = train.slice %x starts [7, 0] ends [1, 16] steps [-2, 1] : (tensor<8x16xf32>) -> tensor<3x16xf32>
  return %0, %1 : tensor<8x4xf32>, tensor<3x16xf32>
}

// -----

// Tests that identity and (inference-form) dropout forward their operand,
// that constants become arith.constant, and that parameter reads stay.

// CHECK-LABEL: func.func @passthrough
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK-NOT: linalg.generic
// CHECK-DAG: %[[C:.*]] = arith.constant dense<[64, -1]> : tensor<2xi64>
// CHECK-DAG: %[[W:.*]] = train.read_param @w : tensor<2xf32>
// CHECK: return %[[X]], %[[C]], %[[W]]
train.param @w trainable : tensor<2xf32> = dense<1.0>
func.func @passthrough(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<2xi64>, tensor<2xf32>) {
  %0 = train.identity %x : tensor<8x16xf32>
  %1 = train.dropout %0 ratio 5.0e-01 : tensor<8x16xf32>
  %2 = train.constant dense<[64, -1]> : tensor<2xi64>
  %3 = train.read_param @w : tensor<2xf32>
  return %1, %2, %3 : tensor<8x16xf32>, tensor<2xi64>, tensor<2xf32>
}

// -----

// Tests that a float cast becomes one elementwise generic whose body is a
// single truncf (f32 -> bf16) or extf (bf16 -> f32), and that f16 <-> bf16
// goes through f32.

// CHECK-LABEL: func.func @cast
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x3xbf16>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[IN]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[T]]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3xbf16>)
// CHECK: %[[WIDE:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT: arith.truncf %[[WIDE]] : f32 to bf16
// CHECK-NOT: train.cast
func.func @cast(%x: tensor<2x3xf32>, %h: tensor<2x3xf16>) -> (tensor<2x3xbf16>, tensor<2x3xf32>, tensor<2x3xbf16>) {
  %b = train.cast %x : tensor<2x3xf32> to tensor<2x3xbf16>
  %f = train.cast %b : tensor<2x3xbf16> to tensor<2x3xf32>
  %hb = train.cast %h : tensor<2x3xf16> to tensor<2x3xbf16>
  return %b, %f, %hb : tensor<2x3xbf16>, tensor<2x3xf32>, tensor<2x3xbf16>
}

// -----

// Tests that scale_loss becomes a 0-d generic multiplying loss and scale.

// CHECK-LABEL: func.func @scale_loss
// CHECK-SAME: (%[[L:.*]]: tensor<f32>, %[[S:.*]]: tensor<f32>)
// CHECK: linalg.generic {{.*}} iterator_types = []} ins(%[[L]], %[[S]] : tensor<f32>, tensor<f32>)
// CHECK: arith.mulf
// CHECK-NOT: train.scale_loss
func.func @scale_loss(%loss: tensor<f32>, %scale: tensor<f32>) -> tensor<f32> {
  %0 = train.scale_loss %loss, %scale : tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that reduce_max is a maximumf reduction into -inf over the reduced
// axes, reshaped to the keepdims type, and that gather reads the table with
// tensor.extract at the clamped run-time index.

// CHECK-LABEL: func.func @reduce_max_gather
// CHECK: linalg.fill ins(%{{.*}} : f32)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]
// CHECK: arith.maximumf
// CHECK: tensor.expand_shape {{.*}} into tensor<2x1x1xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]
// CHECK: arith.minsi
// CHECK: tensor.extract %arg1[
func.func @reduce_max_gather(%x: tensor<2x3x4xf32>, %t: tensor<10x4xf32>, %i: tensor<2x5xi64>)
    -> (tensor<2x1x1xf32>, tensor<2x5x4xf32>) {
  %0 = train.reduce_max %x : tensor<2x3x4xf32> -> tensor<2x1x1xf32>
  %1 = train.gather %t, %i axis 0 : (tensor<10x4xf32>, tensor<2x5xi64>) -> tensor<2x5x4xf32>
  return %0, %1 : tensor<2x1x1xf32>, tensor<2x5x4xf32>
}

// -----

// Tests that a recomputed op's lowering (linalg op and tensor.empty) keeps
// the train.recomputed mark and its original does not, so that CSE keeps
// both (traincc-recompute-activations).

// CHECK-LABEL: func.func @recomputed_relu
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<4xf32>) {
// CHECK: %[[E2:.*]] = tensor.empty() {train.recomputed} : tensor<4xf32>
// CHECK: linalg.generic {{.*}} outs(%[[E2]] : tensor<4xf32>) attrs = {train.recomputed}
func.func @recomputed_relu(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = train.relu %x : tensor<4xf32>
  %1 = train.relu %x {train.recomputed} : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
