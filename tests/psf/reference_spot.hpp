// Independent host references for the PSF tests, in long double and written straight from
// the definitions (docs/algorithm.md §1-2), sharing no code with kspecter's kernels: explicit
// Legendre and Hermite polynomials, the double sum over GH-i-j of outer products, and
// Gauss-Legendre quadrature for pixel integrals.
#pragma once

#include <kspecter/psf/gauss_hermite_psf.hpp>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace kspecter::test {

/// A number in scientific notation, for RecordProperty.
inline std::string sci(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3e", x);
  return b;
}

/// P_k(u), k <= 8, as explicit polynomials.
inline long double legendre_closed(int k, long double u) {
  long double const u2 = u * u;
  switch (k) {
    case 0: return 1;
    case 1: return u;
    case 2: return (3 * u2 - 1) / 2;
    case 3: return (5 * u2 - 3) * u / 2;
    case 4: return ((35 * u2 - 30) * u2 + 3) / 8;
    case 5: return ((63 * u2 - 70) * u2 + 15) * u / 8;
    case 6: return (((231 * u2 - 315) * u2 + 105) * u2 - 5) / 16;
    case 7: return (((429 * u2 - 693) * u2 + 315) * u2 - 35) * u / 16;
    case 8: return ((((6435 * u2 - 12012) * u2 + 6930) * u2 - 1260) * u2 + 35) / 128;
  }
  throw std::invalid_argument("legendre_closed: degree " + std::to_string(k));
}

/// A Legendre set evaluated with the explicit polynomials.
inline long double legendre_ref(psf::LegendreSet const& s, int fiber, long double w) {
  long double const u = 2 * (w - s.wavemin) / ((long double)s.wavemax - s.wavemin) - 1;
  long double v = 0;
  for (int k = 0; k < s.ncoef; ++k)
    v += (long double)s.coeff[std::size_t(fiber) * s.ncoef + k] * legendre_closed(k, u);
  return v;
}

/// He_k(t), k <= 8, as explicit polynomials.
inline long double hermite_closed(int k, long double t) {
  long double const t2 = t * t;
  switch (k) {
    case 0: return 1;
    case 1: return t;
    case 2: return t2 - 1;
    case 3: return (t2 - 3) * t;
    case 4: return (t2 - 6) * t2 + 3;
    case 5: return ((t2 - 10) * t2 + 15) * t;
    case 6: return ((t2 - 15) * t2 + 45) * t2 - 15;
    case 7: return (((t2 - 21) * t2 + 105) * t2 - 105) * t;
    case 8: return (((t2 - 28) * t2 + 210) * t2 - 420) * t2 + 105;
  }
  throw std::invalid_argument("hermite_closed: degree " + std::to_string(k));
}

inline long double phi_ref(long double t) {
  return std::exp(-t * t / 2) / std::sqrt(2 * 3.141592653589793238462643383279502884L);
}

