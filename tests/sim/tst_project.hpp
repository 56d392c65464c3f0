// Projection of spectra through spots: a delta spectrum reproduces its spot at the corner,
// the image equals a brute-force scatter, flux is conserved, and the fiber block size does not
// change a single bit.
#include <kspecter/psf/synthetic_psf.hpp>
#include <kspecter/sim/project.hpp>
#include <kspecter/sim/simulate.hpp>
#include <kspecter/sim/spectra.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

namespace {

using mem = TEST_EXECSPACE::memory_space;
using V2 = Kokkos::View<double**, Kokkos::LayoutRight, mem>;
using V2c = Kokkos::View<double const**, Kokkos::LayoutRight, mem>;

// Hand-made spots: positive pseudo-random values normalised to 1, given corners.
struct HostSpots {
  int nfiber, nwave, ny, nx;
  std::vector<double> values;  // [f][w][iy][ix]
  std::vector<int> xc, yc;     // [f][w]
  double& v(int f, int w, int iy, int ix) {
    return values[((std::size_t(f) * nwave + w) * ny + iy) * nx + ix];
  }
};

HostSpots random_spots(int nfiber, int nwave, int ny, int nx, std::uint64_t seed) {
  HostSpots s{nfiber,
              nwave,
              ny,
              nx,
              std::vector<double>(std::size_t(nfiber) * nwave * ny * nx),
              std::vector<int>(nfiber * nwave),
              std::vector<int>(nfiber * nwave)};
  std::uint64_t state = seed;
  auto next = [&state]() {  // splitmix64 -> [0, 1)
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return double((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
  };
  for (int f = 0; f < nfiber; ++f)
    for (int w = 0; w < nwave; ++w) {
      double sum = 0;
      for (int iy = 0; iy < ny; ++iy)
        for (int ix = 0; ix < nx; ++ix) sum += (s.v(f, w, iy, ix) = 0.01 + next());
      for (int iy = 0; iy < ny; ++iy)
        for (int ix = 0; ix < nx; ++ix) s.v(f, w, iy, ix) /= sum;
    }
  return s;
}

kspecter::psf::Spots<mem> to_device(HostSpots const& h) {
  kspecter::psf::Spots<mem> s;
  s.values = decltype(s.values)("values", h.nfiber, h.nwave, h.ny, h.nx);
  s.xc = decltype(s.xc)("xc", h.nfiber, h.nwave);
  s.yc = decltype(s.yc)("yc", h.nfiber, h.nwave);
  auto hv = Kokkos::create_mirror_view(s.values);
  auto hx = Kokkos::create_mirror_view(s.xc);
  auto hy = Kokkos::create_mirror_view(s.yc);
  std::memcpy(hv.data(), h.values.data(), h.values.size() * sizeof(double));
  std::memcpy(hx.data(), h.xc.data(), h.xc.size() * sizeof(int));
  std::memcpy(hy.data(), h.yc.data(), h.yc.size() * sizeof(int));
  Kokkos::deep_copy(s.values, hv);
  Kokkos::deep_copy(s.xc, hx);
  Kokkos::deep_copy(s.yc, hy);
  return s;
}

V2 device_matrix(std::vector<double> const& h, int n0, int n1) {
  V2 v("m", n0, n1);
  auto m = Kokkos::create_mirror_view(v);
  std::memcpy(m.data(), h.data(), h.size() * sizeof(double));
  Kokkos::deep_copy(v, m);
  return v;
}

std::vector<double> host_image(V2 const& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<double>(h.data(), h.data() + h.size());
}

TEST(TEST_CATEGORY, project_delta_reproduces_spot_at_corner) {
  int const NY = 40, NX = 50;
  HostSpots h = random_spots(3, 4, 5, 7, 1);
  for (int i = 0; i < 12; ++i) {
    h.xc[i] = 3 * i;
    h.yc[i] = 2 * i + 1;
  }
  h.xc[1 * 4 + 2] = 20;  // the delta's spot
  h.yc[1 * 4 + 2] = 11;
  h.xc[2 * 4 + 3] = -3;  // a second delta, partly off the left edge
  h.yc[2 * 4 + 3] = 37;  // ... and off the top
  std::vector<double> e(12, 0.0);
  e[1 * 4 + 2] = 1234.5;
  e[2 * 4 + 3] = 10.0;
  V2 img("img", NY, NX);
  TEST_EXECSPACE space;
  kspecter::sim::project_spots(space, to_device(h), V2c(device_matrix(e, 3, 4)), img);
  auto const out = host_image(img);
  std::vector<double> want(NY * NX, 0.0);
  for (int iy = 0; iy < 5; ++iy)
    for (int ix = 0; ix < 7; ++ix) {
      want[(11 + iy) * NX + 20 + ix] = 1234.5 * h.v(1, 2, iy, ix);
      int const y = 37 + iy, x = -3 + ix;
      if (y < NY && x >= 0) want[y * NX + x] = 10.0 * h.v(2, 3, iy, ix);
    }
  for (int p = 0; p < NY * NX; ++p)
    ASSERT_EQ(out[p], want[p]) << "pixel y " << p / NX << " x " << p % NX;
}

TEST(TEST_CATEGORY, project_matches_brute_force_and_conserves_flux) {
  int const NY = 60, NX = 70, nf = 6, nw = 40, sny = 11, snx = 17;
  HostSpots h = random_spots(nf, nw, sny, snx, 2);
  std::vector<double> e(nf * nw);
  std::uint64_t r = 12345;
  auto rnd = [&r](int n) {
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    return int((r >> 33) % std::uint64_t(n));
  };
  for (int i = 0; i < nf * nw; ++i) {
    h.xc[i] = rnd(NX + snx) - snx + 3;  // some spots hang over every edge
    h.yc[i] = rnd(NY + sny) - sny + 3;
    e[i] = 1.0 + rnd(1000);
  }
  V2 img("img", NY, NX);
  TEST_EXECSPACE space;
  kspecter::sim::project_spots(space, to_device(h), V2c(device_matrix(e, nf, nw)), img);
  auto const out = host_image(img);

  std::vector<double> ref(NY * NX, 0.0);
  long double on_chip = 0, full_only = 0;
  for (int f = 0; f < nf; ++f)
    for (int w = 0; w < nw; ++w) {
      bool full = true;
      for (int iy = 0; iy < sny; ++iy)
        for (int ix = 0; ix < snx; ++ix) {
          int const y = h.yc[f * nw + w] + iy, x = h.xc[f * nw + w] + ix;
          if (y < 0 || y >= NY || x < 0 || x >= NX) {
            full = false;
            continue;
          }
          ref[y * NX + x] += e[f * nw + w] * h.v(f, w, iy, ix);
          on_chip += (long double)e[f * nw + w] * h.v(f, w, iy, ix);
        }
      if (full) full_only += e[f * nw + w];
    }
  double total = 0;
  for (int p = 0; p < NY * NX; ++p) {
    ASSERT_NEAR(out[p], ref[p], 1e-12 * (1.0 + std::fabs(ref[p]))) << p;
    total += out[p];
  }
  EXPECT_NEAR(total, double(on_chip), 1e-12 * double(on_chip));

  // Only the bins whose spots are wholly on the chip: the image holds exactly their electrons.
  std::vector<double> e_full(e);
  for (int i = 0; i < nf * nw; ++i) {
    bool const full = h.xc[i] >= 0 && h.xc[i] + snx <= NX && h.yc[i] >= 0 && h.yc[i] + sny <= NY;
    if (!full) e_full[i] = 0.0;
  }
  ASSERT_GT(full_only, 0);
  ASSERT_LT(full_only, (long double)std::accumulate(e.begin(), e.end(), 0.0));
  V2 img2("img2", NY, NX);
  kspecter::sim::project_spots(space, to_device(h), V2c(device_matrix(e_full, nf, nw)), img2);
  auto const out2 = host_image(img2);
  double const total2 = std::accumulate(out2.begin(), out2.end(), 0.0);
  EXPECT_NEAR(total2, double(full_only), 1e-10 * double(full_only));
}

kspecter::psf::GaussHermitePsf small_synthetic_psf() {
  kspecter::psf::SyntheticPsfOptions o;
  o.nfiber = 50;
  return kspecter::psf::make_synthetic_psf(o);
}

TEST(TEST_CATEGORY, synthetic_frame_conserves_flux) {
  auto const psf = small_synthetic_psf();
  TEST_EXECSPACE space;
  auto const dpsf = kspecter::psf::to_device(space, psf);
  auto const grid = kspecter::sim::wavelength_grid(5760, 7620, 0.8);
  auto const spectra = kspecter::sim::make_spectra(3, 0, 50, grid);
  auto const img = kspecter::sim::expected_image(space, psf, dpsf, spectra, 25);
  ASSERT_EQ(int(img.extent(0)), psf.npix_y);
  ASSERT_EQ(int(img.extent(1)), psf.npix_x);

  // Which bins have their spot wholly on the chip (from the same spot kernel).
  kspecter::psf::Spots<mem> spots;
  Kokkos::View<double*, mem> wave("wave", grid.size());
  auto hw = Kokkos::create_mirror_view(wave);
  for (std::size_t i = 0; i < grid.size(); ++i) hw(i) = grid[i];
  Kokkos::deep_copy(wave, hw);
  kspecter::psf::compute_spots(space, psf, dpsf, 0, 50, Kokkos::View<double const*, mem>(wave),
                               spots);
  auto xc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), spots.xc);
  auto yc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), spots.yc);
  auto const dw = kspecter::sim::bin_widths(grid);
  long double expected = 0;
  int partial = 0;
  for (int f = 0; f < 50; ++f)
    for (std::size_t w = 0; w < grid.size(); ++w) {
      bool const full = xc(f, w) >= 0 && xc(f, w) + psf.spot_nx() <= psf.npix_x && yc(f, w) >= 0 &&
                        yc(f, w) + psf.spot_ny() <= psf.npix_y;
      if (full)
        expected += (long double)spectra.flux[f * grid.size() + w] * dw[w];
      else
        ++partial;
    }
  EXPECT_EQ(partial, 0) << "the r range of the synthetic PSF lies on the chip";
  auto const h = host_image(img);
  long double total = 0;
  for (double v : h) total += v;
  EXPECT_NEAR(double(total), double(expected), 1e-10 * double(expected));
}

