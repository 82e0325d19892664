// Gradient-check cases for the losses themselves, on trainable logits and
// predictions (softmax_cross_entropy_backward, mse_backward).

// Cross-entropy with large logits (logsumexp must not overflow); f16 and
// bf16 cannot hold 300 + x precisely enough for the gradient to mean much.
// gradcheck: loss=cross-entropy
// gradcheck: dtypes=f64,f32
module @cross_entropy {
  train.param @logits trainable : tensor<4x5xf64>
  func.func @forward(%x: tensor<4x5xf64>) -> tensor<4x5xf64> {
    %l = train.read_param @logits : tensor<4x5xf64>
    %big = train.constant dense<3.000000e+02> : tensor<f64>
    %x1 = train.add %x, %big : (tensor<4x5xf64>, tensor<f64>) -> tensor<4x5xf64>
    %y = train.add %x1, %l : (tensor<4x5xf64>, tensor<4x5xf64>) -> tensor<4x5xf64>
    return %y : tensor<4x5xf64>
  }
}

// -----

// gradcheck: loss=mse
module @mse_2d {
  train.param @p trainable : tensor<3x4xf64>
  func.func @forward(%x: tensor<3x4xf64>) -> tensor<3x4xf64> {
    %p = train.read_param @p : tensor<3x4xf64>
    %y = train.add %x, %p : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>
    return %y : tensor<3x4xf64>
  }
}

// -----

// mse chosen by auto for a 3-D output.
module @mse_3d {
  train.param @p trainable : tensor<2x3x4xf64>
  func.func @forward(%x: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
    %p = train.read_param @p : tensor<2x3x4xf64>
    %y = train.mul %x, %p : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    return %y : tensor<2x3x4xf64>
  }
}

// -----

// The model's own scalar output as the loss (loss=output).
module @output_loss {
  train.param @w trainable : tensor<4x1xf64>
  func.func @forward(%x: tensor<1x4xf64>) -> tensor<1x1xf64> {
    %w = train.read_param @w : tensor<4x1xf64>
    %h = train.matmul %x, %w : (tensor<1x4xf64>, tensor<4x1xf64>) -> tensor<1x1xf64>
    %y = train.tanh %h : tensor<1x1xf64>
    return %y : tensor<1x1xf64>
  }
}
