// Binary tables carried from an input file to an output one as they are (a preproc's
// FIBERMAP into the frame, desispec's way), held in memory between the read and the write.
#pragma once

#include <kspecter/io/fits_header.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kspecter::io {

/// A binary table HDU in memory: the bytes of a small FITS file of its own (an empty primary
/// HDU, then the table, copied from its source by CFITSIO), with what callers look at.
struct FitsTable {
  std::string file;     // where it was read from (for messages)
  std::string extname;  // its EXTNAME
  long long nrows = 0;
  FitsHeader header;        // its header records (keyword look-ups)
  std::vector<char> bytes;  // the FITS file holding it
};

/// Rows [first, first + count) of `table` (the header, and the heap of variable-length
/// columns, are kept as they are). Throws InputError naming the table's file and HDU when
/// the table has fewer than first + count rows.
FitsTable table_rows(FitsTable const& table, long long first, long long count);

/// The integer column `name` of `table`, nullopt when the table has no such column. Throws
/// InputError naming the file and HDU when it is not an integer column of one value per row.
std::optional<std::vector<long long>> integer_column(FitsTable const& table,
                                                     std::string const& name);

/// A table named `extname` with one 32-bit integer column `name` holding `values`.
FitsTable integer_table(std::string const& extname, std::string const& name,
                        std::vector<long long> const& values);

}  // namespace kspecter::io
