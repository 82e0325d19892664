//===- Version.cpp - traincc --version ------------------------------------===//

#include "traincc/Driver/Compile.h"

// Generated at every build by GenerateVersion.cmake.
#include "TrainccVersion.inc"

void traincc::printVersion(llvm::raw_ostream &os) {
  os << "traincc " TRAINCC_VERSION " (commit " TRAINCC_COMMIT ")\n"
     << "built with LLVM " TRAINCC_LLVM_VERSION "\n";
}
