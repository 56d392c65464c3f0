// The Kokkos compatibility layer gives the same numbers as the C++ standard library, on
// every backend; stage timers and team scratch queries work there.
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/core/profiling.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {

TEST(TEST_CATEGORY, compat_math_matches_std) {
  int const n = 257;
  Kokkos::View<double* [6], TEST_EXECSPACE::memory_space> out("out", n);
  Kokkos::parallel_for(
      "kspecter::test::compat_math", Kokkos::RangePolicy<TEST_EXECSPACE>(0, n),
      KOKKOS_LAMBDA(int i) {
        double const x = -6.0 + 12.0 * i / (n - 1);
        out(i, 0) = kspecter::compat::erf(x);
        out(i, 1) = kspecter::compat::exp(-0.5 * x * x);
        out(i, 2) = kspecter::compat::sqrt(x * x + 1.0);
        out(i, 3) = kspecter::compat::floor(x);
        out(i, 4) = kspecter::compat::pow(x * x + 1.0, 1.25);
        out(i, 5) = kspecter::compat::isfinite(x / 0.0) ? 1.0 : 0.0;
      });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  for (int i = 0; i < n; ++i) {
    double const x = -6.0 + 12.0 * i / (n - 1);
    EXPECT_NEAR(h(i, 0), std::erf(x), 1e-15) << x;
    EXPECT_NEAR(h(i, 1), std::exp(-0.5 * x * x), 1e-15) << x;
    EXPECT_NEAR(h(i, 2), std::sqrt(x * x + 1.0), 1e-14) << x;
    EXPECT_EQ(h(i, 3), std::floor(x)) << x;
    EXPECT_NEAR(h(i, 4), std::pow(x * x + 1.0, 1.25), 1e-12) << x;
    EXPECT_EQ(h(i, 5), 0.0) << "x/0 is not finite";
  }
}

TEST(TEST_CATEGORY, stage_timer_records_fenced_work) {
  kspecter::StageTimes times;
  TEST_EXECSPACE space;
  Kokkos::View<double*, TEST_EXECSPACE::memory_space> v("v", 1 << 20);
  {
    kspecter::StageTimer<TEST_EXECSPACE> t(space, "kspecter::test::fill", &times);
    Kokkos::deep_copy(space, v, 1.0);
  }
  {
    kspecter::StageTimer<TEST_EXECSPACE> t(space, "kspecter::test::fill", &times);
    Kokkos::deep_copy(space, v, 2.0);
  }
  ASSERT_EQ(times.entries().size(), 1u);
  EXPECT_EQ(times.entries()[0].stage, "kspecter::test::fill");
  EXPECT_GT(times.total(), 0.0);
}

TEST(TEST_CATEGORY, team_scratch_limit_is_usable) {
  using Policy = Kokkos::TeamPolicy<TEST_EXECSPACE>;
  int const max_bytes = Policy::scratch_size_max(0);
  ASSERT_GE(max_bytes, 16 * 1024);
  // Use a scratch buffer sized from the limit and check every team sees its own data.
  int const n = (max_bytes / 2) / int(sizeof(double));
  using Scratch = Kokkos::View<double*, typename TEST_EXECSPACE::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  int const nteams = 8;
  Kokkos::View<double*, TEST_EXECSPACE::memory_space> sums("sums", nteams);
  Kokkos::parallel_for(
      "kspecter::test::scratch",
      Policy(nteams, Kokkos::AUTO).set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(n))),
      KOKKOS_LAMBDA(Policy::member_type const& team) {
        Scratch s(team.team_scratch(0), n);
        int const t = team.league_rank();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](int i) { s(i) = t + 1.0; });
        team.team_barrier();
        double sum = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, n), [&](int i, double& acc) { acc += s(i); }, sum);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { sums(t) = sum; });
      });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sums);
  for (int t = 0; t < nteams; ++t) EXPECT_DOUBLE_EQ(h(t), double(n) * (t + 1));
}

}  // namespace
