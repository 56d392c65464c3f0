// Batched Cholesky factorisation and solve (declared in batched.hpp): one matrix per team,
// blocked left-looking, the heavy part in team_gemm.
#pragma once

#include <Kokkos_Core.hpp>
#include <kspecter/core/error.hpp>
#include <kspecter/core/profiling.hpp>
#include <kspecter/solve/batched.hpp>
#include <string>

#include "../common/team_gemm.hpp"
#include "../tuning.hpp"
#include "row_envelope.hpp"

namespace kspecter::solve {

// Left-looking block columns of width nb: for block column [c0, c1)
//   1. A[c0:, c0:c1] -= L[c0:, :c0] L[c0:c1, :c0]ᵀ          (team_gemm, lower part only)
//   2. L_kk = chol(A[c0:c1, c0:c1])                          (unblocked, pivots checked)
//   3. L[c1:, c0:c1] = A[c1:, c0:c1] L_kk⁻ᵀ = A · (L_kk⁻¹)ᵀ  (team_gemm; L_kk⁻¹ in scratch)
// Every element of L is written once and the K loops of step 1 are long, so the
// accumulators stay in registers. Only the lower triangle is read or written.
// The row envelope is exploited exactly: if A[r][j] = 0 for all j < f(r), then L[r][j] = 0
// there too (in floating point as well), so each row tile's K loop starts at the first
// column where its rows or the block column's rows are nonzero, and tiles whose rows start
// right of the block column are skipped. A dense matrix loses nothing; extraction's iCov
// (fibers more than two apart do not couple) saves about three quarters of the flops.
namespace detail {

template <class Tune, class ExecSpace>
void cholesky_impl(ExecSpace const& space, MatrixBatch<typename ExecSpace::memory_space> a,
                   Kokkos::View<int*, typename ExecSpace::memory_space> info) {
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  ScopedRegion region("kspecter::solve::cholesky");
  int const nmat = int(a.extent(0));
  int const n = int(a.extent(1));
  if (int(a.extent(2)) != n) throw ParameterError("solve::cholesky: matrices are not square");
  if (int(info.extent(0)) < nmat) throw ParameterError("solve::cholesky: info is too short");
  if (nmat == 0 || n == 0) {
    Kokkos::deep_copy(space, info, 0);
    return;
  }
  int const nb = detail::imin(Tune::block, n);
  int const tr = Tune::block, tn = Tune::block;
  int const stage = detail::stage_doubles<Policy, Tune>(0, "solve::cholesky");
  int const l1 = Tune::max_tile * Tune::max_tile + nb * nb;
  using IScratch = Kokkos::View<int*, typename ExecSpace::scratch_memory_space,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  auto kernel = KOKKOS_LAMBDA(Member const& team) {
    int const b = team.league_rank();
    double* A = &a(b, 0, 0);
    Scratch s0(team.team_scratch(0), stage);
    Scratch s1(team.team_scratch(1), l1);
    IScratch env(team.team_scratch(1), n);
    detail::GemmWork const work{s0.data(), stage, s1.data()};
    double* dinv = s1.data() + Tune::max_tile * Tune::max_tile;
    int const* f = env.data();
    detail::team_row_envelope(team, A, n, env.data());
    int fail = 0;
    for (int c0 = 0; c0 < n; c0 += nb) {
      int const w = detail::imin(nb, n - c0), c1 = c0 + w;
      int const kb = detail::envelope_min(f, c0, w);
      for (int r0 = c0; r0 < n && kb < c0; r0 += tr) {
        int const rows = detail::imin(tr, n - r0);
        int const k0 = detail::imax(kb, detail::envelope_min(f, r0, rows));
        if (k0 >= c0) continue;  // L[r0 tile, :c0] L[c0:c1, :c0]ᵀ = 0
        detail::GemmArgs const g =
            detail::gemm(rows, w, c0 - k0, -1.0, detail::Operand{A + r0 * n + k0, n, 1},
                         detail::Operand{A + c0 * n + k0, n, 1}, 1.0, A + r0 * n + c0, n,
                         r0 == c0 ? unsigned(detail::kStoreLower) : 0u, tr, tn);
        detail::team_gemm<Tune>(team, work, g);
      }
      int const fl = detail::team_potrf_unblocked(team, A + c0 * n + c0, n, w, s0.data());
      if (fl != 0) {
        fail = c0 + fl;
        break;
      }
      if (c1 < n) {
        detail::team_trtri_unblocked<Tune>(team, A + c0 * n + c0, n, w, dinv, w);
        for (int r0 = c1; r0 < n; r0 += tr) {
          int const rows = detail::imin(tr, n - r0);
          if (detail::envelope_min(f, r0, rows) >= c1) continue;  // zeros stay zeros
          detail::GemmArgs const g = detail::gemm(
              rows, w, w, 1.0, detail::Operand{A + r0 * n + c0, n, 1}, detail::Operand{dinv, w, 1},
              0.0, A + r0 * n + c0, n, detail::kBUpper, tr, tn);
          detail::team_gemm<Tune>(team, work, g);
        }
      }
    }
    Kokkos::single(Kokkos::PerTeam(team), [&]() { info(b) = fail; });
  };

  auto const scratch = [&](Policy p) {
    return p.set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(stage)))
        .set_scratch_size(1, Kokkos::PerTeam(Scratch::shmem_size(l1) + IScratch::shmem_size(n)));
  };
  int const team_size =
      detail::team_size_for(scratch(Policy(space, nmat, 1)), kernel, Tune::team_size);
  Policy const policy = scratch(Policy(space, nmat, team_size));
  Kokkos::parallel_for("kspecter::solve::cholesky", policy, kernel);
}

}  // namespace detail

