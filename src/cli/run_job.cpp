#include "run_job.hpp"

#include "job_report.hpp"

#include <kspecter/extract/truth_pulls.hpp>
#include <kspecter/io/preproc_file.hpp>
#include <kspecter/parallel/communicator.hpp>
#include <kspecter/parallel/extract_job.hpp>

#include <cstdio>
#include <functional>
#include <future>
#include <optional>

namespace kspecter::cli {

namespace {

// The command's frames, with what a single frame's job adds.
std::vector<parallel::JobFrame> job_frames(ExtractJob const& job) {
  std::vector<parallel::JobFrame> frames = job.frames;
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
// A single frame's pulls against its truth start there too, beside its write, not after it
// (perf/gpu_runs.md, issue 35, session 23).
class FrameReports : public parallel::LogProgress {
 public:
  using Pulls = std::optional<extract::PullStats>;
  FrameReports(Logger const& log, double warn_masked,
               std::function<Pulls(extract::FrameResult const&)> pulls_of = {},
               std::function<void()> on_device_done = {})
      : LogProgress(log),
        every_rank_(log.level(), /*speaks=*/true),
        warn_masked_(warn_masked),
        pulls_of_(std::move(pulls_of)),
        on_device_done_(std::move(on_device_done)) {}
  void device_done() override {
    if (on_device_done_) on_device_done_();
  }
  void frame_finished(parallel::JobFrame const& frame,
                      extract::FrameResult const& result) override {
    // The result lives on in the job's outcome (keep_result), and the write reads it only.
    if (pulls_of_) pulls_ = std::async(std::launch::async, pulls_of_, std::cref(result));
    warn_about_frame(every_rank_, result, frame.output.empty() ? frame.origin : frame.output,
                     warn_masked_);
  }
  /// The pulls started by frame_finished, if it ran.
  std::future<Pulls>& pulls() { return pulls_; }

 private:
  Logger every_rank_;
  double warn_masked_;
  std::function<Pulls(extract::FrameResult const&)> pulls_of_;
  std::function<void()> on_device_done_;
  std::future<Pulls> pulls_;
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

// The pulls of a single frame against the truth read with its image, or read now when the
// image came another way; nullopt when the input has no truth.
FrameReports::Pulls single_pulls(extract::FrameResult const& single, ExtractJob const& job,
                                 std::shared_future<parallel::FrameInput> const& input) {
  std::optional<io::TruthSpectra> truth;
  if (input.valid() && input.get().file_image)
    truth = input.get().file_image->truth;
  else
    truth = io::read_truth(job.frames[0].image);
  if (!truth) return std::nullopt;
  return extract::truth_pulls(single, truth->wavelength, truth->flux, truth->specmin, truth->nspec);
}

void report_single(Session& session, ExtractJob const& job, parallel::JobOutcome const& out,
                   int nranks, FrameReports::Pulls const& pulls) {
  extract::FrameResult const& single = *out.results[0];
  session.log.info("wrote " + job.frames[0].output +
                   (job.model.empty() ? "" : " and " + job.model));
  std::printf("extracted %d spectra x %d wavelengths in %.3f s on %d rank%s (%s)\n", single.nspec,
              single.nwave, out.summary.max_busy_seconds, nranks, nranks == 1 ? "" : "s",
              out.space.c_str());
  if (pulls)
    std::printf(
        "pull against truth (flux - R truth) sqrt(ivar) over %lld bins: median %+.4f, "
        "robust std %.4f, mean %+.4f, std %.4f\n",
        pulls->n, pulls->median, pulls->robust_std, pulls->mean, pulls->std);
}

}  // namespace

parallel::FirstRead start_first_read(ExtractJob const& job) {
  if (job.frames.size() == 1)
    return {0, parallel::start_reading(job_frames(job)[0], job_options(job))};
  return parallel::start_first_frames(job_frames(job), job_options(job));
}

int run_job(Session& session, ExtractJob const& job, parallel::FirstRead first) {
  auto const world = parallel::Communicator::world();
  int const nframes = static_cast<int>(job.frames.size());
  int const nranks = world.size();
  parallel::JobOptions options = job_options(job);
  options.first_input = first.input;
  options.first_input_frame = first.frame;
  std::function<FrameReports::Pulls(extract::FrameResult const&)> pulls_of;
  if (nframes == 1 && job.truth_pulls)
    pulls_of = [&job, input = first.input](extract::FrameResult const& single) {
      return single_pulls(single, job, input);
    };
  // `extract` uses the device for nothing after the job: its context goes while the last
  // frames are written (a single process; release_device leaves an MPI job's alone).
  FrameReports progress(session.log, job.warn_masked, pulls_of,
                        [&session] { session.env->release_device(); });
  auto const out = parallel::run_extract_job(world, job_frames(job), options, progress);
  // The pulls read the frame that `out` holds: they end before it goes, on every path.
  struct PullsEnd {
    FrameReports& reports;
    ~PullsEnd() {
      if (reports.pulls().valid()) reports.pulls().wait();
    }
  } const pulls_end{progress};
  if (!job.timing_json.empty() && world.rank() == 0)
    write_timing_json(job.timing_json, out, nframes, nranks, session.startup_seconds);

  if (!out.ok()) return world.rank() == 0 ? report_failure(out.summary, nframes) : 1;
  if (world.rank() != 0) return 0;
  if (nframes == 1) {
    // A written single frame went through frame_finished, which started its pulls.
    FrameReports::Pulls const pulls =
        progress.pulls().valid() ? progress.pulls().get() : FrameReports::Pulls{};
    report_single(session, job, out, nranks, pulls);
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
