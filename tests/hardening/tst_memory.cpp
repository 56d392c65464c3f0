// Memory: a budget below one patch is refused with the sizes in words; a budget below one
// bundle cuts the bundle into slices of patches and changes no number (the model image
// included); an allocation that fails on the device makes extract_frame try again with
// smaller batches and, when even one patch does not fit, ends in a clear error, never a
// crash.
#include "fits_edit.hpp"
#include "frame_checks.hpp"
#include "small_inputs.hpp"

#include <kspecter/core/allocate.hpp>
#include <kspecter/core/error.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/extract/patch_plan.hpp>
#include <kspecter/io/frame_file.hpp>
#include <kspecter/io/preproc_file.hpp>
#include <kspecter/io/psf_file.hpp>
#include <kspecter/psf/spots.hpp>

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace {

using namespace kspecter::test;
using kspecter::extract::ExtractOptions;
using kspecter::extract::FrameResult;

// The options `extract_args` gives the CLI.
ExtractOptions small_options() {
  ExtractOptions o;
  o.wmin = 6020;
  o.wmax = 6180;
  o.dw = 0.8;
  o.bundlesize = 10;
  o.nsubbundles = 2;
  return o;
}

kspecter::extract::BatchFootprint footprint(ExtractOptions const& o) {
  auto const plan = kspecter::extract::make_patch_plan(o, 20, 11, 17);
  return kspecter::extract::batch_footprint(plan, o.bundlesize, 11, 17);
}

std::string gib(double bytes) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", bytes / double(std::size_t(1) << 30));
  return b;
}

TEST(memory, budget_below_one_patch_is_refused) {
  SmallInputs in;
  ASSERT_NO_FATAL_FAILURE(make_small_inputs(in));
  std::string const out = in.dir + "/frame.fits";
  auto const r = run_kspecter(extract_args(in.image, in.psf, out) + " --memory-budget 1e-6");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("memory budget of 1.0"), std::string::npos) << r.out;  // 1e-6 GiB
  EXPECT_NE(r.out.find("KiB cannot hold one patch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MiB in all"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_TRUE(temp_files(in.dir).empty());
}

TEST(memory, budget_below_one_bundle_slices_it_with_the_same_frame) {
  SmallInputs in;
  ASSERT_NO_FATAL_FAILURE(make_small_inputs(in));
  auto const fp = footprint(small_options());
  // One bundle (10 patches) per batch, and slices of 3 patches (4 per bundle).
  double const one_bundle =
      double(fp.per_bundle_fixed + 10 * fp.per_patch) + 0.5 * double(fp.per_patch);
  double const three_patches =
      double(fp.per_bundle_fixed + 3 * fp.per_patch) + 0.5 * double(fp.per_patch);
  {
    ExtractOptions o = small_options();
    o.memory_budget = std::size_t(three_patches);
    auto const plan = kspecter::extract::make_patch_plan(o, 20, 11, 17);
    ASSERT_EQ(plan.batches.size(), 8u);
    int partial = 0;
    for (auto const& b : plan.batches) {
      EXPECT_LE(b.patch_end - b.patch_begin, 3);
      EXPECT_EQ(b.bundle_end - b.bundle_begin, 1);
      partial += b.completes_bundles ? 0 : 1;
    }
    EXPECT_EQ(partial, 6);
  }
  auto run = [&](std::string const& name, std::string const& budget) {
    std::string const out = in.dir + "/" + name;
    auto const r =
        run_kspecter(extract_args(in.image, in.psf, out + ".fits") + " -m " + out + "_model.fits" +
                     (budget.empty() ? "" : " --memory-budget " + budget));
    EXPECT_EQ(r.status, 0) << r.out;
    return std::make_pair(kspecter::io::read_frame(out + ".fits"),
                          fits_edit::read_image(out + "_model.fits", "MODEL"));
  };
  auto const whole = run("whole", "");
  auto const bundle = run("bundle", gib(one_bundle));
  auto const sliced = run("sliced", gib(three_patches));
  EXPECT_TRUE(clean_frame(sliced.first));
  EXPECT_TRUE(same_frame_data(whole.first, bundle.first));
  EXPECT_TRUE(same_frame_data(whole.first, sliced.first));
  // The model sums each bundle's fibers once, after its last slice: the same as one bundle
  // per batch, bit for bit.
  ASSERT_EQ(sliced.second.size(), 200u * 400u);
  EXPECT_TRUE(same_bits(bundle.second, sliced.second));
}

// Every array of two extractions, bit for bit.
::testing::AssertionResult same_numbers(FrameResult const& a, FrameResult const& b) {
  std::vector<double> const FrameResult::*arrays[] = {&FrameResult::flux,
                                                      &FrameResult::ivar,
                                                      &FrameResult::resolution,
                                                      &FrameResult::chi2pix,
                                                      &FrameResult::deconvolved_flux,
                                                      &FrameResult::model};
  for (auto m : arrays)
    if (!same_bits(a.*m, b.*m)) return ::testing::AssertionFailure() << "an array differs";
  if (a.mask != b.mask) return ::testing::AssertionFailure() << "the mask differs";
  return ::testing::AssertionSuccess();
}

// extract_frame on the small inputs with a spot provider that fails like a device out of
// memory (Kokkos' own words) whenever it is asked for more than `max_fibers` fibers at once.
struct FailingDevice {
  using Space = Kokkos::DefaultExecutionSpace;
  using mem = Space::memory_space;
  SmallInputs in;
  kspecter::psf::GaussHermitePsf psf;
  kspecter::psf::DevicePsf<mem> dpsf;
  Kokkos::View<double**, Kokkos::LayoutRight, mem> image, ivar;
  int calls = 0;

  void load() {
    ASSERT_NO_FATAL_FAILURE(make_small_inputs(in));
    psf = kspecter::io::read_psf(in.psf);
    dpsf = kspecter::psf::to_device(Space(), psf);
    auto const img = kspecter::io::read_preproc(in.image);
    image = decltype(image)("image", img.ny, img.nx);
    ivar = decltype(ivar)("ivar", img.ny, img.nx);
    auto hi = Kokkos::create_mirror_view(image);
    auto hv = Kokkos::create_mirror_view(ivar);
    for (int y = 0; y < img.ny; ++y)
      for (int x = 0; x < img.nx; ++x) {
        hi(y, x) = img.image[std::size_t(y) * img.nx + x];
        hv(y, x) = img.ivar[std::size_t(y) * img.nx + x];
      }
    Kokkos::deep_copy(image, hi);
    Kokkos::deep_copy(ivar, hv);
  }

  FrameResult extract(ExtractOptions const& o, int max_fibers) {
    kspecter::extract::SpotProvider<mem> provider =
        [&](int f0, int nf, Kokkos::View<const double*, mem> wave, kspecter::psf::Spots<mem>& out) {
          ++calls;
          if (nf > max_fibers)
            throw kspecter::OutOfMemory(  // what allocate() throws when Kokkos cannot allocate
                "kspecter::psf::spots", 7900000,
                "Kokkos ERROR: Test memory space failed to allocate 7.534 MiB "
                "(label=\"kspecter::psf::spots\").\n\nTraceback functionality not available\n");
          kspecter::psf::compute_spots(Space(), psf, dpsf, f0, nf, wave, out, true);
        };
    return kspecter::extract::extract_frame(Space(), provider,
                                            kspecter::extract::spot_geometry(psf), image, ivar, o);
  }
};

TEST(memory, failed_allocations_retry_with_smaller_batches) {
  FailingDevice dev;
  ASSERT_NO_FATAL_FAILURE(dev.load());
  ExtractOptions o = small_options();
  o.model = true;
  o.bundles_per_batch = 0;  // as on a GPU: both bundles in one batch when the budget holds them
  auto const fp = footprint(o);
  ExtractOptions one_bundle = o;
  one_bundle.memory_budget = fp.per_bundle_fixed + 10 * fp.per_patch;
  FrameResult const want = dev.extract(one_bundle, 20);
  EXPECT_EQ(want.stats.nbatch, 2);
  // The default budget holds both bundles: the device refuses, the retry takes one at a time.
  dev.calls = 0;
  FrameResult const got = dev.extract(o, 10);
  EXPECT_EQ(got.stats.nbatch, 2);
  EXPECT_EQ(dev.calls, 3);  // the failed batch, then both bundles
  EXPECT_TRUE(same_numbers(want, got));
}

TEST(memory, allocation_failing_at_one_patch_is_a_clear_error) {
  FailingDevice dev;
  ASSERT_NO_FATAL_FAILURE(dev.load());
  try {
    dev.extract(small_options(), 0);
    ADD_FAILURE() << "no error";
  } catch (kspecter::Error const& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find("out of device memory even with one patch per batch"), std::string::npos)
        << what;
    EXPECT_NE(what.find("kspecter::psf::spots"), std::string::npos) << what;
    EXPECT_EQ(what.find("Traceback"), std::string::npos) << what;
  }
  // Halving from two bundles (20 patches) down to one patch: a handful of tries, not one per
  // patch.
  EXPECT_GE(dev.calls, 3);
  EXPECT_LE(dev.calls, 8);
}

