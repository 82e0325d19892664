// RUN: traincc-opt %s -split-input-file --traincc-convert-train-to-linalg | FileCheck %s

// Tests that a mean cross-entropy is logsumexp - logit[label] per row (the
// row maximum subtracted before exp, the label's logit picked by comparing
// the column index), summed to a scalar and divided by N.

// CHECK-LABEL: func.func @softmax_cross_entropy_mean
// CHECK: arith.maximumf
// CHECK: %[[STATS:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: math.exp
// CHECK: %[[COL:.*]] = linalg.index 1
// CHECK: arith.index_cast %[[COL]] : index to i64
// CHECK: arith.cmpi eq
// CHECK: math.log
// CHECK: iterator_types = ["reduction"]{{.*}} outs(%{{.*}} : tensor<f32>)
// CHECK: arith.constant 4.0{{.*}} : f32
// CHECK: arith.divf
// CHECK: return %{{.*}} : tensor<f32>
func.func @softmax_cross_entropy_mean(%logits: tensor<4x3xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
  %0 = train.softmax_cross_entropy %logits, %labels reduction mean : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that cross-entropy without reduction stops at the per-sample losses.

// CHECK-LABEL: func.func @softmax_cross_entropy_none
// CHECK: math.log
// CHECK-NOT: tensor<f32>
// CHECK: return %{{.*}} : tensor<4xf32>
func.func @softmax_cross_entropy_none(%logits: tensor<4x3xf32>, %labels: tensor<4xi64>) -> tensor<4xf32> {
  %0 = train.softmax_cross_entropy %logits, %labels reduction none : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that the cross-entropy gradient is (softmax - onehot(label)) * grad
// / N, the scalar upstream gradient read through a rank-0 map.

// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @softmax_cross_entropy_backward
// CHECK-SAME: (%[[G:.*]]: tensor<f32>, %[[X:.*]]: tensor<4x3xf32>, %[[L:.*]]: tensor<4xi64>)
// CHECK: linalg.generic {indexing_maps = [{{.*}}, #[[SCALAR]], {{.*}}], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %{{.*}}, %{{.*}}, %[[L]], %[[G]] :
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: arith.cmpi eq
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.constant 4.0{{.*}} : f32
func.func @softmax_cross_entropy_backward(%g: tensor<f32>, %logits: tensor<4x3xf32>, %labels: tensor<4xi64>) -> tensor<4x3xf32> {
  %0 = train.softmax_cross_entropy_backward %g, %logits, %labels : (tensor<f32>, tensor<4x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Tests that a mean MSE sums (p - t)^2 over every axis and divides by the
// element count; `none` reduces all but the batch axis and divides by the
// elements per sample.

// CHECK-LABEL: func.func @mse
// CHECK: iterator_types = ["reduction", "reduction"]
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.constant 8.0{{.*}} : f32
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: arith.constant 4.0{{.*}} : f32
// CHECK: return %{{.*}}, %{{.*}} : tensor<f32>, tensor<2xf32>
func.func @mse(%p: tensor<2x4xf32>, %t: tensor<2x4xf32>) -> (tensor<f32>, tensor<2xf32>) {
  %0 = train.mse %p, %t reduction mean : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<f32>
  %1 = train.mse %p, %t reduction none : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<f32>, tensor<2xf32>
}

// -----

// Tests that the MSE gradient is one elementwise 2 * (p - t) * grad / numel.

// CHECK-LABEL: func.func @mse_backward
// CHECK: linalg.generic
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.constant 2.0{{.*}} : f32
// CHECK: arith.constant 8.0{{.*}} : f32
// CHECK-NOT: linalg.generic
func.func @mse_backward(%g: tensor<f32>, %p: tensor<2x4xf32>, %t: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = train.mse_backward %g, %p, %t : (tensor<f32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that reduce_sum is one reduction whose iterators follow the input's
// axes and whose output keeps the other axes.

// CHECK-DAG: #[[KEPT:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @reduce_sum
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[KEPT]]], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
// CHECK: arith.addf
func.func @reduce_sum(%x: tensor<2x3x4x5xf32>) -> tensor<3xf32> {
  %0 = train.reduce_sum %x axes [0, 2, 3] : (tensor<2x3x4x5xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that sum_to sums the leading axis and the widened size-1 axis, then
// reshapes the kept axes to the result.

// CHECK-LABEL: func.func @sum_to
// CHECK: iterator_types = ["reduction", "parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<3xf32>)
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [3, 1] : tensor<3xf32> into tensor<3x1xf32>
func.func @sum_to(%x: tensor<2x3x4xf32>) -> tensor<3x1xf32> {
  %0 = train.sum_to %x : tensor<2x3x4xf32> -> tensor<3x1xf32>
  return %0 : tensor<3x1xf32>
}

// -----

// Tests that broadcast_to reads its operand through a broadcasting map.

// CHECK-DAG: #[[BCAST:.*]] = affine_map<(d0, d1, d2) -> (d1, 0)>
// CHECK-LABEL: func.func @broadcast_to
// CHECK: linalg.generic {indexing_maps = [#[[BCAST]], {{.*}}]
func.func @broadcast_to(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %0 = train.broadcast_to %x : tensor<3x1xf32> -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Tests that a stride-2 conv_backward_data is split by the residue of the
// input position along each axis (4 phases in 2-D): phase (r, r') reads
// only the kernel offsets k = 2j + (r + pad) mod 2 (a strided slice of the
// weight, copied to be contiguous, then grouped) and gathers the gradient at a + shift - j, a stride-1
// contraction written into dx's stride-2 slice at offset (r, r'). The
// spread form would multiply zeros in 3 of every 4 products. The gradient
// is padded once, by what the phases read past its end.

// CHECK-DAG: #[[DY00:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 - d6, d4 - d7)>
// CHECK-DAG: #[[WMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d5, d2, d6, d7)>
// CHECK-DAG: #[[DY11:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 - d6 + 1, d4 - d7 + 1)>
// CHECK-LABEL: func.func @conv_backward_data
// CHECK-SAME: (%[[DY:.*]]: tensor<2x4x3x3xf32>, %[[W:.*]]: tensor<4x2x3x3xf32>)
// CHECK: %[[P:.*]] = tensor.pad %[[DY]] low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: %[[DYG:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0], [1, 2], [3], [4]]
// CHECK: %[[W00:.*]] = tensor.extract_slice %[[W]][0, 0, 1, 1] [4, 2, 1, 1] [1, 1, 2, 2] : tensor<4x2x3x3xf32> to tensor<4x2x1x1xf32>
// CHECK: %[[C:.*]] = linalg.copy ins(%[[W00]] : tensor<4x2x1x1xf32>)
// CHECK: %[[WG00:.*]] = tensor.expand_shape %[[C]] {{\[\[}}0, 1], [2], [3], [4]]
// CHECK: %[[DX00:.*]] = linalg.generic {indexing_maps = [#[[DY00]], #[[WMAP]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[DYG]], %[[WG00]]
// CHECK: %[[C00:.*]] = tensor.collapse_shape %[[DX00]] {{\[\[}}0], [1, 2], [3], [4]] : tensor<2x2x2x3x3xf32> into tensor<2x4x3x3xf32>
// CHECK: %[[S00:.*]] = tensor.insert_slice %[[C00]] into %{{.*}}[0, 0, 0, 0] [2, 4, 3, 3] [1, 1, 2, 2] : tensor<2x4x3x3xf32> into tensor<2x4x6x6xf32>
// CHECK: tensor.extract_slice %[[W]][0, 0, 1, 0] [4, 2, 1, 2] [1, 1, 2, 2]
// CHECK: %[[S01:.*]] = tensor.insert_slice %{{.*}} into %[[S00]][0, 0, 0, 1] [2, 4, 3, 3] [1, 1, 2, 2]
// CHECK: tensor.extract_slice %[[W]][0, 0, 0, 1] [4, 2, 2, 1] [1, 1, 2, 2]
// CHECK: %[[S10:.*]] = tensor.insert_slice %{{.*}} into %[[S01]][0, 0, 1, 0] [2, 4, 3, 3] [1, 1, 2, 2]
// CHECK: tensor.extract_slice %[[W]][0, 0, 0, 0] [4, 2, 2, 2] [1, 1, 2, 2]
// CHECK: linalg.generic {indexing_maps = [#[[DY11]], #[[WMAP]], {{.*}}]
// CHECK: %[[S11:.*]] = tensor.insert_slice %{{.*}} into %[[S10]][0, 0, 1, 1] [2, 4, 3, 3] [1, 1, 2, 2]
// CHECK: return %[[S11]]
func.func @conv_backward_data(%dy: tensor<2x4x3x3xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<2x4x6x6xf32> {
  %0 = train.conv_backward_data %dy, %w strides [2, 2] pads [1, 1, 0, 0] dilations [1, 1] groups 2 : (tensor<2x4x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<2x4x6x6xf32>
  return %0 : tensor<2x4x6x6xf32>
}

// -----

// Tests that a pad larger than the kernel's reach crops the spread gradient
// (output positions that only saw padding contribute nothing).

// CHECK-LABEL: func.func @conv_backward_data_crop
// CHECK: %[[CROP:.*]] = tensor.extract_slice %{{.*}}[0, 0, 1, 1] [1, 2, 3, 3] [1, 1, 1, 1] : tensor<1x2x5x5xf32> to tensor<1x2x3x3xf32>
// CHECK: tensor.insert_slice %[[CROP]] into %{{.*}}[0, 0, 0, 0] [1, 2, 3, 3] [1, 1, 1, 1] : tensor<1x2x3x3xf32> into tensor<1x2x3x3xf32>
func.func @conv_backward_data_crop(%dy: tensor<1x2x5x5xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32> {
  %0 = train.conv_backward_data %dy, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x2x5x5xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// Tests that conv_backward_filter correlates the padded input with the
// gradient over batch and output positions, into G x M/G x C/G x k.

// CHECK-DAG: #[[XMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d0, d2, d6 * 2 + d3 * 2, d4 + d7)>
// CHECK-DAG: #[[DYMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d0, d1, d6, d7)>
// CHECK-DAG: #[[DWMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @conv_backward_filter
// CHECK: tensor.pad %{{.*}} low[0, 0, 1, 0] high[0, 0, 1, 0]
// CHECK: %[[DW:.*]] = linalg.generic {indexing_maps = [#[[XMAP]], #[[DYMAP]], #[[DWMAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK: tensor.collapse_shape %[[DW]] {{\[\[}}0, 1], [2], [3], [4]] : tensor<1x3x2x3x2xf32> into tensor<3x2x3x2xf32>
func.func @conv_backward_filter(%x: tensor<2x2x6x5xf32>, %dy: tensor<2x3x2x4xf32>) -> tensor<3x2x3x2xf32> {
  %0 = train.conv_backward_filter %x, %dy strides [2, 1] pads [1, 0, 1, 0] dilations [2, 1] groups 1 : (tensor<2x2x6x5xf32>, tensor<2x3x2x4xf32>) -> tensor<3x2x3x2xf32>
  return %0 : tensor<3x2x3x2xf32>
}

// -----

// Tests that bn_stats computes the mean, then the variance as the mean of
// squared deviations (two passes), and that f16 accumulates in f32 and
// yields f32 statistics.

// CHECK-LABEL: func.func @bn_stats_f16
// CHECK: iterator_types = ["reduction", "parallel", "reduction", "reduction"]{{.*}} outs(%{{.*}} : tensor<3xf32>)
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.constant 3.2{{.*}} : f32
// CHECK: iterator_types = ["reduction", "parallel", "reduction", "reduction"]{{.*}} outs(%{{.*}} : tensor<3xf32>)
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK-NOT: arith.truncf
// CHECK: return %{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xf32>
func.func @bn_stats_f16(%x: tensor<2x3x4x4xf16>) -> (tensor<3xf32>, tensor<3xf32>) {
  %mean, %var = train.bn_stats %x : (tensor<2x3x4x4xf16>) -> (tensor<3xf32>, tensor<3xf32>)
  return %mean, %var : tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that bn_apply computes scale / sqrt(var + eps) per channel, then
// one elementwise pass over the input with channel-indexed operands.

// CHECK-DAG: #[[CH:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @bn_apply
// CHECK: math.sqrt
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[CH]], #[[CH]], #[[CH]], #{{.*}}]
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @bn_apply(%x: tensor<2x3x4x4xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %0 = train.bn_apply %x, %m, %v, %s, %b epsilon 1.0e-05 : tensor<2x3x4x4xf32>, tensor<3xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// -----

// Tests that batch_norm_backward sums dy and dy * (x - mean) per channel,
// and that the input gradient includes both statistics paths:
// k * (M * dy - sum(dy) - (x - mean) * c) with M = 32 values per channel.

// CHECK-LABEL: func.func @batch_norm_backward
// CHECK: %[[SUMDY:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction"]
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction"]
// CHECK: arith.constant 3.2{{0*}}e+01 : f32
// CHECK: %[[DX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK: arith.constant 3.2{{0*}}e+01 : f32
// CHECK: arith.subf
// CHECK: arith.subf
// CHECK: return %[[DX]], %{{.*}}, %[[SUMDY]]
func.func @batch_norm_backward(%dy: tensor<2x3x4x4xf32>, %x: tensor<2x3x4x4xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %s: tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %dx, %ds, %db = train.batch_norm_backward %dy, %x, %m, %v, %s epsilon 1.0e-05 : tensor<2x3x4x4xf32>, tensor<3xf32>
  return %dx, %ds, %db : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that relu_backward passes the gradient where the input is positive.

// CHECK-LABEL: func.func @relu_backward
// CHECK: %[[POS:.*]] = arith.cmpf ogt, %[[X:.*]], %{{.*}} : f32
// CHECK: arith.select %[[POS]]
func.func @relu_backward(%dy: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = train.relu_backward %dy, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that leaky_relu_backward scales the gradient by alpha elsewhere.

// CHECK-LABEL: func.func @leaky_relu_backward
// CHECK: %[[ALPHA:.*]] = arith.constant 2.0{{0*}}e-01 : f32
// CHECK: %[[POS:.*]] = arith.cmpf ogt
// CHECK: %[[SCALED:.*]] = arith.mulf %{{.*}}, %[[ALPHA]]
// CHECK: arith.select %[[POS]], %{{.*}}, %[[SCALED]]
func.func @leaky_relu_backward(%dy: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = train.leaky_relu_backward %dy, %x alpha 2.0e-01 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that clip_backward passes the gradient strictly inside the bounds,
// and tests only the bounds that are given.

// CHECK-LABEL: func.func @clip_backward
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: linalg.generic
// CHECK-NOT: arith.cmpf ogt
// CHECK: arith.cmpf olt
func.func @clip_backward(%dy: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = train.clip_backward %dy, %x min 0.0 max 6.0 : tensor<4xf32>
  %1 = train.clip_backward %dy, %x max 1.0 : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that sigmoid_backward and tanh_backward use the forward output:
// dy * y * (1 - y) and dy * (1 - y * y).

// CHECK-LABEL: func.func @sigmoid_tanh_backward
// CHECK: ^bb0(%[[DY:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[ONE_MINUS:.*]] = arith.subf %{{.*}}, %[[Y]]
// CHECK: %[[P:.*]] = arith.mulf %[[Y]], %[[ONE_MINUS]]
// CHECK: arith.mulf %[[DY]], %[[P]]
// CHECK: ^bb0(%[[DY2:.*]]: f32, %[[Y2:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[SQ:.*]] = arith.mulf %[[Y2]], %[[Y2]]
// CHECK: %[[ONE_MINUS2:.*]] = arith.subf %{{.*}}, %[[SQ]]
// CHECK: arith.mulf %[[DY2]], %[[ONE_MINUS2]]
func.func @sigmoid_tanh_backward(%dy: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = train.sigmoid_backward %dy, %y : tensor<4xf32>
  %1 = train.tanh_backward %dy, %y : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that softmax_backward reduces dy * y along the axis and computes
// y * (dy - sum) in one pass over the input.

// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @softmax_backward
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: arith.mulf
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[ROW]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}}, %{{.*}}, %[[SUM]]
// CHECK: arith.subf
// CHECK: arith.mulf
func.func @softmax_backward(%dy: tensor<2x3x4xf32>, %y: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = train.softmax_backward %dy, %y axis 1 : tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Tests that log_softmax_backward is dy - exp(y) * sum(dy).

// CHECK-LABEL: func.func @log_softmax_backward
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: math.exp
// CHECK: arith.mulf
// CHECK: arith.subf
func.func @log_softmax_backward(%dy: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = train.log_softmax_backward %dy, %y axis 1 : tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that max_pool_backward finds each window's winner (larger value,
// then smaller row-major offset; padded positions excluded by comparing the
// position with the input bounds), routes the gradient to the winning
// offset, spreads the shares and gathers them per input position.

// CHECK-LABEL: func.func @max_pool_backward
// CHECK: tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[ARG:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK: arith.cmpi sge
// CHECK: arith.cmpi slt
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf oeq
// CHECK: } -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xi32>)
// CHECK: %[[SHARES:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[ARG]]#1 : tensor<1x2x3x3xf32>, tensor<1x2x3x3xi32>) outs(%{{.*}} : tensor<1x2x3x3x3x3xf32>)
// CHECK: %[[SPREAD:.*]] = tensor.insert_slice %[[SHARES]] into %{{.*}}[0, 0, 0, 0, 1, 1] [1, 2, 3, 3, 3, 3] [1, 1, 1, 1, 2, 2]
// CHECK: linalg.generic {{.*}} ins(%[[SPREAD]] : tensor<1x2x3x3x7x7xf32>)
func.func @max_pool_backward(%dy: tensor<1x2x3x3xf32>, %x: tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32> {
  %0 = train.max_pool_backward %dy, %x kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] : (tensor<1x2x3x3xf32>, tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32>
  return %0 : tensor<1x2x5x5xf32>
}

// -----

// Tests that without padding max_pool_backward does not test positions,
// and that windows tiling the input (stride = kernel, no padding) write the
// gradient in one pass over the input viewed as [N, C, O1, K1, O2, K2]:
// the window's gradient where the element's offset is the winner, else
// zero, with no spread and no gathering sum.

// CHECK-LABEL: func.func @max_pool_backward_unpadded
// CHECK-SAME: (%[[DY:.*]]: tensor<1x1x2x2xf32>, %{{.*}}: tensor<1x1x4x4xf32>)
// CHECK-NOT: tensor.pad
// CHECK-NOT: arith.cmpi sge
// CHECK: %[[ARG:.*]]:2 = linalg.generic
// CHECK: arith.cmpf ogt
// CHECK: %[[TILED:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[DY]], %[[ARG]]#1 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xi32>) outs(%{{.*}} : tensor<1x1x2x2x2x2xf32>)
// CHECK: arith.cmpi eq
// CHECK: arith.select
// CHECK: %[[DX:.*]] = tensor.collapse_shape %[[TILED]] {{\[}}[0], [1], [2, 3], [4, 5]] : tensor<1x1x2x2x2x2xf32> into tensor<1x1x4x4xf32>
// CHECK-NOT: tensor.insert_slice
// CHECK-NOT: linalg.generic
// CHECK: return %[[DX]]
func.func @max_pool_backward_unpadded(%dy: tensor<1x1x2x2xf32>, %x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %0 = train.max_pool_backward %dy, %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : (tensor<1x1x2x2xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// Tests that avg_pool_backward divides by the forward's per-window counts
// (here the real elements of each padded window: 4, 6, 4, ...), spreads and
// sums over the kernel.

// CHECK-LABEL: func.func @avg_pool_backward
// CHECK: arith.constant dense<{{\[\[}}4.000000e+00, 6.000000e+00, 4.000000e+00], [6.000000e+00, 9.000000e+00, 6.000000e+00], [4.000000e+00, 6.000000e+00, 4.000000e+00]]> : tensor<3x3xf32>
// CHECK: arith.divf
// CHECK: %[[SPREAD:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 1, 1] [1, 2, 3, 3] [1, 1, 2, 2] : tensor<1x2x3x3xf32> into tensor<1x2x7x7xf32>
// CHECK: linalg.generic {{.*}} ins(%[[SPREAD]], %{{.*}} : tensor<1x2x7x7xf32>, tensor<3x3xf32>)
func.func @avg_pool_backward(%dy: tensor<1x2x3x3xf32>) -> tensor<1x2x5x5xf32> {
  %0 = train.avg_pool_backward %dy kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] : (tensor<1x2x3x3xf32>) -> tensor<1x2x5x5xf32>
  return %0 : tensor<1x2x5x5xf32>
}

// -----

// Tests that with count_include_pad every window counts its full size.

// CHECK-LABEL: func.func @avg_pool_backward_include_pad
// CHECK: arith.constant dense<9.000000e+00> : tensor<3x3xf32>
func.func @avg_pool_backward_include_pad(%dy: tensor<1x2x3x3xf32>) -> tensor<1x2x5x5xf32> {
  %0 = train.avg_pool_backward %dy kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] {count_include_pad = true} : (tensor<1x2x3x3xf32>) -> tensor<1x2x5x5xf32>
  return %0 : tensor<1x2x5x5xf32>
}

// -----

// Tests that slice_backward inserts the gradient into zeros with the
// slice's offsets and strides.

// CHECK-LABEL: func.func @slice_backward
// CHECK-SAME: (%[[DY:.*]]: tensor<3x2xf32>)
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK: tensor.insert_slice %[[DY]] into %[[Z]][1, 0] [3, 2] [1, 2] : tensor<3x2xf32> into tensor<4x4xf32>
func.func @slice_backward(%dy: tensor<3x2xf32>) -> tensor<4x4xf32> {
  %0 = train.slice_backward %dy starts [1, 0] ends [4, 4] steps [1, 2] : (tensor<3x2xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Tests that a negative step reverses the gradient along that axis first,
// then inserts it from the lowest index read (5 - 2 * 2 = 1) with stride 2.

// CHECK-DAG: #[[REV:.*]] = affine_map<(d0, d1) -> (d0, -d1 + 2)>
// CHECK-LABEL: func.func @slice_backward_negative_step
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[REV]], {{.*}}]
// CHECK: tensor.insert_slice %[[R]] into %{{.*}}[0, 1] [2, 3] [1, 2] : tensor<2x3xf32> into tensor<2x6xf32>
func.func @slice_backward_negative_step(%dy: tensor<2x3xf32>) -> tensor<2x6xf32> {
  %0 = train.slice_backward %dy starts [0, 5] ends [2, 0] steps [1, -2] : (tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// Tests that dropout_mask keys a SplitMix64 sequence with the seed and
// stream once (seed + gamma * (stream + 1), gamma * 3 folded), then hashes
// each element's row-major index + 1: dropped when the top 24 bits are
// below ceil(0.25 * 2^24) = 4194304, else 1 / (1 - 0.25).

// CHECK-LABEL: func.func @dropout_mask
// CHECK-SAME: (%[[SEED:.*]]: i64)
// CHECK: %[[STREAM:.*]] = arith.constant -2691343689449507777 : i64
// CHECK: arith.addi %[[SEED]], %[[STREAM]] : i64
// CHECK: arith.constant -4658895280553007687 : i64
// CHECK: arith.constant -7723592293110705685 : i64
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK: arith.constant -7046029254386353131 : i64
// CHECK: arith.constant 40 : i64
// CHECK: arith.constant 4194304 : i64
// CHECK: arith.cmpi ult
// CHECK: arith.constant 1.33333337 : f32
func.func @dropout_mask(%seed: i64) -> tensor<4x8xf32> {
  %0 = train.dropout_mask %seed ratio 2.5e-01 stream 2 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Tests that the ops on persistent state are left for state lowering while
// the compute around them is lowered.

// CHECK-LABEL: func.func @state_ops_untouched
// CHECK: train.read_param @w
// CHECK: linalg.generic
// CHECK: train.bn_running_update @rm, @rv
// CHECK: train.accumulate @w.grad
// CHECK: train.sgd_update @w, @w.grad
// CHECK: train.zero @w.grad
module {
  train.param @w trainable : tensor<3xf32>
  train.param @w.grad gradient : tensor<3xf32>
  train.param @rm running_mean : tensor<3xf32>
  train.param @rv running_var : tensor<3xf32>
  func.func @state_ops_untouched(%x: tensor<2x3xf32>, %s: f32, %lr: f32, %step: i64) {
    %w = train.read_param @w : tensor<3xf32>
    %mean, %var = train.bn_stats %x : (tensor<2x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
    train.bn_running_update @rm, @rv, %mean, %var momentum 1.0e-01 count 2 : tensor<3xf32>
    %g = train.mul %mean, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    train.accumulate @w.grad, %g scale %s : tensor<3xf32>
    train.sgd_update @w, @w.grad lr %lr step %step
    train.zero @w.grad
    return
  }
}

// -----

// Tests that reduce_max_backward counts the maxima (a reduction over the
// reduced axis) and gives each grad / count, the others zero.

// CHECK-LABEL: func.func @reduce_max_backward
// CHECK: %[[COUNT:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK: linalg.generic
// CHECK: arith.cmpf oeq
// CHECK: arith.divf
// CHECK: arith.select
func.func @reduce_max_backward(%dy: tensor<2x1xf32>, %x: tensor<2x5xf32>, %y: tensor<2x1xf32>) -> tensor<2x5xf32> {
  %0 = train.reduce_max_backward %dy, %x, %y : (tensor<2x1xf32>, tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Tests that gather_backward is one generic over the table's axes
// (parallel) and the index positions (reduction) that adds dy where the
// clamped index equals the row: no scatter, so no write races.

// CHECK-LABEL: func.func @gather_backward
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// CHECK: arith.index_cast
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: %[[ROW:.*]] = linalg.index 0
// CHECK: arith.cmpi eq, %{{.*}}, %[[ROW]]
// CHECK: arith.addf
func.func @gather_backward(%dy: tensor<2x3x4xf32>, %i: tensor<2x3xi64>) -> tensor<10x4xf32> {
  %0 = train.gather_backward %dy, %i axis 0 : (tensor<2x3x4xf32>, tensor<2x3xi64>) -> tensor<10x4xf32>
  return %0 : tensor<10x4xf32>
}
