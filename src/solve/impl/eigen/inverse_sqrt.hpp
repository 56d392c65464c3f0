// Symmetric inverse square root of a batch of small SPD matrices (declared in batched.hpp):
// Householder tridiagonalisation, implicit QL with Wilkinson shifts, Q = V diag(w^-1/2) Vᵀ.
#pragma once

#include <Kokkos_Core.hpp>
#include <kspecter/core/error.hpp>
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/core/profiling.hpp>
#include <kspecter/solve/batched.hpp>
#include <string>

#include "eig_steps.hpp"
#include "inverse_sqrt_staged.hpp"
#include "ql_chain.hpp"

namespace kspecter::solve {

namespace detail {

/// Eigenvalues of the symmetric tridiagonal (d, e) = (vec, vec + m) by implicit QL with
/// Wilkinson shifts; every plane rotation is applied to the rows of zt, whose rows end as the
/// eigenvectors of the original matrix. One thread runs a sweep's sequential chain
/// (QlChain) and records its rotations; the team then applies them. Returns false if an
/// eigenvalue did not converge in 60 sweeps (or the input held NaN). `st`: 5 ints of team
/// scratch. (One chain's state, never indexed, stays in a GPU thread's registers.)
template <class Tune, class Member>
KOKKOS_INLINE_FUNCTION bool eig_iterate(Member const& team, int m, double* vec, double* zt,
                                        int* st) {
  double *cs = vec + 4 * m, *sn = vec + 5 * m;
  Kokkos::single(Kokkos::PerTeam(team), [&]() { st[0] = st[1] = st[4] = 0; });
  team.team_barrier();
  while (true) {
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      QlChain<Tune::coalesce> q(vec, m);
      q.l = st[0];
      q.iter = st[1];
      if (q.begin()) {
        while (q.step()) {
        }
        q.end();
      }
      st[0] = q.l;
      st[1] = q.iter;
      st[2] = q.lo;
      st[3] = q.hi;
      st[4] = q.status;
    });
    team.team_barrier();
    int const lo = st[2], hi = st[3], status = st[4];
    if (hi >= lo) apply_rotation_chain<Tune>(team, zt, m, cs, sn, lo, hi);
    team.team_barrier();
    if (status != 0) return status == 1;
  }
}

/// eig_iterate for two matrices on a host thread (a team of one): their chains advance in
/// one loop, a rotation of each in turn, so that their latencies overlap; the same numbers
/// as two eig_iterate calls. ok[k]: whether matrix k converged.
template <class Tune, class Member>
KOKKOS_INLINE_FUNCTION void eig_iterate_pair(Member const& team, int m, double* const (&vec)[2],
                                             double* const (&zt)[2], bool (&ok)[2]) {
  QlChain<false> q[2] = {{vec[0], m}, {vec[1], m}};
  bool running[2] = {true, true};
  while (running[0] || running[1]) {
    bool chain[2], swept[2];
    for (int k = 0; k < 2; ++k) swept[k] = chain[k] = running[k] && q[k].begin();
    while (chain[0] || chain[1]) {
      if (chain[0]) chain[0] = q[0].step();
      if (chain[1]) chain[1] = q[1].step();
    }
    for (int k = 0; k < 2; ++k) {
      if (!running[k]) continue;
      if (swept[k]) q[k].end();
      if (q[k].hi >= q[k].lo)
        apply_rotation_chain<Tune>(team, zt[k], m, q[k].cs, q[k].sn, q[k].lo, q[k].hi);
      if (q[k].status != 0) {
        running[k] = false;
        ok[k] = q[k].status == 1;
      }
    }
  }
}

