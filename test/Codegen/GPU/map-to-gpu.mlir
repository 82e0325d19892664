// RUN: traincc-opt %s -split-input-file -verify-diagnostics -traincc-map-to-gpu=block-size=128 | FileCheck %s

// Tests that a 2-D parallel nest becomes one launch with one thread per
// iteration (300 iterations: 3 blocks of 128, the last guarded), the
// iteration delinearized with the last loop fastest; that the constants and
// views it uses are cloned in, so it uses only function arguments; and that
// scalar code that writes memory (a 0-d linalg op lowered) becomes a
// single-thread kernel.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[X:.*]]: memref<10x30xf32>, %[[WS:.*]]: memref<1024xi8>)
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[B:.*]] = arith.muli %[[BX]], %[[C128]] : index
// CHECK: %[[I:.*]] = arith.addi %[[B]], %[[TX]] : index
// CHECK: %[[C300:.*]] = arith.constant 300 : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[I]], %[[C300]] : index
// CHECK: scf.if %[[IN]] {
// CHECK: %[[C30:.*]] = arith.constant 30 : index
// CHECK: %[[COL:.*]] = arith.remui %[[I]], %[[C30]] : index
// CHECK: %[[ROW:.*]] = arith.divui %[[I]], %[[C30]] : index
// CHECK: %[[V:.*]] = memref.load %[[X]]
// CHECK: arith.mulf %[[V]], %[[TWO]]
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: memref.view %[[WS]]
// CHECK: memref.load
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @step(%x: memref<10x30xf32>, %ws: memref<1024xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %c30 = arith.constant 30 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c10, %c30) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<10x30xf32>
    %d = arith.mulf %v, %two : f32
    memref.store %d, %x[%i, %j] : memref<10x30xf32>
    scf.reduce
  }
  %s = memref.view %ws[%c0][] : memref<1024xi8> to memref<f32>
  %old = memref.load %s[] : memref<f32>
  %new = arith.addf %old, %two : f32
  memref.store %new, %s[] : memref<f32>
  return
}

// -----

// Tests that a nest without parallel loops (a full reduction) runs in a
// single thread.
// CHECK-LABEL: func.func @sum
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1{{(_[0-9]+)?}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1{{(_[0-9]+)?}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}})
// CHECK: scf.for
func.func @sum(%x: memref<100xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c100 = arith.constant 100 : index
  scf.for %i = %c0 to %c100 step %c1 {
    %v = memref.load %x[%i] : memref<100xf32>
    %acc = memref.load %out[] : memref<f32>
    %s = arith.addf %acc, %v : f32
    memref.store %s, %out[] : memref<f32>
  }
  return
}

// -----

// Tests that a value loaded outside any kernel is loaded again inside the
// kernel that uses it when nothing writes the buffer in between (a counter
// read before it is reset).
// CHECK-LABEL: func.func @repeatable
// CHECK: gpu.launch
// CHECK: %[[N:.*]] = memref.load %{{.*}}[] : memref<f32>
// CHECK: memref.store %[[N]]
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %{{.*}}[] : memref<f32>
func.func @repeatable(%count: memref<f32>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.load %count[] : memref<f32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %n, %y[%i] : memref<4xf32>
    scf.reduce
  }
  memref.store %zero, %count[] : memref<f32>
  return
}

// -----

// Tests that a loaded value a later kernel uses after its buffer was
// overwritten is refused: no kernel can recompute it.
func.func @overwritten(%x: memref<4xf32>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %v = memref.load %x[%c0] : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %zero, %x[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    // expected-error @+1 {{a value computed by scalar device code is used outside it}}
    memref.store %v, %y[%i] : memref<4xf32>
    scf.reduce
  }
  return
}

// -----

// Tests that loop nests without static bounds, and parallel loops that
// carry a reduction, are refused rather than mapped wrongly.
func.func @dynamic_bounds(%x: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{a GPU kernel needs static loop bounds}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %x[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

func.func @carried_reduction(%x: memref<4xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{parallel loops with reductions are not mapped to GPU threads yet}}
  %sum = scf.parallel (%i) = (%c0) to (%c4) step (%c1) init (%zero) -> f32 {
    %v = memref.load %x[%i] : memref<4xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  memref.store %sum, %out[] : memref<f32>
  return
}

// -----

// Tests that a launch already in the function (a tiled kernel) is kept as
// it is, with the constants and views it uses from the function cloned in.
// CHECK-LABEL: func.func @tiled
// CHECK-SAME: (%[[WS:.*]]: memref<1024xi8>)
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%[[SHARED:.*]] : memref<64xf32, #gpu.address_space<workgroup>>)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[V:.*]] = memref.view %[[WS]][%[[ZERO]]][] : memref<1024xi8> to memref<64xf32>
// CHECK: %[[X:.*]] = memref.load %[[V]]
// CHECK: memref.store %[[X]], %[[SHARED]]
// CHECK: gpu.barrier
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @tiled(%ws: memref<1024xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %v = memref.view %ws[%c0][] : memref<1024xi8> to memref<64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%shared : memref<64xf32, #gpu.address_space<workgroup>>) {
    %x = memref.load %v[%tx] : memref<64xf32>
    memref.store %x, %shared[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    gpu.terminator
  }
  return
}
