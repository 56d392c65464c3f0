// The symmetric inverse square root as a sequence of kernels (GPU backends; docs/algorithm.md
// §4.4): the same arithmetic as inverse_sqrt.hpp's single kernel, with the QL iteration's
// sequential chains taken out of the teams that rotate the eigenvector bases.
//
// In one kernel, a team of 128 threads waits at a barrier while one of them runs a sweep's
// chain, about 150 times a matrix. Here:
//   prepare    a team per matrix: tridiagonal (d, e) and the basis Zᵀ, to global memory;
//   ql_chains  a thread per matrix runs its chains on (d, e) alone, all matrices at once,
//              recording each sweep's rotations, until a round's record is full;
//   rotations  a team per slice of Zᵀ's columns applies the round's sweeps, the slice held
//              in level-0 scratch (each column's chain is independent of the others');
//   finish     a team per matrix: Q = Zᵀ diag(w^-1/2) Z.
// ql_chains and rotations alternate until every matrix has converged or failed.
#pragma once

#include <Kokkos_Core.hpp>
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/solve/batched.hpp>

#include "eig_steps.hpp"
#include "ql_chain.hpp"
#include "tuning.hpp"

namespace kspecter::solve::detail {

/// A batch's eigen-decompositions between the staged kernels.
template <class Mem>
struct EigRounds {
  using Mat = Kokkos::View<double***, Kokkos::LayoutRight, Mem>;
  using Rows = Kokkos::View<double**, Kokkos::LayoutRight, Mem>;
  using IRows = Kokkos::View<int**, Kokkos::LayoutRight, Mem>;
  /// Where each matrix's QL iteration stands: the QlChain fields l, iter and status, and the
  /// sweeps recorded this round.
  enum Field { l_field, iter_field, status_field, nsweep_field, nfield };

  int m = 0;
  int max_rot = 0;    // rotations a matrix records per round
  int max_sweep = 0;  // sweeps a matrix records per round
  Mat zt;             // [nmat][m][m] the eigenvector basis, rows rotated
  Rows vec;           // [nmat][6 m] QlChain's vectors (d, e, -, -, cs, sn)
  IRows state;        // [nmat][nfield]
  IRows sweeps;       // [nmat][2 max_sweep] lo, hi of each recorded sweep
  Rows cs, sn;        // [nmat][max_rot] the recorded rotations, a sweep's lo..hi in turn

  EigRounds(int nmat, int m_, int round) : m(m_), max_rot(round * m_), max_sweep(round * m_ / 4) {
    auto const alloc = [](char const* label) {
      return Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label));
    };
    zt = Mat(alloc("kspecter::solve::inverse_sqrt::zt"), nmat, m, m);
    vec = Rows(alloc("kspecter::solve::inverse_sqrt::vec"), nmat, 6 * m);
    state = IRows(alloc("kspecter::solve::inverse_sqrt::state"), nmat, int(nfield));
    sweeps = IRows(alloc("kspecter::solve::inverse_sqrt::sweeps"), nmat, 2 * max_sweep);
    cs = Rows(alloc("kspecter::solve::inverse_sqrt::cs"), nmat, max_rot);
    sn = Rows(alloc("kspecter::solve::inverse_sqrt::sn"), nmat, max_rot);
  }
};

/// One matrix's QL chains for a round, by one thread: from the state the last round left,
/// sweeps until every eigenvalue has converged, one failed, or the record is full (a sweep
/// has at most m - 1 rotations). Returns whether the matrix still runs.
template <bool Rsqrt, class Mem>
KOKKOS_INLINE_FUNCTION bool eig_chain_round(EigRounds<Mem> const& r, int b) {
  using R = EigRounds<Mem>;
  int* const st = &r.state(b, 0);
  if (st[R::status_field] != 0) {
    st[R::nsweep_field] = 0;
    return false;
  }
  QlChain<Rsqrt> q(&r.vec(b, 0), r.m);
  q.l = st[R::l_field];
  q.iter = st[R::iter_field];
  double* const cs = &r.cs(b, 0);
  double* const sn = &r.sn(b, 0);
  int* const sw = &r.sweeps(b, 0);
  int nrot = 0, nsweep = 0;
  while (nsweep < r.max_sweep && nrot + r.m <= r.max_rot) {
    if (q.begin()) {
      while (q.step()) {
      }
      q.end();
    }
    if (q.hi >= q.lo) {
      for (int i = q.lo; i <= q.hi; ++i) {
        cs[nrot + i - q.lo] = q.cs[i];
        sn[nrot + i - q.lo] = q.sn[i];
      }
      sw[2 * nsweep] = q.lo;
      sw[2 * nsweep + 1] = q.hi;
      ++nsweep;
      nrot += q.hi - q.lo + 1;
    }
    if (q.status != 0) break;
  }
  st[R::l_field] = q.l;
  st[R::iter_field] = q.iter;
  st[R::status_field] = q.status;
  st[R::nsweep_field] = nsweep;
  return q.status == 0;
}

