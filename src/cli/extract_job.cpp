#include "extract_job.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/extract/bad2dfit.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/extract/frame_scores.hpp>
#include <kspecter/extract/truth_pulls.hpp>
#include <kspecter/io/frame_file.hpp>
#include <kspecter/io/preproc_file.hpp>
#include <kspecter/io/psf_file.hpp>
#include <kspecter/parallel/bundles.hpp>
#include <kspecter/parallel/communicator.hpp>
#include <kspecter/parallel/frame_schedule.hpp>
#include <kspecter/parallel/gather.hpp>
#include <kspecter/parallel/io_worker.hpp>
#include <kspecter/parallel/job_monitor.hpp>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <memory>
#include <sstream>

namespace kspecter::cli {

namespace {

// ------------------------------------------------------------------ one frame, step by step

// What a frame needs before the device can start: read on the I/O thread.
struct FrameInput {
  psf::GaussHermitePsf psf;
  io::PreprocImage img;
  FrameSetup setup;  // setup.opt: the job's options, with this frame's grid
};

void apply_grid(FrameSpec const& f, extract::ExtractOptions& opt) {
  if (f.grid.empty()) return;
  opt.wmin = f.grid[0];
  opt.wmax = f.grid[1];
  opt.dw = f.grid[2];
}

FrameInput read_frame_input(FrameSpec const& f, extract::ExtractOptions const& opt,
                            DesiOptions const& desi) {
  FrameInput in;
  io::PsfKeywords keywords;
  in.psf = io::read_psf(f.psf, &keywords);
  in.img = io::read_preproc(f.image);
  in.setup = setup_frame(f, desi, opt, in.psf, keywords, in.img);
  return in;
}

template <class Space>
extract::FrameResult extract_on(FrameInput const& in, extract::ExtractOptions const& opt,
                                StageTimes& times) {
  using Mem = typename Space::memory_space;
  Space space;
  io::PreprocImage const& img = in.img;
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
  return extract::extract_frame(space, in.psf, image, ivar, opt, &times);
}

extract::FrameResult extract_with_backend(std::string const& backend, FrameInput const& in,
                                          extract::ExtractOptions const& opt, StageTimes& times) {
  if (backend == "auto") return extract_on<Kokkos::DefaultExecutionSpace>(in, opt, times);
  if (backend == "host") return extract_on<Kokkos::DefaultHostExecutionSpace>(in, opt, times);
#ifdef KOKKOS_ENABLE_SERIAL
  if (backend == "serial") return extract_on<Kokkos::Serial>(in, opt, times);
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  if (backend == "openmp") return extract_on<Kokkos::OpenMP>(in, opt, times);
#endif
#ifdef KOKKOS_ENABLE_CUDA
  if (backend == "cuda") return extract_on<Kokkos::Cuda>(in, opt, times);
#endif
  throw ParameterError("extract: backend '" + backend +
                       "' is not enabled in this build (see `kspecter info`)");
}

// A rank of a group with no bundle of the frame still takes part in the gathers.
extract::FrameResult empty_share(FrameInput const& in, extract::ExtractOptions const& opt) {
  extract::FrameResult fr;
  fr.wavelength = opt.wavelengths();
  fr.nwave = static_cast<int>(fr.wavelength.size());
  fr.ndiag = in.psf.hsizey;
  if (opt.model) {
    fr.model_nx = in.img.nx;
    fr.model_ny = in.img.ny;
    fr.model.assign(std::size_t(in.img.nx) * in.img.ny, 0.0);
  }
  return fr;
}

// Concatenates the group's spectra on its rank 0 (contiguous runs in rank order).
void gather_frame(extract::FrameResult& fr, int total_nspec, int specmin,
                  parallel::Communicator const& group) {
  auto cat = [&](std::vector<double>& v) { v = parallel::gather_rows(v, 0, group); };
  cat(fr.flux);
  cat(fr.ivar);
  cat(fr.resolution);
  cat(fr.chi2pix);
  cat(fr.pixmask_fraction);
  cat(fr.deconvolved_flux);
  std::vector<unsigned> m(fr.mask.begin(), fr.mask.end());
  m = parallel::gather_rows(m, 0, group);
  fr.mask.assign(m.begin(), m.end());
  if (!fr.model.empty()) fr.model = parallel::sum_to_root(fr.model, 0, group);
  fr.nspec = total_nspec;
  fr.specmin = specmin;
}

std::vector<float> to_float(std::vector<double> const& v) {
  return std::vector<float>(v.begin(), v.end());
}

void write_outputs(FrameSpec const& spec, extract::FrameResult const& fr, std::string const& model,
                   FrameSetup const& setup, bool scores) {
  io::FrameData out;
  out.specmin = fr.specmin;
  out.nspec = fr.nspec;
  out.nwave = fr.nwave;
  out.ndiag = fr.ndiag;
  out.wavelength = setup.wavelength;  // the grid asked for (a barycentric grid is not written)
  out.flux = to_float(fr.flux);
  out.ivar = to_float(fr.ivar);
  out.mask.assign(fr.mask.begin(), fr.mask.end());
  out.resolution = to_float(fr.resolution);
  out.chi2pix = to_float(fr.chi2pix);
  out.header = setup.header;
  out.fibermap = setup.fibermap;
  if (scores)
    for (auto& c : extract::frame_scores(setup.wavelength, fr.flux, fr.ivar, fr.nspec))
      out.scores.push_back({c.name, c.comment, std::move(c.values)});
  io::write_frame(spec.output, out);
  if (!model.empty())
    io::write_model_image(model, fr.model_nx, fr.model_ny, to_float(fr.model), out.header);
}

// Where a failure happened, for the one message the job prints.
std::string frame_context(FrameSpec const& f) {
  return "frame " + f.output + (f.origin.empty() ? "" : " (" + f.origin + ")") + ": ";
}

// Relative cost of a frame for the schedule: spectra x wavelengths.
double frame_cost(FrameSpec const& f, extract::ExtractOptions opt, bool psf_grid) {
  apply_grid(f, opt);
  // A PSF's own grid is known once the PSF is read: a DESI camera's has ~2800 bins.
  double const nwave =
      f.grid.empty() && psf_grid ? 2800.0 : static_cast<double>(opt.wavelengths().size());
  return std::max(1.0, nwave) * (opt.nspec > 0 ? opt.nspec : 500);
}

}  // namespace

// ------------------------------------------------------------------ the job

int run_extract_job(Session& session, ExtractJob const& job) {
  auto& log = session.log;
  auto const world = parallel::Communicator::world();
  int const nframes = static_cast<int>(job.frames.size());
  int const nranks = world.size(), rank = world.rank();

  std::vector<double> cost;
  for (auto const& f : job.frames) cost.push_back(frame_cost(f, job.options, job.desi.psf_grid));
  auto const schedule = parallel::schedule_frames(cost, nranks);
  auto const& mine = schedule[std::size_t(rank)];
  // Fewer frames than ranks: every rank has one frame and shares it with its group.
  parallel::Communicator const group =
      nframes < nranks ? world.split(mine.front().group) : parallel::Communicator::self();

  double const t0 = log.elapsed();
  auto eta = [&](double fraction) {
    double const dt = log.elapsed() - t0;
    return fraction > 0 ? dt * (1 - fraction) / fraction : 0.0;
  };
  parallel::JobMonitor monitor(world, [&](parallel::FrameDone const& d) {
    char line[256];
    std::snprintf(line, sizeof line, "frame %d/%d written (rank %d): elapsed %.1f s, ETA %.1f s",
                  d.frames_done, nframes, d.rank, log.elapsed() - t0,
                  eta(double(d.frames_done) / nframes));
    log.info(std::string(line) + "  " + job.frames[std::size_t(d.frame)].output);
  });
  log.info("extracting " + std::to_string(nframes) + " frame" + (nframes == 1 ? "" : "s") + " on " +
           std::to_string(nranks) + " rank" + (nranks == 1 ? "" : "s"));

  parallel::IoWorker io;
  auto read_task = [&](std::size_t i) {
    FrameSpec const spec = job.frames[std::size_t(mine[i].frame)];
    extract::ExtractOptions const opt = job.options;
    DesiOptions const desi = job.desi;
    return io.submit([spec, opt, desi] { return read_frame_input(spec, opt, desi); },
                     /*droppable=*/true);
  };
  struct Write {
    int frame;
    std::future<void> done;
  };
  std::deque<Write> writes;
  auto collect_writes = [&](bool wait) {
    while (!writes.empty()) {
      Write& w = writes.front();
      if (!wait && w.done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) break;
      try {
        w.done.get();
        monitor.frame_done(w.frame);
      } catch (std::exception const& e) {
        monitor.fail(frame_context(job.frames[std::size_t(w.frame)]) + e.what());
      }
      writes.pop_front();
    }
  };

  std::future<FrameInput> next;
  if (!mine.empty()) next = read_task(0);
  double busy = 0;
  std::shared_ptr<extract::FrameResult> single;  // a one-frame job's result, for the pulls
  for (std::size_t i = 0; i < mine.size(); ++i) {
    parallel::FrameTask const& task = mine[i];
    FrameSpec const& spec = job.frames[std::size_t(task.frame)];
    collect_writes(false);
    if (parallel::any_rank(monitor.poll(), group)) break;

    std::string error;
    FrameInput in;
    try {
      in = next.get();
    } catch (std::exception const& e) {
      error = e.what();
    }
    if (i + 1 < mine.size()) next = read_task(i + 1);
    if (parallel::any_rank(!error.empty(), group)) {
      if (!error.empty()) monitor.fail(frame_context(spec) + error);
      break;
    }
    if (task.group_size == 1) log.debug("frame " + spec.output + ": read " + spec.image);

    // This rank's bundles of the frame.
    int const nspec = in.setup.opt.resolved_nspec(in.psf.nfiber);
    auto const share =
        parallel::assign_bundles(in.setup.opt.specmin, nspec, in.setup.opt.bundlesize,
                                 task.group_size)[std::size_t(task.group_rank)];
    extract::ExtractOptions local = in.setup.opt;
    local.specmin = share.specmin;
    local.nspec = share.nspec;
    local.model = !job.model.empty();
    if (rank == 0)
      local.on_batch_done = [&](int done, int total) {
        monitor.poll();
        char line[200];
        std::snprintf(line, sizeof line,
                      "rank 0, its frame %d/%d: bundles %d/%d done, elapsed %.1f s", int(i) + 1,
                      int(mine.size()), done, total, log.elapsed() - t0);
        log.info(std::string(line) + "  " + spec.output);
      };

    StageTimes times;
    auto fr = std::make_shared<extract::FrameResult>();
    auto const tx = std::chrono::steady_clock::now();
    try {
      *fr = share.nspec > 0 ? extract_with_backend(job.backend, in, local, times)
                            : empty_share(in, local);
    } catch (std::exception const& e) {
      error = e.what();
    }
    busy += std::chrono::duration<double>(std::chrono::steady_clock::now() - tx).count();
    if (parallel::any_rank(!error.empty(), group)) {
      if (!error.empty()) monitor.fail(frame_context(spec) + error);
      break;
    }
    for (auto const& e : times.entries())
      log.debug("  " + e.stage + ": " + std::to_string(e.seconds) + " s");
    if (task.group_size > 1) gather_frame(*fr, nspec, in.setup.opt.specmin, group);

    if (task.group_rank == 0) {
      // desispec's BAD2DFIT rule, over the whole frame once gathered.
      extract::apply_bad2dfit(*fr);
      auto setup = std::make_shared<FrameSetup>(std::move(in.setup));
      std::string const model = job.model;
      bool const scores = job.desi.scores;
      writes.push_back({task.frame, io.submit([spec, fr, model, setup, scores] {
                          write_outputs(spec, *fr, model, *setup, scores);
                        })});
      if (nframes == 1) single = fr;
    }
  }
  io.cancel_droppable();  // reads ahead of a stop
  collect_writes(true);
  auto const summary = monitor.finish(busy);
  double const wall = parallel::max_over_ranks(log.elapsed() - t0, world);

  if (summary.failed) {
    if (rank != 0) return 1;
    std::string ranks;
    for (int r : summary.failed_ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
    std::fprintf(stderr, "kspecter extract: error: %s\n", summary.error.c_str());
    std::fprintf(
        stderr,
        "kspecter extract: stopped after %d of %d frame%s were written (failed on rank%s %s)\n",
        summary.frames_done, nframes, nframes == 1 ? "" : "s",
        summary.failed_ranks.size() == 1 ? "" : "s", ranks.c_str());
    return 1;
  }
  if (rank != 0) return 0;

  std::string const space = job.backend == "auto"   ? Kokkos::DefaultExecutionSpace::name()
                            : job.backend == "host" ? Kokkos::DefaultHostExecutionSpace::name()
                                                    : job.backend;
  if (nframes == 1) {
    log.info("wrote " + job.frames[0].output + (job.model.empty() ? "" : " and " + job.model));
    std::printf("extracted %d spectra x %d wavelengths in %.3f s on %d rank%s (%s)\n",
                single->nspec, single->nwave, summary.max_busy_seconds, nranks,
                nranks == 1 ? "" : "s", space.c_str());
    if (job.truth_pulls) {
      if (auto truth = io::read_truth(job.frames[0].image)) {
        auto const p = extract::truth_pulls(*single, truth->wavelength, truth->flux, truth->specmin,
                                            truth->nspec);
        std::printf(
            "pull against truth (flux - R truth) sqrt(ivar) over %lld bins: median %+.4f, "
            "robust std %.4f, mean %+.4f, std %.4f\n",
            p.n, p.median, p.robust_std, p.mean, p.std);
      }
    }
  } else {
    std::printf(
        "extracted %d frames in %.3f s on %d rank%s (%s): %.3f frames/s; busiest rank "
        "extracted for %.3f s\n",
        nframes, wall, nranks, nranks == 1 ? "" : "s", space.c_str(), nframes / wall,
        summary.max_busy_seconds);
  }
  return 0;
}

}  // namespace kspecter::cli