// A real allocation failure, kspecter retrying with smaller batches, then saying so and
// exiting 1. On the CPU the process may not map more than ~3 GiB and one patch of this layout
// needs ~6 GiB; on a GPU one patch of 5 fibers x 40,000 bins needs a 320 GB matrix, more than
// any device has.
TEST(memory, real_device_allocation_failure_is_a_clear_error) {
  auto const info = run_kspecter("info");
  bool const gpu =
      info.out.find("Cuda") != std::string::npos || info.out.find("HIP") != std::string::npos;
#if defined(__SANITIZE_ADDRESS__)
  if (!gpu)
    GTEST_SKIP() << "AddressSanitizer maps terabytes of shadow memory at start-up: a sanitized "
                    "kspecter cannot start under a limit on virtual memory";
#endif
  SmallInputs in;
  ASSERT_NO_FATAL_FAILURE(make_small_inputs(in));
  std::string const out = in.dir + "/frame.fits";
  std::string const extract = kspecter_exe + " " + extract_args(in.image, in.psf, out);
  auto const r = gpu ? run_command(extract + " --nwavestep 40000 --memory-budget 100000")
                     // (Patches of 4000 bins no longer fail: their pixel windows, which
                     // reached far beyond the CCD, are cut to it since issue 36; 40000 bins
                     // ask for 72 GiB of covariance blocks.)
                     : run_command("ulimit -v 3000000 && exec " + extract +
                                   " --nwavestep 40000 --memory-budget 100000");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("out of device memory even with one patch per batch"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("kspecter::extract::"), std::string::npos) << r.out;  // what did not fit
  EXPECT_EQ(r.out.find("Traceback"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_TRUE(temp_files(in.dir).empty());
}

}  // namespace
