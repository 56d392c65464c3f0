// Decompression ahead of time for gzip-compressed inputs (DESI's preproc-*.fits.gz).
//
// A batch job reads its frames on one I/O thread (CFITSIO is not reliably thread-safe), and
// inflating a full-frame preproc takes several times as long as reading a plain one. zlib is
// safe on separate streams, so the inflation alone can run ahead on threads of its own; the
// I/O thread then parses bytes already in memory. docs/architecture.md (the path of one `kspecter
// extract`, step 3).
#pragma once

#include <string>

namespace kspecter::io {

/// Starts inflating the gzip file at `path` on a thread of its own, so that the next open of
/// that file by the readers of this library takes the bytes instead of inflating them again.
/// Does nothing when `path` is not a gzip file or is already pending. Errors surface at that
/// open, with the same message an inflation there would give. Thread-safe.
void prefetch_gzip(std::string const& path);

/// Waits for and drops every prefetch not taken (a job that stops early). Thread-safe.
void drop_gzip_prefetches();

}  // namespace kspecter::io
