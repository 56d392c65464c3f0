// The symmetric inverse square root as a sequence of kernels (GPU backends; docs/algorithm.md
// §4, Decorrelation): the algorithm of inverse_sqrt.hpp's single kernel, with the QL
// iteration's sequential chains taken out of the teams that rotate the eigenvector bases.
//
// In one kernel, a team of 128 threads waits at a barrier while one of them runs a sweep's
// chain, about 150 times a matrix, and its matrices live in global memory. Here:
//   prepare    a team per matrix tridiagonalises the packed lower triangle in level-0
//              scratch: d, e to `vec`, tau and the reflectors over the matrix's own storage;
//   ql_chains  a thread per matrix runs its chains on (d, e) in level-0 scratch, all matrices
//              at once, recording each sweep's rotations, until a round's record is full;
//   rotations  a team per slice of rows of Z (columns of Zᵀ) holds the slice in level-0
//              scratch, forms it from the reflectors (the first launch), or applies a
//              round's sweeps: a row of Z is rotated independently of the others;
//   finish     a team per matrix: Q = Zᵀ diag(w^-1/2) Z, over the matrix's storage.
// A round's chains need only the (d, e) the round before left, not its rotations, so the two
// records alternate: one launch runs round k + 1's chains beside round k's rotations (Z's
// formation beside the first chains). The chains are latency-bound, a few warps an SM, and
// hide behind the rotations' teams (perf/gpu_runs.md, session 14).
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/solve/batched.hpp>
#include <stdexcept>
#include <string>

#include "../tuning.hpp"
#include "eig_finish_dmma.hpp"
#include "eig_rounds.hpp"
#include "eig_steps.hpp"
#include "ql_chain.hpp"
#include "tridiagonal_packed.hpp"

namespace kspecter::solve::detail {

/// Level-0 doubles of the prepare kernel for teams of up to `ts` threads: the packed triangle,
/// d, e, tau, two work vectors, and team_sum's.
KOKKOS_INLINE_FUNCTION int eig_prepare_doubles(int m, int ts) {
  return m * (m + 1) / 2 + 5 * m + team_sum_doubles(ts);
}

/// prepare for matrix b (its storage `a`, m x m): symmetrised into the packed triangle `s`,
/// tridiagonalised; d, e to r.vec; over `a`, tau, the column-packed reflectors, and the
/// products v_k·v_{k+1} that form_z_slice applies the reflectors in pairs with.
template <class Member, class Mem>
KOKKOS_INLINE_FUNCTION void eig_prepare_packed(Member const& team, EigRounds<Mem> const& r, int b,
                                               double* a, double* s) {
  int const m = r.m, np = m * (m + 1) / 2;
  double *d = s + np, *e = d + m, *tau = e + m, *w = tau + m;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, np), [&](int t) {
    int const i = packed_row(t), j = t - i * (i + 1) / 2;
    s[t] = 0.5 * (a[i * m + j] + a[j * m + i]);
  });
  team.team_barrier();
  team_tridiagonalize_packed(team, s, m, d, e, tau, w);
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 2 * m), [&](int i) {
    r.vec(b, i) = d[i];  // d and e are adjacent
    if (i < m) a[i] = tau[i];
  });
  for (int k = 0; k + 2 < m; ++k) {
    double* const v = a + m + reflector_offset(k, m);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m - 1 - k),
                         [&](int t) { v[t] = s[packed(k + 1 + t, k)]; });
  }
  // v_k · v_{k+1} (their common entries k + 2, ...) after the reflectors, at index k, for
  // the pairs form_z_slice takes: k = 0, 2, 4, ... with k + 1 < m - 2.
  double* const pairs = a + m + reflector_offset(m - 2, m);
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m > 3 ? (m - 2) / 2 : 0), [&](int t) {
    int const k = 2 * t;
    double sum = 0.0;
    for (int i = k + 2; i < m; ++i) sum += s[packed(i, k)] * s[packed(i, k + 1)];
    pairs[k] = sum;
  });
  Kokkos::single(Kokkos::PerTeam(team), [&]() {
    for (int f = 0; f < EigRounds<Mem>::nfield; ++f) r.state(b, f) = 0;
  });
}

