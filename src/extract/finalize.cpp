#include "host_steps.hpp"

#include <kspecter/extract/bad2dfit.hpp>
#include <kspecter/extract/frame.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>

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

// Frames are float32: in the model image NaN becomes 0 and overflow +-FLT_MAX. (The spectra
// met the same rules batch by batch: finish_spectra.hpp.) Only columns [model_x0, model_x1)
// can hold such a value: the model is zero outside them.
void clamp_model_to_float32(FrameResult& res) {
  auto fits = [](double v) { return std::isfinite(v) && std::fabs(v) <= double(FLT_MAX); };
  auto clamp = [&](double& v) {
    if (!fits(v)) v = std::isnan(v) ? 0.0 : std::copysign(double(FLT_MAX), v);
  };
  int const nrow = res.model_ny, ncol = res.model_nx;
  int const x0 = std::max(res.model_x0, 0), x1 = std::min(res.model_x1, ncol);
  if (!res.model.empty() && std::size_t(nrow) * std::size_t(ncol) == res.model.size())
    host_for("kspecter::extract::finalize_model", nrow, [&](int y) {
      double* row = res.model.data() + std::size_t(y) * std::size_t(ncol);
      for (int x = x0; x < x1; ++x) clamp(row[x]);
    });
  else
    for (auto& v : res.model) clamp(v);
}

}  // namespace

void finalize_frame(FrameResult& res, ExtractOptions const& opt) {
  clamp_model_to_float32(res);
  // desispec's relative BAD2DFIT rule over this frame, when asked for (the job applies it to
  // each gathered frame instead: a rank's share has other medians).
  if (opt.bad2dfit_median_factor > 0) apply_bad2dfit(res, opt.bad2dfit_median_factor);
}

}  // namespace kspecter::extract::detail
