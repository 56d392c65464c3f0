// A sum over a team's threads in a fixed order, for kernels that take one every step of a
// sequential loop (the tridiagonalisation).
#pragma once

#include <Kokkos_Core.hpp>

namespace kspecter::solve::detail {

/// Doubles of team scratch team_sum takes for a team of `ts` threads.
KOKKOS_INLINE_FUNCTION int team_sum_doubles(int ts) { return ts + (ts + 7) / 8; }

/// The team's sum of every thread's `x`, returned to every thread, in a fixed order: the
/// partials to scratch `red` (team_sum_doubles), sums of eight by one thread each, then every
/// thread adds those. Two barriers and a few dozen instructions: Kokkos' team reduction, a
/// generic loop of shuffles and shared memory, took a large share of the tridiagonalisation's
/// instructions and stalls (perf/gpu_runs.md, session 18). Calls may
/// follow each other with no barrier between: a thread writes red[rank] again only after the
/// last barrier of the call before, which every thread passed after its own group sum, and
/// red[ts + ...] only after the first barrier of its call, which every thread reaches after its
/// reads of the call before.
template <class Member>
KOKKOS_INLINE_FUNCTION double team_sum(Member const& team, double x, double* red) {
  int const rank = team.team_rank(), ts = team.team_size(), groups = (ts + 7) / 8;
  red[rank] = x;
  team.team_barrier();
  if (rank < groups) {
    double g = 0.0;
    for (int q = 8 * rank; q < 8 * rank + 8 && q < ts; ++q) g += red[q];
    red[ts + rank] = g;
  }
  team.team_barrier();
  double total = 0.0;
  for (int q = 0; q < groups; ++q) total += red[ts + q];
  return total;
}

}  // namespace kspecter::solve::detail
