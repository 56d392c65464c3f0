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
// They run after the last batch, while the device waits: the spectra's units, float32 rules
// and mask bits run batch by batch on the device instead (finish_spectra.hpp).
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

// BAD2DFIT's relative rule (FrameResult::mask): a bin whose chi2pix is over
// `bad2dfit_median_factor` times both its fiber's median and its wavelength's median over the
// frame. The other bits were set batch by batch on the device (finish_spectra.hpp).
void add_median_rule(FrameResult& res, ExtractOptions const& opt) {
  int const nspec = res.nspec, nwave = res.nwave;
  double const k = opt.bad2dfit_median_factor;
  std::vector<double> med_fiber(static_cast<std::size_t>(nspec));
  std::vector<double> med_wave(static_cast<std::size_t>(nwave));
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
  host_for("kspecter::extract::finalize_mask", nspec, [&](int s) {
    for (int w = 0; w < nwave; ++w) {
      std::size_t const i = std::size_t(s) * nwave + std::size_t(w);
      double const c2 = res.chi2pix[i];
      if (c2 > k * med_fiber[std::size_t(s)] && c2 > k * med_wave[std::size_t(w)])
        res.mask[i] |= specmask::BAD2DFIT;
    }
  });
}

}  // namespace

void finalize_frame(FrameResult& res, ExtractOptions const& opt) {
  clamp_model_to_float32(res);
  if (opt.bad2dfit_median_factor > 0) add_median_rule(res, opt);
}

}  // namespace kspecter::extract::detail
