// Host-side references for the extraction tests: a toy PSF of pixel-integrated Gaussian spots
// (computed on the host, independent of psf/), a projection of spectra onto the CCD, and a
// dense brute-force solve of one patch in long double.
#pragma once

#include <kspecter/extract/frame.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace kspecter::test {

/// Gaussian spots along straight, slightly tilted traces. x = x0 + dxf * fiber (+ a gap
/// every `bundle` fibers) + tilt * (y - y0); y = y0 + (w - w0) / aperpix.
struct ToyPsf {
  int nfiber = 10;
  int hsizex = 5, hsizey = 4;
  int npix_x = 0, npix_y = 0;  // set by fit_ccd
  double x0 = 12.3, dxf = 6.4, gap = 5.0, tilt = 0.01;
  double y0 = 14.2, w0 = 6000.0, aperpix = 0.45;      // 0.8 A bins -> 1.78 px per bin
  double sigx = 1.05, sigy = 1.15, sig_slope = 2e-4;  // sigma grows slowly with y
  int bundle = 25;
  double wavemin = 5900, wavemax = 6400;
  double wiggle = 0,
         wiggle_period = 4.0;  // y += wiggle sin(2 pi w / period): > ~0.7 px folds the trace back

  int spot_nx() const { return 2 * hsizex + 1; }
  int spot_ny() const { return 2 * hsizey + 1; }
  void trace(int f, double w, double& x, double& y) const {
    y = y0 + (w - w0) / aperpix + wiggle * std::sin(6.283185307179586 * (w - w0) / wiggle_period);
    x = x0 + dxf * f + gap * (f / bundle) + tilt * (y - y0) + 0.3 * std::sin(0.7 * f);
  }
  /// CCD large enough for every fiber over [wavemin, wavemax] plus margin `extra` rows/cols.
  void fit_ccd(int extra_x = 12, int extra_y = 8) {
    double xa, ya, xb, yb;
    trace(nfiber - 1, wavemax, xb, yb);
    trace(0, wavemin, xa, ya);
    npix_x = int(std::ceil(xb + tilt * 0 + hsizex)) + extra_x;
    npix_y = int(std::ceil(yb + hsizey)) + extra_y;
  }
  /// One spot: values [ny][nx] (sum 1), lower-left corner.
  void spot(int f, double w, double* v, int& xc, int& yc) const {
    double x, y;
    trace(f, w, x, y);
    xc = int(std::floor(x - hsizex + 0.5));
    yc = int(std::floor(y - hsizey + 0.5));
    double const sx = sigx * (1 + sig_slope * (y - y0)), sy = sigy * (1 + sig_slope * (y - y0));
    int const nx = spot_nx(), ny = spot_ny();
    std::vector<double> px(static_cast<std::size_t>(nx)), py(static_cast<std::size_t>(ny));
    for (int i = 0; i < nx; ++i) {
      double const c = xc + i;
      px[std::size_t(i)] = 0.5 * (std::erf((c + 0.5 - x) / (std::sqrt(2.0) * sx)) -
                                  std::erf((c - 0.5 - x) / (std::sqrt(2.0) * sx)));
    }
    for (int j = 0; j < ny; ++j) {
      double const c = yc + j;
      py[std::size_t(j)] = 0.5 * (std::erf((c + 0.5 - y) / (std::sqrt(2.0) * sy)) -
                                  std::erf((c - 0.5 - y) / (std::sqrt(2.0) * sy)));
    }
    double sum = 0;
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) sum += px[std::size_t(i)] * py[std::size_t(j)];
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) v[j * nx + i] = px[std::size_t(i)] * py[std::size_t(j)] / sum;
  }

  extract::SpotGeometry geometry(double psferr = 0.01) const {
    extract::SpotGeometry g;
    g.nfiber = nfiber;
    g.npix_x = npix_x;
    g.npix_y = npix_y;
    g.hsizex = hsizex;
    g.hsizey = hsizey;
    g.wavemin = wavemin;
    g.wavemax = wavemax;
    g.psferr = psferr;
    return g;
  }

  /// A SpotProvider computing these spots on the host and copying them to the device.
  template <class MemorySpace>
  extract::SpotProvider<MemorySpace> provider() const {
    ToyPsf const self = *this;
    return [self](int f0, int nf, Kokkos::View<const double*, MemorySpace> wave,
                  psf::Spots<MemorySpace>& out) {
      int const nw = int(wave.extent(0)), ny = self.spot_ny(), nx = self.spot_nx();
      auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), wave);
      out.values =
          Kokkos::View<double****, Kokkos::LayoutRight, MemorySpace>("toy_spots", nf, nw, ny, nx);
      out.xc = Kokkos::View<int**, Kokkos::LayoutRight, MemorySpace>("toy_xc", nf, nw);
      out.yc = Kokkos::View<int**, Kokkos::LayoutRight, MemorySpace>("toy_yc", nf, nw);
      out.fiber_begin = f0;
      auto hv = Kokkos::create_mirror_view(out.values);
      auto hx = Kokkos::create_mirror_view(out.xc);
      auto hy = Kokkos::create_mirror_view(out.yc);
      for (int f = 0; f < nf; ++f)
        for (int w = 0; w < nw; ++w) self.spot(f0 + f, hw(w), &hv(f, w, 0, 0), hx(f, w), hy(f, w));
      Kokkos::deep_copy(out.values, hv);
      Kokkos::deep_copy(out.xc, hx);
      Kokkos::deep_copy(out.yc, hy);
    };
  }
};

