//===- Passes.td - ONNX import passes ----------------------*- tablegen -*-===//

#ifndef TRAINCC_IMPORT_PASSES_TD
#define TRAINCC_IMPORT_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// ONNX legalisation (second import stage)
//===----------------------------------------------------------------------===//

def LegalizeONNXPass : Pass<"traincc-legalize-onnx", "mlir::ModuleOp"> {
  let summary = "Rewrites imported ONNX nodes into Train ops";
  let description = [{
    The second import stage. Every `train.onnx_node` is rewritten by the
    handler of its op type and opset: ONNX conventions (auto_pad, negative
    axes, optional inputs, attribute-versus-input forms across opsets) are
    normalised into the Train ops' explicit attributes. The shape
    sub-graphs PyTorch exports (Shape, Gather, Unsqueeze, Concat, Constant
    feeding Reshape) are evaluated on static shapes and fold away.
    Parameters that end up unused (shape constants stored as initializers)
    are dropped. Every node that cannot be legalised is reported, each with
    its node name and op type, before the pass fails.
  }];
  let dependentDialects = ["::traincc::train::TrainDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // TRAINCC_IMPORT_PASSES_TD
