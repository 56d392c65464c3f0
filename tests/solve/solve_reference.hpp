// Independent host references for the batched solves, in long double and written the
// straightforward way (unblocked Cholesky, Gauss-Jordan inverse, cyclic Jacobi
// eigensolver), plus the random matrices the tests feed to both.
#pragma once

#include <icov_like.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace kspecter::test::solve_ref {

using LD = long double;

/// A fresh seed per run (printed by the tests), or $KSPECTER_TEST_SEED to replay one.
inline std::uint64_t fresh_seed() {
  if (char const* s = std::getenv("KSPECTER_TEST_SEED"); s && *s) return std::stoull(s);
  std::random_device rd;
  return (std::uint64_t(rd()) << 32) ^ rd();
}

/// A = B Bᵀ / n + shift I with B standard normal and square: eigenvalues in [shift, about
/// 4 + shift]. B Bᵀ's smallest eigenvalue lands anywhere near zero, at random, so the
/// condition number is bounded only by the shift; with_spectrum fixes it.
inline std::vector<double> random_spd(int n, std::uint64_t seed, double shift = 1e-3) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> nd;
  std::vector<double> b(std::size_t(n) * n);
  for (auto& x : b) x = nd(gen);
  std::vector<double> a(std::size_t(n) * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      LD s = 0;
      for (int k = 0; k < n; ++k) s += LD(b[i * n + k]) * b[j * n + k];
      double const v = double(s / n) + (i == j ? shift : 0.0);
      a[i * n + j] = v;
      a[j * n + i] = v;
    }
  return a;
}

/// V diag(lambda) Vᵀ with V a random orthogonal matrix (Gram-Schmidt twice, long double): a
/// symmetric matrix whose spectrum, and so condition, is the caller's.
inline std::vector<double> with_spectrum(std::vector<double> const& lambda, std::uint64_t seed) {
  int const m = int(lambda.size());
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> nd;
  std::vector<LD> v(std::size_t(m) * m);  // columns
  for (auto& x : v) x = nd(gen);
  for (int j = 0; j < m; ++j)
    for (int pass = 0; pass < 2; ++pass) {
      for (int k = 0; k < j; ++k) {
        LD d = 0;
        for (int i = 0; i < m; ++i) d += v[i * m + j] * v[i * m + k];
        for (int i = 0; i < m; ++i) v[i * m + j] -= d * v[i * m + k];
      }
      LD nrm = 0;
      for (int i = 0; i < m; ++i) nrm += v[i * m + j] * v[i * m + j];
      nrm = std::sqrt(nrm);
      for (int i = 0; i < m; ++i) v[i * m + j] /= nrm;
    }
  std::vector<double> c(std::size_t(m) * m);
  for (int a = 0; a < m; ++a)
    for (int b = 0; b <= a; ++b) {
      LD s = 0;
      for (int k = 0; k < m; ++k) s += v[a * m + k] * lambda[k] * v[b * m + k];
      c[a * m + b] = c[b * m + a] = double(s);
    }
  return c;
}

using ::kspecter::test::icov_like;  // tests/support/icov_like.hpp

/// Unblocked Cholesky (lower); throws if a pivot is not positive.
inline std::vector<LD> cholesky(std::vector<double> const& a, int n) {
  std::vector<LD> l(std::size_t(n) * n, 0.0L);
  for (int j = 0; j < n; ++j) {
    LD d = a[std::size_t(j) * n + j];
    for (int k = 0; k < j; ++k) d -= l[j * n + k] * l[j * n + k];
    if (!(d > 0)) throw std::runtime_error("reference cholesky: not positive definite");
    d = std::sqrt(d);
    l[j * n + j] = d;
    for (int i = j + 1; i < n; ++i) {
      LD s = a[std::size_t(i) * n + j];
      for (int k = 0; k < j; ++k) s -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = s / d;
    }
  }
  return l;
}

