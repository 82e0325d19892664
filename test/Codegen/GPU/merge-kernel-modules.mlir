// RUN: traincc-opt %s -split-input-file -verify-diagnostics -traincc-merge-kernel-modules | FileCheck %s

// Tests that kernels of separate modules move into @traincc_kernels, named
// after their old modules, that launches follow them, and that a global
// both modules copied is kept once.
// CHECK-LABEL: func.func @step
// CHECK: gpu.launch_func @traincc_kernels::@step_kernel blocks
// CHECK: gpu.launch_func @traincc_kernels::@step_kernel_0 blocks
// CHECK: gpu.module @traincc_kernels {
// CHECK-COUNT-1: memref.global "private" constant @one
// CHECK: gpu.func @step_kernel(%{{.*}}: memref<4xf32>) kernel
// CHECK: gpu.func @step_kernel_0(%{{.*}}: memref<4xf32>) kernel
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @step(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @step_kernel::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    gpu.launch_func @step_kernel_0::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
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