/// One matrix's QL chains for a round, by one thread with (d, e) in its scratch `de` (2 m):
/// from the state the last round left, sweeps until every eigenvalue has converged, one
/// failed, or the record is full (a sweep has at most m - 1 rotations). Returns whether the
/// matrix still runs.
template <bool Rsqrt, class Mem>
KOKKOS_INLINE_FUNCTION bool eig_chain_round(EigRounds<Mem> const& r, EigRecord<Mem> const& rec,
                                            int b, double* de) {
  using R = EigRounds<Mem>;
  int* const st = &r.state(b, 0);
  if (st[R::status_field] != 0) {
    rec.nsweep(b) = 0;
    return false;
  }
  int const m = r.m;
  double const* const vec = &r.vec(b, 0);
  int i = 0;
  for (; i + column_batch <= 2 * m; i += column_batch) {  // loads in flight before the stores
    double v[column_batch];
    KSPECTER_UNROLL
    for (int u = 0; u < column_batch; ++u) v[u] = vec[i + u];
    KSPECTER_UNROLL
    for (int u = 0; u < column_batch; ++u) de[i + u] = v[u];
  }
  for (; i < 2 * m; ++i) de[i] = vec[i];
  QlChain<Rsqrt> q(de, de + m, m);
  q.l = st[R::l_field];
  q.iter = st[R::iter_field];
  int* const sw = &rec.sweeps(b, 0);
  int nrot = 0, nsweep = 0;
  while (nsweep < r.max_sweep && nrot + m <= r.max_rot) {
    if (q.begin()) {
      q.record(&rec.cs(b, nrot), &rec.sn(b, nrot));
      while (q.step()) {
      }
      q.end();
    }
    if (q.hi >= q.lo) {
      sw[2 * nsweep] = q.lo;
      sw[2 * nsweep + 1] = q.hi;
      ++nsweep;
      nrot += q.hi - q.lo + 1;
    }
    if (q.status != 0) break;
  }
  for (int i = 0; i < 2 * m; ++i) r.vec(b, i) = de[i];
  st[R::l_field] = q.l;
  st[R::iter_field] = q.iter;
  st[R::status_field] = q.status;
  rec.nsweep(b) = nsweep;
  return q.status == 0;
}

/// A thread's share of a vector the team stages in scratch (entries rank, rank + team size,
/// ...), held in registers: read from global memory before the step ahead of it runs, written
/// to scratch after, so that the load's latency hides behind that step.
struct StagedShare {
  static constexpr int most = 4;  // entries a thread holds; any beyond are copied directly
  double v[most];

  template <class Member>
  KOKKOS_INLINE_FUNCTION void load(Member const& team, double const* src, int len) {
    int const rank = team.team_rank(), ts = team.team_size();
    for (int j = 0; j < most; ++j) {
      int const t = rank + j * ts;
      if (t < len) v[j] = src[t];
    }
  }
  /// To dst[0, len); src as given to load().
  template <class Member>
  KOKKOS_INLINE_FUNCTION void store(Member const& team, double const* src, int len,
                                    double* dst) const {
    int const rank = team.team_rank(), ts = team.team_size();
    for (int j = 0; j < most; ++j) {
      int const t = rank + j * ts;
      if (t < len) dst[t] = v[j];
    }
    for (int t = rank + most * ts; t < len; t += ts) dst[t] = src[t];
  }
};

/// A thread's walk over the entries t = rank, rank + ts, ... of a slice stored [m][w]: its
/// row t / w and column t % w kept by steps, without a division an entry.
struct SliceWalk {
  int t, i, c, di, dc;  // entry, its row and column; the step's rows and columns
  template <class Member>
  KOKKOS_INLINE_FUNCTION SliceWalk(Member const& team, int w)
      : t(team.team_rank()),
        i(t / w),
        c(t % w),
        di(team.team_size() / w),
        dc(team.team_size() % w) {}
  KOKKOS_INLINE_FUNCTION void next(int w, int ts) {
    t += ts;
    i += di;
    c += dc;
    if (c >= w) {
      c -= w;
      ++i;
    }
  }
};

