// RUN: traincc-opt %s -split-input-file -verify-diagnostics -traincc-merge-kernel-modules | FileCheck %s
// RUN: traincc-opt %s -split-input-file -verify-diagnostics -traincc-merge-kernel-modules="parts=2 min-kernels-per-part=1" | FileCheck %s --check-prefix=PARTS

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

// -----

// Tests that with parts=2 the kernels are spread over two modules, the
// largest kernel alone in one and the two small ones in the other, that
// launches follow them, and that each part has its own copy of the global
// its kernels use (and only that one).
// PARTS-LABEL: func.func @spread
// PARTS: gpu.launch_func @traincc_kernels_0::@big
// PARTS: gpu.launch_func @traincc_kernels_1::@small_a
// PARTS: gpu.launch_func @traincc_kernels_1::@small_b
// PARTS: gpu.module @traincc_kernels_0 {
// PARTS-NEXT: memref.global "private" constant @two
// PARTS-NOT: @one
// PARTS: gpu.func @big
// PARTS: gpu.module @traincc_kernels_1 {
// PARTS-NEXT: memref.global "private" constant @one
// PARTS-NOT: @two
// PARTS: gpu.func @small_a
// PARTS: gpu.func @small_b
// PARTS-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @spread(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @big::@big blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    gpu.launch_func @small_a::@small_a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    gpu.launch_func @small_b::@small_b blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    return
  }
  gpu.module @big {
    memref.global "private" constant @two : memref<f32> = dense<2.0>
    gpu.func @big(%x: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %t = memref.get_global @two : memref<f32>
      %v = memref.load %t[] : memref<f32>
      %a = arith.addf %v, %v : f32
      %b = arith.mulf %a, %v : f32
      memref.store %b, %x[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @small_a {
    memref.global "private" constant @one : memref<f32> = dense<1.0>
    gpu.func @small_a(%x: memref<4xf32>) kernel {
      %o = memref.get_global @one : memref<f32>
      gpu.return
    }
  }
  gpu.module @small_b {
    gpu.func @small_b(%x: memref<4xf32>) kernel {
      %c1 = arith.constant 1 : index
      gpu.return
    }
  }
}
