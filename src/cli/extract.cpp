// `kspecter extract`: a preproc image and a GaussHermite PSF in, a desispec frame out; the
// flags of gpu_specter's spex. Under MPI each rank extracts a contiguous run of bundles and
// rank 0 writes the gathered frame.
#include "args.hpp"
#include "commands.hpp"
#include "session.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/extract/truth_pulls.hpp>
#include <kspecter/io/frame_file.hpp>
#include <kspecter/io/preproc_file.hpp>
#include <kspecter/io/psf_file.hpp>
#include <kspecter/parallel/bundles.hpp>
#include <kspecter/parallel/gather.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

namespace kspecter::cli {

namespace {

template <class Space>
extract::FrameResult extract_on(psf::GaussHermitePsf const& psf, io::PreprocImage const& img,
                                extract::ExtractOptions const& opt, StageTimes& times) {
  using Mem = typename Space::memory_space;
  Space space;
  Kokkos::View<double**, Kokkos::LayoutRight, Mem> image("kspecter::image", img.ny, img.nx);
  Kokkos::View<double**, Kokkos::LayoutRight, Mem> ivar("kspecter::ivar", img.ny, img.nx);
  {
    StageTimer<Space> t(space, "kspecter::extract::upload", &times);
    auto hi = Kokkos::create_mirror_view(image);
    auto hv = Kokkos::create_mirror_view(ivar);
    for (int y = 0; y < img.ny; ++y)
      for (int x = 0; x < img.nx; ++x) {
        std::size_t const p = std::size_t(y) * img.nx + x;
        hi(y, x) = img.image[p];
        hv(y, x) = img.ivar[p];
      }
    Kokkos::deep_copy(space, image, hi);
    Kokkos::deep_copy(space, ivar, hv);
  }
  return extract::extract_frame(space, psf, image, ivar, opt, &times);
}

extract::FrameResult extract_with_backend(std::string const& backend,
                                          psf::GaussHermitePsf const& psf,
                                          io::PreprocImage const& img,
                                          extract::ExtractOptions const& opt, StageTimes& times) {
  if (backend == "auto") return extract_on<Kokkos::DefaultExecutionSpace>(psf, img, opt, times);
#ifdef KOKKOS_ENABLE_SERIAL
  if (backend == "serial") return extract_on<Kokkos::Serial>(psf, img, opt, times);
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  if (backend == "openmp") return extract_on<Kokkos::OpenMP>(psf, img, opt, times);
#endif
#ifdef KOKKOS_ENABLE_CUDA
  if (backend == "cuda") return extract_on<Kokkos::Cuda>(psf, img, opt, times);
#endif
  throw ParameterError("extract: backend '" + backend +
                       "' is not enabled in this build (see `kspecter info`)");
}

// Concatenates the ranks' spectra on rank 0 (contiguous runs in rank order).
void gather_frame(extract::FrameResult& fr, int total_nspec, int specmin) {
  auto cat = [](std::vector<double>& v) { v = parallel::gather_rows(v); };
  cat(fr.flux);
  cat(fr.ivar);
  cat(fr.resolution);
  cat(fr.chi2pix);
  cat(fr.pixmask_fraction);
  cat(fr.deconvolved_flux);
  std::vector<unsigned> m(fr.mask.begin(), fr.mask.end());
  m = parallel::gather_rows(m);
  fr.mask.assign(m.begin(), m.end());
  if (!fr.model.empty()) fr.model = parallel::sum_to_root(fr.model);
  fr.nspec = total_nspec;
  fr.specmin = specmin;
}

std::vector<float> to_float(std::vector<double> const& v) {
  return std::vector<float>(v.begin(), v.end());
}

}  // namespace

int run_extract(int argc, char** argv) {
  ArgParser args("extract",
                 "Extracts spectra from a preprocessed CCD image with a GaussHermite PSF by "
                 "spectroperfectionism (the options of gpu_specter's spex) and writes a "
                 "desispec-compatible frame: FITS, or HDF5 when the output ends in .h5.");
  args.option("input", 'i', "FILE", "preproc image (IMAGE, IVAR, MASK, optional FIBERMAP)", "", true);
  args.option("psf", 'p', "FILE", "GaussHermite PSF", "", true);
  args.option("output", 'o', "FILE", "output frame (.fits or .h5)", "", true);
  args.option("model", 'm', "FILE", "also write the 2-D pixel model image here");
  args.option("wavelength", 'w', "WMIN,WMAX,DW", "wavelength grid", "5760.0,7620.0,0.8");
  args.option("specmin", 's', "N", "first spectrum to extract", "0");
  args.option("nspec", 'n', "N", "number of spectra to extract (default: all from specmin)");
  args.option("regularize", 'r', "X", "regularization amount", "0");
  args.option("psferr", 0, "X", "fractional PSF model error for chi2pix (default: the PSF's)");
  args.option("bundlesize", 0, "N", "spectra per bundle", "25");
  args.option("nsubbundles", 0, "N", "sub-bundles per bundle", "5");
  args.option("nwavestep", 0, "N", "core wavelength bins per patch", "50");
  args.option("wavepad", 0, "N", "wavelength bins padded on both sides of a patch", "10");
  args.option("wavepad-frac", 0, "X", "extra wavelength padding, fraction of wavepad", "0.2");
  args.option("pixpad-frac", 0, "X", "fraction of the padding's pixel rows kept", "0.8");
  args.option("backend", 0, "NAME", "auto, serial, openmp or cuda", "auto");
  args.option("memory-budget", 0, "GIB", "device memory for batch buffers, GiB", "4");
  args.flag("no-truth", 0, "do not compare with truth spectra found in the input");
  add_common_options(args);
  if (!args.parse(argc, argv)) return 0;

  extract::ExtractOptions opt;
  auto const w = args.get_doubles("wavelength", 3);
  opt.wmin = w[0];
  opt.wmax = w[1];
  opt.dw = w[2];
  opt.specmin = args.get_int("specmin");
  opt.nspec = args.has("nspec") ? args.get_int("nspec") : -1;
  opt.regularize = args.get_double("regularize");
  if (args.has("psferr")) opt.psferr = args.get_double("psferr");
  opt.bundlesize = args.get_int("bundlesize");
  opt.nsubbundles = args.get_int("nsubbundles");
  opt.nwavestep = args.get_int("nwavestep");
  opt.wavepad = args.get_int("wavepad");
  opt.wavepad_frac = args.get_double("wavepad-frac");
  opt.pixpad_frac = args.get_double("pixpad-frac");
  double const budget_gib = args.get_double("memory-budget");
  if (!(budget_gib > 0)) throw ParameterError("extract: --memory-budget must be positive");
  opt.memory_budget = static_cast<std::size_t>(budget_gib * (1ull << 30));
  opt.model = args.has("model");
  std::string const input = args.get("input"), psf_path = args.get("psf"),
                    output = args.get("output");

  Session s(argc, argv, args);
  auto& log = s.log;
  int const rank = s.env->rank(), size = s.env->size();

  // Every rank reads the inputs (parallel reads of the same files); a failure anywhere ends
  // every rank with one message from the rank that saw it.
  psf::GaussHermitePsf psf;
  io::PreprocImage img;
  std::string error;
  try {
    psf = io::read_psf(psf_path);
    img = io::read_preproc(input);
    if (img.nx != psf.npix_x || img.ny != psf.npix_y) {
      std::ostringstream m;
      m << input << ": image is " << img.nx << " x " << img.ny << " pixels but the PSF "
        << psf_path << " describes a " << psf.npix_x << " x " << psf.npix_y << " CCD";
      throw InputError(input, "IMAGE", m.str().substr(input.size() + 2));
    }
    opt.validate(psf.nfiber);
  } catch (std::exception const& e) {
    error = e.what();
  }
  if (parallel::any_rank(!error.empty())) {
    if (!error.empty()) std::fprintf(stderr, "kspecter extract: error: %s\n", error.c_str());
    if (size > 1) parallel::Environment::abort(1);
    throw Error(error);
  }
  log.info("read " + input + " (" + std::to_string(img.nx) + " x " + std::to_string(img.ny) +
           ") and " + psf_path + " (" + std::to_string(psf.nfiber) + " fibers)");

  int const nspec = opt.resolved_nspec(psf.nfiber);
  auto const ranges = parallel::assign_bundles(opt.specmin, nspec, opt.bundlesize, size);
  extract::ExtractOptions local = opt;
  local.specmin = ranges[rank].specmin;
  local.nspec = ranges[rank].nspec;

  StageTimes times;
  extract::FrameResult fr;
  double const t0 = log.elapsed();
  try {
    if (local.nspec > 0) {
      fr = extract_with_backend(args.get("backend"), psf, img, local, times);
    } else {
      fr.wavelength = opt.wavelengths();
      fr.nwave = static_cast<int>(fr.wavelength.size());
      fr.ndiag = psf.hsizey;
      if (opt.model) {
        fr.model_nx = img.nx;
        fr.model_ny = img.ny;
        fr.model.assign(std::size_t(img.nx) * img.ny, 0.0);
      }
    }
  } catch (std::exception const& e) {
    error = e.what();
  }
  if (parallel::any_rank(!error.empty())) {
    if (!error.empty()) std::fprintf(stderr, "kspecter extract: error: %s\n", error.c_str());
    if (size > 1) parallel::Environment::abort(1);
    throw Error(error);
  }
  double const t_extract = parallel::max_over_ranks(log.elapsed() - t0);
  if (size > 1) gather_frame(fr, nspec, opt.specmin);

  if (rank == 0) {
    io::FrameData out;
    out.specmin = fr.specmin;
    out.nspec = fr.nspec;
    out.nwave = fr.nwave;
    out.ndiag = fr.ndiag;
    out.wavelength = fr.wavelength;
    out.flux = to_float(fr.flux);
    out.ivar = to_float(fr.ivar);
    out.mask.assign(fr.mask.begin(), fr.mask.end());
    out.resolution = to_float(fr.resolution);
    out.chi2pix = to_float(fr.chi2pix);
    out.header = {{"IN_PSF", psf_path}, {"IN_IMG", input}};
    if (img.has_fibermap) out.fibermap_from = input;
    io::write_frame(output, out);
    log.info("wrote " + output);
    if (opt.model) {
      io::write_model_image(args.get("model"), fr.model_nx, fr.model_ny, to_float(fr.model),
                            {{"IN_PSF", psf_path}, {"IN_IMG", input}});
      log.info("wrote " + args.get("model"));
    }
    for (auto const& e : times.entries())
      log.debug("  " + e.stage + ": " + std::to_string(e.seconds) + " s");

    std::printf("extracted %d spectra x %d wavelengths in %.3f s on %d rank%s (%s)\n", fr.nspec,
                fr.nwave, t_extract, size, size == 1 ? "" : "s",
                args.get("backend") == "auto" ? Kokkos::DefaultExecutionSpace::name()
                                              : args.get("backend").c_str());
    if (!args.is_set("no-truth")) {
      if (auto truth = io::read_truth(input)) {
        auto const p = extract::truth_pulls(fr, truth->wavelength, truth->flux, truth->specmin,
                                            truth->nspec);
        std::printf("pull against truth (flux - R truth) sqrt(ivar) over %lld bins: median %+.4f, "
                    "robust std %.4f, mean %+.4f, std %.4f\n",
                    p.n, p.median, p.robust_std, p.mean, p.std);
      }
    }
  }
  return 0;
}

}  // namespace kspecter::cli
