// Whole gzip-compressed files (DESI's preproc-*.fits.gz), through zlib: read into memory, or
// written from memory. CFITSIO then reads and writes the FITS bytes in memory, so a .gz file
// is decompressed once, and its errors are reported as gzip errors, not as FITS ones.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kspecter::io {

/// True when the file starts with the gzip magic bytes (1f 8b).
bool is_gzip_file(std::string const& path);

/// The decompressed content of the gzip file at `path` (every member, as gzip -d gives it).
/// Throws InputError naming the file when the stream is corrupt or truncated.
std::vector<char> read_gzip(std::string const& path);

/// Writes `size` bytes at `data` gzip-compressed to the file open for writing on descriptor
/// `fd`, which it closes (zlib's default level; no name or time in the gzip header, so the
/// same bytes give the same file). Returns "" or zlib's reason for failing.
std::string write_gzip(int fd, void const* data, std::size_t size);

}  // namespace kspecter::io