/// dst[t] = src(i, c) for the entries t < n of a slice [m][w] (row i, column c), U loads in
/// flight a thread before it stores any: a plain loop's scratch store waits on its global
/// load, one memory latency an entry (perf/gpu_runs.md, session 15: a fifth of a rounds
/// launch went to loading the slices).
template <int U, class Member, class Src>
KOKKOS_INLINE_FUNCTION void load_slice(Member const& team, int n, int w, double* dst,
                                       Src const& src) {
  int const ts = team.team_size();
  SliceWalk at(team, w);
  while (at.t < n) {
    double v[U];
    SliceWalk const first = at;
    KSPECTER_UNROLL
    for (int u = 0; u < U; ++u) {
      if (at.t < n) v[u] = src(at.i, at.c);
      at.next(w, ts);
    }
    at = first;
    KSPECTER_UNROLL
    for (int u = 0; u < U; ++u) {
      if (at.t < n) dst[at.t] = v[u];
      at.next(w, ts);
    }
  }
}

/// x ← x H_k H_{k+1} on one row of Z (entries `stride` apart, r of them from entry k + 1;
/// H = I - tau v vᵀ): va (r entries) and vb (r - 1, from entry k + 2), c = va·vb. Both dot
/// products in one pass, since x H_k · vb = x·vb - h_k c, then one update: the row is read
/// twice and written once for the two reflectors, where one at a time reads it four times and
/// writes it twice (the formation waits on these scratch accesses, perf/gpu_runs.md).
KOKKOS_INLINE_FUNCTION void reflect_row_pair(double* x, int stride, double const* va,
                                             double const* vb, int r, double ta, double tb,
                                             double c) {
  double const x0 = x[0];
  double a0 = x0 * va[0], a1 = 0.0, b0 = 0.0, b1 = 0.0;
  int t = 1;
  for (; t + 1 < r; t += 2) {
    double const x1 = x[t * stride], x2 = x[(t + 1) * stride];
    a0 += x1 * va[t];
    b0 += x1 * vb[t - 1];
    a1 += x2 * va[t + 1];
    b1 += x2 * vb[t];
  }
  for (; t < r; ++t) {
    double const xt = x[t * stride];
    a0 += xt * va[t];
    b0 += xt * vb[t - 1];
  }
  double const ha = ta != 0.0 ? ta * (a0 + a1) : 0.0;
  double const hb = tb != 0.0 ? tb * ((b0 + b1) - ha * c) : 0.0;
  x[0] = x0 - ha * va[0];
  update_column<column_batch>(x + stride, stride, r - 1,
                              [&](int i, double xi) { return (xi - ha * va[i + 1]) - hb * vb[i]; });
}

/// x ← x H_k on one row of Z (the last reflector where m - 2 is odd): the dot product in four
/// partial sums, so that it waits on a quarter of the chain of additions.
KOKKOS_INLINE_FUNCTION void reflect_row(double* x, int stride, double const* v, int r, double tau) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  int t = 0;
  for (; t + 3 < r; t += 4) {
    s0 += x[t * stride] * v[t];
    s1 += x[(t + 1) * stride] * v[t + 1];
    s2 += x[(t + 2) * stride] * v[t + 2];
    s3 += x[(t + 3) * stride] * v[t + 3];
  }
  for (; t < r; ++t) s0 += x[t * stride] * v[t];
  double const h = tau * ((s0 + s1) + (s2 + s3));
  update_column<column_batch>(x, stride, r, [&](int i, double xi) { return xi - h * v[i]; });
}

