//===- SupportedOps.h - ONNX ops traincc can import -------------*- C++ -*-===//

#ifndef TRAINCC_IMPORT_SUPPORTEDOPS_H
#define TRAINCC_IMPORT_SUPPORTEDOPS_H

#include <string>
#include <vector>

namespace traincc {

/// The ONNX op types (default domain) that have a legalisation handler,
/// sorted by name.
std::vector<std::string> getSupportedONNXOps();

} // namespace traincc

#endif // TRAINCC_IMPORT_SUPPORTEDOPS_H
