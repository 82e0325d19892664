// RUN: traincc-opt %s -split-input-file -verify-diagnostics -traincc-pack-gpu-workspace | FileCheck %s

// Tests that temporaries share the workspace when no kernel needs both: A
// lives in the first launch, B in the first two, C in the last two, D in
// the last one (512 bytes each). In order of first use A takes 0, B 512;
// C, once A is dead, 0 again; D, next to C, 512. The workspace argument
// and train.workspace_bytes shrink from 2048 to 1024 bytes, and views
// outside kernels (left over from sinking) do not extend a life.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[WS:.*]]: memref<1024xi8> {train.gpu_buffer = "workspace"})
// CHECK-SAME: attributes {train.workspace_bytes = 1024 : i64}
// CHECK: gpu.launch
// CHECK-DAG: %[[A0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[B0:.*]] = arith.constant 512 : index
// CHECK-DAG: memref.view %[[WS]][%[[A0]]][] : memref<1024xi8> to memref<128xf32>
// CHECK-DAG: memref.view %[[WS]][%[[B0]]][] : memref<1024xi8> to memref<128xf32>
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK-DAG: %[[B1:.*]] = arith.constant 512 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 0 : index
// CHECK-DAG: memref.view %[[WS]][%[[B1]]][] : memref<1024xi8> to memref<128xf32>
// CHECK-DAG: memref.view %[[WS]][%[[C1]]][] : memref<1024xi8> to memref<128xf32>
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK-DAG: %[[C2:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[D2:.*]] = arith.constant 512 : index
// CHECK-DAG: memref.view %[[WS]][%[[C2]]][] : memref<1024xi8> to memref<128xf32>
// CHECK-DAG: memref.view %[[WS]][%[[D2]]][] : memref<1024xi8> to memref<128xf32>
// CHECK: gpu.terminator
func.func @step(%ws: memref<2048xi8> {train.gpu_buffer = "workspace"}) attributes {train.workspace_bytes = 2048 : i64} {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %left = memref.view %ws[%c0][] : memref<2048xi8> to memref<128xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %o0 = arith.constant 0 : index
    %o1 = arith.constant 512 : index
    %a = memref.view %ws[%o0][] : memref<2048xi8> to memref<128xf32>
    %b = memref.view %ws[%o1][] : memref<2048xi8> to memref<128xf32>
    %v = memref.load %a[%tx] : memref<128xf32>
    memref.store %v, %b[%tx] : memref<128xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %o1 = arith.constant 512 : index
    %o2 = arith.constant 1024 : index
    %b = memref.view %ws[%o1][] : memref<2048xi8> to memref<128xf32>
    %c = memref.view %ws[%o2][] : memref<2048xi8> to memref<128xf32>
    %v = memref.load %b[%tx] : memref<128xf32>
    memref.store %v, %c[%tx] : memref<128xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %o2 = arith.constant 1024 : index
    %o3 = arith.constant 1536 : index
    %c = memref.view %ws[%o2][] : memref<2048xi8> to memref<128xf32>
    %d = memref.view %ws[%o3][] : memref<2048xi8> to memref<128xf32>
    %v = memref.load %c[%tx] : memref<128xf32>
    memref.store %v, %d[%tx] : memref<128xf32>
    gpu.terminator
  }
  return
}

// -----

// Tests that a workspace view whose offset is not a constant is refused:
// the plan could not tell which temporary it is.
func.func @dynamic_offset(%ws: memref<2048xi8> {train.gpu_buffer = "workspace"}, %at: index) {
  // expected-error @+1 {{a workspace view needs a constant offset and a static shape}}
  %v = memref.view %ws[%at][] : memref<2048xi8> to memref<128xf32>
  return
}

// -----

// Tests that a training step (it writes a gradient accumulator) records
// the workspace bytes alive across the start of the loss, as the CPU plan
// does: A, written by the forward launch and read by the backward one, is
// saved; L, the loss (its first launch starts the backward pass, its last
// copies it to the `loss` out-parameter), is not.
train.param @w trainable : tensor<128xf32>
train.param @w.grad gradient : tensor<128xf32>
// CHECK-LABEL: func.func @micro_step
// CHECK-SAME: train.saved_activation_bytes = 512 : i64
func.func @micro_step(%g: memref<128xf32> {train.state = @w.grad}, %loss: memref<f32> {train.name = "loss"}, %ws: memref<1024xi8> {train.gpu_buffer = "workspace"}) {
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %o0 = arith.constant 0 : index
    %a = memref.view %ws[%o0][] : memref<1024xi8> to memref<128xf32>
    memref.store %cst, %a[%tx] : memref<128xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %o0 = arith.constant 0 : index
    %o1 = arith.constant 512 : index
    %a = memref.view %ws[%o0][] : memref<1024xi8> to memref<128xf32>
    %l = memref.view %ws[%o1][] : memref<1024xi8> to memref<f32>
    %v = memref.load %a[%tx] : memref<128xf32>
    memref.store %v, %l[] : memref<f32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %o0 = arith.constant 0 : index
    %a = memref.view %ws[%o0][] : memref<1024xi8> to memref<128xf32>
    %v = memref.load %a[%tx] : memref<128xf32>
    memref.store %v, %g[%tx] : memref<128xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %o1 = arith.constant 512 : index
    %l = memref.view %ws[%o1][] : memref<1024xi8> to memref<f32>
    %v = memref.load %l[] : memref<f32>
    memref.store %v, %loss[] : memref<f32>
    gpu.terminator
  }
  return
}

// -----

// Tests that a replica collective (--sync-bn) keeps its temporary alive:
// A, written by the first launch, is averaged by the call after the
// second, so B, which only the second launch touches, may not take A's
// memory (it would overwrite the statistics before the collective reads
// them).
// CHECK-LABEL: func.func @collective
// CHECK-SAME: (%[[WS:.*]]: memref<1024xi8> {train.gpu_buffer = "workspace"})
// CHECK: %[[A:.*]] = memref.view %[[WS]][%[[A0:.*]]][] : memref<1024xi8> to memref<128xf32>
// CHECK: gpu.launch
// CHECK: gpu.launch
// CHECK: %[[B0:.*]] = arith.constant 512 : index
// CHECK: memref.view %[[WS]][%[[B0]]][] : memref<1024xi8> to memref<128xf32>
// CHECK: gpu.terminator
// CHECK: %[[V:.*]] = memref.cast %[[A]]
// CHECK: call @traincc_gpu_replica_mean(%[[V]])
func.func private @traincc_gpu_replica_mean(memref<?xf32>)
func.func @collective(%ws: memref<1024xi8> {train.gpu_buffer = "workspace"}) attributes {train.workspace_bytes = 1024 : i64} {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %a = memref.view %ws[%c0][] : memref<1024xi8> to memref<128xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %o0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    %a1 = memref.view %ws[%o0][] : memref<1024xi8> to memref<128xf32>
    memref.store %one, %a1[%tx] : memref<128xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %o1 = arith.constant 512 : index
    %two = arith.constant 2.0 : f32
    %b = memref.view %ws[%o1][] : memref<1024xi8> to memref<128xf32>
    memref.store %two, %b[%tx] : memref<128xf32>
    gpu.terminator
  }
  %values = memref.cast %a : memref<128xf32> to memref<?xf32>
  call @traincc_gpu_replica_mean(%values) : (memref<?xf32>) -> ()
  return
}