/// One kernel: a team per matrix (or two matrices a host thread) runs it from A to Q.
template <class Tune, class ExecSpace>
void inverse_sqrt_fused(ExecSpace const& space, MatrixBatch<typename ExecSpace::memory_space> c,
                        double rel_clip) {
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using IScratch = Kokkos::View<int*, typename ExecSpace::scratch_memory_space,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  int const nmat = int(c.extent(0));
  int const m = int(c.extent(1));
  constexpr int per = Tune::eig_matrices;  // matrices per team
  static_assert(per == 1 || (per == 2 && Tune::eig_team_size == 1 && !Tune::coalesce),
                "inverse_sqrt: one matrix a team, or two on a host team of one thread");
  int const gtr = detail::tile_for<Tune>(m);
  int const gtn = detail::tile_for<Tune>(m);
  // Six vectors of m for each matrix's QL chain: level 0 when they leave room for GEMM
  // staging.
  int const nvec = 6 * m;
  int const ints = 5;
  int const int_bytes = int(IScratch::shmem_size(ints));
  int const vec_bytes = int(Scratch::shmem_size(per * nvec));
  bool const vec_in_l0 = Policy::scratch_size_max(0) - vec_bytes - int_bytes - 256 >=
                         int(sizeof(double)) * 8 * 2 * (Tune::max_tile + Tune::pad);
  int const extra_l0 = int_bytes + (vec_in_l0 ? vec_bytes : 0);
  int stage = detail::stage_doubles<Policy, Tune>(extra_l0, "solve::inverse_sqrt");
  // A cap leaves shared memory to more teams per SM (the QL chains are latency-bound).
  if (Tune::eig_stage > 0 && Tune::eig_stage < stage) stage = Tune::eig_stage;
  int const l1 = Tune::max_tile * Tune::max_tile + per * (m * m + (vec_in_l0 ? 0 : nvec));
  double const clip = rel_clip;

  auto kernel = KOKKOS_LAMBDA(Member const& team) {
    // Captured here, outside the if constexpr below (nvcc's extended lambdas cannot capture
    // a variable first inside one).
    int const first = team.league_rank() * per, count = nmat - first < per ? nmat - first : per;
    double const rel = clip;
    int const tr = gtr, tn = gtn;
    Scratch s0(team.team_scratch(0), stage);
    IScratch st(team.team_scratch(0), ints);
    Scratch v0(team.team_scratch(0), vec_in_l0 ? per * nvec : 0);
    Scratch s1(team.team_scratch(1), l1);
    detail::GemmWork const work{s0.data(), stage, s1.data()};
    double* const zt0 = s1.data() + Tune::max_tile * Tune::max_tile;
    double* const vec0 = vec_in_l0 ? v0.data() : zt0 + per * m * m;
    double* const A0 = &c(first, 0, 0);
    if constexpr (per == 1) {
      detail::eig_prepare<Tune>(team, A0, m, vec0, zt0);
      bool const ok = detail::eig_iterate<Tune>(team, m, vec0, zt0, st.data());
      detail::eig_finish<Tune>(team, work, A0, m, m, vec0, zt0, ok, rel, tr, tn);
    } else {
      double* const zt[2] = {zt0, zt0 + m * m};
      double* const vec[2] = {vec0, vec0 + nvec};
      bool ok[2] = {false, false};
      for (int k = 0; k < count; ++k)
        detail::eig_prepare<Tune>(team, &c(first + k, 0, 0), m, vec[k], zt[k]);
      if (count == 2)
        detail::eig_iterate_pair<Tune>(team, m, vec, zt, ok);
      else
        ok[0] = detail::eig_iterate<Tune>(team, m, vec[0], zt[0], st.data());
      for (int k = 0; k < count; ++k)
        detail::eig_finish<Tune>(team, work, &c(first + k, 0, 0), m, m, vec[k], zt[k], ok[k], rel,
                                 tr, tn);
    }
  };

  int const league = (nmat + per - 1) / per;
  Policy const policy =
      detail::team_policy_for<Policy>(space, league, int(Scratch::shmem_size(stage)) + extra_l0,
                                      int(Scratch::shmem_size(l1)), kernel, Tune::eig_team_size);
  Kokkos::parallel_for("kspecter::solve::inverse_sqrt", policy, kernel);
}

/// The checks, the profiling region, and the tuning's form of the algorithm.
template <class Tune, class ExecSpace>
void inverse_sqrt_impl(ExecSpace const& space, MatrixBatch<typename ExecSpace::memory_space> c,
                       double rel_clip,
                       InverseSqrtWorkspace<typename ExecSpace::memory_space>& work) {
  ScopedRegion region("kspecter::solve::inverse_sqrt");
  int const nmat = int(c.extent(0));
  int const m = int(c.extent(1));
  if (int(c.extent(2)) != m) throw ParameterError("solve::inverse_sqrt: matrices are not square");
  if (!(rel_clip > 0.0 && rel_clip < 1.0))
    throw ParameterError("solve::inverse_sqrt: rel_clip must be in (0, 1), got " +
                         std::to_string(rel_clip));
  if (nmat == 0 || m == 0) return;
  if constexpr (Tune::eig_staged) {
    if (inverse_sqrt_staged_fits<ExecSpace>(m))
      return inverse_sqrt_staged<Tune>(space, c, rel_clip, work);
  }
  inverse_sqrt_fused<Tune>(space, c, rel_clip);
}

}  // namespace detail

template <class ExecSpace>
void inverse_sqrt(ExecSpace const& space, MatrixBatch<typename ExecSpace::memory_space> c,
                  double rel_clip, InverseSqrtWorkspace<typename ExecSpace::memory_space>& work) {
  detail::inverse_sqrt_impl<Tuning<ExecSpace>>(space, c, rel_clip, work);
}

template <class ExecSpace>
InverseSqrtWorkspaceSize inverse_sqrt_workspace_size(int nmat, int m) {
  using Tune = Tuning<ExecSpace>;
  if constexpr (Tune::eig_staged) {
    if (nmat > 0 && m > 0 && detail::inverse_sqrt_staged_fits<ExecSpace>(m))
      return detail::EigRounds<typename ExecSpace::memory_space>::size(nmat, m, Tune::eig_round);
  }
  return {};
}

template <class ExecSpace>
void inverse_sqrt(ExecSpace const& space, MatrixBatch<typename ExecSpace::memory_space> c,
                  double rel_clip) {
  InverseSqrtWorkspace<typename ExecSpace::memory_space> work;
  inverse_sqrt(space, c, rel_clip, work);
}

}  // namespace kspecter::solve
