// The spot kernel behind compute_spots (spots.hpp): one team per (fiber, block of
// wavelengths), everything a spot needs in team scratch.
//
// Per wavelength the kernel
//   1. evaluates the Legendre polynomials P_k(u) of the three ranges (XTRACE, YTRACE, PSF);
//   2. forms the trace X, Y and the spot parameters (sigmas, GH-i-j, tails) as dot products
//      with them, and writes the spot's corner;
//   3. evaluates the Gauss-Hermite edge functions E_k at the nx+1 x-edges and ny+1 y-edges
//      (gauss_hermite.hpp): one erf and one exp per edge;
//   4. takes the 1-D pixel integrals pGHx_i, pGHy_j as differences of neighbouring edges;
//   5. contracts the y integrals with the coefficients: U_i[iy] = sum_j GH-i-j pGHy_j[iy];
//   6. forms spot[iy][ix] = sum_i U_i[iy] pGHx_i[ix] (+ tails), clipped at 0;
//   7. normalises the spot to sum 1 and writes it out.
// Steps 5-6 turn the (ghdegx+1)(ghdegy+1) outer products of the definition into two small
// matrix products: 1.8k instead of 9.2k multiply-adds for a DESI spot.
//
// Two drivers share the per-element code, so both do the same arithmetic in the same order:
// - GPU: a thread (a warp's vector lanes) per wavelength of the team's block runs the seven
//   steps, each over all its lanes, on that wavelength's scratch; no team barrier. The spot
//   is written out with coalesced stores.
// - Host: a team is one thread that runs all seven steps for one wavelength before the next,
//   so one wavelength's scratch (5 kB for DESI) stays in L1, and steps 6-7 are loops over
//   contiguous pixels that the compiler vectorises.
#pragma once

#include <kspecter/core/kokkos_compat.hpp>
#include <kspecter/psf/gauss_hermite.hpp>
#include <kspecter/psf/gauss_hermite_psf.hpp>
#include <kspecter/psf/legendre.hpp>

#include <Kokkos_Core.hpp>

namespace kspecter::psf::detail {

/// HostLoops: the host driver (teams of one thread, which compute_spots sees to); false:
/// the team driver, which GPU backends always use and tests also run on host backends.
template <class ExecSpace, bool HostLoops>
struct SpotKernel {
  using mem = typename ExecSpace::memory_space;
  using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using scratch_view = Kokkos::View<double*, typename ExecSpace::scratch_memory_space,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr bool host = HostLoops;

  Kokkos::View<double const**, Kokkos::LayoutRight, mem> xtrace, ytrace;
  Kokkos::View<double const***, Kokkos::LayoutRight, mem> sp;  // DevicePsf::spot_params
  Kokkos::View<double const*, mem> wave;
  Kokkos::View<double****, Kokkos::LayoutRight, mem> values;
  Kokkos::View<int**, Kokkos::LayoutRight, mem> xc, yc;
  int fiber_begin = 0, nwave = 0, waves_per_team = 1, nblocks = 1;
  int hsizex = 0, hsizey = 0, nx = 1, ny = 1, ngx = 1, ngy = 1;
  int nterm = 0;                  // per-wavelength values: X, Y, then the spot parameters
  int ncx = 1, ncy = 1, ncp = 1;  // Legendre coefficients of XTRACE, YTRACE, PSF table
  bool tails = false;
  double xw0 = 0, xw1 = 1, yw0 = 0, yw1 = 1, pw0 = 0, pw1 = 1;
  // Scratch layout of one wavelength (in doubles): Legendre bases | parameters |
  // x edges [ngx][nx+1] | y edges [ngy][ny+1] | pGHx [ngx][nx] | pGHy [ngy][ny] |
  // U [ngx][ny] | spot [ny][nx].
  int off_lp = 0, off_pr = 0, off_ex = 0, off_ey = 0, off_px = 0, off_py = 0, off_u = 0, off_s = 0,
      per_wave = 0;