/// The rows [c0, c0 + w) of Z = H_0 ⋯ H_{m-3} in the slice x ([m][w]), a thread a row: row c
/// starts as the unit row e_c and takes the reflectors on the
/// right, two at a time (reflect_row_pair).
/// `refl`: tau (m), v_0, v_1, ... column-packed, then v_k·v_{k+1} (eig_prepare_packed). Each
/// pair is staged by the team into `buf` (2 m doubles), from registers loaded while the pair
/// before applied; two barriers a pair.
template <class Member>
KOKKOS_INLINE_FUNCTION void form_z_slice(Member const& team, double* x, int w, int m, int c0,
                                         double const* refl, double* buf) {
  int const ts = team.team_size();
  for (SliceWalk at(team, w); at.t < m * w; at.next(w, ts)) x[at.t] = at.i == c0 + at.c ? 1.0 : 0.0;
  if (m < 3) return;
  int const nrefl = m - 2;
  auto const v = [&](int k) { return refl + m + reflector_offset(k, m); };
  double const* const pairs = v(nrefl);
  // v_k and v_{k+1} are adjacent in `refl`: a pair is one span of 2 r - 1 doubles, one share.
  auto const span = [&](int k) { return k + 1 < nrefl ? 2 * (m - k - 1) - 1 : m - k - 1; };
  StagedShare share;
  share.load(team, v(0), span(0));
  for (int k = 0; k < nrefl; k += 2) {
    int const r = m - k - 1;
    share.store(team, v(k), span(k), buf);
    team.team_barrier();
    if (k + 2 < nrefl) share.load(team, v(k + 2), span(k + 2));
    double const ta = refl[k];
    if (k + 1 < nrefl) {
      double const tb = refl[k + 1], c = pairs[k];
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, w), [&](int col) {
        reflect_row_pair(x + (k + 1) * w + col, w, buf, buf + r, r, ta, tb, c);
      });
    } else if (ta != 0.0) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, w),
                           [&](int col) { reflect_row(x + (k + 1) * w + col, w, buf, r, ta); });
    }
    team.team_barrier();
  }
}

/// A launch's share of the rows [c0, c0 + w) of matrix b's Z (columns of Zᵀ), a thread a row,
/// the slice in level-0 scratch `x` ([m][w]): formed from the reflectors (`form`, the first
/// launch), or loaded and rotated by the sweeps of `rec`; then stored. Each sweep's rotations are
/// staged by the whole team into `rot` (2 m doubles of scratch: c, then s), from registers loaded
/// while the sweep before ran (StagedShare): a row's chain then waits on scratch, and the team on
/// no global load between sweeps.
template <class Member, class Mem>
KOKKOS_INLINE_FUNCTION void eig_rotate_slice(Member const& team, EigRounds<Mem> const& r,
                                             EigRecord<Mem> const& rec, double const* refl,
                                             bool form, int b, int c0, int w, double* x,
                                             double* rot) {
  int const m = r.m, nsweep = form ? 0 : rec.nsweep(b);
  double* const zt = &r.zt(b, 0, 0);
  double const* const cs = &rec.cs(b, 0);
  double const* const sn = &rec.sn(b, 0);
  int const* const sw = &rec.sweeps(b, 0);
  auto const length = [&](int k) { return k < nsweep ? sw[2 * k + 1] - sw[2 * k] + 1 : 0; };
  if (form) {
    form_z_slice(team, x, w, m, c0, refl, rot);  // rot is free until the sweeps
  } else {
    load_slice<column_batch>(team, m * w, w, x, [&](int i, int c) { return zt[i * m + c0 + c]; });
  }
  StagedShare sc, ss;
  int len = length(0);
  sc.load(team, cs, len);
  ss.load(team, sn, len);
  sc.store(team, cs, len, rot);
  ss.store(team, sn, len, rot + m);
  team.team_barrier();
  int off = 0;
  for (int k = 0; k < nsweep; ++k) {
    int const lo = sw[2 * k], hi = sw[2 * k + 1];
    int const next = off + len, nlen = length(k + 1);
    sc.load(team, cs + next, nlen);
    ss.load(team, sn + next, nlen);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, w),
                         [&](int c) { rotate_column<-1>(x + c, w, rot, rot + m, hi, lo, hi); });
    team.team_barrier();
    sc.store(team, cs + next, nlen, rot);
    ss.store(team, sn + next, nlen, rot + m);
    team.team_barrier();
    off = next;
    len = nlen;
  }
  int const ts = team.team_size();
  for (SliceWalk at(team, w); at.t < m * w; at.next(w, ts)) zt[at.i * m + c0 + at.c] = x[at.t];
}

