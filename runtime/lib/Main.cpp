//===- Main.cpp - main() of every trainer ---------------------------------===//
//
// Linked (as TrainccRuntimeMain) with the object traincc generates, which
// defines traincc_get_model().
//
//===----------------------------------------------------------------------===//

#include "traincc/runtime/ModelABI.h"
#include "traincc/runtime/TrainerMain.h"

int main(int argc, char **argv) {
  return traincc::rt::runTrainerMain(argc, argv, traincc_get_model());
}
