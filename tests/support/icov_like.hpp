// An SPD test matrix shaped like extraction's iCov, shared by the solve tests and
// bench_solve (so that both measure the same structure). No GoogleTest here.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace kspecter::test {

/// An inverse covariance shaped like extraction's iCov (fiber-major, n = nfiber * nwave):
/// Aᵀ W A for Gaussian spots of sigma ~ 1 bin in wavelength that leak into the neighbouring
/// fibers, with random pixel weights, plus the 1e-15 ridge of docs/algorithm.md §4.
inline std::vector<double> icov_like(int nfiber, int nwave, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> ud(0.5, 1.5);
  int const n = nfiber * nwave;
  // Pixel rows: one per (fiber column, wavelength) with a 3-column cross-talk profile.
  int const hw = 4;
  std::vector<double> a(std::size_t(n) * n, 0.0);
  std::vector<std::pair<int, double>> col;
  for (int px = 0; px < nfiber; ++px)       // pixel column group = fiber trace
    for (int sub = 0; sub < 3; ++sub)       // three pixel columns per trace
      for (int py = 0; py < nwave; ++py) {  // pixel row
        col.clear();
        double const ivar = ud(gen);
        for (int f = px - 1; f <= px + 1; ++f) {
          if (f < 0 || f >= nfiber) continue;
          double const xf = (f - px) * 3.0 + 1.0 - sub;  // distance in pixel columns
          double const gx = std::exp(-0.5 * xf * xf / (1.1 * 1.1));
          for (int w = std::max(0, py - hw); w <= std::min(nwave - 1, py + hw); ++w) {
            double const dy = py - w + 0.07 * (f + 1);
            col.push_back({f * nwave + w, gx * std::exp(-0.5 * dy * dy / (0.9 * 0.9))});
          }
        }
        for (auto const& [i, vi] : col)
          for (auto const& [j, vj] : col) a[std::size_t(i) * n + j] += ivar * vi * vj;
      }
  for (int i = 0; i < n; ++i) a[std::size_t(i) * n + i] += 1e-15;
  return a;
}

}  // namespace kspecter::test
