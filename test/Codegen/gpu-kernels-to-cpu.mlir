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

// Tests that a kernel that synchronises its threads is refused: running its
// threads one after another would not be the same computation.
module attributes {gpu.container_module} {
  gpu.module @traincc_kernels {
    gpu.func @k(%x: memref<64xf32>) kernel {
      // expected-error @+1 {{'gpu.barrier' cannot be emulated one thread at a time}}
      gpu.barrier
      gpu.return
    }
  }
}
