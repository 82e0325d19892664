// RUN: traincc-opt %s -split-input-file --traincc-winograd-convolutions="min-channels=4" | FileCheck %s
// RUN: traincc-opt %s -split-input-file --traincc-winograd-convolutions="min-channels=0" | FileCheck %s --check-prefix=OFF

// Tests that a 3x3 stride-1 convolution becomes Winograd F(2x2,3x3): the
// filter transform reads each of the 9 taps, the input transform each of a
// tile's 16 positions at a stride of 2 from the zero-padded input, the 16
// products are one contraction over the input channels (a conv forward
// kernel whose inputs come in cached blocks), and the output transform
// adds the bias and writes 2x2 blocks.

// CHECK-DAG: #[[TAP00:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
// CHECK-DAG: #[[TAP22:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, 2, 2)>
// CHECK-DAG: #[[FILTER_OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3, d0, d1)>
// CHECK-DAG: #[[TILE00:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0 * 2 + d2, d1, d3 * 2, d4 * 2)>
// CHECK-DAG: #[[TILE33:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0 * 2 + d2, d1, d3 * 2 + 3, d4 * 2 + 3)>
// CHECK-DAG: #[[U:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3)>
// CHECK-DAG: #[[V:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG: #[[M:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[BLOCK_OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d5, d4, d6)>
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x6x6xf32>, %[[W:.*]]: tensor<8x4x3x3xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NOT: train.conv
// CHECK: %[[PAD:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[UT:.*]] = linalg.generic {indexing_maps = [#[[TAP00]], {{.*}}, #[[TAP22]], #[[FILTER_OUT]]]
// CHECK-SAME: ins(%[[W]], %[[W]], %[[W]], %[[W]], %[[W]], %[[W]], %[[W]], %[[W]], %[[W]] :
// CHECK-SAME: outs(%{{.*}} : tensor<4x4x8x4xf32>) attrs =  {traincc.keep_loop_order}
// CHECK: linalg.index 2
// CHECK: linalg.index 3
// CHECK: %[[U16:.*]] = tensor.collapse_shape %[[UT]] {{\[}}[0, 1], [2], [3]] : tensor<4x4x8x4xf32> into tensor<16x8x4xf32>
// CHECK: %[[VT:.*]] = linalg.generic {indexing_maps = [#[[TILE00]], {{.*}}, #[[TILE33]], {{.*}}]
// CHECK-SAME: outs(%{{.*}} : tensor<4x4x1x4x2x3x3xf32>) attrs =  {traincc.keep_loop_order}
// CHECK: %[[V16:.*]] = tensor.collapse_shape %[[VT]] {{\[}}[0, 1], [2], [3], [4, 5, 6]] : tensor<4x4x1x4x2x3x3xf32> into tensor<16x1x4x18xf32>
// CHECK: %[[ZERO:.*]] = linalg.fill {{.*}} -> tensor<16x1x8x18xf32>
// CHECK: %[[PROD:.*]] = linalg.generic {indexing_maps = [#[[U]], #[[V]], #[[M]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[U16]], %[[V16]] : tensor<16x8x4xf32>, tensor<16x1x4x18xf32>) outs(%[[ZERO]] : tensor<16x1x8x18xf32>)
// CHECK-SAME: traincc.cache_blocked
// CHECK-SAME: traincc.kernel_class = "conv_forward"
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[MT:.*]] = tensor.expand_shape %[[PROD]] {{\[}}[0, 1], [2], [3], [4, 5, 6]] output_shape [4, 4, 1, 8, 2, 3, 3]
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[MT]], {{.*}}, %[[B]] : {{.*}}, tensor<8xf32>) outs(%{{.*}} : tensor<1x2x8x3x2x3x2xf32>) attrs =  {traincc.keep_loop_order}
// CHECK: %[[ROUNDS:.*]] = tensor.collapse_shape %[[Y]] {{\[}}[0, 1], [2], [3, 4], [5, 6]] : tensor<1x2x8x3x2x3x2xf32> into tensor<2x8x6x6xf32>
// CHECK: return %[[ROUNDS]]
// OFF-LABEL: func.func @forward
// OFF: train.conv
func.func @forward(%x: tensor<2x4x6x6xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>) -> tensor<2x8x6x6xf32> {
  %y = train.conv %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x4x6x6xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<2x8x6x6xf32>
  return %y : tensor<2x8x6x6xf32>
}

