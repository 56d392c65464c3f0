#include "fuzz_support.hpp"

#include <kspecter/core/version.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

namespace kspecter {

// src/core/version.cpp also reports the Kokkos runtime, which the fuzz build leaves out; the
// preproc writer (used for the seeds) only stamps CREATOR with this.
char const* version() { return "fuzz"; }

}  // namespace kspecter

namespace kspecter::fuzz {
namespace {

std::string scratch_dir() {
  if (char const* env = std::getenv("KSPECTER_FUZZ_TMPDIR"); env && *env) return env;
  return std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
}

/// One file per target name, kept open: an input is a truncate and a write.
struct Scratch {
  std::string path;
  int fd = -1;
  ~Scratch() {
    if (fd >= 0) ::close(fd);
    if (!path.empty()) ::unlink(path.c_str());
  }
};

}  // namespace

std::string const& write_input(char const* what, std::uint8_t const* data, std::size_t size) {
  static std::map<std::string, Scratch> files;
  Scratch& s = files[what];
  if (s.fd < 0) {
    s.path = scratch_dir() + "/kspecter-fuzz-" + what + "-" + std::to_string(::getpid()) + ".fits";
    s.fd = ::open(s.path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (s.fd < 0) broken("cannot create the scratch file " + s.path);
  }
  if (::ftruncate(s.fd, 0) != 0) broken("cannot truncate " + s.path);
  std::size_t done = 0;
  while (done < size) {
    ssize_t const n = ::pwrite(s.fd, data + done, size - done, static_cast<off_t>(done));
    if (n <= 0) broken("cannot write " + s.path);
    done += static_cast<std::size_t>(n);
  }
  return s.path;
}

void broken(std::string const& what) {
  std::fprintf(stderr, "kspecter fuzz: %s\n", what.c_str());
  std::abort();
}

}  // namespace kspecter::fuzz
