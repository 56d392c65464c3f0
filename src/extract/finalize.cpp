#include "host_steps.hpp"

#include <kspecter/extract/mask_bits.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <vector>

namespace kspecter::extract::detail {

namespace {

// The finishing steps run on the host's threads, one fiber (or one bin) per iteration: each
// iteration writes only its own elements, so the frame is the same bytes as a serial loop.
// A full frame's mask bits read ~1.2 M bins x 4 numbers (and the medians, when asked for)
// after the last batch, while the device waits. The spectra's units and float32 rules run
// batch by batch on the device instead (finish_spectra.hpp).
template <class F>
void host_for(char const* label, int n, F const& f) {
  Kokkos::parallel_for(label, Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, n), f);
  Kokkos::DefaultHostExecutionSpace().fence();
}

// Median of the values (BAD2DFIT's relative rule).
double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<long>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  double hi = *mid;
  if (v.size() % 2 == 1) return hi;
  double lo = *std::max_element(v.begin(), mid);
  return 0.5 * (lo + hi);
}

// Frames are float32: in the model image NaN becomes 0 and overflow +-FLT_MAX. (The spectra
// met the same rules batch by batch: finish_spectra.hpp.)
void clamp_model_to_float32(FrameResult& res) {
  auto fits = [](double v) { return std::isfinite(v) && std::fabs(v) <= double(FLT_MAX); };
  auto clamp = [&](double& v) {
    if (!fits(v)) v = std::isnan(v) ? 0.0 : std::copysign(double(FLT_MAX), v);
  };
  int const nrow = res.model_ny, ncol = res.model_nx;
  if (!res.model.empty() && std::size_t(nrow) * std::size_t(ncol) == res.model.size())
    host_for("kspecter::extract::finalize_model", nrow, [&](int y) {
      double* row = res.model.data() + std::size_t(y) * std::size_t(ncol);
      for (int x = 0; x < ncol; ++x) clamp(row[x]);
    });
  else
    for (auto& v : res.model) clamp(v);
}

// The specmask bits of every bin (mask_bits.hpp; FrameResult::mask says which rule sets
// which bit).
void set_mask_bits(FrameResult& res, int const* failed, ExtractOptions const& opt) {
  int const nspec = res.nspec, nwave = res.nwave;
  res.mask.assign(std::size_t(nspec) * std::size_t(nwave), 0u);
  std::vector<double> med_fiber, med_wave;
  if (opt.bad2dfit_median_factor > 0) {
    med_fiber.resize(std::size_t(nspec));
    med_wave.resize(std::size_t(nwave));
    host_for("kspecter::extract::finalize_fiber_medians", nspec, [&](int s) {
      med_fiber[std::size_t(s)] = median_of(std::vector<double>(
          res.chi2pix.begin() + long(s) * nwave, res.chi2pix.begin() + long(s + 1) * nwave));
    });
    // Per bin, in blocks of 64 bins so that each fiber's row is read in cache lines.
    constexpr int wb = 64;
    host_for("kspecter::extract::finalize_bin_medians", (nwave + wb - 1) / wb, [&](int b) {
      int const w0 = b * wb, w1 = std::min(nwave, w0 + wb);
      std::vector<double> col(std::size_t(nspec) * std::size_t(w1 - w0));
      for (int s = 0; s < nspec; ++s)
        for (int w = w0; w < w1; ++w)
          col[std::size_t(w - w0) * nspec + std::size_t(s)] =
              res.chi2pix[std::size_t(s) * nwave + std::size_t(w)];
      for (int w = w0; w < w1; ++w) {
        auto const first = col.begin() + long(w - w0) * nspec;
        med_wave[std::size_t(w)] = median_of(std::vector<double>(first, first + nspec));
      }
    });
  }
  host_for("kspecter::extract::finalize_mask", nspec, [&](int s) {
    for (int w = 0; w < nwave; ++w) {
      std::size_t const i = std::size_t(s) * nwave + std::size_t(w);
      std::uint32_t mk = 0;
      double const pm = res.pixmask_fraction[i], c2 = res.chi2pix[i];
      if (res.ivar[i] == 0) mk |= specmask::SOMEBADPIX;
      if (pm > 0.5) mk |= specmask::SOMEBADPIX;
      if (pm >= 1.0 - 1e-12) mk |= specmask::ALLBADPIX;
      if (opt.bad2dfit_chi2 > 0 && c2 > opt.bad2dfit_chi2) mk |= specmask::BAD2DFIT;
      if (opt.bad2dfit_median_factor > 0 &&
          c2 > opt.bad2dfit_median_factor * med_fiber[std::size_t(s)] &&
          c2 > opt.bad2dfit_median_factor * med_wave[std::size_t(w)])
        mk |= specmask::BAD2DFIT;
      if (failed[i]) mk |= specmask::BAD2DFIT;  // a failed patch, or beyond float32
      res.mask[i] = mk;
    }
  });
}

}  // namespace

void finalize_frame(FrameResult& res, int const* failed, ExtractOptions const& opt) {
  clamp_model_to_float32(res);
  set_mask_bits(res, failed, opt);
}

}  // namespace kspecter::extract::detail
