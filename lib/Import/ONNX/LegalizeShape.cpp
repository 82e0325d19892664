//===- LegalizeShape.cpp - ONNX Shape handlers ----------------------------------===//

#include "LegalizeONNX.h"

using namespace mlir;
using namespace traincc;
using namespace traincc::onnx_import;

void onnx_import::addShapeHandlers(HandlerTable &table) {}
