//===- TrainOps.td - Train dialect operations --------------*- tablegen -*-===//
//
// Forward-compute ops of the Train dialect. Every attribute is in normalised
// form: pads are explicit (begin values for each spatial axis, then end
// values), axes are non-negative, slices name every axis. The importer does
// that normalisation once so that shape functions, verifiers and lowerings
// stay simple. Shape functions live in TrainOps.cpp and serve both the
// builders (result types are inferred) and the verifiers.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_DIALECT_TRAIN_IR_TRAINOPS_TD
#define TRAINCC_DIALECT_TRAIN_IR_TRAINOPS_TD

include "traincc/Dialect/Train/IR/TrainDialect.td"
include "traincc/Dialect/Train/IR/TrainAttrs.td"
include "traincc/Dialect/Train/IR/GradientOpInterface.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Base classes and type constraints
//===----------------------------------------------------------------------===//

class Train_Op<string mnemonic, list<Trait> traits = []>
    : Op<Train_Dialect, mnemonic, traits>;

// Floating-point element types the compute ops accept: fp32 and the
// mixed-precision types, plus f64 for gradient checks. Shapes are static: the
// shape functions do arithmetic on every dimension.
def Train_FloatTensor : StaticShapeTensorOf<[F16, BF16, F32, F64]>;
def Train_Tensor : StaticShapeTensorOf<[F16, BF16, F32, F64, I1, I32, I64]>;

// A pure op whose result types come from its shape function.
class Train_ComputeOp<string mnemonic, list<Trait> traits = []>
    : Train_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor])>;

