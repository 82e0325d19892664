//===- EmitObject.h - LLVM dialect module -> object file --------*- C++ -*-===//

#ifndef TRAINCC_CODEGEN_EMITOBJECT_H
#define TRAINCC_CODEGEN_EMITOBJECT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace traincc {

struct ObjectOptions {
  /// Target CPU for the host code: "x86-64" runs on any x86-64 machine;
  /// "native" tunes for the compiling machine; any LLVM CPU name works.
  std::string cpu = "x86-64";
  /// LLVM optimisation level, 0 to 3 (traincc -O): lower levels compile
  /// faster and run slower.
  unsigned optLevel = 3;
  /// Threads for LLVM's optimisation and code generation in
  /// emitHostObjects; 0 uses every core.
  unsigned jobs = 0;
};

/// Whether LLVM's x86 `cpu` (as ObjectOptions::cpu: "native" is this
/// machine, with its detected features) has the subtarget `feature`, such
/// as "avx512bf16". False for unknown CPUs.
bool cpuHasFeature(llvm::StringRef cpu, llvm::StringRef feature);

/// True for "native" and for the CPU names LLVM knows for the host's
/// target (LLVM itself would print a warning per function and carry on),
/// and when the host target is missing (emitHostCode reports that).
bool isKnownCPU(llvm::StringRef cpu);

/// Translates `module` (LLVM dialect only) to LLVM IR, optimises it at
/// `options.optLevel` for the host triple and writes LLVM IR text (`emitIR`) or a relocatable
/// object file to `os`. Errors are emitted on the module.
mlir::LogicalResult emitHostCode(mlir::ModuleOp module,
                                 const ObjectOptions &options, bool emitIR,
                                 llvm::raw_pwrite_stream &os);

/// What one part of emitHostObjects cost (traincc --timing).
struct ObjectPartTiming {
  unsigned functions = 0;
  double optimizeSeconds = 0, codegenSeconds = 0;
  /// Wall seconds of each LLVM optimisation pass or analysis (analyses as
  /// "(A) name"), excluding the passes it runs nested, summed over its
  /// runs.
  llvm::StringMap<double> passSeconds;
};

/// As emitHostCode with object files, but the module's functions are
/// split into up to `options.jobs` parts, balanced by size, that are
/// optimised and compiled in parallel: `<directory>/kernels-<N>.o`, whose
/// paths are appended to `objects`. Kernels are self-contained (no
/// inlining across them is lost), so the code equals a single object's.
/// `timings`, if given, receives each part's function count and seconds.
mlir::LogicalResult
emitHostObjects(mlir::ModuleOp module, const ObjectOptions &options,
                llvm::StringRef directory,
                llvm::SmallVectorImpl<std::string> &objects,
                llvm::SmallVectorImpl<ObjectPartTiming> *timings = nullptr);

} // namespace traincc

#endif // TRAINCC_CODEGEN_EMITOBJECT_H
