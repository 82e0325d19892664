// RUN: traincc-opt %s -split-input-file -traincc-fuse-gpu-launches | FileCheck %s

// Tests that two launches that share no buffer become one over both grids:
// blocks [0, 2) run the first, blocks [2, 5) the second (its block index
// shifted back by 2).
// CHECK-LABEL: func.func @side_by_side
// CHECK: gpu.launch blocks(%[[BX:[^,]*]], %{{.*}}) in (%{{[^ ]*}} = %c5{{[_0-9]*}}, {{.*}} threads({{.*}}) in (%{{[^ ]*}} = %c256{{[_0-9]*}},
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %arg0
// CHECK: %[[SHIFTED:.*]] = arith.subi %[[BX]], %{{.*}} : index
// CHECK: arith.muli %[[SHIFTED]]
// CHECK: memref.store %{{.*}}, %arg1
// CHECK-NOT: gpu.launch
func.func @side_by_side(%a: memref<512xf32>, %b: memref<768xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %n = arith.constant 256 : index
    %zero = arith.constant 0.0 : f32
    %base = arith.muli %bx, %n : index
    %i = arith.addi %base, %tx : index
    memref.store %zero, %a[%i] : memref<512xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c3, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %n = arith.constant 256 : index
    %one = arith.constant 1.0 : f32
    %base = arith.muli %bx, %n : index
    %i = arith.addi %base, %tx : index
    memref.store %one, %b[%i] : memref<768xf32>
    gpu.terminator
  }
  return
}

// -----

// Tests that a single-block launch that reads what a single-block launch
// wrote runs after it in the same block, behind a barrier; the narrower
// one runs on its 32 threads only.
// CHECK-LABEL: func.func @chain_of_single_blocks
// CHECK: gpu.launch
// CHECK-SAME: threads(%[[TX:[^,]*]], %{{.*}}) in (%{{[^ ]*}} = %c64{{[_0-9]*}},
// CHECK: %[[ACTIVE:.*]] = arith.cmpi ult, %[[TX]], %{{.*}} : index
// CHECK: scf.if %[[ACTIVE]]
// CHECK: memref.store %{{.*}}, %arg0[%[[TX]]]
// CHECK: gpu.barrier
// CHECK: memref.load %arg0
// CHECK: memref.store %{{.*}}, %arg1[%[[TX]]]
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
func.func @chain_of_single_blocks(%a: memref<32xf32>, %b: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %zero = arith.constant 0.0 : f32
    memref.store %zero, %a[%tx] : memref<32xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %v = memref.load %a[%c0] : memref<32xf32>
    memref.store %v, %b[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// Tests that launches over several blocks that depend on each other stay
// apart (no barrier orders blocks), and that a later independent launch
// joins the latest of them, not the first, which it could not pass: the
// first writes the workspace range [0, 1024) that the third reads.
// CHECK-LABEL: func.func @dependent_blocks
// CHECK: gpu.launch blocks({{.*}}) in (%{{[^ ]*}} = %c2{{[_0-9]*}},
// CHECK: gpu.launch blocks({{.*}}) in (%{{[^ ]*}} = %c4{{[_0-9]*}},
// CHECK: memref.load
// CHECK: memref.store
// CHECK: memref.load
// CHECK: memref.store
// CHECK-NOT: gpu.launch
func.func @dependent_blocks(%ws: memref<4096xi8> {train.gpu_buffer = "workspace"}) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %o = arith.constant 0 : index
    %n = arith.constant 128 : index
    %a = memref.view %ws[%o][] : memref<4096xi8> to memref<256xf32>
    %zero = arith.constant 0.0 : f32
    %base = arith.muli %bx, %n : index
    %i = arith.addi %base, %tx : index
    memref.store %zero, %a[%i] : memref<256xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %o = arith.constant 0 : index
    %o1 = arith.constant 1024 : index
    %n = arith.constant 128 : index
    %a = memref.view %ws[%o][] : memref<4096xi8> to memref<256xf32>
    %b = memref.view %ws[%o1][] : memref<4096xi8> to memref<256xf32>
    %base = arith.muli %bx, %n : index
    %i = arith.addi %base, %tx : index
    %v = memref.load %a[%i] : memref<256xf32>
    memref.store %v, %b[%i] : memref<256xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %o2 = arith.constant 2048 : index
    %o3 = arith.constant 3072 : index
    %n = arith.constant 128 : index
    %c = memref.view %ws[%o2][] : memref<4096xi8> to memref<256xf32>
    %d = memref.view %ws[%o3][] : memref<4096xi8> to memref<256xf32>
    %base = arith.muli %bx, %n : index
    %i = arith.addi %base, %tx : index
    %v = memref.load %c[%i] : memref<256xf32>
    memref.store %v, %d[%i] : memref<256xf32>
    gpu.terminator
  }
  return
}

