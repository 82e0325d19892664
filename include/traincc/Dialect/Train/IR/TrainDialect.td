//===- TrainDialect.td - the Train dialect -----------------*- tablegen -*-===//
//
// The Train dialect holds a model's forward graph on static-shaped tensors and,
// after the training-step passes, the structure of a training step.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_DIALECT_TRAIN_IR_TRAINDIALECT_TD
#define TRAINCC_DIALECT_TRAIN_IR_TRAINDIALECT_TD

include "mlir/IR/OpBase.td"

def Train_Dialect : Dialect {
  let name = "train";
  let summary = "Training graphs: forward compute, gradients and training structure";
  let description = [{
    Ops on ranked tensors with static shapes. The forward family mirrors the
    ONNX operators that CNNs and MLPs use, with every attribute normalised by
    the importer (explicit pads, non-negative axes), so that later passes never
    reinterpret ONNX conventions. Parameters and state live in `train.param`
    symbols at module level and are read with `train.read_param`.
  }];
  let cppNamespace = "::traincc::train";
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
}

#endif // TRAINCC_DIALECT_TRAIN_IR_TRAINDIALECT_TD