  // Indices into the per-wavelength parameters.
  static constexpr int kX = 0, kY = 1, kSigX = 2, kSigY = 3, kGH = 4;

  void layout() {
    off_lp = 0;
    off_pr = off_lp + ncx + ncy + ncp;
    off_ex = off_pr + nterm;
    off_ey = off_ex + ngx * (nx + 1);
    off_px = off_ey + ngy * (ny + 1);
    off_py = off_px + ngx * nx;
    off_u = off_py + ngy * ny;
    off_s = off_u + ngx * ny;
    per_wave = off_s + ny * nx;
  }
  /// Wavelengths whose scratch a team holds at once.
  KOKKOS_INLINE_FUNCTION int scratch_waves() const { return host ? 1 : waves_per_team; }

  // ------------------------------------------------------------------ per-element steps
  // `pw` is one wavelength's scratch, `iw` the wavelength's index in the frame.

  /// Step 1, basis a (0: XTRACE, 1: YTRACE, 2: PSF table): P_0..P_{n-1}.
  KOKKOS_INLINE_FUNCTION void basis(double* pw, int iw, int a) const {
    double const lam = wave(iw);
    double u;
    int n;
    double* p = pw + off_lp;
    if (a == 0) {
      u = legendre_u(lam, xw0, xw1), n = ncx;
    } else if (a == 1) {
      u = legendre_u(lam, yw0, yw1), n = ncy, p += ncx;
    } else {
      u = legendre_u(lam, pw0, pw1), n = ncp, p += ncx + ncy;
    }
    // The recurrence of legendre.hpp.
    double pkm1 = 1.0, pk = u;
    p[0] = 1.0;
    for (int k = 1; k < n; ++k) {
      p[k] = pk;
      double const pkp1 = ((2 * k + 1) * u * pk - k * pkm1) / (k + 1);
      pkm1 = pk;
      pk = pkp1;
    }
  }

  /// Step 2, value t: X, Y or spot parameter t - 2 of fiber `fib`.
  KOKKOS_INLINE_FUNCTION void param(double* pw, int fib, int t) const {
    double const* lp = pw + off_lp;
    double const* c;
    int n;
    if (t == kX) {
      c = &xtrace(fib, 0), n = ncx;
    } else if (t == kY) {
      c = &ytrace(fib, 0), lp += ncx, n = ncy;
    } else {
      c = &sp(fib, t - 2, 0), lp += ncx + ncy, n = ncp;
    }
    double v = c[0];
    for (int k = 1; k < n; ++k) v += c[k] * lp[k];
    pw[off_pr + t] = v;
  }

  /// Step 3, edge m of the nx+1 x-edges then the ny+1 y-edges.
  KOKKOS_INLINE_FUNCTION void edge(double* pw, int m) const {
    double const* pr = pw + off_pr;
    if (m <= nx)
      gauss_hermite_edge(spot_edge(m, nx, pixel_offset(pr[kX]), pr[kSigX]), ngx - 1,
                         pw + off_ex + m, nx + 1);
    else
      gauss_hermite_edge(spot_edge(m - nx - 1, ny, pixel_offset(pr[kY]), pr[kSigY]), ngy - 1,
                         pw + off_ey + m - nx - 1, ny + 1);
  }