/// Nodes and weights of n-point Gauss-Legendre quadrature on [-1, 1] (Newton on P_n).
inline void gauss_legendre(int n, std::vector<long double>& x, std::vector<long double>& w) {
  x.assign(n, 0);
  w.assign(n, 0);
  long double const pi = 3.141592653589793238462643383279502884L;
  for (int i = 0; i < n; ++i) {
    long double z = std::cos(pi * (i + 0.75L) / (n + 0.5L));
    long double dp = 0;
    for (int it = 0; it < 100; ++it) {
      long double p0 = 1, p1 = z;
      for (int k = 2; k <= n; ++k) {
        long double const p2 = ((2 * k - 1) * z * p1 - (k - 1) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      dp = n * (z * p1 - p0) / (z * z - 1);
      long double const dz = p1 / dp;
      z -= dz;
      if (std::fabs(dz) < 1e-19L) break;
    }
    x[i] = z;
    w[i] = 2 / ((1 - z * z) * dp * dp);
  }
}

/// Integral of He_k(t) phi(t) over [a, b] by composite Gauss-Legendre quadrature.
inline long double gh_integral_quadrature(int k, long double a, long double b) {
  static std::vector<long double> x, w;
  if (x.empty()) gauss_legendre(24, x, w);
  int const nsub = 8;
  long double sum = 0;
  for (int s = 0; s < nsub; ++s) {
    long double const lo = a + (b - a) * s / nsub, hi = a + (b - a) * (s + 1) / nsub;
    long double const c = (lo + hi) / 2, h = (hi - lo) / 2;
    for (std::size_t i = 0; i < x.size(); ++i) {
      long double const t = c + h * x[i];
      sum += w[i] * h * hermite_closed(k, t) * phi_ref(t);
    }
  }
  return sum;
}

/// One spot straight from docs/algorithm.md §2 (plus specter's tails when `tails`).
struct RefSpot {
  std::vector<long double> v;  // [ny][nx]
  long double X = 0, Y = 0;
  long xc = 0, yc = 0;
};

/// `X`, `Y` (when given) replace the trace position: a trace near x = 4000 px is only known to
/// an ulp (4.5e-13 px) in double, which moves spot values by up to ~2e-13, so the spot tests
/// take the position from evaluate_traces (itself tested against this file's Legendre) and
/// compare the spot alone.
inline RefSpot reference_spot(psf::GaussHermitePsf const& p, int fiber, double wavelength,
                              bool tails, double const* X = nullptr, double const* Y = nullptr) {
  auto param = [&](std::string const& name) {
    int const i = p.param_index(name);
    if (i < 0) throw std::invalid_argument("no parameter " + name);
    return legendre_ref(p.params[i], fiber, wavelength);
  };
  RefSpot r;
  int const nx = 2 * p.hsizex + 1, ny = 2 * p.hsizey + 1;
  r.X = X ? *X : legendre_ref(p.xtrace, fiber, wavelength);
  r.Y = Y ? *Y : legendre_ref(p.ytrace, fiber, wavelength);
  // numpy's (X + 0.5) % 1 - 0.5 in double, as gpu_specter computes it: X + 0.5 is rounded
  // when it crosses a power of two (X = 2047.68 loses an ulp, 2.3e-13 px, which moves spot
  // values by 1e-14), and that rounding is part of the definition.
  auto frac = [](long double x) {
    double const a = double(x) + 0.5;
    return (long double)(a - std::floor(a)) - 0.5L;
  };
  long double const dx = frac(r.X), dy = frac(r.Y);
  long double const sx = param("GHSIGX"), sy = param("GHSIGY");
  auto pgh = [](int k, int n, long double frac, long double sigma, int m) {
    long double const a = (m - n / 2 - 0.5L - frac) / sigma,
                      b = (m + 1 - n / 2 - 0.5L - frac) / sigma;
    if (k == 0) return (std::erf(b / std::sqrt(2.0L)) - std::erf(a / std::sqrt(2.0L))) / 2;
    return hermite_closed(k - 1, a) * phi_ref(a) - hermite_closed(k - 1, b) * phi_ref(b);
  };
  std::vector<long double> px((p.ghdegx + 1) * nx), py((p.ghdegy + 1) * ny);
  for (int i = 0; i <= p.ghdegx; ++i)
    for (int ix = 0; ix < nx; ++ix) px[i * nx + ix] = pgh(i, nx, dx, sx, ix);
  for (int j = 0; j <= p.ghdegy; ++j)
    for (int iy = 0; iy < ny; ++iy) py[j * ny + iy] = pgh(j, ny, dy, sy, iy);
  r.v.assign(std::size_t(nx) * ny, 0);
  for (int i = 0; i <= p.ghdegx; ++i)
    for (int j = 0; j <= p.ghdegy; ++j) {
      long double const c = param("GH-" + std::to_string(i) + "-" + std::to_string(j));
      for (int iy = 0; iy < ny; ++iy)
        for (int ix = 0; ix < nx; ++ix) r.v[iy * nx + ix] += c * py[j * ny + iy] * px[i * nx + ix];
    }
  r.xc = std::lround(std::floor(r.X - p.hsizex + 0.5L));
  r.yc = std::lround(std::floor(r.Y - p.hsizey + 0.5L));
  if (tails) {
    long double const amp = param("TAILAMP"), core = param("TAILCORE"), xs = param("TAILXSCA"),
                      ys = param("TAILYSCA"), ind = param("TAILINDE");
    for (int iy = 0; iy < ny; ++iy)
      for (int ix = 0; ix < nx; ++ix) {
        long double const ddx = (r.xc + ix - r.X) * xs, ddy = (r.yc + iy - r.Y) * ys;
        long double const r2 = ddx * ddx + ddy * ddy;
        r.v[iy * nx + ix] += amp * r2 / std::pow(core * core + r2, 1 + ind / 2);
      }
  }
  long double sum = 0;
  for (auto& x : r.v) {
    if (x < 0) x = 0;
    sum += x;
  }
  for (auto& x : r.v) x /= sum;
  return r;
}

}  // namespace kspecter::test
