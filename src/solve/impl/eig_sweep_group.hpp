// N consecutive QL sweeps of a record applied to a row of the basis Z in one pass
// (inverse_sqrt_staged.hpp's rotations; docs/algorithm.md §4, Decorrelation).
//
// A sweep rotates its positions hi down to lo, so its rotation q finishes position q + 1. The
// next sweep's rotation q then needs only the first sweep's rotation q - 1 before it: the N
// sweeps run as a wavefront a position apart, and each entry of the row is loaded and stored
// once for the N of them. One sweep at a time loaded and stored every entry once a sweep, and
// on a GPU those scratch accesses, not the arithmetic, bounded the rotations
// (perf/gpu_runs.md, session 15). Each rotation is the same arithmetic on the same inputs in
// either order, so the result is the same bits.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <kspecter/core/kokkos_compat.hpp>

#include "unroll.hpp"

namespace kspecter::solve::detail {

/// One plane rotation (c, s), aligned so that a GPU loads it in one access.
struct alignas(16) CsPair {
  double c, s;
};

/// Scratch doubles for a group's table of N sweeps over blocks of m, and where the table starts
/// in them: 16-byte aligned, after at most one double. The first 2 m doubles may serve other
/// uses before the sweeps.
template <int N>
KOKKOS_INLINE_FUNCTION int group_table_doubles(int m) {
  return 2 * N * m + 2;
}
KOKKOS_INLINE_FUNCTION CsPair* group_table(double* scratch) {
  auto const p = reinterpret_cast<std::uintptr_t>(scratch);
  return reinterpret_cast<CsPair*>((p + 15) & ~std::uintptr_t(15));
}

/// Sweeps [first, first + n) of a record (n <= N: the last group of a round may have fewer),
/// where their rotations start in the record, and the union [lo, hi] of their ranges.
template <int N>
struct SweepGroup {
  int n = 0, lo = 0, hi = -1;
  int slo[N], shi[N], off[N];

  /// From the record's sweep list `sw` (lo, hi pairs), `nsweep` sweeps in all, sweep `first`
  /// starting at rotation `offset`.
  KOKKOS_INLINE_FUNCTION SweepGroup(int const* sw, int nsweep, int first, int offset) {
    KSPECTER_UNROLL
    for (int j = 0; j < N; ++j) {
      bool const in = first + j < nsweep;
      slo[j] = in ? sw[2 * (first + j)] : 0;
      shi[j] = in ? sw[2 * (first + j) + 1] : -1;
      off[j] = offset;
      offset += shi[j] - slo[j] + 1;
      if (in) {
        lo = n == 0 || slo[j] < lo ? slo[j] : lo;
        hi = n == 0 || shi[j] > hi ? shi[j] : hi;
        ++n;
      }
    }
  }
  /// Where the record's next group starts.
  KOKKOS_INLINE_FUNCTION int end() const { return off[N - 1] + shi[N - 1] - slo[N - 1] + 1; }
};

/// A thread's share of a group's rotations, held in registers: read from the record before
/// the group ahead of it rotates, written to the team's table in scratch after (so that the
/// loads' latency hides behind the rotations). The table holds sweep j's rotation at
/// position q in entry (q - lo) N + j, and the identity where sweep j does not reach q.
template <int N>
struct GroupShare {
  static constexpr int most = 4;  // entries a thread holds a sweep; any beyond go directly
  double c[N][most], s[N][most];

  template <class Member>
  KOKKOS_INLINE_FUNCTION void load(Member const& team, SweepGroup<N> const& g, double const* cs,
                                   double const* sn) {
    int const rank = team.team_rank(), ts = team.team_size();
    KSPECTER_UNROLL
    for (int j = 0; j < N; ++j) {
      int const len = g.shi[j] - g.slo[j] + 1;
      KSPECTER_UNROLL
      for (int k = 0; k < most; ++k) {
        int const t = rank + k * ts;
        if (t < len) {
          c[j][k] = cs[g.off[j] + t];
          s[j][k] = sn[g.off[j] + t];
        }
      }
    }
  }

