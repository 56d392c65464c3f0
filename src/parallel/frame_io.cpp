#include "frame_setup.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/core/huge_pages.hpp>
#include <kspecter/extract/frame_scores.hpp>
#include <kspecter/io/frame_file.hpp>
#include <kspecter/io/preproc_file.hpp>
#include <kspecter/io/psf_file.hpp>
#include <kspecter/io/threads.hpp>
#include <kspecter/parallel/frame_io.hpp>

#include <future>
#include <sstream>

namespace kspecter::parallel {

namespace {

// A frame's float32 arrays (its resolution alone 12.8 M values): a fresh vector faulted in on
// 4 KiB pages took three times as long as the rounding (perf/gpu_runs.md, session 7).
std::vector<float> to_float(std::vector<double> const& v) {
  std::vector<float> out;
  reserve_huge(out, v.size());
  out.assign(v.begin(), v.end());
  return out;
}

}  // namespace

FrameInput read_frame_input(JobFrame const& f, extract::ExtractOptions opt,
                            DesiOptions const& desi) {
  FrameInput in;
  io::PsfKeywords keywords;
  std::shared_ptr<io::PreprocImage> img;
  if (f.memory) {
    if (!f.memory->psf) throw ParameterError("extract: a frame in memory has no PSF");
    in.psf = f.memory->psf;
    in.image = f.memory->image;
    in.ivar = f.memory->ivar;
  } else {
    auto read_psf = [&] {
      return std::make_shared<psf::GaussHermitePsf const>(io::read_psf(f.psf, &keywords));
    };
    // The PSF is read beside the image (whose inflation, gzipped, is the long part) where the
    // FITS library takes two files at once; a PSF that fails is the error reported, as when
    // it was read first.
    std::future<std::shared_ptr<psf::GaussHermitePsf const>> psf_read;
    if (io::files_on_several_threads())
      psf_read = std::async(std::launch::async, read_psf);
    else
      in.psf = read_psf();
    try {
      img = std::make_shared<io::PreprocImage>(io::read_preproc(f.image, f.truth));
    } catch (...) {
      if (psf_read.valid()) psf_read.get();  // rethrows the PSF's error, if any
      throw;
    }
    if (psf_read.valid()) in.psf = psf_read.get();
    in.image = extract::ImageArray::host(img->image.data(), img->ny, img->nx);
    in.ivar = extract::ImageArray::host(img->ivar.data(), img->ny, img->nx);
  }
  psf::GaussHermitePsf const& psf = *in.psf;
  if (in.image.nx != psf.npix_x || in.image.ny != psf.npix_y) {
    std::ostringstream m;
    m << "image is " << in.image.nx << " x " << in.image.ny << " pixels but the PSF "
      << (f.psf.empty() ? "" : f.psf + " ") << "describes a " << psf.npix_x << " x " << psf.npix_y
      << " CCD";
    if (f.memory) throw ParameterError("extract: " + m.str());
    throw InputError(f.image, "IMAGE", m.str());
  }
  if (in.ivar.nx != in.image.nx || in.ivar.ny != in.image.ny) {
    std::ostringstream m;
    m << "extract: the inverse variance is " << in.ivar.nx << " x " << in.ivar.ny
      << " pixels, the image " << in.image.nx << " x " << in.image.ny;
    throw ParameterError(m.str());
  }
  in.setup = detail::setup_frame(f, desi, opt, psf, f.memory ? nullptr : &keywords, img.get());
  in.file_image = std::move(img);
  in.options = opt;
  return in;
}

io::FrameData frame_data(extract::FrameResult const& fr) {
  io::FrameData out;
  out.specmin = fr.specmin;
  out.nspec = fr.nspec;
  out.nwave = fr.nwave;
  out.ndiag = fr.ndiag;
  out.wavelength = fr.wavelength;
  // The resolution (12.8 M values of a full frame) is rounded on a thread of its own while
  // this one does the rest: the frame's write waits on both.
  auto resolution = std::async(std::launch::async, [&fr] { return to_float(fr.resolution); });
  out.flux = to_float(fr.flux);
  out.ivar = to_float(fr.ivar);
  out.mask.assign(fr.mask.begin(), fr.mask.end());
  out.chi2pix = to_float(fr.chi2pix);
  out.resolution = resolution.get();
  return out;
}

namespace {
// What outlier rejection did (extract/reject.hpp), when it ran: the FLUX header's REJPIX and
// REJPASS beside setup_frame's REJSIGMA and REJITER, and each spectrum's count as the SCORES
// column NREJECT (desispec reads SCORES' columns whatever their names).
void add_rejection(io::FrameData& out, extract::FrameResult const& fr) {
  if (fr.rejected.empty()) return;
  long long total = 0;
  for (int r : fr.rejected) total += r;
  out.header.set_integer("REJPIX", total, "pixels rejected against the model");
  out.header.set_integer("REJPASS", fr.reject_passes, "extractions again after rejection");
  out.scores.push_back({"NREJECT", "pixels rejected against the model on the trace",
                        std::vector<double>(fr.rejected.begin(), fr.rejected.end())});
}
}  // namespace

void write_frame_outputs(JobFrame const& f, extract::FrameResult const& fr,
                         FrameSetup const& setup) {
  if (!f.output.empty()) {
    // The grid asked for: a barycentric correction moves only the grid extracted on.
    std::vector<double> const& grid =
        setup.wavelength.size() == fr.wavelength.size() ? setup.wavelength : fr.wavelength;
    // SCORES, from the doubles, while the arrays are rounded to float32.
    using Scores = decltype(extract::frame_scores(grid, fr.flux, fr.ivar, fr.nspec));
    std::future<Scores> scores;
    if (setup.scores)
      scores = std::async(std::launch::async,
                          [&] { return extract::frame_scores(grid, fr.flux, fr.ivar, fr.nspec); });
    io::FrameData out = frame_data(fr);
    out.wavelength = grid;
    out.header = setup.header;
    out.fibermap = setup.fibermap;
    if (scores.valid())
      for (auto& c : scores.get()) out.scores.push_back({c.name, c.comment, std::move(c.values)});
    add_rejection(out, fr);
    io::write_frame(f.output, out);
  }
  if (!f.model.empty())
    io::write_model_image(f.model, fr.model_nx, fr.model_ny, to_float(fr.model), setup.header);
}

}  // namespace kspecter::parallel
