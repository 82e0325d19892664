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
//    that consumes one is an error, as the exported graph could not run.
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

/// Rewrites a serialized ModelProto as described above. Errors: malformed
/// protobuf, no graph, a value without an initializer of that name, an
/// initializer whose element type is not float or whose dims differ.
Expected<std::string> rewriteOnnxForExport(
    std::string_view model, const std::vector<InitializerValue> &values);

/// The state tensors --export writes, pointing into `memory`.
Expected<std::vector<InitializerValue>>
exportedStateTensors(const traincc_model &model, const ModelMemory &memory);

/// Writes the export of `model` with the weights in `memory` through
/// `writer` and commits it (fsync, rename over the destination).
Error exportOnnx(const traincc_model &model, const ModelMemory &memory,
                 AtomicFileWriter &writer);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_FORMATS_ONNXEXPORT_H
