// Frame extraction on TEST_EXECSPACE against independent references: a long-double dense
// brute force of single patches, noiseless frames (flux = R truth), noise pulls, invariants
// of R and ivar, layout independence, masks and bad data, the model image, reruns.
#include "toy_frames.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/extract/mask_bits.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <tuple>
#include <vector>

namespace {

using namespace kspecter;
using namespace kspecter::extract;
using kspecter::test::LD;
using kspecter::test::ToyPsf;
using mem = TEST_EXECSPACE::memory_space;

// A toy camera: 15 fibers (subbundles of 6, 7 and 6 padded fibers, so identity slots are
// exercised), 150 bins of 0.8 A.
struct Toy {
  ToyPsf psf;
  ExtractOptions opt;
  ExtractHooks hooks;
  std::vector<double> wave, truth, clean, image, ivar;
  int nspec = 0, nwave = 0;

  explicit Toy(int nfiber = 15, int nbins = 150, double wmin = 6000.0, double dxf = 6.4,
               double sigx = 1.05) {
    psf.nfiber = nfiber;
    psf.dxf = dxf;
    psf.sigx = sigx;
    psf.wavemin = wmin - 60;
    psf.wavemax = wmin + 0.8 * nbins + 80;
    psf.w0 = wmin - 40;
    psf.fit_ccd();
    opt.wmin = wmin;
    opt.wmax = wmin + 0.8 * (nbins - 1);
    opt.dw = 0.8;
    opt.nspec = nfiber;
    wave = opt.wavelengths();
    nwave = int(wave.size());
    nspec = nfiber;
    truth = kspecter::test::make_truth(nspec, wave, 1234u);
    clean = kspecter::test::project(psf, 0, nspec, wave, truth);
    // Read noise 3 e-, Poisson on the noiseless image: ivar from the truth (no noise bias).
    ivar.resize(clean.size());
    for (std::size_t i = 0; i < clean.size(); ++i) ivar[i] = 1.0 / (9.0 + std::max(clean[i], 0.0));
    image = clean;
  }
  void add_noise(std::uint64_t seed) {
    kspecter::test::Normal g(seed);
    for (std::size_t i = 0; i < clean.size(); ++i) image[i] = clean[i] + g() / std::sqrt(ivar[i]);
  }
};

FrameResult run(ToyPsf const& psf, std::vector<double> const& image,
                std::vector<double> const& ivar, ExtractOptions const& opt,
                StageTimes* times = nullptr, ExtractHooks const& hooks = {}) {
  using HV = Kokkos::View<const double**, Kokkos::LayoutRight, Kokkos::HostSpace,
                          Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::View<double**, Kokkos::LayoutRight, mem> di("image", psf.npix_y, psf.npix_x);
  Kokkos::View<double**, Kokkos::LayoutRight, mem> dv("ivar", psf.npix_y, psf.npix_x);
  auto hi = Kokkos::create_mirror_view(di);
  auto hv = Kokkos::create_mirror_view(dv);
  HV si(image.data(), psf.npix_y, psf.npix_x), sv(ivar.data(), psf.npix_y, psf.npix_x);
  Kokkos::deep_copy(hi, si);
  Kokkos::deep_copy(hv, sv);
  Kokkos::deep_copy(di, hi);
  Kokkos::deep_copy(dv, hv);
  TEST_EXECSPACE space;
  return extract_frame(space, psf.provider<mem>(), psf.geometry(), di, dv, opt, times, hooks);
}

bool all_finite(std::vector<double> const& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

void expect_all_finite(FrameResult const& r) {
  EXPECT_TRUE(all_finite(r.flux));
  EXPECT_TRUE(all_finite(r.ivar));
  EXPECT_TRUE(all_finite(r.resolution));
  EXPECT_TRUE(all_finite(r.chi2pix));
  EXPECT_TRUE(all_finite(r.pixmask_fraction));
  EXPECT_TRUE(all_finite(r.deconvolved_flux));
  EXPECT_TRUE(all_finite(r.model));
  for (double v : r.ivar) EXPECT_GE(v, 0.0);
}

// Full R rows of one core bin from a patch's debug Q: R[j][k] = Q[j][k] / rowsum(Q[j]).
std::vector<double> full_r_row(PatchDebug const& d, int core, int j) {
  int const m = d.m;
  double s = 0;
  for (int k = 0; k < m; ++k) s += d.q[std::size_t(core * m + j) * m + k];
  std::vector<double> r(static_cast<std::size_t>(m));
  for (int k = 0; k < m; ++k) r[std::size_t(k)] = d.q[std::size_t(core * m + j) * m + k] / s;
  return r;
}

// Frame outputs at (PSF row spec, output bin w).
std::size_t at(FrameResult const& r, int spec, int w) {
  return std::size_t(spec - r.specmin) * r.nwave + w;
}
double rdiag(FrameResult const& r, int spec, int k, int w) {
  return r
      .resolution[(std::size_t(spec - r.specmin) * (2 * r.ndiag + 1) + std::size_t(k)) * r.nwave +
                  w];
}

// ---------------------------------------------------------------------------------------
TEST(TEST_CATEGORY, extract_patch_matches_dense_brute_force) {
  Toy t;
  t.add_noise(7);
  // A few masked pixels and a cosmic, so that W, pixmask and chi2pix are not trivial.
  for (int y = 60; y < 75; ++y) t.ivar[std::size_t(y) * t.psf.npix_x + 40] = 0;
  t.image[std::size_t(120) * t.psf.npix_x + 55] = 1e6;
  t.ivar[std::size_t(120) * t.psf.npix_x + 55] = 0;
  t.opt.nwavestep = 30;  // smaller patches keep the long-double reference fast
  t.opt.wavepad = 8;
  t.hooks.debug_patch = ExtractHooks::every_patch;
  FrameResult const r = run(t.psf, t.image, t.ivar, t.opt, nullptr, t.hooks);
  PatchPlan const plan = make_patch_plan(t.opt, t.psf.nfiber, t.psf.spot_ny(), t.psf.spot_nx());
  ASSERT_EQ(r.debug.size(), plan.patches.size());
  ASSERT_EQ(plan.nfiber_slots, 7);
  EXPECT_EQ(r.stats.nfailed, 0);
  expect_all_finite(r);
  double const psferr = t.psf.geometry().psferr;
  // Interior patch (7 fibers), bundle-edge patches (6 fibers + an identity slot), last block.
  for (int pi : {plan.patch_of(7, 40), plan.patch_of(0, 0), plan.patch_of(14, 149)}) {
    ASSERT_GE(pi, 0);
    PatchDebug const& d = r.debug[std::size_t(pi)];
    kspecter::test::BruteForcePatch bf(t.psf, plan, d, t.image, t.ivar, t.opt.regularize);
    ASSERT_FALSE(bf.f.empty());
    int const n = d.n, m = d.m;
    EXPECT_LT(kspecter::test::max_rel_diff(d.icov, bf.icov), 1e-12) << "patch " << pi;
    EXPECT_LT(kspecter::test::max_rel_diff(d.y, bf.y), 1e-12);
    EXPECT_LT(kspecter::test::max_rel_diff(d.fluxweight, bf.fw), 1e-12);
    EXPECT_LT(kspecter::test::max_rel_diff(d.deconvolved, bf.f), 1e-10);
    ASSERT_EQ(int(d.q.size()), plan.ncore_slots * m * m);
    // Model of the window from the device solution, chi^2 per pixel (§5).
    std::size_t const npix = bf.pix_y.size();
    std::vector<LD> chi2(npix, -1);
    for (std::size_t rr = 0; rr < npix; ++rr) {
      std::size_t const ii = std::size_t(bf.pix_y[rr]) * t.psf.npix_x + bf.pix_x[rr];
      if (!(t.ivar[ii] > 0)) continue;
      LD model = 0;
      for (int j = 0; j < n; ++j)
        model += bf.a[rr * n + std::size_t(j)] * d.deconvolved[std::size_t(j)];
      LD const e = psferr * model + 1e-32L;
      LD const tot = 1 / (1 / LD(t.ivar[ii]) + e * e);
      chi2[rr] = (t.image[ii] - model) * (t.image[ii] - model) * tot;
    }
    for (int c = 0; c < d.patch.ncore; ++c) {
      std::vector<double> q(d.q.begin() + long(c) * m * m, d.q.begin() + long(c + 1) * m * m);
      std::vector<LD> qb(bf.q.begin() + long(c) * m * m, bf.q.begin() + long(c + 1) * m * m);
      EXPECT_LT(kspecter::test::max_rel_diff(q, qb), 1e-10) << "core fiber " << c;
      int const spec = d.patch.fiber_pad0 + d.patch.core_slot + c;
      int const slot = d.patch.core_slot + c;
      // R^T diag(s^2) R = Q Q reproduces the inverse of the covariance block C_ff.
      {
        std::vector<double> s(static_cast<std::size_t>(m), 0.0);
        for (int i = 0; i < m; ++i)
          for (int k = 0; k < m; ++k) s[std::size_t(i)] += q[std::size_t(i) * m + k];
        double worst = 0;
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < m; ++j) {
            LD acc = 0;  // (R^T diag(s^2) R C_ff)_ij, should be the identity
            for (int k = 0; k < m; ++k) {
              LD rtr = 0;
              for (int l = 0; l < m; ++l) {
                LD const ri = q[std::size_t(l) * m + i] / s[std::size_t(l)],
                         rk = q[std::size_t(l) * m + k] / s[std::size_t(l)];
                rtr += ri * LD(s[std::size_t(l)]) * LD(s[std::size_t(l)]) * rk;
              }
              acc += rtr * bf.c[std::size_t(slot * m + k) * n + std::size_t(slot * m + j)];
            }
            worst = std::max(worst, double(std::fabs(acc - (i == j ? 1 : 0))));
          }
        EXPECT_LT(worst, 1e-8) << "R^T diag(ivar) R C != 1, core fiber " << c;
      }
      for (int jj = 0; jj < d.patch.nkeep; ++jj) {
        int const j = plan.wavepad + jj, w = d.patch.wave0 + jj;
        LD s = 0, rf = 0;
        for (int k = 0; k < m; ++k) {
          s += qb[std::size_t(j) * m + k];
          rf += qb[std::size_t(j) * m + k] * bf.f[std::size_t(slot * m + k)];
        }
        std::size_t const o = at(r, spec, w);
        EXPECT_NEAR(r.flux[o] * t.opt.dw, double(rf / s), 1e-9 * std::fabs(double(rf / s)) + 1e-9);
        EXPECT_NEAR(r.ivar[o] / (t.opt.dw * t.opt.dw), double(s * s), 1e-9 * double(s * s));
        EXPECT_NEAR(r.deconvolved_flux[o] * t.opt.dw, double(bf.f[std::size_t(slot * m + j)]),
                    1e-9 * std::fabs(double(bf.f[std::size_t(slot * m + j)])) + 1e-9);
        for (int k = 0; k < 2 * r.ndiag + 1; ++k) {
          int const row = j - r.ndiag + k;
          LD srow = 0;
          for (int kk = 0; kk < m; ++kk) srow += qb[std::size_t(row) * m + kk];
          EXPECT_NEAR(rdiag(r, spec, k, w), double(qb[std::size_t(row) * m + j] / srow), 1e-10);
        }
        // chi2pix and pixmask_fraction of this core bin.
        LD num = 0, den = 0, msk = 0;
        for (std::size_t rr = 0; rr < npix; ++rr) {
          LD const a = bf.a[rr * n + std::size_t(slot * m + j)];
          if (a == 0) continue;
          if (chi2[rr] >= 0) {
            num += a * chi2[rr];
            den += a;
          } else {
            msk += a;
          }
        }
        EXPECT_NEAR(r.chi2pix[o], double(den > 0 ? num / den : 0),
                    1e-9 * double(num / den) + 1e-12);
        EXPECT_NEAR(r.pixmask_fraction[o], double(msk), 1e-12);
      }
    }
  }
}

// A trace that folds back in y (not monotone in wavelength) takes the kernels' general path.
TEST(TEST_CATEGORY, extract_non_monotone_trace_matches_dense_brute_force) {
  Toy t(12, 80);
  t.psf.wiggle = 2.0;
  t.psf.fit_ccd(12, 12);
  t.clean = kspecter::test::project(t.psf, 0, t.nspec, t.wave, t.truth);
  t.ivar.resize(t.clean.size());
  for (std::size_t i = 0; i < t.clean.size(); ++i) t.ivar[i] = 1.0 / (9.0 + t.clean[i]);
  t.image = t.clean;
  t.add_noise(21);
  t.opt.nwavestep = 30;
  t.opt.wavepad = 8;
  PatchPlan const plan = make_patch_plan(t.opt, t.psf.nfiber, t.psf.spot_ny(), t.psf.spot_nx());
  t.hooks.debug_patch = plan.patch_of(6, 40);
  FrameResult const r = run(t.psf, t.image, t.ivar, t.opt, nullptr, t.hooks);
  ASSERT_EQ(r.debug.size(), 1u);
  expect_all_finite(r);
  PatchDebug const& d = r.debug[0];
  {  // the spots' corners really go backwards somewhere in this patch
    std::vector<double> v(std::size_t(t.psf.spot_nx() * t.psf.spot_ny()));
    int back = 0, prev = -1000000;
    for (int w = 0; w < plan.nwave_pad; ++w) {
      int xc, yc;
      t.psf.spot(6, plan.full_wave[std::size_t(d.patch.wave0 + w)], v.data(), xc, yc);
      back += yc < prev ? 1 : 0;
      prev = yc;
    }
    ASSERT_GT(back, 0);
  }
  kspecter::test::BruteForcePatch bf(t.psf, plan, d, t.image, t.ivar, t.opt.regularize);
  ASSERT_FALSE(bf.f.empty());
  EXPECT_LT(kspecter::test::max_rel_diff(d.icov, bf.icov), 1e-12);
  EXPECT_LT(kspecter::test::max_rel_diff(d.y, bf.y), 1e-12);
  EXPECT_LT(kspecter::test::max_rel_diff(d.deconvolved, bf.f), 1e-10);
}

// ---------------------------------------------------------------------------------------
// Noiseless: flux = R truth exactly when nothing outside a patch's padded unknowns shines on
// its window: fibers two apart never reach it and the padding (24 bins) outruns the spots.
// Neighbouring fibers still overlap (checked), so the cross-fiber terms are exercised.
TEST(TEST_CATEGORY, extract_noiseless_flux_is_r_times_truth) {
  Toy t(15, 150, 6000.0, /*dxf=*/10.6, /*sigx=*/1.3);
  t.opt.wavepad = 20;
  t.hooks.debug_patch = ExtractHooks::every_patch;
  FrameResult const r = run(t.psf, t.image, t.ivar, t.opt, nullptr, t.hooks);
  PatchPlan const plan = make_patch_plan(t.opt, t.psf.nfiber, t.psf.spot_ny(), t.psf.spot_nx());
  expect_all_finite(r);
  double worst = 0, worst_diag = 0, coupling = 0;
  for (std::size_t pi = 0; pi < plan.patches.size(); ++pi) {
    PatchDebug const& d = r.debug[pi];
    for (int i = 0; i < d.m; ++i)  // fiber slot 0 against slot 1, same bin
      coupling = std::max(coupling, std::fabs(d.icov[std::size_t(i) * d.n + std::size_t(d.m + i)]) /
                                        d.icov[std::size_t(i) * d.n + std::size_t(i)]);
    for (int c = 0; c < d.patch.ncore; ++c) {
      int const spec = d.patch.fiber_pad0 + d.patch.core_slot + c;
      for (int jj = 0; jj < d.patch.nkeep; ++jj) {
        int const j = plan.wavepad + jj, w = d.patch.wave0 + jj;
        auto const row = full_r_row(d, c, j);
        double rt = 0;  // R truth over the padded bins (truth is 0 outside the grid)
        for (int k = 0; k < d.m; ++k) {
          int const wk = d.patch.wave0 - plan.wavepad + k;
          if (wk >= 0 && wk < t.nwave)
            rt += row[std::size_t(k)] * t.truth[std::size_t(spec) * t.nwave + wk];
        }
        double const fl = r.flux[at(r, spec, w)] * t.opt.dw;
        worst = std::max(worst, std::fabs(fl - rt) / std::fabs(rt));
        // Row w of R from the stored diagonals: R[w][col] = data[k][col], col = w + ndiag - k.
        double rd = 0, rowsum = 0;
        for (int k = 0; k < 2 * r.ndiag + 1; ++k) {
          int const col = w + r.ndiag - k;
          if (col < 0 || col >= t.nwave) continue;
          rd += rdiag(r, spec, k, col) * t.truth[std::size_t(spec) * t.nwave + col];
          rowsum += rdiag(r, spec, k, col);
        }
        double full_sum = 0;
        for (double v : row) full_sum += v;
        EXPECT_NEAR(full_sum, 1.0, 1e-12);
        if (w >= r.ndiag && w < t.nwave - r.ndiag) EXPECT_NEAR(rowsum, 1.0, 1e-2);
        worst_diag = std::max(worst_diag, std::fabs(fl - rd) / std::fabs(rt));
      }
    }
  }
  std::printf(
      "noiseless: max |flux - R truth| / R truth = %.3g (full R), %.3g (stored diagonals); "
      "neighbour coupling %.3g\n",
      worst, worst_diag, coupling);
  EXPECT_GT(coupling, 1e-6);
  EXPECT_LT(worst, 1e-8);
  EXPECT_LT(worst_diag, 1e-2);
  double wd = 0;
  for (std::size_t o = 0; o < t.truth.size(); ++o)
    wd = std::max(wd, std::fabs(r.deconvolved_flux[o] * t.opt.dw - t.truth[o]) / t.truth[o]);
  EXPECT_LT(wd, 1e-8) << "deconvolved flux vs truth";
}

// With DESI-like crowding (spots 11 px wide, fibers 6.4 px apart) light from beyond the
// padding reaches the window; the result stays within the method's own error.
TEST(TEST_CATEGORY, extract_noiseless_crowded_within_method_error) {
  Toy t;
  FrameResult const r = run(t.psf, t.image, t.ivar, t.opt);
  expect_all_finite(r);
  double wd = 0;
  for (std::size_t o = 0; o < t.truth.size(); ++o)
    wd = std::max(wd, std::fabs(r.deconvolved_flux[o] * t.opt.dw - t.truth[o]) / t.truth[o]);
  std::printf("noiseless crowded: max |deconvolved - truth| / truth = %.3g\n", wd);
  EXPECT_LT(wd, 1e-3);
  for (auto m : r.mask) EXPECT_EQ(m, 0u);
}

// ---------------------------------------------------------------------------------------
// Noise: pulls (flux - R truth) sqrt(ivar) over a bundle and several realisations.
TEST(TEST_CATEGORY, extract_noise_pulls_are_unit_normal) {
  Toy t(25, 160);
  t.hooks.debug_patch = ExtractHooks::every_patch;
  PatchPlan const plan = make_patch_plan(t.opt, t.psf.nfiber, t.psf.spot_ny(), t.psf.spot_nx());
  double sum = 0, sum2 = 0;
  long count = 0;
  std::vector<double> rtruth;
  for (std::uint64_t real = 0; real < 4; ++real) {
    t.add_noise(100 + real);
    FrameResult const r = run(t.psf, t.image, t.ivar, t.opt, nullptr, t.hooks);
    expect_all_finite(r);
    if (rtruth.empty()) {  // R (hence R truth) depends on the weights only, not on the noise
      rtruth.assign(r.flux.size(), 0.0);
      for (std::size_t pi = 0; pi < plan.patches.size(); ++pi) {
        PatchDebug const& d = r.debug[pi];
        for (int c = 0; c < d.patch.ncore; ++c) {
          int const spec = d.patch.fiber_pad0 + d.patch.core_slot + c;
          for (int jj = 0; jj < d.patch.nkeep; ++jj) {
            auto const row = full_r_row(d, c, plan.wavepad + jj);
            double rt = 0;
            for (int k = 0; k < d.m; ++k) {
              int const wk = d.patch.wave0 - plan.wavepad + k;
              if (wk >= 0 && wk < t.nwave)
                rt += row[std::size_t(k)] * t.truth[std::size_t(spec) * t.nwave + wk];
            }
            rtruth[at(r, spec, d.patch.wave0 + jj)] = rt / t.opt.dw;
          }
        }
      }
    }
    double rs = 0, rs2 = 0;
    for (std::size_t o = 0; o < r.flux.size(); ++o) {
      double const pp = (r.flux[o] - rtruth[o]) * std::sqrt(r.ivar[o]);
      rs += pp;
      rs2 += pp * pp;
    }
    std::printf("  realisation %d: mean %.4f std %.4f\n", int(real), rs / r.flux.size(),
                std::sqrt(rs2 / r.flux.size()));
    for (std::size_t o = 0; o < r.flux.size(); ++o) {
      ASSERT_GT(r.ivar[o], 0.0);
      double const p = (r.flux[o] - rtruth[o]) * std::sqrt(r.ivar[o]);
      sum += p;
      sum2 += p * p;
      ++count;
    }
  }
  double const mean = sum / count, sd = std::sqrt(sum2 / count - mean * mean);
  std::printf("pulls over %ld bins: mean %.5f, std %.5f\n", count, mean, sd);
  EXPECT_LT(std::fabs(mean), 0.02);
  EXPECT_LT(std::fabs(sd - 1.0), 0.02);
}

// ---------------------------------------------------------------------------------------
// The patch layout is a numerical device: other subbundle and block sizes move the flux by
// much less than its error.
TEST(TEST_CATEGORY, extract_layout_changes_move_flux_by_less_than_a_tenth_sigma) {
  Toy t(25, 160);
  t.add_noise(31);
  FrameResult const base = run(t.psf, t.image, t.ivar, t.opt);
  for (int variant = 0; variant < 2; ++variant) {
    ExtractOptions o = t.opt;
    if (variant == 0) o.nsubbundles = 25;
    if (variant == 1) o.nwavestep = 30;
    FrameResult const r = run(t.psf, t.image, t.ivar, o);
    double worst = 0;
    for (std::size_t i = 0; i < r.flux.size(); ++i) {
      ASSERT_GT(r.ivar[i], 0.0);
      double const d = (r.flux[i] - base.flux[i]) / std::sqrt(1 / r.ivar[i] + 1 / base.ivar[i]);
      worst = std::max(worst, std::fabs(d));
    }
    std::printf("layout variant %d: max |delta f| / sigma = %.4f\n", variant, worst);
    EXPECT_LT(worst, 0.1) << (variant == 0 ? "nsubbundles 25" : "nwavestep 30");
  }
}

// ---------------------------------------------------------------------------------------
// Masked columns, cosmics, NaN/Inf pixels and a fully masked band of rows: no NaN anywhere,
// ivar = 0 and mask bits where the light is lost, pixmask_fraction exact.
TEST(TEST_CATEGORY, extract_masks_and_bad_pixels) {
  Toy t;
  t.add_noise(5);
  int const nx = t.psf.npix_x;
  auto pix = [&](int y, int x) { return std::size_t(y) * nx + x; };
  // Bad column under fiber 7 for 60 rows.
  double xf, yf;
  t.psf.trace(7, 6050.0, xf, yf);
  int const bad_x = int(std::lround(xf));
  for (int y = 80; y < 140; ++y) t.ivar[pix(y, bad_x)] = 0;
  // Masked cosmics (huge value, ivar 0), NaN and Inf pixels that carry weight.
  t.image[pix(50, 30)] = 5e5;
  t.ivar[pix(50, 30)] = 0;
  t.image[pix(51, 30)] = std::numeric_limits<double>::quiet_NaN();
  t.ivar[pix(200, 60)] = std::numeric_limits<double>::infinity();
  t.image[pix(201, 61)] = std::numeric_limits<double>::infinity();
  t.ivar[pix(202, 62)] = std::numeric_limits<double>::quiet_NaN();
  // A band of rows fully masked: whole patches of bins see no data.
  int const band0 = 215, band1 = 290;
  for (int y = band0; y < band1; ++y)
    for (int x = 0; x < nx; ++x) t.ivar[pix(y, x)] = 0;
  FrameResult const r = run(t.psf, t.image, t.ivar, t.opt);
  expect_all_finite(r);
  EXPECT_EQ(r.stats.nfailed, 0);
  // pixmask_fraction, recomputed from the spots and the weights.
  std::vector<double> v(std::size_t(t.psf.spot_nx() * t.psf.spot_ny()));
  int nall = 0, nsome = 0;
  for (int s = 0; s < t.nspec; ++s)
    for (int w = 0; w < t.nwave; ++w) {
      int xc, yc;
      t.psf.spot(s, t.wave[std::size_t(w)], v.data(), xc, yc);
      double msk = 0;
      for (int j = 0; j < t.psf.spot_ny(); ++j)
        for (int i = 0; i < t.psf.spot_nx(); ++i) {
          std::size_t const p = pix(yc + j, xc + i);
          bool const good = std::isfinite(t.ivar[p]) && std::isfinite(t.image[p]) && t.ivar[p] > 0;
          if (!good) msk += v[std::size_t(j * t.psf.spot_nx() + i)];
        }
      std::size_t const o = at(r, s, w);
      ASSERT_NEAR(r.pixmask_fraction[o], msk, 1e-12) << s << " " << w;
      std::uint32_t const mk = r.mask[o];
      if (msk >= 1 - 1e-12) {
        ++nall;
        EXPECT_EQ(r.ivar[o], 0.0);
        EXPECT_TRUE(mk & specmask::ALLBADPIX);
        EXPECT_TRUE(mk & specmask::SOMEBADPIX);
      } else if (msk > 0.5) {
        ++nsome;
        EXPECT_TRUE(mk & specmask::SOMEBADPIX);
        EXPECT_FALSE(mk & specmask::ALLBADPIX);
      } else if (msk == 0 && r.ivar[o] > 0) {
        EXPECT_FALSE(mk & (specmask::SOMEBADPIX | specmask::ALLBADPIX));
      }
      if (r.ivar[o] == 0) EXPECT_TRUE(mk & specmask::SOMEBADPIX);
    }
  EXPECT_GT(nall, 15 * 30);  // the band
  EXPECT_GT(nsome, 0);       // the column
}

// ---------------------------------------------------------------------------------------
// Spots partly off the CCD (top rows cut, first fiber at the left edge): extracted where on
// the chip, ivar = 0 and ALLBADPIX where the light falls off it.
TEST(TEST_CATEGORY, extract_off_chip_edges) {
  Toy t;
  t.psf.x0 = 2.0;  // fiber 0 half off the left edge
  t.psf.fit_ccd();
  {  // cut the top at bin 130: the last ~20 bins fall off the chip
    double xx, yy;
    t.psf.trace(0, t.wave[130], xx, yy);
    t.psf.npix_y = int(yy);
  }
  t.clean = kspecter::test::project(t.psf, 0, t.nspec, t.wave, t.truth);
  t.ivar.resize(t.clean.size());
  for (std::size_t i = 0; i < t.clean.size(); ++i) t.ivar[i] = 1.0 / (9.0 + t.clean[i]);
  t.image = t.clean;
  t.add_noise(9);
  FrameResult const r = run(t.psf, t.image, t.ivar, t.opt);
  expect_all_finite(r);
  std::vector<double> v(std::size_t(t.psf.spot_nx() * t.psf.spot_ny()));
  int off = 0, partial = 0;
  for (int s = 0; s < t.nspec; ++s)
    for (int w = 0; w < t.nwave; ++w) {
      int xc, yc;
      t.psf.spot(s, t.wave[std::size_t(w)], v.data(), xc, yc);
      double on = 0;
      for (int j = 0; j < t.psf.spot_ny(); ++j)
        for (int i = 0; i < t.psf.spot_nx(); ++i)
          if (yc + j < t.psf.npix_y && xc + i >= 0) on += v[std::size_t(j * t.psf.spot_nx() + i)];
      std::size_t const o = at(r, s, w);
      EXPECT_NEAR(r.pixmask_fraction[o], 1 - on, 1e-12);
      if (on == 0) {
        ++off;
        EXPECT_EQ(r.ivar[o], 0.0);
        EXPECT_TRUE(r.mask[o] & specmask::ALLBADPIX);
      } else if (on > 0.3) {
        ++partial;
        EXPECT_GT(r.ivar[o], 0.0) << s << " " << w;
        // Extracted where on the chip: close to the truth within a few sigma (away from the
        // grid's ends, where R smears the truth with the zeros beyond it).
        if (w > 2 * r.ndiag && w < t.nwave - 2 * r.ndiag)
          EXPECT_LT(std::fabs(r.flux[o] - t.truth[o] / t.opt.dw) * std::sqrt(r.ivar[o]), 6.0)
              << s << " " << w;
      }
    }
  EXPECT_GT(off, 15 * 5);
  EXPECT_GT(partial, 100);
}

// ---------------------------------------------------------------------------------------
// A broken spot (NaN) poisons its patches' matrices: their Cholesky fails, and those patches
// are masked (ivar = 0, BAD2DFIT, identity resolution) while everything else is extracted.
TEST(TEST_CATEGORY, extract_failed_cholesky_masks_its_patches) {
  Toy t;
  t.add_noise(3);
  auto inner = t.psf.provider<mem>();
  double const bad_wave = t.wave[70];
  SpotProvider<mem> broken = [inner, bad_wave](int f0, int nf,
                                               Kokkos::View<const double*, mem> wave,
                                               psf::Spots<mem>& out) {
    inner(f0, nf, wave, out);
    auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), wave);
    auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out.values);
    for (int w = 0; w < int(hw.extent(0)); ++w)
      if (std::fabs(hw(w) - bad_wave) < 1e-6 && 7 >= f0 && 7 < f0 + nf)
        hv(7 - f0, w, 4, 5) = std::nan("");
    Kokkos::deep_copy(out.values, hv);
  };
  using HV = Kokkos::View<const double**, Kokkos::LayoutRight, Kokkos::HostSpace,
                          Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::View<double**, Kokkos::LayoutRight, mem> di("image", t.psf.npix_y, t.psf.npix_x),
      dv("ivar", t.psf.npix_y, t.psf.npix_x);
  auto hi = Kokkos::create_mirror_view(di);
  auto hv = Kokkos::create_mirror_view(dv);
  Kokkos::deep_copy(hi, HV(t.image.data(), t.psf.npix_y, t.psf.npix_x));
  Kokkos::deep_copy(hv, HV(t.ivar.data(), t.psf.npix_y, t.psf.npix_x));
  Kokkos::deep_copy(di, hi);
  Kokkos::deep_copy(dv, hv);
  FrameResult const r = extract_frame(TEST_EXECSPACE(), broken, t.psf.geometry(), di, dv, t.opt);
  expect_all_finite(r);
  EXPECT_GE(r.stats.nfailed, 1);
  PatchPlan const plan = make_patch_plan(t.opt, t.psf.nfiber, t.psf.spot_ny(), t.psf.spot_nx());
  int const pi = plan.patch_of(7, 70);
  Patch const& p = plan.patches[std::size_t(pi)];
  for (int c = 0; c < p.ncore; ++c)
    for (int w = p.wave0; w < p.wave0 + p.nkeep; ++w) {
      std::size_t const o = at(r, p.fiber_pad0 + p.core_slot + c, w);
      EXPECT_EQ(r.ivar[o], 0.0);
      EXPECT_TRUE(r.mask[o] & specmask::BAD2DFIT);
      EXPECT_EQ(rdiag(r, p.fiber_pad0 + p.core_slot + c, r.ndiag, w), 1.0);
    }
  // Other subbundles are untouched.
  int good = 0;
  for (int s : {0, 1, 12, 13})
    for (int w = 0; w < t.nwave; ++w) good += r.ivar[at(r, s, w)] > 0 ? 1 : 0;
  EXPECT_EQ(good, 4 * t.nwave);
}