// -----

// Tests that a stride-1 data gradient is the same computation on the output
// gradient padded by 2 - pad, with the weight read flipped and its channel
// axes swapped (tap (0, 0) of the transformed filter is w[i, o, 2, 2]), and
// a conv data gradient kernel.

// CHECK-DAG: #[[FLIP00:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, 2, 2)>
// CHECK-LABEL: func.func @data_gradient
// CHECK-SAME: (%[[DY:.*]]: tensor<2x8x4x4xf32>, %[[W:.*]]: tensor<8x4x3x3xf32>)
// CHECK-NOT: train.conv_backward_data
// CHECK: tensor.pad %[[DY]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: linalg.generic {indexing_maps = [#[[FLIP00]], {{.*}} outs(%{{.*}} : tensor<4x4x4x8xf32>)
// CHECK: traincc.kernel_class = "conv_data_gradient"
// CHECK: tensor.collapse_shape {{.*}} into tensor<2x4x4x4xf32>
func.func @data_gradient(%dy: tensor<2x8x4x4xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x4x4x4xf32> {
  %0 = train.conv_backward_data %dy, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x8x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<2x4x4x4xf32>
  return %0 : tensor<2x4x4x4xf32>
}

// -----

// Tests that a filter gradient is F(3x3, 2x2): each 2x2 block of output
// gradients transformed to 4x4 (4 reads), each 4x4 tile of the padded
// input transformed (16 reads), 16 contractions over the blocks of images
// and their tiles (two reduction loops, a conv filter gradient kernel whose
// reduction the vectorizer may block), and the 3x3 output transform.

// CHECK-DAG: #[[G00:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0 * 2 + d2, d1, d3 * 2, d4 * 2)>
// CHECK-DAG: #[[G11:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0 * 2 + d2, d1, d3 * 2 + 1, d4 * 2 + 1)>
// CHECK-DAG: #[[UG:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>
// CHECK-DAG: #[[VG:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2, d4)>
// CHECK-DAG: #[[MG:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @filter_gradient
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x4x4xf32>, %[[DY:.*]]: tensor<2x8x4x4xf32>)
// CHECK-NOT: train.conv_backward_filter
// CHECK: %[[PAD:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[GT:.*]] = linalg.generic {indexing_maps = [#[[G00]], {{.*}}, #[[G11]], {{.*}}]
// CHECK-SAME: ins(%[[DY]], %[[DY]], %[[DY]], %[[DY]] :
// CHECK-SAME: outs(%{{.*}} : tensor<4x4x1x8x2x2x2xf32>) attrs =  {traincc.keep_loop_order}
// CHECK: %[[G16:.*]] = tensor.collapse_shape %[[GT]] {{.*}} into tensor<16x1x8x8xf32>
// CHECK: %[[VT:.*]] = linalg.generic {{.*}} ins(%[[PAD]], {{.*}} outs(%{{.*}} : tensor<4x4x1x4x2x2x2xf32>) attrs =  {traincc.keep_loop_order}
// CHECK: %[[V16:.*]] = tensor.collapse_shape %[[VT]] {{.*}} into tensor<16x1x4x8xf32>
// CHECK: %[[ZERO:.*]] = linalg.fill {{.*}} -> tensor<16x8x4xf32>
// CHECK: %[[PROD:.*]] = linalg.generic {indexing_maps = [#[[UG]], #[[VG]], #[[MG]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[G16]], %[[V16]] : tensor<16x1x8x8xf32>, tensor<16x1x4x8xf32>) outs(%[[ZERO]] : tensor<16x8x4xf32>)
// CHECK-SAME: traincc.kernel_class = "conv_filter_gradient"
// CHECK-NOT: traincc.cache_blocked
// CHECK: %[[MT:.*]] = tensor.expand_shape %[[PROD]] {{.*}} into tensor<4x4x8x4xf32>
// CHECK: %[[DW:.*]] = linalg.generic {{.*}} ins(%[[MT]], {{.*}} outs(%{{.*}} : tensor<8x4x3x3xf32>) attrs =  {traincc.keep_loop_order}
// CHECK: return %[[DW]]
func.func @filter_gradient(%x: tensor<2x4x4x4xf32>, %dy: tensor<2x8x4x4xf32>) -> tensor<8x4x3x3xf32> {
  %0 = train.conv_backward_filter %x, %dy strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x4x4x4xf32>, tensor<2x8x4x4xf32>) -> tensor<8x4x3x3xf32>
  return %0 : tensor<8x4x3x3xf32>
}

