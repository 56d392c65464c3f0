// The file and memory steps of one frame of an extraction job (extract_job.hpp): where its
// inputs come from, reading and checking them, and writing what it produced. The job runs these
// on its I/O thread; each is a plain function so that a front end or a test can call it alone.
#pragma once

#include <kspecter/extract/backend.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/extract/options.hpp>
#include <kspecter/io/frame_file.hpp>
#include <kspecter/io/preproc_file.hpp>
#include <kspecter/psf/gauss_hermite_psf.hpp>

#include <memory>
#include <string>
#include <vector>

namespace kspecter::parallel {

/// A frame whose inputs the caller holds in memory. Every rank of the frame's group must hold
/// the same inputs (broadcast them first where only one rank has them). The arrays are
/// borrowed: they must stay valid and unchanged until the job returns.
struct MemoryFrame {
  std::shared_ptr<psf::GaussHermitePsf const> psf;
  extract::ImageArray image, ivar;  // [ny][nx], ny x nx = the PSF's CCD
};

/// One frame of a job: its inputs (files or memory) and its outputs (files and/or memory).
struct JobFrame {
  std::string image, psf;               // preproc image and PSF files, read on the I/O thread...
  std::shared_ptr<MemoryFrame> memory;  // ...or inputs in memory (used when set)
  std::vector<double> grid;             // {WMIN, WMAX, DW} for this frame; empty: the job's
  std::string output;                   // frame file (FITS, or HDF5 for .h5); empty: none
  std::string model;                    // model image file; empty: none
  bool keep_result = false;             // return the gathered FrameResult (JobOutcome::results)
  std::string origin;                   // where it was given ("list.txt:3"), for messages
};

/// What a frame needs before the device can start.
struct FrameInput {
  std::shared_ptr<psf::GaussHermitePsf const> psf;
  std::shared_ptr<io::PreprocImage const> file_image;  // the pixels read from a file, if any
  extract::ImageArray image, ivar;                     // what the extraction reads
  bool has_fibermap = false;                           // the image file has a FIBERMAP HDU
  extract::ExtractOptions options;                     // the job's, with this frame's grid
};

/// Reads a frame's files (or takes its memory inputs) and checks them against each other and
/// the options. Throws InputError naming the file for a file that cannot be used, a
/// ParameterError for options that do not fit the PSF.
FrameInput read_frame_input(JobFrame const& frame, extract::ExtractOptions options);

/// Writes the outputs a frame names (frame file, model image), with the header cards IN_PSF and
/// IN_IMG and the image's FIBERMAP when it has one.
void write_frame_outputs(JobFrame const& frame, extract::FrameResult const& result,
                         bool has_fibermap);

/// The arrays of a frame file for an extracted frame (float32 where the file has float32);
/// no header cards, no FIBERMAP: the caller adds what it knows of the inputs.
io::FrameData frame_data(extract::FrameResult const& result);

}  // namespace kspecter::parallel
