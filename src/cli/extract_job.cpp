#include "extract_job.hpp"

#include "job_report.hpp"

#include <kspecter/extract/truth_pulls.hpp>
#include <kspecter/io/preproc_file.hpp>
#include <kspecter/parallel/communicator.hpp>
#include <kspecter/parallel/extract_job.hpp>

#include <cstdio>

namespace kspecter::cli {

namespace {

std::vector<parallel::JobFrame> job_frames(ExtractJob const& job) {
  std::vector<parallel::JobFrame> frames;
  for (FrameSpec const& f : job.frames) {
    parallel::JobFrame j;
    j.image = f.image;
    j.psf = f.psf;
    j.grid = f.grid;
    j.output = f.output;
    j.origin = f.origin;
    frames.push_back(std::move(j));
  }
  if (frames.size() == 1) {
    frames[0].model = job.model;
    frames[0].keep_result = true;       // for the summary line and the pulls against truth
    frames[0].truth = job.truth_pulls;  // read with the image: a .gz is inflated once
  }
  return frames;
}

parallel::JobOptions job_options(ExtractJob const& job) {
  parallel::JobOptions options;
  options.extract = job.options;
  options.backend = job.backend;
  options.desi = job.desi;
  return options;
}

// The job's progress on rank 0's log, and each frame's quality WARNINGs from the rank that
// writes it (warn_about_frame), in a batch as for a single frame.
class FrameReports : public parallel::LogProgress {
 public:
  FrameReports(Logger const& log, double warn_masked)
      : LogProgress(log), every_rank_(log.level(), /*speaks=*/true), warn_masked_(warn_masked) {}
  void frame_finished(parallel::JobFrame const& frame,
                      extract::FrameResult const& result) override {
    warn_about_frame(every_rank_, result, frame.output.empty() ? frame.origin : frame.output,
                     warn_masked_);
  }

 private:
  Logger every_rank_;
  double warn_masked_;
};

int report_failure(parallel::JobSummary const& summary, int nframes) {
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

void report_single(Session& session, ExtractJob const& job, parallel::JobOutcome const& out,
                   int nranks, std::shared_future<parallel::FrameInput> const& input) {
  extract::FrameResult const& single = *out.results[0];
  session.log.info("wrote " + job.frames[0].output +
                   (job.model.empty() ? "" : " and " + job.model));
  std::printf("extracted %d spectra x %d wavelengths in %.3f s on %d rank%s (%s)\n", single.nspec,
              single.nwave, out.summary.max_busy_seconds, nranks, nranks == 1 ? "" : "s",
              out.space.c_str());
  if (!job.truth_pulls) return;
  // The truth read with the image, or read now when the image came another way.
  std::optional<io::TruthSpectra> truth;
  if (input.valid() && input.get().file_image)
    truth = input.get().file_image->truth;
  else
    truth = io::read_truth(job.frames[0].image);
  if (truth) {
    auto const p =
        extract::truth_pulls(single, truth->wavelength, truth->flux, truth->specmin, truth->nspec);
    std::printf(
        "pull against truth (flux - R truth) sqrt(ivar) over %lld bins: median %+.4f, "
        "robust std %.4f, mean %+.4f, std %.4f\n",
        p.n, p.median, p.robust_std, p.mean, p.std);
  }
}

}  // namespace

std::shared_future<parallel::FrameInput> start_single_read(ExtractJob const& job) {
  if (job.frames.size() != 1) return {};
  return parallel::start_reading(job_frames(job)[0], job_options(job));
}

void start_batch_prefetch(ExtractJob const& job) {
  if (job.frames.size() > 1) parallel::prefetch_first_frames(job_frames(job), job_options(job));
}

int run_extract_job(Session& session, ExtractJob const& job,
                    std::shared_future<parallel::FrameInput> first_input) {
  auto const world = parallel::Communicator::world();
  int const nframes = static_cast<int>(job.frames.size());
  int const nranks = world.size();
  parallel::JobOptions options = job_options(job);
  options.first_input = first_input;
  FrameReports progress(session.log, job.warn_masked);
  auto const out = parallel::run_extract_job(world, job_frames(job), options, progress);
  if (!job.timing_json.empty() && world.rank() == 0)
    write_timing_json(job.timing_json, out, nframes, nranks, session.startup_seconds);

  if (!out.ok()) return world.rank() == 0 ? report_failure(out.summary, nframes) : 1;
  if (world.rank() != 0) return 0;
  if (nframes == 1) {
    report_single(session, job, out, nranks, first_input);
  } else {
    std::printf(
        "extracted %d frames in %.3f s on %d rank%s (%s): %.3f frames/s; busiest rank "
        "extracted for %.3f s\n",
        nframes, out.wall_seconds, nranks, nranks == 1 ? "" : "s", out.space.c_str(),
        nframes / out.wall_seconds, out.summary.max_busy_seconds);
  }
  return 0;
}

}  // namespace kspecter::cli