/// Gauss-Jordan inverse with partial pivoting.
inline std::vector<LD> inverse(std::vector<double> const& a, int n) {
  std::vector<LD> m(a.begin(), a.end());
  std::vector<LD> inv(std::size_t(n) * n, 0.0L);
  for (int i = 0; i < n; ++i) inv[i * n + i] = 1;
  for (int c = 0; c < n; ++c) {
    int p = c;
    for (int r = c + 1; r < n; ++r)
      if (std::fabs(m[r * n + c]) > std::fabs(m[p * n + c])) p = r;
    if (p != c)
      for (int k = 0; k < n; ++k) {
        std::swap(m[c * n + k], m[p * n + k]);
        std::swap(inv[c * n + k], inv[p * n + k]);
      }
    LD const d = m[c * n + c];
    for (int k = 0; k < n; ++k) {
      m[c * n + k] /= d;
      inv[c * n + k] /= d;
    }
    for (int r = 0; r < n; ++r) {
      if (r == c) continue;
      LD const f = m[r * n + c];
      if (f == 0) continue;
      for (int k = 0; k < n; ++k) {
        m[r * n + k] -= f * m[c * n + k];
        inv[r * n + k] -= f * inv[c * n + k];
      }
    }
  }
  return inv;
}

/// Cyclic Jacobi: a (symmetric, destroyed) = V diag(w) Vᵀ, V's columns the eigenvectors.
inline void jacobi_eigen(std::vector<LD> a, int n, std::vector<LD>& w, std::vector<LD>& v) {
  v.assign(std::size_t(n) * n, 0.0L);
  for (int i = 0; i < n; ++i) v[i * n + i] = 1;
  for (int sweep = 0; sweep < 100; ++sweep) {
    LD off = 0, tot = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) (i == j ? tot : off) += a[i * n + j] * a[i * n + j];
    if (off <= 1e-34L * (tot + off)) break;  // relative off-diagonal norm 1e-17
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) {
        LD const apq = a[p * n + q];
        if (apq == 0) continue;
        LD const theta = (a[q * n + q] - a[p * n + p]) / (2 * apq);
        LD const t = (theta >= 0 ? 1 : -1) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        LD const c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < n; ++k) {  // columns p, q
          LD const akp = a[k * n + p], akq = a[k * n + q];
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (int k = 0; k < n; ++k) {  // rows p, q
          LD const apk = a[p * n + k], aqk = a[q * n + k];
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        for (int k = 0; k < n; ++k) {
          LD const vkp = v[k * n + p], vkq = v[k * n + q];
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
  }
  w.resize(n);
  for (int i = 0; i < n; ++i) w[i] = a[i * n + i];
}

/// c^(-1/2) with eigenvalues clipped below rel_clip * max (the documented rule).
inline std::vector<LD> inverse_sqrt(std::vector<LD> const& c, int m, double rel_clip) {
  std::vector<LD> w, v;
  jacobi_eigen(c, m, w, v);
  LD const floor = LD(rel_clip) * *std::max_element(w.begin(), w.end());
  std::vector<LD> f(m);
  for (int i = 0; i < m; ++i) f[i] = 1 / std::sqrt(std::max(w[i], floor));
  std::vector<LD> q(std::size_t(m) * m, 0.0L);
  for (int a = 0; a < m; ++a)
    for (int b = 0; b < m; ++b) {
      LD s = 0;
      for (int k = 0; k < m; ++k) s += v[a * m + k] * f[k] * v[b * m + k];
      q[a * m + b] = s;
    }
  return q;
}

/// max |x - y| / max |y|; infinity where x holds a NaN or an infinity (std::max would pass
/// over a NaN).
template <class X, class Y>
double rel_maxdiff(X const& x, Y const& y) {
  LD num = 0, den = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (!std::isfinite(double(x[i]))) return std::numeric_limits<double>::infinity();
    num = std::max<LD>(num, std::fabs(LD(x[i]) - LD(y[i])));
    den = std::max<LD>(den, std::fabs(LD(y[i])));
  }
  return double(num / (den > 0 ? den : 1));
}

}  // namespace kspecter::test::solve_ref
