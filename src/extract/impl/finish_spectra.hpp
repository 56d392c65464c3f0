// Stage "finish" (docs/algorithm.md §6): the units, float32 rules and mask bits of the spectra
// of the bundles a batch completes, on the device, before their copy to the host. What needs
// every spectrum (the medians of BAD2DFIT's relative rule) and the model image stay in the
// stitch.
#pragma once

#include "context.hpp"
#include "workspace.hpp"

#include <kspecter/extract/mask_bits.hpp>

#include <cfloat>
#include <cstdint>

namespace kspecter::extract::detail {

// One bin of spectra [s0, s0 + n): flux /= dw, deconvolved flux /= dw, ivar *= dw², then a bin
// whose flux, ivar, deconvolved flux or any resolution diagonal is not finite or beyond
// FLT_MAX is zeroed with an identity resolution and flagged; chi2pix is capped at FLT_MAX.
// Then the bin's specmask bits from its final numbers (FrameResult::mask), but for the
// median rule of BAD2DFIT, which the stitch adds.
template <class ExecSpace>
struct FinishSpectra {
  using T = Types<ExecSpace>;
  using mem = typename ExecSpace::memory_space;
  typename T::Out2 flux, ivar, deconv, chi2, pixmask;
  typename T::Out3 rdiag;
  Kokkos::View<int**, Kokkos::LayoutRight, mem> failed;
  Kokkos::View<std::uint32_t**, Kokkos::LayoutRight, mem> mask;
  double dw, bad2dfit_chi2;
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
    double const c2 = chi2(s, w) <= double(FLT_MAX) ? chi2(s, w) : double(FLT_MAX);
    chi2(s, w) = c2;
    mask(s, w) = bits(bad ? 0.0 : iv, pixmask(s, w), c2, failed(s, w) != 0);
  }

  KOKKOS_INLINE_FUNCTION std::uint32_t bits(double iv, double pm, double c2, bool bad) const {
    std::uint32_t mk = 0;
    if (iv == 0) mk |= specmask::SOMEBADPIX;
    if (pm > 0.5) mk |= specmask::SOMEBADPIX;
    if (pm >= 1.0 - 1e-12) mk |= specmask::ALLBADPIX;
    if (bad2dfit_chi2 > 0 && c2 > bad2dfit_chi2) mk |= specmask::BAD2DFIT;
    if (bad) mk |= specmask::BAD2DFIT;  // a failed patch, or beyond float32
    return mk;
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
      FinishSpectra<ExecSpace>{ws.flux, ws.ivar, ws.deconv, ws.chi2, ws.pixmask, ws.rdiag,
                               ws.failed, ws.mask, fc.plan.dw, fc.opt.bad2dfit_chi2, *done, nwave,
                               fc.shape.ndiag});
  *done = s1;
}

}  // namespace kspecter::extract::detail
