//===- Idx.cpp - IDX reader with transparent gunzip -----------------------===//

#include "traincc/runtime/formats/Idx.h"

#include "support/ByteOrder.h"
#include "traincc/runtime/support/File.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <zlib.h>

namespace traincc::rt {

namespace {

// Deflate cannot expand data by more than 1032:1 (a 258-byte match in about
// two bits), so a gzip file of S bytes holds less than 1032 * S bytes.
constexpr int64_t kMaxDeflateRatio = 1032;
constexpr int kMaxIdxRank = 16;
constexpr int64_t kReadChunk = int64_t(16) << 20;

/// Reads the bytes of a file, inflating gzip data.
class ByteSource {
public:
  virtual ~ByteSource() = default;
  /// Reads up to `count` bytes; fewer only at the end of the data.
  virtual Expected<int64_t> read(unsigned char *buffer, int64_t count) = 0;
};

class PlainSource final : public ByteSource {
public:
  explicit PlainSource(InputFile file) : file_(std::move(file)) {}
  Expected<int64_t> read(unsigned char *buffer, int64_t count) override {
    return file_.readSome(buffer, count);
  }

private:
  InputFile file_;
};

/// Inflates a gzip file (one or more members) chunk by chunk.
class GzipSource final : public ByteSource {
public:
  static Expected<std::unique_ptr<GzipSource>> open(InputFile file) {
    std::unique_ptr<GzipSource> source(new GzipSource(std::move(file)));
    // 15 + 16: full window, gzip wrapper only.
    if (inflateInit2(&source->stream_, 15 + 16) != Z_OK)
      return makeError(source->file_.path(), ": cannot initialise zlib");
    source->initialised_ = true;
    return source;
  }
  ~GzipSource() override {
    if (initialised_)
      inflateEnd(&stream_);
  }
  GzipSource(const GzipSource &) = delete;
  GzipSource &operator=(const GzipSource &) = delete;

  Expected<int64_t> read(unsigned char *buffer, int64_t count) override {
    int64_t produced = 0;
    while (produced < count && !finished_) {
      if (stream_.avail_in == 0) {
        Expected<int64_t> got = file_.readSome(input_, sizeof(input_));
        if (!got)
          return got.takeError();
        if (*got == 0) {
          if (memberEnded_) {
            finished_ = true;
            break;
          }
          return makeError(file_.path(), ": gzip data is truncated");
        }
        stream_.next_in = input_;
        stream_.avail_in = static_cast<uInt>(*got);
      }
      if (memberEnded_) {
        // More input after a complete member: a concatenated gzip member.
        if (inflateReset(&stream_) != Z_OK)
          return makeError(file_.path(), ": cannot reset zlib");
        memberEnded_ = false;
      }
      uInt want = static_cast<uInt>(
          std::min<int64_t>(count - produced, int64_t(1) << 30));
      stream_.next_out = buffer + produced;
      stream_.avail_out = want;
      int status = inflate(&stream_, Z_NO_FLUSH);
      produced += want - stream_.avail_out;
      if (status == Z_STREAM_END) {
        memberEnded_ = true;
      } else if (status != Z_OK && status != Z_BUF_ERROR) {
        return makeError(file_.path(), ": corrupt gzip data (",
                         stream_.msg ? stream_.msg : "inflate failed", ")");
      }
    }
    return produced;
  }

private:
  explicit GzipSource(InputFile file) : file_(std::move(file)) {}

