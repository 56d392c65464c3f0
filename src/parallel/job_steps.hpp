// The steps of one rank's extraction job (parallel/extract_job.hpp), each a type or function
// of its own so that the job's loop reads as them: read ahead, extract one frame's share,
// gather it, write behind, and stop every rank on a failure.
#pragma once

#include <kspecter/core/profiling.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/extract/kept_buffers.hpp>
#include <kspecter/parallel/communicator.hpp>
#include <kspecter/parallel/extract_job.hpp>
#include <kspecter/parallel/frame_schedule.hpp>
#include <kspecter/parallel/gather.hpp>
#include <kspecter/parallel/io_worker.hpp>
#include <kspecter/parallel/job_monitor.hpp>

#include <chrono>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <vector>

namespace kspecter::parallel::job {

using Clock = std::chrono::steady_clock;

/// Seconds since `t0` on the job's clock.
inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// The rank's I/O threads: two readers and two writers where the FITS library allows files on
/// several threads, so that the next frames are read side by side while the last ones are
/// written and neither a write (its gzip above all) nor one read holds up the device;
/// otherwise one thread that does all of it, in order.
class IoLanes {
 public:
  IoLanes();
  std::vector<IoWorker*> const& readers() const { return readers_; }
  std::vector<IoWorker*> const& writers() const { return writers_; }

 private:
  std::vector<std::unique_ptr<IoWorker>> threads_;
  std::vector<IoWorker*> readers_, writers_;
};

/// How many frames' gzipped images are inflated ahead of the readers, each on a thread of
/// its own and each holding its decompressed file (about 200 MiB for a DESI preproc).
std::size_t gzip_read_ahead();

/// Starts inflating the gzipped images of the rank's frames mine[first, first + count)
/// (capped at the end of its list); frames in memory have none.
void prefetch_inputs(std::vector<JobFrame> const& frames, std::vector<FrameTask> const& mine,
                     std::size_t first, std::size_t count);

/// The inputs of a rank's next frames, as many in flight as there are readers, each read on a
/// reader while the device extracts; the gzipped images of the frames after them start
/// inflating ahead of the readers (kspecter/io/gzip_prefetch.hpp).
class ReadAhead {
 public:
  ReadAhead(std::vector<IoWorker*> readers, std::vector<JobFrame> const& frames,
            std::vector<FrameTask> const& mine, JobOptions const& options);
  /// The input of the rank's frame `i` (they are taken in order), and the next read queued.
  /// `times` gets the read's time and how long the caller waited for it. Throws the read's
  /// error.
  FrameInput take(std::size_t i, StageTimes& times);
  /// Drops the reads not yet started: the job is stopping.
  void cancel();

 private:
  std::future<FrameInput> start(std::size_t i);
  std::vector<IoWorker*> readers_;
  std::vector<JobFrame> const& frames_;
  std::vector<FrameTask> const& mine_;
  JobOptions const& options_;
  std::deque<std::future<FrameInput>> ahead_;
};

/// The job's failures: the first is the rank's own (local_error), every one goes to the
/// monitor, which stops the other ranks at their next frame.
class Failures {
 public:
  Failures(JobOutcome& outcome, JobMonitor& monitor) : outcome_(outcome), monitor_(monitor) {}
  void record(JobFrame const& frame, std::exception_ptr error);

  /// Runs `step` for `frame` on every rank of `group` (collective): its result where it
  /// succeeded on all of them, nullopt where it failed on any (this rank's failure recorded).
  template <class F>
  auto agreed(JobFrame const& frame, Communicator const& group, F&& step)
      -> std::optional<std::invoke_result_t<F>> {
    std::optional<std::invoke_result_t<F>> result;
    std::exception_ptr error;
    try {
      result.emplace(step());
    } catch (...) {
      error = std::current_exception();
    }
    if (any_rank(error != nullptr, group)) {
      if (error) record(frame, error);
      return std::nullopt;
    }
    return result;
  }

 private:
  JobOutcome& outcome_;
  JobMonitor& monitor_;
};

/// The frames a rank finished, written on the writers in turn while the device goes on; each
/// is counted done (or failed) once its write has ended.
class WriteBehind {
 public:
  WriteBehind(std::vector<IoWorker*> writers, Failures& failures, JobMonitor& monitor,
              StageTimes& times)
      : writers_(std::move(writers)), failures_(failures), monitor_(monitor), times_(times) {}
  /// Applies desispec's BAD2DFIT rule to the gathered frame, reports it to `progress` and
  /// writes its outputs, on writer `lane` modulo their number: between two extractions the
  /// device would wait for BAD2DFIT's medians.
  void submit(std::size_t lane, int frame_index, JobFrame const& frame,
              std::shared_ptr<extract::FrameResult> result, FrameSetup setup,
              JobProgress& progress);
  /// Counts the writes that have ended, in order; `wait` waits for all of them.
  void collect(bool wait);

 private:
  struct Write {
    JobFrame const* frame;  // in the job's list, which outlives the job
    int index;
    std::future<double> seconds;
  };
  std::vector<IoWorker*> writers_;
  Failures& failures_;
  JobMonitor& monitor_;
  StageTimes& times_;
  std::deque<Write> writes_;
};

/// This rank's share of a frame's bundles, extracted (an empty share where its group has
/// more ranks than the frame has bundles: it still takes part in the gather).
std::shared_ptr<extract::FrameResult> extract_share(FrameTask const& task, JobFrame const& frame,
                                                    FrameInput const& in, JobOptions const& options,
                                                    extract::ExtractHooks const& hooks,
                                                    StageTimes& times);

/// Concatenates the group's shares of frame `in` on its rank 0, in rank order (collective).
void gather_frame(extract::FrameResult& fr, FrameInput const& in, Communicator const& group);

}  // namespace kspecter::parallel::job
