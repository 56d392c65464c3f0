// The file and memory steps of one frame of an extraction job (extract_job.hpp): where its
// inputs come from, reading and checking them, and writing what it produced. The job runs these
// on its I/O thread; each is a plain function so that a front end or a test can call it alone.
#pragma once

#include <kspecter/extract/backend.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/extract/options.hpp>
#include <kspecter/io/fits_header.hpp>
#include <kspecter/io/fits_table.hpp>
#include <kspecter/io/frame_file.hpp>
#include <kspecter/io/preproc_file.hpp>
#include <kspecter/psf/gauss_hermite_psf.hpp>

#include <memory>
#include <optional>
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
  bool truth = false;                   // read the image's simulated truth with it (file_image)
  std::string origin;                   // where it was given ("list.txt:3"), for messages
};

/// desi_extract_spectra's options that shape what a frame reads and writes besides pixels
/// (desispec scripts/extract.py, main_gpu_specter).
struct DesiOptions {
  bool psf_grid = false;     // no grid given: the PSF's WAVEMIN..WAVEMAX at 0.8 A (desispec's -w
                             // default) for a frame without a grid of its own
  std::string fibermap;      // -f FILE: the FIBERMAP of this file, not the image's
  bool scores = true;        // a SCORES HDU (--no-scores: none)
  bool barycentric = false;  // --barycentric-correction: extract on the grid divided by
                             // desispec's barycentric factor, write the grid asked for and
                             // HELIOCOR
};

/// What the frame file says besides the spectra, set up when its inputs are read.
struct FrameSetup {
  std::vector<double> wavelength;         // the grid written into the frame
  io::FitsHeader header;                  // the FLUX header (and the model image's)
  std::optional<io::FitsTable> fibermap;  // one row per extracted spectrum
  bool scores = true;                     // write a SCORES HDU
};

/// What a frame needs before the device can start.
struct FrameInput {
  std::shared_ptr<psf::GaussHermitePsf const> psf;
  std::shared_ptr<io::PreprocImage const> file_image;  // the pixels read from a file, if any
  extract::ImageArray image, ivar;                     // what the extraction reads
  extract::ExtractOptions options;                     // the job's, with this frame's grid
  FrameSetup setup;                                    // what its outputs say of it
  double read_seconds = 0;  // the read's own time, on the thread that read it
};

/// Reads a frame's files (or takes its memory inputs) and checks them against each other and
/// the options: CCD size, CAMERA of image and PSF, the grid within the PSF's range, the
/// FIBERMAP rows of the spectra. Throws InputError naming the file for a file that cannot be
/// used, a ParameterError for options that do not fit the PSF.
FrameInput read_frame_input(JobFrame const& frame, extract::ExtractOptions options,
                            DesiOptions const& desi = {});

/// Writes the outputs a frame names (frame file, model image) as desispec's
/// desi_extract_spectra writes them: `setup`'s header, FIBERMAP, grid and SCORES.
void write_frame_outputs(JobFrame const& frame, extract::FrameResult const& result,
                         FrameSetup const& setup);

/// The arrays of a frame file for an extracted frame (float32 where the file has float32);
/// no header cards, no FIBERMAP: the caller adds what it knows of the inputs.
io::FrameData frame_data(extract::FrameResult const& result);

}  // namespace kspecter::parallel
