// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx | FileCheck %s

// Tests that the sub-graph PyTorch exports for `x.view(x.size(0), -1)`
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, opset 15, Unsqueeze
// axes as inputs) folds away entirely, leaving one static train.reshape.

// CHECK-LABEL: func.func @view_opset15
// CHECK-SAME: -> tensor<2x784xf32>
// CHECK-NOT: train.constant
// CHECK-NOT: train.onnx_node
// CHECK: %[[R:.*]] = train.reshape %arg0 : tensor<2x4x14x14xf32> -> tensor<2x784xf32>
// CHECK-NEXT: return %[[R]]
module attributes {train.onnx_opset = 15 : i64} {
  func.func @view_opset15(%x: tensor<2x4x14x14xf32>) -> tensor<?x?xf32> {
    %s = train.onnx_node "Shape"(%x) {node_name = "/Shape", onnx_attrs = {}} : (tensor<2x4x14x14xf32>) -> tensor<4xi64>
    %c0 = train.onnx_node "Constant"() {node_name = "/Constant", onnx_attrs = {value = dense<0> : tensor<i64>}} : () -> tensor<i64>
    %g = train.onnx_node "Gather"(%s, %c0) {node_name = "/Gather", onnx_attrs = {axis = 0 : i64}} : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
    %c1 = train.onnx_node "Constant"() {node_name = "/Constant_1", onnx_attrs = {value = dense<-1> : tensor<i64>}} : () -> tensor<i64>
    %a0 = train.onnx_node "Constant"() {node_name = "Constant_7", onnx_attrs = {value = dense<0> : tensor<1xi64>}} : () -> tensor<1xi64>
    %u0 = train.onnx_node "Unsqueeze"(%g, %a0) {node_name = "/Unsqueeze", onnx_attrs = {}} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %a1 = train.onnx_node "Constant"() {node_name = "Constant_9", onnx_attrs = {value = dense<0> : tensor<1xi64>}} : () -> tensor<1xi64>
    %u1 = train.onnx_node "Unsqueeze"(%c1, %a1) {node_name = "/Unsqueeze_1", onnx_attrs = {}} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %cat = train.onnx_node "Concat"(%u0, %u1) {node_name = "/Concat", onnx_attrs = {axis = 0 : i64}} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %r = train.onnx_node "Reshape"(%x, %cat) {node_name = "/Reshape", onnx_attrs = {allowzero = 0 : i64}} : (tensor<2x4x14x14xf32>, tensor<2xi64>) -> tensor<?x?xf32>
    return %r : tensor<?x?xf32>
  }
}

// -----

// Tests that the same pattern folds in opset 11 (Unsqueeze axes as an
// attribute, an integer initializer as train.constant) when it is fed by a
// legalised op whose result type only the shape function knows.

// CHECK-LABEL: func.func @view_opset11
// CHECK-NOT: train.constant
// CHECK: %[[P:.*]] = train.max_pool
// CHECK-NEXT: %[[R:.*]] = train.reshape %[[P]] : tensor<3x4x2x2xf32> -> tensor<3x16xf32>
// CHECK-NEXT: return %[[R]]
module attributes {train.onnx_opset = 11 : i64} {
  func.func @view_opset11(%x: tensor<3x4x4x4xf32>) -> tensor<*xf32> {
    %p = train.onnx_node "MaxPool"(%x) {node_name = "pool", onnx_attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}} : (tensor<3x4x4x4xf32>) -> tensor<?x4x?x?xf32>
    %s = train.onnx_node "Shape"(%p) {node_name = "/Shape", onnx_attrs = {}} : (tensor<?x4x?x?xf32>) -> tensor<4xi64>
    %c0 = train.constant dense<0> : tensor<i64>
    %g = train.onnx_node "Gather"(%s, %c0) {node_name = "/Gather", onnx_attrs = {axis = 0 : i64}} : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
    %c1 = train.onnx_node "Constant"() {node_name = "/Constant_1", onnx_attrs = {value = dense<-1> : tensor<i64>}} : () -> tensor<i64>
    %u0 = train.onnx_node "Unsqueeze"(%g) {node_name = "/Unsqueeze", onnx_attrs = {axes = array<i64: 0>}} : (tensor<i64>) -> tensor<1xi64>
    %u1 = train.onnx_node "Unsqueeze"(%c1) {node_name = "/Unsqueeze_1", onnx_attrs = {axes = array<i64: 0>}} : (tensor<i64>) -> tensor<1xi64>
    %cat = train.onnx_node "Concat"(%u0, %u1) {node_name = "/Concat", onnx_attrs = {axis = 0 : i64}} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %r = train.onnx_node "Reshape"(%p, %cat) {node_name = "/Reshape", onnx_attrs = {}} : (tensor<?x4x?x?xf32>, tensor<2xi64>) -> tensor<*xf32>
    return %r : tensor<*xf32>
  }
}

