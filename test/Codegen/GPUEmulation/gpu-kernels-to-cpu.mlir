// RUN: traincc-opt %s -split-input-file -verify-diagnostics -traincc-gpu-kernels-to-cpu | FileCheck %s

// Tests that a kernel becomes a function of its arguments and twelve
// indices (block id, thread id, grid size, block size; x, y, z) standing for
// the gpu id and dimension ops, that globals the kernels use are kept, and
// that everything else (host functions, launches) goes.
// CHECK-NOT: gpu.container_module
// CHECK: memref.global "private" constant @one
// CHECK-LABEL: func.func @k(
// CHECK-SAME: %[[X:[^:]*]]: memref<64xf32>,
// CHECK-SAME: %[[BX:[^:]*]]: index, %{{[^:]*}}: index, %{{[^:]*}}: index,
// CHECK-SAME: %[[TX:[^:]*]]: index, %{{[^:]*}}: index, %{{[^:]*}}: index,
// CHECK-SAME: %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index,
// CHECK-SAME: %[[NX:[^:]*]]: index, %{{[^:]*}}: index, %{{[^:]*}}: index)
// CHECK-SAME: attributes {traincc.emulated_kernel}
// CHECK: %[[B:.*]] = arith.muli %[[BX]], %[[NX]] : index
// CHECK: %[[I:.*]] = arith.addi %[[B]], %[[TX]] : index
// CHECK: memref.store %{{.*}}, %[[X]][%[[I]]]
// CHECK: return
// CHECK-NOT: func.func @host
// CHECK-NOT: traincc_emu.barrier
module attributes {gpu.container_module} {
  func.func @host(%x: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @traincc_kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<64xf32>)
    return
  }
  gpu.module @traincc_kernels {
    memref.global "private" constant @one : memref<f32> = dense<1.0>
    gpu.func @k(%x: memref<64xf32>) kernel {
      %bx = gpu.block_id x
      %tx = gpu.thread_id x
      %nx = gpu.block_dim x
      %b = arith.muli %bx, %nx : index
      %i = arith.addi %b, %tx : index
      %g = memref.get_global @one : memref<f32>
      %v = memref.load %g[] : memref<f32>
      memref.store %v, %x[%i] : memref<64xf32>
      gpu.return
    }
  }
}

// -----

// Tests that a kernel whose threads synchronise is marked cooperative with
// the byte size of each workgroup buffer (256 x f32, 3 x i64), takes the
// buffers after its own arguments as plain memrefs, gets its private
// buffers on the stack, and calls the barrier hook's function at each
// barrier, at the top level and in loops; no GPU memory space is left.
// CHECK-LABEL: func.func @k(
// CHECK-SAME: %[[X:[^:]*]]: memref<64xf32>, %[[SH:[^:]*]]: memref<256xf32>, %[[SH2:[^:]*]]: memref<3xi64>,
// CHECK-SAME: %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index,
// CHECK-SAME: %[[TX:[^:]*]]: index, %{{[^:]*}}: index, %{{[^:]*}}: index,
// CHECK-SAME: attributes {traincc.cooperative_kernel = array<i64: 1024, 24>, traincc.emulated_kernel}
// CHECK: %[[P:.*]] = memref.alloca() : memref<4xf32>
// CHECK: %[[V:.*]] = memref.load %[[X]][%[[TX]]] : memref<64xf32>
// CHECK: memref.store %[[V]], %[[SH]][%[[TX]]] : memref<256xf32>
// CHECK: memref.store %[[V]], %[[P]]
// CHECK: memref.store %{{.*}}, %[[SH2]]
// CHECK: %[[SUB:.*]] = memref.subview %[[SH]][8] [8] [1] : memref<256xf32> to memref<8xf32, strided<[1], offset: 8>>
// CHECK: call @traincc_emu.barrier() : () -> ()
// CHECK: scf.for
// CHECK: memref.load %[[SUB]]
// CHECK: call @traincc_emu.barrier() : () -> ()
// CHECK: }
// CHECK: return
// CHECK: func.func private @traincc_emu.barrier()
// CHECK-NOT: gpu.address_space
module attributes {gpu.container_module} {
  gpu.module @traincc_kernels {
    gpu.func @k(%x: memref<64xf32>)
        workgroup(%sh : memref<256xf32, #gpu.address_space<workgroup>>,
                  %sh2 : memref<3xi64, #gpu.address_space<workgroup>>)
        private(%p : memref<4xf32, #gpu.address_space<private>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %tx = gpu.thread_id x
      %v = memref.load %x[%tx] : memref<64xf32>
      memref.store %v, %sh[%tx] : memref<256xf32, #gpu.address_space<workgroup>>
      memref.store %v, %p[%c0] : memref<4xf32, #gpu.address_space<private>>
      %t64 = arith.index_cast %tx : index to i64
      memref.store %t64, %sh2[%c0] : memref<3xi64, #gpu.address_space<workgroup>>
      %sub = memref.subview %sh[8] [8] [1] : memref<256xf32, #gpu.address_space<workgroup>> to memref<8xf32, strided<[1], offset: 8>, #gpu.address_space<workgroup>>
      gpu.barrier
      scf.for %i = %c0 to %c8 step %c1 {
        %w = memref.load %sub[%i] : memref<8xf32, strided<[1], offset: 8>, #gpu.address_space<workgroup>>
        memref.store %w, %x[%i] : memref<64xf32>
        gpu.barrier
      }
      gpu.return
    }
  }
}

// -----

// Tests that a barrier alone (no shared memory) makes a kernel cooperative,
// with no workgroup buffers.
// CHECK-LABEL: func.func @sync(
// CHECK-SAME: attributes {traincc.cooperative_kernel = array<i64>, traincc.emulated_kernel}
// CHECK: call @traincc_emu.barrier()
module attributes {gpu.container_module} {
  gpu.module @traincc_kernels {
    gpu.func @sync(%x: memref<64xf32>) kernel {
      gpu.barrier
      gpu.return
    }
  }
}

// -----

// Tests that a workgroup buffer of dynamic size is refused: the emulation
// sizes each block's shared area when it compiles.
module attributes {gpu.container_module} {
  gpu.module @traincc_kernels {
    // expected-error @+1 {{workgroup buffers of dynamic shape or layout cannot be emulated}}
    gpu.func @k(%n: index) workgroup(%sh : memref<?xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}

// -----

// Tests that other gpu ops (warp shuffles) are refused.
module attributes {gpu.container_module} {
  gpu.module @traincc_kernels {
    gpu.func @k(%x: memref<64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : i32
      %c32 = arith.constant 32 : i32
      %v = memref.load %x[%c0] : memref<64xf32>
      // expected-error @+1 {{'gpu.shuffle' cannot be emulated}}
      %s, %ok = gpu.shuffle xor %v, %c1, %c32 : f32
      memref.store %s, %x[%c0] : memref<64xf32>
      gpu.return
    }
  }
}
