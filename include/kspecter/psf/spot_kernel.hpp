// The spot kernel behind compute_spots (spots.hpp): one team per (fiber, block of
// wavelengths), everything a spot needs in team scratch.
//
// Per wavelength the team
//   1. evaluates the trace X, Y and the spot parameters (sigmas, GH-i-j, tails) from their
//      Legendre series, and writes the spot's corner;
//   2. evaluates the Gauss-Hermite edge functions E_k at the nx+1 x-edges and ny+1 y-edges
//      (gauss_hermite.hpp): one erf and one exp per edge, the 1-D pixel integrals being
//      differences of neighbouring edges;
//   3. contracts the x integrals with the coefficients: T_j[ix] = sum_i GH-i-j pGHx_i[ix];
//   4. forms spot[iy][ix] = sum_j pGHy_j[iy] T_j[ix] (+ tails), clipped at 0;
//   5. normalises the spot to sum 1 and writes it out (contiguous, coalesced on a GPU).
// Step 3 turns the (ghdegx+1)(ghdegy+1) outer products of the definition into two small
// matrix products: 2.1k instead of 9.2k multiply-adds for a DESI spot.
#pragma once

#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/psf/gauss_hermite.hpp>
#include <kspecter/psf/legendre.hpp>

#include <Kokkos_Core.hpp>

namespace kspecter::psf::detail {

template <class ExecSpace>
struct SpotKernel {
  using mem = typename ExecSpace::memory_space;
  using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using scratch_view = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  Kokkos::View<double const**, Kokkos::LayoutRight, mem> xtrace, ytrace;
  Kokkos::View<double const***, Kokkos::LayoutRight, mem> sp;  // DevicePsf::spot_params
  Kokkos::View<double const*, mem> wave;
  Kokkos::View<double****, Kokkos::LayoutRight, mem> values;
  Kokkos::View<int**, Kokkos::LayoutRight, mem> xc, yc;
  int fiber_begin = 0, nwave = 0, waves_per_team = 1, nblocks = 1;
  int hsizex = 0, hsizey = 0, nx = 1, ny = 1, ngx = 1, ngy = 1;
  int nsp = 0;    // rows of sp used: 2 + ngx*ngy (+ 5 with tails)
  int nterm = 0;  // per-wavelength values: X, Y, then the nsp spot parameters
  int ncx = 1, ncy = 1, ncp = 1;  // Legendre coefficients of XTRACE, YTRACE, PSF table
  bool tails = false;
  double xw0 = 0, xw1 = 1, yw0 = 0, yw1 = 1, pw0 = 0, pw1 = 1;
  // Scratch layout of one wavelength (in doubles): parameters | x edges [ngx][nx+1] |
  // y edges [ngy][ny+1] | T [ngy][nx] | spot [ny][nx].
  int off_ex = 0, off_ey = 0, off_t = 0, off_s = 0, per_wave = 0;

  // Indices into the per-wavelength parameters.
  static constexpr int kX = 0, kY = 1, kSigX = 2, kSigY = 3, kGH = 4;

  void layout() {
    off_ex = nterm;
    off_ey = off_ex + ngx * (nx + 1);
    off_t = off_ey + ngy * (ny + 1);
    off_s = off_t + ngy * nx;
    per_wave = off_s + ny * nx;
  }

