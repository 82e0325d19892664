//===- TestUtil.h - Helpers for the runtime unit tests ----------*- C++ -*-===//
//
// Temporary folders and builders for the small data files the tests write
// themselves (.npy, IDX, gzip).
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_TEST_UNIT_TESTUTIL_H
#define TRAINCC_TEST_UNIT_TESTUTIL_H

#include "traincc/runtime/support/Error.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace traincc::rt::test {

/// A fresh folder under $TMPDIR (or /tmp), removed with its files.
class TempDir {
public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &path() const { return path_; }
  /// path()/name.
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

/// Writes `bytes` to `path`, replacing it.
void writeFile(const std::string &path, const std::string &bytes);
/// Reads a whole file ("" when it cannot be read).
std::string readFile(const std::string &path);

/// The bytes of an .npy file with the given header dictionary text and data;
/// the header is padded to 64 bytes like numpy does unless `pad` is false.
std::string npyBytes(const std::string &dict, const std::string &data,
                     int major = 1, bool pad = true);
/// A standard header dictionary.
std::string npyDict(const std::string &descr, const std::string &shape,
                    bool fortran = false);

/// The raw bytes of `values` in host order.
template <typename T> std::string rawBytes(const std::vector<T> &values) {
  std::string out(values.size() * sizeof(T), '\0');
  if (!values.empty())
    std::memcpy(out.data(), values.data(), out.size());
  return out;
}

/// An IDX file of unsigned bytes: magic 0x000008RR, dims, data.
std::string idxBytes(const std::vector<uint32_t> &dims,
                     const std::string &data);
/// `bytes` compressed as a gzip member (zlib).
std::string gzipBytes(const std::string &bytes);

/// Runs a shell command; returns its exit status (-1 when it did not run).
int runCommand(const std::string &command);
/// True when /usr/bin/python3 can import numpy.
bool havePythonNumpy();

/// gtest helpers: a failed Error / Expected prints its message.
#define ASSERT_OK(expr)                                                        \
  do {                                                                         \
    auto &&okValue_ = (expr);                                                  \
    ASSERT_TRUE(bool(okValue_)) << okValue_.error().message();                 \
  } while (0)

#define EXPECT_NO_ERROR(expr)                                                  \
  do {                                                                         \
    ::traincc::rt::Error errValue_ = (expr);                                   \
    EXPECT_FALSE(errValue_.failed()) << errValue_.message();                   \
  } while (0)

/// The error message of a failed Expected or Error; "<no error>" otherwise.
template <typename T> std::string errorOf(const Expected<T> &value) {
  return value ? "<no error>" : value.error().message();
}
inline std::string errorOf(const Error &err) {
  return err.failed() ? err.message() : "<no error>";
}

} // namespace traincc::rt::test

#endif // TRAINCC_TEST_UNIT_TESTUTIL_H
