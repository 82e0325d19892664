//===- TrainGradientOps.td - losses and gradient ops -------*- tablegen -*-===//
//
// Losses and the ops that reverse-mode differentiation emits. Each gradient
// op takes the upstream gradient first (`grad`, the derivative of the loss by
// the forward op's result) and whatever forward values its rule needs; it
// computes one derivative, so that later passes fuse and schedule them
// freely. Ops whose result shape cannot be recovered from their operands
// (strided convolution, padded pooling) carry it in their result type, and
// their verifiers re-run the forward shape function to check it.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_DIALECT_TRAIN_IR_TRAINGRADIENTOPS_TD
#define TRAINCC_DIALECT_TRAIN_IR_TRAINGRADIENTOPS_TD

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def Train_SoftmaxCrossEntropyOp
    : Train_ComputeOp<"softmax_cross_entropy", [Train_Differentiable]> {
  let summary = "cross-entropy of softmax(logits) against class labels";
  let description = [{
    Logits are [N, C], labels int64 [N] in [0, C). With `mean` reduction the
    result is a scalar (PyTorch `nn.CrossEntropyLoss()`); with `none` it has
    one loss per sample. Computed as logsumexp - logit[label], stable for
    large logits.

    ```mlir
    %loss = train.softmax_cross_entropy %logits, %labels reduction mean
        : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$logits,
                       StaticShapeTensorOf<[I64]>:$labels,
                       Train_ReductionAttr:$reduction);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels `reduction` custom<Reduction>($reduction) attr-dict
    `:` functional-type(operands, results)
  }];
}

def Train_SoftmaxCrossEntropyBackwardOp
    : Train_ComputeOp<"softmax_cross_entropy_backward"> {
  let summary = "gradient of the mean cross-entropy by the logits";
  let description = [{
    `(softmax(logits) - onehot(labels)) * grad / N`, where `grad` is the
    scalar upstream gradient of the mean loss.

    ```mlir
    %dlogits = train.softmax_cross_entropy_backward %grad, %logits, %labels
        : (tensor<f32>, tensor<8x10xf32>, tensor<8xi64>) -> tensor<8x10xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$logits,
                       StaticShapeTensorOf<[I64]>:$labels);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $logits `,` $labels attr-dict `:` functional-type(operands, results)
  }];
}

