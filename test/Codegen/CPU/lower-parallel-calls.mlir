// RUN: traincc-opt %s -split-input-file -verify-diagnostics -traincc-lower-parallel-calls | FileCheck %s

// Tests that a call of a parallel body over [0, count) becomes a
// traincc_parallel_for dispatch: the other arguments go into a context on
// the caller's stack (allocated in the entry block), and a thunk loads them
// back and calls the body on the range it is given; and that the body,
// called by its thunk alone, becomes internal (LLVM inlines it there).
// CHECK-LABEL: llvm.func @step
// CHECK-SAME: (%[[P:.*]]: !llvm.ptr, %[[S:.*]]: f32)
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: %[[CTX:.*]] = llvm.alloca %[[ONE]] x !llvm.struct<(ptr, f32)> : (i64) -> !llvm.ptr
// CHECK: %[[N:.*]] = llvm.mlir.constant(64 : i64) : i64
// CHECK: %[[F0:.*]] = llvm.getelementptr %[[CTX]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, f32)>
// CHECK: llvm.store %[[P]], %[[F0]] : !llvm.ptr, !llvm.ptr
// CHECK: %[[F1:.*]] = llvm.getelementptr %[[CTX]][0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, f32)>
// CHECK: llvm.store %[[S]], %[[F1]] : f32, !llvm.ptr
// CHECK: %[[T:.*]] = llvm.mlir.addressof @step_par0_thunk : !llvm.ptr
// CHECK: llvm.call @traincc_parallel_for(%[[N]], %[[CTX]], %[[T]]) : (i64, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NOT: llvm.call @step_par0
// CHECK: llvm.return
// CHECK: llvm.func internal @step_par0(
// CHECK: llvm.func @traincc_parallel_for(i64, !llvm.ptr, !llvm.ptr)
// CHECK: llvm.func internal @step_par0_thunk(%[[C:.*]]: !llvm.ptr, %[[B:.*]]: i64, %[[E:.*]]: i64)
// CHECK: %[[G0:.*]] = llvm.getelementptr %[[C]][0, 0]
// CHECK: %[[A0:.*]] = llvm.load %[[G0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[G1:.*]] = llvm.getelementptr %[[C]][0, 1]
// CHECK: %[[A1:.*]] = llvm.load %[[G1]] : !llvm.ptr -> f32
// CHECK: llvm.call @step_par0(%[[A0]], %[[A1]], %[[B]], %[[E]]) : (!llvm.ptr, f32, i64, i64) -> ()
llvm.func @step(%p: !llvm.ptr, %s: f32) {
  %zero = llvm.mlir.constant(0 : i64) : i64
  %n = llvm.mlir.constant(64 : i64) : i64
  llvm.call @step_par0(%p, %s, %zero, %n) : (!llvm.ptr, f32, i64, i64) -> ()
  llvm.return
}
llvm.func @step_par0(%p: !llvm.ptr {llvm.noalias}, %s: f32, %begin: i64, %end: i64) attributes {traincc.parallel_body} {
  llvm.return
}

// -----

// Tests that calls of functions not marked as parallel bodies stay.
// CHECK-LABEL: llvm.func @plain
// CHECK: llvm.call @helper(%{{.*}}, %{{.*}})
// CHECK-NOT: traincc_parallel_for
llvm.func @plain(%a: i64, %b: i64) {
  llvm.call @helper(%a, %b) : (i64, i64) -> ()
  llvm.return
}
llvm.func @helper(%a: i64, %b: i64) {
  llvm.return
}

// -----

// Tests that a body called from another start than 0 is an error: the
// runtime hands out ranges of [0, count).
llvm.func @offset(%n: i64) {
  %one = llvm.mlir.constant(1 : i64) : i64
  // expected-error @+1 {{a parallel body must be called from index 0}}
  llvm.call @offset_par0(%one, %n) : (i64, i64) -> ()
  llvm.return
}
llvm.func @offset_par0(%begin: i64, %end: i64) attributes {traincc.parallel_body} {
  llvm.return
}

// -----

// Tests that a serial body stays a direct call and becomes noinline.
// CHECK-LABEL: llvm.func @serial_step
// CHECK: llvm.call @serial_step_seq0(%{{.*}})
// CHECK-NOT: traincc_parallel_for
// CHECK: llvm.func @serial_step_seq0(%{{.*}}: !llvm.ptr) attributes {no_inline, traincc.serial_body}
llvm.func @serial_step(%p: !llvm.ptr) {
  llvm.call @serial_step_seq0(%p) : (!llvm.ptr) -> ()
  llvm.return
}
llvm.func @serial_step_seq0(%p: !llvm.ptr) attributes {traincc.serial_body} {
  llvm.return
}
