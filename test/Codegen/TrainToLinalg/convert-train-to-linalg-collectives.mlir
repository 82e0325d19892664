// RUN: traincc-opt %s -split-input-file --traincc-convert-train-to-linalg | FileCheck %s
// RUN: traincc-opt %s -split-input-file --traincc-convert-train-to-linalg=replica-collectives=false | FileCheck %s --check-prefix=LOCAL

// Tests that synchronized statistics average the slice's mean over the
// replicas through the runtime (a copy into a buffer, the call on its
// address, the buffer as the new tensor) before the centred squares read
// it, and then the slice's variance around that mean; and that without
// replica collectives (the GPU steps) there is no call.
// CHECK-DAG: func.func private @traincc_replica_mean(!llvm.ptr, i64)
// CHECK-LABEL: func.func @stats
// CHECK: %[[BUF:.*]] = memref.alloc() : memref<3xf32>
// CHECK: bufferization.materialize_in_destination %{{.*}} in restrict writable %[[BUF]]
// CHECK: %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[BUF]]
// CHECK: %[[PTR:.*]] = llvm.inttoptr
// CHECK: %[[C3:.*]] = arith.constant 3 : i64
// CHECK: call @traincc_replica_mean(%[[PTR]], %[[C3]])
// CHECK: %[[MEAN:.*]] = bufferization.to_tensor %[[BUF]] restrict writable
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[MEAN]] :
// CHECK: call @traincc_replica_mean
// CHECK: return %[[MEAN]]
// LOCAL-LABEL: func.func @stats
// LOCAL-NOT: call
// LOCAL-NOT: memref.alloc
// LOCAL: return
func.func @stats(%x: tensor<4x3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %mean, %var = train.bn_stats %x synchronized : (tensor<4x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %mean, %var : tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that a synchronized backward averages the sums of dy and of
// dy * (x - mean) for the input gradient (two calls), while the scale and
// bias gradients stay the slice's own (no call feeds them).
// CHECK-LABEL: func.func @backward
// CHECK-COUNT-2: call @traincc_replica_mean
// CHECK-NOT: call @traincc_replica_mean
// CHECK: return
// LOCAL-LABEL: func.func @backward
// LOCAL-NOT: call
// LOCAL: return
func.func @backward(%dy: tensor<4x3xf32>, %x: tensor<4x3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %g: tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %dx, %dg, %db = train.batch_norm_backward %dy, %x, %m, %v, %g epsilon 1.0e-05 synchronized : tensor<4x3xf32>, tensor<3xf32>
  return %dx, %dg, %db : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that the replica count is the runtime's answer, or 1 without
// replica collectives.
// CHECK-DAG: func.func private @traincc_replica_count() -> f32
// CHECK-LABEL: func.func @count
// CHECK: %[[N:.*]] = call @traincc_replica_count() : () -> f32
// CHECK: tensor.from_elements %[[N]] : tensor<f32>
// LOCAL-LABEL: func.func @count
// LOCAL-NOT: call
// LOCAL: arith.constant dense<1.000000e+00> : tensor<f32>
func.func @count() -> tensor<f32> {
  %n = train.replica_count : tensor<f32>
  return %n : tensor<f32>
}
