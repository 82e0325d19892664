// RUN: traincc-opt %s -split-input-file -verify-diagnostics

// Diagnostics of shape functions come with a second error from the inference
// verifier, "failed to infer returned types"; each chunk expects both.

//===----------------------------------------------------------------------===//
// Types, parameters and constants
//===----------------------------------------------------------------------===//

// Tests that compute ops reject tensors with dynamic dimensions.
func.func @dynamic_shape(%x: tensor<?x16xf32>) {
  // expected-error @below {{'train.relu' op operand #0 must be statically shaped tensor}}
  %y = train.relu %x : tensor<?x16xf32>
  return
}

// -----

// Tests that a result type other than the inferred one is rejected.
func.func @inferred_type_mismatch(%x: tensor<8x16xf32>, %b: tensor<16xf32>) {
  // expected-error @below {{'train.add' op inferred type(s) 'tensor<8x16xf32>' are incompatible with return type(s) of operation 'tensor<8x15xf32>'}}
  // expected-error @below {{'train.add' op failed to infer returned types}}
  %z = train.add %x, %b
      : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x15xf32>
  return
}

// -----

// Tests that the ceil-mode output size drops a last window that would start
// in the end padding, as PyTorch does.
func.func @ceil_mode_drops_window(%x: tensor<1x1x5xf32>) {
  // expected-error @below {{inferred type(s) 'tensor<1x1x3xf32>' are incompatible with return type(s) of operation 'tensor<1x1x4xf32>'}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.max_pool %x kernel [2] strides [2] pads [1, 1] dilations [1]
      {ceil_mode = true} : (tensor<1x1x5xf32>) -> tensor<1x1x4xf32>
  return
}

// -----

// Tests that an unknown parameter kind is named in the error.
module {
  // expected-error @below {{expected one of trainable, frozen, running_mean, running_var, gradient, optimizer_state, loss_scaler, bn_accumulator, weight_copy, step_backup; got 'learnable'}}
  train.param @w learnable : tensor<2xf32>
}

// -----

// Tests that a parameter's initial value must be an elements attribute.
module {
  // expected-error @below {{expected an elements attribute, got [1, 2]}}
  train.param @w trainable : tensor<2xf32> = [1, 2]
}

// -----

// Tests that a parameter's initial value has the declared type (only the
// generic form can spell a different one).
module {
  // expected-error @below {{'train.param' op initial value of type 'tensor<3xf32>' does not match declared type 'tensor<2xf32>'}}
  "train.param"() <{sym_name = "w", kind = #train<param_kind trainable>,
                    type = tensor<2xf32>,
                    initial_value = dense<0.0> : tensor<3xf32>}> : () -> ()
}

// -----

// Tests that BatchNorm running statistics are vectors.
module {
  // expected-error @below {{'train.param' op running statistics must be a vector, got 'tensor<2x2xf32>'}}
  train.param @mean running_mean : tensor<2x2xf32>
}

// -----

// Tests that parameters live at module level.
func.func @param_in_function() {
  // expected-error @below {{'train.param' op expects parent op 'builtin.module'}}
  train.param @w trainable : tensor<2xf32>
  return
}

// -----

// Tests that read_param names a train.param.
module {
  func.func @not_a_param() -> tensor<2xf32> {
    // expected-error @below {{'train.read_param' op 'not_a_param' does not name a train.param}}
    %w = train.read_param @not_a_param : tensor<2xf32>
    return %w : tensor<2xf32>
  }
}

// -----

// Tests that read_param returns the parameter's type.
module {
  train.param @w trainable : tensor<2xf32>
  func.func @wrong_type() -> tensor<3xf32> {
    // expected-error @below {{'train.read_param' op result type 'tensor<3xf32>' does not match parameter type 'tensor<2xf32>'}}
    %w = train.read_param @w : tensor<3xf32>
    return %w : tensor<3xf32>
  }
}

// -----