// ---------------------------------------------------------------------------------------
// The model image is A f: the kept bins with ivar > 0 projected through their spots.
TEST(TEST_CATEGORY, extract_model_image_is_a_times_f) {
  Toy t;
  t.add_noise(11);
  for (int y = 100; y < 110; ++y) t.ivar[std::size_t(y) * t.psf.npix_x + 45] = 0;
  t.opt.model = true;
  t.opt.specmin = 3;  // a subset: the model holds the requested spectra only
  t.opt.nspec = 9;
  FrameResult const r = run(t.psf, t.image, t.ivar, t.opt);
  ASSERT_EQ(r.model_nx, t.psf.npix_x);
  ASSERT_EQ(r.model_ny, t.psf.npix_y);
  ASSERT_EQ(r.model.size(), std::size_t(t.psf.npix_x) * t.psf.npix_y);
  std::vector<double> f(std::size_t(r.nspec) * r.nwave);
  for (std::size_t o = 0; o < f.size(); ++o)
    f[o] = r.ivar[o] > 0 ? r.deconvolved_flux[o] * t.opt.dw : 0.0;
  auto const want = kspecter::test::project(t.psf, r.specmin, r.nspec, t.wave, f);
  EXPECT_LT(kspecter::test::max_rel_diff(r.model, want), 1e-13);
}

