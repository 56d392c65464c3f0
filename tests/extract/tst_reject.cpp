// Outlier rejection (extract/reject.hpp) and the warm extractor (extract/extractor.hpp) on the
// host backend: frames simulated with cosmic-ray tracks left out of the preproc mask, judged
// against the truth they were simulated from and against the same frame with the tracks masked
// by hand; and the extractor's frames against independent extract_frame calls, bit for bit.
#include <kspecter/extract/backend.hpp>
#include <kspecter/extract/bad2dfit.hpp>
#include <kspecter/extract/extractor.hpp>
#include <kspecter/extract/mask_bits.hpp>
#include <kspecter/extract/reject.hpp>
#include <kspecter/extract/truth_pulls.hpp>
#include <kspecter/psf/synthetic_psf.hpp>
#include <kspecter/sim/simulate.hpp>
#include <kspecter/sim/spectra.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace ex = kspecter::extract;
using kspecter::sim::SimulatedImage;

// One bundle of the synthetic r-camera PSF on a narrow CCD, extracted over 400 A.
std::shared_ptr<kspecter::psf::GaussHermitePsf const> small_psf() {
  kspecter::psf::SyntheticPsfOptions o;
  o.nfiber = 25;
  o.npix_x = 330;
  return std::make_shared<kspecter::psf::GaussHermitePsf const>(
      kspecter::psf::make_synthetic_psf(o));
}

ex::ExtractOptions options() {
  ex::ExtractOptions o;
  o.wmin = 6050;
  o.wmax = 6350;
  o.dw = 0.8;
  return o;
}

kspecter::sim::Spectra truth() {
  return kspecter::sim::make_spectra(5, 0, 25, kspecter::sim::wavelength_grid(6000, 6400, 0.8));
}

// The frame simulated with seed 5; cosmic rays at `rate` per megapixel, masked or not.
SimulatedImage simulate(kspecter::psf::GaussHermitePsf const& psf, double rate, bool masked) {
  kspecter::sim::SimulateOptions o;
  o.seed = 5;
  o.defects = rate > 0;
  o.defect.bad_columns = 0;
  o.defect.cosmics_per_megapixel = rate;
  o.defect.mask_cosmics = masked;
  return kspecter::sim::simulate_on_host(psf, truth(), o);
}

ex::FrameResult extract(kspecter::psf::GaussHermitePsf const& psf, SimulatedImage const& s,
                        ex::ExtractOptions const& o) {
  ex::ImageArray const image = ex::ImageArray::host(s.image.data(), s.ny, s.nx);
  ex::ImageArray const ivar = ex::ImageArray::host(s.ivar.data(), s.ny, s.nx);
  auto const once = [&](ex::ImageArray const& w, ex::ExtractOptions const& oo) {
    return ex::extract_frame(ex::host_backend(), psf, image, w, oo);
  };
  return ex::extract_rejecting(once, psf, image, ivar, o);
}

// (flux - R truth) sqrt(ivar) of the bins `pick` chooses, ivar > 0 and R row inside the grid.
template <class Pick>
std::vector<double> pulls(ex::FrameResult const& f, Pick pick) {
  auto const t = truth();
  std::vector<double> out;
  for (int i = 0; i < f.nspec; ++i) {
    std::vector<double> const ti(t.flux.begin() + long(i) * t.nwave(),
                                 t.flux.begin() + long(i + 1) * t.nwave());
    auto const rt = ex::convolve_truth(f, i, t.wavelength, ti);
    for (int j = 0; j < f.nwave; ++j) {
      std::size_t const k = std::size_t(i) * f.nwave + std::size_t(j);
      if (f.ivar[k] > 0 && std::isfinite(rt[std::size_t(j)]) && pick(k))
        out.push_back((f.flux[k] - rt[std::size_t(j)]) * std::sqrt(f.ivar[k]));
    }
  }
  return out;
}

