// Gradient-check cases for activations, softmax / log_softmax and dropout.
// Inputs are standard normal: kinks (0 for relu, the clip bounds) are hit
// with probability ~0.

module @relu {
  train.param @shift trainable : tensor<3x8xf64>
  func.func @forward(%x: tensor<3x8xf64>) -> tensor<3x8xf64> {
    %s = train.read_param @shift : tensor<3x8xf64>
    %x1 = train.add %x, %s : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
    %y = train.relu %x1 : tensor<3x8xf64>
    return %y : tensor<3x8xf64>
  }
}

// -----

module @leaky_relu {
  train.param @shift trainable : tensor<3x8xf64>
  func.func @forward(%x: tensor<3x8xf64>) -> tensor<3x8xf64> {
    %s = train.read_param @shift : tensor<3x8xf64>
    %x1 = train.add %x, %s : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
    %y = train.leaky_relu %x1 alpha 1.0e-01 : tensor<3x8xf64>
    return %y : tensor<3x8xf64>
  }
}

// -----

// Both bounds, then an upper bound only, then a lower bound only.
module @clip {
  train.param @shift trainable : tensor<3x8xf64>
  func.func @forward(%x: tensor<3x8xf64>) -> tensor<3x8xf64> {
    %s = train.read_param @shift : tensor<3x8xf64>
    %x1 = train.add %x, %s : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
    %a = train.clip %x1 min -1.0 max 1.0 : tensor<3x8xf64>
    %b = train.clip %x1 max 5.0e-01 : tensor<3x8xf64>
    %c = train.clip %x1 min -2.5e-01 : tensor<3x8xf64>
    %ab = train.add %a, %b : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
    %y = train.mul %ab, %c : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
    return %y : tensor<3x8xf64>
  }
}

// -----

module @sigmoid {
  train.param @shift trainable : tensor<3x8xf64>
  func.func @forward(%x: tensor<3x8xf64>) -> tensor<3x8xf64> {
    %s = train.read_param @shift : tensor<3x8xf64>
    %x1 = train.add %x, %s : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
    %y = train.sigmoid %x1 : tensor<3x8xf64>
    return %y : tensor<3x8xf64>
  }
}

// -----

module @tanh {
  train.param @shift trainable : tensor<3x8xf64>
  func.func @forward(%x: tensor<3x8xf64>) -> tensor<3x8xf64> {
    %s = train.read_param @shift : tensor<3x8xf64>
    %x1 = train.add %x, %s : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
    %y = train.tanh %x1 : tensor<3x8xf64>
    return %y : tensor<3x8xf64>
  }
}

// -----

// Softmax along the last axis, fed to cross-entropy (a softmax of a
// softmax: the loss still depends on every logit).
module @softmax_last_axis {
  train.param @shift trainable : tensor<3x5xf64>
  func.func @forward(%x: tensor<3x5xf64>) -> tensor<3x5xf64> {
    %s = train.read_param @shift : tensor<3x5xf64>
    %x1 = train.add %x, %s : (tensor<3x5xf64>, tensor<3x5xf64>) -> tensor<3x5xf64>
    %y = train.softmax %x1 axis 1 : tensor<3x5xf64>
    return %y : tensor<3x5xf64>
  }
}

// -----

// Softmax along a middle and a leading axis of a 3-D tensor.
module @softmax_inner_axes {
  train.param @shift trainable : tensor<2x3x4xf64>
  func.func @forward(%x: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
    %s = train.read_param @shift : tensor<2x3x4xf64>
    %x1 = train.add %x, %s : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %a = train.softmax %x1 axis 1 : tensor<2x3x4xf64>
    %b = train.softmax %x1 axis 0 : tensor<2x3x4xf64>
    %y = train.mul %a, %b : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    return %y : tensor<2x3x4xf64>
  }
}

// -----

module @log_softmax {
  train.param @shift trainable : tensor<2x3x4xf64>
  func.func @forward(%x: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
    %s = train.read_param @shift : tensor<2x3x4xf64>
    %x1 = train.add %x, %s : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %a = train.log_softmax %x1 axis 2 : tensor<2x3x4xf64>
    %b = train.log_softmax %x1 axis 1 : tensor<2x3x4xf64>
    %y = train.add %a, %b : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    return %y : tensor<2x3x4xf64>
  }
}

