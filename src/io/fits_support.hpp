// What every CFITSIO-based reader and writer in io/ shares: an owning file handle and
// CFITSIO's error text for a status.
#pragma once

#include <fitsio.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace kspecter::io {

class AtomicOutput;

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

/// Creates `out`'s temporary as a new FITS file (fits_create_diskfile: the name taken
/// literally, no extended-filename syntax). Null with `status` set when CFITSIO cannot.
FitsPtr create_fits(AtomicOutput& out, int& status);

/// The value text of keyword `key` in the current HDU (a string keeps its quotes), nullopt
/// when the keyword is absent.
std::optional<std::string> read_key_text(fitsfile* f, char const* key);

/// `text` (a header value) as an integer, nullopt when it is not one. Integer keywords are
/// parsed with this, not by CFITSIO: CFITSIO 4.2's own conversion (ffc2j, behind every
/// fits_read_key of an integer type) overruns its message buffer on a long value that is not
/// an integer.
/// `s` in upper case without trailing blanks: a keyword or EXTNAME as FITS compares them.
std::string upper_trimmed(std::string s);

std::optional<long long> parse_integer(std::string_view text);

/// `text` (a header value) as a finite real number (a D exponent allowed, as FITS does),
/// nullopt when it is not one (a quoted string is not).
std::optional<double> parse_real(std::string_view text);

/// Integer keyword `key` of the current HDU through parse_integer: nullopt when it is absent
/// or not an integer.
std::optional<long long> read_integer_key(fitsfile* f, char const* key);

}  // namespace kspecter::io
