// The sequential part of the implicit QL iteration (inverse_sqrt.hpp, eig_iterate): one
// sweep's chain of plane rotations over a symmetric tridiagonal (d, e), advanced one rotation
// at a time, so that one thread can run two matrices' chains in one loop and overlap their
// latencies (each rotation waits on a square root and a division that wait on the rotation
// before).
#pragma once

#include <Kokkos_Core.hpp>
#include <kspecter/core/kokkos_compat.hpp>

#include "../common/team_gemm.hpp"

namespace kspecter::solve::detail {

/// One matrix's QL state between sweeps and within one. `Rsqrt`: the GPU's form of a
/// rotation (one reciprocal square root instead of a square root and a division).
template <bool Rsqrt>
struct QlChain {
  static constexpr double eps = 2.220446049250313e-16;
  static constexpr int maxit = 60;
  /// Over a matrix's QL vectors as inverse_sqrt lays them out, six of m in `vec`: d, e, two
  /// of the tridiagonalisation's, then the sweep's cosines and sines.
  KOKKOS_INLINE_FUNCTION QlChain(double* vec, int m_)
      : m(m_), d(vec), e(vec + m_), cs(vec + 4 * m_), sn(vec + 5 * m_) {}
  /// Over d and e alone; each sweep's rotations go where record() says.
  KOKKOS_INLINE_FUNCTION QlChain(double* d_, double* e_, int m_)
      : m(m_), d(d_), e(e_), cs(nullptr), sn(nullptr) {}
  int m;
  double *d, *e, *cs, *sn;  // rotation i at cs[ofs + dir * i], sn[ofs + dir * i]
  int ofs = 0, dir = 1;
  int l = 0, iter = 0;  // first eigenvalue not yet converged, sweeps spent on it
  int status = 0;       // 0 running, 1 converged, 2 failed
  int lo = 0, hi = -1;  // the sweep's rotations to apply: hi down to lo

  /// Deflates what has converged and starts the next sweep (shift from the leading 2 x 2
  /// block); false when there is none: every eigenvalue converged, or one did not in maxit
  /// sweeps (status says which).
  KOKKOS_INLINE_FUNCTION bool begin() {
    lo = 0;
    hi = -1;
    while (true) {
      if (l >= m) {
        status = 1;
        return false;
      }
      mm_ = l;
      for (; mm_ + 1 < m; ++mm_) {
        double const dd = compat::fabs(d[mm_]) + compat::fabs(d[mm_ + 1]);
        if (compat::fabs(e[mm_]) <= eps * dd) break;
      }
      if (mm_ != l) break;
      ++l;
      iter = 0;
    }
    if (++iter > maxit) {
      status = 2;
      return false;
    }
    g_ = (d[l + 1] - d[l]) / (2.0 * e[l]);
    double const r = hypot2(g_, 1.0);
    g_ = d[mm_] - d[l] + e[l] / (g_ + (g_ >= 0.0 ? r : -r));
    s_ = 1.0;
    c_ = 1.0;
    p_ = 0.0;
    i_ = mm_ - 1;
    deflated_ = false;
    return true;
  }

  /// After begin(): this sweep's rotations go to cs[0], sn[0], ... in the order they are
  /// made (hi first), so that a record of sweeps reads in the order they are applied.
  KOKKOS_INLINE_FUNCTION void record(double* cs_, double* sn_) {
    cs = cs_;
    sn = sn_;
    ofs = mm_ - 1;
    dir = -1;
  }

  /// Chases the bulge one row up (rotation i); false once the chain is complete.
  KOKKOS_INLINE_FUNCTION bool step() {
    if (i_ < l) return false;
    int const i = i_;
    double const f = s_ * e[i];
    double const bb = c_ * e[i];
    double r, rinv;
    if constexpr (Rsqrt) {
      double const q = f * f + g_ * g_;
      if (q > 1e-300 && q < 1e300) {
        rinv = compat::rsqrt(q);
        r = q * rinv;
      } else {  // squares out of range (or zero)
        r = hypot2(f, g_);
        rinv = 1.0 / r;
      }
    } else {
      r = compat::sqrt(f * f + g_ * g_);
      if (!(r > 1e-150 && r < 1e150)) r = hypot2(f, g_);  // squares out of range
      rinv = 1.0 / r;
    }
    e[i + 1] = r;
    if (r == 0.0) {  // exact split: the rotations so far stand, restart on the rest
      d[i + 1] -= p_;
      e[mm_] = 0.0;
      deflated_ = true;
      return false;
    }
    s_ = f * rinv;
    c_ = g_ * rinv;
    g_ = d[i + 1] - p_;
    r = (d[i] - g_) * s_ + 2.0 * c_ * bb;
    p_ = s_ * r;
    d[i + 1] = g_ + p_;
    g_ = c_ * r - bb;
    cs[ofs + dir * i] = c_;
    sn[ofs + dir * i] = s_;
    --i_;
    return true;
  }

  /// Closes the sweep: sets the rotations to apply (lo..hi), and status 2 when it left a
  /// non-finite number.
  KOKKOS_INLINE_FUNCTION void end() {
    lo = i_ + 1;
    hi = mm_ - 1;
    if (!deflated_) {
      d[l] -= p_;
      e[l] = g_;
      e[mm_] = 0.0;
    }
    if (!(compat::isfinite(d[l]) && compat::isfinite(g_))) status = 2;
  }

 private:
  int mm_ = 0, i_ = 0;
  double g_ = 0, s_ = 1, c_ = 1, p_ = 0;
  bool deflated_ = false;
};

}  // namespace kspecter::solve::detail
