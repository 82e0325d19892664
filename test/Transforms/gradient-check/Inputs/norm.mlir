// Gradient-check cases for train.batch_norm in training mode: explicit-
// training-mode turns it into bn_stats -> bn_apply, whose rule is
// batch_norm_backward (input gradient through the batch statistics, scale
// and bias gradients).

// BatchNorm2d on an N x C x H x W input.
module @batch_norm_2d {
  train.param @shift trainable : tensor<3x2x2x3xf64>
  train.param @gamma trainable : tensor<2xf64>
  train.param @beta trainable : tensor<2xf64>
  train.param @mean running_mean : tensor<2xf64> = dense<0.0>
  train.param @var running_var : tensor<2xf64> = dense<1.0>
  func.func @forward(%x: tensor<3x2x2x3xf64>) -> tensor<3x2x2x3xf64> {
    %s = train.read_param @shift : tensor<3x2x2x3xf64>
    %g = train.read_param @gamma : tensor<2xf64>
    %b = train.read_param @beta : tensor<2xf64>
    %m = train.read_param @mean : tensor<2xf64>
    %v = train.read_param @var : tensor<2xf64>
    %x1 = train.add %x, %s : (tensor<3x2x2x3xf64>, tensor<3x2x2x3xf64>) -> tensor<3x2x2x3xf64>
    %y = train.batch_norm %x1, %g, %b, %m, %v epsilon 1.0e-05 momentum 1.0e-01 : (tensor<3x2x2x3xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) -> tensor<3x2x2x3xf64>
    return %y : tensor<3x2x2x3xf64>
  }
}

// -----

