//===- Npy.cpp - NumPy .npy reader and writer -----------------------------===//

#include "traincc/runtime/formats/Npy.h"

#include "support/ByteOrder.h"
#include "traincc/runtime/support/File.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

namespace traincc::rt {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// numpy itself refuses headers above 10,000 bytes by default; anything this
// large is a corrupt or hostile file, not data.
constexpr int64_t kMaxHeaderBytes = 1 << 20;
constexpr size_t kMaxRank = 64;

//===----------------------------------------------------------------------===//
// Header dictionary parsing
//===----------------------------------------------------------------------===//

/// A parser for the Python literal subset numpy writes: a dict with string
/// keys whose values are strings, True/False or a tuple of integers.
class HeaderDictParser {
public:
  explicit HeaderDictParser(std::string_view text) : text_(text) {}

  Expected<NpyHeader> parse() {
    NpyHeader header;
    bool seenDescr = false, seenFortran = false, seenShape = false;
    skipSpace();
    if (!consume('{'))
      return fail("expected '{' at the start of the header");
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      Expected<std::string> key = parseString();
      if (!key)
        return key.takeError();
      skipSpace();
      if (!consume(':'))
        return fail(strCat("expected ':' after key '", *key, "'"));
      skipSpace();
      if (*key == "descr") {
        if (seenDescr)
          return fail("duplicate key 'descr'");
        seenDescr = true;
        if (peek() == '[')
          return fail("structured dtypes (a list as 'descr') are not "
                      "supported");
        Expected<std::string> descr = parseString();
        if (!descr)
          return descr.takeError();
        header.descr = descr.take();
      } else if (*key == "fortran_order") {
        if (seenFortran)
          return fail("duplicate key 'fortran_order'");
        seenFortran = true;
        Expected<bool> value = parseBool();
        if (!value)
          return value.takeError();
        header.fortranOrder = *value;
      } else if (*key == "shape") {
        if (seenShape)
          return fail("duplicate key 'shape'");
        seenShape = true;
        Expected<std::vector<int64_t>> shape = parseShape();
        if (!shape)
          return shape.takeError();
        header.shape = shape.take();
      } else {
        return fail(strCat("unexpected key '", *key, "'"));
      }
      skipSpace();
      if (consume(','))
        continue;
      if (consume('}'))
        break;
      return fail("expected ',' or '}' after a value");
    }
    skipSpace();
    if (pos_ != text_.size())
      return fail("unexpected text after the header dictionary");
    if (!seenDescr || !seenFortran || !seenShape)
      return fail(strCat("missing key '",
                         !seenDescr     ? "descr"
                         : !seenFortran ? "fortran_order"
                                        : "shape",
                         "'"));
    return header;
  }

private:
  Error fail(const std::string &what) const {
    return makeError("malformed .npy header: ", what, " (at character ", pos_,
                     ")");
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool consume(char c) {
    if (peek() != c || pos_ >= text_.size())
      return false;
    ++pos_;
    return true;
  }
  bool consumeWord(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word)
      return false;
    pos_ += word.size();
    return true;
  }
  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }

  Expected<std::string> parseString() {
    char quote = peek();
    if (quote != '\'' && quote != '"')
      return fail("expected a quoted string");
    ++pos_;
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' || text_[pos_] == '\n')
        return fail("unsupported character in a string");
      ++pos_;
    }
    if (pos_ >= text_.size())
      return fail("unterminated string");
    std::string value(text_.substr(start, pos_ - start));
    ++pos_;
    return value;
  }

  Expected<bool> parseBool() {
    if (consumeWord("True"))
      return true;
    if (consumeWord("False"))
      return false;
    return fail("expected True or False");
  }

  Expected<int64_t> parseDimension() {
    if (peek() == '-')
      return fail("negative dimension");
    if (peek() < '0' || peek() > '9')
      return fail("expected a dimension");
    int64_t value = 0;
    while (peek() >= '0' && peek() <= '9') {
      int digit = peek() - '0';
      if (value > (INT64_MAX - digit) / 10)
        return fail("dimension does not fit in 64 bits");
      value = value * 10 + digit;
      ++pos_;
    }
    consume('L'); // Python 2 era numpy wrote long literals as "3L".
    return value;
  }

  Expected<std::vector<int64_t>> parseShape() {
    if (!consume('('))
      return fail("expected '(' for the shape");
    std::vector<int64_t> shape;
    while (true) {
      skipSpace();
      if (consume(')'))
        return shape;
      if (shape.size() == kMaxRank)
        return fail(
            strCat("shape has more than ", int64_t(kMaxRank), " dimensions"));
      Expected<int64_t> dim = parseDimension();
      if (!dim)
        return dim.takeError();
      shape.push_back(*dim);
      skipSpace();
      if (consume(','))
        continue;
      if (consume(')'))
        return shape;
      return fail("expected ',' or ')' in the shape");
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

/// Name of a numpy type code such as "f2" for error messages.
const char *numpyTypeName(std::string_view code) {
  static constexpr struct {
    std::string_view code;
    const char *name;
  } kNames[] = {
      {"b1", "bool"},         {"i1", "int8"},      {"i2", "int16"},
      {"i4", "int32"},        {"i8", "int64"},     {"u1", "uint8"},
      {"u2", "uint16"},       {"u4", "uint32"},    {"u8", "uint64"},
      {"f2", "float16"},      {"f4", "float32"},   {"f8", "float64"},
      {"f16", "float128"},    {"c8", "complex64"}, {"c16", "complex128"},
      {"O", "Python objects"}};
  for (const auto &entry : kNames)
    if (code == entry.code)
      return entry.name;
  // Parametrised types: "M8[ns]", "U12", "S3", "V16".
  switch (code.empty() ? '\0' : code[0]) {
  case 'M':
    return "datetime64";
  case 'm':
    return "timedelta64";
  case 'U':
  case 'S':
    return "strings";
  case 'V':
    return "raw bytes";
  default:
    return nullptr;
  }
}

/// Fills dtype and byteSwapped from descr.
Error decodeDescr(NpyHeader &header) {
  const std::string &descr = header.descr;
  if (descr.size() < 2)
    return Error::success();
  char order = descr[0];
  std::string_view code = std::string_view(descr).substr(1);
  std::optional<DType> type;
  if (code == "f4")
    type = DType::Float32;
  else if (code == "f8")
    type = DType::Float64;
  else if (code == "i8")
    type = DType::Int64;
  else if (code == "i4")
    type = DType::Int32;
  else if (code == "u1")
    type = DType::UInt8;
  if (!type)
    return Error::success();
  if (order == '|') {
    if (dtypeSize(*type) != 1)
      return makeError("malformed .npy header: descr '", descr,
                       "' has no byte order");
  } else if (order == '<') {
    header.byteSwapped = !kHostIsLittleEndian && dtypeSize(*type) > 1;
  } else if (order == '>') {
    header.byteSwapped = kHostIsLittleEndian && dtypeSize(*type) > 1;
  } else if (order != '=') {
    return Error::success(); // Unknown byte order: leave the type unknown.
  }
  header.dtype = type;
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

/// An .npy file positioned at its first data byte.
struct OpenNpy {
  InputFile file;
  NpyHeader header;
};

Expected<OpenNpy> openNpy(const std::string &path) {
  Expected<InputFile> file = InputFile::open(path);
  if (!file)
    return file.takeError();
  unsigned char prefix[12];
  if (file->size() < 10)
    return makeError(path, ": not an .npy file (only ", file->size(),
                     " bytes)");
  if (Error err = file->readExact(prefix, 8))
    return err;
  if (std::memcmp(prefix, kMagic, kMagicSize) != 0)
    return makeError(path, ": not an .npy file (bad magic bytes)");
  int major = prefix[6], minor = prefix[7];
  int64_t headerSize = 0;
  if (major == 1 && minor == 0) {
    if (Error err = file->readExact(prefix + 8, 2))
      return err;
    headerSize = prefix[8] | (int64_t(prefix[9]) << 8);
  } else if ((major == 2 || major == 3) && minor == 0) {
    if (Error err = file->readExact(prefix + 8, 4))
      return err;
    headerSize = loadLittleEndian32(prefix + 8);
  } else {
    return makeError(path, ": unsupported .npy format version ", major, ".",
                     minor, " (supported: 1.0, 2.0, 3.0)");
  }
  if (headerSize > kMaxHeaderBytes)
    return makeError(path, ": .npy header of ", headerSize,
                     " bytes is implausibly large");
  if (headerSize > file->remaining())
    return makeError(path, ": file is truncated (the header needs ", headerSize,
                     " bytes, only ", file->remaining(), " remain)");
  std::string text(static_cast<size_t>(headerSize), '\0');
  if (Error err = file->readExact(text.data(), headerSize))
    return err;
  Expected<NpyHeader> header = parseNpyHeaderDict(text);
  if (!header)
    return header.takeError().withContext(path);
  if (header->fortranOrder && header->shape.size() > 1)
    return makeError(path, ": array is stored in Fortran order; only C order "
                           "is supported (save np.ascontiguousarray(a))");
  return OpenNpy{file.take(), header.take()};
}

/// Checks that the data exactly fills the rest of the file; returns the
/// element count.
Expected<int64_t> checkDataSize(OpenNpy &npy, DType type) {
  const std::string &path = npy.file.path();
  int64_t itemSize = dtypeSize(type);
  Expected<int64_t> count =
      checkedElementCount(npy.header.shape, INT64_MAX / itemSize);
  if (!count)
    return count.takeError().withContext(path + ": declared");
  int64_t bytes = *count * itemSize;
  int64_t remaining = npy.file.remaining();
  if (bytes > remaining)
    return makeError(path, ": file is truncated (shape ",
                     formatShape(npy.header.shape), " of ", dtypeName(type),
                     " needs ", bytes, " data bytes, the file has ", remaining,
                     ")");
  if (bytes < remaining)
    return makeError(path, ": ", remaining - bytes,
                     " unexpected bytes after the data (shape ",
                     formatShape(npy.header.shape), " of ", dtypeName(type),
                     " needs ", bytes, " data bytes)");
  return *count;
}

/// Reads the data as its stored type into host-order raw bytes.
Expected<std::vector<unsigned char>> readRawData(OpenNpy &npy, DType type,
                                                 int64_t count) {
  std::vector<unsigned char> raw(static_cast<size_t>(count * dtypeSize(type)));
  if (Error err = npy.file.readExact(raw.data(), int64_t(raw.size())))
    return err;
  if (npy.header.byteSwapped)
    byteSwapElements(raw.data(), count, dtypeSize(type));
  return raw;
}

template <typename T> T loadAt(const unsigned char *raw, int64_t index) {
  T value;
  std::memcpy(&value, raw + index * int64_t(sizeof(T)), sizeof(T));
  return value;
}

Error wrongType(const std::string &path, const char *expected,
                const NpyHeader &header, const char *hint) {
  return makeError(path, ": expected ", expected, ", got ",
                   describeNpyDescr(header.descr), hint);
}

} // namespace

Expected<NpyHeader> parseNpyHeaderDict(std::string_view text) {
  Expected<NpyHeader> header = HeaderDictParser(text).parse();
  if (!header)
    return header;
  if (Error err = decodeDescr(*header))
    return err;
  return header;
}

std::string describeNpyDescr(std::string_view descr) {
  if (descr.size() >= 2 &&
      std::string_view("<>|=").find(descr[0]) != std::string_view::npos)
    if (const char *name = numpyTypeName(descr.substr(1)))
      return strCat(descr, " (", name, ")");
  return strCat("'", descr, "'");
}

Expected<FloatTensor> readNpyFloat32(const std::string &path) {
  Expected<NpyFloatArray> array = readNpyAsFloat32(path);
  if (!array)
    return array.takeError();
  return std::move(array->tensor);
}

Expected<NpyFloatArray> readNpyAsFloat32(const std::string &path) {
  Expected<OpenNpy> npy = openNpy(path);
  if (!npy)
    return npy.takeError();
  const NpyHeader &header = npy->header;
  if (!header.dtype || *header.dtype == DType::Int64)
    return wrongType(path, "float32 data", header,
                     header.dtype ? " (int64 is the label type; inputs and "
                                    "targets must be floating point)"
                                  : "");
  DType type = *header.dtype;
  Expected<int64_t> count = checkDataSize(*npy, type);
  if (!count)
    return count.takeError();
  Expected<std::vector<unsigned char>> raw = readRawData(*npy, type, *count);
  if (!raw)
    return raw.takeError();
  const unsigned char *bytes = raw->data();

  FloatTensor tensor;
  tensor.shape = header.shape;
  tensor.source = path;
  tensor.data.resize(static_cast<size_t>(*count));
  float *out = tensor.data.data();
  switch (type) {
  case DType::Float32:
    if (!raw->empty())
      std::memcpy(out, bytes, raw->size());
    break;
  case DType::Float64:
    for (int64_t i = 0; i < *count; ++i) {
      double v = loadAt<double>(bytes, i);
      if (std::isfinite(v) && std::fabs(v) > double(FLT_MAX))
        return makeError(path, ": float64 value ", v, " at element ", i,
                         " does not fit in float32");
      out[i] = static_cast<float>(v);
    }
    break;
  case DType::Int32:
    for (int64_t i = 0; i < *count; ++i) {
      int32_t v = loadAt<int32_t>(bytes, i);
      if (v > (1 << 24) || v < -(1 << 24))
        return makeError(path, ": int32 value ", v, " at element ", i,
                         " is not exactly representable in float32");
      out[i] = static_cast<float>(v);
    }
    break;
  case DType::UInt8:
    for (int64_t i = 0; i < *count; ++i)
      out[i] = static_cast<float>(bytes[i]);
    break;
  case DType::Int64:
    break; // Rejected above.
  }
  return NpyFloatArray{std::move(tensor), type};
}

namespace {

/// Integers widened to int64; `what` and `whyNotFloat` name the data in the
/// error about a floating-point file.
Expected<Int64Tensor> readIntegers(const std::string &path, const char *what,
                                   const char *whyNotFloat) {
  Expected<OpenNpy> npy = openNpy(path);
  if (!npy)
    return npy.takeError();
  const NpyHeader &header = npy->header;
  if (!header.dtype || *header.dtype == DType::Float32 ||
      *header.dtype == DType::Float64)
    return wrongType(path, what, header, header.dtype ? whyNotFloat : "");
  DType type = *header.dtype;
  Expected<int64_t> count = checkDataSize(*npy, type);
  if (!count)
    return count.takeError();
  Expected<std::vector<unsigned char>> raw = readRawData(*npy, type, *count);
  if (!raw)
    return raw.takeError();
  const unsigned char *bytes = raw->data();

  Int64Tensor tensor;
  tensor.shape = header.shape;
  tensor.source = path;
  tensor.data.resize(static_cast<size_t>(*count));
  int64_t *out = tensor.data.data();
  for (int64_t i = 0; i < *count; ++i) {
    if (type == DType::Int64)
      out[i] = loadAt<int64_t>(bytes, i);
    else if (type == DType::Int32)
      out[i] = loadAt<int32_t>(bytes, i);
    else
      out[i] = bytes[i];
  }
  return tensor;
}

} // namespace

Expected<Int64Tensor> readNpyInt64(const std::string &path) {
  return readIntegers(path, "int64 labels",
                      " (class labels must be integers; float targets need "
                      "an MSE loss)");
}

Expected<Int64Tensor> readNpyIds(const std::string &path) {
  return readIntegers(path, "int64 ids",
                      " (the model's input is integer: token ids that an "
                      "embedding looks up)");
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

namespace {

/// numpy's shape spelling: "()", "(3,)", "(2, 3)".
std::string pythonShape(const std::vector<int64_t> &shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    out += ',';
  return out + ")";
}

Error writeNpyData(const std::string &path, const std::vector<int64_t> &shape,
                   const void *data, int64_t elementSize, const char *descr) {
  Expected<int64_t> count = checkedElementCount(shape, INT64_MAX / elementSize);
  if (!count)
    return count.takeError().withContext(path);
  if (*count > 0 && !data)
    return makeError(path, ": no data to write");
  std::string dict =
      strCat("{'descr': '", descr,
             "', 'fortran_order': False, 'shape': ", pythonShape(shape), ", }");
  // Pad with spaces so that the data starts on a 64-byte boundary, as numpy
  // does; version 2.0 only when the header outgrows a 16-bit length.
  int version = 1;
  size_t prefixSize = 10;
  size_t total = prefixSize + dict.size() + 1;
  if (total - prefixSize + 63 > 0xFFFF) {
    version = 2;
    prefixSize = 12;
    total = prefixSize + dict.size() + 1;
  }
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';

  std::string prefix(kMagic, kMagicSize);
  prefix += char(version);
  prefix += char(0);
  unsigned char length[4];
  storeLittleEndian32(length, static_cast<uint32_t>(dict.size()));
  prefix.append(reinterpret_cast<const char *>(length), version == 1 ? 2 : 4);

  Expected<AtomicFileWriter> writer = AtomicFileWriter::create(path);
  if (!writer)
    return writer.takeError();
  if (Error err = writer->write(prefix.data(), int64_t(prefix.size())))
    return err;
  if (Error err = writer->write(dict.data(), int64_t(dict.size())))
    return err;
  if (kHostIsLittleEndian) {
    if (Error err = writer->write(data, *count * elementSize))
      return err;
  } else {
    std::vector<unsigned char> chunk;
    const auto *bytes = static_cast<const unsigned char *>(data);
    constexpr int64_t kChunkElements = 1 << 16;
    for (int64_t first = 0; first < *count; first += kChunkElements) {
      int64_t n = std::min(kChunkElements, *count - first);
      chunk.assign(bytes + first * elementSize,
                   bytes + (first + n) * elementSize);
      byteSwapElements(chunk.data(), n, elementSize);
      if (Error err = writer->write(chunk.data(), int64_t(chunk.size())))
        return err;
    }
  }
  return writer->commit();
}

} // namespace

Error writeNpy(const std::string &path, const std::vector<int64_t> &shape,
               const float *data) {
  return writeNpyData(path, shape, data, 4, "<f4");
}

Error writeNpy(const std::string &path, const std::vector<int64_t> &shape,
               const int64_t *data) {
  return writeNpyData(path, shape, data, 8, "<i8");
}

} // namespace traincc::rt
