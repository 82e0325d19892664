// Gradient-check cases for train.gemm (every transpose flag, alpha, beta and
// shape of C) and train.matmul (batched, broadcast batch axes).

// Defaults: no transposes, alpha = beta = 1, C a row vector.
module @gemm_default {
  train.param @shift trainable : tensor<3x4xf64>
  train.param @b trainable : tensor<4x5xf64>
  train.param @c trainable : tensor<5xf64>
  func.func @forward(%x: tensor<3x4xf64>) -> tensor<3x5xf64> {
    %s = train.read_param @shift : tensor<3x4xf64>
    %b = train.read_param @b : tensor<4x5xf64>
    %c = train.read_param @c : tensor<5xf64>
    %a = train.add %x, %s : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>
    %y = train.gemm %a, %b, %c : (tensor<3x4xf64>, tensor<4x5xf64>, tensor<5xf64>) -> tensor<3x5xf64>
    return %y : tensor<3x5xf64>
  }
}

// -----

// trans_a, alpha 0.5, beta 1.5, a full C.
module @gemm_trans_a {
  train.param @shift trainable : tensor<4x3xf64>
  train.param @b trainable : tensor<4x5xf64>
  train.param @c trainable : tensor<3x5xf64>
  func.func @forward(%x: tensor<4x3xf64>) -> tensor<3x5xf64> {
    %s = train.read_param @shift : tensor<4x3xf64>
    %b = train.read_param @b : tensor<4x5xf64>
    %c = train.read_param @c : tensor<3x5xf64>
    %a = train.add %x, %s : (tensor<4x3xf64>, tensor<4x3xf64>) -> tensor<4x3xf64>
    %y = train.gemm %a, %b, %c {trans_a = true, alpha = 5.0e-01 : f32, beta = 1.5 : f32} : (tensor<4x3xf64>, tensor<4x5xf64>, tensor<3x5xf64>) -> tensor<3x5xf64>
    return %y : tensor<3x5xf64>
  }
}

// -----

// trans_b, alpha 2, beta 0.5, C a column (under cross-entropy a column
// would only shift each row of logits, a gradient of zero: mse).
// gradcheck: loss=mse
module @gemm_trans_b {
  train.param @shift trainable : tensor<3x4xf64>
  train.param @b trainable : tensor<5x4xf64>
  train.param @c trainable : tensor<3x1xf64>
  func.func @forward(%x: tensor<3x4xf64>) -> tensor<3x5xf64> {
    %s = train.read_param @shift : tensor<3x4xf64>
    %b = train.read_param @b : tensor<5x4xf64>
    %c = train.read_param @c : tensor<3x1xf64>
    %a = train.add %x, %s : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>
    %y = train.gemm %a, %b, %c {trans_b = true, alpha = 2.0 : f32, beta = 5.0e-01 : f32} : (tensor<3x4xf64>, tensor<5x4xf64>, tensor<3x1xf64>) -> tensor<3x5xf64>
    return %y : tensor<3x5xf64>
  }
}

// -----

// Both transposes, alpha 1.5, beta 2, C a 1 x N row.
module @gemm_trans_ab {
  train.param @shift trainable : tensor<4x3xf64>
  train.param @b trainable : tensor<5x4xf64>
  train.param @c trainable : tensor<1x5xf64>
  func.func @forward(%x: tensor<4x3xf64>) -> tensor<3x5xf64> {
    %s = train.read_param @shift : tensor<4x3xf64>
    %b = train.read_param @b : tensor<5x4xf64>
    %c = train.read_param @c : tensor<1x5xf64>
    %a = train.add %x, %s : (tensor<4x3xf64>, tensor<4x3xf64>) -> tensor<4x3xf64>
    %y = train.gemm %a, %b, %c {trans_a = true, trans_b = true, alpha = 1.5 : f32, beta = 2.0 : f32} : (tensor<4x3xf64>, tensor<5x4xf64>, tensor<1x5xf64>) -> tensor<3x5xf64>
    return %y : tensor<3x5xf64>
  }
}

// -----

// No C, alpha 0.25; both factors trainable, the loss mse.
// gradcheck: loss=mse
module @gemm_no_c {
  train.param @a trainable : tensor<3x4xf64>
  train.param @b trainable : tensor<4x2xf64>
  func.func @forward(%x: tensor<3x4xf64>) -> tensor<3x2xf64> {
    %a = train.read_param @a : tensor<3x4xf64>
    %b = train.read_param @b : tensor<4x2xf64>
    %a1 = train.mul %a, %x : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>
    %y = train.gemm %a1, %b {alpha = 2.5e-01 : f32} : (tensor<3x4xf64>, tensor<4x2xf64>) -> tensor<3x2xf64>
    return %y : tensor<3x2xf64>
  }
}

// -----

// A weight used twice (tied): its gradient sums both uses.
module @gemm_tied_weight {
  train.param @shift trainable : tensor<3x4xf64>
  train.param @w trainable : tensor<4x4xf64>
  func.func @forward(%x: tensor<3x4xf64>) -> tensor<3x4xf64> {
    %s = train.read_param @shift : tensor<3x4xf64>
    %w = train.read_param @w : tensor<4x4xf64>
    %a = train.add %x, %s : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>
    %h = train.gemm %a, %w : (tensor<3x4xf64>, tensor<4x4xf64>) -> tensor<3x4xf64>
    %t = train.tanh %h : tensor<3x4xf64>
    %y = train.gemm %t, %w {trans_b = true} : (tensor<3x4xf64>, tensor<4x4xf64>) -> tensor<3x4xf64>
    return %y : tensor<3x4xf64>
  }
}