// BatchNorm1d on N x C features, with a large epsilon (it enters the
// normaliser) and a cross-entropy loss on its output.
module @batch_norm_1d {
  train.param @shift trainable : tensor<5x3xf64>
  train.param @gamma trainable : tensor<3xf64>
  train.param @beta trainable : tensor<3xf64>
  train.param @mean running_mean : tensor<3xf64> = dense<0.0>
  train.param @var running_var : tensor<3xf64> = dense<1.0>
  func.func @forward(%x: tensor<5x3xf64>) -> tensor<5x3xf64> {
    %s = train.read_param @shift : tensor<5x3xf64>
    %g = train.read_param @gamma : tensor<3xf64>
    %b = train.read_param @beta : tensor<3xf64>
    %m = train.read_param @mean : tensor<3xf64>
    %v = train.read_param @var : tensor<3xf64>
    %x1 = train.add %x, %s : (tensor<5x3xf64>, tensor<5x3xf64>) -> tensor<5x3xf64>
    %y = train.batch_norm %x1, %g, %b, %m, %v epsilon 5.0e-01 momentum 1.0e-01 : (tensor<5x3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> tensor<5x3xf64>
    return %y : tensor<5x3xf64>
  }
}

// -----

// A CNN block: conv (bias) -> BatchNorm -> relu -> max_pool -> reshape ->
// gemm -> cross-entropy, the shape of the Fashion-MNIST example.
module @cnn_block {
  train.param @w trainable : tensor<3x1x3x3xf64>
  train.param @b trainable : tensor<3xf64>
  train.param @gamma trainable : tensor<3xf64>
  train.param @beta trainable : tensor<3xf64>
  train.param @mean running_mean : tensor<3xf64> = dense<0.0>
  train.param @var running_var : tensor<3xf64> = dense<1.0>
  train.param @fc trainable : tensor<4x12xf64>
  train.param @fcb trainable : tensor<4xf64>
  func.func @forward(%x: tensor<2x1x4x4xf64>) -> tensor<2x4xf64> {
    %w = train.read_param @w : tensor<3x1x3x3xf64>
    %b = train.read_param @b : tensor<3xf64>
    %g = train.read_param @gamma : tensor<3xf64>
    %be = train.read_param @beta : tensor<3xf64>
    %m = train.read_param @mean : tensor<3xf64>
    %v = train.read_param @var : tensor<3xf64>
    %fc = train.read_param @fc : tensor<4x12xf64>
    %fcb = train.read_param @fcb : tensor<4xf64>
    %c = train.conv %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x1x4x4xf64>, tensor<3x1x3x3xf64>, tensor<3xf64>) -> tensor<2x3x4x4xf64>
    %n = train.batch_norm %c, %g, %be, %m, %v epsilon 1.0e-05 momentum 1.0e-01 : (tensor<2x3x4x4xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> tensor<2x3x4x4xf64>
    %r = train.relu %n : tensor<2x3x4x4xf64>
    %p = train.max_pool %r kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : (tensor<2x3x4x4xf64>) -> tensor<2x3x2x2xf64>
    %f = train.reshape %p : tensor<2x3x2x2xf64> -> tensor<2x12xf64>
    %y = train.gemm %f, %fc, %fcb {trans_b = true} : (tensor<2x12xf64>, tensor<4x12xf64>, tensor<4xf64>) -> tensor<2x4xf64>
    return %y : tensor<2x4xf64>
  }
}


// -----

// bn-stats=step (statistics pooled over micro-batches for the running
// update only): normalisation, and so the gradient, is unchanged.
// gradcheck: bn-stats=step
module @batch_norm_pooled_stats {
  train.param @shift trainable : tensor<4x2x3xf64>
  train.param @gamma trainable : tensor<2xf64>
  train.param @beta trainable : tensor<2xf64>
  train.param @mean running_mean : tensor<2xf64> = dense<0.0>
  train.param @var running_var : tensor<2xf64> = dense<1.0>
  func.func @forward(%x: tensor<4x2x3xf64>) -> tensor<4x2x3xf64> {
    %s = train.read_param @shift : tensor<4x2x3xf64>
    %g = train.read_param @gamma : tensor<2xf64>
    %b = train.read_param @beta : tensor<2xf64>
    %m = train.read_param @mean : tensor<2xf64>
    %v = train.read_param @var : tensor<2xf64>
    %x1 = train.add %x, %s : (tensor<4x2x3xf64>, tensor<4x2x3xf64>) -> tensor<4x2x3xf64>
    %y = train.batch_norm %x1, %g, %b, %m, %v epsilon 1.0e-05 momentum 1.0e-01 : (tensor<4x2x3xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) -> tensor<4x2x3xf64>
    %t = train.tanh %y : tensor<4x2x3xf64>
    return %t : tensor<4x2x3xf64>
  }
}

// -----

// Batch statistics used beyond BatchNorm (an imported BatchNormalization's
// running-statistic outputs): the bn_stats rule's mean and variance paths.
// Not retyped to f16/bf16, whose statistics are f32 (the text would need
// casts); mixed-precision BatchNorm is covered by the parity tests.
// gradcheck: dtypes=f64,f32
module @bn_stats_used {
  train.param @shift trainable : tensor<2x3x4xf64>
  train.param @w trainable : tensor<3x1xf64>
  func.func @forward(%x: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
    %s = train.read_param @shift : tensor<2x3x4xf64>
    %w = train.read_param @w : tensor<3x1xf64>
    %x0 = train.add %x, %s : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %x1 = train.mul %x0, %w : (tensor<2x3x4xf64>, tensor<3x1xf64>) -> tensor<2x3x4xf64>
    %mean, %var = train.bn_stats %x1 : (tensor<2x3x4xf64>) -> (tensor<3xf64>, tensor<3xf64>)
    %m = train.reshape %mean : tensor<3xf64> -> tensor<3x1xf64>
    %v = train.reshape %var : tensor<3xf64> -> tensor<3x1xf64>
    %c = train.sub %x1, %m : (tensor<2x3x4xf64>, tensor<3x1xf64>) -> tensor<2x3x4xf64>
    %y0 = train.mul %c, %v : (tensor<2x3x4xf64>, tensor<3x1xf64>) -> tensor<2x3x4xf64>
    %y = train.tanh %y0 : tensor<2x3x4xf64>
    return %y : tensor<2x3x4xf64>
  }
}
