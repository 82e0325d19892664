//===- ExportChecks.h - was the model exported for training? ----*- C++ -*-===//
//
// Exporters write inference graphs by default: BatchNorm folded into the
// convolutions, zero biases dropped, weights turned into Constant nodes, the
// batch size baked into reshapes. traincc would train what is left without
// a word; these checks say so, and how to re-export, before the import goes
// on (ExportChecks.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_LIB_IMPORT_ONNX_EXPORTCHECKS_H
#define TRAINCC_LIB_IMPORT_ONNX_EXPORTCHECKS_H

#include "traincc/Import/ONNXImporter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"

#include "onnx/onnx_pb.h"

namespace traincc::onnx_import {

/// Runs on the checked model before the batch size is set (the inputs still
/// have the shapes the exporter wrote). Warns when the model looks exported
/// for inference (no BatchNormalization while a convolution has no bias,
/// weights the exporter renamed after folding, or Conv/Gemm/MatMul weights
/// that are Constant nodes rather than initializers) with the re-export
/// recipe of the model's producer. Fails, naming the node, when the batch
/// size the model was exported with is baked into a reshape of the data and
/// differs from `options.batchSize`.
mlir::LogicalResult checkExportedForTraining(const onnx::ModelProto &model,
                                             const ONNXImportOptions &options,
                                             mlir::Location loc);

/// Records on the imported module the training conventions of the model's
/// framework that the ONNX graph does not carry: models from tf2onnx and
/// jax2onnx (Keras and Flax BatchNorm, like the ONNX specification) update
/// the running variance with the biased batch variance, PyTorch's with the
/// unbiased one (module attribute `train.bn_running_variance = "biased"`,
/// read by traincc-explicit-training-mode).
void annotateTrainingConventions(mlir::ModuleOp module,
                                 const onnx::ModelProto &model);

} // namespace traincc::onnx_import

#endif // TRAINCC_LIB_IMPORT_ONNX_EXPORTCHECKS_H
