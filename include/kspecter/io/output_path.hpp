// Checks of output paths made before anything is written, and the signal handling of the
// outputs' temporaries (src/io/atomic_output.hpp describes it).
#pragma once

#include <string>

namespace kspecter::io {

/// Throws InputError naming `path` when no output can be written there: an empty name, a
/// name ending in a folder, a file name over 255 bytes, a folder that does not exist, or
/// something other than a regular file at the path (a device such as /dev/null, a FIFO, a
/// folder), which the rename would replace.
void check_output_path(std::string const& path);

/// True when `a` and `b` name the same file (the same spelling, or once links and "." and
/// ".." are resolved, or the same inode).
bool same_output_file(std::string const& a, std::string const& b);

/// True once SIGXFSZ has arrived: a write went past the file size limit and failed (EFBIG).
bool file_size_limit_reached();

/// Installs the signal handling described above (done by the first AtomicOutput too); a
/// program calls it first thing, so that SIGPIPE does not kill it before its first output.
void install_output_signal_handlers();

}  // namespace kspecter::io