// -----

// Plain 2-D matmul.
// gradcheck: loss=mse
module @matmul_2d {
  train.param @shift trainable : tensor<3x4xf64>
  train.param @w trainable : tensor<4x2xf64>
  func.func @forward(%x: tensor<3x4xf64>) -> tensor<3x2xf64> {
    %s = train.read_param @shift : tensor<3x4xf64>
    %w = train.read_param @w : tensor<4x2xf64>
    %a = train.add %x, %s : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>
    %y = train.matmul %a, %w : (tensor<3x4xf64>, tensor<4x2xf64>) -> tensor<3x2xf64>
    return %y : tensor<3x2xf64>
  }
}

// -----

// Batched, equal batch axes.
module @matmul_batched {
  train.param @shift trainable : tensor<2x3x4xf64>
  train.param @w trainable : tensor<2x4x2xf64>
  func.func @forward(%x: tensor<2x3x4xf64>) -> tensor<2x3x2xf64> {
    %s = train.read_param @shift : tensor<2x3x4xf64>
    %w = train.read_param @w : tensor<2x4x2xf64>
    %a = train.add %x, %s : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %y = train.matmul %a, %w : (tensor<2x3x4xf64>, tensor<2x4x2xf64>) -> tensor<2x3x2xf64>
    return %y : tensor<2x3x2xf64>
  }
}

// -----

// A matrix right operand shared by every batch: its gradient sums them.
module @matmul_broadcast_rhs {
  train.param @shift trainable : tensor<2x3x4xf64>
  train.param @w trainable : tensor<4x2xf64>
  func.func @forward(%x: tensor<2x3x4xf64>) -> tensor<2x3x2xf64> {
    %s = train.read_param @shift : tensor<2x3x4xf64>
    %w = train.read_param @w : tensor<4x2xf64>
    %a = train.add %x, %s : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %y = train.matmul %a, %w : (tensor<2x3x4xf64>, tensor<4x2xf64>) -> tensor<2x3x2xf64>
    return %y : tensor<2x3x2xf64>
  }
}

// -----

// Batch axes that broadcast on both sides: [2, 1] against [3].
module @matmul_broadcast_both {
  train.param @a trainable : tensor<2x1x3x4xf64>
  train.param @w trainable : tensor<3x4x2xf64>
  func.func @forward(%x: tensor<2x1x3x4xf64>) -> tensor<2x3x3x2xf64> {
    %a = train.read_param @a : tensor<2x1x3x4xf64>
    %w = train.read_param @w : tensor<3x4x2xf64>
    %a1 = train.add %x, %a : (tensor<2x1x3x4xf64>, tensor<2x1x3x4xf64>) -> tensor<2x1x3x4xf64>
    %y = train.matmul %a1, %w : (tensor<2x1x3x4xf64>, tensor<3x4x2xf64>) -> tensor<2x3x3x2xf64>
    return %y : tensor<2x3x3x2xf64>
  }
}

// -----

// A size-1 batch axis on the left widened by the right.
module @matmul_broadcast_lhs {
  train.param @a trainable : tensor<1x3x4xf64>
  train.param @w trainable : tensor<2x4x2xf64>
  func.func @forward(%x: tensor<2x4x2xf64>) -> tensor<2x3x2xf64> {
    %a = train.read_param @a : tensor<1x3x4xf64>
    %w = train.read_param @w : tensor<2x4x2xf64>
    %w1 = train.add %x, %w : (tensor<2x4x2xf64>, tensor<2x4x2xf64>) -> tensor<2x4x2xf64>
    %y = train.matmul %a, %w1 : (tensor<1x3x4xf64>, tensor<2x4x2xf64>) -> tensor<2x3x2xf64>
    return %y : tensor<2x3x2xf64>
  }
}

// -----

// C of one element ([1]) and a 0-d C: their gradients sum every element.
// gradcheck: loss=mse
module @gemm_scalar_c {
  train.param @shift trainable : tensor<3x4xf64>
  train.param @b trainable : tensor<4x5xf64>
  train.param @c trainable : tensor<1xf64>
  train.param @d trainable : tensor<f64>
  func.func @forward(%x: tensor<3x4xf64>) -> tensor<3x5xf64> {
    %s = train.read_param @shift : tensor<3x4xf64>
    %b = train.read_param @b : tensor<4x5xf64>
    %c = train.read_param @c : tensor<1xf64>
    %d = train.read_param @d : tensor<f64>
    %a = train.add %x, %s : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>
    %h = train.gemm %a, %b, %c {beta = 2.5e-01 : f32} : (tensor<3x4xf64>, tensor<4x5xf64>, tensor<1xf64>) -> tensor<3x5xf64>
    %y = train.gemm %a, %b, %d {alpha = 5.0e-01 : f32} : (tensor<3x4xf64>, tensor<4x5xf64>, tensor<f64>) -> tensor<3x5xf64>
    %z = train.mul %h, %y : (tensor<3x5xf64>, tensor<3x5xf64>) -> tensor<3x5xf64>
    return %z : tensor<3x5xf64>
  }
}