struct Moments {
  double mean = 0, std = 0;
};
Moments moments(std::vector<double> const& v) {
  long double s = 0, s2 = 0;
  for (double x : v) s += x, s2 += (long double)x * x;
  long double const m = s / v.size();
  return {double(m), double(std::sqrt(s2 / v.size() - m * m))};
}

bool same_bits(std::vector<double> const& a, std::vector<double> const& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// Two bundles of the synthetic PSF, on a CCD wide enough for both, and their truth.
std::shared_ptr<kspecter::psf::GaussHermitePsf const> two_bundle_psf() {
  kspecter::psf::SyntheticPsfOptions po;
  po.nfiber = 50;
  po.npix_x = 600;
  return std::make_shared<kspecter::psf::GaussHermitePsf const>(
      kspecter::psf::make_synthetic_psf(po));
}

kspecter::sim::Spectra two_bundle_truth() {
  return kspecter::sim::make_spectra(5, 0, 50, kspecter::sim::wavelength_grid(6000, 6400, 0.8));
}

// options() with every bundle in one batch, on a host backend too: a solve the Extractor keeps.
ex::ExtractOptions one_batch_options() {
  ex::ExtractOptions o = options();
  o.bundles_per_batch = 0;
  return o;
}

bool same_frame(ex::FrameResult const& a, ex::FrameResult const& b) {
  return same_bits(a.flux, b.flux) && same_bits(a.ivar, b.ivar) &&
         same_bits(a.resolution, b.resolution) && same_bits(a.chi2pix, b.chi2pix) &&
         same_bits(a.pixmask_fraction, b.pixmask_fraction) &&
         same_bits(a.deconvolved_flux, b.deconvolved_flux) && a.mask == b.mask &&
         a.rejected == b.rejected && a.reject_passes == b.reject_passes;
}

}  // namespace

TEST(reject, outliers_are_seeds_above_sigma_grown_over_neighbours_above_half_on_a_trace) {
  auto const psf = small_psf();
  auto const o = options();
  ex::TraceRows const traces(*psf, 0, 25, o.wavelengths());
  int const ny = psf->npix_y, nx = psf->npix_x;
  std::size_t const npix = std::size_t(ny) * nx;
  // Find a pixel on trace 12 in the middle of the grid, and one far from every trace.
  int const ys = int(psf->ytrace.value(12, 6200.0));
  int xs = -1, xoff = -1;
  for (int x = 0; x < nx; ++x) {
    if (xs < 0 && traces.spectrum_at(ys, x) == 12) xs = x;
    if (xoff < 0 && traces.spectrum_at(ys + 5, x) < 0) xoff = x;
  }
  ASSERT_GE(xs, 0);
  ASSERT_GE(xoff, 0);
  std::vector<double> image(npix, 0.0), weight(npix, 4.0), model(npix, 0.0);  // sigma = 0.5
  auto at = [&](int y, int x) { return std::size_t(y) * nx + std::size_t(x); };
  image[at(ys, xs)] = 3.0;           // 6 sigma: a seed at S = 5
  image[at(ys + 1, xs + 1)] = 1.4;   // 2.8 sigma beside it: grown
  image[at(ys + 2, xs + 2)] = 1.3;   // 2.6 sigma beside that: grown in turn
  image[at(ys, xs - 1)] = 1.2;       // 2.4 sigma: below half the cut, kept
  image[at(ys - 3, xs)] = 2.4;       // 4.8 sigma, alone: kept
  image[at(ys - 3, xs + 3)] = -4.0;  // 8 sigma below the model: kept (only an excess counts)
  image[at(ys + 5, xoff)] = 100.0;   // far from every trace: not the extraction's business
  model[at(ys - 6, xs)] = 1e6;       // psferr x model dominates its variance: kept
  image[at(ys - 6, xs)] = 1e6 + 5e3;
  auto const out = ex::find_outliers(image, weight, model, ny, nx, 0.01, 5.0, traces);
  std::vector<std::size_t> const want = {at(ys, xs), at(ys + 1, xs + 1), at(ys + 2, xs + 2)};
  EXPECT_EQ(out.pixels, want);
  ASSERT_EQ(out.per_spectrum.size(), 25u);
  int on12 = 0, total = 0;
  for (int s = 0; s < 25; ++s) total += out.per_spectrum[std::size_t(s)];
  for (std::size_t p : want) on12 += traces.spectrum_at(int(p / nx), int(p % nx)) == 12;
  EXPECT_EQ(total, 3);
  EXPECT_EQ(out.per_spectrum[12], on12);
  // A pixel without weight is never an outlier.
  weight[at(ys, xs)] = 0;
  EXPECT_TRUE(ex::find_outliers(image, weight, model, ny, nx, 0.01, 5.0, traces).pixels.empty());
}

