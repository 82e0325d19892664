//===- ModelLoader.h - bytes to a checked ModelProto ------------*- C++ -*-===//
//
// Internal to the first import stage, which has two halves: the loader
// (ModelLoader.cpp, ModelValidation.cpp) turns the bytes of a model into a
// ModelProto that the graph importer (GraphImporter.cpp) can read without
// further checks: parsed, validated (tensor sizes, element types, graph
// structure, external data), checked by libonnx, converted to opset 7 or
// later, with the batch dimension fixed and shapes inferred.
//
// ModelLoader.cpp is the only code that calls libonnx. libonnx reports
// errors with C++ exceptions, so that file is compiled with exceptions and
// catches everything; nothing else here throws or expects exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_LIB_IMPORT_ONNX_MODELLOADER_H
#define TRAINCC_LIB_IMPORT_ONNX_MODELLOADER_H

#include "traincc/Import/ONNXImporter.h"

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include "onnx/onnx_pb.h"

#include <cstdint>
#include <optional>
#include <string>

namespace traincc::onnx_import {

/// Default-domain opsets imported as they are; older ones are converted to
/// kMinImportedOpset, newer ones up to kMaxImportedOpset rewritten to
/// kMaxCheckedOpset (OpsetAdapter.cpp), newer ones still refused.
constexpr int64_t kMinImportedOpset = 7;
constexpr int64_t kMaxCheckedOpset = 17;
constexpr int64_t kMaxImportedOpset = 21;
/// IR versions the importer reads; those above kMaxCheckedIRVersion (what
/// libonnx 1.12 checks) are checked as that version.
constexpr int64_t kMaxImportedIRVersion = 10;
constexpr int64_t kMaxCheckedIRVersion = 8;

struct LoadedModel {
  onnx::ModelProto model;
  /// Default-domain opset after conversion.
  int64_t opset = 0;
};

/// Parses and prepares `bytes`. On success the graph's nodes are in
/// topological order, every node has a name, every tensor holds its data
/// inline (external data read from under `modelDir`), default-domain nodes
/// have the domain "", and value_info holds the inferred types. Problems
/// are reported with mlir::emitError on `loc`; `modelName` names the model
/// in messages.
mlir::LogicalResult loadModel(llvm::StringRef bytes, llvm::StringRef modelDir,
                              llvm::StringRef modelName,
                              const ONNXImportOptions &options,
                              mlir::Location loc, LoadedModel &result);

//===----------------------------------------------------------------------===//
// Newer opsets (OpsetAdapter.cpp)
//===----------------------------------------------------------------------===//

/// The domain in which the adapter hides, from the checker and shape
/// inference, nodes of ops traincc does not import whose form changed after
/// opset 17; restoreNewerOps puts them back for the legalisation to report.
constexpr const char *kNewerOpsDomain = "traincc.newer_opset";

/// Rewrites a model of default-domain opset 18..21 (and IR version up to
/// 10) into its opset-17, IR-8 form, which libonnx 1.12 checks and infers.
/// Errors name each node whose newer form opset 17 cannot express.
mlir::LogicalResult adaptToCheckedOpset(onnx::ModelProto &model, int64_t opset,
                                        mlir::Location loc);

/// Pads whose `axes` input covers some axes of an input of a rank the model
/// does not give stay hidden after adaptToCheckedOpset; this expands those
/// whose input rank `ranks` (from shape inference) now gives, and returns
/// how many are left: an error naming one when `last`.
mlir::FailureOr<int> resolvePendingPads(onnx::ModelProto &model, int64_t opset,
                                        const llvm::StringMap<int> &ranks,
                                        bool last, mlir::Location loc);

/// Moves the nodes hidden by adaptToCheckedOpset back to the default domain.
void restoreNewerOps(onnx::ModelProto &model);

//===----------------------------------------------------------------------===//
// Validation (ModelValidation.cpp): checks that must hold before libonnx or
// the importer may look at the model.
//===----------------------------------------------------------------------===//

/// Checks every tensor of the model (initializers and tensor attributes, in
/// subgraphs too): element type, dimensions, size limits, data length.
/// External data is read from under `modelDir` (refused when it is empty)
/// and stored inline.
mlir::LogicalResult validateTensors(onnx::ModelProto &model,
                                    llvm::StringRef modelDir,
                                    const ONNXImportOptions &options,
                                    mlir::Location loc);

/// Checks that the main graph's data inputs are tensors of element types
/// traincc imports, before shape inference reasons about them.
mlir::LogicalResult validateGraphInputs(const onnx::GraphProto &graph,
                                        mlir::Location loc);

/// Refuses model-local functions that call themselves, directly or through
/// others: libonnx's shape inference would recurse until the stack
/// overflows.
mlir::LogicalResult checkFunctionRecursion(const onnx::ModelProto &model,
                                           mlir::Location loc);

/// Checks attribute and constant-input values that libonnx 1.12's shape
/// inference uses unchecked (divides by, indexes with): window strides,
/// dilations and kernel sizes must be positive, and so must a scalar split
/// of SplitToSequence. Covers subgraphs and functions too.
mlir::LogicalResult validateNodeAttributes(const onnx::ModelProto &model,
                                           mlir::Location loc);

/// Checks the main graph's structure (value names defined once, every use
/// defined, no cycle) and sorts its nodes topologically, keeping the
/// model's order where it is free.
mlir::LogicalResult sortGraph(onnx::GraphProto &graph, mlir::Location loc);

/// The ONNX name of a TensorProto element type ("FLOAT", "STRING", ...).
std::string getElementTypeName(int32_t dataType);

/// The values of an int32 or int64 tensor (raw or typed data) widened to
/// int64, or nullopt for another element type.
std::optional<llvm::SmallVector<int64_t>>
readIntegerTensor(const onnx::TensorProto &tensor);

/// "a sequence", "a map", ... for a type that is not a tensor.
const char *getTypeKindName(const onnx::TypeProto &type);

/// Size in bytes of one element of a type traincc imports; nullopt for the
/// others (string, complex, 16-bit integers, ...).
std::optional<unsigned> getElementByteSize(int32_t dataType);

/// Byte size of a tensor of `dims` with elements of `elementBytes` bytes;
/// nullopt when a dimension is negative or the size overflows.
std::optional<uint64_t> getTensorByteSize(llvm::ArrayRef<int64_t> dims,
                                          unsigned elementBytes);

/// "[2, 3, 4]".
std::string formatShape(llvm::ArrayRef<int64_t> dims);

} // namespace traincc::onnx_import

#endif // TRAINCC_LIB_IMPORT_ONNX_MODELLOADER_H
