// Pixel-integrated Gauss-Hermite functions (docs/algorithm.md §2), callable on host and device.
//
// With probabilists' Hermite polynomials He_k and phi(t) = exp(-t^2/2)/sqrt(2 pi), the integral
// of He_k phi over a pixel [t_m, t_{m+1}] (t in units of sigma) is
//   k = 0:  (erf(t_{m+1}/sqrt 2) - erf(t_m/sqrt 2)) / 2
//   k >= 1: He_{k-1}(t_m) phi(t_m) - He_{k-1}(t_{m+1}) phi(t_{m+1})
// because d/dt [-He_{k-1}(t) phi(t)] = He_k(t) phi(t). Both are differences E_k(t_{m+1}) -
// E_k(t_m) of one "edge function" E_0 = erf(t/sqrt 2)/2, E_k = -He_{k-1} phi, so a spot needs
// the edge functions at its nx+1 (ny+1) pixel edges only.
#pragma once

#include <kspecter/core/kokkos_compat.hpp>

namespace kspecter::psf {

/// He_n(t) by the recurrence He_{k+1} = t He_k - k He_{k-1}.
KOKKOS_INLINE_FUNCTION double hermite_e(int n, double t) {
  if (n <= 0) return 1.0;
  double hm1 = 1.0, h = t;
  for (int k = 1; k < n; ++k) {
    double const hp1 = t * h - k * hm1;
    hm1 = h;
    h = hp1;
  }
  return h;
}

/// Edge functions E_0..E_deg at t, written to e[0], e[stride], ..., e[deg * stride].
KOKKOS_INLINE_FUNCTION void gauss_hermite_edge(double t, int deg, double* e, int stride = 1) {
  constexpr double inv_sqrt2 = 0.70710678118654752440;    // 1/sqrt(2)
  constexpr double inv_sqrt2pi = 0.39894228040143267794;  // 1/sqrt(2 pi)
  e[0] = 0.5 * compat::erf(t * inv_sqrt2);
  if (deg < 1) return;
  double const phi = compat::exp(-0.5 * t * t) * inv_sqrt2pi;
  double hm1 = 0.0, h = 1.0;  // He_{-1} (unused), He_0
  for (int k = 1; k <= deg; ++k) {
    e[k * stride] = -h * phi;  // E_k = -He_{k-1} phi
    double const hp1 = t * h - (k - 1) * hm1;
    hm1 = h;
    h = hp1;
  }
}

/// Scaled pixel edge m of a spot of n pixels whose centre is offset by `frac` (in pixels,
/// in [-0.5, 0.5)) from the central pixel's centre: t_m = (m - n/2 - 0.5 - frac) / sigma.
KOKKOS_INLINE_FUNCTION double spot_edge(int m, int n, double frac, double sigma) {
  return ((m - n / 2 - 0.5) - frac) / sigma;
}

/// Offset of a trace position from the centre of its nearest pixel, in [-0.5, 0.5):
/// ((X + 0.5) mod 1) - 0.5 (x = 0 is the centre of pixel 0).
KOKKOS_INLINE_FUNCTION double pixel_offset(double x) {
  double const a = x + 0.5;
  return (a - compat::floor(a)) - 0.5;
}

/// Lower-left CCD pixel of a spot of half size `hsize` centred at trace position x:
/// floor(x - hsize + 0.5).
/// (Clamped to +-2^30 so that a wildly extrapolated trace cannot overflow the int.)
KOKKOS_INLINE_FUNCTION int spot_corner(double x, int hsize) {
  double const c = compat::floor(x - hsize + 0.5);
  constexpr double lim = 1073741824.0;
  return static_cast<int>(c < -lim ? -lim : (c > lim ? lim : (c == c ? c : -lim)));
}

/// The 1-D pixel integrals p[k * n + m] of He_k phi, k = 0..deg, over the n pixels of a spot
/// (host reference and tests; the spot kernel shares gauss_hermite_edge with it).
KOKKOS_INLINE_FUNCTION void pixel_integrals(int n, double frac, double sigma, int deg, double* p,
                                            double* edge_scratch /* (deg + 1) * (n + 1) */) {
  for (int m = 0; m <= n; ++m)
    gauss_hermite_edge(spot_edge(m, n, frac, sigma), deg, edge_scratch + m, n + 1);
  for (int k = 0; k <= deg; ++k)
    for (int m = 0; m < n; ++m)
      p[k * n + m] = edge_scratch[k * (n + 1) + m + 1] - edge_scratch[k * (n + 1) + m];
}

}  // namespace kspecter::psf
