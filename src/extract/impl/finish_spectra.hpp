// Stage "finish" (docs/algorithm.md §6): the units, float32 rules and mask bits of the spectra
// of the bundles a batch completes, on the device, before their copy to the host: the
// solution's numbers (flux, ivar, deconvolved flux, resolution) once the decorrelation has
// made them, so that the last batch's copy of them runs beside its quality stage; chi2pix and
// the mask bits after the quality stage. What needs every spectrum (the medians of BAD2DFIT's
// relative rule) and the model image stay in the stitch.
#pragma once

#include "context.hpp"
#include "workspace.hpp"

#include <kspecter/extract/mask_bits.hpp>

#include <cfloat>
#include <cstdint>

namespace kspecter::extract::detail {

// One bin of spectra [s0, s0 + n): flux /= dw, deconvolved flux /= dw, ivar *= dw², then a bin
// whose flux, ivar, deconvolved flux or any resolution diagonal is not finite or beyond
// FLT_MAX is zeroed with an identity resolution and flagged.
template <class ExecSpace>
struct FinishSolution {
  using T = Types<ExecSpace>;
  typename T::Out2 flux, ivar, deconv;
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
  }
};

// One bin of spectra [s0, s0 + n) whose solution is finished: chi2pix capped at FLT_MAX, then
// the bin's specmask bits (FrameResult::mask) but for BAD2DFIT's median rule.
template <class ExecSpace>
struct FinishQuality {
  using T = Types<ExecSpace>;
  using mem = typename ExecSpace::memory_space;
  typename T::Out2 ivar, chi2, pixmask;
  Kokkos::View<const int**, Kokkos::LayoutRight, mem> failed;
  Kokkos::View<std::uint32_t**, Kokkos::LayoutRight, mem> mask;
  double bad2dfit_chi2;
  int s0, nwave;

  KOKKOS_INLINE_FUNCTION void operator()(long i) const {
    int const s = s0 + int(i / nwave), w = int(i % nwave);
    double const c2 = chi2(s, w) <= double(FLT_MAX) ? chi2(s, w) : double(FLT_MAX);
    chi2(s, w) = c2;
    double const pm = pixmask(s, w);
    std::uint32_t mk = 0;
    if (ivar(s, w) == 0) mk |= specmask::SOMEBADPIX;
    if (pm > 0.5) mk |= specmask::SOMEBADPIX;
    if (pm >= 1.0 - 1e-12) mk |= specmask::ALLBADPIX;
    if (bad2dfit_chi2 > 0 && c2 > bad2dfit_chi2) mk |= specmask::BAD2DFIT;
    if (failed(s, w) != 0) mk |= specmask::BAD2DFIT;  // a failed patch, or beyond float32
    mask(s, w) = mk;
  }
};

/// How far the spectra of a frame are finished: [0, solution) have their solution's numbers
/// final, [0, quality) their chi2pix and mask bits too.
struct Finished {
  int solution = 0, quality = 0;
};

/// Finishes the solution of spectra [done->solution, s1) (s1 capped at the frame's).
template <class ExecSpace>
void finish_solution(FrameContext<ExecSpace> const& fc, Workspace<ExecSpace> const& ws,
                     Finished* done, int s1) {
  s1 = s1 < fc.shape.nspec ? s1 : fc.shape.nspec;
  if (s1 <= done->solution) return;
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::finish", fc.times);
  int const nwave = fc.shape.nwave;
  Kokkos::parallel_for(
      "kspecter::extract::finish_solution",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long>>(fc.space, 0,
                                                              long(s1 - done->solution) * nwave),
      FinishSolution<ExecSpace>{ws.flux, ws.ivar, ws.deconv, ws.rdiag, ws.failed, fc.plan.dw,
                                done->solution, nwave, fc.shape.ndiag});
  done->solution = s1;
}

/// Finishes the chi2pix and mask bits of spectra [done->quality, s1), whose solution is
/// finished (s1 capped at done->solution).
template <class ExecSpace>
void finish_quality(FrameContext<ExecSpace> const& fc, Workspace<ExecSpace> const& ws,
                    Finished* done, int s1) {
  s1 = s1 < done->solution ? s1 : done->solution;
  if (s1 <= done->quality) return;
  StageTimer<ExecSpace> st(fc.space, "kspecter::extract::finish", fc.times);
  int const nwave = fc.shape.nwave;
  Kokkos::parallel_for("kspecter::extract::finish_quality",
                       Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long>>(
                           fc.space, 0, long(s1 - done->quality) * nwave),
                       FinishQuality<ExecSpace>{ws.ivar, ws.chi2, ws.pixmask, ws.failed, ws.mask,
                                                fc.opt.bad2dfit_chi2, done->quality, nwave});
  done->quality = s1;
}

}  // namespace kspecter::extract::detail
