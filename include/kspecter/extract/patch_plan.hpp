// The host-side plan of a frame extraction (docs/algorithm.md §3): bundles -> subbundles ->
// wavelength blocks -> patches, with their fiber and wavelength padding, and the grouping of
// bundles into device batches.
#pragma once

#include <kspecter/extract/options.hpp>

#include <cstddef>
#include <vector>

namespace kspecter::extract {

/// One patch: a subbundle x a block of nwavestep core bins, solved with its padding.
/// Fibers are PSF rows; wavelength indices are into the padded grid (PatchPlan::full_wave).
struct Patch {
  int bundle = 0;      // index into PatchPlan::bundles
  int fiber_pad0 = 0;  // first fiber of the padded patch (PSF row)
  int nfiber_pad = 0;  // fibers solved together: core + 1 neighbour per side inside the bundle
  int core_slot = 0;   // position of the first core fiber among the padded ones (0 or 1)
  int ncore = 0;       // core fibers (bundlesize / nsubbundles, fewer at a short bundle's end)
  int wave0 = 0;       // first padded bin (index into full_wave; nwave_pad bins follow), and
                       // also the first core bin of the output grid (core bins are padded
                       // bins wavepad .. wavepad + nkeep - 1, since full_wave starts wavepad
                       // bins below wave)
  int nkeep = 0;       // core bins written to the frame (nwavestep, fewer in the last block)
};

/// A contiguous run of bundles whose patches go through the device together, or, when one
/// bundle does not fit the memory budget, a contiguous run of that bundle's patches (a slice:
/// bundle_end = bundle_begin + 1, and the bundle's spots are made again for each slice).
struct Batch {
  int bundle_begin = 0, bundle_end = 0;  // [begin, end) into PatchPlan::bundles
  int patch_begin = 0, patch_end = 0;    // [begin, end) into PatchPlan::patches
  int fiber_begin = 0, fiber_end = 0;    // PSF rows whose spots the batch needs
  bool completes_bundles = true;         // false for a slice whose bundle goes on in the next batch
};

struct Bundle {
  int fiber_begin = 0,
      fiber_end = 0;  // PSF rows of the bundle (bundlesize, fewer at the PSF's end)
};

struct PatchPlan {
  int specmin = 0, nspec = 0;  // requested spectra (PSF rows)
  int nwave = 0;               // output bins
  int wavepad = 0;             // effective padding per side, bins
  int nwavestep = 0;
  int nwave_pad = 0;     // bins per padded patch: nwavestep + 2 wavepad
  int nfiber_slots = 0;  // fiber slots per patch matrix (largest nfiber_pad)
  int ncore_slots = 0;   // largest ncore
  int n = 0;             // unknowns per patch matrix: nfiber_slots * nwave_pad
  double dw = 0;
  std::vector<double> wave;       // [nwave] output grid
  std::vector<double> full_wave;  // [wavepad + nwave + wavepad + nwavestep] padded grid
  std::vector<Bundle> bundles;    // bundles holding requested fibers, in fiber order
  std::vector<Patch> patches;     // bundle-major, then subbundle, then wavelength block
  std::vector<Batch> batches;

  /// Index of the patch whose core holds (PSF row `fiber`, output bin `iwave`), or -1.
  int patch_of(int fiber, int iwave) const;
};

/// Device bytes one batch needs per bundle and per patch (spots, matrices, blocks, vectors),
/// used to size batches against ExtractOptions::memory_budget.
struct BatchFootprint {
  std::size_t per_bundle_fixed = 0;  // spots of the bundle's fibers over the padded grid
  std::size_t per_patch = 0;         // matrix, blocks, vectors, pixel buffers (estimated)
};

/// Builds the plan. `nfiber` = fibers of the PSF; spot_ny/spot_nx = spot size;
/// `max_bundles_per_batch` > 0 caps the bundles of a batch below what the budget allows (the
/// host backends take one: buffers reused bundle after bundle stay small and touched). Throws
/// ParameterError on invalid options, on patches too large to be plausible, and when the
/// memory budget cannot hold one patch and the spots of its bundle.
PatchPlan make_patch_plan(ExtractOptions const& opt, int nfiber, int spot_ny, int spot_nx,
                          int max_bundles_per_batch = 0);

/// The estimated footprint of the plan's batches (also used by make_patch_plan).
BatchFootprint batch_footprint(PatchPlan const& plan, int bundlesize, int spot_ny, int spot_nx);

/// The estimated device bytes of one batch of the plan (saturating: never wraps around).
std::size_t batch_bytes(Batch const& batch, BatchFootprint const& fp);

}  // namespace kspecter::extract
