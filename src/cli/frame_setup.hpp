// What desi_extract_spectra (desispec scripts/extract.py, main_gpu_specter) decides for one
// frame from its inputs before extracting it: the wavelength grid (-w, or the PSF's WAVEMIN
// .. WAVEMAX at 0.8 A), the camera check, the FIBERMAP rows of the extracted fibers (the
// image's, -f FILE's, or fiber numbers alone) and the frame's header.
#pragma once

#include "frame_list.hpp"

#include <kspecter/extract/options.hpp>
#include <kspecter/io/fits_header.hpp>
#include <kspecter/io/fits_table.hpp>
#include <kspecter/io/preproc_file.hpp>
#include <kspecter/io/psf_file.hpp>
#include <kspecter/psf/gauss_hermite_psf.hpp>

#include <string>
#include <vector>

namespace kspecter::cli {

/// desi_extract_spectra's options that shape a frame's inputs and outputs.
struct DesiOptions {
  bool psf_grid = false;  // -w omitted: the PSF's WAVEMIN..WAVEMAX at 0.8 A (frames without
                          // a grid of their own)
  std::string fibermap;   // -f FILE: its FIBERMAP instead of the image's
  bool scores = true;     // a SCORES HDU (--no-scores: none)
};

/// One frame's plan.
struct FrameSetup {
  extract::ExtractOptions opt;     // what to extract (the job's, with this frame's grid)
  std::vector<double> wavelength;  // the grid written into the frame
  io::FitsHeader header;           // the frame's FLUX header (and the model's)
  io::FitsTable fibermap;          // one row per extracted spectrum
};

/// Plans frame `f` from its PSF (and the PSF file's keywords) and image, whose FIBERMAP it
/// takes. Throws InputError naming the file for inputs that do not go together (CCD size,
/// CAMERA, PSF wavelength range, FIBERMAP rows) and ParameterError for options that do not
/// fit them.
FrameSetup setup_frame(FrameSpec const& f, DesiOptions const& desi, extract::ExtractOptions opt,
                       psf::GaussHermitePsf const& psf, io::PsfKeywords const& psf_keywords,
                       io::PreprocImage& img);

}  // namespace kspecter::cli
