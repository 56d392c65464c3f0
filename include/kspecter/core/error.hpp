// Exceptions thrown at the io/cli border. Kernels never throw: they report bad numbers as
// data (ivar = 0, mask bits).
#pragma once

#include <stdexcept>
#include <string>

namespace kspecter {

/// Any failure kspecter reports to its caller.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A file that cannot be used: the message names the file, the HDU (when there is one) and
/// what is wrong, e.g. "psf.fits: HDU 'XTRACE': expected a 2-D image, found a table".
class InputError : public Error {
 public:
  InputError(std::string const& file, std::string const& hdu, std::string const& what)
      : Error(file + (hdu.empty() ? std::string() : ": HDU '" + hdu + "'") + ": " + what),
        file_(file),
        hdu_(hdu) {}
  std::string const& file() const noexcept { return file_; }
  std::string const& hdu() const noexcept { return hdu_; }

 private:
  std::string file_, hdu_;
};

/// A parameter out of its valid range (command line or API call).
class ParameterError : public Error {
 public:
  using Error::Error;
};

}  // namespace kspecter