TEST(reject, unmasked_cosmics_bias_their_bins_and_rejection_brings_them_back) {
  auto const psf = small_psf();
  double const rate = 300;  // tracks per megapixel: three times DESI's in 1000 s
  SimulatedImage const raw = simulate(*psf, rate, false);
  SimulatedImage const masked = simulate(*psf, rate, true);
  ASSERT_GT(raw.defects.cosmic_pixels, 500);
  ex::ExtractOptions o = options();
  ex::FrameResult const plain = extract(*psf, raw, o);
  ex::FrameResult const by_hand = extract(*psf, masked, o);
  o.reject_sigma = 5;
  ex::FrameResult const rejected = extract(*psf, raw, o);

  // The bins the cosmics touch: those whose footprint lost pixels when they were masked.
  auto const affected = [&](std::size_t k) {
    return by_hand.pixmask_fraction[k] > plain.pixmask_fraction[k];
  };
  auto const clean = [&](std::size_t k) { return !affected(k); };
  Moments const before = moments(pulls(plain, affected));
  Moments const after = moments(pulls(rejected, affected));
  Moments const hand = moments(pulls(by_hand, affected));
  Moments const rest = moments(pulls(rejected, clean));
  Moments const hand_rest = moments(pulls(by_hand, clean));
  std::size_t const naffected = pulls(rejected, affected).size();
  ASSERT_GT(naffected, 300u);
  // Unmasked, the hits pull their bins far off; rejected, they are as the hand-masked ones.
  EXPECT_GT(before.std, 5.0);
  EXPECT_LT(after.std, 1.3);
  EXPECT_LT(std::fabs(after.mean), 0.15);
  EXPECT_LT(std::fabs(after.std - hand.std), 0.1);
  EXPECT_LT(std::fabs(after.mean - hand.mean), 0.1);
  // The other bins are the hand-masked frame's too.
  EXPECT_LT(std::fabs(rest.std - hand_rest.std), 0.02);
  EXPECT_LT(std::fabs(rest.mean - hand_rest.mean), 0.01);

  // Counts and bits: the rejected pixels are about the hits on the traces, and the bins that
  // lost a pixel carry COSMIC.
  ASSERT_EQ(rejected.rejected.size(), 25u);
  long total = 0;
  for (int r : rejected.rejected) total += r;
  ex::TraceRows const traces(*psf, 0, 25, o.wavelengths());
  long hits = 0;
  for (std::size_t i = 0; i < raw.mask.size(); ++i)
    if (masked.ivar[i] == 0 && raw.ivar[i] > 0 &&
        traces.spectrum_at(int(i / raw.nx), int(i % raw.nx)) >= 0)
      ++hits;
  EXPECT_GE(total, 0.9 * hits);
  EXPECT_LE(total, 1.2 * hits + 20);
  EXPECT_GE(rejected.reject_passes, 1);
  long cosmic = 0, lost = 0;
  for (std::size_t k = 0; k < rejected.mask.size(); ++k) {
    bool const grew = rejected.pixmask_fraction[k] > plain.pixmask_fraction[k];
    lost += grew;
    cosmic += grew && (rejected.mask[k] & ex::specmask::COSMIC);
    EXPECT_EQ(bool(rejected.mask[k] & ex::specmask::COSMIC), grew) << k;
  }
  EXPECT_EQ(cosmic, lost);
  EXPECT_GT(lost, 300);
  // No mask bit without rejection.
  for (std::uint32_t m : plain.mask) EXPECT_EQ(m & ex::specmask::COSMIC, 0u);
}

