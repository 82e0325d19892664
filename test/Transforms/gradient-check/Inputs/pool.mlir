// Gradient-check cases for max_pool (pads, ceil_mode, dilations, overlapping
// windows, 1-D/3-D), avg_pool (count_include_pad both ways, ceil_mode) and
// global_avg_pool. Random inputs have no ties within a window.

module @max_pool_2d {
  train.param @shift trainable : tensor<2x2x4x4xf64>
  func.func @forward(%x: tensor<2x2x4x4xf64>) -> tensor<2x2x2x2xf64> {
    %s = train.read_param @shift : tensor<2x2x4x4xf64>
    %x1 = train.add %x, %s : (tensor<2x2x4x4xf64>, tensor<2x2x4x4xf64>) -> tensor<2x2x4x4xf64>
    %y = train.max_pool %x1 kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : (tensor<2x2x4x4xf64>) -> tensor<2x2x2x2xf64>
    return %y : tensor<2x2x2x2xf64>
  }
}

// -----

// Overlapping 3x3 windows with stride 2 and padding: an input can win
// several windows, and its gradient sums them.
module @max_pool_overlap_padded {
  train.param @shift trainable : tensor<1x2x5x5xf64>
  func.func @forward(%x: tensor<1x2x5x5xf64>) -> tensor<1x2x3x3xf64> {
    %s = train.read_param @shift : tensor<1x2x5x5xf64>
    %x1 = train.add %x, %s : (tensor<1x2x5x5xf64>, tensor<1x2x5x5xf64>) -> tensor<1x2x5x5xf64>
    %y = train.max_pool %x1 kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] : (tensor<1x2x5x5xf64>) -> tensor<1x2x3x3xf64>
    return %y : tensor<1x2x3x3xf64>
  }
}

// -----

// ceil_mode: the last window runs past the input.
module @max_pool_ceil {
  train.param @shift trainable : tensor<1x2x5x5xf64>
  func.func @forward(%x: tensor<1x2x5x5xf64>) -> tensor<1x2x3x3xf64> {
    %s = train.read_param @shift : tensor<1x2x5x5xf64>
    %x1 = train.add %x, %s : (tensor<1x2x5x5xf64>, tensor<1x2x5x5xf64>) -> tensor<1x2x5x5xf64>
    %y = train.max_pool %x1 kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] {ceil_mode = true} : (tensor<1x2x5x5xf64>) -> tensor<1x2x3x3xf64>
    return %y : tensor<1x2x3x3xf64>
  }
}

// -----

// Dilated windows with padding, different per axis.
module @max_pool_dilated {
  train.param @shift trainable : tensor<1x1x7x7xf64>
  func.func @forward(%x: tensor<1x1x7x7xf64>) -> tensor<1x1x6x2xf64> {
    %s = train.read_param @shift : tensor<1x1x7x7xf64>
    %x1 = train.add %x, %s : (tensor<1x1x7x7xf64>, tensor<1x1x7x7xf64>) -> tensor<1x1x7x7xf64>
    %y = train.max_pool %x1 kernel [2, 3] strides [1, 2] pads [1, 0, 0, 1] dilations [2, 2] : (tensor<1x1x7x7xf64>) -> tensor<1x1x6x2xf64>
    return %y : tensor<1x1x6x2xf64>
  }
}

// -----

// 1-D, padded, ceil mode and dilation.
module @max_pool_1d {
  train.param @shift trainable : tensor<2x2x10xf64>
  func.func @forward(%x: tensor<2x2x10xf64>) -> tensor<2x2x5xf64> {
    %s = train.read_param @shift : tensor<2x2x10xf64>
    %x1 = train.add %x, %s : (tensor<2x2x10xf64>, tensor<2x2x10xf64>) -> tensor<2x2x10xf64>
    %y = train.max_pool %x1 kernel [3] strides [2] pads [1, 1] dilations [2] {ceil_mode = true} : (tensor<2x2x10xf64>) -> tensor<2x2x5xf64>
    return %y : tensor<2x2x5xf64>
  }
}

// -----

// 3-D with padding on some sides.
module @max_pool_3d {
  train.param @shift trainable : tensor<1x2x4x4x4xf64>
  func.func @forward(%x: tensor<1x2x4x4x4xf64>) -> tensor<1x2x3x2x3xf64> {
    %s = train.read_param @shift : tensor<1x2x4x4x4xf64>
    %x1 = train.add %x, %s : (tensor<1x2x4x4x4xf64>, tensor<1x2x4x4x4xf64>) -> tensor<1x2x4x4x4xf64>
    %y = train.max_pool %x1 kernel [2, 2, 2] strides [2, 2, 2] pads [1, 0, 1, 1, 0, 1] dilations [1, 1, 1] : (tensor<1x2x4x4x4xf64>) -> tensor<1x2x3x2x3xf64>
    return %y : tensor<1x2x3x2x3xf64>
  }
}

// -----