  /// Step 3 on the host, one axis: the edge functions at the n+1 edges of a spot of n pixels
  /// into e[k * (n + 1) + m]. The erf is taken at every edge, but the Gaussian phi by its
  /// ratio between neighbouring edges, t_{m+1} = t_m + h (h = 1/sigma):
  ///   phi(t + h) = phi(t) exp(-t h - h^2/2), and that factor shrinks by exp(-h^2) per step,
  /// walking outwards from the edge nearest t = 0 (so nothing underflows before it should):
  /// 4 exp per axis instead of n+1. exp is a third of the host's time; the walk adds a few
  /// ulp of relative error (tested against quadrature and against the GPU's direct exp).
  KOKKOS_INLINE_FUNCTION static void edges_axis(int n, double frac, double sigma, int deg,
                                                double* e) {
    constexpr double inv_sqrt2 = 0.70710678118654752440;
    constexpr double inv_sqrt2pi = 0.39894228040143267794;
    int const ne = n + 1;
    double t[2 * max_half_size + 2];
    for (int m = 0; m < ne; ++m) t[m] = spot_edge(m, n, frac, sigma);
    for (int m = 0; m < ne; ++m) e[m] = 0.5 * compat::erf(t[m] * inv_sqrt2);
    if (deg < 1) return;
    double* const phi = e + ne;  // E_1 = -phi: the row is filled with phi, then negated
    int const mc = n / 2 + (frac > 0.0 ? 1 : 0);  // edge nearest t = 0
    double const h = 1.0 / sigma, tc = t[mc];
    double const q = compat::exp(-h * h);
    phi[mc] = compat::exp(-0.5 * tc * tc) * inv_sqrt2pi;
    double g = compat::exp(-tc * h - 0.5 * h * h);
    for (int m = mc + 1; m < ne; ++m, g *= q) phi[m] = phi[m - 1] * g;
    g = compat::exp(tc * h - 0.5 * h * h);
    for (int m = mc - 1; m >= 0; --m, g *= q) phi[m] = phi[m + 1] * g;
    // E_1 = -phi, E_2 = t E_1, E_{k+1} = t E_k - (k-1) E_{k-1}: the Hermite recurrence
    // carried by the products He_{k-1} phi, one row (all edges) at a time.
    for (int m = 0; m < ne; ++m) phi[m] = -phi[m];
    if (deg < 2) return;
    for (int m = 0; m < ne; ++m) e[2 * ne + m] = t[m] * e[ne + m];
    for (int k = 2; k < deg; ++k) {
      double const* const ek = e + k * ne;
      double const* const ekm1 = e + (k - 1) * ne;
      double* const ekp1 = e + (k + 1) * ne;
      for (int m = 0; m < ne; ++m) ekp1[m] = t[m] * ek[m] - (k - 1) * ekm1[m];
    }
  }

  KOKKOS_INLINE_FUNCTION void corner(double const* pw, int f, int iw) const {
    xc(f, iw) = spot_corner(pw[off_pr + kX], hsizex);
    yc(f, iw) = spot_corner(pw[off_pr + kY], hsizey);
  }

  /// Step 4, pixel m of row r (r < ngx: pGHx_r, else pGHy_{r-ngx}).
  KOKKOS_INLINE_FUNCTION void pixel_integral(double* pw, int r, int m) const {
    if (r < ngx)
      pw[off_px + r * nx + m] = pw[off_ex + r * (nx + 1) + m + 1] - pw[off_ex + r * (nx + 1) + m];
    else
      pw[off_py + (r - ngx) * ny + m] =
          pw[off_ey + (r - ngx) * (ny + 1) + m + 1] - pw[off_ey + (r - ngx) * (ny + 1) + m];
  }

  /// Step 5: U_i[iy] = sum_j GH-i-j pGHy_j[iy].
  KOKKOS_INLINE_FUNCTION void contract_y(double* pw, int i, int iy) const {
    double const* const c = pw + off_pr + kGH + i * ngy;  // GH-i-j = c[j]
    double const* const py = pw + off_py + iy;
    double acc = c[0] * py[0];
    for (int j = 1; j < ngy; ++j) acc += c[j] * py[j * ny];
    pw[off_u + i * ny + iy] = acc;
  }

  /// Step 6, one pixel: sum_i U_i[iy] pGHx_i[ix] (+ tails), clipped at 0 (NaN -> 0).
  KOKKOS_INLINE_FUNCTION void pixel(double* pw, int iy, int ix) const {
    double const* const U = pw + off_u + iy;
    double const* const px = pw + off_px + ix;
    double v = U[0] * px[0];
    for (int i = 1; i < ngx; ++i) v += U[i * ny] * px[i * nx];
    if (tails) v += tail(pw, ix, iy);
    pw[off_s + iy * nx + ix] = v > 0.0 ? v : 0.0;
  }