  KOKKOS_INLINE_FUNCTION void operator()(member_type const& team) const {
    int const lr = team.league_rank();
    int const f = lr / nblocks;
    int const w0 = (lr - f * nblocks) * waves_per_team;
    int const nw = (nwave - w0) < waves_per_team ? (nwave - w0) : waves_per_team;
    int const fib = fiber_begin + f;
    scratch_view scratch(team.team_scratch(0), std::size_t(waves_per_team) * per_wave);
    double* const base = scratch.data();

    // 1. Legendre series: trace and spot parameters.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nw), [&](int const w) {
      double* const pr = base + w * per_wave;
      double const lam = wave(w0 + w);
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, nterm), [&](int const t) {
        double v;
        if (t == kX)
          v = legendre_sum(&xtrace(fib, 0), ncx, legendre_u(lam, xw0, xw1));
        else if (t == kY)
          v = legendre_sum(&ytrace(fib, 0), ncy, legendre_u(lam, yw0, yw1));
        else
          v = legendre_sum(&sp(fib, t - 2, 0), ncp, legendre_u(lam, pw0, pw1));
        pr[t] = v;
      });
    });
    team.team_barrier();

    // 2. Corners and edge functions.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nw), [&](int const w) {
      double* const pr = base + w * per_wave;
      double const X = pr[kX], Y = pr[kY];
      double const fx = pixel_offset(X), fy = pixel_offset(Y);
      double const sx = pr[kSigX], sy = pr[kSigY];
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, nx + ny + 2), [&](int const m) {
        if (m <= nx) {
          gauss_hermite_edge(spot_edge(m, nx, fx, sx), ngx - 1, pr + off_ex + m, nx + 1);
        } else {
          int const my = m - nx - 1;
          gauss_hermite_edge(spot_edge(my, ny, fy, sy), ngy - 1, pr + off_ey + my, ny + 1);
        }
        if (m == 0) {
          xc(f, w0 + w) = spot_corner(X, hsizex);
          yc(f, w0 + w) = spot_corner(Y, hsizey);
        }
      });
    });
    team.team_barrier();

    // 3. T_j[ix] = sum_i GH-i-j pGHx_i[ix].
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nw * ngy), [&](int const wj) {
      int const w = wj / ngy, j = wj - w * ngy;
      double* const pr = base + w * per_wave;
      double const* const ex = pr + off_ex;
      double const* const c = pr + kGH + j;  // GH-i-j = c[i * ngy]
      double* const T = pr + off_t + j * nx;
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, nx), [&](int const ix) {
        double acc = 0.0;
        for (int i = 0; i < ngx; ++i)
          acc += c[i * ngy] * (ex[i * (nx + 1) + ix + 1] - ex[i * (nx + 1) + ix]);
        T[ix] = acc;
      });
    });
    team.team_barrier();

    // 4. spot[iy][ix] = sum_j pGHy_j[iy] T_j[ix] (+ tails), clipped at 0.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nw * ny), [&](int const wy) {
      int const w = wy / ny, iy = wy - w * ny;
      double const* const pr = base + w * per_wave;
      double const* const ey = pr + off_ey + iy;
      double const* const T = pr + off_t;
      double* const S = base + w * per_wave + off_s + iy * nx;
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, nx), [&](int const ix) {
        double v = 0.0;
        for (int j = 0; j < ngy; ++j) v += (ey[j * (ny + 1) + 1] - ey[j * (ny + 1)]) * T[j * nx + ix];
        if (tails) {
          // specter's wings, at pixel centres: amp r^2 / (core^2 + r^2)^(1 + index/2).
          int const kt = kGH + ngx * ngy;
          double const amp = pr[kt], core = pr[kt + 1], xsca = pr[kt + 2], ysca = pr[kt + 3],
                       index = pr[kt + 4];
          double const ddx = (ix - hsizex - pixel_offset(pr[kX])) * xsca;
          double const ddy = (iy - hsizey - pixel_offset(pr[kY])) * ysca;
          double const r2 = ddx * ddx + ddy * ddy;
          v += amp * r2 / compat::pow(core * core + r2, 1.0 + 0.5 * index);
        }
        S[ix] = v > 0.0 ? v : 0.0;  // also maps NaN to 0
      });
    });
    team.team_barrier();

    // 5. Normalise and write out.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nw), [&](int const w) {
      double const* const S = base + w * per_wave + off_s;
      int const npix = nx * ny;
      double sum = 0.0;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, npix), [&](int const p, double& acc) { acc += S[p]; },
          sum);
      bool const ok = sum > 0.0 && compat::isfinite(sum);
      double* const out = &values(f, w0 + w, 0, 0);
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, npix),
                           [&](int const p) { out[p] = ok ? S[p] / sum : 0.0; });
    });
  }
};

}  // namespace kspecter::psf::detail
