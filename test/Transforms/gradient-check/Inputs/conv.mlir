// Gradient-check cases for train.conv (conv_backward_data,
// conv_backward_filter, the bias's reduce_sum). Each case adds a trainable
// @shift to its data input, so that the input gradient is checked too.

// A 2-D convolution with bias, no padding, stride 1.
module @conv2d_bias {
  train.param @shift trainable : tensor<2x2x5x5xf64>
  train.param @w trainable : tensor<3x2x3x3xf64>
  train.param @b trainable : tensor<3xf64>
  func.func @forward(%x: tensor<2x2x5x5xf64>) -> tensor<2x3x3x3xf64> {
    %s = train.read_param @shift : tensor<2x2x5x5xf64>
    %w = train.read_param @w : tensor<3x2x3x3xf64>
    %b = train.read_param @b : tensor<3xf64>
    %x1 = train.add %x, %s : (tensor<2x2x5x5xf64>, tensor<2x2x5x5xf64>) -> tensor<2x2x5x5xf64>
    %y = train.conv %x1, %w, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<2x2x5x5xf64>, tensor<3x2x3x3xf64>, tensor<3xf64>) -> tensor<2x3x3x3xf64>
    return %y : tensor<2x3x3x3xf64>
  }
}

// -----

// Different strides per axis and asymmetric pads; the last input row is
// never read (floor), so its gradient must be zero.
module @conv2d_strided_padded {
  train.param @shift trainable : tensor<1x2x6x7xf64>
  train.param @w trainable : tensor<3x2x3x2xf64>
  func.func @forward(%x: tensor<1x2x6x7xf64>) -> tensor<1x3x4x3xf64> {
    %s = train.read_param @shift : tensor<1x2x6x7xf64>
    %w = train.read_param @w : tensor<3x2x3x2xf64>
    %x1 = train.add %x, %s : (tensor<1x2x6x7xf64>, tensor<1x2x6x7xf64>) -> tensor<1x2x6x7xf64>
    %y = train.conv %x1, %w strides [2, 3] pads [1, 0, 2, 1] dilations [1, 1] groups 1 : (tensor<1x2x6x7xf64>, tensor<3x2x3x2xf64>) -> tensor<1x3x4x3xf64>
    return %y : tensor<1x3x4x3xf64>
  }
}

// -----

// Dilation 2 with "same" padding.
module @conv2d_dilated {
  train.param @shift trainable : tensor<1x2x7x7xf64>
  train.param @w trainable : tensor<2x2x3x3xf64>
  train.param @b trainable : tensor<2xf64>
  func.func @forward(%x: tensor<1x2x7x7xf64>) -> tensor<1x2x7x7xf64> {
    %s = train.read_param @shift : tensor<1x2x7x7xf64>
    %w = train.read_param @w : tensor<2x2x3x3xf64>
    %b = train.read_param @b : tensor<2xf64>
    %x1 = train.add %x, %s : (tensor<1x2x7x7xf64>, tensor<1x2x7x7xf64>) -> tensor<1x2x7x7xf64>
    %y = train.conv %x1, %w, %b strides [1, 1] pads [2, 2, 2, 2] dilations [2, 2] groups 1 : (tensor<1x2x7x7xf64>, tensor<2x2x3x3xf64>, tensor<2xf64>) -> tensor<1x2x7x7xf64>
    return %y : tensor<1x2x7x7xf64>
  }
}

// -----

// Dilation and stride together, different per axis, with pads on one side
// only.
module @conv2d_dilated_strided {
  train.param @shift trainable : tensor<1x1x8x9xf64>
  train.param @w trainable : tensor<2x1x3x2xf64>
  func.func @forward(%x: tensor<1x1x8x9xf64>) -> tensor<1x2x3x4xf64> {
    %s = train.read_param @shift : tensor<1x1x8x9xf64>
    %w = train.read_param @w : tensor<2x1x3x2xf64>
    %x1 = train.add %x, %s : (tensor<1x1x8x9xf64>, tensor<1x1x8x9xf64>) -> tensor<1x1x8x9xf64>
    %y = train.conv %x1, %w strides [2, 2] pads [1, 0, 0, 1] dilations [2, 3] groups 1 : (tensor<1x1x8x9xf64>, tensor<2x1x3x2xf64>) -> tensor<1x2x3x4xf64>
    return %y : tensor<1x2x3x4xf64>
  }
}

// -----

// Two groups, padded, with bias.
module @conv2d_grouped {
  train.param @shift trainable : tensor<1x4x5x5xf64>
  train.param @w trainable : tensor<6x2x3x3xf64>
  train.param @b trainable : tensor<6xf64>
  func.func @forward(%x: tensor<1x4x5x5xf64>) -> tensor<1x6x5x5xf64> {
    %s = train.read_param @shift : tensor<1x4x5x5xf64>
    %w = train.read_param @w : tensor<6x2x3x3xf64>
    %b = train.read_param @b : tensor<6xf64>
    %x1 = train.add %x, %s : (tensor<1x4x5x5xf64>, tensor<1x4x5x5xf64>) -> tensor<1x4x5x5xf64>
    %y = train.conv %x1, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 2 : (tensor<1x4x5x5xf64>, tensor<6x2x3x3xf64>, tensor<6xf64>) -> tensor<1x6x5x5xf64>
    return %y : tensor<1x6x5x5xf64>
  }
}

// -----