  /// specter's power-law wings at the centre of pixel (ix, iy):
  /// TAILAMP r^2 / (TAILCORE^2 + r^2)^(1 + TAILINDE/2), r scaled by TAILXSCA, TAILYSCA.
  KOKKOS_INLINE_FUNCTION double tail(double const* pw, int ix, int iy) const {
    double const* const pr = pw + off_pr;
    int const kt = kGH + ngx * ngy;
    double const amp = pr[kt], core = pr[kt + 1], xsca = pr[kt + 2], ysca = pr[kt + 3],
                 index = pr[kt + 4];
    double const ddx = (ix - hsizex - pixel_offset(pr[kX])) * xsca;
    double const ddy = (iy - hsizey - pixel_offset(pr[kY])) * ysca;
    double const r2 = ddx * ddx + ddy * ddy;
    return amp * r2 / compat::pow(core * core + r2, 1.0 + 0.5 * index);
  }

  /// 1 / sum of the spot, or 0 when nothing is positive (a broken PSF): all-zero spot.
  KOKKOS_INLINE_FUNCTION static double inverse_norm(double sum) {
    return (sum > 0.0 && compat::isfinite(sum)) ? 1.0 / sum : 0.0;
  }

  /// out[m] = sum_k coef[k * cs] rows[k * rs + m] for m < n, k ascending (the first term
  /// a product, then multiply-adds: the order of contract_y and pixel), four outputs at a
  /// time held in registers.
  KOKKOS_INLINE_FUNCTION static void combine(double* out, double const* coef, int cs,
                                             double const* rows, int rs, int nk, int n) {
    int m = 0;
    for (; m + 4 <= n; m += 4) {
      double const c0 = coef[0];
      double a0 = c0 * rows[m], a1 = c0 * rows[m + 1], a2 = c0 * rows[m + 2], a3 = c0 * rows[m + 3];
      for (int k = 1; k < nk; ++k) {
        double const c = coef[k * cs];
        double const* const r = rows + k * rs + m;
        a0 += c * r[0];
        a1 += c * r[1];
        a2 += c * r[2];
        a3 += c * r[3];
      }
      out[m] = a0;
      out[m + 1] = a1;
      out[m + 2] = a2;
      out[m + 3] = a3;
    }
    for (; m < n; ++m) {
      double a = coef[0] * rows[m];
      for (int k = 1; k < nk; ++k) a += coef[k * cs] * rows[k * rs + m];
      out[m] = a;
    }
  }

  // ------------------------------------------------------------------ drivers

  KOKKOS_INLINE_FUNCTION void operator()(member_type const& team) const {
    int const lr = team.league_rank();
    int const f = lr / nblocks;
    int const w0 = (lr - f * nblocks) * waves_per_team;
    int const nw = (nwave - w0) < waves_per_team ? (nwave - w0) : waves_per_team;
    scratch_view scratch(team.team_scratch(0), std::size_t(scratch_waves()) * per_wave);
    if constexpr (host)
      run_host(scratch.data(), f, w0, nw);
    else
      run_team(team, scratch.data(), f, w0, nw);
  }

