//===- TestUtil.cpp - Helpers for the runtime unit tests ------------------===//

#include "TestUtil.h"

#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

namespace traincc::rt::test {

TempDir::TempDir() {
  const char *base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base && *base ? base : "/tmp") + "/traincc-unit-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()))
    path_ = buffer.data();
}

TempDir::~TempDir() {
  if (path_.empty())
    return;
  // The tests only create plain files directly inside the folder.
  if (DIR *dir = ::opendir(path_.c_str())) {
    while (dirent *entry = ::readdir(dir)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..")
        ::unlink((path_ + "/" + name).c_str());
    }
    ::closedir(dir);
  }
  ::rmdir(path_.c_str());
}

void writeFile(const std::string &path, const std::string &bytes) {
  // Unlink first: on ext4, truncating a file that holds data forces a flush
  // (auto_da_alloc), which made rewriting a file cost milliseconds.
  ::unlink(path.c_str());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string npyDict(const std::string &descr, const std::string &shape,
                    bool fortran) {
  return "{'descr': '" + descr +
         "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

std::string npyBytes(const std::string &dict, const std::string &data,
                     int major, bool pad) {
  size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  if (pad) {
    size_t total = prefix + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header += '\n';
  }
  std::string out = "\x93NUMPY";
  out += char(major);
  out += char(0);
  uint32_t length = uint32_t(header.size());
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
    out += char((length >> (8 * i)) & 0xFF);
  return out + header + data;
}

std::string idxBytes(const std::vector<uint32_t> &dims,
                     const std::string &data) {
  std::string out = {0, 0, 8, char(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8)
      out += char((d >> shift) & 0xFF);
  return out + data;
}

std::string gzipBytes(const std::string &bytes) {
  z_stream stream = {};
  // 15 + 16: gzip wrapper.
  deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
               Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&stream, uLong(bytes.size())) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(bytes.data()));
  stream.avail_in = uInt(bytes.size());
  stream.next_out = reinterpret_cast<Bytef *>(out.data());
  stream.avail_out = uInt(out.size());
  deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

int runCommand(const std::string &command) {
  int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status))
    return -1;
  return WEXITSTATUS(status);
}

bool havePythonNumpy() {
  static const bool available =
      runCommand("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
  return available;
}

} // namespace traincc::rt::test
