// RUN: traincc-opt %s -split-input-file -verify-diagnostics -traincc-plan-step-memory | FileCheck %s

// Tests that temporaries whose lives do not overlap share the workspace:
// A lives in ops 0-2, B in 2-3, C in 3-4 (1024 bytes each). A takes 0, B
// 1024, and C, once A is dead, 0 again: a 2048-byte workspace instead of
// 3072, passed as a new last argument, and no allocation left.
// CHECK-LABEL: func.func @step
// CHECK-SAME: %[[WS:[^:]*]]: memref<2048xi8> {train.workspace}
// CHECK-SAME: attributes {train.workspace_bytes = 2048 : i64}
// CHECK-NOT: train.saved_activation_bytes
// CHECK: %[[O0:.*]] = arith.constant 0 : index
// CHECK: %[[A:.*]] = memref.view %[[WS]][%[[O0]]][] : memref<2048xi8> to memref<256xf32>
// CHECK: %[[O1:.*]] = arith.constant 1024 : index
// CHECK: %[[B:.*]] = memref.view %[[WS]][%[[O1]]][] : memref<2048xi8> to memref<256xf32>
// CHECK: memref.copy %[[A]], %[[B]]
// CHECK: %[[O2:.*]] = arith.constant 0 : index
// CHECK: %[[C:.*]] = memref.view %[[WS]][%[[O2]]][] : memref<2048xi8> to memref<256xf32>
// CHECK: memref.copy %[[B]], %[[C]]
// CHECK: memref.copy %[[C]], %arg1
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
func.func @step(%in: memref<256xf32>, %out: memref<256xf32>) {
  %a = memref.alloc() : memref<256xf32>
  memref.copy %in, %a : memref<256xf32> to memref<256xf32>
  %b = memref.alloc() : memref<256xf32>
  memref.copy %a, %b : memref<256xf32> to memref<256xf32>
  memref.dealloc %a : memref<256xf32>
  %c = memref.alloc() : memref<256xf32>
  memref.copy %b, %c : memref<256xf32> to memref<256xf32>
  memref.copy %c, %out : memref<256xf32> to memref<256xf32>
  return
}

// -----

// Tests that a temporary lives as long as any view of it: A is read
// through a reshape two ops after its last direct use, so B, allocated in
// between, cannot take A's place.
// CHECK-LABEL: func.func @through_view
// CHECK-SAME: memref<2048xi8> {train.workspace}
// CHECK: arith.constant 0 : index
// CHECK: memref.expand_shape
// CHECK: arith.constant 1024 : index
func.func @through_view(%in: memref<256xf32>, %out: memref<16x16xf32>, %x: memref<256xf32>) {
  %a = memref.alloc() : memref<256xf32>
  memref.copy %in, %a : memref<256xf32> to memref<256xf32>
  %r = memref.expand_shape %a [[0, 1]] output_shape [16, 16] : memref<256xf32> into memref<16x16xf32>
  %b = memref.alloc() : memref<256xf32>
  memref.copy %in, %b : memref<256xf32> to memref<256xf32>
  memref.copy %b, %x : memref<256xf32> to memref<256xf32>
  memref.copy %r, %out : memref<16x16xf32> to memref<16x16xf32>
  return
}

// -----

// Tests that a use inside a loop counts for the whole loop: B, allocated
// and freed in the loop's body, overlaps A, which the loop reads in every
// iteration; B's view stays in the loop, its dealloc goes.
// CHECK-LABEL: func.func @in_loop
// CHECK-SAME: memref<2048xi8> {train.workspace}
// CHECK: scf.for
// CHECK: arith.constant 1024 : index
// CHECK: memref.view
// CHECK-NOT: memref.alloc
func.func @in_loop(%in: memref<256xf32>, %out: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = memref.alloc() : memref<256xf32>
  memref.copy %in, %a : memref<256xf32> to memref<256xf32>
  scf.for %i = %c0 to %c2 step %c1 {
    %b = memref.alloc() : memref<256xf32>
    memref.copy %a, %b : memref<256xf32> to memref<256xf32>
    memref.copy %b, %out : memref<256xf32> to memref<256xf32>
    memref.dealloc %b : memref<256xf32>
  }
  return
}

// -----

// Tests that a training step (it writes a gradient accumulator) records
// the bytes alive across the start of the loss: A (the forward value the
// backward reads) is, B (used before the loss only) is not.
train.param @w trainable : tensor<256xf32>
train.param @w.grad gradient : tensor<256xf32>
// CHECK-LABEL: func.func @micro_step
// CHECK-SAME: train.saved_activation_bytes = 1024 : i64
func.func @micro_step(%w: memref<256xf32> {train.state = @w}, %g: memref<256xf32> {train.state = @w.grad}, %loss: memref<f32> {train.name = "loss"}) {
  %cst = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<256xf32>
  memref.copy %w, %a : memref<256xf32> to memref<256xf32>
  %b = memref.alloc() : memref<256xf32>
  memref.copy %a, %b : memref<256xf32> to memref<256xf32>
  %l = memref.alloc() : memref<f32>
  linalg.fill ins(%cst : f32) outs(%l : memref<f32>)
  memref.copy %a, %g : memref<256xf32> to memref<256xf32>
  memref.copy %l, %loss : memref<f32> to memref<f32>
  return
}

// -----

// Tests that a function without allocations keeps its signature.
// CHECK-LABEL: func.func @no_temporaries(%{{.*}}: memref<4xf32>)
// CHECK-NOT: train.workspace
func.func @no_temporaries(%x: memref<4xf32>) {
  return
}

// -----

func.func @dynamic(%n: index) {
  // expected-error @below {{a step's temporaries need a static shape and the identity layout, not 'memref<?xf32>'}}
  %a = memref.alloc(%n) : memref<?xf32>
  return
}
