#include "gzip_file.hpp"

#include <kspecter/core/error.hpp>

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>

namespace kspecter::io {

namespace {

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzPtr = std::unique_ptr<gzFile_s, GzCloser>;

// zlib's message for the last error on `f`, or errno's for an error of the file itself.
std::string gz_reason(gzFile f) {
  int code = 0;
  char const* msg = gzerror(f, &code);
  if (code == Z_ERRNO) return std::strerror(errno);
  return msg && *msg ? msg : "zlib error " + std::to_string(code);
}

// The size gzip's trailer gives (ISIZE: the uncompressed size of the last member modulo 2^32),
// as a first guess of the buffer to reserve. A corrupt trailer may claim up to 4 GiB: the
// guess is capped at what deflate can make of the file's bytes (at most 1032 to 1), so a
// small bad file cannot reserve gigabytes (the fuzz smoke test found one that did).
std::size_t size_hint(std::string const& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in || in.tellg() < 18) return 0;
  auto const compressed = static_cast<std::size_t>(in.tellg());
  in.seekg(-4, std::ios::end);
  unsigned char b[4] = {0, 0, 0, 0};
  in.read(reinterpret_cast<char*>(b), 4);
  std::size_t const isize = std::size_t(b[0]) | std::size_t(b[1]) << 8 | std::size_t(b[2]) << 16 |
                            std::size_t(b[3]) << 24;
  constexpr std::size_t max_deflate_ratio = 1032;
  return std::min(isize, compressed * max_deflate_ratio);
}

}  // namespace

bool is_gzip_file(std::string const& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char b[2] = {0, 0};
  return in.read(reinterpret_cast<char*>(b), 2) && b[0] == 0x1f && b[1] == 0x8b;
}

std::vector<char> read_gzip(std::string const& path) {
  GzPtr f(gzopen(path.c_str(), "rb"));
  if (!f) throw InputError(path, "", std::string("cannot open: ") + std::strerror(errno));
  gzbuffer(f.get(), 1 << 20);
  std::vector<char> out;
  out.reserve(size_hint(path));
  constexpr std::size_t chunk = std::size_t(1) << 24;
  for (;;) {
    std::size_t const at = out.size();
    out.resize(at + chunk);
    int const n = gzread(f.get(), out.data() + at, static_cast<unsigned>(chunk));
    if (n < 0) {
      throw InputError(path, "",
                       "corrupt gzip stream after " + std::to_string(at) +
                           " decompressed bytes: " + gz_reason(f.get()));
    }
    out.resize(at + std::size_t(n));
    if (std::size_t(n) < chunk) break;
  }
  // gzread stops quietly at a stream cut short; gzerror then says so.
  int code = Z_OK;
  gzerror(f.get(), &code);
  if (code != Z_OK)
    throw InputError(path, "",
                     "truncated or corrupt gzip stream after " + std::to_string(out.size()) +
                         " decompressed bytes: " + gz_reason(f.get()));
  return out;
}

std::string write_gzip(int fd, void const* data, std::size_t size) {
  GzPtr f(gzdopen(fd, "wb"));
  if (!f) {
    ::close(fd);
    return "cannot start a gzip stream";
  }
  auto const* p = static_cast<char const*>(data);
  constexpr std::size_t chunk = std::size_t(1) << 24;
  for (std::size_t at = 0; at < size;) {
    unsigned const n = static_cast<unsigned>(std::min(chunk, size - at));
    if (gzwrite(f.get(), p + at, n) != int(n)) return gz_reason(f.get());
    at += n;
  }
  int const rc = gzclose(f.release());
  if (rc != Z_OK) return rc == Z_ERRNO ? std::strerror(errno) : "zlib error " + std::to_string(rc);
  return {};
}

}  // namespace kspecter::io
