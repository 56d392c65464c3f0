// Which rank extracts which bundles of a frame: contiguous runs of whole bundles, so that
// rank order is spectrum order and the gathered frame is the single-rank frame.
#pragma once

#include <vector>

namespace kspecter::parallel {

struct SpectrumRange {
  int specmin = 0;  // first spectrum of this rank
  int nspec = 0;    // 0: this rank has no bundle
};

/// Deals the bundles of [specmin, specmin + nspec) (bundles of `bundlesize` spectra aligned on
/// multiples of bundlesize; the last may be partial) to `nranks` ranks: each rank gets a
/// contiguous run, the runs differ in length by at most one bundle, earlier ranks first.
std::vector<SpectrumRange> assign_bundles(int specmin, int nspec, int bundlesize, int nranks);

}  // namespace kspecter::parallel