// -----

// Tests the convolutions left to the direct lowering: strided, 5x5, an odd
// number of output rows, too few channels, grouped, f16, and a recomputed
// one (its lowering must carry the marks that keep CSE off it).

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: linalg.generic
// CHECK-COUNT-7: train.conv
// CHECK-NOT: linalg.generic
func.func @left_alone(%x: tensor<2x4x6x6xf32>, %w: tensor<8x4x3x3xf32>, %w5: tensor<8x4x5x5xf32>, %x7: tensor<2x4x7x7xf32>, %wg: tensor<8x2x3x3xf32>, %xh: tensor<2x4x6x6xf16>, %wh: tensor<8x4x3x3xf16>, %w3: tensor<3x4x3x3xf32>) -> (tensor<2x8x3x3xf32>, tensor<2x8x6x6xf32>, tensor<2x8x7x7xf32>, tensor<2x3x6x6xf32>, tensor<2x8x6x6xf32>, tensor<2x8x6x6xf16>, tensor<2x8x6x6xf32>) {
  %0 = train.conv %x, %w strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x4x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x3x3xf32>
  %1 = train.conv %x, %w5 strides [1, 1] pads [2, 2, 2, 2] dilations [1, 1] groups 1 : (tensor<2x4x6x6xf32>, tensor<8x4x5x5xf32>) -> tensor<2x8x6x6xf32>
  %2 = train.conv %x7, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x4x7x7xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x7x7xf32>
  %3 = train.conv %x, %w3 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x4x6x6xf32>, tensor<3x4x3x3xf32>) -> tensor<2x3x6x6xf32>
  %4 = train.conv %x, %wg strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 2 : (tensor<2x4x6x6xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x6x6xf32>
  %5 = train.conv %xh, %wh strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x4x6x6xf16>, tensor<8x4x3x3xf16>) -> tensor<2x8x6x6xf16>
  %6 = train.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 {train.recomputed} : (tensor<2x4x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x6x6xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x8x3x3xf32>, tensor<2x8x6x6xf32>, tensor<2x8x7x7xf32>, tensor<2x3x6x6xf32>, tensor<2x8x6x6xf32>, tensor<2x8x6x6xf16>, tensor<2x8x6x6xf32>
}

// -----

// Tests that a data gradient whose pad exceeds the kernel's reach (it would
// need the gradient cropped) is left alone.

// CHECK-LABEL: func.func @wide_pad
// CHECK: train.conv_backward_data
func.func @wide_pad(%dy: tensor<2x8x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x4x4x4xf32> {
  %0 = train.conv_backward_data %dy, %w strides [1, 1] pads [3, 3, 3, 3] dilations [1, 1] groups 1 : (tensor<2x8x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<2x4x4x4xf32>
  return %0 : tensor<2x4x4x4xf32>
}
