// The simulator end to end on the host: the same bits from Serial, OpenMP and the library's
// host entry point, written files identical byte for byte, the default spectra as described,
// defects, and a frame of the real DESI PSF that conserves flux.
#include <kspecter/io/preproc_file.hpp>
#include <kspecter/io/psf_file.hpp>
#include <kspecter/psf/synthetic_psf.hpp>
#include <kspecter/sim/simulate.hpp>

#include <test_data.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace {

using kspecter::sim::SimulatedImage;
using kspecter::sim::SimulateOptions;
using kspecter::test::file_bytes;

// A small CCD so that a full simulation takes a fraction of a second: 30 fibers of the
// synthetic r-camera PSF on 400 columns.
kspecter::psf::GaussHermitePsf small_psf() {
  kspecter::psf::SyntheticPsfOptions o;
  o.nfiber = 30;
  o.npix_x = 400;
  return kspecter::psf::make_synthetic_psf(o);
}

kspecter::sim::Spectra small_spectra(std::uint64_t seed) {
  return kspecter::sim::make_spectra(seed, 0, 30, kspecter::sim::wavelength_grid(6000, 6600, 0.8));
}

bool same_bits(SimulatedImage const& a, SimulatedImage const& b) {
  return a.nx == b.nx && a.ny == b.ny && a.image.size() == b.image.size() &&
         std::memcmp(a.image.data(), b.image.data(), a.image.size() * sizeof(float)) == 0 &&
         std::memcmp(a.ivar.data(), b.ivar.data(), a.ivar.size() * sizeof(float)) == 0 &&
         a.mask == b.mask;
}

TEST(sim_host, serial_openmp_and_library_give_the_same_bits) {
  auto const psf = small_psf();
  auto const spectra = small_spectra(21);
  SimulateOptions o;
  o.seed = 21;
  o.defects = true;
  o.keep_expected = true;
  SimulatedImage const lib = kspecter::sim::simulate_on_host(psf, spectra, o);
  ASSERT_EQ(lib.nx, 400);
  ASSERT_EQ(lib.ny, psf.npix_y);
  EXPECT_GT(*std::max_element(lib.expected.begin(), lib.expected.end()), 100.0);
  int backends = 0;
#ifdef KOKKOS_ENABLE_SERIAL
  EXPECT_TRUE(same_bits(lib, kspecter::sim::simulate(Kokkos::Serial(), psf, spectra, o)));
  ++backends;
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  EXPECT_TRUE(same_bits(lib, kspecter::sim::simulate(Kokkos::OpenMP(), psf, spectra, o)));
  ++backends;
#endif
  EXPECT_GE(backends, 1);
  // Another block size: same bits.
  o.fibers_per_block = 4;
  EXPECT_TRUE(same_bits(lib, kspecter::sim::simulate_on_host(psf, spectra, o)));
  // Another seed: different noise.
  o.seed = 22;
  SimulatedImage const other = kspecter::sim::simulate_on_host(psf, spectra, o);
  EXPECT_FALSE(same_bits(lib, other));
}

TEST(sim_host, written_files_are_identical_for_one_seed) {
  std::string const dir = kspecter::test::scratch_dir();
  auto const psf = small_psf();
  auto write = [&](std::uint64_t seed, std::string const& name) {
    auto const spectra = small_spectra(seed);
    SimulateOptions o;
    o.seed = seed;
    SimulatedImage s = kspecter::sim::simulate_on_host(psf, spectra, o);
    kspecter::io::PreprocImage img;
    img.nx = s.nx;
    img.ny = s.ny;
    img.image = s.image;
    img.ivar = s.ivar;
    img.mask = s.mask;
    kspecter::io::TruthSpectra t;
    t.specmin = spectra.specmin;
    t.nspec = spectra.nspec;
    t.wavelength = spectra.wavelength;
    t.flux = spectra.flux;
    t.objtype = spectra.objtype;
    img.header.set_integer("SIMSEED", seed);
    kspecter::io::write_preproc(dir + "/" + name, img, &t);
    return file_bytes(dir + "/" + name);
  };
  std::string const a = write(8, "a.fits"), b = write(8, "b.fits"), c = write(9, "c.fits");
  EXPECT_GT(a.size(), 400u * 4128u * 8u);  // IMAGE, IVAR f4; MASK compressed
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a == c);
}

