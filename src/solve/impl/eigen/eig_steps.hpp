// The steps of the symmetric eigensolver behind solve::inverse_sqrt (docs/algorithm.md §4):
// Householder tridiagonalisation, the eigenvector basis it leaves, plane rotations applied to
// that basis, and Q = V diag(w^-1/2) Vᵀ. inverse_sqrt.hpp runs them in one kernel a batch;
// inverse_sqrt_staged.hpp shares the reflector, the column rotation and the final Q with it.
#pragma once

#include <Kokkos_Core.hpp>
#include <kspecter/core/kokkos_compat.hpp>

#include "../common/team_gemm.hpp"
#include "../common/unroll.hpp"
#include "../tuning.hpp"

namespace kspecter::solve {

namespace detail {

/// x[i * stride] = f(i, x[i * stride]) for i < n, on a GPU thread's column of a matrix in
/// global memory. The rows are loaded U at a time before any of them is stored: the compiler
/// cannot prove that a store to row i leaves row i + 1 alone, so the plain loop waits one
/// memory latency per row, and these loops are the inverse square root's critical path.
template <int U, class F>
KOKKOS_INLINE_FUNCTION void update_column(double* x, int stride, int n, F const& f) {
  int i = 0;
  for (; i + U <= n; i += U) {
    double t[U];
    KSPECTER_UNROLL
    for (int l = 0; l < U; ++l) t[l] = x[(i + l) * stride];
    KSPECTER_UNROLL
    for (int l = 0; l < U; ++l) t[l] = f(i + l, t[l]);
    KSPECTER_UNROLL
    for (int l = 0; l < U; ++l) x[(i + l) * stride] = t[l];
  }
  for (; i < n; ++i) x[i * stride] = f(i, x[i * stride]);
}

/// Rows loaded ahead by update_column and apply_rotation_chain on a GPU.
constexpr int column_batch = 8;

/// The reflector H = I - tau v vᵀ, v = x - alpha e_0, that maps x (first entry x0, xᵀx =
/// sigma > 0) to alpha e_0, alpha of the sign opposite to x0's.
struct Householder {
  double alpha, tau;
};
KOKKOS_INLINE_FUNCTION Householder householder(double x0, double sigma) {
  double const nrm = compat::sqrt(sigma);
  double const alpha = x0 > 0.0 ? -nrm : nrm;
  return {alpha, 1.0 / (sigma - x0 * alpha)};  // tau = 2 / vᵀv, no cancellation
}

/// Reduces the symmetric m x m matrix a (full storage, row-major) to tridiagonal form
/// T = Zᵀ a Z with Z = H_0 ⋯ H_{m-3}, H_k = I - tau_k v_k v_kᵀ. Leaves d (diagonal), e (e[k] =
/// T[k][k+1], e[m-1] = 0), tau, and v_k in row k of a (columns k+1..m-1); the rest of a is
/// scratch afterwards.
template <class Tune, class Member>
KOKKOS_INLINE_FUNCTION void team_tridiagonalize(Member const& team, double* a, int m, double* d,
                                                double* e, double* tau, double* pv) {
  for (int k = 0; k + 1 < m; ++k) {
    int const r = m - k - 1;
    double* row = a + k * m + k + 1;  // x = a[k][k+1:], becomes v
    double const x0 = row[0];
    double sigma = 0.0;
    if (r > 1)
      Kokkos::parallel_reduce(
          Kokkos::TeamThreadRange(team, r), [&](int t, double& acc) { acc += row[t] * row[t]; },
          sigma);
    if (r == 1 || sigma == 0.0) {
      // Nothing to annihilate (or only underflowing values): H_k = I.
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        d[k] = a[k * m + k];
        e[k] = x0;
        tau[k] = 0.0;
      });
      // The next column's reduction reuses the team's reduction scratch: without a barrier a
      // fast thread starts writing it while a slow one still reads this sigma (racecheck on
      // the H200 found it with an all-zero block, where every column takes this branch).
      team.team_barrier();
      continue;
    }
    Householder const h = householder(x0, sigma);
    double const alpha = h.alpha, tk = h.tau;
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      row[0] = x0 - alpha;
      d[k] = a[k * m + k];
      e[k] = alpha;
      tau[k] = tk;
    });
    team.team_barrier();
    double* const a1 = a + (k + 1) * m + k + 1;  // A' = a[k+1:, k+1:], row stride m
    // p = tau A' v. Host: a thread per row, contiguous dot products. GPU: a thread per
    // column (A' is symmetric), so that a warp reads consecutive addresses.
    if constexpr (Tune::coalesce) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r), [&](int j) {
        double s = 0.0;
        for (int i = 0; i < r; ++i) s += a1[i * m + j] * row[i];
        pv[j] = tk * s;
      });
    } else {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r),
                           [&](int i) { pv[i] = tk * dot<Tune>(a1 + i * m, row, r); });
    }
    team.team_barrier();
    double vp = 0.0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, r), [&](int i, double& acc) { acc += row[i] * pv[i]; }, vp);
    double const half = 0.5 * tk * vp;
    // A' -= v wᵀ + w vᵀ with w = p - half v (rows on the host, columns on a GPU)
    if constexpr (Tune::coalesce) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r), [&](int j) {
        double const vj = row[j], wj = pv[j] - half * vj;
        update_column<column_batch>(a1 + j, m, r, [&](int i, double x) {
          return x - (row[i] * wj + (pv[i] - half * row[i]) * vj);
        });
      });
    } else {
      // w once, in place of p (the same doubles as forming it in every row: no contraction
      // on the host, see CMakeLists.txt), then two products per element.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r),
                           [&](int j) { pv[j] = pv[j] - half * row[j]; });
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r), [&](int i) {
        double* ai = a1 + i * m;
        double const vi = row[i], wi = pv[i];
        for (int j = 0; j < r; ++j) ai[j] -= vi * pv[j] + wi * row[j];
      });
    }
    team.team_barrier();
  }
  Kokkos::single(Kokkos::PerTeam(team), [&]() {
    d[m - 1] = a[(m - 1) * m + m - 1];
    e[m - 1] = 0.0;
  });
  team.team_barrier();
}

