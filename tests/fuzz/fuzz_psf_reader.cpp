// libFuzzer target: io::read_psf on arbitrary bytes. A refusal is an InputError naming the
// file; anything else (a sanitizer report, another exception, a leak, a hang) is a finding.
// A PSF it accepts has passed psf::check_psf (shapes, degrees, finite values) inside read_psf.
#include "fuzz_support.hpp"

#include <kspecter/io/psf_file.hpp>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  using namespace kspecter;
  std::string const& path = fuzz::write_input("psf", data, size);
  fuzz::read_or_refuse(path, [&] { io::read_psf(path); });
  return 0;
}
