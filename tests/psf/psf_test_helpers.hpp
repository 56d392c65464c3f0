// Shared by the PSF kernel tests: the PSFs they use and a host copy of computed spots.
#pragma once

#include "reference_spot.hpp"

#include <kspecter/io/psf_file.hpp>
#include <kspecter/psf/spots.hpp>
#include <kspecter/psf/synthetic_psf.hpp>
#include <test_data.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace kspecter::test {

inline char const* real_psf_name() { return "psf-r0-00067784.fits"; }

/// The real r0 PSF, read once per process (null when the shared data are absent).
inline psf::GaussHermitePsf const* real_psf() {
  static std::unique_ptr<psf::GaussHermitePsf> p = [] {
    std::string const path = shared_data_file(real_psf_name());
    return path.empty() ? nullptr : std::make_unique<psf::GaussHermitePsf>(io::read_psf(path));
  }();
  return p.get();
}

/// The default synthetic PSF, made once per process.
inline psf::GaussHermitePsf const& synthetic_psf() {
  static psf::GaussHermitePsf const p = psf::make_synthetic_psf();
  return p;
}

/// n wavelengths evenly spread over [w0, w1], both ends included.
inline std::vector<double> wave_grid(double w0, double w1, int n) {
  std::vector<double> w(n);
  for (int i = 0; i < n; ++i) w[i] = n == 1 ? w0 : w0 + (w1 - w0) * i / (n - 1);
  return w;
}

struct HostSpots {
  int nfiber = 0, nwave = 0, ny = 0, nx = 0;
  std::vector<double> v;     // [nfiber][nwave][ny][nx]
  std::vector<int> xc, yc;   // [nfiber][nwave]
  std::vector<double> X, Y;  // [nfiber][nwave] trace positions from evaluate_traces
  double const* spot(int f, int w) const {
    return v.data() + (std::size_t(f) * nwave + w) * ny * nx;
  }
};

template <class Space>
Kokkos::View<double*, typename Space::memory_space> to_view(std::vector<double> const& w) {
  Kokkos::View<double*, typename Space::memory_space> d("kspecter::test::waves", w.size());
  auto h = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < w.size(); ++i) h(i) = w[i];
  Kokkos::deep_copy(d, h);
  return d;
}

/// Spots of fibers [f0, f0 + nf) at `waves`, computed on `Space` and copied to the host.
template <class Space>
HostSpots spots_on(psf::GaussHermitePsf const& p, int f0, int nf, std::vector<double> const& waves,
                   psf::SpotOptions const& opt = {}) {
  using mem = typename Space::memory_space;
  Space space;
  auto const d = psf::to_device(space, p);
  auto const w = to_view<Space>(waves);
  psf::Spots<mem> s;
  psf::compute_spots(space, p, d, f0, nf, w, s, opt);
  space.fence();
  HostSpots h;
  h.nfiber = nf;
  h.nwave = int(waves.size());
  h.ny = p.spot_ny();
  h.nx = p.spot_nx();
  EXPECT_EQ(s.fiber_begin, f0);
  EXPECT_EQ(int(s.values.extent(0)), nf);
  EXPECT_EQ(int(s.values.extent(1)), h.nwave);
  EXPECT_EQ(int(s.values.extent(2)), h.ny);
  EXPECT_EQ(int(s.values.extent(3)), h.nx);
  auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.values);
  auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.xc);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.yc);
  h.v.assign(hv.data(), hv.data() + hv.size());
  h.xc.assign(hx.data(), hx.data() + hx.size());
  h.yc.assign(hy.data(), hy.data() + hy.size());
  Kokkos::View<double**, Kokkos::LayoutRight, mem> tx, ty;
  psf::evaluate_traces(space, d, f0, nf, w, tx, ty);
  auto htx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tx);
  auto hty = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ty);
  h.X.assign(htx.data(), htx.data() + htx.size());
  h.Y.assign(hty.data(), hty.data() + hty.size());
  return h;
}

/// Largest |spot - reference| over every spot; corners must match exactly.
inline double max_diff_to_reference(psf::GaussHermitePsf const& p, HostSpots const& s, int f0,
                                    std::vector<double> const& waves, bool tails) {
  double worst = 0;
  for (int f = 0; f < s.nfiber; ++f)
    for (int w = 0; w < s.nwave; ++w) {
      std::size_t const k = std::size_t(f) * s.nwave + w;
      RefSpot const r = reference_spot(p, f0 + f, waves[w], tails, &s.X[k], &s.Y[k]);
      // The positions themselves, against the explicit Legendre polynomials.
      EXPECT_NEAR(s.X[k], (double)legendre_ref(p.xtrace, f0 + f, waves[w]), 1e-10);
      EXPECT_NEAR(s.Y[k], (double)legendre_ref(p.ytrace, f0 + f, waves[w]), 1e-10);
      EXPECT_EQ(s.xc[f * s.nwave + w], r.xc) << "fiber " << f0 + f << " wave " << waves[w];
      EXPECT_EQ(s.yc[f * s.nwave + w], r.yc) << "fiber " << f0 + f << " wave " << waves[w];
      double const* v = s.spot(f, w);
      for (int i = 0; i < s.ny * s.nx; ++i)
        worst = std::max(worst, double(std::fabs(v[i] - r.v[i])));
    }
  return worst;
}

}  // namespace kspecter::test
