//===- traincc-opt.cpp - run traincc passes on MLIR text ------------------===//

#include "traincc/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  traincc::registerAllPasses();
  mlir::DialectRegistry registry;
  traincc::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "traincc pass driver\n", registry));
}