/// The round's sweeps of matrix b applied to the columns [c0, c0 + w) of its basis Zᵀ, a
/// thread per column, the columns staged in level-0 scratch `x` ([m][w]).
template <class Member, class Mem>
KOKKOS_INLINE_FUNCTION void eig_rotate_slice(Member const& team, EigRounds<Mem> const& r, int b,
                                             int c0, int w, double* x) {
  int const m = r.m, nsweep = r.state(b, EigRounds<Mem>::nsweep_field);
  double* const zt = &r.zt(b, 0, 0);
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m * w),
                       [&](int t) { x[t] = zt[(t / w) * m + c0 + t % w]; });
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, w), [&](int c) {
    double const* const cs = &r.cs(b, 0);
    double const* const sn = &r.sn(b, 0);
    int off = 0;
    for (int k = 0; k < nsweep; ++k) {
      int const lo = r.sweeps(b, 2 * k), hi = r.sweeps(b, 2 * k + 1);
      rotate_column(x + c, w, cs + off, sn + off, lo, hi);
      off += hi - lo + 1;
    }
  });
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m * w),
                       [&](int t) { zt[(t / w) * m + c0 + t % w] = x[t]; });
}

/// The round's sweeps of matrix b applied in place to its whole basis (host backends: the
/// team's columns vectorised, apply_rotation_chain).
template <class Tune, class Member, class Mem>
KOKKOS_INLINE_FUNCTION void eig_rotate_matrix(Member const& team, EigRounds<Mem> const& r, int b) {
  int const nsweep = r.state(b, EigRounds<Mem>::nsweep_field);
  int off = 0;
  for (int k = 0; k < nsweep; ++k) {
    int const lo = r.sweeps(b, 2 * k), hi = r.sweeps(b, 2 * k + 1);
    // apply_rotation_chain reads rotation i at cs[i]: the sweep's record, shifted by lo, in
    // the matrix's own cosine and sine vectors (QlChain's, unused by now).
    double* const cs = &r.vec(b, 4 * r.m);
    double* const sn = &r.vec(b, 5 * r.m);
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      for (int i = lo; i <= hi; ++i) {
        cs[i] = r.cs(b, off + i - lo);
        sn[i] = r.sn(b, off + i - lo);
      }
    });
    team.team_barrier();
    apply_rotation_chain<Tune>(team, &r.zt(b, 0, 0), r.m, cs, sn, lo, hi);
    team.team_barrier();
    off += hi - lo + 1;
  }
}

