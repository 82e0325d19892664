// RUN: split-file %s %t --leading-lines
// RUN: traincc-opt %t/main.mlir -split-input-file -verify-diagnostics -traincc-append-loss | FileCheck %s
// RUN: traincc-opt %t/main.mlir -split-input-file -verify-diagnostics -traincc-append-loss=loss=auto | FileCheck %s
// RUN: traincc-opt %t/explicit.mlir -split-input-file -traincc-append-loss=loss=mse | FileCheck %s --check-prefix=MSE
// RUN: traincc-opt %t/explicit.mlir -split-input-file -traincc-append-loss=loss=cross-entropy | FileCheck %s --check-prefix=CE
// RUN: traincc-opt %t/softmax.mlir -split-input-file -verify-diagnostics -traincc-append-loss=loss=cross-entropy | FileCheck %s --check-prefix=SOFTMAX
// RUN: traincc-opt %t/output.mlir -split-input-file -verify-diagnostics -traincc-append-loss=loss=output | FileCheck %s --check-prefix=OUT
// RUN: not traincc-opt %t/unknown-loss.mlir -traincc-append-loss=loss=hinge 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: traincc-opt %t/cross-entropy-errors.mlir -split-input-file -verify-diagnostics -traincc-append-loss=loss=cross-entropy
// RUN: traincc-opt %t/mse-errors.mlir -verify-diagnostics -traincc-append-loss=loss=mse

//--- main.mlir