/// One launch of the rounds (a functor: what it runs changes between launches). Its first
/// `chain_teams` teams run a round's chains, `per` matrices a team, into `chain_rec`; the
/// `rot_teams` after them rotate Z's slices by `rot_rec`, or form them (`form`). The reduction
/// counts the matrices whose chains still run.
template <class ExecSpace, bool Rsqrt>
struct EigRound {
  using Mem = typename ExecSpace::memory_space;
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  EigRounds<Mem> r;
  MatrixBatch<Mem> c;  // the reflectors, over the matrices' storage
  int nmat, per;       // matrices, and matrices a chain team
  int groups, width;   // slices a matrix (of Z's m rows), rows a slice
  int chain_teams = 0, rot_teams = 0;
  EigRecord<Mem> chain_rec, rot_rec;
  bool form = false;

  KOKKOS_INLINE_FUNCTION void operator()(Member const& team, int& running) const {
    int const t = team.league_rank();
    if (t < chain_teams) {
      chains(team, t * per, running);
      return;
    }
    int const b = (t - chain_teams) / groups, g = (t - chain_teams) % groups;
    if (!form && rot_rec.nsweep(b) == 0) return;
    int const n = r.m, c0 = g * width, w = n - c0 < width ? n - c0 : width;
    Scratch x(team.team_scratch(0), r.m * width + 2 * r.m);
    eig_rotate_slice(team, r, rot_rec, &c(b, 0, 0), form, b, c0, w, x.data(),
                     x.data() + r.m * width);
  }

  /// Matrices [first, first + per): a thread's chains with (d, e) 2 m + 1 doubles apart in
  /// scratch (odd: banks).
  KOKKOS_INLINE_FUNCTION void chains(Member const& team, int first, int& running) const {
    int const count = nmat - first < per ? nmat - first : per;
    Scratch s(team.team_scratch(0), per * (2 * r.m + 1));
    int mine = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, count),
        [&](int k, int& n) {
          n +=
              eig_chain_round<Rsqrt>(r, chain_rec, first + k, s.data() + k * (2 * r.m + 1)) ? 1 : 0;
        },
        mine);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { running += mine; });
  }

  /// Sizes the launch: the chains of round `into` (-1: none), and the rotations by record
  /// `by` (-1: Z formed instead).
  void set(int into, int by, int chain_league) {
    chain_teams = into >= 0 ? chain_league : 0;
    chain_rec = r.rec[into >= 0 ? into : 0];
    rot_teams = nmat * groups;
    form = by < 0;
    // Forming reads no record, but the slice takes its pointers: a null View's are undefined.
    rot_rec = r.rec[by >= 0 ? by : 0];
  }
};

/// Whether blocks of m fit the staged kernels' level-0 scratch (the packed triangle of
/// prepare is the largest); wider blocks take the fused kernel, whose Z is in level 1.
template <class ExecSpace>
bool inverse_sqrt_staged_fits(int m) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  int const l0_doubles = (Policy::scratch_size_max(0) - 256) / int(sizeof(double));
  int const ts = Tuning<ExecSpace>::eig_team_size;
  return eig_prepare_doubles(m, ts) <= l0_doubles && 2 * m + 1 <= l0_doubles;
}

