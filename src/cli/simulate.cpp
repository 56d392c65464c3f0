// `kspecter simulate`: a preprocessed CCD frame made from spectra and a PSF, with the truth
// spectra written alongside (see sim/simulate.hpp for the model and its reproducibility).
#include "args.hpp"
#include "commands.hpp"
#include "session.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/core/profiling.hpp>
#include <kspecter/io/preproc_file.hpp>
#include <kspecter/io/psf_file.hpp>
#include <kspecter/psf/synthetic_psf.hpp>
#include <kspecter/sim/simulate.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace kspecter::cli {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string fmt(char const* f, double x) {
  char b[64];
  std::snprintf(b, sizeof b, f, x);
  return b;
}

// Fibers [specmin, specmin + nspec) of a truth file, checked against what it holds.
sim::Spectra spectra_from_truth(std::string const& path, ArgParser const& args) {
  auto const t = io::read_truth(path);
  if (!t) throw InputError(path, "TRUTH_FLUX", "HDU not found: not a spectra file for --spectra");
  int const specmin = args.is_set("specmin") ? args.get_int("specmin") : t->specmin;
  int const nspec = args.is_set("nspec") ? args.get_int("nspec") : t->specmin + t->nspec - specmin;
  if (specmin < t->specmin || nspec <= 0 || specmin + nspec > t->specmin + t->nspec)
    throw ParameterError("simulate: fibers [" + std::to_string(specmin) + ", " +
                         std::to_string(specmin + nspec) + ") are not all in " + path +
                         ", which holds [" + std::to_string(t->specmin) + ", " +
                         std::to_string(t->specmin + t->nspec) + ")");
  sim::Spectra s;
  s.specmin = specmin;
  s.nspec = nspec;
  s.wavelength = t->wavelength;
  std::size_t const nw = t->wavelength.size(), first = std::size_t(specmin - t->specmin);
  s.flux.assign(t->flux.begin() + first * nw, t->flux.begin() + (first + nspec) * nw);
  if (!t->objtype.empty())
    s.objtype.assign(t->objtype.begin() + first, t->objtype.begin() + first + nspec);
  return s;
}

}  // namespace

