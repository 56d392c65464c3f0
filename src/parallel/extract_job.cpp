#include "job_steps.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/extract/backend.hpp>
#include <kspecter/io/gzip_prefetch.hpp>
#include <kspecter/parallel/environment.hpp>
#include <kspecter/parallel/extract_job.hpp>
#include <kspecter/parallel/frame_schedule.hpp>
#include <kspecter/parallel/gather.hpp>

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>

namespace kspecter::parallel {

namespace {

using job::Clock;
using job::seconds_since;

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

std::vector<double> frame_costs(std::vector<JobFrame> const& frames, JobOptions const& options) {
  std::vector<double> cost;
  for (auto const& f : frames)
    cost.push_back(frame_cost(f, options.extract, options.desi.psf_grid));
  return cost;
}

std::string space_name(std::string const& backend) {
  try {
    return extract::backend_space_name(backend);
  } catch (ParameterError const&) {
    return backend;  // each frame fails with the message, as any frame error
  }
}

}  // namespace

std::shared_future<FrameInput> start_reading(JobFrame const& frame, JobOptions const& options) {
  extract::ExtractOptions const opt = options.extract;
  DesiOptions const desi = options.desi;
  return std::async(std::launch::async,
                    [frame, opt, desi] { return read_frame_input(frame, opt, desi); })
      .share();
}

FirstRead start_first_frames(std::vector<JobFrame> const& frames, JobOptions const& options) {
  int const nranks = launcher_size(), rank = launcher_rank();
  if (frames.empty() || rank < 0 || rank >= nranks) return {};
  auto const schedule = schedule_frames(frame_costs(frames, options), nranks);
  auto const& mine = schedule[std::size_t(rank)];
  job::prefetch_inputs(frames, mine, 1, job::gzip_read_ahead());
  int const first = mine.front().frame;
  return {first, start_reading(frames[std::size_t(first)], options)};
}

// The rank's frames in turn: the input read ahead, this rank's share extracted on the device
// (its buffers kept for the next frame), gathered to the group's rank 0, which writes it
// behind. A failure on any rank stops every rank at its next frame (docs/architecture.md,
// "The job's loop").
JobOutcome run_extract_job(Communicator const& comm, std::vector<JobFrame> const& frames,
                           JobOptions const& options, JobProgress& progress) {
  // Outlier rejection judges pixels against the model of the spectra it extracted: at the
  // edge of a rank's share of a frame that model lacks the next bundle's light.
  if (options.extract.reject_sigma > 0 && int(frames.size()) < comm.size())
    throw ParameterError("extract: --reject-sigma (reject_sigma) needs each frame on one rank; " +
                         std::to_string(frames.size()) + " frame(s) on " +
                         std::to_string(comm.size()) +
                         " ranks would share a frame's bundles: use as many ranks as frames "
                         "at most");
  JobOutcome outcome;
  outcome.space = space_name(options.backend);
  outcome.results.resize(frames.size());
  Communicator const world = comm.duplicate();  // the job's messages never meet the caller's
  int const nframes = static_cast<int>(frames.size());
  auto const schedule = schedule_frames(frame_costs(frames, options), world.size());
  auto const& mine = schedule[std::size_t(world.rank())];
  // Fewer frames than ranks: every rank has one frame and shares it with its group.
  Communicator const group =
      nframes < world.size() ? world.split(mine.front().group) : Communicator::self();

  auto const t0 = Clock::now();
  JobMonitor monitor(world, [&](FrameDone const& d) {
    double const dt = seconds_since(t0), fraction = double(d.frames_done) / nframes;
    progress.frame_done(d, nframes, frames[std::size_t(d.frame)], dt,
                        fraction > 0 ? dt * (1 - fraction) / fraction : 0.0);
  });
  if (world.rank() == 0) progress.started(nframes, world.size());

  job::Failures failures(outcome, monitor);
  job::IoLanes const io;
  job::ReadAhead reads(io.readers(), frames, mine, options);
  job::WriteBehind writes(io.writers(), failures, monitor, outcome.times);
  extract::KeptBuffers kept;  // one frame's device buffers serve the next of the same sizes
  double busy = 0;
  for (std::size_t i = 0; i < mine.size(); ++i) {
    FrameTask const& task = mine[i];
    JobFrame const& frame = frames[std::size_t(task.frame)];
    writes.collect(/*wait=*/false);
    if (any_rank(monitor.poll(), group)) break;

    StageTimes times;
    auto in = failures.agreed(frame, group, [&] { return reads.take(i, times); });
    if (!in) break;
    if (task.group_size == 1) progress.frame_read(frame);

    extract::ExtractHooks hooks;
    hooks.buffers = &kept;
    if (world.rank() == 0)
      hooks.on_batch_done = [&](int done, int total) {
        monitor.poll();
        progress.batches_done(int(i), int(mine.size()), done, total, frame, seconds_since(t0));
      };
    auto const tx = Clock::now();
    auto const fr = failures.agreed(
        frame, group, [&] { return job::extract_share(task, frame, *in, options, hooks, times); });
    busy += seconds_since(tx);
    if (!fr) break;
    progress.frame_extracted(frame, times);
    for (auto const& e : times.entries()) outcome.times.add(e.stage, e.seconds);

    if (task.group_size > 1) job::gather_frame(**fr, *in, group);
    if (task.group_rank != 0) continue;
    // The result is read by the caller (keep_result) only after its write is collected.
    if (frame.keep_result) outcome.results[std::size_t(task.frame)] = *fr;
    writes.submit(i, task.frame, frame, *fr, std::move(in->setup), progress);
  }
  reads.cancel();
  kept.release();  // the device's buffers go back while the last frames are written
  progress.device_done();
  writes.collect(/*wait=*/true);
  io::drop_gzip_prefetches();
  outcome.summary = monitor.finish(busy);
  outcome.wall_seconds = max_over_ranks(seconds_since(t0), world);
  return outcome;
}

}  // namespace kspecter::parallel
