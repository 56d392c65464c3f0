#include <kspecter/core/error.hpp>
#include <kspecter/extract/backend.hpp>
#include <kspecter/extract/bad2dfit.hpp>
#include <kspecter/io/gzip_prefetch.hpp>
#include <kspecter/io/gzip_settings.hpp>
#include <kspecter/io/threads.hpp>
#include <kspecter/parallel/bundles.hpp>
#include <kspecter/parallel/environment.hpp>
#include <kspecter/parallel/extract_job.hpp>
#include <kspecter/parallel/frame_schedule.hpp>
#include <kspecter/parallel/gather.hpp>
#include <kspecter/parallel/io_worker.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <future>
#include <memory>

namespace kspecter::parallel {

namespace {

// Gzipped frames inflated ahead of the I/O thread, each on a thread of its own and each
// holding its decompressed file (about 200 MiB for a DESI preproc) until read: a full frame
// inflates in about three GPU extractions, so 3-4 keep a GPU fed; half the rank's gzip
// threads, so that a rank of few cores does not inflate more frames than it has cores for.
std::size_t gzip_read_ahead() {
  return static_cast<std::size_t>(std::clamp(io::gzip_threads() / 2, 1, 4));
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A rank of a group with no bundle of the frame still takes part in the gathers.
extract::FrameResult empty_share(FrameInput const& in, extract::ExtractOptions const& opt) {
  extract::FrameResult fr;
  fr.wavelength = opt.wavelengths();
  fr.nwave = static_cast<int>(fr.wavelength.size());
  fr.ndiag = in.psf->hsizey;
  if (opt.model) {
    fr.model_nx = in.image.nx;
    fr.model_ny = in.image.ny;
    fr.model.assign(std::size_t(in.image.nx) * in.image.ny, 0.0);
  }
  return fr;
}

// Concatenates the group's spectra on its rank 0 (contiguous runs in rank order).
void gather_frame(extract::FrameResult& fr, int total_nspec, int specmin,
                  Communicator const& group) {
  auto cat = [&](std::vector<double>& v) { v = gather_rows(v, 0, group); };
  cat(fr.flux);
  cat(fr.ivar);
  cat(fr.resolution);
  cat(fr.chi2pix);
  cat(fr.pixmask_fraction);
  cat(fr.deconvolved_flux);
  std::vector<unsigned> m(fr.mask.begin(), fr.mask.end());
  m = gather_rows(m, 0, group);
  fr.mask.assign(m.begin(), m.end());
  if (!fr.model.empty()) fr.model = sum_to_root(fr.model, 0, group);
  fr.nspec = total_nspec;
  fr.specmin = specmin;
}

// Where a failure happened, for the one message the job prints.
std::string frame_context(JobFrame const& f) {
  std::string const name = f.output.empty() ? f.origin : f.output;
  if (name.empty()) return "";
  return "frame " + name + (f.output.empty() || f.origin.empty() ? "" : " (" + f.origin + ")") +
         ": ";
}

// Relative cost of a frame for the schedule: spectra x wavelengths.
double frame_cost(JobFrame const& f, extract::ExtractOptions opt, bool psf_grid) {
  if (!f.grid.empty()) {
    opt.wmin = f.grid[0];
    opt.wmax = f.grid[1];
    opt.dw = f.grid[2];
  }
  // A PSF's own grid is known once the PSF is read: a DESI camera's has ~2800 bins.
  double const nwave =
      f.grid.empty() && psf_grid ? 2800.0 : static_cast<double>(opt.wavelengths().size());
  return std::max(1.0, nwave) * (opt.nspec > 0 ? opt.nspec : 500);
}

}  // namespace

// ------------------------------------------------------------------ progress on a logger

void LogProgress::started(int nframes, int nranks) {
  log_.info("extracting " + std::to_string(nframes) + " frame" + (nframes == 1 ? "" : "s") +
            " on " + std::to_string(nranks) + " rank" + (nranks == 1 ? "" : "s"));
}

void LogProgress::frame_done(FrameDone const& d, int nframes, JobFrame const& frame, double elapsed,
                             double eta) {
  char line[256];
  std::snprintf(line, sizeof line, "frame %d/%d written (rank %d): elapsed %.1f s, ETA %.1f s",
                d.frames_done, nframes, d.rank, elapsed, eta);
  log_.info(std::string(line) + "  " + frame.output);
}

void LogProgress::batches_done(int mine, int nmine, int done, int total, JobFrame const& frame,
                               double elapsed) {
  char line[200];
  std::snprintf(line, sizeof line, "rank 0, its frame %d/%d: bundles %d/%d done, elapsed %.1f s",
                mine + 1, nmine, done, total, elapsed);
  log_.info(std::string(line) + "  " + frame.output);
}

void LogProgress::frame_read(JobFrame const& frame) {
  log_.debug("frame " + frame.output + ": read " + frame.image);
}

void LogProgress::frame_extracted(JobFrame const&, StageTimes const& times) {
  for (auto const& e : times.entries())
    log_.debug("  " + e.stage + ": " + std::to_string(e.seconds) + " s");
}

// ------------------------------------------------------------------ the job

std::shared_future<FrameInput> start_reading(JobFrame const& frame, JobOptions const& options) {
  extract::ExtractOptions const opt = options.extract;
  DesiOptions const desi = options.desi;
  return std::async(std::launch::async,
                    [frame, opt, desi] { return read_frame_input(frame, opt, desi); })
      .share();
}

namespace {

// Starts inflating the gzipped images of this rank's frames mine[first, last) (capped at
// the end of its list); frames in memory have none.
void prefetch_inputs(std::vector<JobFrame> const& frames, std::vector<FrameTask> const& mine,
                     std::size_t first, std::size_t last) {
  for (std::size_t k = first; k < std::min(mine.size(), last); ++k)
    if (!frames[std::size_t(mine[k].frame)].memory)
      io::prefetch_gzip(frames[std::size_t(mine[k].frame)].image);
}

std::vector<double> frame_costs(std::vector<JobFrame> const& frames, JobOptions const& options) {
  std::vector<double> cost;
  for (auto const& f : frames)
    cost.push_back(frame_cost(f, options.extract, options.desi.psf_grid));
  return cost;
}

}  // namespace

FirstRead start_first_frames(std::vector<JobFrame> const& frames, JobOptions const& options) {
  int const nranks = launcher_size(), rank = launcher_rank();
  if (frames.empty() || rank < 0 || rank >= nranks) return {};
  auto const schedule = schedule_frames(frame_costs(frames, options), nranks);
  auto const& mine = schedule[std::size_t(rank)];
  prefetch_inputs(frames, mine, 1, 1 + gzip_read_ahead());
  int const first = mine.front().frame;
  return {first, start_reading(frames[std::size_t(first)], options)};
}

JobOutcome run_extract_job(Communicator const& comm, std::vector<JobFrame> const& frames,
                           JobOptions const& options, JobProgress& progress) {
  JobOutcome outcome;
  try {
    outcome.space = extract::backend_space_name(options.backend);
  } catch (ParameterError const&) {
    outcome.space = options.backend;  // each frame fails with the message, as any frame error
  }
  outcome.results.resize(frames.size());
  Communicator const world = comm.duplicate();  // the job's messages never meet the caller's
  int const nframes = static_cast<int>(frames.size());
  int const nranks = world.size(), rank = world.rank();

  auto const schedule = schedule_frames(frame_costs(frames, options), nranks);
  auto const& mine = schedule[std::size_t(rank)];
  // Fewer frames than ranks: every rank has one frame and shares it with its group.
  Communicator const group =
      nframes < nranks ? world.split(mine.front().group) : Communicator::self();

  auto const t0 = Clock::now();
  JobMonitor monitor(world, [&](FrameDone const& d) {
    double const dt = seconds_since(t0), fraction = double(d.frames_done) / nframes;
    progress.frame_done(d, nframes, frames[std::size_t(d.frame)], dt,
                        fraction > 0 ? dt * (1 - fraction) / fraction : 0.0);
  });
  if (rank == 0) progress.started(nframes, nranks);

  // Reads and writes on threads of their own, two of each where the FITS library allows
  // it: the next frames are read side by side while the last ones are written, so that
  // neither a write (its gzip above all) nor one read holds up the device. Otherwise one
  // thread does all of it, in order.
  std::vector<std::unique_ptr<IoWorker>> io_threads;
  std::vector<IoWorker*> readers, writers;
  std::size_t const lanes = io::files_on_several_threads() ? 2 : 1;
  for (std::size_t k = 0; k < (lanes == 1 ? 1 : 2 * lanes); ++k)
    io_threads.push_back(std::make_unique<IoWorker>());
  for (std::size_t k = 0; k < lanes; ++k) {
    readers.push_back(io_threads[k].get());
    writers.push_back(io_threads[lanes == 1 ? 0 : lanes + k].get());
  }
  auto read_task = [&](std::size_t i) {
    JobFrame const frame = frames[std::size_t(mine[i].frame)];
    // The frames after this one start inflating now, if gzipped: a full-frame .gz takes
    // about three GPU extractions to inflate, so by the time a reader reaches one its bytes
    // are in memory (kspecter/io/gzip_prefetch.hpp).
    prefetch_inputs(frames, mine, i + 1, i + 1 + gzip_read_ahead());
    extract::ExtractOptions const opt = options.extract;
    DesiOptions const desi = options.desi;
    return readers[i % readers.size()]->submit(
        [frame, opt, desi] {
          auto const tr = Clock::now();
          FrameInput in = read_frame_input(frame, opt, desi);
          in.read_seconds = seconds_since(tr);
          return in;
        },
        /*droppable=*/true);
  };
  struct Write {
    int frame;
    std::future<double> done;  // the write's seconds
  };
  std::deque<Write> writes;
  auto fail = [&](JobFrame const& f, std::exception_ptr e) {
    if (!outcome.local_error) outcome.local_error = e;
    try {
      std::rethrow_exception(e);
    } catch (std::exception const& x) {
      monitor.fail(frame_context(f) + x.what());
    } catch (...) {
      monitor.fail(frame_context(f) + "unknown error");
    }
  };
  auto collect_writes = [&](bool wait) {
    while (!writes.empty()) {
      Write& w = writes.front();
      if (!wait && w.done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) break;
      try {
        outcome.times.add("kspecter::job::write", w.done.get());
        monitor.frame_done(w.frame);
      } catch (...) {
        fail(frames[std::size_t(w.frame)], std::current_exception());
      }
      writes.pop_front();
    }
  };

  // The inputs of this rank's next frames, as many in flight as there are readers.
  std::deque<std::future<FrameInput>> ahead;
  for (std::size_t k = 0; k < std::min(mine.size(), readers.size()); ++k) {
    if (k == 0 && mine[0].frame == options.first_input_frame && options.first_input.valid()) {
      std::shared_future<FrameInput> const early = options.first_input;
      ahead.push_back(std::async(std::launch::deferred, [early] { return early.get(); }));
    } else {
      ahead.push_back(read_task(k));
    }
  }
  double busy = 0;
  // The device buffers of one frame serve the next of the same sizes (~2 GB on a GPU not
  // allocated and freed again a frame; extract/kept_buffers.hpp).
  extract::KeptBuffers kept;
  for (std::size_t i = 0; i < mine.size(); ++i) {
    FrameTask const& task = mine[i];
    JobFrame const& frame = frames[std::size_t(task.frame)];
    collect_writes(false);
    if (any_rank(monitor.poll(), group)) break;

    std::exception_ptr error;
    FrameInput in;
    auto const tw = Clock::now();
    try {
      in = ahead.front().get();
    } catch (...) {
      error = std::current_exception();
    }
    // The I/O beside the extraction: what reading took, and how long the device waited for it.
    StageTimes times;
    times.add("kspecter::job::wait_for_input", seconds_since(tw));
    times.add("kspecter::job::read", in.read_seconds);
    ahead.pop_front();
    if (i + readers.size() < mine.size()) ahead.push_back(read_task(i + readers.size()));
    if (any_rank(error != nullptr, group)) {
      if (error) fail(frame, error);
      break;
    }
    if (task.group_size == 1) progress.frame_read(frame);

    // This rank's bundles of the frame.
    int const nspec = in.options.resolved_nspec(in.psf->nfiber);
    auto const share = assign_bundles(in.options.specmin, nspec, in.options.bundlesize,
                                      task.group_size)[std::size_t(task.group_rank)];
    extract::ExtractOptions local = in.options;
    local.specmin = share.specmin;
    local.nspec = share.nspec;
    local.model = options.model || !frame.model.empty();
    extract::ExtractHooks hooks;
    hooks.buffers = &kept;
    if (rank == 0)
      hooks.on_batch_done = [&](int done, int total) {
        monitor.poll();
        progress.batches_done(int(i), int(mine.size()), done, total, frame, seconds_since(t0));
      };

    auto fr = std::make_shared<extract::FrameResult>();
    auto const tx = Clock::now();
    try {
      *fr = share.nspec > 0 ? extract::extract_frame(options.backend, *in.psf, in.image, in.ivar,
                                                     local, &times, hooks)
                            : empty_share(in, local);
    } catch (...) {
      error = std::current_exception();
    }
    busy += seconds_since(tx);
    if (any_rank(error != nullptr, group)) {
      if (error) fail(frame, error);
      break;
    }
    progress.frame_extracted(frame, times);
    for (auto const& e : times.entries()) outcome.times.add(e.stage, e.seconds);
    if (task.group_size > 1) gather_frame(*fr, nspec, in.options.specmin, group);

    if (task.group_rank == 0) {
      if (frame.keep_result) outcome.results[std::size_t(task.frame)] = fr;
      auto setup = std::make_shared<FrameSetup>(std::move(in.setup));
      // desispec's BAD2DFIT rule over the whole frame once gathered, and the frame's quality
      // report, on the writer: between two extractions the device would wait for the medians.
      // Collected (fr read by the caller) only after the write.
      writes.push_back(
          {task.frame, writers[i % writers.size()]->submit([frame, fr, setup, &progress] {
             auto const tw = Clock::now();
             extract::apply_bad2dfit(*fr);
             progress.frame_finished(frame, *fr);
             write_frame_outputs(frame, *fr, *setup);
             return seconds_since(tw);
           })});
    }
  }
  for (IoWorker* r : readers) r->cancel_droppable();  // reads ahead of a stop
  kept.release();  // the device's buffers go back while the last frames are written
  progress.device_done();
  collect_writes(true);
  io::drop_gzip_prefetches();
  outcome.summary = monitor.finish(busy);
  outcome.wall_seconds = max_over_ranks(seconds_since(t0), world);
  return outcome;
}

}  // namespace kspecter::parallel