/// zt = Zᵀ = H_{m-3} ⋯ H_0 from the reflectors left by team_tridiagonalize, accumulated
/// backwards so that step k only touches the trailing block [k+1:, k+1:].
/// Host: zt ← zt H_k row by row (one contiguous dot and axpy per row).
/// GPU: Z ← H_k Z column by column (a thread per column, coalesced), then Z is transposed.
template <class Tune, class Member>
KOKKOS_INLINE_FUNCTION void team_form_zt(Member const& team, double const* a, int m,
                                         double const* tau, double* zt) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m), [&](int i) {
    for (int j = 0; j < m; ++j) zt[i * m + j] = i == j ? 1.0 : 0.0;
  });
  team.team_barrier();
  for (int k = m - 3; k >= 0; --k) {
    double const tk = tau[k];
    if (tk == 0.0) continue;
    int const r = m - k - 1;
    double const* v = a + k * m + k + 1;
    double* const z1 = zt + (k + 1) * m + k + 1;
    if constexpr (Tune::coalesce) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r), [&](int c) {
        double u = 0.0;
        for (int i = 0; i < r; ++i) u += v[i] * z1[i * m + c];
        u *= tk;
        update_column<column_batch>(z1 + c, m, r, [&](int i, double x) { return x - v[i] * u; });
      });
    } else {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r), [&](int i) {
        double* zi = z1 + i * m;
        double const u = tk * dot<Tune>(zi, v, r);
        for (int c = 0; c < r; ++c) zi[c] -= u * v[c];
      });
    }
    team.team_barrier();
  }
  if constexpr (Tune::coalesce) {  // Z -> Zᵀ
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m), [&](int i) {
      for (int j = 0; j < i; ++j) {
        double const t = zt[i * m + j];
        zt[i * m + j] = zt[j * m + i];
        zt[j * m + i] = t;
      }
    });
    team.team_barrier();
  }
}

