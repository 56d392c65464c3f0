#include <kspecter/core/byte_size.hpp>

#include <kspecter/core/error.hpp>
#include <kspecter/core/wavelength_grid.hpp>
#include <kspecter/extract/patch_plan.hpp>

#include <algorithm>
#include <limits>
#include <string>

namespace kspecter::extract {

namespace {

// Byte counts that saturate instead of wrapping: absurd options must compare as too big.
std::size_t sat_mul(std::size_t a, std::size_t b) {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a)
    return std::numeric_limits<std::size_t>::max();
  return a * b;
}
std::size_t sat_add(std::size_t a, std::size_t b) {
  return b > std::numeric_limits<std::size_t>::max() - a ? std::numeric_limits<std::size_t>::max()
                                                         : a + b;
}

// Patches hold n = fiber slots x padded bins unknowns and an n x n matrix: beyond this the
// options are a typo (a DESI patch has 518), and the int indices of the kernels would wrap.
constexpr long long max_unknowns = 1000000;

}  // namespace

int PatchPlan::patch_of(int fiber, int iwave) const {
  for (std::size_t i = 0; i < patches.size(); ++i) {
    Patch const& p = patches[i];
    int const c0 = p.fiber_pad0 + p.core_slot;
    if (fiber >= c0 && fiber < c0 + p.ncore && iwave >= p.wave0 && iwave < p.wave0 + p.nkeep)
      return static_cast<int>(i);
  }
  return -1;
}

BatchFootprint batch_footprint(PatchPlan const& plan, int bundlesize, int spot_ny, int spot_nx) {
  std::size_t const d = sizeof(double);
  std::size_t const n = static_cast<std::size_t>(plan.n);
  std::size_t const m = static_cast<std::size_t>(plan.nwave_pad);
  std::size_t const slots = static_cast<std::size_t>(plan.nfiber_slots);
  std::size_t const spot = static_cast<std::size_t>(spot_ny) * static_cast<std::size_t>(spot_nx);
  BatchFootprint f;
  // Spots (values, corners) of a bundle's fibers over the padded grid (a bundle never holds
  // more fibers than the PSF, whatever bundlesize says).
  int fibers = 0;
  for (auto const& b : plan.bundles) fibers = std::max(fibers, b.fiber_end - b.fiber_begin);
  if (plan.bundles.empty()) fibers = bundlesize;
  f.per_bundle_fixed =
      sat_mul(static_cast<std::size_t>(fibers) * plan.full_wave.size(), spot * d + 2 * sizeof(int));
  // Patch matrix, right-hand side / solution, fluxweight, diagonal blocks of the covariance,
  // the core blocks' inverse square roots, and the quality pixel buffers. The pixel window is
  // not known before the spots are: assume up to 2 rows per bin plus a spot, and a spot plus
  // 10 columns per fiber (DESI r: ~1.8 rows per bin, ~7.5 columns per fiber).
  std::size_t const win_rows = 2 * m + static_cast<std::size_t>(spot_ny);
  std::size_t const win_cols = 10 * slots + static_cast<std::size_t>(spot_nx);
  f.per_patch = n * n * d + 2 * n * d + slots * m * m * d +
                static_cast<std::size_t>(plan.ncore_slots) * m * m * d + win_rows * win_cols * d +
                slots * win_rows * 2 * sizeof(int) + 256;
  return f;
}

std::size_t batch_bytes(Batch const& batch, BatchFootprint const& fp) {
  std::size_t const bundles = static_cast<std::size_t>(batch.bundle_end - batch.bundle_begin);
  std::size_t const patches = static_cast<std::size_t>(batch.patch_end - batch.patch_begin);
  return sat_add(sat_mul(bundles, fp.per_bundle_fixed), sat_mul(patches, fp.per_patch));
}