TEST(reject, a_clean_frame_loses_almost_no_pixel) {
  auto const psf = small_psf();
  SimulatedImage const s = simulate(*psf, 0, true);
  ex::ExtractOptions o = options();
  ex::FrameResult const plain = extract(*psf, s, o);
  o.reject_sigma = 5;
  ex::FrameResult const r = extract(*psf, s, o);
  long total = 0;
  for (int n : r.rejected) total += n;
  // 25 traces x ~11 columns x ~700 rows = ~190,000 pixels on the traces: at 5 sigma a
  // Gaussian leaves ~0.1 above; 1e-4 of them is the bound the docs state.
  EXPECT_LE(total, 19);
  if (total == 0) {
    EXPECT_EQ(r.reject_passes, 0);
    EXPECT_TRUE(same_bits(r.flux, plain.flux));
  }
}

TEST(extractor, gives_extract_frame_s_frames_bit_for_bit_call_after_call) {
  auto const psf = small_psf();
  ex::ExtractOptions o = options();
  ex::Extractor warm(ex::host_backend(), psf, o);
  for (double rate : {0.0, 300.0, 100.0}) {
    SimulatedImage const s = simulate(*psf, rate, false);
    ex::ImageArray const image = ex::ImageArray::host(s.image.data(), s.ny, s.nx);
    ex::ImageArray const ivar = ex::ImageArray::host(s.ivar.data(), s.ny, s.nx);
    ex::ExtractOptions with_model = o;
    with_model.model = true;
    ex::FrameResult cold = ex::extract_frame(ex::host_backend(), *psf, image, ivar, with_model);
    ex::apply_bad2dfit(cold);
    ex::FrameResult const got = warm.extract(image, ivar);
    EXPECT_TRUE(same_frame(got, cold)) << rate;
    // The weights are the first image's (the cosmics are unmasked): its factor serves.
    EXPECT_EQ(got.stats.reused_factor, rate != 0.0) << rate;
    EXPECT_FALSE(cold.stats.reused_factor);
    ASSERT_TRUE(warm.model());
    EXPECT_TRUE(same_bits(*warm.model(), cold.model)) << rate;
    EXPECT_EQ(warm.model_nx(), psf->npix_x);
    EXPECT_EQ(warm.model_ny(), psf->npix_y);
    EXPECT_TRUE(got.model.empty());
  }
  // With rejection, the frame extract_rejecting gives through extract_frame.
  ex::ExtractOptions r = o;
  r.reject_sigma = 5;
  ex::Extractor rejecting(ex::host_backend(), psf, r);
  SimulatedImage const s = simulate(*psf, 300, false);
  ex::FrameResult want = extract(*psf, s, r);
  ex::apply_bad2dfit(want);
  EXPECT_TRUE(same_frame(rejecting.extract(ex::ImageArray::host(s.image.data(), s.ny, s.nx),
                                           ex::ImageArray::host(s.ivar.data(), s.ny, s.nx)),
                         want));
  EXPECT_GT(want.reject_passes, 0);
  // Released, it extracts again as before.
  rejecting.release();
  EXPECT_TRUE(same_frame(rejecting.extract(ex::ImageArray::host(s.image.data(), s.ny, s.nx),
                                           ex::ImageArray::host(s.ivar.data(), s.ny, s.nx)),
                         want));
}

