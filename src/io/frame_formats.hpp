// The per-format halves of frame_file.hpp.
#pragma once

#include <kspecter/io/frame_file.hpp>

namespace kspecter::io {

void write_frame_fits(std::string const& path, FrameData const& frame);
FrameData read_frame_fits(std::string const& path);
void write_frame_hdf5(std::string const& path, FrameData const& frame);
FrameData read_frame_hdf5(std::string const& path);

}  // namespace kspecter::io