TEST(TEST_CATEGORY, synthetic_delta_reproduces_spot) {
  auto const psf = small_synthetic_psf();
  TEST_EXECSPACE space;
  auto const dpsf = kspecter::psf::to_device(space, psf);
  kspecter::sim::Spectra s;
  s.specmin = 17;
  s.nspec = 1;
  s.wavelength = {6500.0, 6500.8, 6501.6};
  s.flux = {0.0, 1000.0, 0.0};
  auto const img = host_image(kspecter::sim::expected_image(space, psf, dpsf, s));

  Kokkos::View<double*, mem> wave("wave", 1);
  Kokkos::deep_copy(wave, 6500.8);
  kspecter::psf::Spots<mem> spots;
  kspecter::psf::compute_spots(space, psf, dpsf, 17, 1, Kokkos::View<double const*, mem>(wave),
                               spots);
  auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), spots.values);
  auto xc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), spots.xc);
  auto yc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), spots.yc);
  double const width = kspecter::sim::bin_widths(s.wavelength)[1];
  int nonzero = 0;
  for (int y = 0; y < psf.npix_y; ++y)
    for (int x = 0; x < psf.npix_x; ++x) {
      int const iy = y - yc(0, 0), ix = x - xc(0, 0);
      double const want = (iy >= 0 && iy < psf.spot_ny() && ix >= 0 && ix < psf.spot_nx())
                              ? (1000.0 * width) * v(0, 0, iy, ix)
                              : 0.0;
      ASSERT_EQ(img[std::size_t(y) * psf.npix_x + x], want) << y << " " << x;
      nonzero += want != 0.0;
    }
  EXPECT_GT(nonzero, psf.spot_nx() * psf.spot_ny() / 2);
  EXPECT_NEAR(width, 0.8, 1e-9);
}

TEST(TEST_CATEGORY, fiber_block_size_does_not_change_bits) {
  auto const psf = small_synthetic_psf();
  TEST_EXECSPACE space;
  auto const dpsf = kspecter::psf::to_device(space, psf);
  auto const spectra =
      kspecter::sim::make_spectra(4, 5, 20, kspecter::sim::wavelength_grid(6000, 6240, 0.8));
  auto const a = host_image(kspecter::sim::expected_image(space, psf, dpsf, spectra, 20));
  auto const b = host_image(kspecter::sim::expected_image(space, psf, dpsf, spectra, 7));
  auto const c = host_image(kspecter::sim::expected_image(space, psf, dpsf, spectra, 1));
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(a.data(), c.data(), a.size() * sizeof(double)), 0);
  EXPECT_GT(*std::max_element(a.begin(), a.end()), 0.0);
}

}  // namespace
