// The work of `kspecter extract` once its arguments are read: one frame or many, spread over
// the job's MPI ranks (parallel/frame_schedule.hpp), each rank reading its next frame and
// writing its last one on a background thread while the device extracts.
#pragma once

#include "frame_list.hpp"
#include "frame_setup.hpp"
#include "session.hpp"

#include <kspecter/extract/options.hpp>

#include <string>
#include <vector>

namespace kspecter::cli {

struct ExtractJob {
  std::vector<FrameSpec> frames;
  extract::ExtractOptions options;  // for every frame (a frame's own grid replaces -w)
  DesiOptions desi;                 // desi_extract_spectra's -w default, -f, --no-scores
  std::string backend = "auto";     // auto, host, serial, openmp, cuda
  std::string model;                // single-frame jobs: also write the model image here
  bool truth_pulls = true;          // single-frame jobs: compare with truth in the input
};

/// Runs the job on every rank of the session. Returns the exit status: 0, or 1 after rank 0
/// printed the first failure (every rank returns; none hangs, none aborts the others).
/// Outputs appear only complete (written under a temporary name, then renamed); a frame that
/// failed leaves its output untouched, and the job stops at each rank's next frame.
int run_extract_job(Session& session, ExtractJob const& job);

}  // namespace kspecter::cli
