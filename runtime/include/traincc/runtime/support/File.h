//===- File.h - RAII files with errors as values ----------------*- C++ -*-===//
//
// InputFile reads a whole regular file or parts of it with exact-size reads;
// AtomicFileWriter writes a temporary file next to the destination and
// renames it over the destination only on commit() (after fsync), so readers
// never see a half-written file (predict output, checkpoints).
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_SUPPORT_FILE_H
#define TRAINCC_RUNTIME_SUPPORT_FILE_H

#include "traincc/runtime/support/Error.h"

#include <cstdint>
#include <cstdio>
#include <string>

namespace traincc::rt {

/// The last component of a path ("data/train-x.npy" -> "train-x.npy").
std::string baseName(const std::string &path);

/// True when `path` names an existing regular file.
bool isRegularFile(const std::string &path);

/// A file opened for reading; closed by the destructor.
class InputFile {
public:
  /// Opens a regular file (directories and other kinds are an error).
  static Expected<InputFile> open(const std::string &path);

  InputFile(InputFile &&other) noexcept;
  InputFile &operator=(InputFile &&other) noexcept;
  InputFile(const InputFile &) = delete;
  InputFile &operator=(const InputFile &) = delete;
  ~InputFile();

  const std::string &path() const { return path_; }
  /// Size in bytes at the time of open().
  int64_t size() const { return size_; }
  /// Bytes consumed so far.
  int64_t position() const { return position_; }
  int64_t remaining() const { return size_ - position_; }

  /// Reads exactly `count` bytes; fewer bytes is an error ("truncated").
  Error readExact(void *buffer, int64_t count);
  /// Reads up to `count` bytes and returns how many were read (0 at end).
  Expected<int64_t> readSome(void *buffer, int64_t count);

private:
  InputFile(std::FILE *file, std::string path, int64_t size)
      : file_(file), path_(std::move(path)), size_(size) {}

  std::FILE *file_ = nullptr;
  std::string path_;
  int64_t size_ = 0;
  int64_t position_ = 0;
};

/// Writes `path` atomically: data goes to "<path>.tmp-<pid>" and replaces
/// `path` on commit(). Without commit() the temporary file is removed.
class AtomicFileWriter {
public:
  static Expected<AtomicFileWriter> create(const std::string &path);

  AtomicFileWriter(AtomicFileWriter &&other) noexcept;
  AtomicFileWriter &operator=(AtomicFileWriter &&other) noexcept;
  AtomicFileWriter(const AtomicFileWriter &) = delete;
  AtomicFileWriter &operator=(const AtomicFileWriter &) = delete;
  ~AtomicFileWriter();

  Error write(const void *data, int64_t count);
  /// Flushes, fsyncs, renames over the destination and fsyncs its folder.
  Error commit();

private:
  AtomicFileWriter(std::FILE *file, std::string path, std::string tempPath)
      : file_(file), path_(std::move(path)), tempPath_(std::move(tempPath)) {}
  void discard();

  std::FILE *file_ = nullptr;
  std::string path_;
  std::string tempPath_;
};

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_SUPPORT_FILE_H
