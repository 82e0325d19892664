//===- File.cpp - RAII files with errors as values ------------------------===//

#include "traincc/runtime/support/File.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace traincc::rt {

namespace {
std::string errnoText(int err) { return std::strerror(err); }

std::string directoryOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}
} // namespace

std::string baseName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool isRegularFile(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

//===----------------------------------------------------------------------===//
// InputFile
//===----------------------------------------------------------------------===//

Expected<InputFile> InputFile::open(const std::string &path) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return makeError(path, ": cannot open: ", errnoText(errno));
  struct stat info;
  if (::fstat(::fileno(file), &info) != 0) {
    int err = errno;
    std::fclose(file);
    return makeError(path, ": cannot stat: ", errnoText(err));
  }
  if (!S_ISREG(info.st_mode)) {
    std::fclose(file);
    return makeError(path, ": not a regular file");
  }
  return InputFile(file, path, static_cast<int64_t>(info.st_size));
}

InputFile::InputFile(InputFile &&other) noexcept
    : file_(other.file_), path_(std::move(other.path_)), size_(other.size_),
      position_(other.position_) {
  other.file_ = nullptr;
}

InputFile &InputFile::operator=(InputFile &&other) noexcept {
  if (this != &other) {
    if (file_)
      std::fclose(file_);
    file_ = other.file_;
    path_ = std::move(other.path_);
    size_ = other.size_;
    position_ = other.position_;
    other.file_ = nullptr;
  }
  return *this;
}

InputFile::~InputFile() {
  if (file_)
    std::fclose(file_);
}

Expected<int64_t> InputFile::readSome(void *buffer, int64_t count) {
  if (!file_)
    return makeError(path_, ": file is closed");
  if (count <= 0)
    return int64_t(0);
  size_t got = std::fread(buffer, 1, static_cast<size_t>(count), file_);
  if (got < static_cast<size_t>(count) && std::ferror(file_))
    return makeError(path_, ": read error: ", errnoText(errno));
  position_ += static_cast<int64_t>(got);
  return static_cast<int64_t>(got);
}

Error InputFile::readExact(void *buffer, int64_t count) {
  Expected<int64_t> got = readSome(buffer, count);
  if (!got)
    return got.takeError();
  if (*got != count)
    return makeError(path_, ": file is truncated (wanted ", count,
                     " more bytes at offset ", position_ - *got, ", found ",
                     *got, ")");
  return Error::success();
}

//===----------------------------------------------------------------------===//
// AtomicFileWriter
//===----------------------------------------------------------------------===//

Expected<AtomicFileWriter> AtomicFileWriter::create(const std::string &path) {
  std::string tempPath =
      strCat(path, ".tmp-", static_cast<int64_t>(::getpid()));
  std::FILE *file = std::fopen(tempPath.c_str(), "wb");
  if (!file)
    return makeError(path, ": cannot create ", baseName(tempPath), ": ",
                     errnoText(errno));
  return AtomicFileWriter(file, path, tempPath);
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter &&other) noexcept
    : file_(other.file_), path_(std::move(other.path_)),
      tempPath_(std::move(other.tempPath_)) {
  other.file_ = nullptr;
}

AtomicFileWriter &
AtomicFileWriter::operator=(AtomicFileWriter &&other) noexcept {
  if (this != &other) {
    discard();
    file_ = other.file_;
    path_ = std::move(other.path_);
    tempPath_ = std::move(other.tempPath_);
    other.file_ = nullptr;
  }
  return *this;
}

AtomicFileWriter::~AtomicFileWriter() { discard(); }

void AtomicFileWriter::discard() {
  if (!file_)
    return;
  std::fclose(file_);
  file_ = nullptr;
  std::remove(tempPath_.c_str());
}

Error AtomicFileWriter::write(const void *data, int64_t count) {
  if (!file_)
    return makeError(path_, ": writer is already closed");
  if (count > 0 && std::fwrite(data, 1, static_cast<size_t>(count), file_) !=
                       static_cast<size_t>(count))
    return makeError(path_, ": write error: ", errnoText(errno));
  return Error::success();
}

Error AtomicFileWriter::commit() {
  if (!file_)
    return makeError(path_, ": writer is already closed");
  if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0) {
    Error err = makeError(path_, ": cannot flush: ", errnoText(errno));
    discard();
    return err;
  }
  int closeResult = std::fclose(file_);
  file_ = nullptr;
  if (closeResult != 0) {
    std::remove(tempPath_.c_str());
    return makeError(path_, ": cannot close: ", errnoText(errno));
  }
  if (std::rename(tempPath_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    std::remove(tempPath_.c_str());
    return makeError(path_, ": cannot rename ", baseName(tempPath_),
                     " into place: ", errnoText(err));
  }
  // Make the rename itself durable; failing to open the folder is harmless.
  int dirFd = ::open(directoryOf(path_).c_str(), O_RDONLY | O_DIRECTORY);
  if (dirFd >= 0) {
    ::fsync(dirFd);
    ::close(dirFd);
  }
  return Error::success();
}

} // namespace traincc::rt