// Tests that a constant's value has the result type.
func.func @constant_type() {
  // expected-error @below {{'train.constant' op failed to verify that all of {value, result} have same type}}
  %c = "train.constant"() <{value = dense<1.0> : tensor<2xf32>}>
      : () -> tensor<3xf32>
  return
}

//===----------------------------------------------------------------------===//
// Convolution, normalisation and dense layers
//===----------------------------------------------------------------------===//

// -----

// Tests that conv needs batch, channel and spatial axes.
func.func @conv_rank(%x: tensor<8x3xf32>, %w: tensor<16x3xf32>) {
  // expected-error @below {{input must have rank 3 or more (N, C, spatial...), got 'tensor<8x3xf32>'}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.conv %x, %w strides [] pads [] dilations [] groups 1
      : (tensor<8x3xf32>, tensor<16x3xf32>) -> tensor<8x16xf32>
  return
}

// -----

// Tests that the conv weight has the input's rank.
func.func @conv_weight_rank(%x: tensor<8x3x8x8xf32>, %w: tensor<16x3x3xf32>) {
  // expected-error @below {{weight rank 3 differs from input rank 4}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1]
      groups 1 : (tensor<8x3x8x8xf32>, tensor<16x3x3xf32>) -> tensor<8x16x6x6xf32>
  return
}

// -----

// Tests that conv operands share one element type.
func.func @conv_element_type(%x: tensor<8x3x8x8xf32>, %w: tensor<16x3x3x3xf16>) {
  // expected-error @below {{operands must share one element type, got 'f32' and 'f16'}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1]
      groups 1
      : (tensor<8x3x8x8xf32>, tensor<16x3x3x3xf16>) -> tensor<8x16x6x6xf32>
  return
}

// -----