  /// Host: one wavelength after the other, plain loops.
  KOKKOS_INLINE_FUNCTION void run_host(double* pw, int f, int w0, int nw) const {
    int const fib = fiber_begin + f;
    int const npix = nx * ny;
    double* const S = pw + off_s;
    for (int w = 0; w < nw; ++w) {
      int const iw = w0 + w;
      for (int a = 0; a < 3; ++a) basis(pw, iw, a);
      for (int t = 0; t < nterm; ++t) param(pw, fib, t);
      corner(pw, f, iw);
      double const* const pr = pw + off_pr;
      edges_axis(nx, pixel_offset(pr[kX]), pr[kSigX], ngx - 1, pw + off_ex);
      edges_axis(ny, pixel_offset(pr[kY]), pr[kSigY], ngy - 1, pw + off_ey);
      for (int r = 0; r < ngx + ngy; ++r)
        for (int m = 0; m < (r < ngx ? nx : ny); ++m) pixel_integral(pw, r, m);
      // Steps 5 and 6 as contract_y() and pixel() compute them (same terms, same order),
      // with the pixel loop innermost and register-blocked.
      for (int i = 0; i < ngx; ++i)
        combine(pw + off_u + i * ny, pw + off_pr + kGH + i * ngy, 1, pw + off_py, ny, ngy, ny);
      for (int iy = 0; iy < ny; ++iy) {
        double* const row = S + iy * nx;
        combine(row, pw + off_u + iy, ny, pw + off_px, nx, ngx, nx);
        if (tails)
          for (int ix = 0; ix < nx; ++ix) row[ix] += tail(pw, ix, iy);
        for (int ix = 0; ix < nx; ++ix) row[ix] = row[ix] > 0.0 ? row[ix] : 0.0;
      }
      // Four partial sums: a single chain would wait on each addition.
      double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
      int p = 0;
      for (; p + 4 <= npix; p += 4) {
        s0 += S[p];
        s1 += S[p + 1];
        s2 += S[p + 2];
        s3 += S[p + 3];
      }
      for (; p < npix; ++p) s0 += S[p];
      double const sum = (s0 + s1) + (s2 + s3);
      double const scale = inverse_norm(sum);
      double* const out = &values(f, iw, 0, 0);
      for (int q = 0; q < npix; ++q) out[q] = S[q] * scale;
    }
  }

  /// f(r, c) for r < rows, c < cols over the thread's vector lanes (r-major). Kokkos ends a
  /// vector loop with a sync of the thread's lanes (a GPU warp's), so the next step sees what
  /// this one wrote.
  template <class F>
  KOKKOS_INLINE_FUNCTION static void lanes_2d(member_type const& team, int rows, int cols,
                                              F const& f) {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, rows * cols), [&](int const k) {
      int const r = k / cols;
      f(r, k - r * cols);
    });
  }

  /// GPU: a thread (a warp's vector lanes) per wavelength of the block runs the seven steps
  /// on its own wavelength's scratch, each step over all its lanes. No team barrier: a
  /// wavelength's steps need only its own lanes' results.
  KOKKOS_INLINE_FUNCTION void run_team(member_type const& team, double* base, int f, int w0,
                                       int nw) const {
    int const fib = fiber_begin + f;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nw), [&](int const w) {
      double* const pw = base + w * per_wave;
      int const iw = w0 + w;
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, 3),
                           [&](int const a) { basis(pw, iw, a); });
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, nterm),
                           [&](int const t) { param(pw, fib, t); });
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, nx + ny + 2), [&](int const m) {
        edge(pw, m);
        if (m == 0) corner(pw, f, iw);
      });
      // Step 4: the ngx rows of nx x-pixels, then the ngy rows of ny y-pixels.
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, ngx * nx + ngy * ny), [&](int const k) {
        int const ky = k - ngx * nx;
        if (ky < 0) {
          int const r = k / nx;
          pixel_integral(pw, r, k - r * nx);
        } else {
          int const r = ky / ny;
          pixel_integral(pw, ngx + r, ky - r * ny);
        }
      });
      lanes_2d(team, ngx, ny, [&](int const i, int const iy) { contract_y(pw, i, iy); });
      lanes_2d(team, ny, nx, [&](int const iy, int const ix) { pixel(pw, iy, ix); });
      int const npix = nx * ny;
      double const* const S = pw + off_s;
      double sum = 0.0;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, npix), [&](int const p, double& acc) { acc += S[p]; },
          sum);
      double const scale = inverse_norm(sum);
      double* const out = &values(f, iw, 0, 0);
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, npix),
                           [&](int const p) { out[p] = S[p] * scale; });
    });
  }
};

}  // namespace kspecter::psf::detail