PatchPlan make_patch_plan(ExtractOptions const& opt, int nfiber, int spot_ny, int spot_nx,
                          int max_bundles_per_batch) {
  opt.validate(nfiber);
  PatchPlan plan;
  plan.specmin = opt.specmin;
  plan.nspec = opt.resolved_nspec(nfiber);
  plan.wave = opt.wavelengths();
  plan.nwave = static_cast<int>(plan.wave.size());
  if (plan.nwave < 1) throw ParameterError("extract: empty wavelength grid");
  plan.dw = opt.dw;
  plan.wavepad = opt.effective_wavepad();
  plan.nwavestep = opt.nwavestep;
  plan.nwave_pad = opt.nwavestep + 2 * plan.wavepad;

  // Padded grid: wavepad bins below, the grid, wavepad + nwavestep above, so that every
  // block (the last one too) has a full padded window. It extends the output grid with its
  // own step, so that its inner bins are the output grid's values.
  double const step = wavelength_grid_step(opt.wmin, opt.dw);
  int const nfull = plan.wavepad + plan.nwave + plan.wavepad + plan.nwavestep;
  plan.full_wave.resize(static_cast<std::size_t>(nfull));
  for (int i = 0; i < nfull; ++i)
    plan.full_wave[static_cast<std::size_t>(i)] =
        opt.wmin + static_cast<double>(i - plan.wavepad) * step;

  int const bs = opt.bundlesize;
  int const nspp = opt.bundlesize / opt.nsubbundles;  // gpu_specter: bundlesize // nsubbundles
  int const spec_end = plan.specmin + plan.nspec;
  int const nblock = (plan.nwave + opt.nwavestep - 1) / opt.nwavestep;

  // Bundles are counted from the PSF's fiber 0, so a fiber's result does not depend on
  // which range of spectra is requested (gpu_specter counts them from specmin: the same
  // when specmin is a multiple of bundlesize, as in DESI production).
  for (int b0 = (plan.specmin / bs) * bs; b0 < spec_end; b0 += bs) {
    int const b1 = std::min(b0 + bs, nfiber);
    int const ib = static_cast<int>(plan.bundles.size());
    plan.bundles.push_back({b0, b1});
    for (int s = b0; s < b1; s += nspp) {
      int const ncore = std::min(nspp, b1 - s);
      if (s + ncore <= plan.specmin || s >= spec_end) continue;  // nothing requested here
      // One neighbour on each side, inside the bundle only (gpu_specter get_spec_padding).
      bool const lo = s > b0;
      bool const hi = s + ncore < b1;
      for (int blk = 0; blk < nblock; ++blk) {
        Patch p;
        p.bundle = ib;
        p.fiber_pad0 = lo ? s - 1 : s;
        p.nfiber_pad = ncore + (lo ? 1 : 0) + (hi ? 1 : 0);
        p.core_slot = lo ? 1 : 0;
        p.ncore = ncore;
        p.wave0 = blk * opt.nwavestep;
        p.nkeep = std::min(opt.nwavestep, plan.nwave - p.wave0);
        plan.patches.push_back(p);
        plan.nfiber_slots = std::max(plan.nfiber_slots, p.nfiber_pad);
        plan.ncore_slots = std::max(plan.ncore_slots, p.ncore);
      }
    }
  }
  long long const unknowns = static_cast<long long>(plan.nfiber_slots) * plan.nwave_pad;
  if (unknowns > max_unknowns)
    throw ParameterError(
        "extract: a patch would solve " + std::to_string(unknowns) + " unknowns (" +
        std::to_string(plan.nfiber_slots) + " fibers x " + std::to_string(plan.nwave_pad) +
        " bins: nwavestep + 2 x padding); at most " + std::to_string(max_unknowns) +
        " are supported: lower nwavestep, wavepad or the fibers per subbundle");
  plan.n = static_cast<int>(unknowns);

  // Batches: consecutive bundles while the estimated footprint fits the budget; a bundle too
  // big alone is cut into slices of as many of its patches as fit (each slice makes the
  // bundle's spots again). Patches are independent, so the slicing does not change a number.
  BatchFootprint const fp = batch_footprint(plan, bs, spot_ny, spot_nx);
  std::size_t const one_patch = sat_add(fp.per_bundle_fixed, fp.per_patch);
  if (one_patch > opt.memory_budget)
    throw ParameterError("extract: the memory budget of " + byte_size(opt.memory_budget) +
                         " cannot hold one patch: the spots of its bundle take " +
                         byte_size(fp.per_bundle_fixed) + " and the patch " +
                         byte_size(fp.per_patch) + " (" + byte_size(one_patch) +
                         " in all); raise the memory budget (--memory-budget) or make patches "
                         "smaller (nwavestep, wavepad)");
  int const nb = static_cast<int>(plan.bundles.size());
  std::vector<int> first_patch(static_cast<std::size_t>(nb + 1),
                               static_cast<int>(plan.patches.size()));
  for (int i = static_cast<int>(plan.patches.size()) - 1; i >= 0; --i)
    first_patch[static_cast<std::size_t>(plan.patches[static_cast<std::size_t>(i)].bundle)] = i;
  for (int b = nb - 1; b >= 0; --b)
    first_patch[static_cast<std::size_t>(b)] = std::min(
        first_patch[static_cast<std::size_t>(b)], first_patch[static_cast<std::size_t>(b + 1)]);
  auto bundle_bytes = [&](int b) {
    std::size_t const np = static_cast<std::size_t>(first_patch[static_cast<std::size_t>(b + 1)] -
                                                    first_patch[static_cast<std::size_t>(b)]);
    return sat_add(fp.per_bundle_fixed, sat_mul(np, fp.per_patch));
  };
  int b = 0;
  while (b < nb) {
    Batch batch;
    batch.bundle_begin = b;
    batch.fiber_begin = plan.bundles[static_cast<std::size_t>(b)].fiber_begin;
    if (bundle_bytes(b) > opt.memory_budget) {
      std::size_t const per_slice =
          (opt.memory_budget - fp.per_bundle_fixed) / fp.per_patch;  // >= 1
      int const p1 = first_patch[static_cast<std::size_t>(b + 1)];
      batch.bundle_end = b + 1;
      batch.fiber_end = plan.bundles[static_cast<std::size_t>(b)].fiber_end;
      for (int p = first_patch[static_cast<std::size_t>(b)]; p < p1;) {
        batch.patch_begin = p;
        batch.patch_end =
            static_cast<int>(std::min<std::size_t>(std::size_t(p1), std::size_t(p) + per_slice));
        batch.completes_bundles = batch.patch_end == p1;
        plan.batches.push_back(batch);
        p = batch.patch_end;
      }
      ++b;
      continue;
    }
    std::size_t bytes = 0;
    int e = b;
    int const e_max = max_bundles_per_batch > 0 ? std::min(nb, b + max_bundles_per_batch) : nb;
    while (e < e_max && bundle_bytes(e) <= opt.memory_budget - bytes) bytes += bundle_bytes(e++);
    batch.bundle_end = e;
    batch.patch_begin = first_patch[static_cast<std::size_t>(b)];
    batch.patch_end = first_patch[static_cast<std::size_t>(e)];
    batch.fiber_end = plan.bundles[static_cast<std::size_t>(e - 1)].fiber_end;
    plan.batches.push_back(batch);
    b = e;
  }
  return plan;
}

}  // namespace kspecter::extract