int run_simulate(int argc, char** argv) {
  ArgParser args(
      "simulate",
      "Simulates a preprocessed CCD frame: spectra (by default a night sky shared by all "
      "fibers, ~10% sky fibers, objects of varied brightness with emission lines) projected "
      "through the PSF's spots, with Poisson and read noise from a seeded counter-based "
      "generator. Writes the preproc file desispec writes (IMAGE with the header of a science "
      "exposure, IVAR, MASK tile-compressed, READNOISE, FIBERMAP; gzipped when the name ends "
      "in .gz) and the truth spectra (TRUTH_FLUX in electron/Angstrom, TRUTH_WAVE). The same "
      "seed gives a bitwise-identical file on every backend and thread count.");
  args.option("psf", 'p', "FILE", "GaussHermite PSF file, or 'synthetic' for the built-in one", "",
              true);
  args.option("output", 'o', "FILE", "the preproc file to write (.fits or .fits.gz)", "", true);
  args.option("camera", 0, "NAME", "CAMERA of the exposure (b0..z9)", "r0");
  args.option("expid", 0, "N", "EXPID of the exposure", "1");
  args.option("wavelength", 'w', "WMIN,WMAX,DW", "wavelength grid, Angstrom (DESI r camera)",
              "5760,7620,0.8");
  args.option("specmin", 's', "N", "first fiber (row of the PSF)", "0");
  args.option("nspec", 'n', "N", "number of fibers (default: the rest of the PSF)");
  args.option("seed", 0, "N", "seed of the spectra, noise and defects", "0");
  args.flag("noiseless", 0, "write the expected image exactly (no noise)");
  args.option("readnoise", 0, "E", "read noise, electrons rms", "3");
  args.option("spectra", 0, "FILE",
              "input spectra: a FITS file with TRUTH_FLUX [nspec][nwave] (electron/Angstrom, "
              "key SPECMIN) and TRUTH_WAVE, e.g. a file simulate wrote; replaces -w");
  args.flag("defects", 0, "add bad columns and cosmic rays (masked, ivar 0)");
  args.flag("unmasked-cosmics", 0,
            "with --defects: leave the cosmic rays out of MASK and IVAR (hits that preproc "
            "missed, for --reject-sigma)");
  add_common_options(args);
  if (!args.parse(argc, argv)) return 0;

  // Everything that can be checked before Kokkos comes up.
  long long const seed = args.get_int64("seed");
  if (seed < 0) throw ParameterError("simulate: --seed must be >= 0");
  if (args.get_int64("expid") < 0) throw ParameterError("simulate: --expid must be >= 0");
  double const readnoise = args.get_double("readnoise");
  if (!(readnoise >= 0) || readnoise > 1e6)
    throw ParameterError("simulate: --readnoise must be between 0 and 1e6");
  if (args.is_set("spectra") && args.is_set("wavelength"))
    throw ParameterError("simulate: --spectra brings its own wavelength grid; drop -w");
  std::vector<double> grid;
  if (!args.is_set("spectra")) {
    auto const w = args.get_doubles("wavelength", 3);
    grid = sim::wavelength_grid(w[0], w[1], w[2]);
  }
  int const specmin = args.get_int("specmin");
  if (specmin < 0) throw ParameterError("simulate: --specmin must be >= 0");
  if (args.is_set("nspec") && args.get_int("nspec") <= 0)
    throw ParameterError("simulate: --nspec must be > 0");
  std::string const psf_arg = args.get("psf"), out = args.get("output");

  Session s(argc, argv, args, /*use_mpi=*/false);
  if (s.env->rank() != 0) return 0;  // one image: rank 0 makes it
  auto const t_start = std::chrono::steady_clock::now();
  StageTimes times;

  auto t0 = std::chrono::steady_clock::now();
  psf::GaussHermitePsf const psf =
      psf_arg == "synthetic" ? psf::make_synthetic_psf() : io::read_psf(psf_arg);
  times.add("read psf", seconds_since(t0));

  t0 = std::chrono::steady_clock::now();
  sim::Spectra spectra;
  if (args.is_set("spectra")) {
    spectra = spectra_from_truth(args.get("spectra"), args);
  } else {
    if (specmin >= psf.nfiber)
      throw ParameterError("simulate: --specmin " + std::to_string(specmin) +
                           " is beyond the PSF's " + std::to_string(psf.nfiber) + " fibers");
    int const nspec = args.is_set("nspec") ? args.get_int("nspec") : psf.nfiber - specmin;
    spectra = sim::make_spectra(static_cast<std::uint64_t>(seed), specmin, nspec, grid);
  }
  times.add("spectra", seconds_since(t0));
  s.log.info("simulate: " + std::to_string(spectra.nspec) + " fibers from " +
             std::to_string(spectra.specmin) + ", " + std::to_string(spectra.nwave()) +
             " wavelengths " + fmt("%.2f", spectra.wavelength.front()) + "-" +
             fmt("%.2f", spectra.wavelength.back()) + " A, CCD " + std::to_string(psf.npix_y) +
             " x " + std::to_string(psf.npix_x) + ", on " +
             Kokkos::DefaultHostExecutionSpace::name() + " (" +
             std::to_string(Kokkos::DefaultHostExecutionSpace().concurrency()) + " threads)");

  sim::SimulateOptions opt;
  opt.seed = static_cast<std::uint64_t>(seed);
  opt.readnoise = readnoise;
  opt.noiseless = args.is_set("noiseless");
  opt.defects = args.is_set("defects");
  if (args.is_set("unmasked-cosmics") && !opt.defects)
    throw ParameterError("simulate: --unmasked-cosmics goes with --defects");
  opt.defect.mask_cosmics = !args.is_set("unmasked-cosmics");
  sim::SimulatedImage sim = sim::simulate_on_host(psf, spectra, opt, &times);
  if (opt.defects)
    s.log.info("simulate: defects: " + std::to_string(sim.defects.bad_columns) + " bad columns (" +
               std::to_string(sim.defects.bad_pixels) + " px), " +
               std::to_string(sim.defects.cosmic_rays) + " cosmic rays (" +
               std::to_string(sim.defects.cosmic_pixels) + " px)");

  t0 = std::chrono::steady_clock::now();
  io::PreprocImage img;
  img.nx = sim.nx;
  img.ny = sim.ny;
  img.image = std::move(sim.image);
  img.ivar = std::move(sim.ivar);
  img.mask = std::move(sim.mask);
  io::TruthSpectra truth;
  truth.specmin = spectra.specmin;
  truth.nspec = spectra.nspec;
  truth.wavelength = spectra.wavelength;
  truth.flux = spectra.flux;
  truth.objtype = spectra.objtype;
  truth.fibermin = psf.fibermin;
  // A science exposure as the pipeline's preproc headers describe it (the pointing and time
  // are made up, for --barycentric-correction).
  img.header.set_string("CAMERA", args.get("camera"), "Spectrograph Camera");
  img.header.set_integer("EXPID", args.get_int64("expid"), "Exposure number");
  img.header.set_integer("NIGHT", 20201213, "Night of the observation (local date at dusk)");
  img.header.set_string("FLAVOR", "science");
  img.header.set_number("EXPTIME", 900.0, "exposure time [s]");
  img.header.set_number("MJD-OBS", 59198.4452, "MJD at the start of the exposure");
  img.header.set_number("TARGTRA", 150.1, "target RA [deg]");
  img.header.set_number("TARGTDEC", 2.2, "target Dec [deg]");
  img.header.set_string("SIMPSF", psf_arg);
  img.header.set_string("SIMSPEC",
                        args.is_set("spectra") ? args.get("spectra") : std::string("default"));
  img.header.set_integer("SIMSEED", seed);
  img.header.set_number("RDNOISE", readnoise);
  img.header.set_logical("NOISELES", opt.noiseless);
  img.header.set_logical("DEFECTS", opt.defects);
  std::vector<float> const readnoise_image(img.image.size(), static_cast<float>(readnoise));
  io::write_preproc(out, img, &truth, readnoise_image);
  times.add("write", seconds_since(t0));

  std::string line =
      "simulate: wrote " + out + " in " + fmt("%.2f", seconds_since(t_start)) + " s (";
  bool first = true;
  for (auto const& e : times.entries()) {
    std::string name = e.stage;
    if (name.rfind("kspecter::sim::", 0) == 0) name = name.substr(15);
    line += (first ? "" : ", ") + name + " " + fmt("%.2f", e.seconds) + " s";
    first = false;
  }
  s.log.info(line + ")");
  return 0;
}

}  // namespace kspecter::cli