// -----

// Tests that opset-15 Shape honours negative start and end, and that Gather
// on a constant matrix picks columns with a negative index.

// CHECK-LABEL: func.func @shape_start_end
// CHECK: %[[S:.*]] = train.constant dense<[3, 5]> : tensor<2xi64>
// CHECK: %[[G:.*]] = train.constant dense<{{\[}}[3, 1], [6, 4]]> : tensor<2x2xi32>
// CHECK: return %[[S]], %[[G]]
module attributes {train.onnx_opset = 15 : i64} {
  func.func @shape_start_end(%x: tensor<2x3x5x7xf32>) -> (tensor<*xi64>, tensor<*xi32>) {
    %s = train.onnx_node "Shape"(%x) {node_name = "shape", onnx_attrs = {start = -3 : i64, end = -1 : i64}} : (tensor<2x3x5x7xf32>) -> tensor<*xi64>
    %d = train.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
    %i = train.constant dense<[-1, 0]> : tensor<2xi64>
    %g = train.onnx_node "Gather"(%d, %i) {node_name = "gather", onnx_attrs = {axis = 1 : i64}} : (tensor<2x3xi32>, tensor<2xi64>) -> tensor<*xi32>
    return %s, %g : tensor<*xi64>, tensor<*xi32>
  }
}

// -----

// Tests that Unsqueeze (opset 13, axes input, negative axes) and Squeeze
// (explicit axes, and all unit axes when none or an empty list are given)
// on float data become train.reshape.

