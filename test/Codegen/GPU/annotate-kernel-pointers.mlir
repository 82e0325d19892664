// RUN: split-file %s %t --leading-lines
// RUN: traincc-opt %t/launches.mlir -traincc-annotate-kernel-pointers | FileCheck %s
// RUN: traincc-opt %t/steps.mlir -traincc-gpu-codegen-pipeline='arch=sm_90' | %python %S/Inputs/extract-ptx.py > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: /usr/local/cuda/bin/ptxas -arch=sm_90 %t.ptx -o %t.cubin

//--- launches.mlir

// Tests that a kernel's buffer arguments that every launch fills with a
// step function argument (a launch-plan pointer) are declared 16-byte
// aligned and not aliasing, that one a launch also passes in another
// position is aligned but may alias, and that neither a buffer one launch
// fills with a value of its own nor a scalar argument is touched.
// CHECK-LABEL: gpu.module @kernels
// CHECK: gpu.func @planned(%{{.*}}: memref<64xf32> {llvm.align = 16 : i64, llvm.noalias}, %{{.*}}: memref<8x4xf32> {llvm.align = 16 : i64, llvm.noalias}, %{{.*}}: index) kernel
// CHECK: gpu.func @mixed(%{{.*}}: memref<64xf32> {llvm.align = 16 : i64}, %{{.*}}: memref<64xf32> {llvm.align = 16 : i64}, %{{.*}}: memref<64xf32>) kernel
// CHECK: gpu.func @unlaunched(%{{.*}}: memref<64xf32>) kernel
// CHECK: gpu.func @viewed(%{{.*}}: memref<16xf32> {llvm.align = 16 : i64, llvm.noalias}, %{{.*}}: memref<16xf32>) kernel
module attributes {gpu.container_module} {
  // Tests that workspace views at constant offsets (hoisted out of the
  // kernels) are plan pointers when the offset is a multiple of 16.
  func.func @views(%ws: memref<1024xi8>) {
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %c4 = arith.constant 4 : index
    %a = memref.view %ws[%c256][] : memref<1024xi8> to memref<16xf32>
    %b = memref.view %ws[%c4][] : memref<1024xi8> to memref<16xf32>
    gpu.launch_func @kernels::@viewed blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32>, %b : memref<16xf32>)
    return
  }
  func.func @step(%x: memref<64xf32>, %y: memref<8x4xf32>) {
    %c1 = arith.constant 1 : index
    %local = memref.alloc() : memref<64xf32>
    gpu.launch_func @kernels::@planned blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<64xf32>, %y : memref<8x4xf32>, %c1 : index)
    gpu.launch_func @kernels::@mixed blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<64xf32>, %x : memref<64xf32>, %x : memref<64xf32>)
    gpu.launch_func @kernels::@mixed blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<64xf32>, %x : memref<64xf32>, %local : memref<64xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @planned(%x: memref<64xf32>, %y: memref<8x4xf32>, %n: index) kernel {
      gpu.return
    }
    gpu.func @mixed(%x: memref<64xf32>, %z: memref<64xf32>, %w: memref<64xf32>) kernel {
      gpu.return
    }
    gpu.func @unlaunched(%x: memref<64xf32>) kernel {
      gpu.return
    }
    gpu.func @viewed(%a: memref<16xf32>, %b: memref<16xf32>) kernel {
      gpu.return
    }
  }
}

//--- steps.mlir

// Tests that the PTX reads a thread's four adjacent floats of a 16-byte
// aligned row (average pooling of 2 x 2 windows, one thread per output,
// the sum kept in a register) with one ld.global.v4 through the read-only
// cache, and that rows of three floats (12 bytes apart, so only every
// fourth is aligned) stay scalar loads.
// PTX-LABEL: .entry micro_step_kernel_0(
// PTX: ld.global.b32
// PTX-NEXT: ld.global.nc.v4.b32
// PTX-NOT: ld.global
// PTX: st.global.b32
// PTX-NOT: st.global
// PTX-LABEL: .entry micro_step_kernel_1(
// PTX-LABEL: .entry eval_step_kernel_2(
// PTX-NOT: ld.global{{.*}}.v
// PTX: ld.global.nc.b32
// PTX-NOT: ld.global{{.*}}.v
// PTX-LABEL: .entry eval_step_kernel_3(
func.func @micro_step(%x: tensor<512x8x2x2xf32>) -> tensor<512x8x1x1xf32> {
  %y = train.global_avg_pool %x : (tensor<512x8x2x2xf32>) -> tensor<512x8x1x1xf32>
  return %y : tensor<512x8x1x1xf32>
}

func.func @eval_step(%x: tensor<512x8x1x3xf32>) -> tensor<512x8x1x1xf32> {
  %y = train.global_avg_pool %x : (tensor<512x8x1x3xf32>) -> tensor<512x8x1x1xf32>
  return %y : tensor<512x8x1x1xf32>
}