def Train_MSEOp : Train_ComputeOp<"mse", [Train_Differentiable]> {
  let summary = "mean squared error";
  let description = [{
    With `mean` reduction, the mean over every element (PyTorch
    `nn.MSELoss()`); with `none`, the mean over each sample's elements, one
    loss per sample as for `train.softmax_cross_entropy` (PyTorch's
    `reduction='none'` would keep every element). The mean of the per-sample
    losses is the `mean` loss.

    ```mlir
    %loss = train.mse %prediction, %target reduction mean
        : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$prediction,
                       Train_FloatTensor:$target,
                       Train_ReductionAttr:$reduction);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $prediction `,` $target `reduction` custom<Reduction>($reduction)
    attr-dict
    `:` functional-type(operands, results)
  }];
}

def Train_MSEBackwardOp : Train_ComputeOp<"mse_backward"> {
  let summary = "gradient of the mean squared error by the prediction";
  let description = [{
    `2 * (prediction - target) * grad / numel`.

    ```mlir
    %d = train.mse_backward %grad, %prediction, %target
        : (tensor<f32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$prediction,
                       Train_FloatTensor:$target);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $prediction `,` $target attr-dict
    `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Reductions and broadcasts (gradients of broadcasting ops)
//===----------------------------------------------------------------------===//

def Train_ReduceSumOp : Train_ComputeOp<"reduce_sum"> {
  let summary = "sums over the given axes, which are dropped";
  let description = [{
    ```mlir
    %db = train.reduce_sum %dy axes [0, 2, 3]
        : (tensor<8x16x4x4xf32>) -> tensor<16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat =
      "$input `axes` $axes attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Train_SumToOp : Train_Op<"sum_to", [Train_Differentiable, Pure]> {
  let summary = "sums a broadcast result back to an operand's shape";
  let description = [{
    The adjoint of numpy broadcasting: the result shape must broadcast to
    the input shape; axes it lacks or holds as 1 are summed. ONNX ReduceSum
    and ReduceMean import as one (their gradient is a broadcast_to).

    ```mlir
    %db = train.sum_to %dy : tensor<8x16xf32> -> tensor<16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Train_BroadcastToOp
    : Train_Op<"broadcast_to", [Train_Differentiable, Pure]> {
  let summary = "numpy broadcast to a larger static shape";
  let description = [{
    ```mlir
    %y = train.broadcast_to %x : tensor<8x16x1x1xf32> -> tensor<8x16x4x4xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Gradients of layers
//===----------------------------------------------------------------------===//

def Train_ConvBackwardDataOp
    : Train_Op<"conv_backward_data", [Pure, Train_Differentiable]> {
  let summary = "gradient of a convolution by its input";
  let description = [{
    The transposed convolution of `grad` with `weight`; the result type is
    the forward input's, which strides make ambiguous, so it is written.
    Attributes are the forward convolution's. ONNX ConvTranspose imports as
    one, so it has a gradient rule of its own: a convolution of the result's
    gradient for `grad`, a filter gradient for `weight`.

    ```mlir
    %dx = train.conv_backward_data %dy, %w strides [1, 1] pads [1, 1, 1, 1]
        dilations [1, 1] groups 1
        : (tensor<8x16x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<8x3x8x8xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$weight,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, I64Attr:$groups);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $weight `strides` $strides `pads` $pads `dilations` $dilations
    `groups` $groups attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_ConvBackwardFilterOp : Train_Op<"conv_backward_filter", [Pure]> {
  let summary = "gradient of a convolution by its weight";
  let description = [{
    Correlates the forward input with `grad`; the result type is the
    weight's. Attributes are the forward convolution's.

    ```mlir
    %dw = train.conv_backward_filter %x, %dy strides [1, 1] pads [1, 1, 1, 1]
        dilations [1, 1] groups 1
        : (tensor<8x3x8x8xf32>, tensor<8x16x8x8xf32>) -> tensor<16x3x3x3xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_FloatTensor:$grad,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, I64Attr:$groups);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $grad `strides` $strides `pads` $pads `dilations` $dilations
    `groups` $groups attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_BatchNormBackwardOp : Train_Op<"batch_norm_backward", [
    Pure, AllTypesMatch<["grad", "input", "input_grad"]>,
    AllTypesMatch<["mean", "variance", "scale", "scale_grad", "bias_grad"]>]> {
  let summary = "gradients of training-mode batch normalisation";
  let description = [{
    For y = scale * (x - mean) / sqrt(variance + epsilon) + bias where mean
    and variance are the (biased) statistics of x itself: the input gradient
    includes the paths through the statistics. Also yields the scale and
    bias gradients.

    ```mlir
    %dx, %dscale, %dbias = train.batch_norm_backward %dy, %x, %mean, %var,
        %scale epsilon 1.0e-05 : tensor<8x16x4x4xf32>, tensor<16xf32>
    ```

    `synchronized` (the backward of a synchronized `bn_stats`): the mean
    and variance are the global batch's, so the input gradient's
    per-channel sums of dy and dy * (x - mean) are the replicas' means of
    theirs (PyTorch SyncBatchNorm all-reduces them); the scale and bias
    gradients stay this replica's, averaged later with every other
    gradient.
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$input,
                       Train_FloatTensor:$mean, Train_FloatTensor:$variance,
                       Train_FloatTensor:$scale, F32Attr:$epsilon,
                       UnitAttr:$synchronized);
  let results = (outs Train_FloatTensor:$input_grad,
                      Train_FloatTensor:$scale_grad,
                      Train_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $mean `,` $variance `,` $scale `epsilon` $epsilon
    (`synchronized` $synchronized^)? attr-dict `:` type($input) `,`
    type($scale)
  }];
  let hasVerifier = 1;
}

// Elementwise gradients of activations: `grad` times the derivative at the
// forward input (or output, where that is cheaper and exact).
class Train_ActivationBackwardOp<string mnemonic>
    : Train_Op<mnemonic, [Pure, Elementwise, SameOperandsAndResultType]> {
  let results = (outs Train_FloatTensor:$result);
}

def Train_ReluBackwardOp : Train_ActivationBackwardOp<"relu_backward"> {
  let summary = "grad where input > 0, else 0";
  let description = [{
    ```mlir
    %dx = train.relu_backward %dy, %x : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$input);
  let assemblyFormat = "$grad `,` $input attr-dict `:` type($result)";
}

def Train_LeakyReluBackwardOp
    : Train_ActivationBackwardOp<"leaky_relu_backward"> {
  let summary = "grad where input > 0, else alpha * grad";
  let description = [{
    ```mlir
    %dx = train.leaky_relu_backward %dy, %x alpha 1.0e-02 : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$input,
                       F32Attr:$alpha);
  let assemblyFormat =
      "$grad `,` $input `alpha` $alpha attr-dict `:` type($result)";
}

def Train_ClipBackwardOp : Train_ActivationBackwardOp<"clip_backward"> {
  let summary = "grad strictly inside (min, max), else 0";
  let description = [{
    Matches PyTorch's hardtanh/ReLU6 (what Clip exports come from in CNNs):
    the gradient is zero at the bounds themselves.

    ```mlir
    %dx = train.clip_backward %dy, %x min 0.0 max 6.0 : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$input,
                       OptionalAttr<F32Attr>:$min, OptionalAttr<F32Attr>:$max);
  let assemblyFormat = [{
    $grad `,` $input (`min` $min^)? (`max` $max^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Train_SigmoidBackwardOp
    : Train_ActivationBackwardOp<"sigmoid_backward"> {
  let summary = "grad * y * (1 - y) for the forward output y";
  let description = [{
    ```mlir
    %dx = train.sigmoid_backward %dy, %y : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$output);
  let assemblyFormat = "$grad `,` $output attr-dict `:` type($result)";
}

def Train_TanhBackwardOp : Train_ActivationBackwardOp<"tanh_backward"> {
  let summary = "grad * (1 - y * y) for the forward output y";
  let description = [{
    ```mlir
    %dx = train.tanh_backward %dy, %y : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$output);
  let assemblyFormat = "$grad `,` $output attr-dict `:` type($result)";
}

def Train_ErfBackwardOp : Train_ActivationBackwardOp<"erf_backward"> {
  let summary = "grad * 2 / sqrt(pi) * exp(-x * x) for the forward input x";
  let description = [{
    ```mlir
    %dx = train.erf_backward %dy, %x : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$input);
  let assemblyFormat = "$grad `,` $input attr-dict `:` type($result)";
}

def Train_SoftmaxBackwardOp : Train_Op<"softmax_backward",
    [Pure, SameOperandsAndResultType]> {
  let summary = "y * (grad - sum(grad * y)) along the axis";
  let description = [{
    ```mlir
    %dx = train.softmax_backward %dy, %y axis 1 : tensor<8x10xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$output,
                       I64Attr:$axis);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat =
      "$grad `,` $output `axis` $axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Train_LogSoftmaxBackwardOp : Train_Op<"log_softmax_backward",
    [Pure, SameOperandsAndResultType]> {
  let summary = "grad - exp(y) * sum(grad) along the axis";
  let description = [{
    ```mlir
    %dx = train.log_softmax_backward %dy, %y axis 1 : tensor<8x10xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$output,
                       I64Attr:$axis);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat =
      "$grad `,` $output `axis` $axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Train_MaxPoolBackwardOp : Train_Op<"max_pool_backward", [Pure]> {
  let summary = "routes each window's gradient to its maximum";
  let description = [{
    The maximum is found again in the forward input; on ties the first
    position in the window (row-major) wins, as in PyTorch. Attributes are
    the forward pooling's; the result has the input's type.

    ```mlir
    %dx = train.max_pool_backward %dy, %x kernel [2, 2] strides [2, 2]
        pads [0, 0, 0, 0] dilations [1, 1]
        : (tensor<8x16x4x4xf32>, tensor<8x16x8x8xf32>) -> tensor<8x16x8x8xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $input `kernel` $kernel_shape `strides` $strides `pads` $pads
    `dilations` $dilations attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_AvgPoolBackwardOp : Train_Op<"avg_pool_backward", [Pure]> {
  let summary = "spreads each window's gradient over its elements";
  let description = [{
    Attributes are the forward pooling's; the result type is the forward
    input's.

    ```mlir
    %dx = train.avg_pool_backward %dy kernel [2, 2] strides [2, 2]
        pads [0, 0, 0, 0] : (tensor<8x16x4x4xf32>) -> tensor<8x16x8x8xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                       DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `kernel` $kernel_shape `strides` $strides `pads` $pads attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_ReduceMaxBackwardOp : Train_Op<"reduce_max_backward", [Pure]> {
  let summary = "spreads reduce_max's gradient evenly over the maxima";
  let description = [{
    With `output` = reduce_max(`input`): each input element equal to its
    maximum gets grad / (number of elements equal to that maximum), the
    others 0 (PyTorch's amax gradient).

    ```mlir
    %dx = train.reduce_max_backward %dy, %x, %y
        : (tensor<8x64x1x1xf32>, tensor<8x64x7x7xf32>, tensor<8x64x1x1xf32>)
        -> tensor<8x64x7x7xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$input,
                       Train_FloatTensor:$output);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $input `,` $output attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_GatherBackwardOp : Train_Op<"gather_backward", [Pure]> {
  let summary = "scatter-adds a gather's gradient into zeros of the data";
  let description = [{
    Row v of the result (along `axis`) is the sum of the gradient slices
    whose index is v: repeated indices (a token used twice) add up.

    ```mlir
    %dtable = train.gather_backward %dy, %tokens axis 0
        : (tensor<8x32x64xf32>, tensor<8x32xi64>) -> tensor<1000x64xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad,
                       StaticShapeTensorOf<[I32, I64]>:$indices,
                       I64Attr:$axis);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $indices `axis` $axis attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Train_SliceBackwardOp : Train_Op<"slice_backward", [Pure]> {
  let summary = "scatters a slice's gradient into zeros of the input shape";
  let description = [{
    ```mlir
    %dx = train.slice_backward %dy starts [0, 2] ends [8, 10] steps [1, 2]
        : (tensor<8x4xf32>) -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `starts` $starts `ends` $ends `steps` $steps attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // TRAINCC_DIALECT_TRAIN_IR_TRAINGRADIENTOPS_TD
