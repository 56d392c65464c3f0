// extract_frame with the spots of a GaussHermite PSF (psf::compute_spots) for one execution
// space: a spot provider over the PSF's device copy, then the spot-provider form. Included by
// the per-backend instantiation files (extract_frame_psf_backend.cpp.in).
#pragma once

#include "../out_of_memory.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/core/profiling.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/psf/spots.hpp>

namespace kspecter::extract {

template <class ExecSpace>
FrameResult extract_frame(ExecSpace const& space, psf::GaussHermitePsf const& psf,
                          ImageView<typename ExecSpace::memory_space> image,
                          ImageView<typename ExecSpace::memory_space> ivar,
                          ExtractOptions const& opt, StageTimes* times, ExtractHooks const& hooks) {
  using mem = typename ExecSpace::memory_space;
  psf::DevicePsf<mem> dpsf;
  try {
    StageTimer<ExecSpace> st(space, "kspecter::extract::psf", times);  // the PSF's tables up
    dpsf = psf::to_device(space, psf);
  } catch (std::exception const& e) {
    if (!detail::is_out_of_memory(e)) throw;
    throw Error("extract: out of device memory for the PSF's coefficients: " +
                detail::failure_text(e));
  }
  // The padded grid reaches wavepad bins below wmin and wavepad + nwavestep above wmax:
  // extrapolate there (extract_frame checks that the output grid itself is inside the PSF).
  SpotProvider<mem> provider = [&](int fiber_begin, int nfiber,
                                   Kokkos::View<const double*, mem> wave, psf::Spots<mem>& out) {
    psf::compute_spots(space, psf, dpsf, fiber_begin, nfiber, wave, out, true);
  };
  return extract_frame(space, provider, spot_geometry(psf), image, ivar, opt, times, hooks);
}

}  // namespace kspecter::extract