TEST(sim_host, default_spectra_are_as_described) {
  auto const grid = kspecter::sim::wavelength_grid(5760, 7620, 0.8);
  ASSERT_EQ(grid.size(), 2326u);  // as DESI's r camera
  EXPECT_EQ(grid.front(), 5760.0);
  EXPECT_NEAR(grid.back(), 7620.0, 1e-9);
  auto const s = kspecter::sim::make_spectra(1, 0, 500, grid);
  std::size_t const nw = grid.size();
  ASSERT_EQ(s.flux.size(), 500 * nw);
  for (double f : s.flux) ASSERT_TRUE(std::isfinite(f) && f >= 0.0);

  int nsky = 0;
  std::vector<int> sky;
  for (int f = 0; f < 500; ++f)
    if (s.objtype[f] == "SKY")
      sky.push_back(f);
    else
      ASSERT_EQ(s.objtype[f], "TGT");
  nsky = static_cast<int>(sky.size());
  EXPECT_GE(nsky, 30);  // ~10 % of 500 (binomial sd 6.7)
  EXPECT_LE(nsky, 70);

  // Sky fibers share one spectrum up to a throughput within 3 %.
  ASSERT_GE(nsky, 2);
  double const* s0 = &s.flux[sky[0] * nw];
  for (int f : sky) {
    double const* sf = &s.flux[f * nw];
    double const ratio = sf[1000] / s0[1000];
    EXPECT_NEAR(ratio, 1.0, 0.061);
    for (std::size_t w = 0; w < nw; w += 37) ASSERT_NEAR(sf[w] / s0[w], ratio, 1e-12);
  }
  // ... with many narrow lines over the continuum.
  std::vector<double> sorted(s0, s0 + nw);
  std::sort(sorted.begin(), sorted.end());
  double const median = sorted[nw / 2];
  int peaks = 0;
  for (std::size_t w = 1; w + 1 < nw; ++w)
    peaks += s0[w] > 3 * median && s0[w] >= s0[w - 1] && s0[w] > s0[w + 1];
  EXPECT_GT(peaks, 40);
  EXPECT_GT(sorted.back(), 50 * median);

  // Objects: many faint, some bright. A fiber's total over the sky fiber's total is its
  // throughput ratio (within 1 +- 6 %) times 1 + object/sky.
  double const sky_total = std::accumulate(s0, s0 + nw, 0.0);
  int faint = 0, bright = 0, objects = 0;
  for (int f = 0; f < 500; ++f) {
    if (s.objtype[f] != "TGT") continue;
    double const ratio = std::accumulate(&s.flux[f * nw], &s.flux[f * nw] + nw, 0.0) / sky_total;
    ++objects;
    faint += ratio < 1.1;
    bright += ratio > 1.5;
  }
  EXPECT_GT(faint, objects / 2);
  EXPECT_GT(bright, objects / 100);
  EXPECT_LT(bright, objects / 3);

  // Emission lines: in the ratio to the sky, q = t (1 + object/sky), sky lines cancel and an
  // object's emission line stands out as a peak above the local median.
  int with_lines = 0;
  for (int f = 0; f < 500; ++f) {
    if (s.objtype[f] != "TGT") continue;
    double const* o = &s.flux[f * nw];
    std::vector<double> q(nw), window;
    for (std::size_t w = 0; w < nw; ++w) q[w] = o[w] / s0[w];
    bool found = false;
    for (std::size_t w = 20; w + 20 < nw && !found; ++w) {
      window.assign(q.begin() + (w - 20), q.begin() + (w + 21));
      std::nth_element(window.begin(), window.begin() + 20, window.end());
      double const med = window[20];
      found = q[w] > 1.3 * med && o[w] - s0[w] * med > 5.0;
    }
    with_lines += found;
  }
  EXPECT_GT(with_lines, 50);
  EXPECT_LT(with_lines, 400);

  // Deterministic, seed-dependent, and the same fibers whatever the block asked for.
  auto const again = kspecter::sim::make_spectra(1, 0, 500, grid);
  EXPECT_TRUE(again.flux == s.flux);
  auto const part = kspecter::sim::make_spectra(1, 100, 25, grid);
  EXPECT_TRUE(std::equal(part.flux.begin(), part.flux.end(), s.flux.begin() + 100 * nw));
  auto const other = kspecter::sim::make_spectra(2, 0, 500, grid);
  EXPECT_FALSE(other.flux == s.flux);
}

TEST(sim_host, line_flux_is_integrated_over_bins) {
  // Two grids with the same outer edges: coarse and 8x finer. Every line's electrons fall
  // wholly inside both, so sum(flux * width) agrees up to the continuum's midpoint-rule error.
  auto const coarse = kspecter::sim::wavelength_grid(6200.0, 6400.0, 0.8);
  auto const fine = kspecter::sim::wavelength_grid(6199.65, 6400.35, 0.1);
  ASSERT_EQ(coarse.size(), 251u);
  ASSERT_EQ(fine.size(), 2008u);
  auto total = [](kspecter::sim::Spectra const& s) {
    auto const dw = kspecter::sim::bin_widths(s.wavelength);
    double t = 0;
    for (int w = 0; w < s.nwave(); ++w) t += s.flux[w] * dw[w];
    return t;
  };
  for (int fiber : {0, 7, 42, 99}) {
    double const a = total(kspecter::sim::make_spectra(5, fiber, 1, coarse));
    double const b = total(kspecter::sim::make_spectra(5, fiber, 1, fine));
    EXPECT_NEAR(a, b, 1e-6 * b) << fiber;
  }
}

