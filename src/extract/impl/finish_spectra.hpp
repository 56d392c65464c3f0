// Stage "finish" (docs/algorithm.md §6): the units and float32 rules of the spectra of the
// bundles a batch completes, on the device, before their copy to the host. What needs every
// spectrum (the medians of BAD2DFIT, the mask bits) and the model image stay in the stitch.
#pragma once

#include "context.hpp"
#include "workspace.hpp"

#include <cfloat>

namespace kspecter::extract::detail {

// One bin of spectra [s0, s0 + n): flux /= dw, deconvolved flux /= dw, ivar *= dw², then a bin
// whose flux, ivar, deconvolved flux or any resolution diagonal is not finite or beyond
// FLT_MAX is zeroed with an identity resolution and flagged; chi2pix is capped at FLT_MAX.
template <class ExecSpace>
struct FinishSpectra {
  using T = Types<ExecSpace>;
  typename T::Out2 flux, ivar, deconv, chi2;
  typename T::Out3 rdiag;
  Kokkos::View<int**, Kokkos::LayoutRight, typename ExecSpace::memory_space> failed;
  double dw;
  int s0, nwave, ndiag;

  KOKKOS_INLINE_FUNCTION static bool fits(double v) {
    return compat::isfinite(v) && compat::fabs(v) <= double(FLT_MAX);
  }

  KOKKOS_INLINE_FUNCTION void operator()(long i) const {
    int const s = s0 + int(i / nwave), w = int(i % nwave);
    double const f = flux(s, w) / dw, d = deconv(s, w) / dw, iv = ivar(s, w) * (dw * dw);
    bool bad = !(fits(f) && fits(iv) && fits(d));
    for (int k = 0; k <= 2 * ndiag; ++k) bad = bad || !fits(rdiag(s, k, w));
    flux(s, w) = bad ? 0.0 : f;
    ivar(s, w) = bad ? 0.0 : iv;
    deconv(s, w) = bad ? 0.0 : d;
    if (bad) {
      for (int k = 0; k <= 2 * ndiag; ++k) rdiag(s, k, w) = k == ndiag ? 1.0 : 0.0;
      failed(s, w) |= kFailedFloat32;
    }
    if (!(chi2(s, w) <= double(FLT_MAX))) chi2(s, w) = double(FLT_MAX);
  }
};

/// Finishes spectra [*done, s1) (s1 capped at the frame's) and moves *done to s1.
template <class ExecSpace>
void finish_spectra(FrameContext<ExecSpace> const& fc, Workspace<ExecSpace> const& ws, int* done,
                    int s1) {
  s1 = s1 < fc.shape.nspec ? s1 : fc.shape.nspec;
  if (s1 <= *done) return;
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::finish", fc.times);
  int const nwave = fc.shape.nwave;
  Kokkos::parallel_for(
      "kspecter::extract::finish_spectra",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long>>(fc.space, 0,
                                                              long(s1 - *done) * nwave),
      FinishSpectra<ExecSpace>{ws.flux, ws.ivar, ws.deconv, ws.chi2, ws.rdiag, ws.failed,
                               fc.plan.dw, *done, nwave, fc.shape.ndiag});
  *done = s1;
}

}  // namespace kspecter::extract::detail
