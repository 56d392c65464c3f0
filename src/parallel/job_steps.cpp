#include "job_steps.hpp"

#include <kspecter/extract/backend.hpp>
#include <kspecter/extract/bad2dfit.hpp>
#include <kspecter/extract/reject.hpp>
#include <kspecter/io/gzip_prefetch.hpp>
#include <kspecter/io/gzip_settings.hpp>
#include <kspecter/io/threads.hpp>
#include <kspecter/parallel/bundles.hpp>

#include <algorithm>
#include <chrono>

namespace kspecter::parallel::job {

namespace {

// Where a failure happened, for the one message the job prints.
std::string frame_context(JobFrame const& f) {
  std::string const name = f.output.empty() ? f.origin : f.output;
  if (name.empty()) return "";
  return "frame " + name + (f.output.empty() || f.origin.empty() ? "" : " (" + f.origin + ")") +
         ": ";
}

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

}  // namespace

// ------------------------------------------------------------------ I/O threads

IoLanes::IoLanes() {
  std::size_t const lanes = io::files_on_several_threads() ? 2 : 1;
  for (std::size_t k = 0; k < (lanes == 1 ? 1 : 2 * lanes); ++k)
    threads_.push_back(std::make_unique<IoWorker>());
  for (std::size_t k = 0; k < lanes; ++k) {
    readers_.push_back(threads_[k].get());
    writers_.push_back(threads_[lanes == 1 ? 0 : lanes + k].get());
  }
}

// ------------------------------------------------------------------ read ahead

// Half the rank's gzip threads, so that a rank of few cores does not inflate more frames
// than it has cores for; 3-4 keep a GPU fed, a full frame inflating in about three GPU
// extractions.
std::size_t gzip_read_ahead() {
  return static_cast<std::size_t>(std::clamp(io::gzip_threads() / 2, 1, 4));
}

void prefetch_inputs(std::vector<JobFrame> const& frames, std::vector<FrameTask> const& mine,
                     std::size_t first, std::size_t count) {
  for (std::size_t k = first; k < std::min(mine.size(), first + count); ++k)
    if (!frames[std::size_t(mine[k].frame)].memory)
      io::prefetch_gzip(frames[std::size_t(mine[k].frame)].image);
}

ReadAhead::ReadAhead(std::vector<IoWorker*> readers, std::vector<JobFrame> const& frames,
                     std::vector<FrameTask> const& mine, JobOptions const& options)
    : readers_(std::move(readers)), frames_(frames), mine_(mine), options_(options) {
  for (std::size_t k = 0; k < std::min(mine.size(), readers_.size()); ++k) {
    if (k == 0 && mine[0].frame == options.first_input_frame && options.first_input.valid()) {
      std::shared_future<FrameInput> const early = options.first_input;
      ahead_.push_back(std::async(std::launch::deferred, [early] { return early.get(); }));
    } else {
      ahead_.push_back(start(k));
    }
  }
}

std::future<FrameInput> ReadAhead::start(std::size_t i) {
  prefetch_inputs(frames_, mine_, i + 1, gzip_read_ahead());
  JobFrame const frame = frames_[std::size_t(mine_[i].frame)];
  extract::ExtractOptions const opt = options_.extract;
  DesiOptions const desi = options_.desi;
  return readers_[i % readers_.size()]->submit(
      [frame, opt, desi] {
        auto const t0 = Clock::now();
        FrameInput in = read_frame_input(frame, opt, desi);
        in.read_seconds = seconds_since(t0);
        return in;
      },
      /*droppable=*/true);
}

FrameInput ReadAhead::take(std::size_t i, StageTimes& times) {
  auto const t0 = Clock::now();
  std::future<FrameInput> front = std::move(ahead_.front());
  ahead_.pop_front();
  if (i + readers_.size() < mine_.size()) ahead_.push_back(start(i + readers_.size()));
  struct Times {  // recorded also when the read failed
    StageTimes& times;
    Clock::time_point t0;
    double read = 0;
    ~Times() {
      times.add("kspecter::job::wait_for_input", seconds_since(t0));
      times.add("kspecter::job::read", read);
    }
  } record{times, t0};
  FrameInput in = front.get();
  record.read = in.read_seconds;
  return in;
}

void ReadAhead::cancel() {
  for (IoWorker* r : readers_) r->cancel_droppable();
}

// ------------------------------------------------------------------ failures

void Failures::record(JobFrame const& frame, std::exception_ptr error) {
  if (!outcome_.local_error) outcome_.local_error = error;
  try {
    std::rethrow_exception(error);
  } catch (std::exception const& x) {
    monitor_.fail(frame_context(frame) + x.what());
  } catch (...) {
    monitor_.fail(frame_context(frame) + "unknown error");
  }
}

// ------------------------------------------------------------------ write behind

void WriteBehind::submit(std::size_t lane, int frame_index, JobFrame const& frame,
                         std::shared_ptr<extract::FrameResult> result, FrameSetup setup,
                         JobProgress& progress) {
  auto kept = std::make_shared<FrameSetup>(std::move(setup));
  JobFrame const* f = &frame;
  writes_.push_back(
      {f, frame_index, writers_[lane % writers_.size()]->submit([f, result, kept, &progress] {
         auto const t0 = Clock::now();
         extract::apply_bad2dfit(*result);
         progress.frame_finished(*f, *result);
         write_frame_outputs(*f, *result, *kept);
         return seconds_since(t0);
       })});
}

void WriteBehind::collect(bool wait) {
  while (!writes_.empty()) {
    Write& w = writes_.front();
    if (!wait && w.seconds.wait_for(std::chrono::seconds(0)) != std::future_status::ready) break;
    try {
      times_.add("kspecter::job::write", w.seconds.get());
      monitor_.frame_done(w.index);
    } catch (...) {
      failures_.record(*w.frame, std::current_exception());
    }
    writes_.pop_front();
  }
}

// ------------------------------------------------------------------ one frame's share

std::shared_ptr<extract::FrameResult> extract_share(FrameTask const& task, JobFrame const& frame,
                                                    FrameInput const& in, JobOptions const& options,
                                                    extract::ExtractHooks const& hooks,
                                                    StageTimes& times) {
  int const nspec = in.options.resolved_nspec(in.psf->nfiber);
  auto const share = assign_bundles(in.options.specmin, nspec, in.options.bundlesize,
                                    task.group_size)[std::size_t(task.group_rank)];
  extract::ExtractOptions local = in.options;
  local.specmin = share.specmin;
  local.nspec = share.nspec;
  local.model = options.model || !frame.model.empty();
  if (share.nspec <= 0) return std::make_shared<extract::FrameResult>(empty_share(in, local));
  auto const once = [&](extract::ImageArray const& weights, extract::ExtractOptions const& o) {
    return extract::extract_frame(options.backend, *in.psf, in.image, weights, o, &times, hooks);
  };
  return std::make_shared<extract::FrameResult>(
      extract::extract_rejecting(once, *in.psf, in.image, in.ivar, local));
}

void gather_frame(extract::FrameResult& fr, FrameInput const& in, Communicator const& group) {
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
  fr.nspec = in.options.resolved_nspec(in.psf->nfiber);
  fr.specmin = in.options.specmin;
}

}  // namespace kspecter::parallel::job
