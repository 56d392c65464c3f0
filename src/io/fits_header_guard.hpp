// A look at the raw header text of a FITS file before CFITSIO parses it: fuzzing the readers
// (tests/fuzz) found header cards on which CFITSIO 4.2 itself overruns a buffer, so they
// must be refused before CFITSIO sees them.
#pragma once

#include <istream>
#include <string>

namespace kspecter::io {

/// Walks the headers of the FITS file at `path` as text, HDU by HDU (skipping each data unit
/// by the size its header gives), and throws InputError naming the HDU on a card CFITSIO
/// cannot parse safely:
///   - a value without quotes of 70 characters or more (no FITS value is written so: CFITSIO
///     copies a TTYPEn value into a 70-byte field with no room for the terminator);
///   - a ZTILEn that is not an integer of 1 or more (CFITSIO divides by it when it opens a
///     compressed image).
/// Whatever it cannot follow (not FITS, truncated, unreadable sizes) ends the walk quietly:
/// CFITSIO reports those, and the readers put them in their own words.
void guard_fits_headers(std::string const& path);

/// The same walk over the bytes of `in` (a file decompressed in memory); `name` is the file
/// the errors name.
void guard_fits_headers(std::string const& name, std::istream& in);

}  // namespace kspecter::io
