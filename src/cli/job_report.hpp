// What `kspecter extract` reports of a finished job besides its summary line, for pipelines:
// WARNINGs about the frame's quality (failed patches, bins lost to float32, fibers with many
// masked bins) and the job's times as JSON (--timing-json).
#pragma once

#include <kspecter/core/log.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/parallel/extract_job.hpp>

#include <string>

namespace kspecter::cli {

/// WARNING lines on `log` for frame `name`: patches whose factorisation failed
/// (ExtractStats::nfailed), the fibers and wavelengths of bins with BAD2DFIT and ivar = 0 (a
/// failed patch's bins, or numbers beyond float32: the frame does not tell which), and every
/// fiber with more than `masked_fraction` of its bins at ivar = 0, with their wavelength
/// ranges. At most 20 fiber lines each, then a count of the rest.
void warn_about_frame(Logger const& log, extract::FrameResult const& frame, std::string const& name,
                      double masked_fraction);

/// Writes the job's times to `path` as one JSON object: kspecter's version, ok, frames,
/// ranks, the execution space, startup_seconds (process start to MPI, Kokkos and the device
/// up), job_wall_seconds (the slowest rank's job), busiest_rank_seconds, total_seconds
/// (process start to now) and stages (this rank's StageTimes, seconds by profiling name).
/// Throws Error when the file cannot be written.
void write_timing_json(std::string const& path, parallel::JobOutcome const& out, int nframes,
                       int nranks, double startup_seconds);

}  // namespace kspecter::cli