// Tests that auto picks mean cross-entropy for [N, C] logits: @loss takes
// int64 labels and returns the mean loss, @eval_step returns the outputs and
// each sample's loss, and @forward is gone.
// CHECK-LABEL: module attributes {train.loss = "cross-entropy"}
// CHECK-NOT: func.func @forward
// CHECK: func.func @loss(%[[X:.*]]: tensor<4x3xf32> {train.name = "input"}, %[[T:.*]]: tensor<4xi64> {train.name = "target"}) -> tensor<f32>
// CHECK: %[[Y:.*]] = train.relu %[[X]]
// CHECK: %[[L:.*]] = train.softmax_cross_entropy %[[Y]], %[[T]] reduction mean
// CHECK: return %[[L]] : tensor<f32>
// CHECK: func.func @eval_step(%[[EX:.*]]: tensor<4x3xf32> {train.name = "input"}, %[[ET:.*]]: tensor<4xi64> {train.name = "target"}) -> (tensor<4x3xf32> {train.name = "logits"}, tensor<4xf32> {train.name = "loss"})
// CHECK: %[[EY:.*]] = train.relu %[[EX]]
// CHECK: %[[EL:.*]] = train.softmax_cross_entropy %[[EY]], %[[ET]] reduction none : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<4xf32>
// CHECK: return %[[EY]], %[[EL]]
// CHECK-NOT: func.func @forward
func.func @forward(%x: tensor<4x3xf32> {train.name = "input"}) -> (tensor<4x3xf32> {train.name = "logits"}) {
  %y = train.relu %x : tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// Tests that auto uses a scalar output as the loss itself: no target, and
// every sample of @eval_step carries the batch loss.
// CHECK-LABEL: module attributes {train.loss = "output"}
// CHECK: func.func @loss(%[[X:.*]]: tensor<4x3xf32>) -> tensor<f32>
// CHECK-NOT: train.softmax_cross_entropy
// CHECK-NOT: train.mse
// CHECK: %[[S:.*]] = train.reduce_sum %[[X]]
// CHECK: return %[[S]] : tensor<f32>
// CHECK: func.func @eval_step(%{{.*}}: tensor<4x3xf32>) -> (tensor<f32>, tensor<4xf32> {train.name = "loss"})
// CHECK: %[[ES:.*]] = train.reduce_sum
// CHECK: %[[B:.*]] = train.broadcast_to %[[ES]] : tensor<f32> -> tensor<4xf32>
// CHECK: return %[[ES]], %[[B]]
func.func @forward(%x: tensor<4x3xf32>) -> tensor<f32> {
  %s = train.reduce_sum %x axes [0, 1] : (tensor<4x3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// Tests that a one-element vector counts as a scalar output: the loss is
// reshaped to 0-d.
// CHECK-LABEL: module attributes {train.loss = "output"}
// CHECK: func.func @loss(%{{.*}}: tensor<4x3xf32>) -> tensor<f32>
// CHECK: %[[V:.*]] = train.reshape %{{.*}} : tensor<f32> -> tensor<1xf32>
// CHECK: %[[R:.*]] = train.reshape %[[V]] : tensor<1xf32> -> tensor<f32>
// CHECK: return %[[R]] : tensor<f32>
func.func @forward(%x: tensor<4x3xf32>) -> tensor<1xf32> {
  %t = train.reduce_sum %x axes [0, 1] : (tensor<4x3xf32>) -> tensor<f32>
  %r = train.reshape %t : tensor<f32> -> tensor<1xf32>
  return %r : tensor<1xf32>
}

// -----

// Tests that auto picks mse for outputs that are neither scalars nor
// [N, C] logits (here [N, 1] and [N, C, L]): the target has the output's
// type, and @eval_step gets one mean loss per sample.
// CHECK-LABEL: module attributes {train.loss = "mse"}
// CHECK: func.func @loss(%[[X:.*]]: tensor<4x1xf32>, %[[T:.*]]: tensor<4x1xf32> {train.name = "target"}) -> tensor<f32>
// CHECK: train.mse %[[X]], %[[T]] reduction mean : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<f32>
// CHECK: func.func @eval_step
// CHECK: train.mse %{{.*}}, %{{.*}} reduction none : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4xf32>
// CHECK-NOT: train.softmax_cross_entropy
func.func @forward(%x: tensor<4x1xf32>) -> tensor<4x1xf32> {
  return %x : tensor<4x1xf32>
}

// -----

// CHECK-LABEL: module attributes {train.loss = "mse"}
// CHECK: func.func @loss(%{{.*}}: tensor<4x3x5xf32>, %{{.*}}: tensor<4x3x5xf32> {train.name = "target"})
// CHECK: train.mse {{.*}} reduction mean
func.func @forward(%x: tensor<4x3x5xf32>) -> tensor<4x3x5xf32> {
  return %x : tensor<4x3x5xf32>
}

// -----

// Tests that the loss applies to the first output; @eval_step returns every
// output, keeping their names, then the per-sample losses.
// CHECK-LABEL: module attributes {train.loss = "cross-entropy"}
// CHECK: func.func @loss(%{{.*}}: tensor<2x5xf32>, %[[T:.*]]: tensor<2xi64> {train.name = "target"}) -> tensor<f32>
// CHECK: %[[L:.*]] = train.softmax_cross_entropy %{{.*}}, %[[T]] reduction mean
// CHECK-NEXT: return %[[L]] : tensor<f32>
// CHECK: func.func @eval_step({{.*}}) -> (tensor<2x5xf32> {train.name = "logits"}, tensor<2x5xf32> {train.name = "probs"}, tensor<2xf32> {train.name = "loss"})
// CHECK: %[[P:.*]] = train.softmax
// CHECK: %[[EL:.*]] = train.softmax_cross_entropy
// CHECK: return %{{.*}}, %[[P]], %[[EL]]
func.func @forward(%x: tensor<2x5xf32>) -> (tensor<2x5xf32> {train.name = "logits"}, tensor<2x5xf32> {train.name = "probs"}) {
  %p = train.softmax %x axis 1 : tensor<2x5xf32>
  return %x, %p : tensor<2x5xf32>, tensor<2x5xf32>
}

// -----

// Tests that a module without @forward is refused.
// expected-error @+1 {{no @forward function to train}}
module {
  func.func @predict(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
    return %x : tensor<2x5xf32>
  }
}

// -----

// Tests that a @forward declaration without a body is refused.
// expected-error @+1 {{@forward has no body to train}}
func.func private @forward(%x: tensor<2x5xf32>) -> tensor<2x5xf32>

// -----

// Tests that a @forward without outputs is refused.
// expected-error @+1 {{@forward has no output to train on}}
func.func @forward(%x: tensor<2x5xf32>) {
  return
}

// -----

// Tests that an integer first output is refused.
// expected-error @+1 {{the first output must be a float tensor, got 'tensor<2xi64>'}}
func.func @forward(%x: tensor<2xi64>) -> tensor<2xi64> {
  return %x : tensor<2xi64>
}

//--- explicit.mlir

// Tests that loss=mse applies to [N, C] logits too.
// MSE-LABEL: module attributes {train.loss = "mse"}
// MSE: func.func @loss(%[[X:.*]]: tensor<4x3xf32>, %[[T:.*]]: tensor<4x3xf32> {train.name = "target"})
// MSE: train.mse %[[X]], %[[T]] reduction mean
// MSE-NOT: train.softmax_cross_entropy
// CE-LABEL: module attributes {train.loss = "cross-entropy"}
// CE: func.func @loss(%[[X:.*]]: tensor<4x3xf32>, %[[T:.*]]: tensor<4xi64> {train.name = "target"})
// CE: train.softmax_cross_entropy %[[X]], %[[T]] reduction mean
// CE-NOT: train.mse
func.func @forward(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  return %x : tensor<4x3xf32>
}

// -----

// Tests that loss=cross-entropy takes a [N, 1] output that auto would train
// with mse.
// MSE-LABEL: module attributes {train.loss = "mse"}
// MSE: train.mse {{.*}} reduction mean : (tensor<4x1xf32>, tensor<4x1xf32>)
// CE-LABEL: module attributes {train.loss = "cross-entropy"}
// CE: train.softmax_cross_entropy {{.*}} reduction mean : (tensor<4x1xf32>, tensor<4xi64>)
func.func @forward(%x: tensor<4x1xf32>) -> tensor<4x1xf32> {
  return %x : tensor<4x1xf32>
}

//--- softmax.mlir

// Tests that cross-entropy on an output that already is a softmax warns
// that softmax would be applied twice, and says what to do.
// SOFTMAX-LABEL: module attributes {train.loss = "cross-entropy"}
// SOFTMAX: train.softmax_cross_entropy
func.func @forward(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-warning @+1 {{the model's output is a Softmax and the cross-entropy loss applies softmax again (it takes logits, like torch.nn.CrossEntropyLoss); remove the final Softmax from the model before exporting it, or train with --loss mse}}
  %y = train.softmax %x axis 1 : tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// Tests that a final LogSoftmax trains without a warning: cross-entropy on
// log-probabilities is PyTorch's LogSoftmax and NLLLoss.
// SOFTMAX-LABEL: module attributes {train.loss = "cross-entropy"}
// SOFTMAX: train.softmax_cross_entropy
func.func @forward(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %y = train.log_softmax %x axis 1 : tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

//--- output.mlir

// Tests that loss=output trains a scalar output.
// OUT-LABEL: module attributes {train.loss = "output"}
// OUT: func.func @loss(%{{.*}}: tensor<4x3xf32>) -> tensor<f32>
// OUT-NOT: train.name = "target"
func.func @forward(%x: tensor<4x3xf32>) -> tensor<f32> {
  %s = train.reduce_sum %x axes [0, 1] : (tensor<4x3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// Tests that loss=output refuses a non-scalar output.
// expected-error @+1 {{--loss output needs a scalar first output, got 'tensor<4x3xf32>'}}
func.func @forward(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  return %x : tensor<4x3xf32>
}

//--- unknown-loss.mlir

// Tests that an unknown loss is refused when the option is parsed.
// UNKNOWN: for the --loss option: Cannot find option named 'hinge'!
func.func @forward(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  return %x : tensor<4x3xf32>
}

//--- cross-entropy-errors.mlir

// Tests that loss=cross-entropy refuses outputs that are not [N, C] logits.
// expected-error @+1 {{cross-entropy needs [N, C] logits, the first output is 'tensor<4x3x5xf32>'}}
func.func @forward(%x: tensor<4x3x5xf32>) -> tensor<4x3x5xf32> {
  return %x : tensor<4x3x5xf32>
}

// -----

// expected-error @+1 {{cross-entropy needs [N, C] logits, the first output is 'tensor<f32>'}}
func.func @forward(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}

//--- mse-errors.mlir

// Tests that loss=mse refuses a 0-d output: it has no samples.
// expected-error @+1 {{a loss over samples needs a batch axis, the first output is 'tensor<f32>'}}
func.func @forward(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
