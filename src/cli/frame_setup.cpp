#include "frame_setup.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/extract/frame_scores.hpp>
#include <kspecter/io/desi_frame.hpp>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace kspecter::cli {

namespace {

// A camera's name compared: case and blanks aside, and the quotes specex leaves inside the
// value (the PSF of the r0 camera, exposure 67784, has CAMERA = "'r0      '").
std::string camera_name(std::string s) {
  auto trim = [&] {
    s.erase(0, s.find_first_not_of(' '));
    s.erase(s.find_last_not_of(' ') + 1);
  };
  trim();
  if (s.size() >= 2 && s.front() == '\'' && s.back() == '\'') s = s.substr(1, s.size() - 2);
  trim();
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void check_ccd(FrameSpec const& f, psf::GaussHermitePsf const& psf, io::PreprocImage const& img) {
  if (img.nx == psf.npix_x && img.ny == psf.npix_y) return;
  std::ostringstream m;
  m << "image is " << img.nx << " x " << img.ny << " pixels but the PSF " << f.psf
    << " describes a " << psf.npix_x << " x " << psf.npix_y << " CCD";
  throw InputError(f.image, "IMAGE", m.str());
}

// An image and a PSF of different cameras, where both say which (desispec would extract r0
// with b1's PSF without a word).
void check_camera(FrameSpec const& f, io::PsfKeywords const& pk, io::PreprocImage const& img) {
  auto const cam = img.header.get_string("CAMERA", img.path, "IMAGE");
  if (!cam || !pk.camera || camera_name(*cam) == camera_name(*pk.camera)) return;
  throw InputError(
      img.path, "IMAGE",
      "CAMERA is '" + *cam + "' but the PSF " + f.psf + " is of camera '" + *pk.camera + "'");
}

// The grid: the frame's own, the job's -w, or (-w omitted) the PSF table's WAVEMIN ..
// WAVEMAX at 0.8 A, as desispec's main_gpu_specter takes it.
void choose_grid(FrameSpec const& f, DesiOptions const& desi, psf::GaussHermitePsf const& psf,
                 extract::ExtractOptions& opt) {
  if (!f.grid.empty()) {
    opt.wmin = f.grid[0];
    opt.wmax = f.grid[1];
    opt.dw = f.grid[2];
  } else if (desi.psf_grid) {
    opt.wmin = psf.params.front().wavemin;
    opt.wmax = psf.params.front().wavemax;
    opt.dw = 0.8;
  }
}

io::FitsTable frame_fibermap(DesiOptions const& desi, psf::GaussHermitePsf const& psf,
                             io::PreprocImage& img, int specmin, int nspec) {
  if (!desi.fibermap.empty())
    return io::frame_fibermap(io::read_fibermap(desi.fibermap), specmin, nspec);
  if (img.fibermap) return io::frame_fibermap(*img.fibermap, specmin, nspec);
  return io::fiber_numbers_fibermap(static_cast<long long>(psf.fibermin) + specmin, nspec);
}

}  // namespace

FrameSetup setup_frame(FrameSpec const& f, DesiOptions const& desi, extract::ExtractOptions opt,
                       psf::GaussHermitePsf const& psf, io::PsfKeywords const& psf_keywords,
                       io::PreprocImage& img) {
  check_ccd(f, psf, img);
  check_camera(f, psf_keywords, img);
  choose_grid(f, desi, psf, opt);
  opt.validate(psf.nfiber);
  bool const from_psf = f.grid.empty() && desi.psf_grid;
  try {
    // The PSF's own range at 0.8 A may end up to half a step beyond WAVEMAX (numpy.arange).
    opt.validate_range(psf.wavemin(), psf.wavemax() + (from_psf ? 0.5 * opt.dw : 0.0));
  } catch (ParameterError const& e) {
    throw InputError(f.psf, "", e.what());  // name the PSF whose range it is
  }
  FrameSetup s;
  s.wavelength = opt.wavelengths();
  if (desi.scores && !extract::scores_defined(s.wavelength))
    throw ParameterError(
        "extract: no wavelength of the grid lies in the SCORES tophat of camera '" +
        std::string(1, extract::score_band(s.wavelength)) +
        "' (desispec would fail there); --no-scores extracts without SCORES");
  int const nspec = opt.resolved_nspec(psf.nfiber);
  s.fibermap = frame_fibermap(desi, psf, img, opt.specmin, nspec);
  img.fibermap.reset();  // its rows are in the frame's now

  io::FrameProvenance p;
  p.nspec = nspec;
  p.wavemin = opt.wmin;
  p.wavemax = opt.wmax;
  p.wavestep = opt.dw;
  p.psf = f.psf;
  p.image = f.image;
  p.orig_psf = psf_keywords.in_psf;
  auto const fibers = io::integer_column(s.fibermap, "FIBER");
  p.fibermin = fibers->empty() ? 0 : *std::min_element(fibers->begin(), fibers->end());
  s.header = io::desi_frame_header(img.header, p);
  s.opt = opt;
  return s;
}

}  // namespace kspecter::cli
