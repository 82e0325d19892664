//===- LegalizeNN.cpp - ONNX NN handlers ----------------------------------===//

#include "LegalizeONNX.h"

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

void onnx_import::addNNHandlers(HandlerTable &table) {}