template <class Tune, class ExecSpace>
void inverse_sqrt_staged(ExecSpace const& space, MatrixBatch<typename ExecSpace::memory_space> c,
                         double rel_clip) {
  using Mem = typename ExecSpace::memory_space;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  int const nmat = int(c.extent(0)), m = int(c.extent(1));
  EigRounds<Mem> const r(nmat, m, Tune::eig_round);

  // prepare: d, e and Zᵀ; tau and the reflector products in level-0 scratch.
  int const pvec = 4 * m;
  auto prepare = KOKKOS_LAMBDA(Member const& team) {
    int const b = team.league_rank();
    Scratch v(team.team_scratch(0), pvec);
    eig_prepare<Tune>(team, &c(b, 0, 0), r.m, v.data(), &r.zt(b, 0, 0));
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 2 * r.m),
                         [&](int i) { r.vec(b, i) = v(i); });
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      for (int f = 0; f < EigRounds<Mem>::nfield; ++f) r.state(b, f) = 0;
    });
  };
  {
    auto const sized = [&](Policy p) {
      return p.set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(pvec)));
    };
    int const team = team_size_for(sized(Policy(space, nmat, 1)), prepare, Tune::eig_team_size);
    Kokkos::parallel_for("kspecter::solve::inverse_sqrt::prepare", sized(Policy(space, nmat, team)),
                         prepare);
  }

  // ql_chains and rotations, round after round.
  constexpr int per = Tune::eig_chain_team;
  auto chains = KOKKOS_LAMBDA(Member const& team, int& running) {
    int const first = team.league_rank() * per;
    int const count = nmat - first < per ? nmat - first : per;
    int mine = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, count),
        [&](int k, int& n) { n += eig_chain_round<Tune::coalesce>(r, first + k) ? 1 : 0; }, mine);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { running += mine; });
  };
  int const chain_league = (nmat + per - 1) / per;
  constexpr int cols = Tune::eig_apply_cols;
  int const groups = cols > 0 ? (m + cols - 1) / cols : 1;
  int const width = (m + groups - 1) / groups;
  auto rotations = KOKKOS_LAMBDA(Member const& team) {
    // Captured here, outside the if constexpr below (nvcc's extended lambdas cannot capture
    // a variable first inside one).
    int const b = team.league_rank() / groups, g = team.league_rank() % groups, wd = width;
    if (r.state(b, EigRounds<Mem>::nsweep_field) == 0) return;
    if constexpr (Tune::eig_apply_cols > 0) {
      int const c0 = g * wd, w = r.m - c0 < wd ? r.m - c0 : wd;
      Scratch x(team.team_scratch(0), r.m * wd);
      eig_rotate_slice(team, r, b, c0, w, x.data());
    } else {
      eig_rotate_matrix<Tune>(team, r, b);
    }
  };
  auto const rotate_sized = [&](Policy p) {
    return p.set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(cols > 0 ? m * width : 0)));
  };
  // A team loops over its matrices or columns, so fewer threads than asked still do it all.
  Policy const chain_policy(
      space, chain_league,
      team_size_for(Policy(space, chain_league, 1), chains, per, Kokkos::ParallelReduceTag()));
  Policy const rotate_policy =
      rotate_sized(Policy(space, nmat * groups,
                          team_size_for(rotate_sized(Policy(space, nmat * groups, 1)), rotations,
                                        cols > 0 ? cols : 1)));
  while (true) {
    int running = 0;
    Kokkos::parallel_reduce("kspecter::solve::inverse_sqrt::ql_chains", chain_policy, chains,
                            running);
    Kokkos::parallel_for("kspecter::solve::inverse_sqrt::rotations", rotate_policy, rotations);
    if (running == 0) break;
  }

  // finish: Q, staged through level 0 as the one-kernel path does.
  int const gtr = tile_for<Tune>(m), gtn = tile_for<Tune>(m);
  int const stage = stage_doubles<Policy, Tune>(0, "solve::inverse_sqrt");
  int const l1 = Tune::max_tile * Tune::max_tile;
  double const clip = rel_clip;
  auto finish = KOKKOS_LAMBDA(Member const& team) {
    int const b = team.league_rank();
    int const tr = gtr, tn = gtn;
    double const rel = clip;
    Scratch s0(team.team_scratch(0), stage);
    Scratch s1(team.team_scratch(1), l1);
    GemmWork const work{s0.data(), stage, s1.data()};
    bool const ok = r.state(b, EigRounds<Mem>::status_field) == 1;
    eig_finish<Tune>(team, work, &c(b, 0, 0), r.m, &r.vec(b, 0), &r.zt(b, 0, 0), ok, rel, tr, tn);
  };
  auto const sized = [&](Policy p) {
    return p.set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(stage)))
        .set_scratch_size(1, Kokkos::PerTeam(Scratch::shmem_size(l1)));
  };
  int const team = team_size_for(sized(Policy(space, nmat, 1)), finish, Tune::eig_team_size);
  Kokkos::parallel_for("kspecter::solve::inverse_sqrt::finish", sized(Policy(space, nmat, team)),
                       finish);
}

}  // namespace kspecter::solve::detail