// CHECK-LABEL: func.func @unsqueeze_squeeze_opset13
// CHECK: %[[U:.*]] = train.reshape %arg0 : tensor<2x3xf32> -> tensor<1x2x3x1xf32>
// CHECK: %[[S:.*]] = train.reshape %[[U]] : tensor<1x2x3x1xf32> -> tensor<2x3x1xf32>
// CHECK: %[[T:.*]] = train.reshape %[[S]] : tensor<2x3x1xf32> -> tensor<2x3xf32>
// CHECK: %[[E:.*]] = train.reshape %arg1 : tensor<1x4x1xf32> -> tensor<4xf32>
// CHECK: return %[[T]], %[[E]]
module attributes {train.onnx_opset = 13 : i64} {
  func.func @unsqueeze_squeeze_opset13(%x: tensor<2x3xf32>, %y: tensor<1x4x1xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %axes = train.constant dense<[0, -1]> : tensor<2xi64>
    %u = train.onnx_node "Unsqueeze"(%x, %axes) {node_name = "u", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32>
    %a0 = train.constant dense<0> : tensor<1xi64>
    %s = train.onnx_node "Squeeze"(%u, %a0) {node_name = "s", onnx_attrs = {}} : (tensor<*xf32>, tensor<1xi64>) -> tensor<*xf32>
    %t = train.onnx_node "Squeeze"(%s) {node_name = "t", onnx_attrs = {}} : (tensor<*xf32>) -> tensor<*xf32>
    %none = train.constant dense<> : tensor<0xi64>
    %e = train.onnx_node "Squeeze"(%y, %none) {node_name = "e", onnx_attrs = {}} : (tensor<1x4x1xf32>, tensor<0xi64>) -> tensor<*xf32>
    return %t, %e : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Tests that opset-11 Squeeze reads its axes attribute and keeps the unit
// axes it does not name.

// CHECK-LABEL: func.func @squeeze_opset11
// CHECK: train.reshape %arg0 : tensor<1x2x1x3xf32> -> tensor<1x2x3xf32>
module attributes {train.onnx_opset = 11 : i64} {
  func.func @squeeze_opset11(%x: tensor<1x2x1x3xf32>) -> tensor<*xf32> {
    %s = train.onnx_node "Squeeze"(%x) {node_name = "s", onnx_attrs = {axes = array<i64: -2>}} : (tensor<1x2x1x3xf32>) -> tensor<*xf32>
    return %s : tensor<*xf32>
  }
}

// -----

// Tests that Concat of float tensors becomes train.concat with a
// normalised axis.

// CHECK-LABEL: func.func @concat_float
// CHECK: train.concat %arg0, %arg1 axis 1 : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
func.func @concat_float(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<*xf32> {
  %c = train.onnx_node "Concat"(%a, %b) {node_name = "cat", onnx_attrs = {axis = -1 : i64}} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<*xf32>
  return %c : tensor<*xf32>
}

// -----

// Tests that Concat of constant matrices folds along axis 1.

// CHECK-LABEL: func.func @concat_fold
// CHECK: train.constant dense<{{\[}}[1, 2, 5], [3, 4, 6]]> : tensor<2x3xi64>
// CHECK-NOT: train.concat
func.func @concat_fold() -> tensor<*xi64> {
  %a = train.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %b = train.constant dense<[[5], [6]]> : tensor<2x1xi64>
  %c = train.onnx_node "Concat"(%a, %b) {node_name = "cat", onnx_attrs = {axis = 1 : i64}} : (tensor<2x2xi64>, tensor<2x1xi64>) -> tensor<*xi64>
  return %c : tensor<*xi64>
}

// -----

// Tests that Reshape copies a dimension for 0, infers -1, and with
// allowzero = 1 (opset 14) keeps a 0 as an empty dimension.

// CHECK-LABEL: func.func @reshape
// CHECK: train.reshape %arg0 : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
// CHECK: train.reshape %arg1 : tensor<0x3xf32> -> tensor<3x0xf32>
module attributes {train.onnx_opset = 14 : i64} {
  func.func @reshape(%x: tensor<2x3x4xf32>, %e: tensor<0x3xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
    %shape = train.constant dense<[0, 4, -1]> : tensor<3xi64>
    %r = train.onnx_node "Reshape"(%x, %shape) {node_name = "r", onnx_attrs = {}} : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<*xf32>
    %zero = train.constant dense<[3, 0]> : tensor<2xi64>
    %z = train.onnx_node "Reshape"(%e, %zero) {node_name = "z", onnx_attrs = {allowzero = 1 : i64}} : (tensor<0x3xf32>, tensor<2xi64>) -> tensor<*xf32>
    return %r, %z : tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Tests that Flatten becomes train.flatten with a normalised axis (default
// 1), and folds on a constant.

// CHECK-LABEL: func.func @flatten
// CHECK: train.flatten %arg0 axis 1 : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
// CHECK: train.flatten %arg0 axis 2 : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK: train.constant dense<{{\[}}[1, 2, 3, 4]]> : tensor<1x4xi64>
func.func @flatten(%x: tensor<2x3x4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xi64>) {
  %a = train.onnx_node "Flatten"(%x) {node_name = "a", onnx_attrs = {}} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  %b = train.onnx_node "Flatten"(%x) {node_name = "b", onnx_attrs = {axis = -1 : i64}} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  %c = train.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %d = train.onnx_node "Flatten"(%c) {node_name = "d", onnx_attrs = {axis = 0 : i64}} : (tensor<2x2xi64>) -> tensor<*xi64>
  return %a, %b, %d : tensor<*xf32>, tensor<*xf32>, tensor<*xi64>
}

// -----

// Tests that Transpose without perm reverses the axes, keeps an explicit
// perm, and folds on constants.

// CHECK-LABEL: func.func @transpose
// CHECK: train.transpose %arg0 perm [2, 1, 0] : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
// CHECK: train.transpose %arg0 perm [0, 2, 1] : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
// CHECK: train.constant dense<{{\[}}[1, 4], [2, 5], [3, 6]]> : tensor<3x2xi64>
func.func @transpose(%x: tensor<2x3x4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xi64>) {
  %a = train.onnx_node "Transpose"(%x) {node_name = "a", onnx_attrs = {}} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  %b = train.onnx_node "Transpose"(%x) {node_name = "b", onnx_attrs = {perm = array<i64: 0, 2, 1>}} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  %c = train.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %d = train.onnx_node "Transpose"(%c) {node_name = "d", onnx_attrs = {}} : (tensor<2x3xi64>) -> tensor<*xi64>
  return %a, %b, %d : tensor<*xf32>, tensor<*xf32>, tensor<*xi64>
}

// -----

// Tests that opset-9 Slice (attributes, negative start, INT_MAX-style end)
// on float data gets an explicit start, end and step on every axis.

// CHECK-LABEL: func.func @slice_opset9
// CHECK: train.slice %arg0 starts [0, 6] ends [4, 10] steps [1, 1] : (tensor<4x10xf32>) -> tensor<4x4xf32>
module attributes {train.onnx_opset = 9 : i64} {
  func.func @slice_opset9(%x: tensor<4x10xf32>) -> tensor<*xf32> {
    %s = train.onnx_node "Slice"(%x) {node_name = "s", onnx_attrs = {axes = array<i64: 1>, ends = array<i64: 9223372036854775807>, starts = array<i64: -4>}} : (tensor<4x10xf32>) -> tensor<*xf32>
    return %s : tensor<*xf32>
  }
}

// -----

// Tests that opset-13 Slice with constant inputs normalises a reversal
// (start -1, end INT64_MIN, step -1 clamp to [dim - 1, -1)), a stride of 2
// on a negative axis, and an empty range (to [0, 0)).

// CHECK-LABEL: func.func @slice_opset13
// CHECK: train.slice %arg0 starts [3, 1, 0] ends [-1, 10, 0] steps [-1, 2, 1] : (tensor<4x10x3xf32>) -> tensor<4x5x0xf32>
module attributes {train.onnx_opset = 13 : i64} {
  func.func @slice_opset13(%x: tensor<4x10x3xf32>) -> tensor<*xf32> {
    %starts = train.constant dense<[-1, 1, 2]> : tensor<3xi64>
    %ends = train.constant dense<[-9223372036854775808, 100, 1]> : tensor<3xi64>
    %axes = train.constant dense<[0, -2, 2]> : tensor<3xi64>
    %steps = train.constant dense<[-1, 2, 1]> : tensor<3xi64>
    %s = train.onnx_node "Slice"(%x, %starts, %ends, %axes, %steps) {node_name = "s", onnx_attrs = {}} : (tensor<4x10x3xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<*xf32>
    return %s : tensor<*xf32>
  }
}

// -----

// Tests that Slice on a constant shape (shape[2:], as exported for
// `x.shape[2:]`) folds, with axes and steps omitted.

// CHECK-LABEL: func.func @slice_fold
// CHECK: %[[C:.*]] = train.constant dense<[5, 7]> : tensor<2xi64>
// CHECK-NOT: train.slice
// CHECK: return %[[C]]
module attributes {train.onnx_opset = 13 : i64} {
  func.func @slice_fold(%x: tensor<2x3x5x7xf32>) -> tensor<*xi64> {
    %shape = train.onnx_node "Shape"(%x) {node_name = "shape", onnx_attrs = {}} : (tensor<2x3x5x7xf32>) -> tensor<4xi64>
    %starts = train.constant dense<2> : tensor<1xi64>
    %ends = train.constant dense<9223372036854775807> : tensor<1xi64>
    %none = train.onnx_none
    %s = train.onnx_node "Slice"(%shape, %starts, %ends, %none, %none) {node_name = "s", onnx_attrs = {}} : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, none, none) -> tensor<*xi64>
    return %s : tensor<*xi64>
  }
}

// -----

// Tests that every Constant form becomes train.constant: value tensors,
// value_float(s) and value_int(s).

// CHECK-LABEL: func.func @constants
// CHECK: train.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: train.constant dense<2.500000e+00> : tensor<f32>
// CHECK: train.constant dense<[1.500000e+00, -1.000000e+00]> : tensor<2xf32>
// CHECK: train.constant dense<7> : tensor<i64>
// CHECK: train.constant dense<[3, 4]> : tensor<2xi64>
// CHECK-NOT: train.onnx_node
func.func @constants() -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xi64>, tensor<*xi64>) {
  %a = train.onnx_node "Constant"() {node_name = "a", onnx_attrs = {value = dense<[1.0, 2.0]> : tensor<2xf32>}} : () -> tensor<*xf32>
  %b = train.onnx_node "Constant"() {node_name = "b", onnx_attrs = {value_float = 2.5 : f32}} : () -> tensor<*xf32>
  %c = train.onnx_node "Constant"() {node_name = "c", onnx_attrs = {value_floats = array<f32: 1.5, -1.0>}} : () -> tensor<*xf32>
  %d = train.onnx_node "Constant"() {node_name = "d", onnx_attrs = {value_int = 7 : i64}} : () -> tensor<*xi64>
  %e = train.onnx_node "Constant"() {node_name = "e", onnx_attrs = {value_ints = array<i64: 3, 4>}} : () -> tensor<*xi64>
  return %a, %b, %c, %d, %e : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xi64>, tensor<*xi64>
}

// -----

// Tests that the sub-graph PyTorch exports for `expand` with a -1 entry
// (ConstantOfShape -> Mul -> Equal -> Where -> Expand), plus Range and
// Cast, folds entirely.

// CHECK-LABEL: func.func @expand_subgraph
// CHECK: %[[E:.*]] = train.constant dense<{{\[}}[0, 1, 2], [0, 1, 2]]> : tensor<2x3xi64>
// CHECK: %[[C:.*]] = train.constant dense<[0.000000e+00, 1.000000e+00, 2.000000e+00]> : tensor<3xf32>
// CHECK-NOT: train.onnx_node
// CHECK: return %[[E]], %[[C]]
func.func @expand_subgraph() -> (tensor<*xi64>, tensor<*xf32>) {
  %start = train.constant dense<0> : tensor<i64>
  %limit = train.constant dense<3> : tensor<i64>
  %delta = train.constant dense<1> : tensor<i64>
  %range = train.onnx_node "Range"(%start, %limit, %delta) {node_name = "range", onnx_attrs = {}} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<*xi64>
  %shape = train.constant dense<[2, -1]> : tensor<2xi64>
  %len = train.constant dense<2> : tensor<1xi64>
  %ones = train.onnx_node "ConstantOfShape"(%len) {node_name = "cos", onnx_attrs = {value = dense<1> : tensor<1xi64>}} : (tensor<1xi64>) -> tensor<2xi64>
  %minus = train.constant dense<-1> : tensor<i64>
  %neg = train.onnx_node "Mul"(%ones, %minus) {node_name = "mul", onnx_attrs = {}} : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  %eq = train.onnx_node "Equal"(%shape, %neg) {node_name = "eq", onnx_attrs = {}} : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
  %fixed = train.onnx_node "Where"(%eq, %ones, %shape) {node_name = "where", onnx_attrs = {}} : (tensor<2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %e = train.onnx_node "Expand"(%range, %fixed) {node_name = "expand", onnx_attrs = {}} : (tensor<*xi64>, tensor<2xi64>) -> tensor<*xi64>
  %c = train.onnx_node "Cast"(%range) {node_name = "cast", onnx_attrs = {to = 1 : i64}} : (tensor<*xi64>) -> tensor<*xf32>
  return %e, %c : tensor<*xi64>, tensor<*xf32>
}

// -----

// Tests that ConstantOfShape defaults to float zeros as a splat, and that a
// Cast of float data to its own type is the identity.

// CHECK-LABEL: func.func @constant_of_shape_and_cast
// CHECK: %[[Z:.*]] = train.constant dense<0.000000e+00> : tensor<2x3xf32>
// CHECK-NOT: train.onnx_node
// CHECK: return %[[Z]], %arg0
func.func @constant_of_shape_and_cast(%x: tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %shape = train.constant dense<[2, 3]> : tensor<2xi64>
  %z = train.onnx_node "ConstantOfShape"(%shape) {node_name = "zeros", onnx_attrs = {}} : (tensor<2xi64>) -> tensor<*xf32>
  %c = train.onnx_node "Cast"(%x) {node_name = "cast", onnx_attrs = {to = 1 : i64}} : (tensor<4xf32>) -> tensor<*xf32>
  return %z, %c : tensor<*xf32>, tensor<*xf32>
}

// -----

// Tests that a Cast of non-constant data between float types (a model's
// own mixed precision) is train.cast.

// CHECK-LABEL: func.func @cast_between_floats
// CHECK: %[[H:.*]] = train.cast %arg0 : tensor<4xf32> to tensor<4xf16>
// CHECK: %[[B:.*]] = train.cast %[[H]] : tensor<4xf16> to tensor<4xbf16>
// CHECK: return %[[H]], %[[B]]
func.func @cast_between_floats(%x: tensor<4xf32>) -> (tensor<*xf16>, tensor<*xbf16>) {
  %h = train.onnx_node "Cast"(%x) {node_name = "half", onnx_attrs = {to = 10 : i64}} : (tensor<4xf32>) -> tensor<*xf16>
  %b = train.onnx_node "Cast"(%h) {node_name = "bf", onnx_attrs = {to = 16 : i64}} : (tensor<*xf16>) -> tensor<*xbf16>
  return %h, %b : tensor<*xf16>, tensor<*xbf16>
}

// -----

// Tests that a graph input gathered from (token ids into an embedding) is
// marked with the rows of the smallest table it indexes, which the trainer
// checks ids against as it loads them.

// CHECK-LABEL: func.func @gather_ids
// CHECK-SAME: %arg0: tensor<2x5xi64> {train.id_limit = 7 : i64}
// CHECK: train.gather %arg1, %arg0 axis 0
// CHECK: train.gather %arg2, %arg0 axis 0
func.func @gather_ids(%ids: tensor<2x5xi64>, %big: tensor<10x4xf32>, %small: tensor<7x4xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %0 = train.onnx_node "Gather"(%big, %ids) {node_name = "emb1", onnx_attrs = {axis = 0 : i64}} : (tensor<10x4xf32>, tensor<2x5xi64>) -> tensor<*xf32>
  %1 = train.onnx_node "Gather"(%small, %ids) {node_name = "emb2", onnx_attrs = {axis = 0 : i64}} : (tensor<7x4xf32>, tensor<2x5xi64>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// Tests that Expand of computed float data (a class token over the batch)
// is a train.broadcast_to, and no broadcast when the shape stays.

// CHECK-LABEL: func.func @expand_computed
// CHECK: %[[B:.*]] = train.broadcast_to %arg0 : tensor<1x1x8xf32> -> tensor<4x1x8xf32>
// CHECK-NOT: train.broadcast_to
// CHECK: return %[[B]], %arg0
func.func @expand_computed(%x: tensor<1x1x8xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %s = train.constant dense<[4, 1, 1]> : tensor<3xi64>
  %t = train.constant dense<[1, 1, 1]> : tensor<3xi64>
  %0 = train.onnx_node "Expand"(%x, %s) {node_name = "e", onnx_attrs = {}} : (tensor<1x1x8xf32>, tensor<3xi64>) -> tensor<*xf32>
  %1 = train.onnx_node "Expand"(%x, %t) {node_name = "f", onnx_attrs = {}} : (tensor<1x1x8xf32>, tensor<3xi64>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// Tests that Tile of computed float data (Keras 3's UpSampling2D) opens a
// size-1 axis before each axis, broadcasts it to the repeats and merges the
// pairs, that repeats of 1 leave the input alone, and that Tile of a
// constant folds (output index o reads input index o mod size).

// CHECK-LABEL: func.func @tile
// CHECK: %[[G:.*]] = train.reshape %arg0 : tensor<2x3xf32> -> tensor<1x2x1x3xf32>
// CHECK: %[[B:.*]] = train.broadcast_to %[[G]] : tensor<1x2x1x3xf32> -> tensor<2x2x1x3xf32>
// CHECK: %[[T:.*]] = train.reshape %[[B]] : tensor<2x2x1x3xf32> -> tensor<4x3xf32>
// CHECK: %[[C:.*]] = train.constant dense<{{\[}}[1, 2, 1, 2, 1, 2], [3, 4, 3, 4, 3, 4]]> : tensor<2x6xi64>
// CHECK-NOT: train.broadcast_to
// CHECK: return %[[T]], %arg0, %[[C]]
func.func @tile(%x: tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xi64>) {
  %r = train.constant dense<[2, 1]> : tensor<2xi64>
  %ones = train.constant dense<[1, 1]> : tensor<2xi64>
  %c = train.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %three = train.constant dense<[1, 3]> : tensor<2xi64>
  %0 = train.onnx_node "Tile"(%x, %r) {node_name = "t", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32>
  %1 = train.onnx_node "Tile"(%x, %ones) {node_name = "u", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32>
  %2 = train.onnx_node "Tile"(%c, %three) {node_name = "v", onnx_attrs = {}} : (tensor<2x2xi64>, tensor<2xi64>) -> tensor<*xi64>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xi64>
}

// -----

// Tests that CastLike casts to the element type of its second input: a
// train.cast between float types, nothing for the same type.

// CHECK-LABEL: func.func @cast_like
// CHECK: %[[C:.*]] = train.cast %arg0 : tensor<2x3xf32> to tensor<2x3xf16>
// CHECK-NOT: train.cast
// CHECK: return %[[C]], %arg0
func.func @cast_like(%x: tensor<2x3xf32>, %h: tensor<1xf16>, %f: tensor<f32>) -> (tensor<*xf16>, tensor<*xf32>) {
  %0 = train.onnx_node "CastLike"(%x, %h) {node_name = "c", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<1xf16>) -> tensor<*xf16>
  %1 = train.onnx_node "CastLike"(%x, %f) {node_name = "d", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<f32>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf16>, tensor<*xf32>
}