// An op with one float operand and a result of the same type.
class Train_SameTypeOp<string mnemonic, list<Trait> traits = []>
    : Train_Op<mnemonic, !listconcat(traits, [SameOperandsAndResultType])> {
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

// A pure elementwise op: result element i depends on input element i only.
class Train_UnaryOp<string mnemonic, list<Trait> traits = []>
    : Train_SameTypeOp<mnemonic, !listconcat(traits, [Pure, Elementwise])>;

// An elementwise op with numpy broadcasting of two operands of one element
// type.
class Train_BinaryOp<string mnemonic, list<Trait> traits = []>
    : Train_ComputeOp<mnemonic, traits> {
  let arguments = (ins Train_FloatTensor:$lhs, Train_FloatTensor:$rhs);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Parameters, constants and import scaffolding
//===----------------------------------------------------------------------===//

def Train_ParamOp : Train_Op<"param", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "a module-level parameter or piece of training state";
  let description = [{
    Declares a named tensor that lives across training steps: a trainable
    weight, a frozen one, or BatchNorm running statistics. The symbol name is
    the ONNX initializer name, kept so that the trainer can export trained
    values under the names the model came with. The optional initial value
    (the value the model was exported with) takes the declared type, so it is
    written without one.

    ```mlir
    train.param @"fc.weight" trainable : tensor<10x64xf32> = dense<0.0>
    train.param @"bn.running_var" running_var : tensor<64xf32>
    ```

    A `weight_copy` or `step_backup` names the parameter it copies as
    `source` (converted to its own element type):

    ```mlir
    train.param @"fc.weight.bf16" weight_copy : tensor<10x64xbf16> {source = @"fc.weight"}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       Train_ParamKindAttr:$kind,
                       TypeAttrOf<Train_Tensor>:$type,
                       OptionalAttr<ElementsAttr>:$initial_value,
                       OptionalAttr<FlatSymbolRefAttr>:$source);
  // Custom directives: the kind prints as a bare word, and the initial value
  // without its type (and without a stray space when it is absent).
  let assemblyFormat = [{
    $sym_name custom<ParamKind>($kind) `:` $type
    `` custom<ParamInitialValue>(ref($type), $initial_value) attr-dict
  }];
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
  let hasVerifier = 1;
}

def Train_ReadParamOp : Train_Op<"read_param", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead]>]> {
  let summary = "reads the current value of a parameter";
  let description = [{
    Names a `train.param` of the enclosing module; the result has the
    parameter's declared type.

    ```mlir
    %w = train.read_param @"fc.weight" : tensor<10x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$param attr-dict `:` type($result)";
}

def Train_ConstantOp : Train_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "a constant tensor";
  let description = [{
    Folders materialise their results as this op.

    ```mlir
    %shape = train.constant dense<[64, -1]> : tensor<2xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
}

def Train_ONNXNodeOp : Train_Op<"onnx_node"> {
  let summary = "an imported ONNX node awaiting legalisation";
  let description = [{
    The first import stage turns each ONNX node into one `train.onnx_node`,
    keeping the op type, the node name and the ONNX attributes verbatim;
    `traincc-legalize-onnx` then replaces it by Train ops. Result types are
    those of ONNX shape inference (dynamic where it could not tell). Missing
    optional inputs are values of `train.onnx_none`.

    ```mlir
    %y = train.onnx_node "Relu"(%x) {node_name = "relu1", onnx_attrs = {}}
        : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins StrAttr:$op_type, StrAttr:$node_name,
                       DefaultValuedAttr<DictionaryAttr, "{}">:$onnx_attrs,
                       Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyType>:$outputs);
  let assemblyFormat = [{
    $op_type `(` $inputs `)` attr-dict `:` functional-type($inputs, results)
  }];
}

def Train_ONNXNoneOp : Train_Op<"onnx_none", [Pure]> {
  let summary = "stands for an omitted optional ONNX input";
  let description = [{
    Only `train.onnx_node` uses it; legalisation erases it.

    ```mlir
    %none = train.onnx_none
    ```
  }];
  let results = (outs NoneType:$result);
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Convolution, normalisation and dense layers
//===----------------------------------------------------------------------===//

def Train_ConvOp : Train_ComputeOp<"conv", [Train_Differentiable]> {
  let summary = "N-d grouped convolution (cross-correlation)";
  let description = [{
    ONNX Conv on an NC[D]HW input and an M x C/groups x k... weight, with an
    optional bias of size M. `pads` holds the begin pads of every spatial axis
    followed by the end pads. Spatial output size is
    floor((in + pad_begin + pad_end - dilation * (k - 1) - 1) / stride) + 1.

    ```mlir
    %y = train.conv %x, %w, %b strides [1, 1] pads [1, 1, 1, 1]
        dilations [1, 1] groups 1
        : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>)
        -> tensor<8x16x32x32xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_FloatTensor:$weight,
                       Optional<Train_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, I64Attr:$groups);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `strides` $strides `pads` $pads
    `dilations` $dilations `groups` $groups attr-dict
    `:` functional-type(operands, results)
  }];
}

def Train_BatchNormOp : Train_ComputeOp<"batch_norm"> {
  let summary = "trainable batch normalisation over the channel axis";
  let description = [{
    Normalises an NC... input per channel. The forward graph does not fix the
    mode: training-step construction makes batch statistics and running-stat
    updates explicit, evaluation reads the running statistics. `momentum` uses
    PyTorch's convention (weight of the new statistic, 0.1 by default); ONNX's
    attribute is one minus it.

    ```mlir
    %y = train.batch_norm %x, %gamma, %beta, %mean, %var epsilon 1.0e-05
        momentum 1.0e-01 : (tensor<8x16x4x4xf32>, tensor<16xf32>,
        tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_FloatTensor:$scale,
                       Train_FloatTensor:$bias, Train_FloatTensor:$running_mean,
                       Train_FloatTensor:$running_var, F32Attr:$epsilon,
                       F32Attr:$momentum);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $running_mean `,` $running_var
    `epsilon` $epsilon `momentum` $momentum attr-dict
    `:` functional-type(operands, results)
  }];
}

def Train_GemmOp : Train_ComputeOp<"gemm", [Train_Differentiable]> {
  let summary = "alpha * op(A) * op(B) + beta * C on matrices";
  let description = [{
    ONNX Gemm: `op(X)` is X, or its transpose when `trans_a` / `trans_b` is
    set; C is broadcast to the M x N result. Attributes at their defaults
    (no transposes, alpha = beta = 1) are not printed. The canonicalizer
    folds a 2-D transpose of A or B into the flags.

    ```mlir
    %y = train.gemm %x, %w, %b {trans_b = true}
        : (tensor<8x64xf32>, tensor<10x64xf32>, tensor<10xf32>)
        -> tensor<8x10xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$a, Train_FloatTensor:$b,
                       Optional<Train_FloatTensor>:$c,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_a,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_b,
                       DefaultValuedAttr<F32Attr, "1.0f">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.0f">:$beta);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasCanonicalizer = 1;
}

def Train_MatMulOp : Train_ComputeOp<"matmul", [Train_Differentiable]> {
  let summary = "numpy matmul with batch broadcasting";
  let description = [{
    ONNX MatMul: a rank-1 operand is promoted to a matrix and the promoted
    axis dropped from the result; the batch axes broadcast.

    ```mlir
    %y = train.matmul %a, %b
        : (tensor<2x8x16xf32>, tensor<16x4xf32>) -> tensor<2x8x4xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$lhs, Train_FloatTensor:$rhs);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

def Train_AddOp : Train_BinaryOp<"add", [Train_Differentiable, Commutative]> {
  let summary = "elementwise addition with broadcasting";
  let description = [{
    Both operands have one element type; their shapes broadcast as in numpy.
    Adding a splat zero that does not widen the other operand folds away.

    ```mlir
    %z = train.add %x, %b
        : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
    ```
  }];
  let hasFolder = 1;
}

def Train_SubOp : Train_BinaryOp<"sub", [Train_Differentiable]> {
  let summary = "elementwise subtraction with broadcasting";
  let description = [{
    Both operands have one element type; their shapes broadcast as in numpy.
    Subtracting a splat zero that does not widen the left operand folds away.

    ```mlir
    %z = train.sub %x, %y
        : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    ```
  }];
  let hasFolder = 1;
}

def Train_MulOp : Train_BinaryOp<"mul", [Train_Differentiable, Commutative]> {
  let summary = "elementwise multiplication with broadcasting";
  let description = [{
    Both operands have one element type; their shapes broadcast as in numpy.
    Multiplying by a splat one that does not widen the other operand folds
    away.

    ```mlir
    %z = train.mul %x, %s
        : (tensor<8x16xf32>, tensor<1xf32>) -> tensor<8x16xf32>
    ```
  }];
  let hasFolder = 1;
}

def Train_DivOp : Train_BinaryOp<"div", [Train_Differentiable]> {
  let summary = "elementwise division with broadcasting";
  let description = [{
    Both operands have one element type; their shapes broadcast as in numpy.
    Dividing by a splat one that does not widen the left operand folds away.

    ```mlir
    %z = train.div %x, %s
        : (tensor<8x16xf32>, tensor<1xf32>) -> tensor<8x16xf32>
    ```
  }];
  let hasFolder = 1;
}

def Train_MaximumOp
    : Train_BinaryOp<"maximum", [Train_Differentiable, Commutative]> {
  let summary = "elementwise maximum with broadcasting";
  let description = [{
    Both operands have one element type; their shapes broadcast as in numpy.
    A NaN operand gives NaN. ONNX Max and Clip with a tensor lower bound
    import as this op. Gradients follow torch.maximum: the larger operand
    takes the gradient, ties split it evenly. The maximum of a value with
    itself, or with a splat -inf that does not widen it, folds away.

    ```mlir
    %z = train.maximum %x, %lo
        : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    ```
  }];
  let hasFolder = 1;
}

def Train_MinimumOp
    : Train_BinaryOp<"minimum", [Train_Differentiable, Commutative]> {
  let summary = "elementwise minimum with broadcasting";
  let description = [{
    The counterpart of `train.maximum` (ONNX Min, Clip with a tensor upper
    bound); a splat +inf is its neutral element.

    ```mlir
    %z = train.minimum %x, %hi
        : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    ```
  }];
  let hasFolder = 1;
}

def Train_CompareOp : Train_ComputeOp<"compare"> {
  let summary = "elementwise comparison with broadcasting, to a bool tensor";
  let description = [{
    ONNX Equal, Less, LessOrEqual, Greater and GreaterOrEqual on computed
    float data: the condition of a `train.select`. Ordered: a NaN operand
    compares false. It has no gradient (its result is not a float); the
    lowering of `train.select` computes the comparison inline, so a
    condition used only by selects is never stored.

    ```mlir
    %c = train.compare gt %x, %zero
        : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xi1>
    ```
  }];
  let arguments = (ins Train_ComparePredicateAttr:$predicate,
                       Train_FloatTensor:$lhs, Train_FloatTensor:$rhs);
  let results = (outs StaticShapeTensorOf<[I1]>:$result);
  let assemblyFormat = [{
    $predicate $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def Train_SelectOp : Train_ComputeOp<"select", [Train_Differentiable]> {
  let summary = "picks each element from one of two tensors by a condition";
  let description = [{
    ONNX Where on computed data: the result takes `true_value` where
    `condition` holds and `false_value` elsewhere; the three shapes
    broadcast as in numpy. The gradient goes to the operand that was
    picked (the other gets zero there), summed over broadcast axes.

    ```mlir
    %y = train.select %c, %x, %neg_inf
        : (tensor<8x16xi1>, tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[I1]>:$condition,
                       Train_FloatTensor:$true_value,
                       Train_FloatTensor:$false_value);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $condition `,` $true_value `,` $false_value attr-dict
    `:` functional-type(operands, results)
  }];
}

def Train_ReluOp : Train_UnaryOp<"relu", [Train_Differentiable]> {
  let summary = "max(x, 0)";
  let description = [{
    ```mlir
    %y = train.relu %x : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
}

def Train_LeakyReluOp : Train_UnaryOp<"leaky_relu", [Train_Differentiable]> {
  let summary = "x if x >= 0, else alpha * x";
  let description = [{
    ```mlir
    %y = train.leaky_relu %x alpha 1.0e-02 : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, F32Attr:$alpha);
  let assemblyFormat = "$input `alpha` $alpha attr-dict `:` type($result)";
}

def Train_ClipOp : Train_UnaryOp<"clip", [Train_Differentiable]> {
  let summary = "clamps to [min, max]; ReLU6 is clip 0..6";
  let description = [{
    A missing bound does not clamp.

    ```mlir
    %y = train.clip %x min 0.0 max 6.0 : tensor<8x16xf32>
    %z = train.clip %x max 1.0 : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, OptionalAttr<F32Attr>:$min,
                       OptionalAttr<F32Attr>:$max);
  let assemblyFormat = [{
    $input (`min` $min^)? (`max` $max^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Train_SigmoidOp : Train_UnaryOp<"sigmoid", [Train_Differentiable]> {
  let summary = "1 / (1 + exp(-x))";
  let description = [{
    ```mlir
    %y = train.sigmoid %x : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
}

def Train_TanhOp : Train_UnaryOp<"tanh", [Train_Differentiable]> {
  let summary = "hyperbolic tangent";
  let description = [{
    ```mlir
    %y = train.tanh %x : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
}

def Train_SqrtOp : Train_UnaryOp<"sqrt", [Train_Differentiable]> {
  let summary = "square root";
  let description = [{
    The gradient is dy / (2 sqrt(x)), built from the result (LayerNorm's
    decomposition divides by sqrt(var + eps)).

    ```mlir
    %y = train.sqrt %x : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
}

def Train_ErfOp : Train_UnaryOp<"erf", [Train_Differentiable]> {
  let summary = "Gauss error function";
  let description = [{
    What PyTorch exports GELU as (x * 0.5 * (1 + erf(x / sqrt 2))).

    ```mlir
    %y = train.erf %x : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
}

def Train_ExpOp : Train_UnaryOp<"exp", [Train_Differentiable]> {
  let summary = "natural exponential";
  let description = [{
    ONNX Exp, and the negative branch of Elu and Selu. The gradient is
    dy * y, built from the result.

    ```mlir
    %y = train.exp %x : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
}

def Train_LogOp : Train_UnaryOp<"log", [Train_Differentiable]> {
  let summary = "natural logarithm";
  let description = [{
    ONNX Log, and Softplus (log(1 + exp(-|x|)) + relu(x)). The gradient
    is dy / x.

    ```mlir
    %y = train.log %x : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
}

// Not Pure: each dropout draws its own mask, so two dropouts of one tensor
// must not be merged by CSE. The result is marked as a fresh allocation (as
// bufferization.alloc_tensor does), which keeps CSE off and lets DCE remove an
// unused dropout.
def Train_DropoutOp : Train_SameTypeOp<"dropout", [Elementwise]> {
  let summary = "inverted dropout in training, identity in evaluation";
  let description = [{
    Zeroes each element with probability `ratio` and scales the rest by
    1 / (1 - ratio) during training. Each op draws its own random mask.

    ```mlir
    %y = train.dropout %x ratio 5.0e-01 : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, F32Attr:$ratio);
  let results = (outs Res<Train_FloatTensor, "", [MemAlloc]>:$result);
  let assemblyFormat = "$input `ratio` $ratio attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Train_SoftmaxOp
    : Train_SameTypeOp<"softmax", [Train_Differentiable, Pure]> {
  let summary = "softmax along one axis";
  let description = [{
    Not elementwise: every element depends on its whole row along `axis`.

    ```mlir
    %y = train.softmax %x axis 1 : tensor<8x10xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, I64Attr:$axis);
  let assemblyFormat = "$input `axis` $axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Train_LogSoftmaxOp
    : Train_SameTypeOp<"log_softmax", [Train_Differentiable, Pure]> {
  let summary = "log of softmax along one axis";
  let description = [{
    ```mlir
    %y = train.log_softmax %x axis 1 : tensor<8x10xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, I64Attr:$axis);
  let assemblyFormat = "$input `axis` $axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

def Train_MaxPoolOp : Train_ComputeOp<"max_pool", [Train_Differentiable]> {
  let summary = "N-d max pooling";
  let description = [{
    Padded positions never win. Output sizes follow PyTorch: with
    `ceil_mode` (printed in the attribute dictionary when set) the window count
    rounds up, and a last window that would start in the end padding is
    dropped. A pad must be smaller than the dilated window, so that no window
    holds padding only.

    ```mlir
    %y = train.max_pool %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0]
        dilations [1, 1] : (tensor<8x16x28x28xf32>) -> tensor<8x16x14x14xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $input `kernel` $kernel_shape `strides` $strides `pads` $pads
    `dilations` $dilations attr-dict `:` functional-type(operands, results)
  }];
}

def Train_AvgPoolOp : Train_ComputeOp<"avg_pool", [Train_Differentiable]> {
  let summary = "N-d average pooling";
  let description = [{
    With `count_include_pad` the divisor is the window size clipped to the
    padded input; without it, the number of real input elements in the window.
    Output sizes and `ceil_mode` are as in `train.max_pool` (dilation 1), and
    so is the limit on pads.

    ```mlir
    %y = train.avg_pool %x kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1]
        {count_include_pad = true}
        : (tensor<8x16x8x8xf32>) -> tensor<8x16x8x8xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                       DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $input `kernel` $kernel_shape `strides` $strides `pads` $pads attr-dict
    `:` functional-type(operands, results)
  }];
}

def Train_GlobalAvgPoolOp
    : Train_ComputeOp<"global_avg_pool", [Train_Differentiable]> {
  let summary = "mean over all spatial axes, kept as size-1 axes";
  let description = [{
    ONNX GlobalAveragePool on an NC[D]HW input.

    ```mlir
    %y = train.global_avg_pool %x
        : (tensor<8x64x7x7xf32>) -> tensor<8x64x1x1xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat =
      "$input attr-dict `:` functional-type(operands, results)";
}

def Train_ReduceMaxOp
    : Train_Op<"reduce_max", [Train_Differentiable, Pure]> {
  let summary = "maximum over the axes the result holds as size 1";
  let description = [{
    ONNX ReduceMax (keepdims form; the importer reshapes for keepdims 0).
    The result has the input's rank; each of its axes is the input's size or
    1, and the axes that become 1 are reduced. NaN propagates, as in
    PyTorch's amax.

    ```mlir
    %y = train.reduce_max %x : tensor<8x64x7x7xf32> -> tensor<8x64x1x1xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Train_ReshapeOp : Train_Op<"reshape", [Train_Differentiable, Pure]> {
  let summary = "reinterprets the elements under a new static shape";
  let description = [{
    The target shape is the result type (the importer resolves ONNX's 0 and
    -1 entries). The canonicalizer composes chains of reshapes, removes
    reshapes to the same type and folds reshapes of constants.

    ```mlir
    %y = train.reshape %x : tensor<8x16x2x2xf32> -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Train_FlattenOp : Train_ComputeOp<"flatten", [Train_Differentiable]> {
  let summary = "collapses axes [0, axis) and [axis, rank) into a matrix";
  let description = [{
    ONNX Flatten with a non-negative axis in [0, rank]; axis 0 gives a
    1 x N matrix. The canonicalizer turns it into `train.reshape`.

    ```mlir
    %y = train.flatten %x axis 1 : (tensor<8x16x2x2xf32>) -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input, I64Attr:$axis);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat =
      "$input `axis` $axis attr-dict `:` functional-type(operands, results)";
  let hasCanonicalizer = 1;
}

def Train_TransposeOp : Train_ComputeOp<"transpose", [Train_Differentiable]> {
  let summary = "permutes axes: result axis i is input axis perm[i]";
  let description = [{
    The identity permutation folds away; a transpose of a transpose composes.

    ```mlir
    %y = train.transpose %x perm [1, 0] : (tensor<8x16xf32>) -> tensor<16x8xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat =
      "$input `perm` $perm attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Train_ConcatOp : Train_ComputeOp<"concat", [Train_Differentiable]> {
  let summary = "joins tensors along one axis";
  let description = [{
    The inputs share element type, rank and every size but the one along
    `axis`. A concat of one input folds to it.

    ```mlir
    %y = train.concat %a, %b axis 1
        : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<8x20xf32>
    ```
  }];
  let arguments = (ins Variadic<Train_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat =
      "$inputs `axis` $axis attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Train_SliceOp : Train_ComputeOp<"slice", [Train_Differentiable]> {
  let summary = "strided slice with one start, end and step per axis";
  let description = [{
    Axis i takes indices start, start + step, ... while they stay before `end`
    (after it, for a negative step). Starts are in [0, dim), ends in
    [-1, dim]; an empty slice is allowed.

    ```mlir
    %y = train.slice %x starts [0, 2] ends [8, 10] steps [1, 2]
        : (tensor<8x16xf32>) -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = [{
    $input `starts` $starts `ends` $ends `steps` $steps attr-dict
    `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Train_GatherOp : Train_ComputeOp<"gather", [Train_Differentiable]> {
  let summary = "picks slices of `data` along `axis` at run-time indices";
  let description = [{
    ONNX Gather on data that is not a constant (an embedding lookup): the
    result is data's shape with axis `axis` replaced by the indices' shape.
    Negative indices count from the end; indices out of range are clamped
    (ONNX leaves them undefined; clamping keeps the trainer's memory safe).

    ```mlir
    %y = train.gather %table, %tokens axis 0
        : (tensor<1000x64xf32>, tensor<8x32xi64>) -> tensor<8x32x64xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$data,
                       StaticShapeTensorOf<[I32, I64]>:$indices,
                       I64Attr:$axis);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $data `,` $indices `axis` $axis attr-dict
    `:` functional-type(operands, results)
  }];
}

def Train_CastOp
    : Train_Op<"cast", [Train_Differentiable, Pure, Elementwise,
                        SameOperandsAndResultShape]> {
  let summary = "converts a float tensor to another float type";
  let description = [{
    Rounds to nearest, ties to even (as PyTorch's `.to(dtype)`); values
    beyond the target's range become infinities. Mixed precision inserts
    these; ONNX Cast between float types imports as one.

    ```mlir
    %y = train.cast %x : tensor<8x16xf32> to tensor<8x16xbf16>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasFolder = 1;
}

def Train_IdentityOp
    : Train_Op<"identity",
               [Train_Differentiable, Pure, SameOperandsAndResultType]> {
  let summary = "returns its operand";
  let description = [{
    ONNX Identity; always folds away.

    ```mlir
    %y = train.identity %x : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Train_Tensor:$input);
  let results = (outs Train_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasFolder = 1;
}

include "traincc/Dialect/Train/IR/TrainGradientOps.td"
include "traincc/Dialect/Train/IR/TrainStepOps.td"

#endif // TRAINCC_DIALECT_TRAIN_IR_TRAINOPS_TD
