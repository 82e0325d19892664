// RUN: traincc-opt %s -split-input-file -traincc-emulation-entry-points | FileCheck %s

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
// CHECK-NOT: hook
llvm.func @k(%x: !llvm.ptr, %bx: i64, %by: i64, %bz: i64, %tx: i64, %ty: i64, %tz: i64, %gx: i64, %gy: i64, %gz: i64, %nx: i64, %ny: i64, %nz: i64) attributes {traincc.emulated_kernel} {
  llvm.return
}
llvm.func @helper(%x: !llvm.ptr) {
  llvm.return
}

// -----

// Tests that a cooperative kernel's entry point runs each block's threads
// through the driver's run-block hook: one shared area for the workgroup
// buffers (1000 and 24 bytes, each at a 64-byte boundary: 1088 bytes),
// filled with 0xff before each block, a context holding the launch and
// the block's ids, and a thunk that computes the thread's ids (x fastest)
// and calls the kernel with the buffers at their offsets. A failed block
// ends the launch. The barrier function calls the barrier hook; both hooks
// are exported, zero-initialised function pointers.
// CHECK-LABEL: llvm.func internal @traincc_emu.barrier()
// CHECK: %[[BHOOK:.*]] = llvm.mlir.addressof @traincc_emu_barrier_hook
// CHECK: %[[BFN:.*]] = llvm.load %[[BHOOK]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call %[[BFN]]() : !llvm.ptr, () -> ()
// CHECK: llvm.mlir.global external @traincc_emu_run_block_hook(#llvm.zero)
// CHECK-LABEL: llvm.func internal @traincc_emu_k.thread(
// CHECK-SAME: %[[CTX:[^:]*]]: !llvm.ptr, %[[T:[^:]*]]: i64)
// CHECK: %[[AREAP:.*]] = llvm.getelementptr %[[CTX]][0, 3]
// CHECK: %[[AREA:.*]] = llvm.load %[[AREAP]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[SH:.*]] = llvm.getelementptr %[[AREA]][0] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: %[[SH2:.*]] = llvm.getelementptr %[[AREA]][1024] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: %[[TX:.*]] = llvm.urem %[[T]], %[[NX:.*]] : i64
// CHECK: %[[REST:.*]] = llvm.udiv %[[T]], %[[NX]] : i64
// CHECK: %[[TY:.*]] = llvm.urem %[[REST]], %[[NY:.*]] : i64
// CHECK: %[[TZ:.*]] = llvm.udiv %[[REST]], %[[NY]] : i64
// CHECK: llvm.call @k(%{{.*}}, %[[SH]], %[[SH2]], %{{.*}}, %{{.*}}, %{{.*}}, %[[TX]], %[[TY]], %[[TZ]], %{{.*}}, %{{.*}}, %{{.*}}, %[[NX]], %[[NY]], %{{.*}})
// CHECK-LABEL: llvm.func @traincc_emu_k(
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr)
// CHECK: %[[CONTEXT:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, ptr, ptr, ptr, i64, i64, i64)>
// CHECK: %[[BYTES:.*]] = llvm.mlir.constant(1088 : i64) : i64
// CHECK: %[[SHARED:.*]] = llvm.alloca %[[BYTES]] x i8 {alignment = 64 : i64}
// CHECK: llvm.cond_br %{{.*}}, ^[[BODY:.*]], ^[[EXIT:.*]]
// CHECK: ^[[BODY]]:
// CHECK: "llvm.intr.memset"(%[[SHARED]], %{{.*}}, %{{.*}})
// CHECK: %[[HOOKP:.*]] = llvm.mlir.addressof @traincc_emu_run_block_hook
// CHECK: %[[HOOK:.*]] = llvm.load %[[HOOKP]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[THUNK:.*]] = llvm.mlir.addressof @traincc_emu_k.thread
// CHECK: %[[STATUS:.*]] = llvm.call %[[HOOK]](%[[THUNK]], %[[CONTEXT]], %{{.*}}) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i64) -> i32
// CHECK: %[[OK:.*]] = llvm.icmp "eq" %[[STATUS]], %{{.*}} : i32
// CHECK: llvm.cond_br %[[OK]], ^{{.*}}, ^[[EXIT]]
// CHECK: llvm.mlir.global external @traincc_emu_barrier_hook(#llvm.zero)
llvm.func @k(%x: !llvm.ptr, %sh: !llvm.ptr, %sh2: !llvm.ptr, %bx: i64, %by: i64, %bz: i64, %tx: i64, %ty: i64, %tz: i64, %gx: i64, %gy: i64, %gz: i64, %nx: i64, %ny: i64, %nz: i64) attributes {traincc.emulated_kernel, traincc.cooperative_kernel = array<i64: 1000, 24>} {
  llvm.call @traincc_emu.barrier() : () -> ()
  llvm.return
}
llvm.func @traincc_emu.barrier()
