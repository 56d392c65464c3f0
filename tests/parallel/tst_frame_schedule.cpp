// The frame schedule: every frame exactly once, LPT balance within one frame of the mean,
// groups that cover the ranks when frames are fewer, and the same answer every time.
#include <kspecter/core/error.hpp>
#include <kspecter/parallel/frame_schedule.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

using kspecter::parallel::FrameTask;
using kspecter::parallel::schedule_frames;

namespace {
std::vector<double> exposure_costs() {
  // 10 spectrographs x b, r, z: spectra x wavelength bins of DESI's arms.
  std::vector<double> c;
  for (int sp = 0; sp < 10; ++sp)
    for (double nwave : {2751.0, 2326.0, 2881.0}) c.push_back(500 * nwave);
  return c;
}
}  // namespace

TEST(FrameSchedule, every_frame_once_and_loads_within_one_frame_of_the_mean) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  for (int nranks : {1, 2, 3, 4, 7, 8}) {
    for (int nframes : {nranks, nranks + 1, 30, 61}) {
      std::vector<double> cost(static_cast<std::size_t>(nframes));
      for (auto& c : cost) c = u(rng);
      auto const s = schedule_frames(cost, nranks);
      ASSERT_EQ(static_cast<int>(s.size()), nranks);
      std::vector<int> seen(static_cast<std::size_t>(nframes), 0);
      std::vector<double> load;
      for (auto const& tasks : s) {
        double l = 0;
        for (std::size_t i = 0; i < tasks.size(); ++i) {
          FrameTask const& t = tasks[i];
          ++seen[std::size_t(t.frame)];
          EXPECT_EQ(t.group_size, 1);
          EXPECT_EQ(t.group_rank, 0);
          if (i > 0) EXPECT_LT(tasks[i - 1].frame, t.frame) << "tasks in frame order";
          l += cost[std::size_t(t.frame)];
        }
        load.push_back(l);
      }
      for (int n : seen) EXPECT_EQ(n, 1);
      double const total = std::accumulate(cost.begin(), cost.end(), 0.0);
      double const biggest = *std::max_element(cost.begin(), cost.end());
      // LPT's bound: the busiest rank ends within one frame of the mean.
      EXPECT_LE(*std::max_element(load.begin(), load.end()), total / nranks + biggest + 1e-12)
          << nframes << " frames on " << nranks << " ranks";
      for (double l : load) EXPECT_GT(l, 0);
    }
  }
}

// Whole frames cannot split 30 frames evenly over 4 ranks; LPT keeps the busiest rank within
// 6 % of the ideal share (94 % efficiency at best), well inside the 85 % the study asks for.
TEST(FrameSchedule, a_desi_exposure_keeps_two_and_four_ranks_within_six_percent_of_ideal) {
  auto const cost = exposure_costs();
  double const total = std::accumulate(cost.begin(), cost.end(), 0.0);
  for (int nranks : {2, 4}) {
    auto const s = schedule_frames(cost, nranks);
    double worst = 0;
    for (auto const& tasks : s) {
      double l = 0;
      for (auto const& t : tasks) l += cost[std::size_t(t.frame)];
      worst = std::max(worst, l);
    }
    EXPECT_LT(worst / (total / nranks), 1.06) << nranks << " ranks";
  }
}

TEST(FrameSchedule, fewer_frames_than_ranks_form_groups_that_cover_every_rank) {
  for (int nranks : {2, 3, 4, 5, 8}) {
    for (int nframes = 1; nframes < nranks; ++nframes) {
      auto const s = schedule_frames(std::vector<double>(std::size_t(nframes), 1.0), nranks);
      std::vector<int> group_size(static_cast<std::size_t>(nframes), 0);
      int last_group = 0;
      for (int r = 0; r < nranks; ++r) {
        ASSERT_EQ(s[std::size_t(r)].size(), 1u) << "rank " << r;
        FrameTask const& t = s[std::size_t(r)][0];
        EXPECT_EQ(t.frame, t.group);
        EXPECT_GE(t.group, last_group) << "groups are contiguous runs of ranks";
        if (t.group != last_group) EXPECT_EQ(t.group_rank, 0);
        last_group = t.group;
        EXPECT_EQ(t.group_rank, group_size[std::size_t(t.group)]) << "ranks in order";
        ++group_size[std::size_t(t.group)];
      }
      for (int r = 0; r < nranks; ++r) {
        FrameTask const& t = s[std::size_t(r)][0];
        EXPECT_EQ(t.group_size, group_size[std::size_t(t.group)]);
      }
      auto const [lo, hi] = std::minmax_element(group_size.begin(), group_size.end());
      EXPECT_GE(*lo, 1);
      EXPECT_LE(*hi - *lo, 1);
    }
  }
}

TEST(FrameSchedule, is_deterministic_and_refuses_no_ranks) {
  auto const cost = exposure_costs();
  auto const a = schedule_frames(cost, 4), b = schedule_frames(cost, 4);
  for (std::size_t r = 0; r < a.size(); ++r) {
    ASSERT_EQ(a[r].size(), b[r].size());
    for (std::size_t i = 0; i < a[r].size(); ++i) EXPECT_EQ(a[r][i].frame, b[r][i].frame);
  }
  EXPECT_THROW(schedule_frames(cost, 0), kspecter::ParameterError);
  EXPECT_TRUE(schedule_frames({}, 3)[2].empty());
}