// -----

// Training-mode dropout: a fixed seed makes the mask, and so the loss, a
// smooth function of the parameters.
module @dropout {
  train.param @shift trainable : tensor<4x8xf64>
  train.param @w trainable : tensor<8x3xf64>
  func.func @forward(%x: tensor<4x8xf64>) -> tensor<4x3xf64> {
    %s = train.read_param @shift : tensor<4x8xf64>
    %w = train.read_param @w : tensor<8x3xf64>
    %x1 = train.add %x, %s : (tensor<4x8xf64>, tensor<4x8xf64>) -> tensor<4x8xf64>
    %d = train.dropout %x1 ratio 3.0e-01 : tensor<4x8xf64>
    %y = train.matmul %d, %w : (tensor<4x8xf64>, tensor<8x3xf64>) -> tensor<4x3xf64>
    return %y : tensor<4x3xf64>
  }
}

// -----

// Square root of a positive value (x^2 + 0.5).
module @sqrt {
  train.param @shift trainable : tensor<3x8xf64>
  func.func @forward(%x: tensor<3x8xf64>) -> tensor<3x8xf64> {
    %s = train.read_param @shift : tensor<3x8xf64>
    %half = train.constant dense<5.000000e-01> : tensor<f64>
    %x1 = train.add %x, %s : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
    %sq = train.mul %x1, %x1 : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
    %p = train.add %sq, %half : (tensor<3x8xf64>, tensor<f64>) -> tensor<3x8xf64>
    %y = train.sqrt %p : tensor<3x8xf64>
    return %y : tensor<3x8xf64>
  }
}

// -----

// LayerNorm over the last axis as PyTorch 1.13 exports it (ReduceMean, Sub,
// Pow 2, ReduceMean, Add eps, Sqrt, Div, then scale and bias), in the Train
// ops the importer makes of it.
module @layer_norm_decomposed {
  train.param @shift trainable : tensor<3x8xf64>
  train.param @gamma trainable : tensor<8xf64>
  train.param @beta trainable : tensor<8xf64>
  func.func @forward(%x: tensor<3x8xf64>) -> tensor<3x8xf64> {
    %s = train.read_param @shift : tensor<3x8xf64>
    %g = train.read_param @gamma : tensor<8xf64>
    %b = train.read_param @beta : tensor<8xf64>
    %n = train.constant dense<8.000000e+00> : tensor<f64>
    %eps = train.constant dense<1.000000e-05> : tensor<f64>
    %x1 = train.add %x, %s : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
    %sum = train.sum_to %x1 : tensor<3x8xf64> -> tensor<3x1xf64>
    %mean = train.div %sum, %n : (tensor<3x1xf64>, tensor<f64>) -> tensor<3x1xf64>
    %d = train.sub %x1, %mean : (tensor<3x8xf64>, tensor<3x1xf64>) -> tensor<3x8xf64>
    %d2 = train.mul %d, %d : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
    %vsum = train.sum_to %d2 : tensor<3x8xf64> -> tensor<3x1xf64>
    %var = train.div %vsum, %n : (tensor<3x1xf64>, tensor<f64>) -> tensor<3x1xf64>
    %ve = train.add %var, %eps : (tensor<3x1xf64>, tensor<f64>) -> tensor<3x1xf64>
    %std = train.sqrt %ve : tensor<3x1xf64>
    %norm = train.div %d, %std : (tensor<3x8xf64>, tensor<3x1xf64>) -> tensor<3x8xf64>
    %scaled = train.mul %norm, %g : (tensor<3x8xf64>, tensor<8xf64>) -> tensor<3x8xf64>
    %y = train.add %scaled, %b : (tensor<3x8xf64>, tensor<8xf64>) -> tensor<3x8xf64>
    return %y : tensor<3x8xf64>
  }
}

// -----

// The error function (GELU's, as PyTorch exports it).
module @erf {
  train.param @shift trainable : tensor<3x8xf64>
  func.func @forward(%x: tensor<3x8xf64>) -> tensor<3x8xf64> {
    %s = train.read_param @shift : tensor<3x8xf64>
    %x1 = train.add %x, %s : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
    %y = train.erf %x1 : tensor<3x8xf64>
    return %y : tensor<3x8xf64>
  }
}
