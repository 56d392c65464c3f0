// A whole extraction job, the same for every front end (the `kspecter` CLI, the Python module):
// one frame or many, from files or from memory, spread over the ranks of a communicator
// (frame_schedule.hpp). Each rank reads its next frames and writes its last ones on background
// threads (io_worker.hpp) while the device extracts; ranks that share a frame split its bundles
// and gather them; a failure anywhere stops every rank at its next frame, and all of them learn
// it (job_monitor.hpp). What the job says while it runs goes to a JobProgress.
#pragma once

#include <kspecter/core/log.hpp>
#include <kspecter/core/profiling.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/extract/options.hpp>
#include <kspecter/parallel/communicator.hpp>
#include <kspecter/parallel/frame_io.hpp>
#include <kspecter/parallel/job_monitor.hpp>

#include <exception>
#include <future>
#include <memory>
#include <string>
#include <vector>

namespace kspecter::parallel {

struct JobOptions {
  extract::ExtractOptions extract;  // for every frame (a frame's own grid replaces the job's)
  std::string backend = "auto";     // extract::backend_names()
  bool model = false;               // compute the model image (also when a frame's model is set)
  DesiOptions desi;                 // desi_extract_spectra's: grid default, -f, --no-scores
  /// frames[first_input_frame]'s input, when the front end has started reading it already
  /// (start_reading, start_first_frames): the CLI reads a rank's first frame while MPI and the
  /// GPU start up, which take about as long. Used by the rank whose first frame it is, in
  /// place of reading it again.
  std::shared_future<FrameInput> first_input;
  int first_input_frame = 0;
};

/// Starts reading `frame` (read_frame_input) on a thread of its own. It needs neither MPI nor
/// Kokkos, so it may run while they start; pass the result as JobOptions::first_input.
std::shared_future<FrameInput> start_reading(JobFrame const& frame, JobOptions const& options);

/// A rank's first frame, read ahead: its index in the job's frames and its input.
struct FirstRead {
  int frame = 0;
  std::shared_future<FrameInput> input;
};

/// Starts reading the first frame the job's schedule will give this process, and inflating
/// the gzipped inputs of the frames after it, taking its rank and the job's size from the
/// launcher's environment (launcher_rank, launcher_size): run before MPI and Kokkos start, a
/// batch's first frames are then read during their start-up. Pass the result as
/// JobOptions::first_input and first_input_frame. A frame the job then gives another rank
/// costs only the wasted read; prefetched bytes not taken are dropped at the job's end.
FirstRead start_first_frames(std::vector<JobFrame> const& frames, JobOptions const& options);

/// What the job tells its front end while it runs. Every method has a silent default.
class JobProgress {
 public:
  virtual ~JobProgress() = default;
  /// Rank 0, once, before any frame.
  virtual void started(int /*nframes*/, int /*nranks*/) {}
  /// Rank 0: a frame was finished somewhere in the job; `elapsed` since the start, `eta` the
  /// time left at the rate so far.
  virtual void frame_done(FrameDone const& /*done*/, int /*nframes*/, JobFrame const& /*frame*/,
                          double /*elapsed*/, double /*eta*/) {}
  /// Rank 0, for the frames it extracts: `done` of `total` bundles of its frame `mine` (0-based)
  /// of `nmine`.
  virtual void batches_done(int /*mine*/, int /*nmine*/, int /*done*/, int /*total*/,
                            JobFrame const& /*frame*/, double /*elapsed*/) {}
  /// Every rank: a frame it works on alone has been read.
  virtual void frame_read(JobFrame const& /*frame*/) {}
  /// Every rank: the stage times of its share of a frame.
  virtual void frame_extracted(JobFrame const& /*frame*/, StageTimes const& /*times*/) {}
  /// Every rank, once: the job will run nothing more on the device (its last frame is
  /// extracted, the kept buffers freed); only its last writes remain. A front end that needs
  /// the device no more may let it go here (Environment::release_device).
  virtual void device_done() {}
  /// The rank that writes a frame (its group's rank 0), once the frame is gathered, its
  /// BAD2DFIT bits set, and before it is written: the whole frame, for reports of its quality.
  /// Called on the job's writer threads, two frames' at once where there are two: it must be
  /// thread-safe (a Logger's lines are).
  virtual void frame_finished(JobFrame const& /*frame*/, extract::FrameResult const& /*result*/) {}
};

/// The CLI's progress lines on a Logger (info: frames and batches; debug: reads, stage times).
class LogProgress : public JobProgress {
 public:
  explicit LogProgress(Logger const& log) : log_(log) {}
  void started(int nframes, int nranks) override;
  void frame_done(FrameDone const& done, int nframes, JobFrame const& frame, double elapsed,
                  double eta) override;
  void batches_done(int mine, int nmine, int done, int total, JobFrame const& frame,
                    double elapsed) override;
  void frame_read(JobFrame const& frame) override;
  void frame_extracted(JobFrame const& frame, StageTimes const& times) override;

 private:
  Logger const& log_;
};

/// How the job went, on every rank.
struct JobOutcome {
  JobSummary summary;              // the same on every rank: failure, frames, busiest rank
  double wall_seconds = 0;         // the slowest rank's time for the whole job
  std::string space;               // the execution space the backend ran on
  std::exception_ptr local_error;  // this rank's own failure (its type intact), if any
  StageTimes times;                // this rank's stage times, summed over its frames
  /// By frame: the gathered result of each frame with keep_result, on the rank that holds
  /// the whole frame (its group's rank 0); null elsewhere.
  std::vector<std::shared_ptr<extract::FrameResult>> results;
  bool ok() const { return !summary.failed; }
};

/// Runs the job on every rank of `comm` (collective; the job talks on its own duplicate of
/// `comm`). Returns on every rank, also after a failure (none hangs, none aborts the others);
/// never throws for a frame's failure, only for bad job-level arguments (ParameterError before
/// any communication). Outputs appear only complete (written under a temporary name, then
/// renamed); a frame that failed leaves its outputs untouched.
JobOutcome run_extract_job(Communicator const& comm, std::vector<JobFrame> const& frames,
                           JobOptions const& options, JobProgress& progress);

}  // namespace kspecter::parallel
