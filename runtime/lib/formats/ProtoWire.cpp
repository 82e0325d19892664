//===- ProtoWire.cpp - A minimal protobuf wire-format codec ---------------===//

#include "traincc/runtime/formats/ProtoWire.h"

namespace traincc::rt::proto {

namespace {

/// Reads a varint at `pos`; false when truncated or longer than 10 bytes.
bool readVarint(std::string_view data, size_t &pos, uint64_t &value) {
  value = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (pos >= data.size())
      return false;
    uint8_t byte = static_cast<uint8_t>(data[pos++]);
    value |= uint64_t(byte & 0x7f) << shift;
    if (!(byte & 0x80))
      return true;
    if (shift == 63)
      return false;
  }
  return false;
}

uint64_t readLittleEndian(std::string_view data, size_t pos, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i)
    value |= uint64_t(static_cast<uint8_t>(data[pos + i])) << (8 * i);
  return value;
}

} // namespace

void appendVarint(std::string &out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

Expected<std::vector<Field>> parseMessage(std::string_view message) {
  std::vector<Field> fields;
  size_t pos = 0;
  while (pos < message.size()) {
    size_t start = pos;
    uint64_t key = 0;
    if (!readVarint(message, pos, key))
      return makeError("malformed field tag at byte ", int64_t(start));
    Field field;
    uint64_t number = key >> 3;
    if (number == 0 || number > 0x1fffffff)
      return makeError("invalid field number ", number, " at byte ",
                       int64_t(start));
    field.number = static_cast<uint32_t>(number);
    switch (key & 7) {
    case 0:
      field.type = WireType::Varint;
      if (!readVarint(message, pos, field.value))
        return makeError("field ", number, ": truncated varint");
      break;
    case 1:
      field.type = WireType::Fixed64;
      if (message.size() - pos < 8)
        return makeError("field ", number, ": truncated fixed64");
      field.value = readLittleEndian(message, pos, 8);
      pos += 8;
      break;
    case 2: {
      field.type = WireType::LengthDelimited;
      uint64_t length = 0;
      if (!readVarint(message, pos, length))
        return makeError("field ", number, ": truncated length");
      if (length > message.size() - pos)
        return makeError("field ", number, ": ", length,
                         " bytes declared, ", int64_t(message.size() - pos),
                         " left");
      field.bytes = message.substr(pos, size_t(length));
      pos += size_t(length);
      break;
    }
    case 5:
      field.type = WireType::Fixed32;
      if (message.size() - pos < 4)
        return makeError("field ", number, ": truncated fixed32");
      field.value = readLittleEndian(message, pos, 4);
      pos += 4;
      break;
    default:
      return makeError("field ", number, ": unsupported wire type ",
                       int64_t(key & 7));
    }
    field.raw = message.substr(start, pos - start);
    fields.push_back(field);
  }
  return fields;
}

Error appendVarints(const Field &field, std::vector<uint64_t> &values) {
  if (field.type == WireType::Varint) {
    values.push_back(field.value);
    return Error::success();
  }
  if (field.type != WireType::LengthDelimited)
    return makeError("field ", int64_t(field.number),
                     ": expected varints");
  size_t pos = 0;
  while (pos < field.bytes.size()) {
    uint64_t value = 0;
    if (!readVarint(field.bytes, pos, value))
      return makeError("field ", int64_t(field.number),
                       ": malformed packed varints");
    values.push_back(value);
  }
  return Error::success();
}

void Writer::tag(uint32_t number, WireType type) {
  appendVarint(out_, (uint64_t(number) << 3) | uint64_t(type));
}

void Writer::varint(uint32_t number, uint64_t value) {
  tag(number, WireType::Varint);
  appendVarint(out_, value);
}

void Writer::bytes(uint32_t number, std::string_view payload) {
  tag(number, WireType::LengthDelimited);
  appendVarint(out_, payload.size());
  out_.append(payload);
}

void Writer::fixed32(uint32_t number, uint32_t value) {
  tag(number, WireType::Fixed32);
  for (int i = 0; i < 4; ++i)
    out_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void Writer::fixed64(uint32_t number, uint64_t value) {
  tag(number, WireType::Fixed64);
  for (int i = 0; i < 8; ++i)
    out_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

} // namespace traincc::rt::proto