// ---------------------------------------------------------------------------------------
TEST(TEST_CATEGORY, extract_reruns_are_bitwise_identical) {
  Toy t;
  t.add_noise(13);
  t.opt.model = true;
  FrameResult const a = run(t.psf, t.image, t.ivar, t.opt);
  FrameResult const b = run(t.psf, t.image, t.ivar, t.opt);
  auto same = [](std::vector<double> const& x, std::vector<double> const& y) {
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
  };
  EXPECT_TRUE(same(a.flux, b.flux));
  EXPECT_TRUE(same(a.ivar, b.ivar));
  EXPECT_TRUE(same(a.resolution, b.resolution));
  EXPECT_TRUE(same(a.chi2pix, b.chi2pix));
  EXPECT_TRUE(same(a.pixmask_fraction, b.pixmask_fraction));
  EXPECT_TRUE(same(a.deconvolved_flux, b.deconvolved_flux));
  EXPECT_TRUE(same(a.model, b.model));
  EXPECT_EQ(a.mask, b.mask);
  EXPECT_EQ(a.stats.assembly_macs, b.stats.assembly_macs);
}

// Frames extracted with one KeptBuffers (each on the device buffers the frame before left,
// ExtractHooks::buffers) are the frames of fresh extractions, bit for bit: a second image
// with a masked band (bins the first frame filled and this one must not), the first again,
// then a frame of other sizes (the buffers go and new ones come) and one of the first sizes.
TEST(TEST_CATEGORY, extract_kept_buffers_give_fresh_frames) {
  Toy t;
  t.add_noise(13);
  t.opt.model = true;
  std::vector<double> ivar2 = t.ivar, image2 = t.image;
  for (std::size_t i = 0; i < image2.size(); ++i) image2[i] = 1.5 * image2[i] + 0.25;
  int const nx = t.psf.npix_x;
  for (int y = 215; y < 290; ++y)
    for (int x = 0; x < nx; ++x) ivar2[std::size_t(y) * nx + x] = 0;
  ExtractOptions small = t.opt;
  small.nspec = 7;
  small.model = false;

  KeptBuffers kept;
  ExtractHooks hooks;
  hooks.buffers = &kept;
  std::vector<FrameResult> fresh, reused;
  for (auto const& [image, ivar, opt] :
       {std::tie(t.image, t.ivar, t.opt), std::tie(image2, ivar2, t.opt),
        std::tie(t.image, t.ivar, t.opt), std::tie(image2, ivar2, small),
        std::tie(image2, ivar2, t.opt)}) {
    fresh.push_back(run(t.psf, image, ivar, opt));
    reused.push_back(run(t.psf, image, ivar, opt, nullptr, hooks));
    EXPECT_FALSE(kept.empty());
    EXPECT_GT(kept.bytes(), 0u);
  }
  auto same = [](std::vector<double> const& x, std::vector<double> const& y) {
    return x.size() == y.size() &&  // an empty vector's data() may be null (no model)
           (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0);
  };
  for (std::size_t k = 0; k < fresh.size(); ++k) {
    FrameResult const &a = fresh[k], &b = reused[k];
    EXPECT_TRUE(same(a.flux, b.flux)) << "frame " << k;
    EXPECT_TRUE(same(a.ivar, b.ivar)) << "frame " << k;
    EXPECT_TRUE(same(a.resolution, b.resolution)) << "frame " << k;
    EXPECT_TRUE(same(a.chi2pix, b.chi2pix)) << "frame " << k;
    EXPECT_TRUE(same(a.pixmask_fraction, b.pixmask_fraction)) << "frame " << k;
    EXPECT_TRUE(same(a.deconvolved_flux, b.deconvolved_flux)) << "frame " << k;
    EXPECT_TRUE(same(a.model, b.model)) << "frame " << k;
    EXPECT_EQ(a.mask, b.mask) << "frame " << k;
  }
  EXPECT_NE(fresh[0].flux, fresh[1].flux);  // the frames differ
  EXPECT_EQ(fresh[3].nspec, 7);
  kept.release();
  EXPECT_TRUE(kept.empty());
}

