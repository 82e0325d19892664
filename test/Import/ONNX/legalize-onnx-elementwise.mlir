// RUN: traincc-opt %s -split-input-file -traincc-legalize-onnx | FileCheck %s

// Tests that Add, Sub, Mul and Div on float tensors become the broadcasting
// Train ops with the broadcast result type.

// CHECK-LABEL: func.func @arithmetic
// CHECK: %[[ADD:.*]] = train.add %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: %[[SUB:.*]] = train.sub %[[ADD]], %arg2 : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK: %[[MUL:.*]] = train.mul %[[SUB]], %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: %[[DIV:.*]] = train.div %arg2, %[[MUL]] : (tensor<2x1xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: return %[[DIV]]
func.func @arithmetic(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2x1xf32>) -> tensor<*xf32> {
  %0 = train.onnx_node "Add"(%a, %b) {node_name = "add", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<*xf32>
  %1 = train.onnx_node "Sub"(%0, %c) {node_name = "sub", onnx_attrs = {}} : (tensor<*xf32>, tensor<2x1xf32>) -> tensor<*xf32>
  %2 = train.onnx_node "Mul"(%1, %b) {node_name = "mul", onnx_attrs = {}} : (tensor<*xf32>, tensor<3xf32>) -> tensor<*xf32>
  %3 = train.onnx_node "Div"(%c, %2) {node_name = "div", onnx_attrs = {}} : (tensor<2x1xf32>, tensor<*xf32>) -> tensor<*xf32>
  return %3 : tensor<*xf32>
}

// -----

// Tests that integer arithmetic on constants folds (with broadcasting, and
// division truncating toward zero: -9 / 2 = -4) instead of producing Train
// ops, and that the folded inputs go away.

// CHECK-LABEL: func.func @integer_folding
// CHECK-NOT: train.add
// CHECK-NOT: train.sub
// CHECK-NOT: train.mul
// CHECK-NOT: train.div
// CHECK: %[[C:.*]] = train.constant dense<[-4, 7]> : tensor<2xi64>
// CHECK-NOT: train.constant
// CHECK: return %[[C]]
func.func @integer_folding() -> tensor<*xi64> {
  %a = train.constant dense<[4, 9]> : tensor<2xi64>
  %b = train.constant dense<2> : tensor<1xi64>
  %c = train.constant dense<[1, 5]> : tensor<2xi64>
  %0 = train.onnx_node "Mul"(%a, %b) {node_name = "mul", onnx_attrs = {}} : (tensor<2xi64>, tensor<1xi64>) -> tensor<*xi64>
  %1 = train.onnx_node "Sub"(%0, %c) {node_name = "sub", onnx_attrs = {}} : (tensor<*xi64>, tensor<2xi64>) -> tensor<*xi64>
  %2 = train.onnx_node "Add"(%1, %b) {node_name = "add", onnx_attrs = {}} : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  %n = train.constant dense<[-1, 1]> : tensor<2xi64>
  %3 = train.onnx_node "Mul"(%2, %n) {node_name = "neg", onnx_attrs = {}} : (tensor<*xi64>, tensor<2xi64>) -> tensor<*xi64>
  %4 = train.onnx_node "Div"(%3, %b) {node_name = "div", onnx_attrs = {}} : (tensor<*xi64>, tensor<1xi64>) -> tensor<*xi64>
  return %4 : tensor<*xi64>
}

// -----

// Tests that activations become their Train ops, with LeakyRelu's alpha
// defaulting to 0.01.

// CHECK-LABEL: func.func @activations
// CHECK: %[[R:.*]] = train.relu %arg0 : tensor<2x3xf32>
// CHECK: %[[S:.*]] = train.sigmoid %[[R]] : tensor<2x3xf32>
// CHECK: %[[T:.*]] = train.tanh %[[S]] : tensor<2x3xf32>
// CHECK: %[[L:.*]] = train.leaky_relu %[[T]] alpha 0.00999999977 : tensor<2x3xf32>
// CHECK: train.leaky_relu %[[L]] alpha 2.000000e-01 : tensor<2x3xf32>
func.func @activations(%x: tensor<2x3xf32>) -> tensor<*xf32> {
  %0 = train.onnx_node "Relu"(%x) {node_name = "relu", onnx_attrs = {}} : (tensor<2x3xf32>) -> tensor<*xf32>
  %1 = train.onnx_node "Sigmoid"(%0) {node_name = "sigmoid", onnx_attrs = {}} : (tensor<*xf32>) -> tensor<*xf32>
  %2 = train.onnx_node "Tanh"(%1) {node_name = "tanh", onnx_attrs = {}} : (tensor<*xf32>) -> tensor<*xf32>
  %3 = train.onnx_node "LeakyRelu"(%2) {node_name = "leaky", onnx_attrs = {}} : (tensor<*xf32>) -> tensor<*xf32>
  %4 = train.onnx_node "LeakyRelu"(%3) {node_name = "leaky2", onnx_attrs = {alpha = 0.2 : f32}} : (tensor<*xf32>) -> tensor<*xf32>
  return %4 : tensor<*xf32>
}

// -----

// Tests that opset-11+ Clip reads its bounds from constant inputs (the
// ReLU6 that mobilenet_v2 exports) and drops the constants; an omitted
// bound does not clamp.

// CHECK-LABEL: func.func @clip_opset13
// CHECK-NOT: train.constant
// CHECK: %[[C:.*]] = train.clip %arg0 min 0.000000e+00 max 6.000000e+00 : tensor<2x3xf32>
// CHECK: train.clip %[[C]] max 1.000000e+00 : tensor<2x3xf32>
module attributes {train.onnx_opset = 13 : i64} {
  func.func @clip_opset13(%x: tensor<2x3xf32>) -> tensor<*xf32> {
    %lo = train.onnx_node "Constant"() {node_name = "lo", onnx_attrs = {value = dense<0.0> : tensor<f32>}} : () -> tensor<f32>
    %hi = train.onnx_node "Constant"() {node_name = "hi", onnx_attrs = {value = dense<6.0> : tensor<f32>}} : () -> tensor<f32>
    %0 = train.onnx_node "Clip"(%x, %lo, %hi) {node_name = "relu6", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> tensor<*xf32>
    %none = train.onnx_none
    %one = train.constant dense<1.0> : tensor<f32>
    %1 = train.onnx_node "Clip"(%0, %none, %one) {node_name = "upper", onnx_attrs = {}} : (tensor<*xf32>, none, tensor<f32>) -> tensor<*xf32>
    return %1 : tensor<*xf32>
  }
}

// -----

// Tests that Clip bounds stored as float initializers are read from the
// parameters' initial values, and that those parameters then go away.

// CHECK-LABEL: module @clip_initializers
// CHECK-NOT: train.param
// CHECK-NOT: train.read_param
// CHECK: train.clip %arg0 min 0.000000e+00 max 6.000000e+00 : tensor<2x3xf32>
module @clip_initializers attributes {train.onnx_opset = 13 : i64} {
  train.param @lo trainable : tensor<f32> = dense<0.0>
  train.param @hi trainable : tensor<f32> = dense<6.0>
  func.func @forward(%x: tensor<2x3xf32>) -> tensor<*xf32> {
    %lo = train.read_param @lo : tensor<f32>
    %hi = train.read_param @hi : tensor<f32>
    %0 = train.onnx_node "Clip"(%x, %lo, %hi) {node_name = "relu6", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> tensor<*xf32>
    return %0 : tensor<*xf32>
  }
}

// -----

// Tests that Clip bounds that are graph inputs become train.maximum (min)
// and train.minimum (max) in ONNX's order, that a [1] bound is reshaped to a
// scalar so that it cannot widen the result, and that a constant bound next
// to a tensor one stays a train.clip.

// CHECK-LABEL: func.func @clip_tensor_bounds
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[LO:.*]]: tensor<f32>, %[[HI:.*]]: tensor<1xf32>)
// CHECK: %[[HI0:.*]] = train.reshape %[[HI]] : tensor<1xf32> -> tensor<f32>
// CHECK: %[[MAX:.*]] = train.maximum %[[X]], %[[LO]] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: %[[MIN:.*]] = train.minimum %[[MAX]], %[[HI0]] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: %[[HI1:.*]] = train.reshape %[[HI]] : tensor<1xf32> -> tensor<f32>
// CHECK: %[[C1:.*]] = train.clip %[[MIN]] min 0.000000e+00 : tensor<2x3xf32>
// CHECK: %[[M1:.*]] = train.minimum %[[C1]], %[[HI1]]
// CHECK: %[[M2:.*]] = train.maximum %[[M1]], %[[LO]]
// CHECK: %[[C2:.*]] = train.clip %[[M2]] max 6.000000e+00 : tensor<2x3xf32>
// CHECK: return %[[C2]]
module attributes {train.onnx_opset = 13 : i64} {
  func.func @clip_tensor_bounds(%x: tensor<2x3xf32>, %lo: tensor<f32>, %hi: tensor<1xf32>) -> tensor<*xf32> {
    %0 = train.onnx_node "Clip"(%x, %lo, %hi) {node_name = "both", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<f32>, tensor<1xf32>) -> tensor<*xf32>
    %zero = train.constant dense<0.0> : tensor<f32>
    %1 = train.onnx_node "Clip"(%0, %zero, %hi) {node_name = "const_min", onnx_attrs = {}} : (tensor<*xf32>, tensor<f32>, tensor<1xf32>) -> tensor<*xf32>
    %six = train.constant dense<6.0> : tensor<f32>
    %2 = train.onnx_node "Clip"(%1, %lo, %six) {node_name = "const_max", onnx_attrs = {}} : (tensor<*xf32>, tensor<f32>, tensor<f32>) -> tensor<*xf32>
    return %2 : tensor<*xf32>
  }
}

// -----

// Tests that variadic Max and Min fold left to right into broadcasting
// binary ops, and that one input is its own result.

// CHECK-LABEL: func.func @max_min
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<3xf32>, %[[C:.*]]: tensor<2x1xf32>)
// CHECK: %[[M0:.*]] = train.maximum %[[A]], %[[B]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: %[[M1:.*]] = train.maximum %[[M0]], %[[C]] : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK: %[[N:.*]] = train.minimum %[[B]], %[[C]] : (tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK-NOT: train.minimum
// CHECK: return %[[M1]], %[[N]], %[[A]]
module attributes {train.onnx_opset = 13 : i64} {
  func.func @max_min(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2x1xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
    %0 = train.onnx_node "Max"(%a, %b, %c) {node_name = "max", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<3xf32>, tensor<2x1xf32>) -> tensor<*xf32>
    %1 = train.onnx_node "Min"(%b, %c) {node_name = "min", onnx_attrs = {}} : (tensor<3xf32>, tensor<2x1xf32>) -> tensor<*xf32>
    %2 = train.onnx_node "Min"(%a) {node_name = "one", onnx_attrs = {}} : (tensor<2x3xf32>) -> tensor<*xf32>
    return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
  }
}