/// Noiseless image [ny][nx] of spectra truth[nspec][nwave] (electrons per bin) of fibers
/// [specmin, specmin + nspec) on the grid `wave`.
inline std::vector<double> project(ToyPsf const& psf, int specmin, int nspec,
                                   std::vector<double> const& wave,
                                   std::vector<double> const& truth) {
  std::vector<double> img(std::size_t(psf.npix_x) * psf.npix_y, 0.0);
  int const nx = psf.spot_nx(), ny = psf.spot_ny();
  std::vector<double> v(std::size_t(nx * ny));
  int const nw = int(wave.size());
  for (int s = 0; s < nspec; ++s)
    for (int w = 0; w < nw; ++w) {
      double const t = truth[std::size_t(s) * nw + w];
      int xc, yc;
      psf.spot(specmin + s, wave[std::size_t(w)], v.data(), xc, yc);
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
          int const y = yc + j, x = xc + i;
          if (y >= 0 && y < psf.npix_y && x >= 0 && x < psf.npix_x)
            img[std::size_t(y) * psf.npix_x + x] += t * v[std::size_t(j * nx + i)];
        }
    }
  return img;
}

/// Smooth spectra with lines, positive, electrons per bin.
inline std::vector<double> make_truth(int nspec, std::vector<double> const& wave,
                                      std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  int const nw = int(wave.size());
  std::vector<double> t(std::size_t(nspec) * nw);
  for (int s = 0; s < nspec; ++s) {
    double const cont = 200 + 600 * u(rng), slope = 0.5 * (u(rng) - 0.5);
    double const l1 = wave.front() + u(rng) * (wave.back() - wave.front());
    double const l2 = wave.front() + u(rng) * (wave.back() - wave.front());
    double const a1 = 3000 * u(rng), a2 = 1500 * u(rng);
    for (int w = 0; w < nw; ++w) {
      double const x = wave[std::size_t(w)];
      double const z = (x - wave.front()) / (wave.back() - wave.front() + 1e-9);
      t[std::size_t(s) * nw + w] = cont * (1 + slope * z) +
                                   a1 * std::exp(-0.5 * std::pow((x - l1) / 1.2, 2)) +
                                   a2 * std::exp(-0.5 * std::pow((x - l2) / 0.9, 2));
    }
  }
  return t;
}

