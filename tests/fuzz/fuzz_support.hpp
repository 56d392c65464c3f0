// What the libFuzzer targets share: each input becomes a file (the readers take a path), and
// a reader that breaks a promise it documents aborts the run, so libFuzzer keeps the input.
#pragma once

#include <kspecter/core/error.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace kspecter::fuzz {

/// Replaces the contents of this process's scratch file for `what` with the input and returns
/// its path. The file is in $KSPECTER_FUZZ_TMPDIR, else /dev/shm when it exists (memory: no
/// disk write per input), else /tmp; its name holds the pid, so targets run side by side.
std::string const& write_input(char const* what, std::uint8_t const* data, std::size_t size);

/// Reports a broken promise of a reader on stderr and aborts (libFuzzer saves the input).
[[noreturn]] void broken(std::string const& what);

/// Runs `read` (a reader of `path` and its checks): an InputError naming `path` is a clean
/// refusal; one naming another file is broken; any other exception escapes to libFuzzer.
template <class Read>
void read_or_refuse(std::string const& path, Read read) {
  try {
    read();
  } catch (InputError const& e) {
    if (e.file() != path) broken("InputError names '" + e.file() + "', not the file read");
  }
}

}  // namespace kspecter::fuzz