// -----

// Tests that a launch with barriers (a block reduction over shared memory)
// does not merge with a wider launch, whose threads past its block would
// skip its barriers, and that a 2-D grid is left as it is.
// CHECK-LABEL: func.func @barriers_and_2d_grids
// CHECK-COUNT-3: gpu.launch
func.func @barriers_and_2d_grids(%a: memref<64xf32>, %b: memref<256xf32>, %c: memref<4x4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%shared : memref<64xf32, #gpu.address_space<workgroup>>) {
    %zero = arith.constant 0.0 : f32
    memref.store %zero, %shared[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %v = memref.load %shared[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %v, %a[%tx] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %one = arith.constant 1.0 : f32
    memref.store %one, %b[%tx] : memref<256xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c4, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %one = arith.constant 1.0 : f32
    memref.store %one, %c[%bx, %by] : memref<4x4xf32>
    gpu.terminator
  }
  return
}

// -----

// Tests that a one-thread-per-output launch that reads only the element
// the same thread of the launch before stored (same grid, guard and
// index) runs in the same threads after it, with no barrier: one launch
// over the same 2 blocks.
// CHECK-LABEL: func.func @same_thread_chain
// CHECK: gpu.launch blocks({{.*}}) in (%{{[^ ]*}} = %c2{{[_0-9]*}},
// CHECK: memref.store %{{.*}}, %arg1
// CHECK-NOT: gpu.barrier
// CHECK: memref.load %arg1
// CHECK: memref.store %{{.*}}, %arg2
// CHECK-NOT: gpu.launch
func.func @same_thread_chain(%x: memref<512xf32>, %t: memref<512xf32>, %y: memref<512xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %n = arith.constant 256 : index
    %total = arith.constant 512 : index
    %base = arith.muli %bx, %n : index
    %i = arith.addi %base, %tx : index
    %in = arith.cmpi ult, %i, %total : index
    scf.if %in {
      %v = memref.load %x[%i] : memref<512xf32>
      %d = arith.addf %v, %v : f32
      memref.store %d, %t[%i] : memref<512xf32>
    }
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %n = arith.constant 256 : index
    %total = arith.constant 512 : index
    %base = arith.muli %bx, %n : index
    %i = arith.addi %base, %tx : index
    %in = arith.cmpi ult, %i, %total : index
    scf.if %in {
      %v = memref.load %t[%i] : memref<512xf32>
      %m = arith.mulf %v, %v : f32
      memref.store %m, %y[%i] : memref<512xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// Tests that a launch that reads an element another thread stored (the
// mirrored one) stays a launch of its own: only the end of a launch
// orders the threads of different blocks.
// CHECK-LABEL: func.func @neighbour_read
// CHECK-COUNT-2: gpu.launch blocks
func.func @neighbour_read(%x: memref<512xf32>, %t: memref<512xf32>, %y: memref<512xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %n = arith.constant 256 : index
    %total = arith.constant 512 : index
    %base = arith.muli %bx, %n : index
    %i = arith.addi %base, %tx : index
    %in = arith.cmpi ult, %i, %total : index
    scf.if %in {
      %v = memref.load %x[%i] : memref<512xf32>
      memref.store %v, %t[%i] : memref<512xf32>
    }
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %n = arith.constant 256 : index
    %last = arith.constant 511 : index
    %total = arith.constant 512 : index
    %base = arith.muli %bx, %n : index
    %i = arith.addi %base, %tx : index
    %in = arith.cmpi ult, %i, %total : index
    scf.if %in {
      %mirrored = arith.subi %last, %i : index
      %v = memref.load %t[%mirrored] : memref<512xf32>
      memref.store %v, %y[%i] : memref<512xf32>
    }
    gpu.terminator
  }
  return
}
