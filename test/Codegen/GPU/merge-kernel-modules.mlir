// RUN: traincc-opt %s -split-input-file -verify-diagnostics -traincc-merge-kernel-modules | FileCheck %s

// Tests that kernels of separate modules move into @traincc_kernels, named
// after their old modules, that launches follow them, that a global both
// modules copied is kept once, and that a kernel equal to an earlier one up
// to its name is dropped, its launch pointed at the earlier one.
// CHECK-LABEL: func.func @step
// CHECK: gpu.launch_func @traincc_kernels::@step_kernel blocks
// CHECK: gpu.launch_func @traincc_kernels::@step_kernel blocks
// CHECK: gpu.launch_func @traincc_kernels::@step_kernel_1 blocks
// CHECK: gpu.module @traincc_kernels {
// CHECK-COUNT-1: memref.global "private" constant @one
// CHECK: gpu.func @step_kernel(%{{.*}}: memref<4xf32>) kernel
// CHECK-NOT: gpu.func @step_kernel_0
// CHECK: gpu.func @step_kernel_1(%{{.*}}: memref<4xf32>) kernel
// CHECK-NEXT: memref.get_global @one
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @step(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @step_kernel::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    gpu.launch_func @step_kernel_0::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    gpu.launch_func @step_kernel_1::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    return
  }
  gpu.module @step_kernel {
    memref.global "private" constant @one : memref<f32> = dense<1.0>
    gpu.func @step_kernel(%x: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @step_kernel_0 {
    memref.global "private" constant @one : memref<f32> = dense<1.0>
    gpu.func @step_kernel(%x: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @step_kernel_1 {
    memref.global "private" constant @one : memref<f32> = dense<1.0>
    gpu.func @step_kernel(%x: memref<4xf32>) kernel {
      %one = memref.get_global @one : memref<f32>
      gpu.return
    }
  }
}

// -----

// Tests that workgroup buffers are declared 16-byte aligned (tiles are read
// with vector loads) and private buffers are left alone.
// CHECK-LABEL: func.func @tiled_step
// CHECK: gpu.func @tiled(%{{.*}}: memref<4xf32>) workgroup(%{{.*}}: memref<32xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}}: memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) private(%{{.*}}: memref<2xf32, #gpu.address_space<private>>) kernel
module attributes {gpu.container_module} {
  func.func @tiled_step(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @tiled::@tiled blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    return
  }
  gpu.module @tiled {
    gpu.func @tiled(%x: memref<4xf32>) workgroup(%a: memref<32xbf16, #gpu.address_space<workgroup>>, %b: memref<8xf32, #gpu.address_space<workgroup>>) private(%p: memref<2xf32, #gpu.address_space<private>>) kernel {
      gpu.return
    }
  }
}

// -----

// Tests that two modules defining different globals of one name are an
// error, not a silent pick of one.
module attributes {gpu.container_module} {
  gpu.module @a {
    memref.global "private" constant @c : memref<f32> = dense<1.0>
  }
  gpu.module @b {
    // expected-error @+1 {{kernels define different symbols named c}}
    memref.global "private" constant @c : memref<f32> = dense<2.0>
  }
}

// -----

// Tests that a grid y over CUDA's 65535 blocks is a compile error naming
// the kernel, not a launch that fails on every GPU.
module attributes {gpu.container_module} {
  func.func @step(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %big = arith.constant 70000 : index
    // expected-error @+1 {{kernel 'step_kernel': grid y of 70000 blocks exceeds CUDA's limit of 65535}}
    gpu.launch_func @step_kernel::@step_kernel blocks in (%c1, %big, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    return
  }
  gpu.module @step_kernel {
    gpu.func @step_kernel(%x: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// Tests that more than 1024 threads per block are an error even when
// each dimension is within its own limit.
module attributes {gpu.container_module} {
  func.func @step(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    // expected-error @+1 {{kernel 'step_kernel': 2048 threads per block exceed CUDA's limit of 1024}}
    gpu.launch_func @step_kernel::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c32, %c64, %c1) args(%x : memref<4xf32>)
    return
  }
  gpu.module @step_kernel {
    gpu.func @step_kernel(%x: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// Tests that dynamic shared memory beyond what any device gives a block
// (227 KiB) is an error.
module attributes {gpu.container_module} {
  func.func @step(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %shared = arith.constant 300000 : i32
    // expected-error @+1 {{kernel 'step_kernel': 300000 bytes of dynamic shared memory exceed the 232448 bytes a block may have on any CUDA device}}
    gpu.launch_func @step_kernel::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) dynamic_shared_memory_size %shared args(%x : memref<4xf32>)
    return
  }
  gpu.module @step_kernel {
    gpu.func @step_kernel(%x: memref<4xf32>) kernel {
      gpu.return
    }
  }
}