// The mask bits (FrameResult::mask) from the frame's own numbers, every rule on: SOMEBADPIX,
// ALLBADPIX, BAD2DFIT by the absolute chi2pix threshold and by the median rule (the fiber's
// and the bin's medians over the frame), recomputed here.
TEST(TEST_CATEGORY, extract_mask_bits_follow_their_rules) {
  Toy t;
  t.add_noise(21);
  int const nx = t.psf.npix_x;
  for (int y = 215; y < 290; ++y)  // whole bins without data, and bins with some
    for (int x = 0; x < nx / 2; ++x) t.ivar[std::size_t(y) * nx + x] = 0;
  for (int y = 100; y < 400; y += 7)  // outliers: chi2pix over both thresholds here and there
    t.image[std::size_t(y) * nx + (y % nx)] += 400;
  t.opt.bad2dfit_chi2 = 4.0;
  t.opt.bad2dfit_median_factor = 3.0;
  FrameResult const r = run(t.psf, t.image, t.ivar, t.opt);
  ASSERT_EQ(r.stats.nfailed, 0);
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    std::size_t const h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
  };
  int const ns = r.nspec, nw = r.nwave;
  std::vector<double> med_fiber(std::size_t(ns), 0.0), med_bin(std::size_t(nw), 0.0);
  for (int s = 0; s < ns; ++s)
    med_fiber[std::size_t(s)] = median(std::vector<double>(r.chi2pix.begin() + long(s) * nw,
                                                           r.chi2pix.begin() + long(s + 1) * nw));
  for (int w = 0; w < nw; ++w) {
    std::vector<double> col;
    for (int s = 0; s < ns; ++s) col.push_back(r.chi2pix[std::size_t(s) * nw + w]);
    med_bin[std::size_t(w)] = median(col);
  }
  int counts[4] = {0, 0, 0, 0};
  for (int s = 0; s < ns; ++s)
    for (int w = 0; w < nw; ++w) {
      std::size_t const i = std::size_t(s) * nw + w;
      double const pm = r.pixmask_fraction[i], c2 = r.chi2pix[i];
      std::uint32_t want = 0;
      if (r.ivar[i] == 0 || pm > 0.5) want |= specmask::SOMEBADPIX;
      if (pm >= 1.0 - 1e-12) want |= specmask::ALLBADPIX;
      bool const absolute = c2 > 4.0;
      bool const relative =
          c2 > 3.0 * med_fiber[std::size_t(s)] && c2 > 3.0 * med_bin[std::size_t(w)];
      if (absolute || relative) want |= specmask::BAD2DFIT;
      ASSERT_EQ(r.mask[i], want) << "spectrum " << s << ", bin " << w;
      counts[0] += (want & specmask::ALLBADPIX) != 0;
      counts[1] += (want & specmask::SOMEBADPIX) != 0 && !(want & specmask::ALLBADPIX);
      counts[2] += absolute;
      counts[3] += relative && !absolute;
    }
  for (int k = 0; k < 4; ++k) EXPECT_GT(counts[k], 0) << "rule " << k << " never hit";
}

