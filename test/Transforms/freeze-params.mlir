// RUN: split-file %s %t --leading-lines
// RUN: traincc-opt %t/main.mlir -split-input-file -verify-diagnostics -traincc-freeze-params='pattern=fc[.]weight|bn[.].*' | FileCheck %s
// RUN: traincc-opt %t/main.mlir -split-input-file -traincc-freeze-params | FileCheck %s --check-prefix=NONE
// RUN: traincc-opt %t/invalid-regex.mlir -verify-diagnostics -traincc-freeze-params='pattern=(conv'
// RUN: traincc-opt %t/unbalanced-regex.mlir -verify-diagnostics -traincc-freeze-params='pattern=fc.weight)|(.*'

//--- main.mlir

// Tests that a parameter whose whole name matches is frozen, and that a
// match inside a longer name is not enough.
// CHECK-LABEL: module @dense
// CHECK: train.param @fc.weight frozen
// CHECK: train.param @fc.bias trainable
// CHECK: train.param @fc.weight2 trainable
// CHECK: train.param @head.fc.weight trainable
// NONE-LABEL: module @dense
// NONE-NOT: frozen
module @dense {
  train.param @fc.weight trainable : tensor<10x4xf32>
  train.param @fc.bias trainable : tensor<10xf32>
  train.param @fc.weight2 trainable : tensor<10x4xf32>
  train.param @head.fc.weight trainable : tensor<10x4xf32>
}

// -----

// Tests that only trainable parameters change kind: BatchNorm running
// statistics match the regex but stay state.
// CHECK-LABEL: module @norm
// CHECK: train.param @bn.weight frozen
// CHECK: train.param @bn.bias frozen
// CHECK: train.param @bn.running_mean running_mean
// CHECK: train.param @bn.running_var running_var
// CHECK-NOT: frozen
// NONE-LABEL: module @norm
// NONE-NOT: frozen
module @norm {
  train.param @bn.weight trainable : tensor<4xf32>
  train.param @bn.bias trainable : tensor<4xf32>
  train.param @bn.running_mean running_mean : tensor<4xf32>
  train.param @bn.running_var running_var : tensor<4xf32>
  train.param @conv.weight trainable : tensor<4x1x3x3xf32>
}

// -----

// Tests that a regex matching no trainable parameter is a warning, not an
// error: here the only match is already frozen.
// CHECK-LABEL: module @nothing
// CHECK: train.param @fc.weight frozen
// CHECK: train.param @conv.weight trainable
// NONE-LABEL: module @nothing
// expected-warning @+1 {{--freeze 'fc[.]weight|bn[.].*' matches no trainable parameter}}
module @nothing {
  train.param @fc.weight frozen : tensor<10x4xf32>
  train.param @conv.weight trainable : tensor<4x1x3x3xf32>
}

//--- invalid-regex.mlir

// Tests that an invalid regex is an error.
// expected-error @+1 {{invalid --freeze regex '(conv': parentheses not balanced}}
module {
  train.param @conv.weight trainable : tensor<4x1x3x3xf32>
}

//--- unbalanced-regex.mlir

// Tests that a regex is checked as written: anchoring must not turn an
// unbalanced pattern into a valid one that freezes every parameter.
// expected-error @+1 {{invalid --freeze regex 'fc.weight)|(.*': parentheses not balanced}}
module {
  train.param @conv.weight trainable : tensor<4x1x3x3xf32>
}
