//===- Idx.h - IDX files (MNIST, Fashion-MNIST) -----------------*- C++ -*-===//
//
// The IDX format: a big-endian magic 0x0000TTRR (TT element type, RR rank),
// RR big-endian uint32 dimensions, then the elements in C order. MNIST-style
// files use TT = 0x08 (unsigned byte): images 0x00000803 [N,rows,cols] and
// labels 0x00000801 [N]. Files that start with the gzip magic are inflated
// on the fly whatever their name.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_FORMATS_IDX_H
#define TRAINCC_RUNTIME_FORMATS_IDX_H

#include "traincc/runtime/support/Error.h"
#include "traincc/runtime/support/Tensor.h"

#include <string>

namespace traincc::rt {

using ByteTensor = HostTensor<uint8_t>;

/// Reads an IDX file of unsigned bytes with `expectedRank` dimensions (any
/// rank from 1 to 16 when negative). Wrong magic, a rank other than the
/// expected one, truncated data and trailing bytes are errors. The declared
/// size is checked against the file before anything is allocated: exactly
/// for plain files, against deflate's maximum ratio for gzipped ones, and
/// the buffer then only grows as decompressed data actually arrives.
Expected<ByteTensor> readIdxUInt8(const std::string &path,
                                  int expectedRank = -1);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_FORMATS_IDX_H