template <class ExecSpace>
void cholesky(ExecSpace const& space, MatrixBatch<typename ExecSpace::memory_space> a,
              Kokkos::View<int*, typename ExecSpace::memory_space> info) {
  detail::cholesky_impl<Tuning<ExecSpace>>(space, a, info);
}

// Forward then backward substitution by blocks of nb rows: the diagonal block is solved by
// one thread, the rest of the vector is updated by the team (row dot products forward,
// row axpys backward, so that both walk L along its rows).
namespace detail {

template <class Tune, class ExecSpace>
void cholesky_solve_impl(ExecSpace const& space, MatrixBatch<typename ExecSpace::memory_space> l,
                         VectorBatch<typename ExecSpace::memory_space> b) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  ScopedRegion region("kspecter::solve::cholesky_solve");
  int const nmat = int(l.extent(0));
  int const n = int(l.extent(1));
  if (int(l.extent(2)) != n || int(b.extent(0)) < nmat || int(b.extent(1)) != n)
    throw ParameterError("solve::cholesky_solve: shapes of L and b do not match");
  if (nmat == 0 || n == 0) return;
  int const nb = Tune::block;

  auto kernel = KOKKOS_LAMBDA(Member const& team) {
    int const m = team.league_rank();
    double const* L = &l(m, 0, 0);
    double* x = &b(m, 0);
    for (int r0 = 0; r0 < n; r0 += nb) {
      int const r1 = detail::imin(n, r0 + nb);
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        for (int i = r0; i < r1; ++i) {
          double const* li = L + i * n;
          double s = x[i];
          for (int p = r0; p < i; ++p) s -= li[p] * x[p];
          x[i] = s / li[i];
        }
      });
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r1, n), [&](int i) {
        double const* li = L + i * n;
        double s = 0.0;
        for (int p = r0; p < r1; ++p) s += li[p] * x[p];
        x[i] -= s;
      });
      team.team_barrier();
    }
    for (int r1 = n; r1 > 0;) {
      int const r0 = (r1 - 1) / nb * nb;  // the forward pass's blocks, last first
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        for (int i = r1 - 1; i >= r0; --i) {
          double s = x[i];
          for (int q = i + 1; q < r1; ++q) s -= L[q * n + i] * x[q];
          x[i] = s / L[i * n + i];
        }
      });
      team.team_barrier();
      for (int q = r0; q < r1; ++q) {
        double const xq = x[q];
        double const* lq = L + q * n;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r0), [&](int p) { x[p] -= lq[p] * xq; });
      }
      team.team_barrier();
      r1 = r0;
    }
  };
  Policy const policy(space, nmat,
                      detail::team_size_for(Policy(space, nmat, 1), kernel, Tune::team_size));
  Kokkos::parallel_for("kspecter::solve::cholesky_solve", policy, kernel);
}

}  // namespace detail

template <class ExecSpace>
void cholesky_solve(ExecSpace const& space, MatrixBatch<typename ExecSpace::memory_space> l,
                    VectorBatch<typename ExecSpace::memory_space> b) {
  detail::cholesky_solve_impl<Tuning<ExecSpace>>(space, l, b);
}

}  // namespace kspecter::solve
