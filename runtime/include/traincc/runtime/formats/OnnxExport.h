//===- OnnxExport.h - --export: the trained model as ONNX -------*- C++ -*-===//
//
// The export is the model as compiled (traincc_model::onnx_model) with
//  * every initializer whose name is a TRAINABLE, FROZEN, RUNNING_MEAN or
//    RUNNING_VAR state tensor replaced by its current value, as float32
//    raw_data (other data fields and external-data references dropped;
//    name, dims, doc string and unknown fields kept);
//  * every BatchNormalization node in inference mode: attribute
//    training_mode removed (its default is 0) and only output 0 kept. The
//    dropped outputs (running mean/var, or saved statistics in old
//    opsets) are removed from the graph outputs and value_info; a node
//    that consumes one is an error, as the exported graph could not run;
//  * unless ExportOptions::foldBatchNorm is off (train --no-fold-bn),
//    every BatchNormalization that alone reads a Conv's output folded into
//    that Conv, as the compiled @eval_step folds it: the weight
//    initializer keeps its name and holds W * scale / sqrt(var + eps) per
//    output channel, the bias (a new initializer named after the weight,
//    `<w>.bias` for `<w>.weight`, if the Conv had none) holds
//    (b - mean) * scale / sqrt(var + eps) + B, computed in double and
//    rounded once to float32; the Conv takes the BN's output name, and the
//    BN node, the Conv's old output's value_info and the BN initializers
//    nothing else reads are removed. Only trained state tensors fold: a
//    BN whose parameters are constants, or a weight shared with another
//    node, stays an inference BatchNormalization.
// Every other byte is copied through (ProtoWire). Only the main graph is
// rewritten; initializers of sub-graphs (If/Loop bodies) are not parameters
// of a traincc model.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_FORMATS_ONNXEXPORT_H
#define TRAINCC_RUNTIME_FORMATS_ONNXEXPORT_H

#include "traincc/runtime/support/Error.h"
#include "traincc/runtime/support/File.h"
#include "traincc/runtime/support/Model.h"

#include <string>
#include <string_view>
#include <vector>

namespace traincc::rt {

/// A float32 value for the initializer called `name`.
struct InitializerValue {
  std::string name;
  std::vector<int64_t> shape;
  const float *data = nullptr;
};

/// How the export is written.
struct ExportOptions {
  /// Fold BatchNormalization into the convolution before it.
  bool foldBatchNorm = true;
};

/// Rewrites a serialized ModelProto as described above. Errors: malformed
/// protobuf, no graph, a value without an initializer of that name, an
/// initializer whose element type is not float or whose dims differ.
Expected<std::string>
rewriteOnnxForExport(std::string_view model,
                     const std::vector<InitializerValue> &values,
                     const ExportOptions &options = {});

/// The state tensors --export writes, pointing into `memory`.
Expected<std::vector<InitializerValue>>
exportedStateTensors(const traincc_model &model, const ModelMemory &memory);

/// Writes the export of `model` with the weights in `memory` through
/// `writer` and commits it (fsync, rename over the destination).
Error exportOnnx(const traincc_model &model, const ModelMemory &memory,
                 AtomicFileWriter &writer, const ExportOptions &options = {});

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_FORMATS_ONNXEXPORT_H
