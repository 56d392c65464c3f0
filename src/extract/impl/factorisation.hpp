// Stage "factorisation" (docs/algorithm.md §4): iCov = L L^T and the solution f = iCov^-1 y
// of every patch; a patch whose Cholesky fails goes on with L = I and y = 0.
#pragma once

#include "context.hpp"
#include "solve_variant.hpp"
#include "workspace.hpp"

#include <kspecter/solve/batched.hpp>

namespace kspecter::extract::detail {

// After the Cholesky: a patch whose factorisation failed gets L = I and y = 0, so every
// later step stays finite; its bins are masked (ivar = 0) when the results are written.
template <class ExecSpace>
struct RepairFailed {
  using T = Types<ExecSpace>;
  using Member = typename T::Member;
  typename T::Mat icov;
  typename T::Vec rhs;
  Kokkos::View<const int*, typename ExecSpace::memory_space> info;
  int n;
  KOKKOS_INLINE_FUNCTION void operator()(Member const& t) const {
    int const p = t.league_rank();
    if (info(p) == 0) return;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, n), [&](int i) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, n),
                           [&](int j) { icov(p, i, j) = (i == j) ? 1.0 : 0.0; });
      Kokkos::single(Kokkos::PerThread(t), [&]() { rhs(p, i) = 0.0; });
    });
  }
};

/// The dense path's solution f = iCov^-1 y (in b.rhs) with the factor in b.icov and the
/// status in b.info, a failed patch repaired first. Returns the patches whose factorisation
/// failed. Also what a frame that keeps the last frame's factor runs (reuse.hpp).
template <class ExecSpace>
int solve_with_factor(FrameContext<ExecSpace> const& fc, BatchViews<ExecSpace> const& b,
                      DenseSolve) {
  using T = Types<ExecSpace>;
  using Policy = typename T::Policy;
  Kokkos::parallel_for("kspecter::extract::repair_failed",
                       Policy(fc.space, b.P, T::Tune::team, T::Tune::vector),
                       RepairFailed<ExecSpace>{b.icov, b.rhs, b.info, fc.shape.n});
  solve::cholesky_solve(fc.space, b.icov, b.rhs);
  auto const info = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.info);
  int nfailed = 0;
  for (int i = 0; i < b.P; ++i) nfailed += info(i) != 0 ? 1 : 0;
  return nfailed;
}

/// The dense path. Returns the patches whose factorisation failed.
template <class ExecSpace>
int factorise(FrameContext<ExecSpace> const& fc, BatchViews<ExecSpace> const& b, DenseSolve) {
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::factorisation", fc.times);
  solve::cholesky(fc.space, b.icov, b.info);
  return solve_with_factor(fc, b, DenseSolve{});
}

}  // namespace kspecter::extract::detail
