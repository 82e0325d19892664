// RUN: traincc-opt %s -split-input-file -verify-diagnostics -traincc-serialize-gpu-modules=toolkit=/usr/local/cuda | FileCheck %s

// Tests that each gpu.module with an NVVM target becomes a gpu.binary of
// the same name holding its PTX, in module order, whichever thread
// translated it; the host function that launches them is left alone.
// CHECK-LABEL: func.func @step
// CHECK: gpu.launch_func @part_0::@first
// CHECK: gpu.launch_func @part_1::@second
// CHECK: gpu.binary @part_0 [#gpu.object<#nvvm.target<chip = "sm_90">, {{.*}}assembly = "{{.*}}.target sm_90{{.*}}.visible .entry first({{[^"]*}}">]
// CHECK: gpu.binary @part_1 [#gpu.object<#nvvm.target<chip = "sm_90">, {{.*}}assembly = "{{.*}}.visible .entry second({{[^"]*}}">]
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @step(%p: !llvm.ptr) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @part_0::@first blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%p : !llvm.ptr)
    gpu.launch_func @part_1::@second blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%p : !llvm.ptr)
    return
  }
  gpu.module @part_0 [#nvvm.target<chip = "sm_90">] {
    llvm.func @first(%p: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %one = llvm.mlir.constant(1.0 : f32) : f32
      llvm.store %one, %p : f32, !llvm.ptr
      llvm.return
    }
  }
  gpu.module @part_1 [#nvvm.target<chip = "sm_90">] {
    llvm.func @second(%p: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %two = llvm.mlir.constant(2.0 : f32) : f32
      llvm.store %two, %p : f32, !llvm.ptr
      llvm.return
    }
  }
}

// -----

// Tests that a module without a target is an error naming it.
module attributes {gpu.container_module} {
  // expected-error @+1 {{expected a gpu.module with exactly one target}}
  gpu.module @bare {
  }
}
