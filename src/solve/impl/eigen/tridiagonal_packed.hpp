// Householder tridiagonalisation of a symmetric matrix held as its packed lower triangle in
// team scratch, for the staged inverse square root (inverse_sqrt_staged.hpp, which also forms
// the basis Z from the reflectors). A 74 x 74 block is 43.8 KB, more than a CUDA team's
// level-0 scratch in Kokkos 3.4 (40 KB); its lower triangle is 22.2 KB.
#pragma once

#include <Kokkos_Core.hpp>
#include <kspecter/core/kokkos_compat.hpp>

#include "../common/team_sum.hpp"
#include "eig_steps.hpp"

namespace kspecter::solve::detail {

/// Where A[i][j], i >= j, sits in packed lower storage (rows one after another).
KOKKOS_INLINE_FUNCTION int packed(int i, int j) { return i * (i + 1) / 2 + j; }

/// The row i of the packed lower triangle's t-th element: i (i + 1) / 2 <= t < (i + 1) (i +
/// 2) / 2. A float square root (exact for t below 2^21), then corrected by one either way.
KOKKOS_INLINE_FUNCTION int packed_row(int t) {
  int i = int((compat::sqrt(8.0f * float(t) + 1.0f) - 1.0f) * 0.5f);
  if ((i + 1) * (i + 2) / 2 <= t) ++i;
  if (i * (i + 1) / 2 > t) --i;
  return i;
}

/// Where reflector k's vector starts in a column-packed store of v_0, v_1, ... (v_k has
/// m - 1 - k entries, for rows k + 1 .. m - 1).
KOKKOS_INLINE_FUNCTION int reflector_offset(int k, int m) { return k * (m - 1) - k * (k - 1) / 2; }

/// Reduces the symmetric m x m matrix whose lower triangle is `p` (packed, team scratch) to
/// tridiagonal form T = Zᵀ A Z with Z = H_0 ⋯ H_{m-3}, H_k = I - tau_k v_k v_kᵀ: d, e, tau as
/// team_tridiagonalize (eig_steps.hpp), with the same reflectors; v_k is left in column k below
/// the diagonal. Only the lower triangle is updated, so T is that of a matrix kept exactly
/// symmetric. `w`: 2 m + team_sum_doubles(team size) doubles of team scratch.
template <class Member>
KOKKOS_INLINE_FUNCTION void team_tridiagonalize_packed(Member const& team, double* p, int m,
                                                       double* d, double* e, double* tau,
                                                       double* w) {
  double* const v = w;       // v_k, contiguous
  double* const pw = w + m;  // p = tau A' v (w = p - (tau vᵀp / 2) v is formed where used)
  double* const red = w + 2 * m;
  int const rank = team.team_rank(), ts = team.team_size();
  for (int k = 0; k + 1 < m; ++k) {
    int const r = m - k - 1, k1 = k + 1;
    double const x0 = p[packed(k1, k)];  // read before the reduction's barrier: it changes below
    double part = 0.0;
    for (int t = rank; t < r; t += ts) {
      double const x = p[packed(k1 + t, k)];
      part += x * x;
    }
    double const sigma = team_sum(team, part, red);
    if (r == 1 || sigma == 0.0) {  // nothing to annihilate: H_k = I
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        d[k] = p[packed(k, k)];
        e[k] = x0;
        tau[k] = 0.0;
      });
      team.team_barrier();  // the next team_sum writes `red`
      continue;
    }
    Householder const h = householder(x0, sigma);
    double const alpha = h.alpha, tk = h.tau;
    // v = x - alpha e_0, by every thread from its own alpha (the reduction gave each the same
    // sigma): no barrier between the reflector and its copy.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r), [&](int t) {
      if (t == 0) {
        p[packed(k1, k)] = v[0] = x0 - alpha;
        d[k] = p[packed(k, k)];
        e[k] = alpha;
        tau[k] = tk;
      } else {
        v[t] = p[packed(k1 + t, k)];
      }
    });
    team.team_barrier();
    // p_j = tau Σ_t A'[j][t] v_t: row j of the triangle up to the diagonal, then column j,
    // in one loop whose entry is chosen by t (a GPU warp's threads would otherwise run both
    // loops, each as long as its longest thread's: twice the instructions).
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r), [&](int j) {
      int const row = packed(k1 + j, k1);
      int below = packed(k1 + j + 1, k1 + j);  // (k1 + t, k1 + j) for t = j + 1, then down
      double s = 0.0;
      for (int t = 0; t < r; ++t) {
        bool const left = t <= j;
        s += p[left ? row + t : below] * v[t];
        below += left ? 0 : k1 + t + 1;
      }
      pw[j] = tk * s;
    });
    team.team_barrier();
    part = 0.0;
    for (int i = rank; i < r; i += ts) part += v[i] * pw[i];
    double const half = 0.5 * tk * team_sum(team, part, red);
    // A' -= v wᵀ + w vᵀ on the lower triangle, w = p - half v formed where it is used (the
    // same numbers as a vector of it, without its pass and barrier); one element a thread,
    // consecutive threads on consecutive addresses. The reduction above has every thread's
    // reads of p behind it. Its end barrier is the one team_sum's next call needs.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r * (r + 1) / 2), [&](int t) {
      int const i = packed_row(t), j = t - i * (i + 1) / 2;
      double const wi = pw[i] - half * v[i], wj = pw[j] - half * v[j];
      p[packed(k1 + i, k1 + j)] -= v[i] * wj + wi * v[j];
    });
    team.team_barrier();
  }
  Kokkos::single(Kokkos::PerTeam(team), [&]() {
    d[m - 1] = p[packed(m - 1, m - 1)];
    e[m - 1] = 0.0;
  });
  team.team_barrier();
}

}  // namespace kspecter::solve::detail