// -----

// Tests that Max and Min of constants fold, integers (shape sub-graphs) as
// signed values and floats with NaN propagating.

// CHECK-LABEL: func.func @max_min_fold
// CHECK-NOT: train.maximum
// CHECK-NOT: train.minimum
// CHECK-DAG: train.constant dense<[3, -1]> : tensor<2xi64>
// CHECK-DAG: train.constant dense<[0x7FC00000, 1.000000e+00]> : tensor<2xf32>
module attributes {train.onnx_opset = 13 : i64} {
  func.func @max_min_fold() -> (tensor<*xi64>, tensor<*xf32>) {
    %a = train.constant dense<[3, -2]> : tensor<2xi64>
    %b = train.constant dense<[-4, -1]> : tensor<2xi64>
    %0 = train.onnx_node "Max"(%a, %b) {node_name = "imax", onnx_attrs = {}} : (tensor<2xi64>, tensor<2xi64>) -> tensor<*xi64>
    %x = train.constant dense<[0x7FC00000, 2.0]> : tensor<2xf32>
    %y = train.constant dense<1.0> : tensor<f32>
    %1 = train.onnx_node "Min"(%x, %y) {node_name = "fmin", onnx_attrs = {}} : (tensor<2xf32>, tensor<f32>) -> tensor<*xf32>
    return %0, %1 : tensor<*xi64>, tensor<*xf32>
  }
}

