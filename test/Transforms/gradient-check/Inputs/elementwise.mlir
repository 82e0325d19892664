// Gradient-check cases for the broadcasting binary ops (add, sub, mul, div,
// maximum, minimum: sum_to of the broadcast gradient), with parameters on
// either side.

// Parameters broadcast along leading and inner axes.
module @add_broadcast {
  train.param @shift trainable : tensor<2x3x4xf64>
  train.param @b trainable : tensor<3x1xf64>
  train.param @c trainable : tensor<4xf64>
  func.func @forward(%x: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
    %s = train.read_param @shift : tensor<2x3x4xf64>
    %b = train.read_param @b : tensor<3x1xf64>
    %c = train.read_param @c : tensor<4xf64>
    %x1 = train.add %x, %s : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %x2 = train.add %x1, %b : (tensor<2x3x4xf64>, tensor<3x1xf64>) -> tensor<2x3x4xf64>
    %x3 = train.add %c, %x2 : (tensor<4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %y = train.tanh %x3 : tensor<2x3x4xf64>
    return %y : tensor<2x3x4xf64>
  }
}

// -----

// Broadcast parameters as minuend and as subtrahend.
module @sub_broadcast {
  train.param @shift trainable : tensor<2x3x4xf64>
  train.param @p trainable : tensor<3x1xf64>
  train.param @q trainable : tensor<1x4xf64>
  func.func @forward(%x: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
    %s = train.read_param @shift : tensor<2x3x4xf64>
    %p = train.read_param @p : tensor<3x1xf64>
    %q = train.read_param @q : tensor<1x4xf64>
    %x1 = train.add %x, %s : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %x2 = train.sub %p, %x1 : (tensor<3x1xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %x3 = train.sub %x2, %q : (tensor<2x3x4xf64>, tensor<1x4xf64>) -> tensor<2x3x4xf64>
    %y = train.tanh %x3 : tensor<2x3x4xf64>
    return %y : tensor<2x3x4xf64>
  }
}

// -----

// Broadcast scaling on both sides and a square (one value as both
// operands).
module @mul_broadcast {
  train.param @shift trainable : tensor<2x3x4xf64>
  train.param @w trainable : tensor<1x3x1xf64>
  train.param @v trainable : tensor<4xf64>
  func.func @forward(%x: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
    %s = train.read_param @shift : tensor<2x3x4xf64>
    %w = train.read_param @w : tensor<1x3x1xf64>
    %v = train.read_param @v : tensor<4xf64>
    %x1 = train.add %x, %s : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %x2 = train.mul %x1, %w : (tensor<2x3x4xf64>, tensor<1x3x1xf64>) -> tensor<2x3x4xf64>
    %x3 = train.mul %v, %x2 : (tensor<4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %y = train.mul %x3, %x3 : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    return %y : tensor<2x3x4xf64>
  }
}

// -----

// Division by a broadcast parameter (kept away from zero by its initial
// value) and of a broadcast parameter by a tensor kept in (0.5, 1.5) by a
// sigmoid plus a constant.
module @div_broadcast {
  train.param @shift trainable : tensor<2x3x4xf64>
  train.param @d trainable : tensor<3x1xf64> = dense<[[1.5], [-1.25], [2.0]]>
  train.param @n trainable : tensor<4xf64>
  train.param @e trainable : tensor<2x3x4xf64>
  func.func @forward(%x: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
    %s = train.read_param @shift : tensor<2x3x4xf64>
    %d = train.read_param @d : tensor<3x1xf64>
    %n = train.read_param @n : tensor<4xf64>
    %e = train.read_param @e : tensor<2x3x4xf64>
    %half = train.constant dense<5.000000e-01> : tensor<f64>
    %x1 = train.add %x, %s : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %q1 = train.div %x1, %d : (tensor<2x3x4xf64>, tensor<3x1xf64>) -> tensor<2x3x4xf64>
    %e1 = train.sigmoid %e : tensor<2x3x4xf64>
    %e2 = train.add %e1, %half : (tensor<2x3x4xf64>, tensor<f64>) -> tensor<2x3x4xf64>
    %q2 = train.div %n, %e2 : (tensor<4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %y = train.add %q1, %q2 : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    return %y : tensor<2x3x4xf64>
  }
}

// -----

// Maximum with broadcast parameters on either side, and of a value with
// itself: a tie, where each operand takes half the gradient (torch.maximum),
// so that the sum is the identity's gradient that finite differences see.
module @maximum_broadcast {
  train.param @shift trainable : tensor<2x3x4xf64>
  train.param @p trainable : tensor<3x1xf64>
  train.param @q trainable : tensor<4xf64>
  func.func @forward(%x: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
    %s = train.read_param @shift : tensor<2x3x4xf64>
    %p = train.read_param @p : tensor<3x1xf64>
    %q = train.read_param @q : tensor<4xf64>
    %x1 = train.add %x, %s : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %x2 = train.maximum %x1, %p : (tensor<2x3x4xf64>, tensor<3x1xf64>) -> tensor<2x3x4xf64>
    %x3 = train.maximum %q, %x2 : (tensor<4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %x4 = train.maximum %x3, %x3 : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %y = train.tanh %x4 : tensor<2x3x4xf64>
    return %y : tensor<2x3x4xf64>
  }
}

// -----

// Minimum with broadcast parameters on either side, and a tie of a value
// with itself.
module @minimum_broadcast {
  train.param @shift trainable : tensor<2x3x4xf64>
  train.param @p trainable : tensor<1x4xf64>
  train.param @q trainable : tensor<3x1xf64>
  func.func @forward(%x: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
    %s = train.read_param @shift : tensor<2x3x4xf64>
    %p = train.read_param @p : tensor<1x4xf64>
    %q = train.read_param @q : tensor<3x1xf64>
    %x1 = train.add %x, %s : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %x2 = train.minimum %p, %x1 : (tensor<1x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %x3 = train.minimum %x2, %q : (tensor<2x3x4xf64>, tensor<3x1xf64>) -> tensor<2x3x4xf64>
    %x4 = train.minimum %x3, %x3 : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %y = train.tanh %x4 : tensor<2x3x4xf64>
    return %y : tensor<2x3x4xf64>
  }
}

// -----

// ONNX Clip with tensor bounds as imported: maximum with a 0-d lower bound,
// then minimum with a 0-d upper bound, both trainable.
module @clip_tensor_bounds {
  train.param @shift trainable : tensor<2x3x4xf64>
  train.param @lo trainable : tensor<f64> = dense<-0.5>
  train.param @hi trainable : tensor<f64> = dense<0.75>
  func.func @forward(%x: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
    %s = train.read_param @shift : tensor<2x3x4xf64>
    %lo = train.read_param @lo : tensor<f64>
    %hi = train.read_param @hi : tensor<f64>
    %x1 = train.add %x, %s : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %x2 = train.maximum %x1, %lo : (tensor<2x3x4xf64>, tensor<f64>) -> tensor<2x3x4xf64>
    %x3 = train.minimum %x2, %hi : (tensor<2x3x4xf64>, tensor<f64>) -> tensor<2x3x4xf64>
    %y = train.mul %x3, %x1 : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    return %y : tensor<2x3x4xf64>
  }
}

// -----

// Ties with a constant: each parameter starts equal to the constant it is
// compared with, a kink where the central difference is the mean of the
// one-sided slopes, half the gradient: torch.maximum/minimum's even split.
module @select_ties {
  train.param @p trainable : tensor<4xf64> = dense<[0.5, -1.0, 2.0, 0.25]>
  train.param @q trainable : tensor<4xf64> = dense<[0.5, -1.0, 2.0, 0.25]>
  func.func @forward(%x: tensor<2x4xf64>) -> tensor<2x4xf64> {
    %p = train.read_param @p : tensor<4xf64>
    %q = train.read_param @q : tensor<4xf64>
    %c = train.constant dense<[0.5, -1.0, 2.0, 0.25]> : tensor<4xf64>
    %a = train.maximum %p, %c : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
    %b = train.minimum %c, %q : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
    %x1 = train.mul %x, %a : (tensor<2x4xf64>, tensor<4xf64>) -> tensor<2x4xf64>
    %y = train.add %x1, %b : (tensor<2x4xf64>, tensor<4xf64>) -> tensor<2x4xf64>
    return %y : tensor<2x4xf64>
  }
}
