// RUN: traincc-opt %s -split-input-file -verify-diagnostics

// Diagnostics of shape functions come with a second error from the inference
// verifier, "failed to infer returned types"; those of the forward shape
// function that a gradient op re-runs on its result type come with "result
// type and attributes do not describe a valid forward op". Each chunk expects
// both.

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

// Tests that cross-entropy logits are a matrix.
func.func @ce_logits_rank(%logits: tensor<8x10x2xf32>, %labels: tensor<8xi64>) {
  // expected-error @below {{logits must be [N, C], got 'tensor<8x10x2xf32>'}}
  // expected-error @below {{failed to infer returned types}}
  %0 = train.softmax_cross_entropy %logits, %labels reduction mean
      : (tensor<8x10x2xf32>, tensor<8xi64>) -> tensor<f32>
  return
}

// -----

// Tests that there is one label per sample.
func.func @ce_labels(%logits: tensor<8x10xf32>, %labels: tensor<4xi64>) {
  // expected-error @below {{labels must be [8], got 'tensor<4xi64>'}}
  // expected-error @below {{failed to infer returned types}}
  %0 = train.softmax_cross_entropy %logits, %labels reduction none
      : (tensor<8x10xf32>, tensor<4xi64>) -> tensor<8xf32>
  return
}

// -----

// Tests that labels are a vector, not one-hot rows.
func.func @ce_labels_rank(%logits: tensor<8x10xf32>, %labels: tensor<8x1xi64>) {
  // expected-error @below {{labels must be [8], got 'tensor<8x1xi64>'}}
  // expected-error @below {{failed to infer returned types}}
  %0 = train.softmax_cross_entropy %logits, %labels reduction mean
      : (tensor<8x10xf32>, tensor<8x1xi64>) -> tensor<f32>
  return
}

// -----

// Tests that labels are int64 class indices.
func.func @ce_labels_type(%logits: tensor<8x10xf32>, %labels: tensor<8xi32>) {
  // expected-error @below {{operand #1 must be statically shaped tensor of 64-bit signless integer values}}
  %0 = train.softmax_cross_entropy %logits, %labels reduction mean
      : (tensor<8x10xf32>, tensor<8xi32>) -> tensor<f32>
  return
}

// -----

// Tests that a mean loss is a scalar: the per-sample shape is rejected.
func.func @ce_mean_type(%logits: tensor<8x10xf32>, %labels: tensor<8xi64>) {
  // expected-error @below {{inferred type(s) 'tensor<f32>' are incompatible with return type(s) of operation 'tensor<8xf32>'}}
  // expected-error @below {{failed to infer returned types}}
  %0 = train.softmax_cross_entropy %logits, %labels reduction mean
      : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<8xf32>
  return
}

// -----

// Tests that an unknown reduction is named in the error.
func.func @ce_reduction(%logits: tensor<8x10xf32>, %labels: tensor<8xi64>) {
  // expected-error @below {{expected 'mean' or 'none', got 'sum'}}
  %0 = train.softmax_cross_entropy %logits, %labels reduction sum
      : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  return
}

// -----

// Tests that the cross-entropy gradient takes the scalar gradient of the
// mean loss.
func.func @ce_backward_grad(%g: tensor<8xf32>, %logits: tensor<8x10xf32>,
                            %labels: tensor<8xi64>) {
  // expected-error @below {{upstream gradient of a mean loss must be a scalar, got 'tensor<8xf32>'}}
  // expected-error @below {{failed to infer returned types}}
  %0 = train.softmax_cross_entropy_backward %g, %logits, %labels
      : (tensor<8xf32>, tensor<8x10xf32>, tensor<8xi64>) -> tensor<8x10xf32>
  return
}

// -----

// Tests that the cross-entropy gradient has the logits' element type.
func.func @ce_backward_grad_type(%g: tensor<f16>, %logits: tensor<8x10xf32>,
                                 %labels: tensor<8xi64>) {
  // expected-error @below {{upstream gradient element type 'f16' differs from 'f32'}}
  // expected-error @below {{failed to infer returned types}}
  %0 = train.softmax_cross_entropy_backward %g, %logits, %labels
      : (tensor<f16>, tensor<8x10xf32>, tensor<8xi64>) -> tensor<8x10xf32>
  return
}

// -----

// Tests that the cross-entropy gradient checks its labels like the loss.
func.func @ce_backward_labels(%g: tensor<f32>, %logits: tensor<8x10xf32>,
                              %labels: tensor<10xi64>) {
  // expected-error @below {{labels must be [8], got 'tensor<10xi64>'}}
  // expected-error @below {{failed to infer returned types}}
  %0 = train.softmax_cross_entropy_backward %g, %logits, %labels
      : (tensor<f32>, tensor<8x10xf32>, tensor<10xi64>) -> tensor<8x10xf32>
  return
}

// -----

// Tests that MSE compares tensors of one type.
func.func @mse_target(%p: tensor<8x4xf32>, %t: tensor<8x1xf32>) {
  // expected-error @below {{target type 'tensor<8x1xf32>' differs from prediction type 'tensor<8x4xf32>'}}
  // expected-error @below {{failed to infer returned types}}
  %0 = train.mse %p, %t reduction mean
      : (tensor<8x4xf32>, tensor<8x1xf32>) -> tensor<f32>
  return
}

// -----

// Tests that MSE needs a batch axis.
func.func @mse_rank(%p: tensor<f32>) {
  // expected-error @below {{prediction needs a batch axis}}
  // expected-error @below {{failed to infer returned types}}
  %0 = train.mse %p, %p reduction mean : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return
}

// -----

// Tests that MSE without reduction gives one loss per sample.
func.func @mse_none_type(%p: tensor<8x4xf32>) {
  // expected-error @below {{inferred type(s) 'tensor<8xf32>' are incompatible with return type(s) of operation 'tensor<8x4xf32>'}}
  // expected-error @below {{failed to infer returned types}}
  %0 = train.mse %p, %p reduction none
      : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return
}

// -----