// -----

// Tests that opset-6-style Clip in an opset-7..10 model reads min and max
// attributes.

// CHECK-LABEL: func.func @clip_opset9
// CHECK: train.clip %arg0 min -1.000000e+00 max 6.000000e+00 : tensor<2x3xf32>
module attributes {train.onnx_opset = 9 : i64} {
  func.func @clip_opset9(%x: tensor<2x3xf32>) -> tensor<*xf32> {
    %0 = train.onnx_node "Clip"(%x) {node_name = "clip", onnx_attrs = {min = -1.0 : f32, max = 6.0 : f32}} : (tensor<2x3xf32>) -> tensor<*xf32>
    return %0 : tensor<*xf32>
  }
}

// -----

// Tests that opset-13 Softmax defaults to the last axis and normalises a
// negative one, with no reshapes.

// CHECK-LABEL: func.func @softmax_opset13
// CHECK-NOT: train.reshape
// CHECK: %[[S:.*]] = train.softmax %arg0 axis 2 : tensor<2x3x4xf32>
// CHECK: train.log_softmax %[[S]] axis 1 : tensor<2x3x4xf32>
// CHECK-NOT: train.reshape
module attributes {train.onnx_opset = 13 : i64} {
  func.func @softmax_opset13(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
    %0 = train.onnx_node "Softmax"(%x) {node_name = "sm", onnx_attrs = {}} : (tensor<2x3x4xf32>) -> tensor<*xf32>
    %1 = train.onnx_node "LogSoftmax"(%0) {node_name = "lsm", onnx_attrs = {axis = -2 : i64}} : (tensor<*xf32>) -> tensor<*xf32>
    return %1 : tensor<*xf32>
  }
}

