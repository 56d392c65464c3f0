// The host-side patch plan follows gpu_specter's layout (docs/algorithm.md §3): padding of
// fibers inside bundles only, wavelength padding and the padded grid, core coverage of every
// requested (fiber, bin) exactly once, and batches within the memory budget.
#include <kspecter/core/error.hpp>
#include <kspecter/extract/patch_plan.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace kspecter;
using namespace kspecter::extract;

namespace {

ExtractOptions desi_r() {
  ExtractOptions o;
  o.wmin = 5760;
  o.wmax = 7620;
  o.dw = 0.8;
  return o;
}

TEST(extract_plan, wavelength_grid_is_numpy_arange) {
  auto o = desi_r();
  auto const w = o.wavelengths();
  ASSERT_EQ(w.size(), 2326u);  // DESI r
  EXPECT_DOUBLE_EQ(w.front(), 5760.0);
  EXPECT_NEAR(w.back(), 7620.0, 1e-9);
  // numpy's values, not wmin + i dw: arange stores start and start + step, then fills
  // start + i (second - start). At 5760 that step is not 0.8, and the grids differ in their
  // last bits (desispec compares grids with ==).
  double const second = 5760.0 + 0.8;
  double const numpy_step = second - 5760.0;
  ASSERT_NE(numpy_step, 0.8);
  EXPECT_EQ(w[1], second);
  for (std::size_t i = 0; i < w.size(); ++i)
    ASSERT_EQ(w[i], 5760.0 + static_cast<double>(i) * numpy_step) << "bin " << i;
  o.wmin = 3600;
  o.wmax = 5800;
  EXPECT_EQ(o.wavelengths().size(), 2751u);  // DESI b
  o.wmin = 7520;
  o.wmax = 9824;
  EXPECT_EQ(o.wavelengths().size(), 2881u);  // DESI z
}

TEST(extract_plan, desi_defaults) {
  auto const o = desi_r();
  EXPECT_EQ(o.effective_wavepad(), 12);
  PatchPlan const p = make_patch_plan(o, 500, 11, 17);
  EXPECT_EQ(p.nwave, 2326);
  EXPECT_EQ(p.wavepad, 12);
  EXPECT_EQ(p.nwave_pad, 74);
  EXPECT_EQ(p.nfiber_slots, 7);
  EXPECT_EQ(p.ncore_slots, 5);
  EXPECT_EQ(p.n, 518);
  EXPECT_EQ(p.bundles.size(), 20u);
  EXPECT_EQ(p.patches.size(), 20u * 5u * 47u);  // 4700 patches per r frame
  ASSERT_EQ(p.full_wave.size(), std::size_t(12 + 2326 + 12 + 50));
  EXPECT_NEAR(p.full_wave[0], 5760 - 12 * 0.8, 1e-9);
  for (int i = 0; i < p.nwave; ++i)  // the padded grid's inner bins are the output grid
    ASSERT_EQ(p.full_wave[static_cast<std::size_t>(i + p.wavepad)],
              p.wave[static_cast<std::size_t>(i)]);
  EXPECT_NEAR(p.full_wave[12], 5760, 1e-12);
  for (std::size_t i = 1; i < p.full_wave.size(); ++i)
    EXPECT_NEAR(p.full_wave[i] - p.full_wave[i - 1], 0.8, 1e-9);
  // First bundle: subbundle 0 has no lower neighbour, 4 no upper one.
  auto const& a = p.patches[0];
  EXPECT_EQ(a.fiber_pad0, 0);
  EXPECT_EQ(a.nfiber_pad, 6);
  EXPECT_EQ(a.core_slot, 0);
  auto const& b = p.patches[47];  // subbundle 1 of bundle 0
  EXPECT_EQ(b.fiber_pad0, 4);
  EXPECT_EQ(b.nfiber_pad, 7);
  EXPECT_EQ(b.core_slot, 1);
  auto const& c = p.patches[4 * 47];  // subbundle 4
  EXPECT_EQ(c.fiber_pad0, 19);
  EXPECT_EQ(c.nfiber_pad, 6);
  auto const& last = p.patches[46];
  EXPECT_EQ(last.wave0, 46 * 50);
  EXPECT_EQ(last.nkeep, 2326 - 46 * 50);
}

TEST(extract_plan, every_requested_bin_in_exactly_one_core) {
  auto o = desi_r();
  o.wmax = 5760 + 0.8 * 200;
  o.specmin = 7;
  o.nspec = 31;  // crosses a bundle edge, starts mid-subbundle
  for (int nsub : {1, 5, 25, 3}) {
    o.nsubbundles = nsub;
    PatchPlan const p = make_patch_plan(o, 500, 11, 17);
    std::vector<int> hits(std::size_t(o.nspec) * p.nwave, 0);
    for (auto const& pa : p.patches) {
      for (int c = 0; c < pa.ncore; ++c) {
        int const f = pa.fiber_pad0 + pa.core_slot + c - o.specmin;
        if (f < 0 || f >= o.nspec) continue;
        for (int w = 0; w < pa.nkeep; ++w)
          ++hits[std::size_t(f) * p.nwave + std::size_t(pa.wave0 + w)];
      }
      // Padding stays inside the bundle.
      int const b0 = (pa.fiber_pad0 / 25) * 25;
      EXPECT_GE(pa.fiber_pad0, b0);
      EXPECT_LE(pa.fiber_pad0 + pa.nfiber_pad, b0 + 25);
      EXPECT_LE(pa.nfiber_pad, p.nfiber_slots);
    }
    for (int h : hits) ASSERT_EQ(h, 1) << "nsubbundles " << nsub;
    EXPECT_EQ(p.patch_of(o.specmin, 0), 0);
  }
}

TEST(extract_plan, batches_respect_the_budget) {
  auto o = desi_r();
  PatchPlan const big = make_patch_plan(o, 500, 11, 17);
  EXPECT_GE(big.batches.size(), 2u);  // 4 GiB does not hold a whole r frame
  BatchFootprint const fp = batch_footprint(big, o.bundlesize, 11, 17);
  for (auto const& b : big.batches) EXPECT_LE(batch_bytes(b, fp), o.memory_budget);
  o.memory_budget = fp.per_bundle_fixed + 235 * fp.per_patch;  // one bundle per batch
  PatchPlan const p = make_patch_plan(o, 500, 11, 17);
  ASSERT_EQ(p.batches.size(), 20u);
  int patches = 0;
  for (auto const& b : p.batches) {
    EXPECT_EQ(b.bundle_end - b.bundle_begin, 1);
    EXPECT_EQ(b.fiber_end - b.fiber_begin, 25);
    EXPECT_TRUE(b.completes_bundles);
    patches += b.patch_end - b.patch_begin;
  }
  EXPECT_EQ(patches, 4700);
  o.memory_budget = std::size_t(1) << 40;
  EXPECT_EQ(make_patch_plan(o, 500, 11, 17).batches.size(), 1u);
  // The host's cap: one bundle per batch whatever the budget, the same patches in order.
  PatchPlan const one = make_patch_plan(o, 500, 11, 17, 1);
  ASSERT_EQ(one.batches.size(), 20u);
  for (std::size_t i = 0; i < one.batches.size(); ++i) {
    EXPECT_EQ(one.batches[i].bundle_begin, int(i));
    EXPECT_EQ(one.batches[i].bundle_end, int(i) + 1);
    EXPECT_EQ(one.batches[i].patch_begin, p.batches[i].patch_begin);
    EXPECT_EQ(one.batches[i].patch_end, p.batches[i].patch_end);
  }
  EXPECT_EQ(make_patch_plan(o, 500, 11, 17, 3).batches.size(), 7u);  // 3 x 6 + 2
}

// Below one bundle, a bundle is cut into slices of the patches that fit, in order; below one
// patch (with its bundle's spots) the budget is refused.
TEST(extract_plan, bundles_too_big_for_the_budget_are_sliced) {
  auto o = desi_r();
  BatchFootprint const fp = batch_footprint(make_patch_plan(o, 500, 11, 17), o.bundlesize, 11, 17);
  o.memory_budget = fp.per_bundle_fixed + 100 * fp.per_patch;
  PatchPlan const p = make_patch_plan(o, 500, 11, 17);
  ASSERT_EQ(p.batches.size(), 60u);  // 235 patches per bundle: 100 + 100 + 35
  int next = 0;
  for (std::size_t i = 0; i < p.batches.size(); ++i) {
    Batch const& b = p.batches[i];
    EXPECT_EQ(b.patch_begin, next);
    EXPECT_EQ(b.bundle_end, b.bundle_begin + 1);
    EXPECT_EQ(b.patch_end - b.patch_begin, i % 3 == 2 ? 35 : 100);
    EXPECT_EQ(b.completes_bundles, i % 3 == 2);
    EXPECT_LE(batch_bytes(b, fp), o.memory_budget);
    next = b.patch_end;
  }
  EXPECT_EQ(next, 4700);
  o.memory_budget = fp.per_bundle_fixed + fp.per_patch - 1;
  EXPECT_THROW(make_patch_plan(o, 500, 11, 17), ParameterError);
}

TEST(extract_plan, invalid_options_throw) {
  auto o = desi_r();
  o.nsubbundles = 26;
  EXPECT_THROW(make_patch_plan(o, 500, 11, 17), ParameterError);
  o = desi_r();
  o.specmin = 490;
  o.nspec = 20;
  EXPECT_THROW(make_patch_plan(o, 500, 11, 17), ParameterError);
  o = desi_r();
  o.dw = 0;
  EXPECT_THROW(make_patch_plan(o, 500, 11, 17), ParameterError);
  o = desi_r();
  o.pixpad_frac = 1.5;
  EXPECT_THROW(make_patch_plan(o, 500, 11, 17), ParameterError);
}

}  // namespace
