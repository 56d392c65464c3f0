// What every CFITSIO-based reader and writer in io/ shares: an owning file handle and
// CFITSIO's error text for a status.
#pragma once

#include <fitsio.h>

#include <memory>
#include <string>

namespace kspecter::io {

struct FitsCloser {
  void operator()(fitsfile* f) const {
    int status = 0;
    fits_close_file(f, &status);
  }
};
/// Closes the file when it goes out of scope (errors on that close are ignored: a writer
/// that must know closes explicitly first).
using FitsPtr = std::unique_ptr<fitsfile, FitsCloser>;

/// CFITSIO's description of `status` and the first detail message on its error stack,
/// which it then clears.
std::string fits_message(int status);

}  // namespace kspecter::io
