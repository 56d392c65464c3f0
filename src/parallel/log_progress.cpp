#include <kspecter/parallel/extract_job.hpp>

#include <cstdio>

namespace kspecter::parallel {

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

}  // namespace kspecter::parallel
