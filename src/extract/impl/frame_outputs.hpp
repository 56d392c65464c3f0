// The frame's arrays into the caller's memory on the backend (ExtractHooks::outputs), in place
// of the stitch's copies to the host: the steps that need the whole frame run there too,
// BAD2DFIT's median rule and the model image's float32 limits, with the host's rules and bits
// (bad2dfit.cpp, finalize.cpp).
#pragma once

#include "context.hpp"
#include "medians.hpp"
#include "workspace.hpp"

#include <kspecter/core/allocate.hpp>
#include <kspecter/extract/mask_bits.hpp>

#include <cfloat>
#include <cstdint>

namespace kspecter::extract::detail {

/// BAD2DFIT where chi2pix > factor x the median of its wavelength bin over the spectra and >
/// factor x the median of its spectrum (desispec's relative rule, chi2pix_bad2dfit).
template <class ExecSpace>
void flag_bad2dfit(FrameContext<ExecSpace> const& fc, Workspace<ExecSpace> const& ws,
                   double factor) {
  using mem = typename ExecSpace::memory_space;
  int const ns = fc.shape.nspec, nw = fc.shape.nwave;
  if (ns <= 0 || nw <= 0) return;
  auto per_wave = allocate<Kokkos::View<double*, mem>>(fc.space, "kspecter::extract::median_wave",
                                                       std::size_t(nw));
  auto per_spec = allocate<Kokkos::View<double*, mem>>(fc.space, "kspecter::extract::median_spec",
                                                       std::size_t(ns));
  Kokkos::View<const double*, mem> const chi2(ws.chi2.data(), ws.chi2.span());
  MedianMethod const method = median_method<ExecSpace>();
  medians(fc.space, StridedLists<mem>{chi2, nw, ns, 1, nw}, per_wave, method);
  medians(fc.space, StridedLists<mem>{chi2, ns, nw, nw, 1}, per_spec, method);
  auto const mask = ws.mask;
  Kokkos::parallel_for(
      "kspecter::extract::bad2dfit",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long>>(fc.space, 0, long(ns) * nw),
      KOKKOS_LAMBDA(long i) {
        int const s = int(i / nw), w = int(i % nw);
        double const c = chi2(i);
        if (c > factor * per_wave(w) && c > factor * per_spec(s)) mask(s, w) |= specmask::BAD2DFIT;
      });
  fc.space.fence();  // before the medians go
}

/// `n` values of `src` to `dst`, both in the backend's memory (nothing when `dst` is null).
template <class ExecSpace, class T>
void copy_out(ExecSpace const& space, T const* src, T* dst, std::size_t n) {
  using mem = typename ExecSpace::memory_space;
  using Flat = Kokkos::View<T*, mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  if (dst) Kokkos::deep_copy(space, Flat(dst, n), Flat(const_cast<T*>(src), n));
}

/// The model image into `dst` within float32: NaN becomes 0 and overflow +-FLT_MAX
/// (clamp_model_to_float32's rule).
template <class ExecSpace>
void model_out(
    ExecSpace const& space,
    Kokkos::View<double**, Kokkos::LayoutRight, typename ExecSpace::memory_space> const& model,
    double* dst) {
  using mem = typename ExecSpace::memory_space;
  Kokkos::View<const double*, mem> const src(model.data(), model.span());
  Kokkos::View<double*, mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>> const out(dst, model.span());
  Kokkos::parallel_for(
      "kspecter::extract::model_out",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long>>(space, 0, long(model.span())),
      KOKKOS_LAMBDA(long i) {
        double const v = src(i);
        bool const fits = compat::isfinite(v) && compat::fabs(v) <= double(FLT_MAX);
        out(i) = fits ? v : (v != v ? 0.0 : (v < 0 ? -double(FLT_MAX) : double(FLT_MAX)));
      });
}

/// The finished frame (every batch's spectra finished, finish_spectra.hpp) into `out`; the
/// result's own vectors stay empty.
template <class ExecSpace>
void write_outputs(FrameContext<ExecSpace> const& fc, Workspace<ExecSpace> const& ws,
                   FrameOutputs const& out, FrameResult& res) {
  if (fc.opt.bad2dfit_median_factor > 0) flag_bad2dfit(fc, ws, fc.opt.bad2dfit_median_factor);
  ExecSpace const& space = fc.space;
  std::size_t const spectra = std::size_t(fc.shape.nspec) * std::size_t(fc.shape.nwave);
  copy_out(space, ws.flux.data(), out.flux, spectra);
  copy_out(space, ws.ivar.data(), out.ivar, spectra);
  copy_out(space, ws.deconv.data(), out.deconvolved_flux, spectra);
  copy_out(space, ws.rdiag.data(), out.resolution, ws.rdiag.span());
  copy_out(space, ws.chi2.data(), out.chi2pix, spectra);
  copy_out(space, ws.pixmask.data(), out.pixmask_fraction, spectra);
  copy_out(space, ws.mask.data(), out.mask, spectra);
  if (fc.opt.model && out.model && ws.model.extent(0) > 0) model_out(space, ws.model, out.model);
  space.fence();
  // A host backend's frame arrays were the result's vectors: the caller has them now.
  res.flux = {}, res.ivar = {}, res.deconvolved_flux = {}, res.resolution = {};
  res.chi2pix = {}, res.pixmask_fraction = {}, res.mask = {}, res.model = {};
}

}  // namespace kspecter::extract::detail
