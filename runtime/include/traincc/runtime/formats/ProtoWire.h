//===- ProtoWire.h - A minimal protobuf wire-format codec -------*- C++ -*-===//
//
// Just enough of the protobuf encoding to rewrite an ONNX model without
// libprotobuf (the trainer must not depend on it): a message is read as its
// list of fields, in order, each keeping the exact bytes it was encoded
// with, so fields a rewrite does not touch, unknown ones included, are
// copied through byte for byte. Wire types: varint (0), fixed64 (1),
// length-delimited (2) and fixed32 (5); groups (3, 4), long deprecated,
// are an error.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_FORMATS_PROTOWIRE_H
#define TRAINCC_RUNTIME_FORMATS_PROTOWIRE_H

#include "traincc/runtime/support/Error.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace traincc::rt::proto {

enum class WireType : uint8_t {
  Varint = 0,
  Fixed64 = 1,
  LengthDelimited = 2,
  Fixed32 = 5,
};

/// One field of a parsed message; the views point into the parsed buffer.
struct Field {
  uint32_t number = 0;
  WireType type = WireType::Varint;
  /// The value of a varint, fixed32 or fixed64 field.
  uint64_t value = 0;
  /// The payload of a length-delimited field.
  std::string_view bytes;
  /// The whole field as encoded: tag, length and payload.
  std::string_view raw;
};

/// Splits `message` into its fields. Errors: truncated data, a varint
/// longer than 10 bytes, field number 0, groups and unknown wire types.
Expected<std::vector<Field>> parseMessage(std::string_view message);

/// Reads the elements of a repeated integer field that may be packed (one
/// length-delimited field of varints) or not (one varint field each).
Error appendVarints(const Field &field, std::vector<uint64_t> &values);

/// Appends encoded fields to a growing buffer.
class Writer {
public:
  void varint(uint32_t number, uint64_t value);
  void bytes(uint32_t number, std::string_view payload);
  void fixed32(uint32_t number, uint32_t value);
  void fixed64(uint32_t number, uint64_t value);
  /// A field exactly as it was read (Field::raw).
  void raw(std::string_view encoded) { out_.append(encoded); }

  const std::string &data() const { return out_; }
  std::string take() { return std::move(out_); }

private:
  void tag(uint32_t number, WireType type);
  std::string out_;
};

/// Appends the base-128 encoding of `value`.
void appendVarint(std::string &out, uint64_t value);

} // namespace traincc::rt::proto

#endif // TRAINCC_RUNTIME_FORMATS_PROTOWIRE_H
