#include "frame_setup.hpp"

#include <kspecter/astro/barycentric.hpp>
#include <kspecter/core/error.hpp>
#include <kspecter/extract/extractor.hpp>
#include <kspecter/extract/frame_scores.hpp>
#include <kspecter/io/desi_frame.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

namespace kspecter::parallel::detail {

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

// An image and a PSF of different cameras, where both say which (desispec would extract r0
// with b1's PSF without a word).
void check_camera(JobFrame const& f, io::PsfKeywords const& pk, io::PreprocImage const& img) {
  auto const cam = img.header.get_string("CAMERA", img.path, "IMAGE");
  if (!cam || !pk.camera || camera_name(*cam) == camera_name(*pk.camera)) return;
  throw InputError(
      img.path, "IMAGE",
      "CAMERA is '" + *cam + "' but the PSF " + f.psf + " is of camera '" + *pk.camera + "'");
}

// The grid: the frame's own, the job's, or (none given) the PSF table's WAVEMIN .. WAVEMAX at
// 0.8 A, as desispec's main_gpu_specter takes it.
void choose_grid(JobFrame const& f, DesiOptions const& desi, psf::GaussHermitePsf const& psf,
                 extract::ExtractOptions& opt) {
  if (!f.grid.empty()) {
    opt.wmin = f.grid[0];
    opt.wmax = f.grid[1];
    opt.dw = f.grid[2];
  } else if (desi.psf_grid) {
    extract::use_psf_grid(opt, psf);  // with desispec's margin past the PSF's range
  }
}

// desispec's barycentric_correction_multiplicative_factor of the exposure: the pointing and
// time from the image's header (or the FIBERMAP's), the factor from astro/barycentric.
double barycentric_factor(io::PreprocImage const& img, io::FitsTable const* fibermap) {
  io::Pointing const where = io::barycentric_pointing(img.header, img.path, fibermap);
  try {
    return astro::barycentric_factor(where.ra_deg, where.dec_deg, where.mjd, astro::kitt_peak());
  } catch (ParameterError const& e) {  // a pointing or time out of range: the header's fault
    throw InputError(
        where.file, where.hdu,
        "barycentric correction from " + where.ra_key + ", " + where.dec_key + ": " + e.what());
  }
}

void check_range(JobFrame const& f, psf::GaussHermitePsf const& psf,
                 extract::ExtractOptions const& opt) {
  try {
    opt.validate_range(psf.wavemin(), psf.wavemax());
  } catch (ParameterError const& e) {
    if (f.memory) throw;
    throw InputError(f.psf, "", e.what());  // name the PSF whose range it is
  }
}

// Divides the grid by the barycentric factor (desispec's corrected_wavelength): the spectra
// are extracted there and written on the grid asked for. A grid that fits the PSF may leave
// it by the shift (at most ~0.8 A at 7600 A): desispec extrapolates the PSF there, and so
// does kspecter.
void correct_grid(extract::ExtractOptions& opt, double factor, std::size_t nwave) {
  double const shift =
      std::max(std::abs(opt.wmin - opt.wmin / factor), std::abs(opt.wmax - opt.wmax / factor));
  opt.range_margin += shift;
  opt.wmin /= factor;
  opt.wmax /= factor;
  opt.dw /= factor;
  std::size_t const n = opt.wavelengths().size();
  if (n != nwave)  // numpy.arange rounding; desispec would fail building its Frame
    throw Error("extract: the barycentric grid has " + std::to_string(n) + " bins, the grid " +
                std::to_string(nwave));
}

}  // namespace

FrameSetup setup_frame(JobFrame const& f, DesiOptions const& desi, extract::ExtractOptions& opt,
                       psf::GaussHermitePsf const& psf, io::PsfKeywords const* psf_keywords,
                       io::PreprocImage* img) {
  if (img && psf_keywords) check_camera(f, *psf_keywords, *img);
  choose_grid(f, desi, psf, opt);
  opt.validate(psf.nfiber);
  check_range(f, psf, opt);
  FrameSetup s;
  s.wavelength = opt.wavelengths();
  s.scores = desi.scores;
  // The FIBERMAP desispec reads: -f FILE's, else the image's.
  std::optional<io::FitsTable> fibermap;
  if (!desi.fibermap.empty())
    fibermap = io::read_fibermap(desi.fibermap);
  else if (img && img->fibermap) {
    fibermap = std::move(img->fibermap);
    img->fibermap.reset();  // its rows go into the setup
  }
  double heliocor = 1.0;
  if (desi.barycentric) {
    if (!img)
      throw ParameterError("extract: the barycentric correction reads the image file's header");
    heliocor = barycentric_factor(*img, fibermap ? &*fibermap : nullptr);
  }
  if (s.scores && !extract::scores_defined(s.wavelength))
    throw ParameterError(
        "extract: no wavelength of the grid lies in the SCORES tophat of camera '" +
        std::string(1, extract::score_band(s.wavelength)) +
        "' (desispec would fail there); --no-scores extracts without SCORES");
  int const nspec = opt.resolved_nspec(psf.nfiber);
  s.fibermap = fibermap ? io::frame_fibermap(*fibermap, opt.specmin, nspec)
                        : io::fiber_numbers_fibermap(psf.fibermin + (long long)opt.specmin, nspec);

  io::FrameProvenance p;
  p.nspec = nspec;
  p.wavemin = opt.wmin;
  p.wavemax = opt.wmax;
  p.wavestep = opt.dw;
  p.heliocor = heliocor;
  p.psf = f.psf;
  p.image = f.image;
  if (psf_keywords) p.orig_psf = psf_keywords->in_psf;
  auto const fibers = io::integer_column(*s.fibermap, "FIBER");
  p.fibermin = fibers->empty() ? 0 : *std::min_element(fibers->begin(), fibers->end());
  s.header = io::desi_frame_header(img ? img->header : io::FitsHeader(), p);
  if (opt.reject_sigma > 0) {  // outlier rejection (extract/reject.hpp): what it was asked
    s.header.set_number("REJSIGMA", opt.reject_sigma, "outlier rejection threshold [sigma]");
    s.header.set_integer("REJITER", opt.reject_iter, "extractions again at most");
  }
  if (heliocor != 1.0) correct_grid(opt, heliocor, s.wavelength.size());
  return s;
}

}  // namespace kspecter::parallel::detail
