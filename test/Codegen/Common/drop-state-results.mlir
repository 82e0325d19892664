// RUN: traincc-opt %s -split-input-file -verify-diagnostics -traincc-drop-state-results | FileCheck %s

// Tests that a state result that is its own argument (updated in place) is
// dropped, while other results stay.
// CHECK-LABEL: func.func @in_place
// CHECK-SAME: (%[[W:.*]]: memref<4xf32> {train.state = @w}, %[[L:.*]]: memref<f32>) -> memref<f32> {
// CHECK-NEXT: return %[[L]] : memref<f32>{{$}}
func.func @in_place(%w: memref<4xf32> {train.state = @w}, %loss: memref<f32>) -> (memref<f32>, memref<4xf32> {train.state = @w}) {
  return %loss, %w : memref<f32>, memref<4xf32>
}

// -----

// Tests that a state update bufferization had to copy is an error rather
// than a silently lost update.
// expected-error @+1 {{the update of @w was not done in place by bufferization}}
func.func @copied(%w: memref<4xf32> {train.state = @w}) -> (memref<4xf32> {train.state = @w}) {
  %copy = memref.alloc() : memref<4xf32>
  memref.copy %w, %copy : memref<4xf32> to memref<4xf32>
  return %copy : memref<4xf32>
}
