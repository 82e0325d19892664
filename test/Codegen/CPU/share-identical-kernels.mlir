// RUN: traincc-opt %s -traincc-share-identical-kernels | FileCheck %s

// Tests that kernels differing only in name and noalias attributes become
// one, called from every former call site, noalias only where both copies
// had it; that kernels on other shapes or with other constants stay; and
// that functions that are not parallel bodies are left alone.
// CHECK-LABEL: func.func @step
// CHECK-NEXT: call @step_par0(%arg0, %arg1, %arg4, %arg5)
// CHECK-NEXT: call @step_par0(%arg1, %arg0, %arg4, %arg5)
// CHECK-NEXT: call @step_par0(%arg0, %arg0, %arg4, %arg5)
// CHECK-NEXT: call @step_par3(%arg0, %arg1, %arg4, %arg5)
// CHECK-NEXT: call @step_par4(%arg2, %arg3, %arg4, %arg5)
// CHECK-NEXT: call @helper(%arg0)
// CHECK-NEXT: call @helper_copy(%arg0)
// CHECK: func.func private @step_par0(%{{.*}}: memref<16xf32> {llvm.noalias}, %{{.*}}: memref<16xf32>, %{{.*}}: index, %{{.*}}: index)
// CHECK-NOT: func.func private @step_par1
// CHECK-NOT: func.func private @step_par2
// CHECK: func.func private @step_par3
// CHECK: arith.constant 3.0
// CHECK: func.func private @step_par4({{.*}}memref<32xf32>
// CHECK: func.func private @helper(
// CHECK: func.func private @helper_copy(
func.func @step(%a: memref<16xf32>, %b: memref<16xf32>, %c: memref<32xf32>,
                %d: memref<32xf32>, %begin: index, %end: index) {
  call @step_par0(%a, %b, %begin, %end) : (memref<16xf32>, memref<16xf32>, index, index) -> ()
  call @step_par1(%b, %a, %begin, %end) : (memref<16xf32>, memref<16xf32>, index, index) -> ()
  call @step_par2(%a, %a, %begin, %end) : (memref<16xf32>, memref<16xf32>, index, index) -> ()
  call @step_par3(%a, %b, %begin, %end) : (memref<16xf32>, memref<16xf32>, index, index) -> ()
  call @step_par4(%c, %d, %begin, %end) : (memref<32xf32>, memref<32xf32>, index, index) -> ()
  call @helper(%a) : (memref<16xf32>) -> ()
  call @helper_copy(%a) : (memref<16xf32>) -> ()
  return
}
func.func private @step_par0(%x: memref<16xf32> {llvm.noalias}, %y: memref<16xf32> {llvm.noalias}, %begin: index, %end: index) attributes {traincc.parallel_body} {
  %two = arith.constant 2.0 : f32
  scf.for %i = %begin to %end step %begin {
    %v = memref.load %x[%i] : memref<16xf32>
    %m = arith.mulf %v, %two : f32
    memref.store %m, %y[%i] : memref<16xf32>
  }
  return
}
func.func private @step_par1(%x: memref<16xf32> {llvm.noalias}, %y: memref<16xf32> {llvm.noalias}, %begin: index, %end: index) attributes {traincc.parallel_body} {
  %two = arith.constant 2.0 : f32
  scf.for %i = %begin to %end step %begin {
    %v = memref.load %x[%i] : memref<16xf32>
    %m = arith.mulf %v, %two : f32
    memref.store %m, %y[%i] : memref<16xf32>
  }
  return
}
func.func private @step_par2(%x: memref<16xf32> {llvm.noalias}, %y: memref<16xf32>, %begin: index, %end: index) attributes {traincc.parallel_body} {
  %two = arith.constant 2.0 : f32
  scf.for %i = %begin to %end step %begin {
    %v = memref.load %x[%i] : memref<16xf32>
    %m = arith.mulf %v, %two : f32
    memref.store %m, %y[%i] : memref<16xf32>
  }
  return
}
func.func private @step_par3(%x: memref<16xf32> {llvm.noalias}, %y: memref<16xf32> {llvm.noalias}, %begin: index, %end: index) attributes {traincc.parallel_body} {
  %three = arith.constant 3.0 : f32
  scf.for %i = %begin to %end step %begin {
    %v = memref.load %x[%i] : memref<16xf32>
    %m = arith.mulf %v, %three : f32
    memref.store %m, %y[%i] : memref<16xf32>
  }
  return
}
func.func private @step_par4(%x: memref<32xf32> {llvm.noalias}, %y: memref<32xf32> {llvm.noalias}, %begin: index, %end: index) attributes {traincc.parallel_body} {
  %two = arith.constant 2.0 : f32
  scf.for %i = %begin to %end step %begin {
    %v = memref.load %x[%i] : memref<32xf32>
    %m = arith.mulf %v, %two : f32
    memref.store %m, %y[%i] : memref<32xf32>
  }
  return
}
func.func private @helper(%x: memref<16xf32>) {
  return
}
func.func private @helper_copy(%x: memref<16xf32>) {
  return
}
