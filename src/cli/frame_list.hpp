// The frames of one `kspecter extract` job: one from -i/-p/-o, or many from a --batch list.
#pragma once

#include <kspecter/parallel/frame_io.hpp>

#include <string>
#include <vector>

namespace kspecter::cli {

/// Reads a batch list into the job's frames (image, psf, output, grid and origin set): one
/// frame per line, `image psf output [WMIN,WMAX,DW]`, separated by
/// blanks; blank lines and lines starting with '#' are skipped. Relative paths are taken as
/// written (relative to the working directory, like any other argument). Throws
/// ParameterError naming the file and line for a malformed line, an unreadable file, an empty
/// list, a grid that is not three finite numbers, or two frames with the same output.
std::vector<parallel::JobFrame> read_frame_list(std::string const& path);

/// Throws ParameterError when two frames write the same output (they would race).
void check_distinct_outputs(std::vector<parallel::JobFrame> const& frames);

}  // namespace kspecter::cli
