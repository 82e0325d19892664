// RUN: traincc-opt %s -split-input-file -verify-diagnostics -traincc-prepare-gpu-steps | FileCheck %s

// Tests that temporaries become views at 256-byte aligned offsets of a new
// workspace argument, scalars are read from the parameter block at the
// offsets of ModelABI.h, copies become linalg.copy, and deallocations go.
// CHECK-LABEL: func.func @apply_step
// CHECK-SAME: (%[[W:.*]]: memref<4xf32> {train.state = @w}, %[[LR:.*]]: f32 {train.name = "lr"}, %[[STEP:.*]]: i64 {train.name = "step"}, %[[WS:.*]]: memref<768xi8> {train.gpu_buffer = "workspace"}, %[[P:.*]]: memref<64xi8> {train.gpu_buffer = "params"})
// CHECK-SAME: attributes {train.workspace_bytes = 768 : i64}
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[LRV:.*]] = memref.view %[[P]][%[[C0]]][] : memref<64xi8> to memref<f32>
// CHECK-DAG: %[[LRX:.*]] = memref.load %[[LRV]][] : memref<f32>
// CHECK-DAG: %[[STEPV:.*]] = memref.view %[[P]][%[[C8]]][] : memref<64xi8> to memref<i64>
// CHECK-DAG: memref.load %[[STEPV]][] : memref<i64>
// CHECK: %[[T0:.*]] = memref.view %[[WS]][%{{.*}}][] : memref<768xi8> to memref<4xf32>
// CHECK: %[[T1:.*]] = memref.view %[[WS]][%{{.*}}][] : memref<768xi8> to memref<100xf32>
// CHECK: linalg.copy ins(%[[W]] : memref<4xf32>) outs(%[[T0]] : memref<4xf32>)
// CHECK: arith.mulf %[[LRX]], %[[LRX]]
// CHECK-NOT: memref.dealloc
// CHECK-NOT: memref.alloc
func.func @apply_step(%w: memref<4xf32> {train.state = @w}, %lr: f32 {train.name = "lr"}, %step: i64 {train.name = "step"}) {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<100xf32>
  memref.copy %w, %a : memref<4xf32> to memref<4xf32>
  %sq = arith.mulf %lr, %lr : f32
  %c0 = arith.constant 0 : index
  memref.store %sq, %a[%c0] : memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<100xf32>
  return
}

// -----

// Tests that a scalar argument that is not a step parameter is refused:
// the launch plan has no place for it.
// expected-error @+1 {{GPU steps take no scalar argument alpha}}
func.func @other_scalar(%alpha: f32 {train.name = "alpha"}) {
  return
}

// -----

func.func @dynamic(%n: index) {
  // expected-error @+1 {{a GPU step needs temporaries of static shape, found 'memref<?xf32>'}}
  %a = memref.alloc(%n) : memref<?xf32>
  return
}
