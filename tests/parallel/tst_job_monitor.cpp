// The job monitor under MPI: rank 0 hears of every frame once, a failure reaches every rank
// without a collective, and finish() gives every rank the same outcome (first failure in rank
// order, frames written, busiest rank) without hanging.
#include <kspecter/parallel/job_monitor.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <set>
#include <string>

using kspecter::parallel::Communicator;
using kspecter::parallel::FrameDone;
using kspecter::parallel::JobMonitor;

TEST(mpi, job_monitor_reports_every_frame_once_to_rank_0) {
  auto const world = Communicator::world();
  int const rank = world.rank(), size = world.size();
  int const nframes = 7;
  std::vector<FrameDone> heard;
  {
    JobMonitor m(world, [&](FrameDone const& d) { heard.push_back(d); });
    for (int f = rank; f < nframes; f += size) {
      m.frame_done(f);
      EXPECT_FALSE(m.poll());
    }
    auto const s = m.finish(1.0 + rank);
    EXPECT_FALSE(s.failed);
    EXPECT_TRUE(s.error.empty());
    EXPECT_EQ(s.frames_done, nframes);
    EXPECT_DOUBLE_EQ(s.max_busy_seconds, double(size));
  }
  if (rank == 0) {
    ASSERT_EQ(static_cast<int>(heard.size()), nframes);
    std::set<int> frames;
    for (std::size_t i = 0; i < heard.size(); ++i) {
      frames.insert(heard[i].frame);
      EXPECT_EQ(heard[i].rank, heard[i].frame % size) << "frame " << heard[i].frame;
      EXPECT_EQ(heard[i].frames_done, static_cast<int>(i) + 1);
    }
    EXPECT_EQ(static_cast<int>(frames.size()), nframes);
  } else {
    EXPECT_TRUE(heard.empty());
  }
}

TEST(mpi, a_failure_reaches_every_rank_and_the_first_one_in_rank_order_is_reported) {
  auto const world = Communicator::world();
  int const rank = world.rank(), size = world.size();
  // The last rank fails after one frame; with 4 ranks rank 1 fails too (its message wins).
  bool const fails = rank == size - 1 || (size >= 4 && rank == 1);
  JobMonitor m(world);
  m.frame_done(rank);
  if (fails) m.fail("boom on rank " + std::to_string(rank));
  // Every rank learns of the failure from its own polls, without any collective.
  auto const t0 = std::chrono::steady_clock::now();
  bool heard = false;
  while (!(heard = m.poll()) && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20)) {
  }
  EXPECT_TRUE(heard) << "rank " << rank << " never heard of the failure";
  auto const s = m.finish(0.5);
  EXPECT_TRUE(s.failed);
  int const first = size >= 4 ? 1 : size - 1;
  EXPECT_EQ(s.error, "boom on rank " + std::to_string(first));
  std::vector<int> expected{first};
  if (size >= 4) expected.push_back(size - 1);
  EXPECT_EQ(s.failed_ranks, expected);
  EXPECT_EQ(s.frames_done, size);
}