// Tests that the MSE gradient takes the scalar gradient of the mean loss.
func.func @mse_backward_grad(%g: tensor<8xf32>, %p: tensor<8x4xf32>) {
  // expected-error @below {{upstream gradient of a mean loss must be a scalar, got 'tensor<8xf32>'}}
  // expected-error @below {{failed to infer returned types}}
  %0 = train.mse_backward %g, %p, %p
      : (tensor<8xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return
}

// -----

// Tests that the MSE gradient has the prediction's element type.
func.func @mse_backward_grad_type(%g: tensor<bf16>, %p: tensor<8x4xf32>) {
  // expected-error @below {{upstream gradient element type 'bf16' differs from 'f32'}}
  // expected-error @below {{failed to infer returned types}}
  %0 = train.mse_backward %g, %p, %p
      : (tensor<bf16>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return
}

// -----

// Tests that the MSE gradient compares tensors of one type.
func.func @mse_backward_target(%g: tensor<f32>, %p: tensor<8x4xf32>,
                               %t: tensor<8x4xf16>) {
  // expected-error @below {{target type 'tensor<8x4xf16>' differs from prediction type 'tensor<8x4xf32>'}}
  // expected-error @below {{failed to infer returned types}}
  %0 = train.mse_backward %g, %p, %t
      : (tensor<f32>, tensor<8x4xf32>, tensor<8x4xf16>) -> tensor<8x4xf32>
  return
}

//===----------------------------------------------------------------------===//
// Reductions and broadcasts
//===----------------------------------------------------------------------===//

// -----

// Tests that reduce_sum axes exist.
func.func @reduce_sum_axis_range(%x: tensor<8x16xf32>) {
  // expected-error @below {{axes must be distinct axes of rank 2}}
  // expected-error @below {{failed to infer returned types}}
  %0 = train.reduce_sum %x axes [2] : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

// Tests that reduce_sum axes are non-negative (normalised form).
func.func @reduce_sum_negative_axis(%x: tensor<8x16xf32>) {
  // expected-error @below {{axes must be distinct axes of rank 2}}
  // expected-error @below {{failed to infer returned types}}
  %0 = train.reduce_sum %x axes [-1] : (tensor<8x16xf32>) -> tensor<8xf32>
  return
}

// -----

// Tests that reduce_sum axes are distinct.
func.func @reduce_sum_repeated_axis(%x: tensor<8x16xf32>) {
  // expected-error @below {{axes must be distinct axes of rank 2}}
  // expected-error @below {{failed to infer returned types}}
  %0 = train.reduce_sum %x axes [0, 0] : (tensor<8x16xf32>) -> tensor<16xf32>
  return
}

// -----

// Tests that reduce_sum drops the reduced axes rather than keeping them.
func.func @reduce_sum_keepdims(%x: tensor<8x16xf32>) {
  // expected-error @below {{inferred type(s) 'tensor<16xf32>' are incompatible with return type(s) of operation 'tensor<1x16xf32>'}}
  // expected-error @below {{failed to infer returned types}}
  %0 = train.reduce_sum %x axes [0] : (tensor<8x16xf32>) -> tensor<1x16xf32>
  return
}

// -----

// Tests that sum_to keeps the element type.
func.func @sum_to_element_type(%x: tensor<8x16xf32>) {
  // expected-error @below {{'train.sum_to' op element type changes}}
  %0 = train.sum_to %x : tensor<8x16xf32> -> tensor<16xf16>
  return
}

// -----

// Tests that the sum_to result broadcasts to its input.
func.func @sum_to_shape(%x: tensor<8x16xf32>) {
  // expected-error @below {{'train.sum_to' op result type 'tensor<8xf32>' does not broadcast to the input type 'tensor<8x16xf32>'}}
  %0 = train.sum_to %x : tensor<8x16xf32> -> tensor<8xf32>
  return
}

// -----

// Tests that sum_to does not widen: that is a broadcast.
func.func @sum_to_wider(%x: tensor<16xf32>) {
  // expected-error @below {{'train.sum_to' op result type 'tensor<8x16xf32>' does not broadcast to the input type 'tensor<16xf32>'}}
  %0 = train.sum_to %x : tensor<16xf32> -> tensor<8x16xf32>
  return
}

// -----

// Tests that broadcast_to keeps the element type.
func.func @broadcast_to_element_type(%x: tensor<16xf32>) {
  // expected-error @below {{'train.broadcast_to' op element type changes}}
  %0 = train.broadcast_to %x : tensor<16xf32> -> tensor<8x16xbf16>
  return
}

// -----

// Tests that broadcast_to follows numpy rules (trailing axes align).
func.func @broadcast_to_shape(%x: tensor<8xf32>) {
  // expected-error @below {{'train.broadcast_to' op input type 'tensor<8xf32>' does not broadcast to 'tensor<8x16xf32>'}}
  %0 = train.broadcast_to %x : tensor<8xf32> -> tensor<8x16xf32>
  return
}

// -----

// Tests that broadcast_to does not shrink: that is a sum_to.
func.func @broadcast_to_smaller(%x: tensor<8x16xf32>) {
  // expected-error @below {{'train.broadcast_to' op input type 'tensor<8x16xf32>' does not broadcast to 'tensor<16xf32>'}}
  %0 = train.broadcast_to %x : tensor<8x16xf32> -> tensor<16xf32>
  return
}

//===----------------------------------------------------------------------===//
// Convolution gradients
//===----------------------------------------------------------------------===//

// -----

// Tests that conv_backward_data's gradient has the shape the forward conv of
// the result type would give.
func.func @conv_data_shape(%dy: tensor<8x16x4x4xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @below {{'train.conv_backward_data' op gradient of type 'tensor<8x16x4x4xf32>' does not match the forward result shape implied by the result type}}
  %0 = train.conv_backward_data %dy, %w strides [1, 1] pads [1, 1, 1, 1]
      dilations [1, 1] groups 1
      : (tensor<8x16x4x4xf32>, tensor<16x3x3x3xf32>) -> tensor<8x3x8x8xf32>
  return
}

// -----

// Tests that conv_backward_data's gradient has one channel per filter.
func.func @conv_data_channels(%dy: tensor<8x8x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @below {{'train.conv_backward_data' op gradient of type 'tensor<8x8x8x8xf32>' does not match the forward result shape implied by the result type}}
  %0 = train.conv_backward_data %dy, %w strides [1, 1] pads [1, 1, 1, 1]
      dilations [1, 1] groups 1
      : (tensor<8x8x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<8x3x8x8xf32>
  return
}

// -----

// Tests that conv_backward_data's result is a valid forward input for the
// weight: the forward shape function's error is reported.
func.func @conv_data_forward(%dy: tensor<8x16x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @below {{weight has 3 channels per group but the input has 6 channels in 1 groups}}
  // expected-error @below {{'train.conv_backward_data' op result type and attributes do not describe a valid forward op}}
  %0 = train.conv_backward_data %dy, %w strides [1, 1] pads [1, 1, 1, 1]
      dilations [1, 1] groups 1
      : (tensor<8x16x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<8x6x8x8xf32>
  return
}

// -----

// Tests that conv_backward_data's attributes are checked like conv's.
func.func @conv_data_strides(%dy: tensor<8x16x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @below {{expected 2 strides, got 1}}
  // expected-error @below {{'train.conv_backward_data' op result type and attributes do not describe a valid forward op}}
  %0 = train.conv_backward_data %dy, %w strides [1] pads [1, 1, 1, 1]
      dilations [1, 1] groups 1
      : (tensor<8x16x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<8x3x8x8xf32>
  return
}

// -----

// Tests that conv_backward_data's gradient has the result's element type.
func.func @conv_data_element_type(%dy: tensor<8x16x8x8xf16>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @below {{'train.conv_backward_data' op gradient element type 'f16' differs from result element type 'f32'}}
  %0 = train.conv_backward_data %dy, %w strides [1, 1] pads [1, 1, 1, 1]
      dilations [1, 1] groups 1
      : (tensor<8x16x8x8xf16>, tensor<16x3x3x3xf32>) -> tensor<8x3x8x8xf32>
  return
}

// -----

// Tests that conv_backward_filter's gradient has the shape the forward conv
// by the result type would give (here the stride is wrong).
func.func @conv_filter_shape(%x: tensor<8x3x8x8xf32>, %dy: tensor<8x16x8x8xf32>) {
  // expected-error @below {{'train.conv_backward_filter' op gradient of type 'tensor<8x16x8x8xf32>' does not match the forward result shape implied by the result type}}
  %0 = train.conv_backward_filter %x, %dy strides [2, 2] pads [1, 1, 1, 1]
      dilations [1, 1] groups 1
      : (tensor<8x3x8x8xf32>, tensor<8x16x8x8xf32>) -> tensor<16x3x3x3xf32>
  return
}

// -----

// Tests that conv_backward_filter's result is a valid weight for the input.
func.func @conv_filter_groups(%x: tensor<8x6x8x8xf32>, %dy: tensor<8x16x8x8xf32>) {
  // expected-error @below {{groups = 4 must divide the input channels (6) and the filters (16)}}
  // expected-error @below {{'train.conv_backward_filter' op result type and attributes do not describe a valid forward op}}
  %0 = train.conv_backward_filter %x, %dy strides [1, 1] pads [1, 1, 1, 1]
      dilations [1, 1] groups 4
      : (tensor<8x6x8x8xf32>, tensor<8x16x8x8xf32>) -> tensor<16x3x3x3xf32>
  return
}

// -----

// Tests that conv_backward_filter's input and result share an element type.
func.func @conv_filter_input_type(%x: tensor<8x3x8x8xf16>, %dy: tensor<8x16x8x8xf32>) {
  // expected-error @below {{operands must share one element type, got 'f16' and 'f32'}}
  // expected-error @below {{'train.conv_backward_filter' op result type and attributes do not describe a valid forward op}}
  %0 = train.conv_backward_filter %x, %dy strides [1, 1] pads [1, 1, 1, 1]
      dilations [1, 1] groups 1
      : (tensor<8x3x8x8xf16>, tensor<8x16x8x8xf32>) -> tensor<16x3x3x3xf32>
  return
}

// -----

// Tests that conv_backward_filter's gradient has the result's element type.
func.func @conv_filter_element_type(%x: tensor<8x3x8x8xf32>, %dy: tensor<8x16x8x8xbf16>) {
  // expected-error @below {{'train.conv_backward_filter' op gradient element type 'bf16' differs from result element type 'f32'}}
  %0 = train.conv_backward_filter %x, %dy strides [1, 1] pads [1, 1, 1, 1]
      dilations [1, 1] groups 1
      : (tensor<8x3x8x8xf32>, tensor<8x16x8x8xbf16>) -> tensor<16x3x3x3xf32>
  return
}

//===----------------------------------------------------------------------===//
// BatchNorm gradient
//===----------------------------------------------------------------------===//

// -----

// Tests that batch_norm_backward needs batch and channel axes.
func.func @bn_backward_rank(%x: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @below {{'train.batch_norm_backward' op input must have rank 2 or more (N, C, ...), got 'tensor<16xf32>'}}
  %0:3 = train.batch_norm_backward %x, %x, %c, %c, %c epsilon 1.0e-05
      : tensor<16xf32>, tensor<16xf32>
  return
}

// -----

// Tests that batch_norm_backward's statistics have one element per channel.
func.func @bn_backward_stats(%x: tensor<8x16x4x4xf32>, %c: tensor<8xf32>) {
  // expected-error @below {{'train.batch_norm_backward' op statistics must be vectors of 16 elements, got 'tensor<8xf32>'}}
  %0:3 = train.batch_norm_backward %x, %x, %c, %c, %c epsilon 1.0e-05
      : tensor<8x16x4x4xf32>, tensor<8xf32>
  return
}

// -----

// Tests that batch_norm_backward's statistics have the input's element type,
// or f32 for an f16/bf16 input (mixed precision), nothing narrower.
func.func @bn_backward_stats_type(%x: tensor<8x16x4x4xf32>, %c: tensor<16xf16>) {
  // expected-error @below {{'train.batch_norm_backward' op statistics and input differ in element type}}
  %0:3 = train.batch_norm_backward %x, %x, %c, %c, %c epsilon 1.0e-05
      : tensor<8x16x4x4xf32>, tensor<16xf16>
  return
}

// -----

// Tests that batch_norm_backward's epsilon is non-negative.
func.func @bn_backward_epsilon(%x: tensor<8x16x4x4xf32>, %c: tensor<16xf32>) {
  // expected-error @below {{'train.batch_norm_backward' op epsilon must be non-negative, got -1.000000e-05}}
  %0:3 = train.batch_norm_backward %x, %x, %c, %c, %c epsilon -1.0e-05
      : tensor<8x16x4x4xf32>, tensor<16xf32>
  return
}

// -----

// Tests that batch_norm_backward's gradient has the input's type.
func.func @bn_backward_grad_type(%dy: tensor<8x16x2x2xf32>,
                                 %x: tensor<8x16x4x4xf32>, %c: tensor<16xf32>) {
  // expected-error @below {{'train.batch_norm_backward' op failed to verify that all of {grad, input, input_grad} have same type}}
  %0:3 = "train.batch_norm_backward"(%dy, %x, %c, %c, %c) <{epsilon = 1.0e-05 : f32}>
      : (tensor<8x16x2x2xf32>, tensor<8x16x4x4xf32>, tensor<16xf32>,
         tensor<16xf32>, tensor<16xf32>)
      -> (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

//===----------------------------------------------------------------------===//
// Activation gradients
//===----------------------------------------------------------------------===//

// -----

// Tests that clip_backward's bounds are ordered, as clip's are.
func.func @clip_backward_bounds(%dy: tensor<8x16xf32>, %x: tensor<8x16xf32>) {
  // expected-error @below {{'train.clip_backward' op min 6.000000e+00 exceeds max 0.000000e+00}}
  %0 = train.clip_backward %dy, %x min 6.0 max 0.0 : tensor<8x16xf32>
  return
}

// -----

// Tests that an activation gradient has its forward value's type.
func.func @relu_backward_type(%dy: tensor<8x16xf32>, %x: tensor<8x16xf16>) {
  // expected-error @below {{'train.relu_backward' op requires the same type for all operands and results}}
  %0 = "train.relu_backward"(%dy, %x)
      : (tensor<8x16xf32>, tensor<8x16xf16>) -> tensor<8x16xf32>
  return
}

// -----

// Tests that softmax_backward's axis exists.
func.func @softmax_backward_axis(%dy: tensor<8x10xf32>, %y: tensor<8x10xf32>) {
  // expected-error @below {{'train.softmax_backward' op axis 2 is out of range for rank 2}}
  %0 = train.softmax_backward %dy, %y axis 2 : tensor<8x10xf32>
  return
}

// -----

// Tests that log_softmax_backward's axis is non-negative (normalised form).
func.func @log_softmax_backward_axis(%dy: tensor<8x10xf32>, %y: tensor<8x10xf32>) {
  // expected-error @below {{'train.log_softmax_backward' op axis -1 is out of range for rank 2}}
  %0 = train.log_softmax_backward %dy, %y axis -1 : tensor<8x10xf32>
  return
}

//===----------------------------------------------------------------------===//
// Pooling and slice gradients
//===----------------------------------------------------------------------===//

// -----

// Tests that max_pool_backward returns the forward input's type.
func.func @max_pool_backward_result(%dy: tensor<8x16x4x4xf32>,
                                    %x: tensor<8x16x8x8xf32>) {
  // expected-error @below {{'train.max_pool_backward' op result type must be the forward input's type 'tensor<8x16x8x8xf32>'}}
  %0 = train.max_pool_backward %dy, %x kernel [2, 2] strides [2, 2]
      pads [0, 0, 0, 0] dilations [1, 1]
      : (tensor<8x16x4x4xf32>, tensor<8x16x8x8xf32>) -> tensor<8x16x9x9xf32>
  return
}

// -----

// Tests that max_pool_backward's gradient has the pooled shape.
func.func @max_pool_backward_shape(%dy: tensor<8x16x8x8xf32>,
                                   %x: tensor<8x16x8x8xf32>) {
  // expected-error @below {{'train.max_pool_backward' op gradient of type 'tensor<8x16x8x8xf32>' does not match the forward result shape implied by the result type}}
  %0 = train.max_pool_backward %dy, %x kernel [2, 2] strides [2, 2]
      pads [0, 0, 0, 0] dilations [1, 1]
      : (tensor<8x16x8x8xf32>, tensor<8x16x8x8xf32>) -> tensor<8x16x8x8xf32>
  return
}

// -----

// Tests that max_pool_backward honours ceil_mode: a 7x7 input pools to 4x4
// with it and to 3x3 without.
func.func @max_pool_backward_ceil_mode(%dy: tensor<8x16x4x4xf32>,
                                       %x: tensor<8x16x7x7xf32>) {
  %0 = train.max_pool_backward %dy, %x kernel [2, 2] strides [2, 2]
      pads [0, 0, 0, 0] dilations [1, 1] {ceil_mode = true}
      : (tensor<8x16x4x4xf32>, tensor<8x16x7x7xf32>) -> tensor<8x16x7x7xf32>
  // expected-error @below {{'train.max_pool_backward' op gradient of type 'tensor<8x16x4x4xf32>' does not match the forward result shape implied by the result type}}
  %1 = train.max_pool_backward %dy, %x kernel [2, 2] strides [2, 2]
      pads [0, 0, 0, 0] dilations [1, 1]
      : (tensor<8x16x4x4xf32>, tensor<8x16x7x7xf32>) -> tensor<8x16x7x7xf32>
  return
}

// -----

// Tests that max_pool_backward's pads are checked like max_pool's.
func.func @max_pool_backward_pads(%dy: tensor<8x16x5x5xf32>,
                                  %x: tensor<8x16x8x8xf32>) {
  // expected-error @below {{begin pad 2 of spatial axis 0 is not smaller than the window (2)}}
  // expected-error @below {{'train.max_pool_backward' op result type and attributes do not describe a valid forward op}}
  %0 = train.max_pool_backward %dy, %x kernel [2, 2] strides [2, 2]
      pads [2, 0, 0, 0] dilations [1, 1]
      : (tensor<8x16x5x5xf32>, tensor<8x16x8x8xf32>) -> tensor<8x16x8x8xf32>
  return
}

// -----

// Tests that max_pool_backward's gradient has the input's element type.
func.func @max_pool_backward_element_type(%dy: tensor<8x16x4x4xf16>,
                                          %x: tensor<8x16x8x8xf32>) {
  // expected-error @below {{'train.max_pool_backward' op gradient element type 'f16' differs from result element type 'f32'}}
  %0 = train.max_pool_backward %dy, %x kernel [2, 2] strides [2, 2]
      pads [0, 0, 0, 0] dilations [1, 1]
      : (tensor<8x16x4x4xf16>, tensor<8x16x8x8xf32>) -> tensor<8x16x8x8xf32>
  return
}

// -----

// Tests that avg_pool_backward's gradient has the pooled shape.
func.func @avg_pool_backward_shape(%dy: tensor<8x16x4x4xf32>) {
  // expected-error @below {{'train.avg_pool_backward' op gradient of type 'tensor<8x16x4x4xf32>' does not match the forward result shape implied by the result type}}
  %0 = train.avg_pool_backward %dy kernel [3, 3] strides [1, 1]
      pads [1, 1, 1, 1] : (tensor<8x16x4x4xf32>) -> tensor<8x16x8x8xf32>
  return
}

// -----

// Tests that avg_pool_backward honours ceil_mode.
func.func @avg_pool_backward_ceil_mode(%dy: tensor<8x16x4x4xf32>) {
  %0 = train.avg_pool_backward %dy kernel [2, 2] strides [2, 2]
      pads [0, 0, 0, 0] {ceil_mode = true}
      : (tensor<8x16x4x4xf32>) -> tensor<8x16x7x7xf32>
  // expected-error @below {{'train.avg_pool_backward' op gradient of type 'tensor<8x16x4x4xf32>' does not match the forward result shape implied by the result type}}
  %1 = train.avg_pool_backward %dy kernel [2, 2] strides [2, 2]
      pads [0, 0, 0, 0] : (tensor<8x16x4x4xf32>) -> tensor<8x16x7x7xf32>
  return
}

// -----

// Tests that avg_pool_backward's window attributes are checked.
func.func @avg_pool_backward_kernel(%dy: tensor<8x16x4x4xf32>) {
  // expected-error @below {{expected 2 kernel sizes, got 1}}
  // expected-error @below {{'train.avg_pool_backward' op result type and attributes do not describe a valid forward op}}
  %0 = train.avg_pool_backward %dy kernel [2] strides [2, 2]
      pads [0, 0, 0, 0] : (tensor<8x16x4x4xf32>) -> tensor<8x16x8x8xf32>
  return
}

// -----

// Tests that avg_pool_backward's gradient has the result's element type.
func.func @avg_pool_backward_element_type(%dy: tensor<8x16x4x4xf16>) {
  // expected-error @below {{'train.avg_pool_backward' op gradient element type 'f16' differs from result element type 'f32'}}
  %0 = train.avg_pool_backward %dy kernel [2, 2] strides [2, 2]
      pads [0, 0, 0, 0] : (tensor<8x16x4x4xf16>) -> tensor<8x16x8x8xf32>
  return
}

// -----

// Tests that slice_backward's gradient has the slice's shape.
func.func @slice_backward_shape(%dy: tensor<8x8xf32>) {
  // expected-error @below {{'train.slice_backward' op gradient of type 'tensor<8x8xf32>' does not match the forward result shape implied by the result type}}
  %0 = train.slice_backward %dy starts [0, 2] ends [8, 10] steps [1, 2]
      : (tensor<8x8xf32>) -> tensor<8x16xf32>
  return
}

// -----

// Tests that slice_backward's slice fits the result type.
func.func @slice_backward_bounds(%dy: tensor<8x4xf32>) {
  // expected-error @below {{end 20 of axis 1 is outside [-1, 16]}}
  // expected-error @below {{'train.slice_backward' op result type and attributes do not describe a valid forward op}}
  %0 = train.slice_backward %dy starts [0, 12] ends [8, 20] steps [1, 2]
      : (tensor<8x4xf32>) -> tensor<8x16xf32>
  return
}

// -----

// Tests that slice_backward's gradient has the result's element type.
func.func @slice_backward_element_type(%dy: tensor<8x4xf64>) {
  // expected-error @below {{'train.slice_backward' op gradient element type 'f64' differs from result element type 'f32'}}
  %0 = train.slice_backward %dy starts [0, 2] ends [8, 10] steps [1, 2]
      : (tensor<8x4xf64>) -> tensor<8x16xf32>
  return
}

//===----------------------------------------------------------------------===//
// Explicit BatchNorm
//===----------------------------------------------------------------------===//

// -----

// Tests that bn_stats needs batch and channel axes.
func.func @bn_stats_rank(%x: tensor<16xf32>) {
  // expected-error @below {{input must have rank 2 or more (N, C, ...), got 'tensor<16xf32>'}}
  // expected-error @below {{failed to infer returned types}}
  %mean, %var = train.bn_stats %x : (tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// Tests that bn_stats gives statistics of the input's element type.
func.func @bn_stats_element_type(%x: tensor<8x16x4x4xf32>) {
  // expected-error @below {{inferred type(s) 'tensor<16xf32>', 'tensor<16xf32>' are incompatible with return type(s) of operation 'tensor<16xf16>', 'tensor<16xf16>'}}
  // expected-error @below {{failed to infer returned types}}
  %mean, %var = train.bn_stats %x
      : (tensor<8x16x4x4xf32>) -> (tensor<16xf16>, tensor<16xf16>)
  return
}

// -----

// Tests that bn_apply needs batch and channel axes.
func.func @bn_apply_rank(%x: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @below {{'train.bn_apply' op input must have rank 2 or more (N, C, ...), got 'tensor<16xf32>'}}
  %y = train.bn_apply %x, %c, %c, %c, %c epsilon 1.0e-05
      : tensor<16xf32>, tensor<16xf32>
  return
}

// -----

// Tests that bn_apply's statistics have one element per channel.
func.func @bn_apply_channels(%x: tensor<8x16x4x4xf32>, %c: tensor<4xf32>) {
  // expected-error @below {{'train.bn_apply' op statistics, scale and bias must be vectors of 16 'f32', got 'tensor<4xf32>'}}
  %y = train.bn_apply %x, %c, %c, %c, %c epsilon 1.0e-05
      : tensor<8x16x4x4xf32>, tensor<4xf32>
  return
}

// -----

// Tests that bn_apply's statistics have the input's element type, or f32
// for an f16/bf16 input (mixed precision), not f64.
func.func @bn_apply_element_type(%x: tensor<8x16x4x4xf16>, %c: tensor<16xf64>) {
  // expected-error @below {{'train.bn_apply' op statistics, scale and bias must be vectors of 16 'f16', got 'tensor<16xf64>'}}
  %y = train.bn_apply %x, %c, %c, %c, %c epsilon 1.0e-05
      : tensor<8x16x4x4xf16>, tensor<16xf64>
  return
}

// -----

// Tests that bn_apply's epsilon is non-negative.
func.func @bn_apply_epsilon(%x: tensor<8x16x4x4xf32>, %c: tensor<16xf32>) {
  // expected-error @below {{'train.bn_apply' op epsilon must be non-negative, got -1.000000e+00}}
  %y = train.bn_apply %x, %c, %c, %c, %c epsilon -1.0
      : tensor<8x16x4x4xf32>, tensor<16xf32>
  return
}

// -----

// Tests that bn_apply's statistics, scale and bias share one type.
func.func @bn_apply_stats_types(%x: tensor<8x16x4x4xf32>, %c: tensor<16xf32>,
                                %d: tensor<16xf64>) {
  // expected-error @below {{'train.bn_apply' op failed to verify that all of {mean, variance, scale, bias} have same type}}
  %y = "train.bn_apply"(%x, %c, %c, %d, %c) <{epsilon = 1.0e-05 : f32}>
      : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf64>,
         tensor<16xf32>) -> tensor<8x16x4x4xf32>
  return
}

// -----

// Tests that bn_running_update takes statistics vectors.
module {
  train.param @rm running_mean : tensor<16xf32>
  train.param @rv running_var : tensor<16xf32>
  func.func @bn_update_rank(%s: tensor<4x16xf32>) {
    // expected-error @below {{'train.bn_running_update' op mean and variance must be vectors of one type}}
    train.bn_running_update @rm, @rv, %s, %s momentum 1.0e-01 count 128
        : tensor<4x16xf32>
    return
  }
}

// -----

// Tests that bn_running_update's momentum is a weight in [0, 1].
module {
  train.param @rm running_mean : tensor<16xf32>
  train.param @rv running_var : tensor<16xf32>
  func.func @bn_update_momentum(%s: tensor<16xf32>) {
    // expected-error @below {{'train.bn_running_update' op momentum must be in [0, 1], got 1.500000e+00}}
    train.bn_running_update @rm, @rv, %s, %s momentum 1.5 count 128
        : tensor<16xf32>
    return
  }
}

// -----

// Tests that bn_running_update needs two values per channel for the unbiased
// variance n / (n - 1), as PyTorch does in training.
module {
  train.param @rm running_mean : tensor<16xf32>
  train.param @rv running_var : tensor<16xf32>
  func.func @bn_update_count(%s: tensor<16xf32>) {
    // expected-error @below {{'train.bn_running_update' op count must be at least 2 for an unbiased variance, got 1}}
    train.bn_running_update @rm, @rv, %s, %s momentum 1.0e-01 count 1
        : tensor<16xf32>
    return
  }
}

// -----

// Tests that bn_running_update names existing parameters.
module {
  train.param @rv running_var : tensor<16xf32>
  func.func @bn_update_missing(%s: tensor<16xf32>) {
    // expected-error @below {{'train.bn_running_update' op running mean 'rm' does not name a train.param}}
    train.bn_running_update @rm, @rv, %s, %s momentum 1.0e-01 count 128
        : tensor<16xf32>
    return
  }
}

// -----

// Tests that bn_running_update's statistics have the running stats' type.
module {
  train.param @rm running_mean : tensor<16xf32>
  train.param @rv running_var : tensor<16xf32>
  func.func @bn_update_type(%s: tensor<16xf16>) {
    // expected-error @below {{'train.bn_running_update' op running mean 'rm' has type 'tensor<16xf32>', expected 'tensor<16xf16>'}}
    train.bn_running_update @rm, @rv, %s, %s momentum 1.0e-01 count 128
        : tensor<16xf16>
    return
  }
}

// -----

// Tests that bn_running_update writes running statistics, in their roles.
module {
  train.param @rm running_mean : tensor<16xf32>
  train.param @rv running_var : tensor<16xf32>
  func.func @bn_update_swapped(%s: tensor<16xf32>) {
    // expected-error @below {{'train.bn_running_update' op running mean 'rv' is a running_var parameter}}
    train.bn_running_update @rv, @rm, %s, %s momentum 1.0e-01 count 128
        : tensor<16xf32>
    return
  }
}

// -----

// Tests that bn_running_update's running variance is a running_var.
module {
  train.param @rm running_mean : tensor<16xf32>
  train.param @w trainable : tensor<16xf32>
  func.func @bn_update_var_kind(%s: tensor<16xf32>) {
    // expected-error @below {{'train.bn_running_update' op running variance 'w' is a trainable parameter}}
    train.bn_running_update @rm, @w, %s, %s momentum 1.0e-01 count 128
        : tensor<16xf32>
    return
  }
}

//===----------------------------------------------------------------------===//
// Persistent buffers
//===----------------------------------------------------------------------===//

// -----

// Tests that accumulate names an existing parameter.
module {
  func.func @accumulate_missing(%g: tensor<16xf32>, %s: f32) {
    // expected-error @below {{'train.accumulate' op buffer 'w.grad' does not name a train.param}}
    train.accumulate @"w.grad", %g scale %s : tensor<16xf32>
    return
  }
}

// -----

// Tests that a symbol of another kind (a function) is not a buffer.
module {
  func.func private @f()
  func.func @accumulate_function(%g: tensor<16xf32>, %s: f32) {
    // expected-error @below {{'train.accumulate' op buffer 'f' does not name a train.param}}
    train.accumulate @f, %g scale %s : tensor<16xf32>
    return
  }
}

// -----

// Tests that accumulate adds a value of the buffer's type.
module {
  train.param @"w.grad" gradient : tensor<16xf32>
  func.func @accumulate_type(%g: tensor<8xf32>, %s: f32) {
    // expected-error @below {{'train.accumulate' op buffer 'w.grad' has type 'tensor<16xf32>', expected 'tensor<8xf32>'}}
    train.accumulate @"w.grad", %g scale %s : tensor<8xf32>
    return
  }
}

// -----

// Tests that accumulate only adds into gradients and BN accumulators, never
// into a weight.
module {
  train.param @w trainable : tensor<16xf32>
  func.func @accumulate_kind(%g: tensor<16xf32>, %s: f32) {
    // expected-error @below {{'train.accumulate' op buffer 'w' is a trainable parameter}}
    train.accumulate @w, %g scale %s : tensor<16xf32>
    return
  }
}

// -----

// Tests that assign writes a value of the buffer's type.
module {
  train.param @acc bn_accumulator : tensor<16xf32>
  func.func @assign_type(%v: tensor<16xf64>) {
    // expected-error @below {{'train.assign' op buffer 'acc' has type 'tensor<16xf32>', expected 'tensor<16xf64>'}}
    train.assign @acc, %v : tensor<16xf64>
    return
  }
}

// -----

// Tests that zero names an existing parameter.
module {
  func.func @zero_missing() {
    // expected-error @below {{'train.zero' op buffer 'w.grad' does not name a train.param}}
    train.zero @"w.grad"
    return
  }
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

// -----

// Tests that SGD momentum is non-negative, as torch.optim.SGD requires.
func.func @sgd_negative_momentum(%lr: f32, %step: i64) {
  // expected-error @below {{'train.sgd_update' op momentum must be non-negative, got -9.000000e-01}}
  train.sgd_update @w, @"w.grad", @"w.momentum" lr %lr step %step
      {momentum = -0.9 : f32}
  return
}

// -----

// Tests that SGD weight decay is non-negative.
func.func @sgd_negative_decay(%lr: f32, %step: i64) {
  // expected-error @below {{'train.sgd_update' op weight_decay must be non-negative, got -1.000000e-02}}
  train.sgd_update @w, @"w.grad" lr %lr step %step {weight_decay = -0.01 : f32}
  return
}

// -----

// Tests that SGD with momentum names a momentum buffer.
func.func @sgd_missing_buffer(%lr: f32, %step: i64) {
  // expected-error @below {{'train.sgd_update' op a momentum buffer is needed exactly when momentum is non-zero}}
  train.sgd_update @w, @"w.grad" lr %lr step %step {momentum = 0.9 : f32}
  return
}

// -----

// Tests that SGD without momentum names no momentum buffer.
func.func @sgd_extra_buffer(%lr: f32, %step: i64) {
  // expected-error @below {{'train.sgd_update' op a momentum buffer is needed exactly when momentum is non-zero}}
  train.sgd_update @w, @"w.grad", @"w.momentum" lr %lr step %step
  return
}

// -----

// Tests that nesterov needs momentum, as torch.optim.SGD requires.
func.func @sgd_nesterov_momentum(%lr: f32, %step: i64) {
  // expected-error @below {{'train.sgd_update' op nesterov needs momentum and zero dampening}}
  train.sgd_update @w, @"w.grad" lr %lr step %step {nesterov = true}
  return
}

// -----

// Tests that nesterov needs zero dampening, as torch.optim.SGD requires.
func.func @sgd_nesterov_dampening(%lr: f32, %step: i64) {
  // expected-error @below {{'train.sgd_update' op nesterov needs momentum and zero dampening}}
  train.sgd_update @w, @"w.grad", @"w.momentum" lr %lr step %step
      {momentum = 0.9 : f32, dampening = 0.1 : f32, nesterov = true}
  return
}

// -----

// Tests that SGD names an existing parameter.
module {
  train.param @"w.grad" gradient : tensor<16xf32>
  func.func @sgd_missing_param(%lr: f32, %step: i64) {
    // expected-error @below {{'train.sgd_update' op parameter 'w' does not name a train.param}}
    train.sgd_update @w, @"w.grad" lr %lr step %step
    return
  }
}

// -----

// Tests that SGD updates trainable parameters only.
module {
  train.param @w frozen : tensor<16xf32>
  train.param @"w.grad" gradient : tensor<16xf32>
  func.func @sgd_frozen(%lr: f32, %step: i64) {
    // expected-error @below {{'train.sgd_update' op parameter 'w' is a frozen parameter}}
    train.sgd_update @w, @"w.grad" lr %lr step %step
    return
  }
}

// -----

// Tests that SGD's gradient has the parameter's type.
module {
  train.param @w trainable : tensor<16xf32>
  train.param @"w.grad" gradient : tensor<8xf32>
  func.func @sgd_grad_type(%lr: f32, %step: i64) {
    // expected-error @below {{'train.sgd_update' op gradient 'w.grad' has type 'tensor<8xf32>', expected 'tensor<16xf32>'}}
    train.sgd_update @w, @"w.grad" lr %lr step %step
    return
  }
}

// -----

// Tests that SGD's gradient is a gradient buffer.
module {
  train.param @w trainable : tensor<16xf32>
  train.param @v trainable : tensor<16xf32>
  func.func @sgd_grad_kind(%lr: f32, %step: i64) {
    // expected-error @below {{'train.sgd_update' op gradient 'v' is a trainable parameter}}
    train.sgd_update @w, @v lr %lr step %step
    return
  }
}

// -----

// Tests that SGD's momentum buffer is optimizer state.
module {
  train.param @w trainable : tensor<16xf32>
  train.param @"w.grad" gradient : tensor<16xf32>
  train.param @"v.grad" gradient : tensor<16xf32>
  func.func @sgd_buffer_kind(%lr: f32, %step: i64) {
    // expected-error @below {{'train.sgd_update' op momentum buffer 'v.grad' is a gradient parameter}}
    train.sgd_update @w, @"w.grad", @"v.grad" lr %lr step %step
        {momentum = 0.9 : f32}
    return
  }
}

// -----

// Tests that SGD's momentum buffer has the parameter's type.
module {
  train.param @w trainable : tensor<16xf32>
  train.param @"w.grad" gradient : tensor<16xf32>
  train.param @"w.momentum" optimizer_state : tensor<16xf16>
  func.func @sgd_buffer_type(%lr: f32, %step: i64) {
    // expected-error @below {{'train.sgd_update' op momentum buffer 'w.momentum' has type 'tensor<16xf16>', expected 'tensor<16xf32>'}}
    train.sgd_update @w, @"w.grad", @"w.momentum" lr %lr step %step
        {momentum = 0.9 : f32}
    return
  }
}

// -----

// Tests that Adam's beta1 is in [0, 1).
func.func @adam_beta1(%lr: f32, %step: i64) {
  // expected-error @below {{'train.adam_update' op beta1 must be in [0, 1), got -1.000000e-01}}
  train.adam_update @w, @"w.grad", @m, @v lr %lr step %step
      {beta1 = -0.1 : f32}
  return
}

// -----

// Tests that Adam's beta2 is below 1: its bias correction divides by
// 1 - beta2^t.
func.func @adam_beta2(%lr: f32, %step: i64) {
  // expected-error @below {{'train.adam_update' op beta2 must be in [0, 1), got 1.000000e+00}}
  train.adam_update @w, @"w.grad", @m, @v lr %lr step %step
      {beta2 = 1.0 : f32}
  return
}

// -----

// Tests that Adam's epsilon is positive.
func.func @adam_epsilon(%lr: f32, %step: i64) {
  // expected-error @below {{'train.adam_update' op epsilon must be positive}}
  train.adam_update @w, @"w.grad", @m, @v lr %lr step %step
      {epsilon = 0.0 : f32}
  return
}

// -----

// Tests that Adam's weight decay is non-negative.
func.func @adam_decay(%lr: f32, %step: i64) {
  // expected-error @below {{'train.adam_update' op weight_decay must be non-negative, got -1.000000e-02}}
  train.adam_update @w, @"w.grad", @m, @v lr %lr step %step
      {decoupled = true, weight_decay = -0.01 : f32}
  return
}

// -----

// Tests that Adam's two moments are distinct buffers.
func.func @adam_aliased_moments(%lr: f32, %step: i64) {
  // expected-error @below {{'train.adam_update' op first and second moments must be distinct buffers}}
  train.adam_update @w, @"w.grad", @m, @m lr %lr step %step
  return
}

// -----

// Tests that Adam's gradient is a gradient buffer.
module {
  train.param @w trainable : tensor<16xf32>
  train.param @m optimizer_state : tensor<16xf32>
  train.param @v optimizer_state : tensor<16xf32>
  func.func @adam_grad_kind(%lr: f32, %step: i64) {
    // expected-error @below {{'train.adam_update' op gradient 'm' is a optimizer_state parameter}}
    train.adam_update @w, @m, @m, @v lr %lr step %step
    return
  }
}

// -----

// Tests that Adam's first moment is optimizer state.
module {
  train.param @w trainable : tensor<16xf32>
  train.param @"w.grad" gradient : tensor<16xf32>
  train.param @m loss_scaler : tensor<16xf32>
  train.param @v optimizer_state : tensor<16xf32>
  func.func @adam_first_moment_kind(%lr: f32, %step: i64) {
    // expected-error @below {{'train.adam_update' op first moment 'm' is a loss_scaler parameter}}
    train.adam_update @w, @"w.grad", @m, @v lr %lr step %step
    return
  }
}

// -----

// Tests that Adam's second moment has the parameter's type.
module {
  train.param @w trainable : tensor<16xf32>
  train.param @"w.grad" gradient : tensor<16xf32>
  train.param @m optimizer_state : tensor<16xf32>
  train.param @v optimizer_state : tensor<4x4xf32>
  func.func @adam_second_moment_type(%lr: f32, %step: i64) {
    // expected-error @below {{'train.adam_update' op second moment 'v' has type 'tensor<4x4xf32>', expected 'tensor<16xf32>'}}
    train.adam_update @w, @"w.grad", @m, @v lr %lr step %step
    return
  }
}

// -----

// Tests that Adam's second moment exists.
module {
  train.param @w trainable : tensor<16xf32>
  train.param @"w.grad" gradient : tensor<16xf32>
  train.param @m optimizer_state : tensor<16xf32>
  func.func @adam_missing_moment(%lr: f32, %step: i64) {
    // expected-error @below {{'train.adam_update' op second moment 'v' does not name a train.param}}
    train.adam_update @w, @"w.grad", @m, @v lr %lr step %step
    return
  }
}

//===----------------------------------------------------------------------===//
// Randomness
//===----------------------------------------------------------------------===//

// -----

// Tests that a dropout mask's ratio is in [0, 1): ratio 1 would scale by
// 1 / 0.
func.func @dropout_mask_ratio(%seed: i64) {
  // expected-error @below {{'train.dropout_mask' op ratio must be in [0, 1), got 1.000000e+00}}
  %m = train.dropout_mask %seed ratio 1.0 stream 0 : tensor<8x16xf32>
  return
}

// -----

// Tests that a negative dropout ratio is rejected.
func.func @dropout_mask_negative_ratio(%seed: i64) {
  // expected-error @below {{'train.dropout_mask' op ratio must be in [0, 1), got -5.000000e-01}}
  %m = train.dropout_mask %seed ratio -0.5 stream 0 : tensor<8x16xf32>
  return
}

// -----

// Tests that a weight copy must name the parameter it copies.
// expected-error @below {{'train.param' op a source is needed exactly for weight_copy and step_backup parameters}}
train.param @w.bf16 weight_copy : tensor<3x4xbf16>

// -----

// Tests that a weight copy has its source's shape.
module {
  train.param @w trainable : tensor<3x4xf32>
  // expected-error @below {{'train.param' op has type 'tensor<4x3xbf16>', but its source 'w' has type 'tensor<3x4xf32>'}}
  train.param @w.bf16 weight_copy : tensor<4x3xbf16> {source = @w}
}

// -----

// Tests that an update's weight copy must be a weight_copy parameter.
module {
  train.param @w trainable : tensor<3x4xf32>
  train.param @w.grad gradient : tensor<3x4xf32>
  func.func @f(%lr: f32, %step: i64) {
    // expected-error @below {{'train.sgd_update' op weight copy 'w.grad' is a gradient parameter}}
    train.sgd_update @w, @w.grad weight_copy @w.grad lr %lr step %step
    return
  }
}

// -----

// Tests that the loss scale is an f32 scalar of the loss scaler.
module {
  train.param @scale loss_scaler : tensor<2xf32>
  train.param @found loss_scaler : tensor<f32>
  func.func @f() {
    // expected-error @below {{'train.unscale_check_finite' op scale 'scale' has type 'tensor<2xf32>', expected 'tensor<f32>'}}
    train.unscale_check_finite @scale, @found
    return
  }
}

// -----

// Tests GradScaler's constraints on the scale update: backoff in (0, 1].
module {
  train.param @scale loss_scaler : tensor<f32>
  train.param @tracker loss_scaler : tensor<i64>
  train.param @found loss_scaler : tensor<f32>
  func.func @f() {
    // expected-error @below {{'train.update_loss_scale' op backoff must be in (0, 1], got 2.000000e+00}}
    train.update_loss_scale @scale, @tracker, @found growth 2.0 backoff 2.0 interval 2000
    return
  }
}

// -----

// Tests that the scale grows by a finite factor of at least 1.
module {
  train.param @scale loss_scaler : tensor<f32>
  train.param @tracker loss_scaler : tensor<i64>
  train.param @found loss_scaler : tensor<f32>
  func.func @f() {
    // expected-error @below {{'train.update_loss_scale' op growth must be a finite number >= 1, got 5.000000e-01}}
    train.update_loss_scale @scale, @tracker, @found growth 0.5 backoff 0.5 interval 2000
    return
  }
}

// -----

// Tests that the growth interval counts at least one step.
module {
  train.param @scale loss_scaler : tensor<f32>
  train.param @tracker loss_scaler : tensor<i64>
  train.param @found loss_scaler : tensor<f32>
  func.func @f() {
    // expected-error @below {{'train.update_loss_scale' op interval must be positive, got 0}}
    train.update_loss_scale @scale, @tracker, @found growth 2.0 backoff 0.5 interval 0
    return
  }
}

// -----

// Tests that the growth tracker is an i64 scalar.
module {
  train.param @scale loss_scaler : tensor<f32>
  train.param @tracker loss_scaler : tensor<f32>
  train.param @found loss_scaler : tensor<f32>
  func.func @f() {
    // expected-error @below {{'train.update_loss_scale' op growth tracker 'tracker' has type 'tensor<f32>', expected 'tensor<i64>'}}
    train.update_loss_scale @scale, @tracker, @found growth 2.0 backoff 0.5 interval 2000
    return
  }
}

// -----

// Tests that a weight copy's source must exist.
module {
  // expected-error @below {{'train.param' op source 'w' does not name a train.param}}
  train.param @w.bf16 weight_copy : tensor<3x4xbf16> {source = @w}
}

// -----

// Tests that reduce_max_backward's gradient has the output's type.
func.func @reduce_max_backward_grad(%dy: tensor<2x3x1xf32>, %x: tensor<2x3x4xf32>, %y: tensor<2x1x4xf32>) {
  // expected-error @below {{'train.reduce_max_backward' op grad type 'tensor<2x3x1xf32>' differs from the output type 'tensor<2x1x4xf32>'}}
  %0 = train.reduce_max_backward %dy, %x, %y : (tensor<2x3x1xf32>, tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

// Tests that gather_backward's gradient is the gather result of its type.
func.func @gather_backward_shape(%dy: tensor<3x5xf32>, %i: tensor<3xi64>) {
  // expected-error @below {{'train.gather_backward' op grad type 'tensor<3x5xf32>' is not the gather result of 'tensor<10x4xf32>'}}
  %0 = train.gather_backward %dy, %i axis 0 : (tensor<3x5xf32>, tensor<3xi64>) -> tensor<10x4xf32>
  return
}
