// RUN: traincc-opt %s -split-input-file -traincc-fuse-elementwise | FileCheck %s
// RUN: traincc-opt %s -split-input-file -traincc-fuse-elementwise=cpu-kernels | FileCheck %s --check-prefix=CPU

// Tests that an elementwise chain (scale and shift, then ReLU) becomes one
// linalg.generic computing both, and the intermediate tensor disappears.

#map = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<4x8xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @chain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c2 = arith.constant 2.0 : f32
  %c1 = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %m = arith.mulf %a, %c2 : f32
    %s = arith.addf %m, %c1 : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %z = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}

// -----

// Tests that a cheap per-channel producer fuses into a per-element consumer
// that broadcasts it (the maps compose) and into a reduction over it, while
// a per-channel square root is not repeated per element.

#map = affine_map<(d0, d1) -> (d0, d1)>
#chan = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
#vec = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @broadcast_and_reduce
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[V:.*]]: tensor<8xf32>)
// CHECK: %[[Y:.*]] = linalg.generic
// CHECK-SAME: ins(%[[X]], %[[V]] :
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[V]] :
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[ROOT:.*]] = linalg.generic
// CHECK: math.sqrt
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[X]], %[[ROOT]] :
// CHECK: arith.divf
func.func @broadcast_and_reduce(%x: tensor<4x8xf32>, %v: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>) {
  %c2 = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %twice = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%v : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %r = arith.mulf %a, %c2 : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#map, #chan, #map], iterator_types = ["parallel", "parallel"]}
      ins(%x, %twice : tensor<4x8xf32>, tensor<8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %twice2 = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%v : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %r = arith.mulf %a, %c2 : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#chan, #row], iterator_types = ["parallel", "reduction"]}
      ins(%twice2 : tensor<8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %root = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%v : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %r = math.sqrt %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %q = linalg.generic {indexing_maps = [#map, #chan, #map], iterator_types = ["parallel", "parallel"]}
      ins(%x, %root : tensor<4x8xf32>, tensor<8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %y, %sum, %q : tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>
}

// -----

// Tests that a producer with two users is not fused (it would be computed
// twice) and that a named contraction keeps its own op.

#map = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @shared_producer
// CHECK: %[[Y:.*]] = linalg.generic
// CHECK: arith.mulf
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[Y]]
// CHECK: linalg.matmul
// CHECK-SAME: ins(%[[Y]], %[[Y]]
func.func @shared_producer(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %c2 = arith.constant 2.0 : f32
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x8xf32>
  %y = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x8xf32>) outs(%e0 : tensor<8x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %m = arith.mulf %a, %c2 : f32
    linalg.yield %m : f32
  } -> tensor<8x8xf32>
  %e1 = tensor.empty() : tensor<8x8xf32>
  %z = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<8x8xf32>) outs(%e1 : tensor<8x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %p = linalg.matmul ins(%y, %y : tensor<8x8xf32>, tensor<8x8xf32>) outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %z, %p : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// Tests that a cast to bf16 (f32 in, bf16 out) fuses into the bf16 ReLU
// that consumes it.

#map = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @cast_relu
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @cast_relu(%x: tensor<4x8xf32>) -> tensor<4x8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e0 = tensor.empty() : tensor<4x8xbf16>
  %y = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e0 : tensor<4x8xbf16>) {
  ^bb0(%a: f32, %out: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %e1 = tensor.empty() : tensor<4x8xbf16>
  %z = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x8xbf16>) outs(%e1 : tensor<4x8xbf16>) {
  ^bb0(%a: bf16, %out: bf16):
    %r = arith.maximumf %a, %zero : bf16
    linalg.yield %r : bf16
  } -> tensor<4x8xbf16>
  return %z : tensor<4x8xbf16>
}

// -----

// Tests that an output the body writes but never reads (a weight copy)
// keeps its parameter's argument as destination when it is a state result,
// so that bufferization updates the parameter in place, while other
// unread outputs get a fresh tensor.empty.

#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @state_destination
// CHECK-SAME: (%[[P:.*]]: tensor<4xf32> {train.state = @w}, %[[C:.*]]: tensor<4xbf16> {train.state = @w.bf16}, %[[T:.*]]: tensor<4xbf16>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xbf16>
// CHECK-NOT: tensor.empty
// CHECK: %[[R:.*]]:3 = linalg.generic {{.*}} outs(%[[P]], %[[C]], %[[E]] : tensor<4xf32>, tensor<4xbf16>, tensor<4xbf16>)
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2
func.func @state_destination(%p: tensor<4xf32> {train.state = @w}, %c: tensor<4xbf16> {train.state = @w.bf16}, %t: tensor<4xbf16>)
    -> (tensor<4xf32> {train.state = @w}, tensor<4xbf16> {train.state = @w.bf16}, tensor<4xbf16>) {
  %two = arith.constant 2.0 : f32
  %r:3 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      outs(%p, %c, %t : tensor<4xf32>, tensor<4xbf16>, tensor<4xbf16>) {
  ^bb0(%old: f32, %oc: bf16, %ot: bf16):
    %n = arith.mulf %old, %two : f32
    %b = arith.truncf %n : f32 to bf16
    linalg.yield %n, %b, %b : f32, bf16, bf16
  } -> (tensor<4xf32>, tensor<4xbf16>, tensor<4xbf16>)
  return %r#0, %r#1, %r#2 : tensor<4xf32>, tensor<4xbf16>, tensor<4xbf16>
}

// -----

// Tests that an elementwise consumer that reads its producer through a
// collapse_shape takes on the producer's loops and fuses with it (max
// pooling's gradient per window position, then the ReLU mask per pixel):
// one generic over 2x2x2x2 reading the mask through an expand_shape, its
// result collapsed back.
// CHECK-LABEL: func.func @fuse_through_collapse
// CHECK: %[[MASK:.*]] = tensor.expand_shape %arg1 {{\[\[}}0, 1], [2, 3]]
// CHECK: %[[FUSED:.*]] = linalg.generic
// CHECK-SAME: %[[MASK]]
// CHECK: linalg.index 1
// CHECK: arith.cmpf ogt
// CHECK: tensor.collapse_shape %[[FUSED]]
// CHECK-NOT: linalg.generic
// Under the CPU cost model too: the windows' 2 iterations become the
// innermost loop of an interleaved row (2 * o + k), which
// traincc-vectorize-interleaved-windows loads whole and splits by shuffles.
// CPU-LABEL: func.func @fuse_through_collapse
// CPU: %[[FUSED:.*]] = linalg.generic
// CPU: arith.cmpf ogt
// CPU: tensor.collapse_shape %[[FUSED]]
// CPU-NOT: linalg.generic
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @fuse_through_collapse(%g: tensor<2x2x2x2xf32>, %y: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<2x2x2x2xf32>
  %scattered = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%g : tensor<2x2x2x2xf32>) outs(%e4 : tensor<2x2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 1 : index
    %c0 = arith.constant 0 : index
    %first = arith.cmpi eq, %i, %c0 : index
    %v = arith.select %first, %in, %zero : f32
    linalg.yield %v : f32
  } -> tensor<2x2x2x2xf32>
  %flat = tensor.collapse_shape %scattered [[0, 1], [2, 3]] : tensor<2x2x2x2xf32> into tensor<4x4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %masked = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%flat, %y : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%d: f32, %a: f32, %out: f32):
    %pos = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %pos, %d, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  return %masked : tensor<4x4xf32>
}

// -----

// Tests that under the CPU cost model a consumer is not expanded to an
// innermost loop shorter than a vector that is no window offset (6 long):
// the mask keeps its own contiguous pass (the GPU steps fuse it).
// CHECK-LABEL: func.func @no_short_expansion
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
// CPU-LABEL: func.func @no_short_expansion
// CPU: %[[SCATTERED:.*]] = linalg.generic
// CPU: %[[FLAT:.*]] = tensor.collapse_shape %[[SCATTERED]]
// CPU: linalg.generic {{.*}} ins(%[[FLAT]], %arg1 : tensor<12xf32>, tensor<12xf32>)
#id2n = affine_map<(d0, d1) -> (d0, d1)>
#id1n = affine_map<(d0) -> (d0)>
func.func @no_short_expansion(%g: tensor<2x6xf32>, %y: tensor<12xf32>) -> tensor<12xf32> {
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2x6xf32>
  %scattered = linalg.generic {indexing_maps = [#id2n, #id2n], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<2x6xf32>) outs(%e2 : tensor<2x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<2x6xf32>
  %flat = tensor.collapse_shape %scattered [[0, 1]] : tensor<2x6xf32> into tensor<12xf32>
  %e = tensor.empty() : tensor<12xf32>
  %masked = linalg.generic {indexing_maps = [#id1n, #id1n, #id1n], iterator_types = ["parallel"]} ins(%flat, %y : tensor<12xf32>, tensor<12xf32>) outs(%e : tensor<12xf32>) {
  ^bb0(%d: f32, %a: f32, %out: f32):
    %pos = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %pos, %d, %zero : f32
    linalg.yield %r : f32
  } -> tensor<12xf32>
  return %masked : tensor<12xf32>
}

// -----

// Tests that under the CPU cost model a max pooling and the winner search
// of its gradient, which read one input through the same windows, become
// one pass: the pooling is generalized, the search's initial values move
// up to it, and one generic yields the pooled maximum and the winners.
// Without the search (the second function) the pooling stays a named op,
// and so it does for the GPU steps.
// CHECK-LABEL: func.func @pooling_and_winner_search
// CHECK: linalg.pooling_nchw_max
// CPU-LABEL: func.func @pooling_and_winner_search
// CPU: %[[WINIT:.*]] = linalg.fill ins(%{{.*}} : i32)
// CPU: %[[BOTH:.*]]:3 = linalg.generic
// CPU-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CPU-SAME: outs(%{{.*}}, %{{.*}}, %[[WINIT]] :
// CPU: arith.maximumf
// CPU: arith.cmpf ogt
// CPU-NOT: linalg.pooling_nchw_max
// CPU: return %[[BOTH]]#0, %[[BOTH]]#2
// CPU-LABEL: func.func @pooling_alone
// CPU: linalg.pooling_nchw_max
#pin = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>
#pk = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
#pout = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
func.func @pooling_and_winner_search(%x: tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x1x2x2xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %k = tensor.empty() : tensor<2x2xf32>
  %max = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %k : tensor<1x1x4x4xf32>, tensor<2x2xf32>) outs(%init : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %big = arith.constant 2147483647 : i32
  %ei = tensor.empty() : tensor<1x1x2x2xi32>
  %winit = linalg.fill ins(%big : i32) outs(%ei : tensor<1x1x2x2xi32>) -> tensor<1x1x2x2xi32>
  %search:2 = linalg.generic {indexing_maps = [#pin, #pk, #pout, #pout], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %k : tensor<1x1x4x4xf32>, tensor<2x2xf32>) outs(%init, %winit : tensor<1x1x2x2xf32>, tensor<1x1x2x2xi32>) {
  ^bb0(%in: f32, %unused: f32, %best: f32, %winner: i32):
    %i = linalg.index 5 : index
    %offset = arith.index_cast %i : index to i32
    %greater = arith.cmpf ogt, %in, %best : f32
    %v = arith.select %greater, %in, %best : f32
    %w = arith.select %greater, %offset, %winner : i32
    linalg.yield %v, %w : f32, i32
  } -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi32>)
  return %max, %search#1 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xi32>
}
func.func @pooling_alone(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x1x2x2xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %k = tensor.empty() : tensor<2x2xf32>
  %max = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %k : tensor<1x1x4x4xf32>, tensor<2x2xf32>) outs(%init : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %max : tensor<1x1x2x2xf32>
}

// Tests that under the CPU cost model a BatchNorm-like producer (x * s +
// b per channel) that a max pooling and its winner search both read fuses
// into their merged pass once the merge reads it through one operand: the
// maximum and the winner search round nothing, so the window pass may
// compute the producer itself. Without the CPU model (GPU) the producer
// has two readers and stays. A sum (third function) takes in no
// arithmetic even on the CPU.
// CHECK-LABEL: func.func @normalize_then_pool
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK: linalg.pooling_nchw_max
// CPU-LABEL: func.func @normalize_then_pool
// CPU-SAME: (%[[X:.*]]: tensor<1x2x4x4xf32>, %[[S:.*]]: tensor<2xf32>, %[[B:.*]]: tensor<2xf32>)
// CPU-NOT: linalg.generic
// CPU: %[[BOTH:.*]]:3 = linalg.generic
// CPU-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CPU-SAME: ins(%[[X]], %[[S]], %[[B]], %{{.*}} :
// CPU: arith.mulf
// CPU: arith.addf
// CPU: arith.maximumf
// CPU: arith.cmpf ogt
// CPU-NOT: linalg.generic
// CPU: return %[[BOTH]]#0, %[[BOTH]]#2
// CPU-LABEL: func.func @normalize_then_sum
// CPU: linalg.generic
// CPU-SAME: iterator_types = ["parallel", "parallel", "parallel"]
// CPU: linalg.generic
// CPU-SAME: iterator_types = ["reduction", "parallel", "reduction"]
#nchw4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#c4 = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @normalize_then_pool(%x: tensor<1x2x4x4xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi32>) {
  %en = tensor.empty() : tensor<1x2x4x4xf32>
  %n = linalg.generic {indexing_maps = [#nchw4, #c4, #c4, #nchw4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %s, %b : tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>) outs(%en : tensor<1x2x4x4xf32>) {
  ^bb0(%in: f32, %scale: f32, %shift: f32, %unused: f32):
    %m = arith.mulf %in, %scale : f32
    %a = arith.addf %m, %shift : f32
    linalg.yield %a : f32
  } -> tensor<1x2x4x4xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %k = tensor.empty() : tensor<2x2xf32>
  %max = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%n, %k : tensor<1x2x4x4xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %big = arith.constant 2147483647 : i32
  %ei = tensor.empty() : tensor<1x2x2x2xi32>
  %winit = linalg.fill ins(%big : i32) outs(%ei : tensor<1x2x2x2xi32>) -> tensor<1x2x2x2xi32>
  %search:2 = linalg.generic {indexing_maps = [#pin, #pk, #pout, #pout], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%n, %k : tensor<1x2x4x4xf32>, tensor<2x2xf32>) outs(%init, %winit : tensor<1x2x2x2xf32>, tensor<1x2x2x2xi32>) {
  ^bb0(%in: f32, %unused: f32, %best: f32, %winner: i32):
    %i = linalg.index 5 : index
    %offset = arith.index_cast %i : index to i32
    %greater = arith.cmpf ogt, %in, %best : f32
    %v = arith.select %greater, %in, %best : f32
    %w = arith.select %greater, %offset, %winner : i32
    linalg.yield %v, %w : f32, i32
  } -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi32>)
  return %max, %search#1 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xi32>
}
#nch = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ch = affine_map<(d0, d1, d2) -> (d1)>
func.func @normalize_then_sum(%x: tensor<4x8x16xf32>, %s: tensor<8xf32>) -> tensor<8xf32> {
  %en = tensor.empty() : tensor<4x8x16xf32>
  %n = linalg.generic {indexing_maps = [#nch, #ch, #nch], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %s : tensor<4x8x16xf32>, tensor<8xf32>) outs(%en : tensor<4x8x16xf32>) {
  ^bb0(%in: f32, %scale: f32, %unused: f32):
    %m = arith.mulf %in, %scale : f32
    linalg.yield %m : f32
  } -> tensor<4x8x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#nch, #ch], iterator_types = ["reduction", "parallel", "reduction"]} ins(%n : tensor<4x8x16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %sum : tensor<8xf32>
}

// -----

// Tests that a reduction that reads a producer through a collapse_shape
// keeps its own loops (the GPU mapping picks its kernel by them): both
// generics stay.
// CHECK-LABEL: func.func @reduction_through_collapse
// CHECK: linalg.generic
// CHECK: tensor.collapse_shape
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
#id4r = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#in2 = affine_map<(d0, d1) -> (d0, d1)>
#out1 = affine_map<(d0, d1) -> (d0)>
func.func @reduction_through_collapse(%g: tensor<2x2x2x2xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<2x2x2x2xf32>
  %scaled = linalg.generic {indexing_maps = [#id4r, #id4r], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%g : tensor<2x2x2x2xf32>) outs(%e4 : tensor<2x2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<2x2x2x2xf32>
  %flat = tensor.collapse_shape %scaled [[0, 1], [2, 3]] : tensor<2x2x2x2xf32> into tensor<4x4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#in2, #out1], iterator_types = ["parallel", "reduction"]} ins(%flat : tensor<4x4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %sum : tensor<4xf32>
}

// -----

// Tests that under the CPU cost model BatchNorm's backward sums (sum of dy,
// sum of dy * (x - mean)) become one generic reading dy once, with both
// outputs, while the default (GPU) model keeps two.

#nchw = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @bn_backward_sums
// CHECK-COUNT-2: iterator_types = ["reduction", "parallel", "reduction"]
// CPU-LABEL: func.func @bn_backward_sums
// CPU-SAME: (%[[DY:.*]]: tensor<4x8x16xf32>, %[[X:.*]]: tensor<4x8x16xf32>, %[[MEAN:.*]]: tensor<8xf32>)
// CPU: %[[SUMS:.*]]:2 = linalg.generic
// CPU-SAME: ins(%[[DY]], %[[X]], %[[MEAN]] :
// CPU: arith.addf
// CPU: arith.subf
// CPU: arith.mulf
// CPU: arith.addf
// CPU: linalg.yield
// CPU-NOT: linalg.generic
// CPU: return %[[SUMS]]#0, %[[SUMS]]#1
func.func @bn_backward_sums(%dy: tensor<4x8x16xf32>, %x: tensor<4x8x16xf32>, %mean: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#nchw, #c], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%dy : tensor<4x8x16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %dot = linalg.generic {indexing_maps = [#nchw, #nchw, #c, #c], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%dy, %x, %mean : tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%d: f32, %v: f32, %m: f32, %acc: f32):
    %centred = arith.subf %v, %m : f32
    %p = arith.mulf %d, %centred : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %sum, %dot : tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests that the CPU cost model merges no reductions that depend on each
// other (the variance needs the mean) or run different loops, and repeats
// no per-channel arithmetic per element, while a per-channel copy (a
// broadcast) still fuses.

#nchw = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d1)>
#vec = affine_map<(d0) -> (d0)>
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CPU-LABEL: func.func @cpu_negative
// CPU-SAME: (%[[X:.*]]: tensor<4x8x16xf32>, %[[G:.*]]: tensor<8xf32>, %[[S:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>, %[[FLAT:.*]]: tensor<8x64xf32>)
// CPU: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[X]] :
// CPU: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] :
// CPU: %[[VAR:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[MEAN]] :
// CPU: %[[SCALE:.*]] = linalg.generic {{.*}} ins(%[[G]], %[[S]] :
// CPU: arith.mulf
// CPU: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[SCALE]], %[[B]] :
// CPU: linalg.generic {{.*}} ins(%[[FLAT]] :
// CPU: return
func.func @cpu_negative(%x: tensor<4x8x16xf32>, %g: tensor<8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>, %flat: tensor<8x64xf32>)
    -> (tensor<8xf32>, tensor<4x8x16xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 64.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#nchw, #c], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%x : tensor<4x8x16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %mean = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%sum : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %r = arith.divf %a, %n : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %var = linalg.generic {indexing_maps = [#nchw, #c, #c], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%x, %mean : tensor<4x8x16xf32>, tensor<8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %m: f32, %acc: f32):
    %d = arith.subf %a, %m : f32
    %sq = arith.mulf %d, %d : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %scale = linalg.generic {indexing_maps = [#vec, #vec, #vec], iterator_types = ["parallel"]}
      ins(%g, %s : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %r = arith.mulf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %shift = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%b : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<8xf32>
  %e3 = tensor.empty() : tensor<4x8x16xf32>
  %y = linalg.generic {indexing_maps = [#nchw, #c, #c, #nchw], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %scale, %shift : tensor<4x8x16xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e3 : tensor<4x8x16xf32>) {
  ^bb0(%a: f32, %k: f32, %h: f32, %out: f32):
    %p = arith.mulf %a, %k : f32
    %r = arith.addf %p, %h : f32
    linalg.yield %r : f32
  } -> tensor<4x8x16xf32>
  %rowsum = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%flat : tensor<8x64xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %both = linalg.generic {indexing_maps = [#vec, #vec, #vec], iterator_types = ["parallel"]}
      ins(%var, %rowsum : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %r = arith.addf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %both, %y, %sum : tensor<8xf32>, tensor<4x8x16xf32>, tensor<8xf32>
}

// -----

// Tests that the CPU cost model merges no sibling reductions when one
// accumulates in place into a tensor the other reads (merged, the read
// would need a copy of it).

#nchw = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d1)>
// CPU-LABEL: func.func @in_place_sibling
// CPU: linalg.generic {{.*}} outs(%arg1 : tensor<8xf32>)
// CPU: linalg.generic {{.*}} ins(%arg0, %arg1 :
func.func @in_place_sibling(%x: tensor<4x8x16xf32>, %acc: tensor<8xf32>, %init: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %sum = linalg.generic {indexing_maps = [#nchw, #c], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%x : tensor<4x8x16xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%a: f32, %s: f32):
    %r = arith.addf %s, %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %scaled = linalg.generic {indexing_maps = [#nchw, #c, #c], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%x, %acc : tensor<4x8x16xf32>, tensor<8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %k: f32, %s: f32):
    %p = arith.mulf %a, %k : f32
    %r = arith.addf %s, %p : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %sum, %scaled : tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests that under the CPU cost model an elementwise op that computes into
// a tensor.empty writes over an input of the same type that the step
// computed and that nothing reads after it (the squares, summed before),
// so that bufferization stores in place; not over a function argument
// (the squares' own input), and not for the GPU steps.
// CHECK-LABEL: func.func @write_over_dying_input
// CHECK: %[[SQ:.*]] = linalg.generic
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: linalg.generic {{.*}} ins(%[[SQ]], %{{.*}} : tensor<4x8xf32>, tensor<4xf32>) outs(%[[E2]] : tensor<4x8xf32>)
// CPU-LABEL: func.func @write_over_dying_input
// CPU: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CPU: %[[SQ:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4x8xf32>) outs(%[[E]] : tensor<4x8xf32>)
// CPU: %[[SUM:.*]] = linalg.generic
// CPU: linalg.generic {{.*}} ins(%[[SQ]], %[[SUM]] : tensor<4x8xf32>, tensor<4xf32>) outs(%[[SQ]] : tensor<4x8xf32>)
#wo2 = affine_map<(d0, d1) -> (d0, d1)>
#wo1 = affine_map<(d0, d1) -> (d0)>
func.func @write_over_dying_input(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %sq = linalg.generic {indexing_maps = [#wo2, #wo2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#wo2, #wo1], iterator_types = ["parallel", "reduction"]} ins(%sq : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#wo2, #wo1, #wo2], iterator_types = ["parallel", "parallel"]} ins(%sq, %sum : tensor<4x8xf32>, tensor<4xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %d = arith.subf %in, %s : f32
    linalg.yield %d : f32
  } -> tensor<4x8xf32>
  return %r, %sum : tensor<4x8xf32>, tensor<4xf32>
}

// -----

// Tests that under the CPU cost model an elementwise op keeps its
// tensor.empty destination when its input is read after it (returned
// here): writing over it would change what that later reader sees; and
// when its innermost loop is shorter than a vector (2: a window offset,
// whose rows traincc-vectorize-interleaved-windows reads and writes with
// masked vectors wider than a row).
// CPU-LABEL: func.func @keep_input_read_later
// CPU: %[[SQ:.*]] = linalg.generic
// CPU: %[[SUM:.*]] = linalg.generic
// CPU: %[[E2:.*]] = tensor.empty() : tensor<4x8xf32>
// CPU: linalg.generic {{.*}} ins(%[[SQ]], %[[SUM]] : tensor<4x8xf32>, tensor<4xf32>) outs(%[[E2]] : tensor<4x8xf32>)
#ko2 = affine_map<(d0, d1) -> (d0, d1)>
#ko1 = affine_map<(d0, d1) -> (d0)>
func.func @keep_input_read_later(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %sq = linalg.generic {indexing_maps = [#ko2, #ko2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#ko2, #ko1], iterator_types = ["parallel", "reduction"]} ins(%sq : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#ko2, #ko1, #ko2], iterator_types = ["parallel", "parallel"]} ins(%sq, %sum : tensor<4x8xf32>, tensor<4xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %d = arith.subf %in, %s : f32
    linalg.yield %d : f32
  } -> tensor<4x8xf32>
  return %r, %sq : tensor<4x8xf32>, tensor<4x8xf32>
}
// CPU-LABEL: func.func @keep_short_rows
// CPU: %[[SQ:.*]] = linalg.generic
// CPU: %[[E2:.*]] = tensor.empty() : tensor<8x2xf32>
// CPU: linalg.generic {{.*}} ins(%[[SQ]], %{{.*}} : tensor<8x2xf32>, tensor<8xf32>) outs(%[[E2]] : tensor<8x2xf32>)
func.func @keep_short_rows(%x: tensor<8x2xf32>) -> (tensor<8x2xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x2xf32>
  %sq = linalg.generic {indexing_maps = [#ko2, #ko2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x2xf32>) outs(%e : tensor<8x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<8x2xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#ko2, #ko1], iterator_types = ["parallel", "reduction"]} ins(%sq : tensor<8x2xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8x2xf32>
  %r = linalg.generic {indexing_maps = [#ko2, #ko1, #ko2], iterator_types = ["parallel", "parallel"]} ins(%sq, %sum : tensor<8x2xf32>, tensor<8xf32>) outs(%e2 : tensor<8x2xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %d = arith.subf %in, %s : f32
    linalg.yield %d : f32
  } -> tensor<8x2xf32>
  return %r, %sum : tensor<8x2xf32>, tensor<8xf32>
}
