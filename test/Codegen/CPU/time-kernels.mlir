// RUN: traincc-opt %s --traincc-time-kernels | FileCheck %s

// Every kernel of a step function (linalg ops and copies, numbered as
// `traincc --report` numbers them) is timed, with its class, FLOPs and
// bytes; functions that are not steps are left alone.

// CHECK-LABEL: func.func @micro_step
func.func @micro_step(%x: memref<4x8xf32>, %w: memref<8x2xf32>,
                      %y: memref<4x2xf32>, %dw: memref<2x3x3x3xf32>,
                      %in: memref<1x3x6x6xf32>, %dy: memref<1x2x4x4xf32>,
                      %copy: memref<4x2xf32>) {
  %zero = arith.constant 0.0 : f32
  // CHECK: call @traincc_kernel_timer_start()
  // CHECK-NEXT: linalg.fill
  // CHECK: %[[STEP:.*]] = arith.constant 0 : i32
  // CHECK-NEXT: %[[INDEX:.*]] = arith.constant 0 : i32
  // CHECK-NEXT: %[[CLASS:.*]] = arith.constant 7 : i32
  // CHECK-NEXT: %[[FLOPS:.*]] = arith.constant 0 : i64
  // CHECK-NEXT: %[[BYTES:.*]] = arith.constant 32 : i64
  // CHECK-NEXT: call @traincc_kernel_timer_stop(%[[STEP]], %[[INDEX]], %[[CLASS]], %[[FLOPS]], %[[BYTES]])
  linalg.fill ins(%zero : f32) outs(%y : memref<4x2xf32>)
  // A matmul: class 3, 2 * 4 * 2 * 8 FLOPs, 128 + 64 + 32 read + 32 written.
  // CHECK: call @traincc_kernel_timer_start()
  // CHECK-NEXT: linalg.matmul
  // CHECK-DAG: arith.constant 1 : i32
  // CHECK-DAG: arith.constant 3 : i32
  // CHECK-DAG: arith.constant 128 : i64
  // CHECK-DAG: arith.constant 256 : i64
  // CHECK: call @traincc_kernel_timer_stop
  linalg.matmul ins(%x, %w : memref<4x8xf32>, memref<8x2xf32>)
                outs(%y : memref<4x2xf32>)
  // The lowering names a convolution's filter gradient: class 2.
  // CHECK: call @traincc_kernel_timer_start()
  // CHECK-NEXT: linalg.generic
  // CHECK-DAG: arith.constant 2 : i32
  // CHECK-DAG: arith.constant 2 : i32
  // CHECK: call @traincc_kernel_timer_stop
  linalg.generic {
      indexing_maps = [
        affine_map<(m, c, kh, kw, n, oh, ow) -> (n, c, oh + kh, ow + kw)>,
        affine_map<(m, c, kh, kw, n, oh, ow) -> (n, m, oh, ow)>,
        affine_map<(m, c, kh, kw, n, oh, ow) -> (m, c, kh, kw)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel",
                        "reduction", "reduction", "reduction"]}
      ins(%in, %dy : memref<1x3x6x6xf32>, memref<1x2x4x4xf32>)
      outs(%dw : memref<2x3x3x3xf32>)
      attrs = {traincc.kernel_class = "conv_filter_gradient"} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  // An elementwise op (class 6) and a copy (class 7).
  // CHECK: arith.constant 6 : i32
  // CHECK: call @traincc_kernel_timer_stop
  linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<4x2xf32>) outs(%copy : memref<4x2xf32>) {
  ^bb0(%a: f32, %out: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  }
  // CHECK: call @traincc_kernel_timer_start()
  // CHECK-NEXT: memref.copy
  // CHECK: arith.constant 4 : i32
  // CHECK-NEXT: arith.constant 7 : i32
  // CHECK: call @traincc_kernel_timer_stop
  memref.copy %copy, %y : memref<4x2xf32> to memref<4x2xf32>
  // CHECK-NOT: traincc_kernel_timer
  // CHECK: return
  return
}

// CHECK-LABEL: func.func @helper
// CHECK-NOT: traincc_kernel_timer
func.func @helper(%y: memref<4x2xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<4x2xf32>)
  return
}

// CHECK: func.func private @traincc_kernel_timer_start()
// CHECK: func.func private @traincc_kernel_timer_stop(i32, i32, i32, i64, i64)
