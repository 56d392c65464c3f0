// Which rank extracts which frames of a job. With at least as many frames as ranks, whole
// frames go to ranks (no communication while they work); with fewer, the ranks form one group
// per frame and split its bundles (parallel/bundles.hpp).
#pragma once

#include <vector>

namespace kspecter::parallel {

/// One frame of a rank's work and the ranks it shares that frame with.
struct FrameTask {
  int frame = 0;       // index into the job's frame list
  int group = 0;       // ranks with the same group work on the same frame
  int group_rank = 0;  // this rank's place in its group (0 writes the frame)
  int group_size = 1;
};

/// The work of every rank: result[r] lists rank r's tasks in frame order.
///
/// `cost[f]` is frame f's relative cost (e.g. spectra x wavelengths). When there are at least
/// as many frames as ranks, frames are dealt whole by longest-processing-time-first (the most
/// costly frame to the least loaded rank; ties to the lower frame and rank), which keeps the
/// slowest rank within one frame of the mean. Otherwise the ranks are cut into
/// `cost.size()` contiguous groups whose sizes differ by at most one, group g on frame g.
/// Deterministic: the same costs and rank count give the same schedule on every rank.
std::vector<std::vector<FrameTask>> schedule_frames(std::vector<double> const& cost, int nranks);

}  // namespace kspecter::parallel
