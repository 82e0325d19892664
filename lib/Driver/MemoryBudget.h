//===- MemoryBudget.h - the micro-batch that fits a budget ------*- C++ -*-===//
//
// Internal to the driver. A trainer's memory is a static plan
// (MemoryReport.h), so `--memory-budget` can be met exactly at compile
// time: compile the step functions for each micro-batch that divides the
// requested batch, largest first, until one's plan fits, and accumulate
// gradients over the rest.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_LIB_DRIVER_MEMORYBUDGET_H
#define TRAINCC_LIB_DRIVER_MEMORYBUDGET_H

#include "traincc/Driver/Compile.h"

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace traincc {

/// "2GiB", "512MiB", "1.5GB", "64KiB", "1e9", "4096": bytes (binary units
/// with an i, decimal without); nullopt for anything else.
std::optional<uint64_t> parseByteSize(llvm::StringRef text);

/// With --memory-budget: the options with the chosen micro-batch
/// (--batch-size) and accumulation steps, the budget cleared. Prints the
/// choice on standard error; prints "traincc: error: ..." and returns
/// nullopt when no micro-batch fits or the model does not compile.
std::optional<CompileOptions> applyMemoryBudget(const CompileOptions &options);

} // namespace traincc

#endif // TRAINCC_LIB_DRIVER_MEMORYBUDGET_H