TEST(sim_host, grid_and_widths) {
  EXPECT_THROW(kspecter::sim::wavelength_grid(6000, 5000, 1), kspecter::ParameterError);
  EXPECT_THROW(kspecter::sim::wavelength_grid(6000, 7000, 0), kspecter::ParameterError);
  EXPECT_THROW(kspecter::sim::wavelength_grid(6000, 7000, std::nan("")), kspecter::ParameterError);
  auto const w = kspecter::sim::wavelength_grid(3600, 5800, 0.8);
  EXPECT_EQ(w.size(), 2751u);
  EXPECT_EQ(kspecter::sim::wavelength_grid(7520, 9824, 0.8).size(), 2881u);
  auto const d = kspecter::sim::bin_widths({1.0, 2.0, 4.0, 8.0});
  EXPECT_EQ(d, (std::vector<double>{1.0, 1.5, 3.0, 4.0}));
}

TEST(sim_host, defects_are_masked) {
  int const nx = 800, ny = 600;
  std::vector<float> image(nx * ny, 10.0f), ivar(nx * ny, 0.1f);
  std::vector<int> mask(nx * ny, 0);
  kspecter::sim::DefectOptions o;
  o.bad_columns = 20;
  auto const sum = kspecter::sim::add_defects(3, nx, ny, image.data(), ivar.data(), mask.data(), o);
  EXPECT_GE(sum.bad_columns, 1);
  EXPECT_EQ(sum.cosmic_rays, std::lround(100.0 * nx * ny / 1e6));
  long bad = 0, cosmic = 0;
  for (int p = 0; p < nx * ny; ++p) {
    if (mask[p] & kspecter::sim::maskbit::bad) ++bad;
    if (mask[p] & kspecter::sim::maskbit::cosmic) ++cosmic;
    if (mask[p]) {
      EXPECT_EQ(ivar[p], 0.0f);
      EXPECT_GT(image[p], 10.0f + 199.0f);
    } else {
      EXPECT_EQ(ivar[p], 0.1f);
      EXPECT_EQ(image[p], 10.0f);
    }
  }
  EXPECT_EQ(bad, sum.bad_pixels);
  EXPECT_GE(cosmic, sum.cosmic_rays / 2);
  EXPECT_EQ(kspecter::io::ccdmask::bad, kspecter::sim::maskbit::bad);
  EXPECT_EQ(kspecter::io::ccdmask::cosmic, kspecter::sim::maskbit::cosmic);
  // Bad columns are whole columns from some row to the top.
  for (int x = 0; x < nx; ++x) {
    int first = -1;
    for (int y = 0; y < ny; ++y)
      if (mask[y * nx + x] & kspecter::sim::maskbit::bad) {
        if (first < 0) first = y;
      } else {
        ASSERT_LT(first, 0) << "column " << x << " is bad from row " << first << " but not at "
                            << y;
      }
  }
  // Unmasked cosmics keep their ivar but still raise the pixels.
  std::vector<float> image2(nx * ny, 10.0f), ivar2(nx * ny, 0.1f);
  std::vector<int> mask2(nx * ny, 0);
  o.bad_columns = 0;
  o.mask_cosmics = false;
  auto const sum2 =
      kspecter::sim::add_defects(3, nx, ny, image2.data(), ivar2.data(), mask2.data(), o);
  EXPECT_EQ(sum2.bad_columns, 0);
  long raised = 0;
  for (int p = 0; p < nx * ny; ++p) {
    EXPECT_EQ(mask2[p], 0);
    EXPECT_EQ(ivar2[p], 0.1f);
    raised += image2[p] > 10.0f;
  }
  EXPECT_EQ(raised, sum2.cosmic_pixels);
  EXPECT_EQ(sum2.cosmic_pixels, sum.cosmic_pixels);  // same seed, same tracks
}

TEST(sim_host, real_psf_frame_conserves_flux) {
  KSPECTER_SHARED_DATA_OR_SKIP(path, "psf-r0-00067784.fits");
  auto const psf = kspecter::io::read_psf(path);
  auto const grid = kspecter::sim::wavelength_grid(5760, 7620, 0.8);
  // Fibers at both edges of the CCD and one bundle in the middle.
  for (int specmin : {0, 250, 495}) {
    auto const spectra = kspecter::sim::make_spectra(11, specmin, 5, grid);
    SimulateOptions o;
    o.noiseless = true;
    o.keep_expected = true;
    auto const s = kspecter::sim::simulate_on_host(psf, spectra, o);
    ASSERT_EQ(s.nx, 4114);
    ASSERT_EQ(s.ny, 4128);
    auto const dw = kspecter::sim::bin_widths(grid);
    long double want = 0, got = 0, got_f = 0;
    for (std::size_t i = 0; i < spectra.flux.size(); ++i)
      want += spectra.flux[i] * dw[i % grid.size()];
    for (double v : s.expected) got += v;
    for (float v : s.image) got_f += v;
    // Every r-band spot of the real PSF lies on the chip.
    EXPECT_NEAR(double(got), double(want), 1e-10 * double(want)) << specmin;
    EXPECT_NEAR(double(got_f), double(want), 1e-5 * double(want)) << specmin;
  }
}

}  // namespace
