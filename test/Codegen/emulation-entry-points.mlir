// RUN: traincc-opt %s -traincc-emulation-entry-points | FileCheck %s

// Tests that an emulated kernel gets `traincc_emu_<name>(params, grid,
// block)`: the six launch sizes are read as i32 and widened, each kernel
// argument is loaded through the pointer params[j] holds, and one loop runs
// the kernel for every (block, thread), thread x fastest, passing ids then
// sizes. Functions that are not emulated kernels get nothing.
// CHECK-LABEL: llvm.func @traincc_emu_k(
// CHECK-SAME: %[[PARAMS:[^:]*]]: !llvm.ptr, %[[GRID:[^:]*]]: !llvm.ptr, %[[BLOCK:[^:]*]]: !llvm.ptr)
// CHECK-COUNT-6: llvm.zext
// CHECK: %[[SLOT:.*]] = llvm.getelementptr %[[PARAMS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[ADDR:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[ARG:.*]] = llvm.load %[[ADDR]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.br ^[[HEAD:.*]](%{{.*}} : i64)
// CHECK: ^[[HEAD]](%[[I:.*]]: i64):
// CHECK: %[[MORE:.*]] = llvm.icmp "ult" %[[I]], %{{.*}} : i64
// CHECK: llvm.cond_br %[[MORE]], ^[[BODY:.*]], ^[[EXIT:.*]]
// CHECK: ^[[BODY]]:
// CHECK: llvm.call @k(%[[ARG]], {{.*}}) : (!llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
// CHECK: llvm.br ^[[HEAD]]
// CHECK: ^[[EXIT]]:
// CHECK-NEXT: llvm.return
// CHECK-NOT: traincc_emu_helper
llvm.func @k(%x: !llvm.ptr, %bx: i64, %by: i64, %bz: i64, %tx: i64, %ty: i64, %tz: i64, %gx: i64, %gy: i64, %gz: i64, %nx: i64, %ny: i64, %nz: i64) attributes {traincc.emulated_kernel} {
  llvm.return
}
llvm.func @helper(%x: !llvm.ptr) {
  llvm.return
}