TEST(extractor, refuses_what_extract_frame_refuses_when_it_is_made) {
  auto const psf = small_psf();
  ex::ExtractOptions o = options();
  o.wmax = 9000;  // beyond the PSF
  EXPECT_THROW(ex::Extractor(ex::host_backend(), psf, o), kspecter::ParameterError);
  EXPECT_THROW(ex::Extractor("no-such-backend", psf, options()), kspecter::ParameterError);
  o = options();
  o.reject_iter = 0;
  EXPECT_THROW(ex::Extractor(ex::host_backend(), psf, o), kspecter::ParameterError);
  EXPECT_THROW(ex::Extractor(ex::host_backend(), nullptr, options()), kspecter::ParameterError);
}

// On every backend of the build (a GPU's too): a frame of two bundles in one batch keeps its
// solve, and the repeats with the same weights give extract_frame's frames bit for bit.
TEST(extractor, reuses_the_solve_of_a_frame_of_two_bundles_on_every_backend) {
  auto const psf = two_bundle_psf();
  ex::ExtractOptions o = one_batch_options();
  o.model = true;
  auto const spectra = two_bundle_truth();
  for (std::string const& backend : ex::backend_list()) {
    ex::Extractor warm(backend, psf, o);
    kspecter::sim::SimulateOptions so;
    so.seed = 7;
    SimulatedImage const first = kspecter::sim::simulate_on_host(*psf, spectra, so);
    // New noise each call, the first call's weights throughout.
    ex::ImageArray const ivar = ex::ImageArray::host(first.ivar.data(), first.ny, first.nx);
    for (std::uint64_t seed : {7, 8, 9}) {
      so.seed = seed;
      SimulatedImage const s = kspecter::sim::simulate_on_host(*psf, spectra, so);
      ex::ImageArray const image = ex::ImageArray::host(s.image.data(), s.ny, s.nx);
      ex::FrameResult cold = ex::extract_frame(backend, *psf, image, ivar, o);
      ex::apply_bad2dfit(cold);
      ex::FrameResult const got = warm.extract(image, ivar);
      EXPECT_EQ(cold.stats.nbatch, 1) << backend;
      EXPECT_TRUE(same_frame(got, cold)) << backend << ", seed " << seed;
      EXPECT_TRUE(same_bits(*warm.model(), cold.model)) << backend << ", seed " << seed;
      EXPECT_EQ(got.stats.reused_factor, seed != 7) << backend << ", seed " << seed;
    }
  }
}