// Tests that conv has one stride per spatial axis.
func.func @conv_strides(%x: tensor<8x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @below {{expected 2 strides, got 1}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.conv %x, %w strides [1] pads [0, 0, 0, 0] dilations [1, 1]
      groups 1
      : (tensor<8x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x6x6xf32>
  return
}

// -----

// Tests that conv has one dilation per spatial axis.
func.func @conv_dilations(%x: tensor<8x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @below {{expected 2 dilations, got 3}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1, 1]
      groups 1
      : (tensor<8x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x6x6xf32>
  return
}

// -----

// Tests that conv has a begin and an end pad per spatial axis.
func.func @conv_pads(%x: tensor<8x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @below {{expected 4 pads (begin and end per spatial axis), got 2}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.conv %x, %w strides [1, 1] pads [1, 1] dilations [1, 1] groups 1
      : (tensor<8x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x8x8xf32>
  return
}

// -----

// Tests that a weight with an empty kernel axis is rejected.
func.func @conv_empty_kernel(%x: tensor<8x3x8x8xf32>, %w: tensor<16x3x0x3xf32>) {
  // expected-error @below {{kernel sizes must be positive}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1]
      groups 1
      : (tensor<8x3x8x8xf32>, tensor<16x3x0x3xf32>) -> tensor<8x16x6x6xf32>
  return
}

// -----

// Tests that conv strides are positive.
func.func @conv_zero_stride(%x: tensor<8x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @below {{strides must be positive}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.conv %x, %w strides [1, 0] pads [0, 0, 0, 0] dilations [1, 1]
      groups 1
      : (tensor<8x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x6x6xf32>
  return
}

// -----

// Tests that conv dilations are positive.
func.func @conv_zero_dilation(%x: tensor<8x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @below {{dilations must be positive}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [0, 1]
      groups 1
      : (tensor<8x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x6x6xf32>
  return
}

// -----

// Tests that conv pads are non-negative.
func.func @conv_negative_pad(%x: tensor<8x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @below {{pads must be non-negative}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.conv %x, %w strides [1, 1] pads [0, -1, 0, 0] dilations [1, 1]
      groups 1
      : (tensor<8x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x6x6xf32>
  return
}

// -----

// Tests that groups divide both the input channels and the filters.
func.func @conv_groups(%x: tensor<8x6x8x8xf32>, %w: tensor<10x3x3x3xf32>) {
  // expected-error @below {{groups = 4 must divide the input channels (6) and the filters (10)}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1]
      groups 4
      : (tensor<8x6x8x8xf32>, tensor<10x3x3x3xf32>) -> tensor<8x10x6x6xf32>
  return
}

// -----

// Tests that the weight's channel axis is the input channels per group.
func.func @conv_channels(%x: tensor<8x6x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @below {{weight has 3 channels per group but the input has 6 channels in 1 groups}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1]
      groups 1
      : (tensor<8x6x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x6x6xf32>
  return
}

// -----

// Tests that the conv bias has one element per filter.
func.func @conv_bias(%x: tensor<8x3x8x8xf32>, %w: tensor<16x3x3x3xf32>,
                     %b: tensor<8xf32>) {
  // expected-error @below {{bias must be a vector of 16 elements, got 'tensor<8xf32>'}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.conv %x, %w, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1]
      groups 1 : (tensor<8x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<8xf32>)
      -> tensor<8x16x6x6xf32>
  return
}

// -----

// Tests that a (dilated) kernel larger than the padded input is rejected.
func.func @conv_window_too_large(%x: tensor<8x3x4x4xf32>,
                                 %w: tensor<16x3x3x3xf32>) {
  // expected-error @below {{window of 3 (dilation 2) does not fit spatial axis 0 of size 4 with its padding}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.conv %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [2, 1]
      groups 1
      : (tensor<8x3x4x4xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x1x2xf32>
  return
}

// -----

// Tests that batch_norm needs batch and channel axes.
func.func @batch_norm_rank(%x: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @below {{input must have rank 2 or more (N, C, ...), got 'tensor<16xf32>'}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.batch_norm %x, %c, %c, %c, %c epsilon 1.0e-05 momentum 1.0e-01
      : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>,
         tensor<16xf32>) -> tensor<16xf32>
  return
}

// -----

// Tests that batch_norm operands share one element type.
func.func @batch_norm_element_type(%x: tensor<8x16xf16>, %c: tensor<16xf32>) {
  // expected-error @below {{operands must share one element type, got 'f16' and 'f32'}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.batch_norm %x, %c, %c, %c, %c epsilon 1.0e-05 momentum 1.0e-01
      : (tensor<8x16xf16>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>,
         tensor<16xf32>) -> tensor<8x16xf16>
  return
}

// -----

// Tests that batch_norm statistics have one element per channel.
func.func @batch_norm_channels(%x: tensor<8x16xf32>, %c: tensor<16xf32>,
                               %v: tensor<8xf32>) {
  // expected-error @below {{running variance must be a vector of 16 elements, got 'tensor<8xf32>'}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.batch_norm %x, %c, %c, %c, %v epsilon 1.0e-05 momentum 1.0e-01
      : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>,
         tensor<8xf32>) -> tensor<8x16xf32>
  return
}

// -----

// Tests that batch_norm epsilon is non-negative.
func.func @batch_norm_epsilon(%x: tensor<8x16xf32>, %c: tensor<16xf32>) {
  // expected-error @below {{epsilon must be non-negative, got -1.000000e+00}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.batch_norm %x, %c, %c, %c, %c epsilon -1.0 momentum 1.0e-01
      : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>,
         tensor<16xf32>) -> tensor<8x16xf32>
  return
}

// -----

// Tests that batch_norm momentum is in [0, 1].
func.func @batch_norm_momentum(%x: tensor<8x16xf32>, %c: tensor<16xf32>) {
  // expected-error @below {{momentum must be in [0, 1], got 1.500000e+00}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.batch_norm %x, %c, %c, %c, %c epsilon 1.0e-05 momentum 1.5
      : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>,
         tensor<16xf32>) -> tensor<8x16xf32>
  return
}

// -----

// Tests that gemm takes matrices.
func.func @gemm_rank(%a: tensor<2x8x4xf32>, %b: tensor<4x3xf32>) {
  // expected-error @below {{operands A and B must be matrices, got 'tensor<2x8x4xf32>' and 'tensor<4x3xf32>'}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.gemm %a, %b
      : (tensor<2x8x4xf32>, tensor<4x3xf32>) -> tensor<2x8x3xf32>
  return
}

// -----

// Tests that gemm's inner dimensions agree after the transposes.
func.func @gemm_inner(%a: tensor<8x4xf32>, %b: tensor<4x3xf32>) {
  // expected-error @below {{inner dimensions differ: 4 and 3}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.gemm %a, %b {trans_b = true}
      : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x4xf32>
  return
}

// -----

// Tests that gemm's C broadcasts to the result without widening it.
func.func @gemm_c(%a: tensor<8x4xf32>, %b: tensor<4x3xf32>,
                  %c: tensor<2x8x3xf32>) {
  // expected-error @below {{C of shape [2, 8, 3] does not broadcast to [8, 3]}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.gemm %a, %b, %c
      : (tensor<8x4xf32>, tensor<4x3xf32>, tensor<2x8x3xf32>) -> tensor<8x3xf32>
  return
}

// -----

// Tests that matmul rejects scalars.
func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<4xf32>) {
  // expected-error @below {{operands must have rank 1 or more}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.matmul %a, %b : (tensor<f32>, tensor<4xf32>) -> tensor<f32>
  return
}

// -----

// Tests that matmul's inner dimensions agree.
func.func @matmul_inner(%a: tensor<8x4xf32>, %b: tensor<5x3xf32>) {
  // expected-error @below {{inner dimensions differ: 4 and 5}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.matmul %a, %b
      : (tensor<8x4xf32>, tensor<5x3xf32>) -> tensor<8x3xf32>
  return
}

// -----

// Tests that matmul's batch axes broadcast.
func.func @matmul_batch(%a: tensor<2x8x4xf32>, %b: tensor<3x4x3xf32>) {
  // expected-error @below {{batch dimensions do not broadcast}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.matmul %a, %b
      : (tensor<2x8x4xf32>, tensor<3x4x3xf32>) -> tensor<2x8x3xf32>
  return
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// -----

// Tests that binary operands broadcast.
func.func @binary_broadcast(%x: tensor<8x16xf32>, %y: tensor<8xf32>) {
  // expected-error @below {{shapes [8, 16] and [8] do not broadcast}}
  // expected-error @below {{failed to infer returned types}}
  %z = train.mul %x, %y : (tensor<8x16xf32>, tensor<8xf32>) -> tensor<8x16xf32>
  return
}

// -----

// Tests that binary operands share one element type.
func.func @binary_element_type(%x: tensor<8xf32>, %y: tensor<8xbf16>) {
  // expected-error @below {{operands must share one element type, got 'f32' and 'bf16'}}
  // expected-error @below {{failed to infer returned types}}
  %z = train.sub %x, %y : (tensor<8xf32>, tensor<8xbf16>) -> tensor<8xf32>
  return
}

// -----

// Tests that select's condition broadcasts with its values.
func.func @select_broadcast(%c: tensor<4xi1>, %x: tensor<8x16xf32>, %y: tensor<f32>) {
  // expected-error @below {{condition shape [4] does not broadcast with [8, 16]}}
  // expected-error @below {{failed to infer returned types}}
  %z = train.select %c, %x, %y
      : (tensor<4xi1>, tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  return
}

// -----

// Tests that select's values share one element type.
func.func @select_element_type(%c: tensor<8xi1>, %x: tensor<8xf32>, %y: tensor<8xbf16>) {
  // expected-error @below {{operands must share one element type, got 'f32' and 'bf16'}}
  // expected-error @below {{failed to infer returned types}}
  %z = train.select %c, %x, %y
      : (tensor<8xi1>, tensor<8xf32>, tensor<8xbf16>) -> tensor<8xf32>
  return
}

// -----

// Tests that compare's result is a bool tensor.
func.func @compare_result_type(%x: tensor<8xf32>, %y: tensor<8xf32>) {
  // expected-error @below {{result #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<8xf32>'}}
  %z = train.compare lt %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

// Tests that maximum's operands broadcast.
func.func @maximum_broadcast(%x: tensor<8x16xf32>, %y: tensor<4x1x8xf32>) {
  // expected-error @below {{shapes [8, 16] and [4, 1, 8] do not broadcast}}
  // expected-error @below {{failed to infer returned types}}
  %z = train.maximum %x, %y
      : (tensor<8x16xf32>, tensor<4x1x8xf32>) -> tensor<4x8x16xf32>
  return
}

// -----

// Tests that minimum's operands share one element type.
func.func @minimum_element_type(%x: tensor<8xf32>, %y: tensor<f16>) {
  // expected-error @below {{operands must share one element type, got 'f32' and 'f16'}}
  // expected-error @below {{failed to infer returned types}}
  %z = train.minimum %x, %y : (tensor<8xf32>, tensor<f16>) -> tensor<8xf32>
  return
}

// -----

// Tests that a maximum's declared result type must be the broadcast shape.
func.func @maximum_result_type(%x: tensor<8x1xf32>, %y: tensor<4xf32>) {
  // expected-error @below {{inferred type(s) 'tensor<8x4xf32>' are incompatible with return type(s) of operation 'tensor<8x1xf32>'}}
  // expected-error @below {{failed to infer returned types}}
  %z = train.maximum %x, %y : (tensor<8x1xf32>, tensor<4xf32>) -> tensor<8x1xf32>
  return
}

// -----

// Tests that clip bounds are ordered.
func.func @clip_bounds(%x: tensor<8xf32>) {
  // expected-error @below {{'train.clip' op min 6.000000e+00 exceeds max 0.000000e+00}}
  %y = train.clip %x min 6.0 max 0.0 : tensor<8xf32>
  return
}

// -----

// Tests that the dropout ratio is a probability below one.
func.func @dropout_ratio(%x: tensor<8xf32>) {
  // expected-error @below {{'train.dropout' op ratio must be in [0, 1), got 1.000000e+00}}
  %y = train.dropout %x ratio 1.0 : tensor<8xf32>
  return
}

// -----

// Tests that the softmax axis is in range.
func.func @softmax_axis(%x: tensor<8x10xf32>) {
  // expected-error @below {{'train.softmax' op axis 2 is out of range for rank 2}}
  %y = train.softmax %x axis 2 : tensor<8x10xf32>
  return
}

// -----

// Tests that the log_softmax axis is non-negative (the importer normalises).
func.func @log_softmax_axis(%x: tensor<8x10xf32>) {
  // expected-error @below {{'train.log_softmax' op axis -1 is out of range for rank 2}}
  %y = train.log_softmax %x axis -1 : tensor<8x10xf32>
  return
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

// -----

// Tests that max_pool needs batch, channel and spatial axes.
func.func @max_pool_rank(%x: tensor<8x16xf32>) {
  // expected-error @below {{input must have rank 3 or more, got 'tensor<8x16xf32>'}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.max_pool %x kernel [] strides [] pads [] dilations []
      : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

// Tests that max_pool has one kernel size per spatial axis.
func.func @max_pool_kernel(%x: tensor<8x16x4x4xf32>) {
  // expected-error @below {{expected 2 kernel sizes, got 1}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.max_pool %x kernel [2] strides [2, 2] pads [0, 0, 0, 0]
      dilations [1, 1] : (tensor<8x16x4x4xf32>) -> tensor<8x16x2x2xf32>
  return
}

// -----

// Tests that a pooling pad is smaller than the dilated window.
func.func @max_pool_pad(%x: tensor<8x16x4x4xf32>) {
  // expected-error @below {{end pad 2 of spatial axis 1 is not smaller than the window (2)}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.max_pool %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 2]
      dilations [1, 1] : (tensor<8x16x4x4xf32>) -> tensor<8x16x2x3xf32>
  return
}

// -----

// Tests that avg_pool needs batch, channel and spatial axes.
func.func @avg_pool_rank(%x: tensor<8x16xf32>) {
  // expected-error @below {{input must have rank 3 or more, got 'tensor<8x16xf32>'}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.avg_pool %x kernel [] strides [] pads []
      : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

// Tests that avg_pool kernel sizes are positive.
func.func @avg_pool_kernel(%x: tensor<8x16x4xf32>) {
  // expected-error @below {{kernel sizes must be positive}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.avg_pool %x kernel [0] strides [1] pads [0, 0]
      : (tensor<8x16x4xf32>) -> tensor<8x16x5xf32>
  return
}

// -----

// Tests that the avg_pool pad limit applies to the begin pads too.
func.func @avg_pool_pad(%x: tensor<8x16x4xf32>) {
  // expected-error @below {{begin pad 3 of spatial axis 0 is not smaller than the window (3)}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.avg_pool %x kernel [3] strides [1] pads [3, 0]
      : (tensor<8x16x4xf32>) -> tensor<8x16x5xf32>
  return
}

// -----

// Tests that a pooling window larger than the padded input is rejected.
func.func @avg_pool_window_too_large(%x: tensor<8x16x2xf32>) {
  // expected-error @below {{window of 4 (dilation 1) does not fit spatial axis 0 of size 2 with its padding}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.avg_pool %x kernel [4] strides [1] pads [1, 0]
      : (tensor<8x16x2xf32>) -> tensor<8x16x1xf32>
  return
}

// -----

// Tests that global_avg_pool needs batch, channel and spatial axes.
func.func @global_avg_pool_rank(%x: tensor<8x16xf32>) {
  // expected-error @below {{input must have rank 3 or more, got 'tensor<8x16xf32>'}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.global_avg_pool %x : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

// -----

// Tests that reshape keeps the element type.
func.func @reshape_element_type(%x: tensor<8xf32>) {
  // expected-error @below {{'train.reshape' op element type changes from 'f32' to 'f16'}}
  %y = train.reshape %x : tensor<8xf32> -> tensor<2x4xf16>
  return
}

// -----

// Tests that reshape keeps the number of elements.
func.func @reshape_count(%x: tensor<8xf32>) {
  // expected-error @below {{'train.reshape' op cannot reshape 8 elements into [3, 3] (9 elements)}}
  %y = train.reshape %x : tensor<8xf32> -> tensor<3x3xf32>
  return
}

// -----

// Tests that the flatten axis is in [0, rank].
func.func @flatten_axis(%x: tensor<8x4xf32>) {
  // expected-error @below {{axis 3 is out of range [0, 2]}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.flatten %x axis 3 : (tensor<8x4xf32>) -> tensor<32x1xf32>
  return
}

// -----

// Tests that a transpose names every axis.
func.func @transpose_size(%x: tensor<8x4xf32>) {
  // expected-error @below {{perm has 3 entries for rank 2}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.transpose %x perm [1, 0, 2] : (tensor<8x4xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that a transpose names every axis once.
func.func @transpose_repeat(%x: tensor<8x4xf32>) {
  // expected-error @below {{perm [1, 1] is not a permutation of the axes}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.transpose %x perm [1, 1] : (tensor<8x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

// Tests that concat takes at least one input.
func.func @concat_empty() {
  // expected-error @below {{needs at least one input}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.concat axis 0 : () -> tensor<0xf32>
  return
}

// -----

// Tests that the concat axis is in range.
func.func @concat_axis(%a: tensor<8x4xf32>) {
  // expected-error @below {{axis 2 is out of range for rank 2}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.concat %a, %a axis 2
      : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return
}

// -----

// Tests that concat inputs share rank and element type.
func.func @concat_rank(%a: tensor<8x4xf32>, %b: tensor<8xf32>) {
  // expected-error @below {{inputs 'tensor<8x4xf32>' and 'tensor<8xf32>' differ in rank or element type}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.concat %a, %b axis 0
      : (tensor<8x4xf32>, tensor<8xf32>) -> tensor<16x4xf32>
  return
}

// -----

// Tests that concat inputs agree off the concatenation axis.
func.func @concat_sizes(%a: tensor<8x4xf32>, %b: tensor<8x5xf32>) {
  // expected-error @below {{inputs 'tensor<8x4xf32>' and 'tensor<8x5xf32>' differ off the concatenation axis}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.concat %a, %b axis 0
      : (tensor<8x4xf32>, tensor<8x5xf32>) -> tensor<16x4xf32>
  return
}

// -----

// Tests that a slice names every axis.
func.func @slice_size(%x: tensor<8x4xf32>) {
  // expected-error @below {{starts, ends and steps need 2 entries each}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.slice %x starts [0] ends [8, 4] steps [1, 1]
      : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return
}

// -----

// Tests that slice steps are non-zero.
func.func @slice_step(%x: tensor<8x4xf32>) {
  // expected-error @below {{step of axis 1 is zero}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.slice %x starts [0, 0] ends [8, 4] steps [1, 0]
      : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return
}

// -----

// Tests that slice starts are inside the axis.
func.func @slice_start(%x: tensor<8x4xf32>) {
  // expected-error @below {{start 4 of axis 1 is outside [0, 4)}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.slice %x starts [0, 4] ends [8, 4] steps [1, 1]
      : (tensor<8x4xf32>) -> tensor<8x0xf32>
  return
}

// -----

// Tests that an empty axis only takes start 0.
func.func @slice_start_empty_axis(%x: tensor<8x0xf32>) {
  // expected-error @below {{start 2 of axis 1 is outside [0, 1)}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.slice %x starts [0, 2] ends [8, 0] steps [1, 1]
      : (tensor<8x0xf32>) -> tensor<8x0xf32>
  return
}

// -----

// Tests that slice ends are in [-1, dim].
func.func @slice_end(%x: tensor<8x4xf32>) {
  // expected-error @below {{end -2 of axis 0 is outside [-1, 8]}}
  // expected-error @below {{failed to infer returned types}}
  %y = train.slice %x starts [7, 0] ends [-2, 4] steps [-1, 1]
      : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return
}

// -----

// Tests that reduce_max's result keeps the rank and each axis or 1.
func.func @reduce_max_shape(%x: tensor<2x3x4xf32>) {
  // expected-error @below {{'train.reduce_max' op reduced type 'tensor<2x2x1xf32>' is not 'tensor<2x3x4xf32>' with some axes reduced to size 1}}
  %0 = train.reduce_max %x : tensor<2x3x4xf32> -> tensor<2x2x1xf32>
  return
}

// -----

// Tests that reduce_max keeps the rank.
func.func @reduce_max_rank(%x: tensor<2x3x4xf32>) {
  // expected-error @below {{'train.reduce_max' op reduced type 'tensor<2x1xf32>' does not have the rank of 'tensor<2x3x4xf32>'}}
  %0 = train.reduce_max %x : tensor<2x3x4xf32> -> tensor<2x1xf32>
  return
}

// -----

// Tests that gather's axis is an axis of the data.
func.func @gather_axis(%t: tensor<10x4xf32>, %i: tensor<3xi64>) {
  // expected-error @below {{axis 2 is out of range for rank 2}}
  // expected-error @below {{'train.gather' op failed to infer returned types}}
  %0 = train.gather %t, %i axis 2 : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return
}