// A small memory budget splits the frame into one batch per bundle, a smaller one into slices
// of a bundle's patches, with the same numbers.
TEST(TEST_CATEGORY, extract_batching_does_not_change_results) {
  Toy t(30, 60);
  t.add_noise(17);
  t.opt.bundles_per_batch = 0;  // as a GPU batches: as many bundles as the budget holds
  t.opt.model = true;           // its pixels sum the fibers of every batch that reaches them
  FrameResult const a = run(t.psf, t.image, t.ivar, t.opt);
  PatchPlan const plan = make_patch_plan(t.opt, t.psf.nfiber, t.psf.spot_ny(), t.psf.spot_nx());
  BatchFootprint const fp =
      batch_footprint(plan, t.opt.bundlesize, t.psf.spot_ny(), t.psf.spot_nx());
  t.opt.memory_budget = fp.per_bundle_fixed + fp.per_patch;  // one patch per batch
  FrameResult const c = run(t.psf, t.image, t.ivar, t.opt);
  t.opt.memory_budget = fp.per_bundle_fixed + 10 * fp.per_patch;  // the first bundle's 10 patches
  FrameResult const b = run(t.psf, t.image, t.ivar, t.opt);
  EXPECT_EQ(a.stats.nbatch, 1);
  EXPECT_EQ(b.stats.nbatch, 2);
  EXPECT_EQ(c.stats.nbatch, a.stats.npatch);
  for (FrameResult const* r : {&b, &c}) {
    EXPECT_EQ(std::memcmp(a.flux.data(), r->flux.data(), a.flux.size() * sizeof(double)), 0);
    EXPECT_EQ(std::memcmp(a.ivar.data(), r->ivar.data(), a.ivar.size() * sizeof(double)), 0);
    EXPECT_EQ(std::memcmp(a.resolution.data(), r->resolution.data(),
                          a.resolution.size() * sizeof(double)),
              0);
    EXPECT_EQ(a.mask, r->mask);
    ASSERT_EQ(a.model.size(), r->model.size());
    EXPECT_EQ(std::memcmp(a.model.data(), r->model.data(), a.model.size() * sizeof(double)), 0);
  }
  t.opt.memory_budget = ExtractOptions{}.memory_budget;
  t.opt.bundles_per_batch = -1;  // the backend's own choice (one bundle a batch on a host)
  FrameResult const d = run(t.psf, t.image, t.ivar, t.opt);
  bool const host = Kokkos::SpaceAccessibility<TEST_EXECSPACE, Kokkos::HostSpace>::accessible;
  EXPECT_EQ(d.stats.nbatch, host ? 2 : 1);
  EXPECT_EQ(std::memcmp(a.flux.data(), d.flux.data(), a.flux.size() * sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(a.ivar.data(), d.ivar.data(), a.ivar.size() * sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(a.model.data(), d.model.data(), a.model.size() * sizeof(double)), 0);
}

// Two frames of one input that should agree to rounding: flux within 1e-9 sigma, ivar and
// resolution to 1e-10 relative, the same masks.
void expect_same_to_rounding(FrameResult const& a, FrameResult const& b) {
  double pull = 0, divar = 0, dres = 0, rmax = 0, imax = 0;
  for (std::size_t i = 0; i < a.flux.size(); ++i) {
    double const s = std::sqrt(1 / a.ivar[i] + 1 / b.ivar[i]);
    if (a.ivar[i] > 0) pull = std::max(pull, std::fabs(a.flux[i] - b.flux[i]) / s);
    divar = std::max(divar, std::fabs(a.ivar[i] - b.ivar[i]));
    imax = std::max(imax, std::fabs(b.ivar[i]));
  }
  for (std::size_t i = 0; i < a.resolution.size(); ++i) {
    dres = std::max(dres, std::fabs(a.resolution[i] - b.resolution[i]));
    rmax = std::max(rmax, std::fabs(b.resolution[i]));
  }
  EXPECT_GT(imax, 0);
  EXPECT_LE(pull, 1e-9);
  EXPECT_LE(divar / imax, 1e-10);
  EXPECT_LE(dres / rmax, 1e-10);
  EXPECT_EQ(a.mask, b.mask);
}

// The band solve (ExtractOptions::band_solve, the default) and the dense one give the same
// frame to rounding.
TEST(TEST_CATEGORY, extract_band_and_dense_solves_agree) {
  Toy t(30, 60);
  t.add_noise(23);
  t.opt.band_solve = true;
  FrameResult const band = run(t.psf, t.image, t.ivar, t.opt);
  t.opt.band_solve = false;
  FrameResult const dense = run(t.psf, t.image, t.ivar, t.opt);
  EXPECT_EQ(band.stats.nbatch_band, band.stats.nbatch);
  EXPECT_EQ(dense.stats.nbatch_band, 0);
  expect_same_to_rounding(band, dense);
}

// ---------------------------------------------------------------------------------------
TEST(TEST_CATEGORY, extract_rejects_bad_inputs) {
  Toy t(10, 40);
  auto o = t.opt;
  o.wmin = t.psf.wavemin - 10;  // grid starts outside the PSF
  EXPECT_THROW(run(t.psf, t.image, t.ivar, o), ParameterError);
  ToyPsf other = t.psf;
  other.npix_y += 1;  // the PSF describes another CCD than the image
  std::vector<double> img(std::size_t(other.npix_x) * t.psf.npix_y, 0.0);
  Kokkos::View<double**, Kokkos::LayoutRight, mem> di("image", t.psf.npix_y, t.psf.npix_x);
  EXPECT_THROW(
      extract_frame(TEST_EXECSPACE(), other.provider<mem>(), other.geometry(), di, di, t.opt),
      ParameterError);
  o = t.opt;
  o.nsubbundles = 0;
  EXPECT_THROW(run(t.psf, t.image, t.ivar, o), ParameterError);
}

}  // namespace