// -----

// Tests that opset-11 Softmax coerces its input to a matrix at the axis
// (default 1): one softmax over all trailing axes, as a reshape to
// [2, 12], a softmax over axis 1 and a reshape back.

// CHECK-LABEL: func.func @softmax_opset11
// CHECK: %[[FLAT:.*]] = train.reshape %arg0 : tensor<2x3x4xf32> -> tensor<2x12xf32>
// CHECK: %[[SM:.*]] = train.softmax %[[FLAT]] axis 1 : tensor<2x12xf32>
// CHECK: %[[BACK:.*]] = train.reshape %[[SM]] : tensor<2x12xf32> -> tensor<2x3x4xf32>
// CHECK: return %[[BACK]]
module attributes {train.onnx_opset = 11 : i64} {
  func.func @softmax_opset11(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
    %0 = train.onnx_node "Softmax"(%x) {node_name = "sm", onnx_attrs = {}} : (tensor<2x3x4xf32>) -> tensor<*xf32>
    return %0 : tensor<*xf32>
  }
}

// -----

// Tests that opset-9 LogSoftmax on the last axis (the usual classifier
// head) needs no reshape.

// CHECK-LABEL: func.func @log_softmax_opset9
// CHECK-NOT: train.reshape
// CHECK: train.log_softmax %arg0 axis 1 : tensor<8x10xf32>
// CHECK-NOT: train.reshape
module attributes {train.onnx_opset = 9 : i64} {
  func.func @log_softmax_opset9(%x: tensor<8x10xf32>) -> tensor<*xf32> {
    %0 = train.onnx_node "LogSoftmax"(%x) {node_name = "lsm", onnx_attrs = {axis = 1 : i64}} : (tensor<8x10xf32>) -> tensor<*xf32>
    return %0 : tensor<*xf32>
  }
}

// -----

// Tests that Identity forwards its input without an op.

// CHECK-LABEL: func.func @identity
// CHECK-NEXT: return %arg0 : tensor<2x3xf32>
func.func @identity(%x: tensor<2x3xf32>) -> tensor<*xf32> {
  %0 = train.onnx_node "Identity"(%x) {node_name = "id", onnx_attrs = {}} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Tests that Pow with a constant exponent becomes products (2), a square
// root (0.5) or a reciprocal of them (-1), and that Sqrt is train.sqrt.

// CHECK-LABEL: func.func @pow_sqrt
// CHECK: %[[SQ:.*]] = train.mul %arg0, %arg0
// CHECK: %[[ROOT:.*]] = train.sqrt %arg0 : tensor<2x3xf32>
// CHECK: %[[ONE:.*]] = train.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[INV:.*]] = train.div %[[ONE]], %arg0
// CHECK: %[[S:.*]] = train.sqrt %arg0
// CHECK: return %[[SQ]], %[[ROOT]], %[[INV]], %[[S]]
func.func @pow_sqrt(%x: tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %two = train.constant dense<2.0> : tensor<f32>
  %half = train.constant dense<0.5> : tensor<f32>
  %minus = train.constant dense<-1.0> : tensor<f32>
  %0 = train.onnx_node "Pow"(%x, %two) {node_name = "sq", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<f32>) -> tensor<*xf32>
  %1 = train.onnx_node "Pow"(%x, %half) {node_name = "root", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<f32>) -> tensor<*xf32>
  %2 = train.onnx_node "Pow"(%x, %minus) {node_name = "inv", onnx_attrs = {}} : (tensor<2x3xf32>, tensor<f32>) -> tensor<*xf32>
  %3 = train.onnx_node "Sqrt"(%x) {node_name = "sqrt", onnx_attrs = {}} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0, %1, %2, %3 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// Tests that Erf (GELU's, as PyTorch exports it) is train.erf.

// CHECK-LABEL: func.func @erf
// CHECK: %[[E:.*]] = train.erf %arg0 : tensor<2x3xf32>
// CHECK: return %[[E]]
func.func @erf(%x: tensor<2x3xf32>) -> tensor<*xf32> {
  %0 = train.onnx_node "Erf"(%x) {node_name = "erf", onnx_attrs = {}} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