// On every backend: when a repeat's weights change in a few windows (a cosmic's track, a
// stretch of a bad column), only those patches are assembled and factorised again, and the
// frames stay extract_frame's bit for bit; with many changed it takes the full path.
TEST(extractor, reworks_only_the_patches_whose_weights_changed_on_every_backend) {
  auto const psf = two_bundle_psf();
  ex::ExtractOptions o = one_batch_options();
  o.nwavestep = 30;  // 2 bundles x 13 patches: a track reaches a few of them
  o.model = true;
  auto const spectra = two_bundle_truth();
  kspecter::sim::SimulateOptions so;
  so.seed = 7;
  SimulatedImage const first = kspecter::sim::simulate_on_host(*psf, spectra, so);
  // Pixels on fiber 12's trace near 6200 A: a track down four rows, and 40 rows of a column.
  int const x = int(std::lround(psf->xtrace.value(12, 6200))) + 1;
  int const y = int(std::lround(psf->ytrace.value(12, 6200)));
  auto with_zeros = [&](std::vector<std::pair<int, int>> const& pixels) {
    std::vector<float> w = first.ivar;
    for (auto [py, px] : pixels) w[std::size_t(py) * first.nx + px] = 0;
    return w;
  };
  std::vector<std::pair<int, int>> track, column, block, many;
  for (int i = 0; i < 4; ++i) track.push_back({y + i, x + i / 2});
  for (int i = 0; i < 40; ++i) column.push_back({y - 200 + i, x - 3});
  // Every pixel of a few of the fiber's spots: their fluxweight falls to 0 (ivar 0, masked),
  // which the kept fluxweight must follow.
  for (int py = y + 100; py < y + 130; ++py)
    for (int px = x - 12; px <= x + 12; ++px) block.push_back({py, px});
  for (int py = 0; py < first.ny; py += 3)
    for (int px = py % 7; px < first.nx; px += 7) many.push_back({py, px});
  std::vector<float> const ivar_track = with_zeros(track), ivar_column = with_zeros(column);
  std::vector<float> const ivar_many = with_zeros(many), ivar_block = with_zeros(block);
  struct Call {
    std::vector<float> const* ivar;
    bool reused;
    bool reworked;  // a few patches
  };
  std::vector<Call> const calls = {
      {&first.ivar, false, false}, {&ivar_track, true, true},  {&ivar_track, true, false},
      {&ivar_column, true, true},  {&first.ivar, true, true},  {&ivar_block, true, true},
      {&first.ivar, true, true},   {&ivar_many, false, false}, {&first.ivar, false, false}};
  for (std::string const& backend : ex::backend_list()) {
    ex::Extractor warm(backend, psf, o);
    for (std::size_t c = 0; c < calls.size(); ++c) {
      so.seed = 10 + c;  // new noise each call
      SimulatedImage const s = kspecter::sim::simulate_on_host(*psf, spectra, so);
      ex::ImageArray const image = ex::ImageArray::host(s.image.data(), s.ny, s.nx);
      ex::ImageArray const ivar = ex::ImageArray::host(calls[c].ivar->data(), s.ny, s.nx);
      ex::FrameResult cold = ex::extract_frame(backend, *psf, image, ivar, o);
      ex::apply_bad2dfit(cold);
      ex::FrameResult const got = warm.extract(image, ivar);
      std::string const what = backend + ", call " + std::to_string(c);
      EXPECT_EQ(cold.stats.nbatch, 1) << what;
      EXPECT_TRUE(same_frame(got, cold)) << what;
      EXPECT_TRUE(same_bits(*warm.model(), cold.model)) << what;
      EXPECT_EQ(got.stats.reused_factor, calls[c].reused) << what;
      if (calls[c].reworked) {
        EXPECT_GT(got.stats.nreworked, 0) << what;
        EXPECT_LE(got.stats.nreworked * 4, got.stats.npatch) << what;  // a few, not half
      } else {
        EXPECT_EQ(got.stats.nreworked, 0) << what;
      }
    }
  }
}

namespace {

// Arrays of a frame's sizes, for the outputs the caller owns (FrameOutputs).
struct CallerArrays {
  std::vector<double> flux, ivar, resolution, chi2pix, pixmask, deconvolved, model;
  std::vector<std::uint32_t> mask;
  explicit CallerArrays(ex::Extractor::Sizes const& z) {
    std::size_t const spectra = std::size_t(z.nspec) * std::size_t(z.nwave);
    // NaN-filled: a value left unwritten shows.
    double const nan = std::nan("");
    flux.assign(spectra, nan), ivar.assign(spectra, nan), chi2pix.assign(spectra, nan);
    pixmask.assign(spectra, nan), deconvolved.assign(spectra, nan);
    resolution.assign(spectra * std::size_t(2 * z.ndiag + 1), nan);
    model.assign(std::size_t(z.ny) * std::size_t(z.nx), nan);
    mask.assign(spectra, 0xdeadbeef);
  }
  ex::FrameOutputs outputs() {
    ex::FrameOutputs o;
    o.flux = flux.data(), o.ivar = ivar.data(), o.resolution = resolution.data();
    o.chi2pix = chi2pix.data(), o.pixmask_fraction = pixmask.data();
    o.deconvolved_flux = deconvolved.data(), o.model = model.data(), o.mask = mask.data();
    return o;
  }
};

}  // namespace