// Padded, overlapping windows, the divisor counting real elements only.
module @avg_pool_exclude_pad {
  train.param @shift trainable : tensor<1x2x5x5xf64>
  func.func @forward(%x: tensor<1x2x5x5xf64>) -> tensor<1x2x3x3xf64> {
    %s = train.read_param @shift : tensor<1x2x5x5xf64>
    %x1 = train.add %x, %s : (tensor<1x2x5x5xf64>, tensor<1x2x5x5xf64>) -> tensor<1x2x5x5xf64>
    %y = train.avg_pool %x1 kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] : (tensor<1x2x5x5xf64>) -> tensor<1x2x3x3xf64>
    return %y : tensor<1x2x3x3xf64>
  }
}

// -----

// The same with count_include_pad.
module @avg_pool_include_pad {
  train.param @shift trainable : tensor<1x2x5x5xf64>
  func.func @forward(%x: tensor<1x2x5x5xf64>) -> tensor<1x2x3x3xf64> {
    %s = train.read_param @shift : tensor<1x2x5x5xf64>
    %x1 = train.add %x, %s : (tensor<1x2x5x5xf64>, tensor<1x2x5x5xf64>) -> tensor<1x2x5x5xf64>
    %y = train.avg_pool %x1 kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] {count_include_pad = true} : (tensor<1x2x5x5xf64>) -> tensor<1x2x3x3xf64>
    return %y : tensor<1x2x3x3xf64>
  }
}

// -----

// ceil_mode with asymmetric pads and count_include_pad: the overhang past
// the end padding is not counted.
module @avg_pool_ceil_include_pad {
  train.param @shift trainable : tensor<1x1x6x6xf64>
  func.func @forward(%x: tensor<1x1x6x6xf64>) -> tensor<1x1x4x3xf64> {
    %s = train.read_param @shift : tensor<1x1x6x6xf64>
    %x1 = train.add %x, %s : (tensor<1x1x6x6xf64>, tensor<1x1x6x6xf64>) -> tensor<1x1x6x6xf64>
    %y = train.avg_pool %x1 kernel [3, 2] strides [2, 2] pads [1, 0, 1, 0] {ceil_mode = true, count_include_pad = true} : (tensor<1x1x6x6xf64>) -> tensor<1x1x4x3xf64>
    return %y : tensor<1x1x4x3xf64>
  }
}

// -----

// ceil_mode without count_include_pad.
module @avg_pool_ceil_exclude_pad {
  train.param @shift trainable : tensor<1x2x5x5xf64>
  func.func @forward(%x: tensor<1x2x5x5xf64>) -> tensor<1x2x3x3xf64> {
    %s = train.read_param @shift : tensor<1x2x5x5xf64>
    %x1 = train.add %x, %s : (tensor<1x2x5x5xf64>, tensor<1x2x5x5xf64>) -> tensor<1x2x5x5xf64>
    %y = train.avg_pool %x1 kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] {ceil_mode = true} : (tensor<1x2x5x5xf64>) -> tensor<1x2x3x3xf64>
    return %y : tensor<1x2x3x3xf64>
  }
}

// -----

module @avg_pool_1d {
  train.param @shift trainable : tensor<2x2x9xf64>
  func.func @forward(%x: tensor<2x2x9xf64>) -> tensor<2x2x4xf64> {
    %s = train.read_param @shift : tensor<2x2x9xf64>
    %x1 = train.add %x, %s : (tensor<2x2x9xf64>, tensor<2x2x9xf64>) -> tensor<2x2x9xf64>
    %y = train.avg_pool %x1 kernel [3] strides [2] pads [0, 1] : (tensor<2x2x9xf64>) -> tensor<2x2x4xf64>
    return %y : tensor<2x2x4xf64>
  }
}

// -----

module @avg_pool_3d {
  train.param @shift trainable : tensor<1x2x4x4x4xf64>
  func.func @forward(%x: tensor<1x2x4x4x4xf64>) -> tensor<1x2x2x3x2xf64> {
    %s = train.read_param @shift : tensor<1x2x4x4x4xf64>
    %x1 = train.add %x, %s : (tensor<1x2x4x4x4xf64>, tensor<1x2x4x4x4xf64>) -> tensor<1x2x4x4x4xf64>
    %y = train.avg_pool %x1 kernel [2, 2, 2] strides [2, 1, 2] pads [0, 0, 0, 0, 0, 0] {count_include_pad = true} : (tensor<1x2x4x4x4xf64>) -> tensor<1x2x2x3x2xf64>
    return %y : tensor<1x2x2x3x2xf64>
  }
}

// -----

module @global_avg_pool {
  train.param @shift trainable : tensor<2x3x3x4xf64>
  func.func @forward(%x: tensor<2x3x3x4xf64>) -> tensor<2x3x1x1xf64> {
    %s = train.read_param @shift : tensor<2x3x3x4xf64>
    %x1 = train.add %x, %s : (tensor<2x3x3x4xf64>, tensor<2x3x3x4xf64>) -> tensor<2x3x3x4xf64>
    %y = train.global_avg_pool %x1 : (tensor<2x3x3x4xf64>) -> tensor<2x3x1x1xf64>
    return %y : tensor<2x3x1x1xf64>
  }
}
