// `kspecter extract`: preproc images and GaussHermite PSFs in, desispec frames out; the
// flags of gpu_specter's spex, for one frame (-i/-p/-o) or a list of them (--batch). Under MPI
// the frames and their bundles are spread over the ranks (run_job.hpp).
#include "args.hpp"
#include "commands.hpp"
#include "frame_list.hpp"
#include "run_job.hpp"
#include "session.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/extract/backend.hpp>
#include <kspecter/io/output_path.hpp>

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>

namespace kspecter::cli {

namespace {

/// The pre-flight of the outputs: every frame's output and model named, writable (folder
/// there, nothing but a regular file at the path) and distinct, before anything is read or
/// written. A failure found only when a frame is written would come after it replaced the
/// previous one, or after minutes of extraction.
void check_outputs(ExtractJob const& job) {
  for (auto const& f : job.frames) {
    std::string const where = f.origin.empty() ? "" : f.origin + ": ";
    if (f.output.empty())
      throw ParameterError("extract: " + where + "--output is empty: give a file name");
    io::check_output_path(f.output);
  }
  if (job.model.empty()) return;
  io::check_output_path(job.model);
  for (auto const& f : job.frames)
    if (io::same_output_file(f.output, job.model))
      throw ParameterError("extract: --model " + job.model + " and --output " + f.output +
                           " are the same file: the model would replace the frame");
}

/// The pre-flight of the inputs: every frame's image (or, as desispec's checkgzip, the same
/// name with .gz added or removed), PSF and FIBERMAP file there, a regular file, readable,
/// before anything is written; their contents are checked when each is read.
void check_inputs(ExtractJob const& job) {
  namespace fs = std::filesystem;
  // `frame` names the frame that needs the file, as the job's own errors do.
  auto check = [](std::string const& path, bool gzip_alternative, std::string const& frame) {
    std::string p = path, nor;
    std::error_code ec;
    if (gzip_alternative && !fs::exists(p, ec)) {
      bool const gz = p.size() > 3 && p.compare(p.size() - 3, 3, ".gz") == 0;
      std::string const other = gz ? p.substr(0, p.size() - 3) : p + ".gz";
      if (fs::exists(other, ec)) p = other;
      nor = " (nor " + other + ")";
    }
    std::string problem;
    if (!fs::exists(p, ec))
      problem = "file not found" + nor;
    else if (!fs::is_regular_file(p, ec))
      problem = "not a regular file";
    else if (::access(p.c_str(), R_OK) != 0)
      problem = std::strerror(errno);
    if (!problem.empty())
      throw InputErrorOnEveryRank(p, "", "cannot open: " + problem + "; needed by " + frame);
  };
  for (auto const& f : job.frames) {
    std::string const frame = "frame " + f.output + (f.origin.empty() ? "" : " (" + f.origin + ")");
    check(f.image, /*gzip_alternative=*/true, frame);
    check(f.psf, false, frame);
  }
  if (!job.desi.fibermap.empty()) check(job.desi.fibermap, false, "--fibermap");
}

}  // namespace

int run_extract(int argc, char** argv) {
  ArgParser args("extract",
                 "Extracts spectra from a preprocessed CCD image with a GaussHermite PSF by "
                 "spectroperfectionism and writes the frame desispec writes: FITS (gzipped when "
                 "the name ends in .gz), or HDF5 when it ends in .h5. Takes every option of "
                 "desispec's desi_extract_spectra with its meaning. With --batch, extracts every "
                 "frame of a list; under mpirun/srun the frames and their bundles are spread "
                 "over the ranks (one rank per GPU).");
  args.group("files");
  args.option("input", 'i', "FILE", "preproc image (IMAGE, IVAR, MASK, optional FIBERMAP)");
  args.option("fibermap", 'f', "FILE", "FIBERMAP from this file (default: the image's)");
  args.option("psf", 'p', "FILE", "GaussHermite PSF");
  args.option("output", 'o', "FILE", "output frame (.fits, .fits.gz or .h5)");
  args.option("batch", 0, "LIST",
              "frames to extract, one `image psf output [WMIN,WMAX,DW]` per line ('#' comments); "
              "replaces -i/-p/-o");
  args.option("model", 'm', "FILE", "also write the 2-D pixel model image here");
  args.group("what is extracted (desi_extract_spectra's and spex's options)");
  // The defaults are a default-constructed ExtractOptions' (what the library does unasked).
  extract::ExtractOptions const def;
  args.option("wavelength", 'w', "WMIN,WMAX,DW",
              "wavelength grid (default: the PSF's WAVEMIN,WAVEMAX,0.8)");
  args.option("specmin", 's', "N", "first spectrum to extract", std::to_string(def.specmin));
  args.option("nspec", 'n', "N", "number of spectra to extract (default: all from specmin)");
  args.option("regularize", 'r', "X", "regularization amount", number_text(def.regularize));
  args.option("bundlesize", 0, "N", "spectra per bundle", std::to_string(def.bundlesize));
  args.option("nsubbundles", 0, "N", "sub-bundles per bundle", std::to_string(def.nsubbundles));
  args.option("nwavestep", 0, "N", "core wavelength bins per patch", std::to_string(def.nwavestep));
  args.group("desi_extract_spectra's and spex's other options");
  args.flag("verbose", 'v', "print more (--log-level DEBUG)");
  args.flag("mpi", 0, "accepted: MPI is used whenever the job runs under mpirun/srun");
  args.flag("decorrelate-fibers", 0, "refused, as by gpu_specter");
  args.flag("no-scores", 0, "do not compute the SCORES HDU");
  args.flag("barycentric-correction", 0,
            "extract on the grid in the solar-system barycentre's frame (desispec's factor from "
            "the header's pointing and time); the frame keeps the grid asked for, and HELIOCOR");
  args.option("psferr", 0, "X", "fractional PSF model error for chi2pix (default: the PSF's)");
  args.flag("use-specter", 0, "extract on the CPU (desispec: classic specter)");
  args.flag("no-gpu", 0, "extract on the CPU even when a GPU is available");
  args.option("pixpad-frac", 0, "X", "fraction of the padding's pixel rows kept",
              number_text(def.pixpad_frac));
  args.option("wavepad-frac", 0, "X", "extra wavelength padding, fraction of wavepad",
              number_text(def.wavepad_frac));
  args.option("wavepad", 0, "N", "wavelength bins padded on both sides of a patch",
              std::to_string(def.wavepad));
  args.flag("use-gpu", 0,
            "extract on the GPU backend (spex; an error in a build without one, or with "
            "--no-gpu, --use-specter or another --backend)");
  args.flag("async-io", 0,
            "accepted (spex): reads and writes always overlap the extraction, on I/O threads");
  args.refuse("ranks-per-bundle", true,
              "kspecter deals whole bundles to the ranks and never splits a bundle between "
              "ranks (spex's default); leave it out");
  args.group("kspecter's own");
  args.option("backend", 0, "NAME", "one of " + extract::backend_names(), "auto");
  args.option("memory-budget", 0, "GIB", "device memory for batch buffers, GiB",
              number_text(double(def.memory_budget) / double(1ull << 30)));
  args.option("reject-sigma", 0, "S",
              "reject pixels whose residual from the model exceeds S sigma (and their "
              "neighbours above S/2), then extract again (default: no rejection)");
  args.option("reject-iter", 0, "N", "extractions again after rejection, at most",
              std::to_string(def.reject_iter));
  args.flag("no-truth", 0, "do not compare with truth spectra found in the input");
  args.option("timing-json", 0, "FILE",
              "write the job's stage times and wall times here as JSON (rank 0), for pipeline "
              "monitoring");
  args.option("warn-masked", 0, "FRACTION",
              "a WARNING names each fiber with more than this fraction of its bins at ivar = 0 "
              "(single frames)",
              "0.2");
  add_common_options(args);
  if (!args.parse(argc, argv)) return 0;
  if (args.is_set("decorrelate-fibers"))
    throw ParameterError(
        "extract: --decorrelate-fibers not implemented with gpu_specter (kspecter extracts as "
        "gpu_specter does: the resolution of each fiber alone)");

  extract::ExtractOptions opt;
  if (args.has("wavelength")) {
    auto const w = args.get_doubles("wavelength", 3);
    opt.wmin = w[0];
    opt.wmax = w[1];
    opt.dw = w[2];
  }
  opt.specmin = args.get_int("specmin");
  if (args.has("nspec")) opt.nspec = args.get_int("nspec");
  opt.regularize = args.get_double("regularize");
  if (args.has("psferr")) opt.psferr = args.get_double("psferr");
  opt.bundlesize = args.get_int("bundlesize");
  opt.nsubbundles = args.get_int("nsubbundles");
  opt.nwavestep = args.get_int("nwavestep");
  opt.wavepad = args.get_int("wavepad");
  opt.wavepad_frac = args.get_double("wavepad-frac");
  opt.pixpad_frac = args.get_double("pixpad-frac");
  if (args.has("reject-sigma")) {
    opt.reject_sigma = args.get_double("reject-sigma");
    if (!(opt.reject_sigma > 0 && std::isfinite(opt.reject_sigma)))
      throw ParameterError("extract: --reject-sigma must be a number > 0, got " +
                           args.get("reject-sigma"));
  }
  opt.reject_iter = args.get_int("reject-iter");
  double const budget_gib = args.get_double("memory-budget");
  // Up to 1 PiB: beyond, the byte count would not fit size_t (and no device has it).
  if (!(budget_gib > 0 && budget_gib <= 1048576.0))
    throw ParameterError("extract: --memory-budget must be in (0, 1048576] GiB");
  opt.memory_budget = static_cast<std::size_t>(budget_gib * (1ull << 30));

  ExtractJob job;
  job.backend = args.get("backend");
  if (args.is_set("use-specter") || args.is_set("no-gpu")) {  // desispec: the CPU
    if (job.backend != "auto" && !extract::backend_on_host(job.backend))
      throw ParameterError("extract: --" +
                           std::string(args.is_set("no-gpu") ? "no-gpu" : "use-specter") +
                           " runs on the CPU: it cannot go with --backend " + job.backend);
    if (job.backend == "auto") job.backend = extract::host_backend();
  }
  if (args.is_set("use-gpu")) {  // spex: the GPU
    if (args.is_set("use-specter") || args.is_set("no-gpu"))
      throw ParameterError(std::string("extract: --use-gpu cannot go with --") +
                           (args.is_set("no-gpu") ? "no-gpu" : "use-specter"));
    std::string const gpu = extract::gpu_backend();
    if (gpu.empty())
      throw ParameterError("extract: --use-gpu: this build has no GPU backend (" +
                           extract::backend_names() + ")");
    if (job.backend != "auto" && job.backend != gpu)
      throw ParameterError("extract: --use-gpu cannot go with --backend " + job.backend);
    job.backend = gpu;
  }
  if (args.has("timing-json")) job.timing_json = args.get("timing-json");
  job.warn_masked = args.get_double("warn-masked");
  if (!(job.warn_masked >= 0 && job.warn_masked <= 1))
    throw ParameterError("extract: --warn-masked must be in [0, 1], got " +
                         args.get("warn-masked"));
  job.truth_pulls = !args.is_set("no-truth");
  job.desi.psf_grid = !args.has("wavelength");
  job.desi.scores = !args.is_set("no-scores");
  job.desi.barycentric = args.is_set("barycentric-correction");
  if (args.has("fibermap")) job.desi.fibermap = args.get("fibermap");
  if (args.has("batch")) {
    for (char const* single : {"input", "psf", "output", "model", "fibermap"})
      if (args.has(single))
        throw ParameterError(std::string("extract: --batch replaces -i/-p/-o; --") + single +
                             " cannot be given with it");
    job.frames = read_frame_list(args.get("batch"));
  } else {
    for (char const* needed : {"input", "psf", "output"})
      if (!args.has(needed))
        throw ParameterError(std::string("extract: --") + needed + " is required (or --batch)");
    parallel::JobFrame f;
    f.image = args.get("input");
    f.psf = args.get("psf");
    f.output = args.get("output");
    job.frames = {f};
    if (args.has("model")) {
      job.model = args.get("model");
      if (job.model.empty())
        throw ParameterError("extract: --model is empty: give a file name, or leave -m out");
    }
  }
  // Negative counts are a mistake, never "all" or "the default" (the library refuses the
  // others: specmin, bundlesize, nsubbundles, nwavestep, wavepad).
  if (args.has("nspec") && opt.nspec < 1)
    throw ParameterError("extract: --nspec must be 1 or more (leave it out for every fiber), got " +
                         std::to_string(opt.nspec));
  if (args.has("psferr") && !(opt.psferr >= 0))
    throw ParameterError("extract: --psferr must be 0 or more (leave it out for the PSF's), got " +
                         args.get("psferr"));
  job.options = opt;
  check_outputs(job);
  check_inputs(job);

  // A single frame, or a batch's first frame on this rank, is read while the GPU driver, MPI
  // and Kokkos start up (a good part of a second on a GPU node).
  parallel::FirstRead first;
  Session s(argc, argv, args, /*use_mpi=*/true, [&] { first = start_first_read(job); });
  return run_job(s, job, std::move(first));
}

}  // namespace kspecter::cli
