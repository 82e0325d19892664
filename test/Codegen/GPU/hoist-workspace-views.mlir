// RUN: traincc-opt %s -split-input-file -traincc-hoist-workspace-views | FileCheck %s

// Tests that a launch's workspace views are made before it, one per offset
// and type (the two reads of A share one), and that the offsets leave the
// kernel: the two launches, equal but for where their temporaries lie,
// are then equal.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[WS:.*]]: memref<2048xi8> {train.gpu_buffer = "workspace"})
// CHECK: %[[O0:.*]] = arith.constant 0 : index
// CHECK: %[[A:.*]] = memref.view %[[WS]][%[[O0]]][] : memref<2048xi8> to memref<128xf32>
// CHECK: %[[O1:.*]] = arith.constant 512 : index
// CHECK: %[[B:.*]] = memref.view %[[WS]][%[[O1]]][] : memref<2048xi8> to memref<128xf32>
// CHECK: gpu.launch
// CHECK-NOT: memref.view
// CHECK-NOT: arith.constant 512
// CHECK: memref.load %[[A]]
// CHECK: memref.load %[[A]]
// CHECK: memref.store %{{.*}}, %[[B]]
// CHECK: gpu.terminator
// CHECK: %[[O2:.*]] = arith.constant 1024 : index
// CHECK: memref.view %[[WS]][%[[O2]]][]
// CHECK: %[[O3:.*]] = arith.constant 1536 : index
// CHECK: memref.view %[[WS]][%[[O3]]][]
// CHECK: gpu.launch
// CHECK-NOT: memref.view
// CHECK: gpu.terminator
func.func @step(%ws: memref<2048xi8> {train.gpu_buffer = "workspace"}) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %o0 = arith.constant 0 : index
    %o1 = arith.constant 512 : index
    %a = memref.view %ws[%o0][] : memref<2048xi8> to memref<128xf32>
    %a2 = memref.view %ws[%o0][] : memref<2048xi8> to memref<128xf32>
    %b = memref.view %ws[%o1][] : memref<2048xi8> to memref<128xf32>
    %v = memref.load %a[%tx] : memref<128xf32>
    %w = memref.load %a2[%tx] : memref<128xf32>
    %s = arith.addf %v, %w : f32
    memref.store %s, %b[%tx] : memref<128xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %o2 = arith.constant 1024 : index
    %o3 = arith.constant 1536 : index
    %a = memref.view %ws[%o2][] : memref<2048xi8> to memref<128xf32>
    %b = memref.view %ws[%o3][] : memref<2048xi8> to memref<128xf32>
    %v = memref.load %a[%tx] : memref<128xf32>
    %s = arith.addf %v, %v : f32
    memref.store %s, %b[%tx] : memref<128xf32>
    gpu.terminator
  }
  return
}

// -----

// Tests that a launch whose views overlap (one temporary read as two
// types), or whose offset is not 16-byte aligned, keeps all its views: a
// kernel argument must not alias another, nor break the plan's alignment.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: memref.view
// CHECK: gpu.launch
// CHECK: memref.view
// CHECK: memref.view
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<2048xi8> to memref<4xf32>
// CHECK: gpu.terminator
func.func @kept(%ws: memref<2048xi8> {train.gpu_buffer = "workspace"}) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %o0 = arith.constant 0 : index
    %a = memref.view %ws[%o0][] : memref<2048xi8> to memref<128xf32>
    %i = memref.view %ws[%o0][] : memref<2048xi8> to memref<128xi32>
    %v = memref.load %a[%tx] : memref<128xf32>
    %w = arith.bitcast %v : f32 to i32
    memref.store %w, %i[%tx] : memref<128xi32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %o4 = arith.constant 4 : index
    %a = memref.view %ws[%o4][] : memref<2048xi8> to memref<4xf32>
    %v = memref.load %a[%tx] : memref<4xf32>
    memref.store %v, %a[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}
