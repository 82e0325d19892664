//===- LegalizeElementwise.cpp - ONNX Elementwise handlers ----------------------------------===//

#include "LegalizeONNX.h"

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

void onnx_import::addElementwiseHandlers(HandlerTable &table) {}
