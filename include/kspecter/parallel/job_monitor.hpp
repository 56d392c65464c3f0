// What the ranks of a many-frame job tell each other while they work without waiting for one
// another: rank 0 hears of every finished frame (progress, ETA) and every rank hears of a
// failure (so that all stop at their next frame). One collective at the end settles the job.
#pragma once

#include <kspecter/parallel/communicator.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kspecter::parallel {

/// A frame finished somewhere in the job, as rank 0 learns it.
struct FrameDone {
  int frame = 0;        // index into the job's frame list
  int rank = 0;         // the rank that wrote it
  int frames_done = 0;  // frames finished in the whole job so far, this one included
};

/// How the job ended, the same on every rank after JobMonitor::finish.
struct JobSummary {
  bool failed = false;
  std::string error;  // the first failure, in rank order ("" when none)
  std::vector<int> failed_ranks;
  int frames_done = 0;          // frames written by the whole job
  double max_busy_seconds = 0;  // the busiest rank's extraction time (reported by each rank)
};

class JobMonitor {
 public:
  /// `on_done` is called on rank 0 (only) for every finished frame, its own included, from
  /// whichever of this object's calls received the news.
  JobMonitor(Communicator comm, std::function<void(FrameDone const&)> on_done = {});
  ~JobMonitor();
  JobMonitor(JobMonitor const&) = delete;
  JobMonitor& operator=(JobMonitor const&) = delete;

  /// This rank has written `frame`.
  void frame_done(int frame);
  /// This rank failed with `message` (the first call counts): every rank is told.
  void fail(std::string const& message);
  /// Reads what other ranks said so far, without waiting; true once any rank has failed.
  bool poll();

  /// Collective over the communicator, called once by every rank after its last frame:
  /// rank 0 waits for every rank's end (logging their frames as they come), then all learn
  /// the outcome. `busy_seconds`: this rank's extraction time, for the summary.
  JobSummary finish(double busy_seconds);

 private:
  void handle_one(int source, int tag);
  Communicator comm_;
  std::function<void(FrameDone const&)> on_done_;
  std::string own_error_;
  bool heard_failure_ = false;
  int frames_done_ = 0;              // rank 0: the job's count; elsewhere: this rank's
  std::vector<std::string> errors_;  // by rank (rank 0 and receivers of notices)
  std::vector<char> notice_from_;    // failure notices received, by rank
  struct Pending;
  std::vector<std::unique_ptr<Pending>> pending_;  // sends to complete before finish returns
};

}  // namespace kspecter::parallel