// On the host backends (where the caller's memory is host memory; the GPU's form runs in
// python/tests/test_cupy.py): the frame written into the caller's arrays is the host form's
// bit for bit, BAD2DFIT's medians and the model's float32 limits taken by the backend's
// kernels; on a repeat with the kept solve, and with outlier rejection.
TEST(extractor, writes_the_host_form_s_frame_into_the_caller_s_arrays) {
  auto const psf = two_bundle_psf();
  auto const spectra = two_bundle_truth();
  kspecter::sim::SimulateOptions so;
  so.defects = true;
  so.defect.bad_columns = 0;
  so.defect.cosmics_per_megapixel = 300;  // left in the image: bins BAD2DFIT flags
  so.defect.mask_cosmics = false;
  so.seed = 7;
  SimulatedImage const first = kspecter::sim::simulate_on_host(*psf, spectra, so);
  ex::ImageArray const ivar = ex::ImageArray::host(first.ivar.data(), first.ny, first.nx);
  for (std::string const& backend : ex::backend_list()) {
    if (!ex::backend_on_host(backend)) continue;
    for (double sigma : {0.0, 5.0}) {
      ex::ExtractOptions o = one_batch_options();
      o.reject_sigma = sigma;
      ex::Extractor host_form(backend, psf, o), into(backend, psf, o);
      for (std::uint64_t seed : {7, 8}) {  // new noise, the first weights: a repeat
        so.seed = seed;
        SimulatedImage const s = kspecter::sim::simulate_on_host(*psf, spectra, so);
        ex::ImageArray const image = ex::ImageArray::host(s.image.data(), s.ny, s.nx);
        std::string const what =
            backend + ", sigma " + std::to_string(sigma) + ", seed " + std::to_string(seed);
        ex::FrameResult const want = host_form.extract(image, ivar);
        CallerArrays a(into.sizes());
        ex::FrameResult const got = into.extract(image, ivar, a.outputs());
        EXPECT_TRUE(same_bits(a.flux, want.flux)) << what;
        EXPECT_TRUE(same_bits(a.ivar, want.ivar)) << what;
        EXPECT_TRUE(same_bits(a.resolution, want.resolution)) << what;
        EXPECT_TRUE(same_bits(a.chi2pix, want.chi2pix)) << what;
        EXPECT_TRUE(same_bits(a.pixmask, want.pixmask_fraction)) << what;
        EXPECT_TRUE(same_bits(a.deconvolved, want.deconvolved_flux)) << what;
        EXPECT_EQ(a.mask, want.mask) << what;
        EXPECT_TRUE(same_bits(a.model, *host_form.model())) << what;
        long long bad2dfit = 0;
        for (std::uint32_t m : want.mask) bad2dfit += (m & ex::specmask::BAD2DFIT) ? 1 : 0;
        EXPECT_GT(bad2dfit, 0) << what;  // the medians' rule had bins to flag
        // The result carries the rest, its arrays empty.
        EXPECT_TRUE(got.flux.empty() && got.resolution.empty() && got.mask.empty()) << what;
        EXPECT_TRUE(got.model.empty()) << what;
        EXPECT_EQ(got.wavelength, want.wavelength) << what;
        EXPECT_EQ(got.rejected, want.rejected) << what;
        EXPECT_EQ(got.reject_passes, want.reject_passes) << what;
        EXPECT_EQ(got.stats.reused_factor, want.stats.reused_factor) << what;
        EXPECT_FALSE(into.model()) << what;
      }
    }
  }
}

TEST(extractor, refuses_outputs_that_lack_an_array) {
  auto const psf = two_bundle_psf();
  ex::Extractor e(ex::host_backend(), psf, one_batch_options());
  CallerArrays a(e.sizes());
  ex::FrameOutputs o = a.outputs();
  o.model = nullptr;
  std::vector<double> const image(a.model.size(), 0.0), ivar(a.model.size(), 1.0);
  EXPECT_THROW(e.extract(ex::ImageArray::host(image.data(), psf->npix_y, psf->npix_x),
                         ex::ImageArray::host(ivar.data(), psf->npix_y, psf->npix_x), o),
               kspecter::ParameterError);
}