/// Q = c^-1/2 over c. Precondition:
/// inverse_sqrt_staged_fits<ExecSpace>(m) (inverse_sqrt_impl takes the fused kernel
/// otherwise); a call without it is a programming error, reported as such.
template <class Tune, class ExecSpace>
void inverse_sqrt_staged(ExecSpace const& space, MatrixBatch<typename ExecSpace::memory_space> c,
                         double rel_clip,
                         InverseSqrtWorkspace<typename ExecSpace::memory_space>& work) {
  using Mem = typename ExecSpace::memory_space;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  using Scratch = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  int const nmat = int(c.extent(0)), m = int(c.extent(1));
  if (!inverse_sqrt_staged_fits<ExecSpace>(m))
    throw std::logic_error("solve::inverse_sqrt_staged: called with blocks of " +
                           std::to_string(m) + ", too wide for its team scratch");
  EigRounds<Mem> const r(space, nmat, m, Tune::eig_round, work);
  int const n = m;  // rows of Z formed and rotated, and Q's columns

  auto prepare = KOKKOS_LAMBDA(Member const& team) {
    int const b = team.league_rank();
    Scratch s(team.team_scratch(0), eig_prepare_doubles(r.m, team.team_size()));
    eig_prepare_packed(team, r, b, &c(b, 0, 0), s.data());
  };
  Kokkos::parallel_for(
      "kspecter::solve::inverse_sqrt::prepare",
      team_policy_for<Policy>(space, nmat,
                              int(Scratch::shmem_size(eig_prepare_doubles(m, Tune::eig_team_size))),
                              0, prepare, Tune::eig_team_size),
      prepare);

  // The rounds: a chain team's (d, e) fit the scratch of a slice of Z (about
  // eig_apply_cols rows, as even as m allows), so that the chains take no room from the
  // rotations' teams.
  int const groups = (n + Tune::eig_apply_cols - 1) / Tune::eig_apply_cols;
  int const width = (n + groups - 1) / groups;
  int const slice = m * width + 2 * m;
  int const fit = slice / (2 * m + 1) > 1 ? slice / (2 * m + 1) : 1;
  int const per = std::min({Tune::eig_chain_team, Tune::eig_apply_cols, fit});
  int const chain_league = (nmat + per - 1) / per;
  EigRound<ExecSpace, Tune::coalesce> round{r, c, nmat, per, groups, width};
  int const bytes = int(Scratch::shmem_size(std::max(slice, per * (2 * m + 1))));
  auto const launch = [&](int into, int by) {
    round.set(into, by, chain_league);
    int running = 0;
    Kokkos::parallel_reduce(
        "kspecter::solve::inverse_sqrt::rounds",
        team_policy_for<Policy>(space, round.chain_teams + round.rot_teams, bytes, 0, round,
                                Tune::eig_apply_cols, Kokkos::ParallelReduceTag()),
        round, running);
    return running;
  };
  // Round 0's chains beside Z's formation; then round k + 1's beside round k's rotations.
  int running = launch(0, -1);
  for (int k = 0;; ++k) {
    bool const more = running > 0;
    running = launch(more ? (k + 1) % 2 : -1, k % 2);
    if (!more) break;
  }

  if constexpr (Tune::eig_finish_dmma)
    if (eig_finish_dmma<Tune::eig_finish_warps, Tune::eig_finish_teams_per_sm>(space, r, c, n,
                                                                               rel_clip))
      return;
  // finish: Q, its GEMM staged through level 0.
  int const gtr = tile_for<Tune>(n), gtn = tile_for<Tune>(n);
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
    eig_finish<Tune>(team, work, &c(b, 0, 0), r.m, n, &r.vec(b, 0), &r.zt(b, 0, 0), ok, rel, tr,
                     tn);
  };
  Kokkos::parallel_for(
      "kspecter::solve::inverse_sqrt::finish",
      team_policy_for<Policy>(space, nmat, int(Scratch::shmem_size(stage)),
                              int(Scratch::shmem_size(l1)), finish, Tune::eig_team_size),
      finish);
}

}  // namespace kspecter::solve::detail
