// Gradient-check cases for the data-movement ops: reshape, flatten,
// transpose, concat, slice (positive and negative steps) and identity.

module @reshape {
  train.param @shift trainable : tensor<2x3x4xf64>
  train.param @w trainable : tensor<6xf64>
  func.func @forward(%x: tensor<2x3x4xf64>) -> tensor<4x6xf64> {
    %s = train.read_param @shift : tensor<2x3x4xf64>
    %w = train.read_param @w : tensor<6xf64>
    %x1 = train.add %x, %s : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %r = train.reshape %x1 : tensor<2x3x4xf64> -> tensor<4x6xf64>
    %y = train.mul %r, %w : (tensor<4x6xf64>, tensor<6xf64>) -> tensor<4x6xf64>
    return %y : tensor<4x6xf64>
  }
}

// -----

module @flatten {
  train.param @shift trainable : tensor<2x3x2x2xf64>
  func.func @forward(%x: tensor<2x3x2x2xf64>) -> tensor<6x4xf64> {
    %s = train.read_param @shift : tensor<2x3x2x2xf64>
    %x1 = train.add %x, %s : (tensor<2x3x2x2xf64>, tensor<2x3x2x2xf64>) -> tensor<2x3x2x2xf64>
    %y = train.flatten %x1 axis 2 : (tensor<2x3x2x2xf64>) -> tensor<6x4xf64>
    return %y : tensor<6x4xf64>
  }
}

// -----

// A transpose of a parameter and of an activation.
// gradcheck: loss=mse
module @transpose {
  train.param @shift trainable : tensor<2x3x4xf64>
  train.param @w trainable : tensor<3x4x2xf64>
  func.func @forward(%x: tensor<2x3x4xf64>) -> tensor<4x2x3xf64> {
    %s = train.read_param @shift : tensor<2x3x4xf64>
    %w = train.read_param @w : tensor<3x4x2xf64>
    %x1 = train.add %x, %s : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %t = train.transpose %x1 perm [2, 0, 1] : (tensor<2x3x4xf64>) -> tensor<4x2x3xf64>
    %wt = train.transpose %w perm [1, 2, 0] : (tensor<3x4x2xf64>) -> tensor<4x2x3xf64>
    %y = train.mul %t, %wt : (tensor<4x2x3xf64>, tensor<4x2x3xf64>) -> tensor<4x2x3xf64>
    return %y : tensor<4x2x3xf64>
  }
}

// -----

// Concat of two parameters around an inactive data input.
module @concat {
  train.param @a trainable : tensor<2x3xf64>
  train.param @b trainable : tensor<2x2xf64>
  func.func @forward(%x: tensor<2x1xf64>) -> tensor<2x6xf64> {
    %a = train.read_param @a : tensor<2x3xf64>
    %b = train.read_param @b : tensor<2x2xf64>
    %y = train.concat %a, %x, %b axis 1 : (tensor<2x3xf64>, tensor<2x1xf64>, tensor<2x2xf64>) -> tensor<2x6xf64>
    return %y : tensor<2x6xf64>
  }
}

// -----

// Concat along the leading axis of 3-D tensors.
// gradcheck: loss=mse
module @concat_axis0 {
  train.param @a trainable : tensor<1x2x3xf64>
  train.param @b trainable : tensor<2x2x3xf64>
  func.func @forward(%x: tensor<1x2x3xf64>) -> tensor<3x2x3xf64> {
    %a = train.read_param @a : tensor<1x2x3xf64>
    %b = train.read_param @b : tensor<2x2x3xf64>
    %a1 = train.mul %a, %x : (tensor<1x2x3xf64>, tensor<1x2x3xf64>) -> tensor<1x2x3xf64>
    %y = train.concat %a1, %b axis 0 : (tensor<1x2x3xf64>, tensor<2x2x3xf64>) -> tensor<3x2x3xf64>
    return %y : tensor<3x2x3xf64>
  }
}

// -----

// Positive steps; the elements not read get zero gradient.
module @slice {
  train.param @shift trainable : tensor<4x7xf64>
  func.func @forward(%x: tensor<4x7xf64>) -> tensor<3x3xf64> {
    %s = train.read_param @shift : tensor<4x7xf64>
    %x1 = train.add %x, %s : (tensor<4x7xf64>, tensor<4x7xf64>) -> tensor<4x7xf64>
    %y = train.slice %x1 starts [1, 1] ends [4, 7] steps [1, 2] : (tensor<4x7xf64>) -> tensor<3x3xf64>
    return %y : tensor<3x3xf64>
  }
}

// -----

// Negative steps on one axis, then on both (a reversal to the first
// element: end -1).
// gradcheck: loss=mse
module @slice_negative_steps {
  train.param @shift trainable : tensor<5x6xf64>
  func.func @forward(%x: tensor<5x6xf64>) -> tensor<3x3xf64> {
    %s = train.read_param @shift : tensor<5x6xf64>
    %x1 = train.add %x, %s : (tensor<5x6xf64>, tensor<5x6xf64>) -> tensor<5x6xf64>
    %a = train.slice %x1 starts [0, 5] ends [5, 0] steps [2, -2] : (tensor<5x6xf64>) -> tensor<3x3xf64>
    %b = train.slice %x1 starts [4, 2] ends [-1, -1] steps [-2, -1] : (tensor<5x6xf64>) -> tensor<3x3xf64>
    %y = train.mul %a, %b : (tensor<3x3xf64>, tensor<3x3xf64>) -> tensor<3x3xf64>
    return %y : tensor<3x3xf64>
  }
}

// -----

module @identity {
  train.param @shift trainable : tensor<3x4xf64>
  func.func @forward(%x: tensor<3x4xf64>) -> tensor<3x4xf64> {
    %s = train.read_param @shift : tensor<3x4xf64>
    %x1 = train.add %x, %s : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>
    %i = train.identity %x1 : tensor<3x4xf64>
    %y = train.mul %i, %x1 : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>
    return %y : tensor<3x4xf64>
  }
}

// -----

// One tensor concatenated with itself: both slices of the gradient add up.
// gradcheck: loss=mse
module @concat_same_input {
  train.param @a trainable : tensor<2x3xf64>
  func.func @forward(%x: tensor<2x3xf64>) -> tensor<2x6xf64> {
    %a = train.read_param @a : tensor<2x3xf64>
    %a1 = train.add %a, %x : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
    %t = train.tanh %a1 : tensor<2x3xf64>
    %y = train.concat %t, %a1 axis 1 : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x6xf64>
    %z = train.concat %y, %y axis 0 : (tensor<2x6xf64>, tensor<2x6xf64>) -> tensor<4x6xf64>
    %r = train.slice %z starts [1, 0] ends [3, 6] steps [1, 1] : (tensor<4x6xf64>) -> tensor<2x6xf64>
    return %r : tensor<2x6xf64>
  }
}