/// Standard normal deviates from a fixed generator (Box-Muller: identical on every platform).
struct Normal {
  std::mt19937_64 rng;
  explicit Normal(std::uint64_t seed) : rng(seed) {}
  double operator()() {
    double const u1 = (double(rng() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
    double const u2 = (double(rng() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
};

using LD = long double;

/// Dense Cholesky of a symmetric positive definite n x n matrix (row-major, lower factor).
inline bool dense_cholesky(std::vector<LD>& a, int n) {
  for (int j = 0; j < n; ++j) {
    LD d = a[std::size_t(j) * n + j];
    for (int k = 0; k < j; ++k) d -= a[std::size_t(j) * n + k] * a[std::size_t(j) * n + k];
    if (!(d > 0)) return false;
    LD const l = std::sqrt(d);
    a[std::size_t(j) * n + j] = l;
    for (int i = j + 1; i < n; ++i) {
      LD s = a[std::size_t(i) * n + j];
      for (int k = 0; k < j; ++k) s -= a[std::size_t(i) * n + k] * a[std::size_t(j) * n + k];
      a[std::size_t(i) * n + j] = s / l;
    }
  }
  return true;
}

inline void dense_solve(std::vector<LD> const& l, int n, std::vector<LD>& x) {
  for (int i = 0; i < n; ++i) {
    LD s = x[std::size_t(i)];
    for (int k = 0; k < i; ++k) s -= l[std::size_t(i) * n + k] * x[std::size_t(k)];
    x[std::size_t(i)] = s / l[std::size_t(i) * n + i];
  }
  for (int i = n - 1; i >= 0; --i) {
    LD s = x[std::size_t(i)];
    for (int k = i + 1; k < n; ++k) s -= l[std::size_t(k) * n + i] * x[std::size_t(k)];
    x[std::size_t(i)] = s / l[std::size_t(i) * n + i];
  }
}

/// Symmetric inverse square root of an m x m SPD matrix by cyclic Jacobi (long double).
inline std::vector<LD> dense_inverse_sqrt(std::vector<LD> a, int m, LD rel_clip = 1e-14L) {
  std::vector<LD> v(std::size_t(m) * m, 0);
  for (int i = 0; i < m; ++i) v[std::size_t(i) * m + i] = 1;
  auto A = [&](int i, int j) -> LD& { return a[std::size_t(i) * m + j]; };
  auto V = [&](int i, int j) -> LD& { return v[std::size_t(i) * m + j]; };
  for (int sweep = 0; sweep < 100; ++sweep) {
    LD off = 0, dg = 0;
    for (int i = 0; i < m; ++i) {
      dg += A(i, i) * A(i, i);
      for (int j = i + 1; j < m; ++j) off += A(i, j) * A(i, j);
    }
    if (off <= 1e-40L * dg) break;
    for (int p = 0; p < m - 1; ++p)
      for (int q = p + 1; q < m; ++q) {
        LD const apq = A(p, q);
        if (apq == 0) continue;
        LD const theta = (A(q, q) - A(p, p)) / (2 * apq);
        LD const t = (theta >= 0 ? 1 : -1) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        LD const c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < m; ++k) {
          LD const akp = A(k, p), akq = A(k, q);
          A(k, p) = c * akp - s * akq;
          A(k, q) = s * akp + c * akq;
        }
        for (int k = 0; k < m; ++k) {
          LD const apk = A(p, k), aqk = A(q, k);
          A(p, k) = c * apk - s * aqk;
          A(q, k) = s * apk + c * aqk;
        }
        for (int k = 0; k < m; ++k) {
          LD const vkp = V(k, p), vkq = V(k, q);
          V(k, p) = c * vkp - s * vkq;
          V(k, q) = s * vkp + c * vkq;
        }
      }
  }
  LD wmax = 0;
  for (int i = 0; i < m; ++i) wmax = std::max(wmax, A(i, i));
  std::vector<LD> d(static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i) d[std::size_t(i)] = 1 / std::sqrt(std::max(A(i, i), rel_clip * wmax));
  std::vector<LD> q(std::size_t(m) * m);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) {
      LD s = 0;
      for (int k = 0; k < m; ++k) s += V(i, k) * V(j, k) * d[std::size_t(k)];
      q[std::size_t(i) * m + j] = s;
    }
  return q;
}

/// Brute-force solve of one patch from its window, in long double: dense A from the toy
/// spots, then iCov, y, fluxweight, prior, f, C = iCov^-1, Q per core fiber.
struct BruteForcePatch {
  int n = 0, m = 0, nslots = 0;
  std::vector<LD> a;                  // [npix][n]
  std::vector<LD> icov, y, fw, f, c;  // c: full inverse [n][n]
  std::vector<LD> q;                  // [ncore][m][m]
  std::vector<int> pix_y, pix_x;      // pixel of each row of A

  BruteForcePatch(ToyPsf const& psf, extract::PatchPlan const& plan, extract::PatchDebug const& d,
                  std::vector<double> const& image, std::vector<double> const& ivar,
                  double regularize, double rel_clip = 1e-14) {
    m = plan.nwave_pad;
    nslots = plan.nfiber_slots;
    n = nslots * m;
    int const nx = psf.spot_nx(), ny = psf.spot_ny();
    auto const& p = d.patch;
    int const ylo = std::max(d.y0, 0), yhi = std::min(d.y1, psf.npix_y);
    int const xlo = std::max(d.x0, 0), xhi = std::min(d.x1, psf.npix_x);
    for (int y = ylo; y < yhi; ++y)
      for (int x = xlo; x < xhi; ++x) {
        pix_y.push_back(y);
        pix_x.push_back(x);
      }
    std::size_t const npix = pix_y.size();
    a.assign(npix * std::size_t(n), 0);
    std::vector<double> v(std::size_t(nx * ny));
    for (int k = 0; k < p.nfiber_pad; ++k)
      for (int w = 0; w < m; ++w) {
        int xc, yc;
        psf.spot(p.fiber_pad0 + k, plan.full_wave[std::size_t(p.wave0 + w)], v.data(), xc, yc);
        for (std::size_t r = 0; r < npix; ++r) {
          int const iy = pix_y[r] - yc, ix = pix_x[r] - xc;
          if (iy >= 0 && iy < ny && ix >= 0 && ix < nx)
            a[r * n + std::size_t(k * m + w)] = v[std::size_t(iy * nx + ix)];
        }
      }
    std::vector<LD> wgt(npix), pv(npix);
    for (std::size_t r = 0; r < npix; ++r) {
      std::size_t const i = std::size_t(pix_y[r]) * psf.npix_x + pix_x[r];
      double const iv = ivar[i], im = image[i];
      bool const ok = std::isfinite(iv) && std::isfinite(im) && iv > 0;
      wgt[r] = ok ? iv : 0;
      pv[r] = ok ? im : 0;
    }
    icov.assign(std::size_t(n) * n, 0);
    y.assign(std::size_t(n), 0);
    fw.assign(std::size_t(n), 0);
    std::vector<int> nz;
    for (std::size_t r = 0; r < npix; ++r) {
      nz.clear();
      for (int i = 0; i < n; ++i)
        if (a[r * n + std::size_t(i)] != 0) nz.push_back(i);
      for (int i : nz) {
        LD const ai = a[r * n + std::size_t(i)];
        y[std::size_t(i)] += ai * wgt[r] * pv[r];
        fw[std::size_t(i)] += ai * wgt[r];
        for (int j : nz) icov[std::size_t(i) * n + j] += ai * wgt[r] * a[r * n + std::size_t(j)];
      }
    }
    int const nreal = p.nfiber_pad * m;
    LD mx = 0;
    for (int i = 0; i < nreal; ++i) mx = std::max(mx, fw[std::size_t(i)]);
    LD const minw = 1e-4L * mx;
    for (int i = 0; i < nreal; ++i) {
      LD const al = fw[std::size_t(i)] < minw ? minw - fw[std::size_t(i)] : LD(regularize);
      icov[std::size_t(i) * n + i] += al * al + 1e-15L;
    }
    for (int i = nreal; i < n; ++i) icov[std::size_t(i) * n + i] = 1;
    std::vector<LD> l = icov;
    if (!dense_cholesky(l, n)) return;
    f = y;
    dense_solve(l, n, f);
    c.assign(std::size_t(n) * n, 0);
    for (int j = 0; j < n; ++j) {
      std::vector<LD> e(std::size_t(n), 0);
      e[std::size_t(j)] = 1;
      dense_solve(l, n, e);
      for (int i = 0; i < n; ++i) c[std::size_t(i) * n + j] = e[std::size_t(i)];
    }
    q.clear();
    for (int cc = 0; cc < p.ncore; ++cc) {
      int const s = p.core_slot + cc;
      std::vector<LD> blk(std::size_t(m) * m);
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j)
          blk[std::size_t(i) * m + j] = c[std::size_t(s * m + i) * n + std::size_t(s * m + j)];
      auto qq = dense_inverse_sqrt(blk, m, rel_clip);
      q.insert(q.end(), qq.begin(), qq.end());
    }
  }
};

/// Largest |a - b| over the largest |b|.
template <class A, class B>
double max_rel_diff(A const& a, B const& b) {
  long double num = 0, den = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    num = std::max<long double>(num, std::fabs((long double)a[i] - (long double)b[i]));
    den = std::max<long double>(den, std::fabs((long double)b[i]));
  }
  return den > 0 ? double(num / den) : double(num);
}

}  // namespace kspecter::test
