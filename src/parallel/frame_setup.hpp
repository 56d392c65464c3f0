// What desi_extract_spectra (desispec scripts/extract.py, main_gpu_specter) decides for one
// frame from its inputs before extracting it: the wavelength grid (the frame's, the job's, or
// the PSF's WAVEMIN .. WAVEMAX at 0.8 A; with the barycentric correction, divided by the
// exposure's factor for the extraction), the camera check, the FIBERMAP rows of the extracted
// fibers (the image's, -f FILE's, or fiber numbers alone) and the frame's header.
#pragma once

#include <kspecter/extract/options.hpp>
#include <kspecter/io/preproc_file.hpp>
#include <kspecter/io/psf_file.hpp>
#include <kspecter/parallel/frame_io.hpp>
#include <kspecter/psf/gauss_hermite_psf.hpp>

namespace kspecter::parallel::detail {

/// Sets `opt`'s grid, checks `opt` against the PSF and sets up the frame's outputs. `img` and
/// `psf_keywords` are those of a frame read from files (the image's FIBERMAP moves into the
/// setup), null for a frame in memory. Throws InputError naming the file for inputs that do not
/// go together (CAMERA, PSF wavelength range, FIBERMAP rows), ParameterError for options that
/// do not fit them.
FrameSetup setup_frame(JobFrame const& f, DesiOptions const& desi, extract::ExtractOptions& opt,
                       psf::GaussHermitePsf const& psf, io::PsfKeywords const* psf_keywords,
                       io::PreprocImage* img);

}  // namespace kspecter::parallel::detail