  InputFile file_;
  z_stream stream_ = {};
  bool initialised_ = false;
  bool memberEnded_ = false;
  bool finished_ = false;
  unsigned char input_[1 << 16];
};

Error readExactly(ByteSource &source, const std::string &path,
                  unsigned char *buffer, int64_t count, const char *what) {
  Expected<int64_t> got = source.read(buffer, count);
  if (!got)
    return got.takeError();
  if (*got != count)
    return makeError(path, ": file is truncated (", what, " needs ", count,
                     " bytes, found ", *got, ")");
  return Error::success();
}

std::string hex32(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%08X", value);
  return text;
}

} // namespace

Expected<ByteTensor> readIdxUInt8(const std::string &path, int expectedRank) {
  Expected<InputFile> file = InputFile::open(path);
  if (!file)
    return file.takeError();
  int64_t fileSize = file->size();
  unsigned char magic[4];
  if (fileSize < 4)
    return makeError(path, ": not an IDX file (only ", fileSize, " bytes)");
  if (Error err = file->readExact(magic, 2))
    return err;

  // Choose the source by content, not by name: ".gz" may be missing or lie.
  bool gzipped = magic[0] == 0x1F && magic[1] == 0x8B;
  std::unique_ptr<ByteSource> source;
  if (gzipped) {
    Expected<InputFile> reopened = InputFile::open(path);
    if (!reopened)
      return reopened.takeError();
    Expected<std::unique_ptr<GzipSource>> gz =
        GzipSource::open(reopened.take());
    if (!gz)
      return gz.takeError();
    source = gz.take();
    if (Error err = readExactly(*source, path, magic, 4, "the IDX magic"))
      return err;
  } else {
    if (Error err = file->readExact(magic + 2, 2))
      return err;
    source = std::make_unique<PlainSource>(file.take());
  }

  uint32_t magicValue = loadBigEndian32(magic);
  if (magic[0] != 0 || magic[1] != 0)
    return makeError(path, ": not an IDX file (bad magic ", hex32(magicValue),
                     ")");
  if (magic[2] != 0x08)
    return makeError(path, ": unsupported IDX element type in magic ",
                     hex32(magicValue),
                     " (only unsigned bytes, 0x08, are supported)");
  int rank = magic[3];
  if (expectedRank >= 0 && rank != expectedRank)
    return makeError(path, ": expected IDX magic ",
                     hex32(0x800u | uint32_t(expectedRank)), " (", expectedRank,
                     "-dimensional unsigned bytes), got ", hex32(magicValue));
  if (rank < 1 || rank > kMaxIdxRank)
    return makeError(path, ": unsupported IDX rank ", rank);

  unsigned char dims[4 * kMaxIdxRank];
  if (Error err =
          readExactly(*source, path, dims, 4 * rank, "the IDX dimensions"))
    return err;
  ByteTensor tensor;
  tensor.source = path;
  for (int i = 0; i < rank; ++i)
    tensor.shape.push_back(loadBigEndian32(dims + 4 * i));

  // Bound the declared size by what the file can hold before allocating.
  int64_t headerBytes = 4 + 4 * int64_t(rank);
  int64_t capacity = gzipped ? (fileSize > INT64_MAX / kMaxDeflateRatio
                                    ? INT64_MAX
                                    : fileSize * kMaxDeflateRatio)
                             : fileSize - headerBytes;
  Expected<int64_t> count = checkedElementCount(tensor.shape);
  if (!count)
    return count.takeError().withContext(path + ": declared");
  if (*count > capacity && gzipped)
    return makeError(path, ": file is truncated (shape ",
                     formatShape(tensor.shape), " needs ", *count,
                     " data bytes, more than a gzip file of ", fileSize,
                     " bytes can hold)");
  if (*count > capacity)
    return makeError(path, ": file is truncated (shape ",
                     formatShape(tensor.shape), " needs ", *count,
                     " data bytes, the file has ", capacity, ")");

  // Grow with the data that actually arrives, so a hostile gzip header
  // cannot make us allocate what its payload does not contain.
  int64_t filled = 0;
  while (filled < *count) {
    int64_t chunk = std::min(kReadChunk, *count - filled);
    tensor.data.resize(static_cast<size_t>(filled + chunk));
    Expected<int64_t> got = source->read(tensor.data.data() + filled, chunk);
    if (!got)
      return got.takeError();
    filled += *got;
    if (*got != chunk)
      return makeError(path, ": file is truncated (shape ",
                       formatShape(tensor.shape), " needs ", *count,
                       " data bytes, found ", filled, ")");
  }
  unsigned char extra;
  Expected<int64_t> more = source->read(&extra, 1);
  if (!more)
    return more.takeError();
  if (*more != 0)
    return makeError(path, ": unexpected bytes after the data (shape ",
                     formatShape(tensor.shape), " needs ", *count,
                     " data bytes)");
  return tensor;
}

} // namespace traincc::rt