// Depthwise (groups = channels), strided and padded.
module @conv2d_depthwise {
  train.param @shift trainable : tensor<2x3x5x5xf64>
  train.param @w trainable : tensor<3x1x3x3xf64>
  func.func @forward(%x: tensor<2x3x5x5xf64>) -> tensor<2x3x3x3xf64> {
    %s = train.read_param @shift : tensor<2x3x5x5xf64>
    %w = train.read_param @w : tensor<3x1x3x3xf64>
    %x1 = train.add %x, %s : (tensor<2x3x5x5xf64>, tensor<2x3x5x5xf64>) -> tensor<2x3x5x5xf64>
    %y = train.conv %x1, %w strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] groups 3 : (tensor<2x3x5x5xf64>, tensor<3x1x3x3xf64>) -> tensor<2x3x3x3xf64>
    return %y : tensor<2x3x3x3xf64>
  }
}

// -----

// 1-D with stride, dilation, asymmetric pads and bias.
module @conv1d {
  train.param @shift trainable : tensor<2x2x9xf64>
  train.param @w trainable : tensor<3x2x3xf64>
  train.param @b trainable : tensor<3xf64>
  func.func @forward(%x: tensor<2x2x9xf64>) -> tensor<2x3x4xf64> {
    %s = train.read_param @shift : tensor<2x2x9xf64>
    %w = train.read_param @w : tensor<3x2x3xf64>
    %b = train.read_param @b : tensor<3xf64>
    %x1 = train.add %x, %s : (tensor<2x2x9xf64>, tensor<2x2x9xf64>) -> tensor<2x2x9xf64>
    %y = train.conv %x1, %w, %b strides [2] pads [1, 2] dilations [2] groups 1 : (tensor<2x2x9xf64>, tensor<3x2x3xf64>, tensor<3xf64>) -> tensor<2x3x4xf64>
    return %y : tensor<2x3x4xf64>
  }
}

// -----

// 3-D, strided on one axis, padded, with bias.
module @conv3d {
  train.param @shift trainable : tensor<1x2x4x4x4xf64>
  train.param @w trainable : tensor<2x2x2x2x2xf64>
  train.param @b trainable : tensor<2xf64>
  func.func @forward(%x: tensor<1x2x4x4x4xf64>) -> tensor<1x2x2x4x3xf64> {
    %s = train.read_param @shift : tensor<1x2x4x4x4xf64>
    %w = train.read_param @w : tensor<2x2x2x2x2xf64>
    %b = train.read_param @b : tensor<2xf64>
    %x1 = train.add %x, %s : (tensor<1x2x4x4x4xf64>, tensor<1x2x4x4x4xf64>) -> tensor<1x2x4x4x4xf64>
    %y = train.conv %x1, %w, %b strides [2, 1, 1] pads [1, 0, 0, 0, 1, 0] dilations [1, 1, 1] groups 1 : (tensor<1x2x4x4x4xf64>, tensor<2x2x2x2x2xf64>, tensor<2xf64>) -> tensor<1x2x2x4x3xf64>
    return %y : tensor<1x2x2x4x3xf64>
  }
}

// -----

// A 1x1 kernel with padding wider than the kernel: output positions in the
// padding see only the bias.
module @conv2d_pad_beyond_kernel {
  train.param @shift trainable : tensor<1x2x3x3xf64>
  train.param @w trainable : tensor<2x2x1x1xf64>
  train.param @b trainable : tensor<2xf64>
  func.func @forward(%x: tensor<1x2x3x3xf64>) -> tensor<1x2x5x4xf64> {
    %s = train.read_param @shift : tensor<1x2x3x3xf64>
    %w = train.read_param @w : tensor<2x2x1x1xf64>
    %b = train.read_param @b : tensor<2xf64>
    %x1 = train.add %x, %s : (tensor<1x2x3x3xf64>, tensor<1x2x3x3xf64>) -> tensor<1x2x3x3xf64>
    %y = train.conv %x1, %w, %b strides [1, 1] pads [1, 0, 1, 1] dilations [1, 1] groups 1 : (tensor<1x2x3x3xf64>, tensor<2x2x1x1xf64>, tensor<2xf64>) -> tensor<1x2x5x4xf64>
    return %y : tensor<1x2x5x4xf64>
  }
}

// -----

// A residual block: conv -> relu -> conv, added to its input, then global
// average pooling; the input's gradient sums both paths.
module @residual_block {
  train.param @shift trainable : tensor<2x2x4x4xf64>
  train.param @w1 trainable : tensor<2x2x3x3xf64>
  train.param @w2 trainable : tensor<2x2x3x3xf64>
  train.param @b2 trainable : tensor<2xf64>
  func.func @forward(%x: tensor<2x2x4x4xf64>) -> tensor<2x2x1x1xf64> {
    %s = train.read_param @shift : tensor<2x2x4x4xf64>
    %w1 = train.read_param @w1 : tensor<2x2x3x3xf64>
    %w2 = train.read_param @w2 : tensor<2x2x3x3xf64>
    %b2 = train.read_param @b2 : tensor<2xf64>
    %x1 = train.add %x, %s : (tensor<2x2x4x4xf64>, tensor<2x2x4x4xf64>) -> tensor<2x2x4x4xf64>
    %c1 = train.conv %x1, %w1 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x2x4x4xf64>, tensor<2x2x3x3xf64>) -> tensor<2x2x4x4xf64>
    %r = train.relu %c1 : tensor<2x2x4x4xf64>
    %c2 = train.conv %r, %w2, %b2 strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x2x4x4xf64>, tensor<2x2x3x3xf64>, tensor<2xf64>) -> tensor<2x2x4x4xf64>
    %sum = train.add %c2, %x1 : (tensor<2x2x4x4xf64>, tensor<2x2x4x4xf64>) -> tensor<2x2x4x4xf64>
    %y = train.global_avg_pool %sum : (tensor<2x2x4x4xf64>) -> tensor<2x2x1x1xf64>
    return %y : tensor<2x2x1x1xf64>
  }
}