/// One column's share of a QL sweep (x = the column's first row, rows `stride` apart):
/// rotations hi down to lo, rotation i at cs[ofs + Dir * i], sn[ofs + Dir * i]. Its rows are
/// loaded column_batch at a time ahead of the stores (see update_column): row i is read by
/// rotation i before rotation i - 1 writes it.
template <int Dir>
KOKKOS_INLINE_FUNCTION void rotate_column(double* x, int stride, double const* cs, double const* sn,
                                          int ofs, int lo, int hi) {
  constexpr int U = column_batch;
  double carry = x[(hi + 1) * stride];
  int i = hi;
  for (; i - U + 1 >= lo; i -= U) {
    double g[U], c[U], s[U];
    KSPECTER_UNROLL
    for (int l = 0; l < U; ++l) {
      g[l] = x[(i - l) * stride];
      c[l] = cs[ofs + Dir * (i - l)];
      s[l] = sn[ofs + Dir * (i - l)];
    }
    KSPECTER_UNROLL
    for (int l = 0; l < U; ++l) {
      x[(i - l + 1) * stride] = s[l] * g[l] + c[l] * carry;
      carry = c[l] * g[l] - s[l] * carry;
    }
  }
  for (; i >= lo; --i) {
    double const c = cs[ofs + Dir * i], s = sn[ofs + Dir * i];
    double const g = x[i * stride];
    x[(i + 1) * stride] = s * g + c * carry;
    carry = c * g - s * carry;
  }
  x[lo * stride] = carry;
}

/// Applies the rotations hi, hi-1, ..., lo of one QL sweep to the rows of zt: rotation i
/// mixes rows i and i+1 (row i+1 <- s row_i + c row_{i+1}, row i <- c row_i - s row_{i+1}).
/// Each column runs the whole chain with the running row in registers, so every row is
/// read and written once per sweep; the team splits the columns (chunks of 8 on the host,
/// vectorised; one per thread on a GPU).
template <class Tune, class Member>
KOKKOS_INLINE_FUNCTION void apply_rotation_chain(Member const& team, double* zt, int m,
                                                 double const* cs, double const* sn, int lo,
                                                 int hi) {
#if KSPECTER_SOLVE_HOST_SIMD
  if constexpr (Tune::host_simd) {
    if (team.team_size() == 1) {
      if (RotationFn const f = host_rotation_kernel()) {
        f(zt, m, cs, sn, lo, hi);
        return;
      }
    }
  }
#endif
  constexpr int W = Tune::coalesce ? 1 : 8;
  int const nchunk = (m + W - 1) / W;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nchunk), [&](int ch) {
    int const c0 = ch * W;
    if (c0 + W <= m) {
      double carry[W];
      for (int l = 0; l < W; ++l) carry[l] = zt[(hi + 1) * m + c0 + l];
      for (int i = hi; i >= lo; --i) {
        double const c = cs[i], s = sn[i];
        double const* zi = zt + i * m + c0;
        double* zj = zt + (i + 1) * m + c0;
        // Separate loops (loads first) so that the lanes vectorise without alias checks.
        double g[W];
        for (int l = 0; l < W; ++l) g[l] = zi[l];
        for (int l = 0; l < W; ++l) zj[l] = s * g[l] + c * carry[l];
        for (int l = 0; l < W; ++l) carry[l] = c * g[l] - s * carry[l];
      }
      for (int l = 0; l < W; ++l) zt[lo * m + c0 + l] = carry[l];
    } else {
      for (int col = c0; col < m; ++col) rotate_column<1>(zt + col, m, cs, sn, 0, lo, hi);
    }
  });
}

}  // namespace detail

