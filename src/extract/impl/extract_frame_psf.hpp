// extract_frame with the spots of a GaussHermite PSF (psf::compute_spots) for one execution
// space: a spot provider over the PSF's device copy, then the spot-provider form. Included by
// the per-backend instantiation files (extract_frame_psf_backend.cpp.in).
#pragma once

#include "../out_of_memory.hpp"

#include <kspecter/core/error.hpp>
#include <kspecter/core/profiling.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/psf/spots.hpp>

#include <memory>

namespace kspecter::extract {

namespace detail {
// A PSF's tables on the device, with the PSF they were made from (ExtractHooks::psf_tables).
template <class Mem>
struct KeptPsf {
  psf::GaussHermitePsf const* source = nullptr;
  psf::DevicePsf<Mem> tables;
};
}  // namespace detail

template <class ExecSpace>
FrameResult extract_frame(ExecSpace const& space, psf::GaussHermitePsf const& psf,
                          ImageView<typename ExecSpace::memory_space> image,
                          ImageView<typename ExecSpace::memory_space> ivar,
                          ExtractOptions const& opt, StageTimes* times, ExtractHooks const& hooks) {
  using mem = typename ExecSpace::memory_space;
  // The tables a caller kept (ExtractHooks::psf_tables) when they are this PSF's, else new.
  std::shared_ptr<detail::KeptPsf<mem>> kept;
  if (hooks.psf_tables) kept = hooks.psf_tables->take<detail::KeptPsf<mem>>();
  if (!kept || kept->source != &psf) {
    kept = std::make_shared<detail::KeptPsf<mem>>();
    kept->source = &psf;
    try {
      StageTimer<ExecSpace> st(space, "kspecter::extract::psf", times);  // the PSF's tables up
      kept->tables = psf::to_device(space, psf);
    } catch (std::exception const& e) {
      if (!detail::is_out_of_memory(e)) throw;
      throw Error("extract: out of device memory for the PSF's coefficients: " +
                  detail::failure_text(e));
    }
  }
  psf::DevicePsf<mem> const& dpsf = kept->tables;
  // The padded grid reaches wavepad bins below wmin and wavepad + nwavestep above wmax: the
  // provider extrapolates there (extract_frame checks that the output grid is inside the PSF).
  SpotProvider<mem> const provider = psf_spot_provider(space, psf, dpsf);
  FrameResult res =
      extract_frame(space, provider, spot_geometry(psf), image, ivar, opt, times, hooks);
  if (hooks.psf_tables) hooks.psf_tables->keep(kept, 0);
  return res;
}

}  // namespace kspecter::extract
