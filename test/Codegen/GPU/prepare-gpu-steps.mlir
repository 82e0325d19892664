// RUN: traincc-opt %s -split-input-file -verify-diagnostics -traincc-prepare-gpu-steps | FileCheck %s

// Tests that temporaries become views at 256-byte aligned offsets of a new
// workspace argument, scalars are read from the parameter block at the
// offsets of ModelABI.h, copies become linalg.copy, and deallocations go.
// CHECK-LABEL: func.func @apply_step
// CHECK-SAME: (%[[W:.*]]: memref<4xf32> {train.state = @w}, %[[LR:.*]]: f32 {train.name = "lr"}, %[[STEP:.*]]: i64 {train.name = "step"}, %[[WS:.*]]: memref<768xi8> {train.gpu_buffer = "workspace"}, %[[P:.*]]: memref<64xi8> {train.gpu_buffer = "params"})
// CHECK-SAME: attributes {train.workspace_bytes = 768 : i64}
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[LRV:.*]] = memref.view %[[P]][%[[C0]]][] : memref<64xi8> to memref<f32>
// CHECK-DAG: %[[LRX:.*]] = memref.load %[[LRV]][] : memref<f32>
// CHECK-DAG: %[[STEPV:.*]] = memref.view %[[P]][%[[C8]]][] : memref<64xi8> to memref<i64>
// CHECK-DAG: memref.load %[[STEPV]][] : memref<i64>
// CHECK: %[[T0:.*]] = memref.view %[[WS]][%{{.*}}][] : memref<768xi8> to memref<4xf32>
// CHECK: %[[T1:.*]] = memref.view %[[WS]][%{{.*}}][] : memref<768xi8> to memref<100xf32>
// CHECK: linalg.copy ins(%[[W]] : memref<4xf32>) outs(%[[T0]] : memref<4xf32>)
// CHECK: arith.mulf %[[LRX]], %[[LRX]]
// CHECK-NOT: memref.dealloc
// CHECK-NOT: memref.alloc
func.func @apply_step(%w: memref<4xf32> {train.state = @w}, %lr: f32 {train.name = "lr"}, %step: i64 {train.name = "step"}) {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<100xf32>
  memref.copy %w, %a : memref<4xf32> to memref<4xf32>
  %sq = arith.mulf %lr, %lr : f32
  %c0 = arith.constant 0 : index
  memref.store %sq, %a[%c0] : memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<100xf32>
  return
}

// -----

// Tests that a scalar argument that is not a step parameter is refused:
// the launch plan has no place for it.
// expected-error @+1 {{GPU steps take no scalar argument alpha}}
func.func @other_scalar(%alpha: f32 {train.name = "alpha"}) {
  return
}

// -----

func.func @dynamic(%n: index) {
  // expected-error @+1 {{a GPU step needs temporaries of static shape, found 'memref<?xf32>'}}
  %a = memref.alloc(%n) : memref<?xf32>
  return
}

// -----

// Tests that the replica collectives of --sync-bn stay host code for the
// launch plan: the replica count is read from the parameter block at
// TRAINCC_GPU_PARAM_REPLICAS (24), the mean becomes a call on the
// temporary's workspace view, and the CPU steps' declarations and the
// address computation go.
// CHECK-NOT: @traincc_replica_mean
// CHECK-NOT: @traincc_replica_count
// CHECK: func.func private @traincc_gpu_replica_mean(memref<?xf32>)
// CHECK-NOT: @traincc_replica_mean
// CHECK-NOT: @traincc_replica_count
// CHECK-LABEL: func.func @micro_step
// CHECK-SAME: %[[WS:[^:]*]]: memref<256xi8> {train.gpu_buffer = "workspace"}, %[[P:[^:]*]]: memref<64xi8> {train.gpu_buffer = "params"}
// CHECK: %[[T:.*]] = memref.view %[[WS]][%{{.*}}][] : memref<256xi8> to memref<32xf32>
// CHECK: %[[V:.*]] = memref.cast %[[T]] : memref<32xf32> to memref<?xf32>
// CHECK: call @traincc_gpu_replica_mean(%[[V]]) : (memref<?xf32>) -> ()
// CHECK: %[[C24:.*]] = arith.constant 24 : index
// CHECK: %[[RV:.*]] = memref.view %[[P]][%[[C24]]][] : memref<64xi8> to memref<f32>
// CHECK: %[[R:.*]] = memref.load %[[RV]][] : memref<f32>
// CHECK: arith.mulf %[[R]], %{{.*}} : f32
// CHECK-NOT: llvm.inttoptr
// CHECK-NOT: extract_aligned_pointer
// CHECK-NOT: @traincc_replica_mean
// CHECK-NOT: @traincc_replica_count
func.func private @traincc_replica_count() -> f32
func.func private @traincc_replica_mean(!llvm.ptr, i64)
func.func @micro_step(%stats: memref<32xf32> {train.state = @stats}, %out: memref<f32> {train.state = @out}) {
  %c32 = arith.constant 32 : i64
  %a = memref.alloc() : memref<32xf32>
  memref.copy %stats, %a : memref<32xf32> to memref<32xf32>
  %address = memref.extract_aligned_pointer_as_index %a : memref<32xf32> -> index
  %i = arith.index_cast %address : index to i64
  %pointer = llvm.inttoptr %i : i64 to !llvm.ptr
  call @traincc_replica_mean(%pointer, %c32) : (!llvm.ptr, i64) -> ()
  memref.copy %a, %stats : memref<32xf32> to memref<32xf32>
  %n = call @traincc_replica_count() : () -> f32
  %eight = arith.constant 8.0 : f32
  %count = arith.mulf %n, %eight : f32
  memref.store %count, %out[] : memref<f32>
  return
}

// -----

// Tests that a replica mean of anything but a whole float32 temporary is
// refused: the plan's collectives average workspace ranges.
func.func private @traincc_replica_mean(!llvm.ptr, i64)
func.func @micro_step(%stats: memref<32xf32> {train.state = @stats}) {
  %c16 = arith.constant 16 : i64
  %address = memref.extract_aligned_pointer_as_index %stats : memref<32xf32> -> index
  %i = arith.index_cast %address : index to i64
  %pointer = llvm.inttoptr %i : i64 to !llvm.ptr
  // expected-error @+1 {{a GPU step can only average (--sync-bn) the whole of a float32 temporary of constant size}}
  call @traincc_replica_mean(%pointer, %c16) : (!llvm.ptr, i64) -> ()
  return
}