// Clipping, as gpu_specter (linalg.clipped_eigh, clip_scale = 1e-14): eigenvalues below
// rel_clip * (largest eigenvalue) are raised to that floor, negative ones included. Unlike
// gpu_specter, whose cupy.max takes the largest eigenvalue of the whole batch, the floor is
// per matrix, so that a result does not depend on which matrices share its batch.
// A matrix whose largest eigenvalue is not positive, or that holds NaN/Inf, or whose QL
// iteration does not converge, gets Q = 0 (the caller's ivar = 0), never NaN.
namespace detail {

/// Symmetrises A (a no-op for the exactly symmetric blocks of inverse_diagonal_blocks) and
/// reduces it to the tridiagonal (d, e) = vec[0, 2m) with its eigenvector basis in zt.
template <class Tune, class Member>
KOKKOS_INLINE_FUNCTION void eig_prepare(Member const& team, double* A, int m, double* vec,
                                        double* zt) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m), [&](int i) {
    for (int j = 0; j < i; ++j) {
      double const v = 0.5 * (A[i * m + j] + A[j * m + i]);
      A[i * m + j] = v;
      A[j * m + i] = v;
    }
  });
  team.team_barrier();
  double *d = vec, *e = vec + m, *tau = vec + 2 * m, *pv = vec + 3 * m;
  team_tridiagonalize<Tune>(team, A, m, d, e, tau, pv);
  team_form_zt<Tune>(team, A, m, tau, zt);
}

/// A = ztᵀ diag(max(d, clip d_max)^-1/2) zt once the QL iteration converged (`ok`), else 0:
/// zt is m x m (stride m), of which the first n <= m columns are formed; A gets the n x n
/// product at stride m.
template <class Tune, class Member>
KOKKOS_INLINE_FUNCTION void eig_finish(Member const& team, GemmWork const& work, double* A, int m,
                                       int n, double const* d, double* zt, bool ok, double clip,
                                       int gtr, int gtn) {
  double wmax = 0.0;
  Kokkos::single(
      Kokkos::PerTeam(team),
      [&](double& v) {
        v = d[0];
        for (int i = 1; i < m; ++i) v = d[i] > v ? d[i] : v;
      },
      wmax);
  ok = ok && wmax > 0.0 && compat::isfinite(wmax);
  int bad = 0;
  if (ok) {
    double const floor = clip * wmax;
    // Rows of zt are eigenvectors: scale row i by w_i^(-1/4), then Q = ztᵀ zt.
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, m),
        [&](int i, int& nbad) {
          double const w = d[i] > floor ? d[i] : floor;
          double const sc = 1.0 / compat::sqrt(compat::sqrt(w));
          double* zi = zt + i * m;
          int local = 0;
          for (int j = 0; j < n; ++j) {
            zi[j] *= sc;
            local += compat::isfinite(zi[j]) ? 0 : 1;
          }
          nbad += local;
        },
        bad);
  }
  if (ok && bad == 0) {
    // Q is symmetric: its lower triangle, then the upper one copied from it. Element (j, i)
    // is the same products as (i, j) summed in the same order, so the copy is what a full
    // product would store, for half the work.
    GemmArgs const g = gemm(n, n, m, 1.0, Operand{zt, 1, m}, Operand{zt, 1, m}, 0.0, A, m,
                            unsigned(kStoreLower), gtr, gtn);
    team_gemm<Tune>(team, work, g);
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n * n), [&](int e) {
      int const i = e / n, j = e % n;
      if (j > i) A[i * m + j] = A[j * m + i];
    });
  } else {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m), [&](int i) {
      for (int j = 0; j < m; ++j) A[i * m + j] = 0.0;
    });
  }
}

}  // namespace detail
}  // namespace kspecter::solve
