// `kspecter extract` once its arguments are read: the frames and options handed to the library's
// job (parallel/extract_job.hpp), and what the command prints of its outcome.
#pragma once

#include "frame_list.hpp"
#include "session.hpp"

#include <kspecter/extract/options.hpp>
#include <kspecter/parallel/extract_job.hpp>
#include <kspecter/parallel/frame_io.hpp>

#include <future>
#include <string>
#include <vector>

namespace kspecter::cli {

struct ExtractJob {
  std::vector<parallel::JobFrame> frames;  // as the command gave them (read_frame_list)
  extract::ExtractOptions options;         // for every frame (a frame's own grid replaces -w)
  parallel::DesiOptions desi;              // desi_extract_spectra's -w default, -f, --no-scores
  std::string backend = "auto";            // one of extract::backend_names()
  std::string model;                       // single-frame jobs: also write the model image here
  bool truth_pulls = true;                 // single-frame jobs: compare with truth in the input
  std::string timing_json;   // --timing-json: the job's times as JSON (job_report.hpp)
  double warn_masked = 0.2;  // single frames: WARNING for fibers more masked than this
};

/// Runs the job on every rank of the session. Returns the exit status: 0, or 1 after rank 0
/// printed the first failure (every rank returns; none hangs, none aborts the others).
/// Outputs appear only complete (written under a temporary name, then renamed); a frame that
/// failed leaves its output untouched, and the job stops at each rank's next frame.
/// `first`: this process's first frame, from start_first_read.
int run_job(Session& session, ExtractJob const& job, parallel::FirstRead first = {});

/// Starts reading this process's first frame at once, on a thread of its own, so that the read
/// overlaps MPI's and the GPU's start-up (measured in perf/gpu_runs.md): a job of one frame
/// reads it, a batch the first frame the schedule gives this rank, while the gzipped images
/// of its next frames start inflating (parallel::start_first_frames).
parallel::FirstRead start_first_read(ExtractJob const& job);

}  // namespace kspecter::cli