  /// The group's table ((hi - lo + 1) x N pairs) in `table`; cs, sn as given to load().
  template <class Member>
  KOKKOS_INLINE_FUNCTION void store(Member const& team, SweepGroup<N> const& g, double const* cs,
                                    double const* sn, CsPair* table) const {
    int const rank = team.team_rank(), ts = team.team_size();
    KSPECTER_UNROLL
    for (int j = 0; j < N; ++j) {
      int const len = g.shi[j] - g.slo[j] + 1;
      // Record entry t of sweep j is its rotation at position shi - t (the order they apply).
      KSPECTER_UNROLL
      for (int k = 0; k < most; ++k) {
        int const t = rank + k * ts;
        if (t < len) table[(g.shi[j] - t - g.lo) * N + j] = {c[j][k], s[j][k]};
      }
      for (int t = rank + most * ts; t < len; t += ts)
        table[(g.shi[j] - t - g.lo) * N + j] = {cs[g.off[j] + t], sn[g.off[j] + t]};
    }
    for (int q = g.lo + rank; q <= g.hi; q += ts) {
      KSPECTER_UNROLL
      for (int j = 0; j < N; ++j)
        if (q < g.slo[j] || q > g.shi[j]) table[(q - g.lo) * N + j] = {1.0, 0.0};
    }
  }
};

/// Applies a group's N sweeps to one row of Z (x = its entry 0, entries `stride` apart), with
/// the group's table from GroupShare. At step t sweep j rotates position t + j: sweep 0 takes
/// entry t from memory, each sweep hands the position it finishes to the next, and the last
/// one stores entry t + N. An identity rotation moves no bit of a finite entry, so the
/// sweeps may share the union of their ranges.
template <int N>
KOKKOS_INLINE_FUNCTION void rotate_column_group(double* x, int stride, CsPair const* table, int lo,
                                                int hi) {
  double carry[N];
  carry[0] = x[(hi + 1) * stride];
  // Sweep j's rotation at position q on the entry v of position q that sweep j - 1 finished;
  // returns position q + 1 finished by sweep j.
  auto const rotate = [&](int j, int q, double v) {
    CsPair const r = table[(q - lo) * N + j];
    double const out = r.s * v + r.c * carry[j];
    carry[j] = r.c * v - r.s * carry[j];
    return out;
  };
  // Any step, the wavefront's ends included: a sweep not started yet passes nothing on, at
  // hi + 1 it takes its first entry, below lo it hands on its last one (position lo), and
  // after that it is done.
  auto const edge = [&](int t) {
    bool have = t >= lo;
    double v = have ? x[t * stride] : 0.0;
    KSPECTER_UNROLL
    for (int j = 0; j < N; ++j) {
      int const q = t + j;
      if (q > hi + 1) {
        have = false;
      } else if (q == hi + 1) {
        if (j > 0) carry[j] = v;
        have = false;
      } else if (q >= lo) {
        v = rotate(j, q, v);
        have = true;
      } else if (q == lo - 1) {
        v = carry[j];
        have = true;
      } else {
        have = false;
      }
    }
    if (have) x[(t + N) * stride] = v;
  };
  constexpr int U = 8;  // entries loaded ahead of the stores (see update_column)
  int t = hi;
  for (; t > hi - N + 1 && t >= lo - N; --t) edge(t);
  // Every sweep inside its range: steps t down to lo, U at a time.
  for (; t - U + 1 >= lo; t -= U) {
    double v[U];
    KSPECTER_UNROLL
    for (int u = 0; u < U; ++u) v[u] = x[(t - u) * stride];
    KSPECTER_UNROLL
    for (int u = 0; u < U; ++u) {
      KSPECTER_UNROLL
      for (int j = 0; j < N; ++j) v[u] = rotate(j, t - u + j, v[u]);
    }
    KSPECTER_UNROLL
    for (int u = 0; u < U; ++u) x[(t - u + N) * stride] = v[u];
  }
  for (; t >= lo; --t) {
    double v = x[t * stride];
    KSPECTER_UNROLL
    for (int j = 0; j < N; ++j) v = rotate(j, t + j, v);
    x[(t + N) * stride] = v;
  }
  // Steps down to lo - N, where the last sweep hands on position lo.
  for (int k = t - (lo - N); k >= 0; --k) edge(lo - N + k);
}

}  // namespace kspecter::solve::detail
