// extract_frame with the spots of a GaussHermite PSF, for every backend of the build. Kept
// apart from the spot-provider form so that the latter links without psf/.
#include "out_of_memory.hpp"

#include <kspecter/extract/frame.hpp>
#include <kspecter/psf/spots.hpp>

#include <string>

namespace kspecter::extract {

SpotGeometry spot_geometry(psf::GaussHermitePsf const& psf) {
  SpotGeometry g;
  g.nfiber = psf.nfiber;
  g.npix_x = psf.npix_x;
  g.npix_y = psf.npix_y;
  g.hsizex = psf.hsizex;
  g.hsizey = psf.hsizey;
  g.wavemin = psf.wavemin();
  g.wavemax = psf.wavemax();
  g.psferr = psf.psferr;
  return g;
}

template <class ExecSpace>
FrameResult extract_frame(ExecSpace const& space, psf::GaussHermitePsf const& psf,
                          ImageView<typename ExecSpace::memory_space> image,
                          ImageView<typename ExecSpace::memory_space> ivar,
                          ExtractOptions const& opt, StageTimes* times) {
  using mem = typename ExecSpace::memory_space;
  psf::DevicePsf<mem> dpsf;
  try {
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
  return extract_frame(space, provider, spot_geometry(psf), image, ivar, opt, times);
}

#define KSPECTER_EXTRACT_PSF_INSTANTIATE(SPACE)                                  \
  template FrameResult extract_frame<SPACE>(                                     \
      SPACE const&, psf::GaussHermitePsf const&, ImageView<SPACE::memory_space>, \
      ImageView<SPACE::memory_space>, ExtractOptions const&, StageTimes*);
#if defined(KOKKOS_ENABLE_SERIAL)
KSPECTER_EXTRACT_PSF_INSTANTIATE(Kokkos::Serial)
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
KSPECTER_EXTRACT_PSF_INSTANTIATE(Kokkos::OpenMP)
#endif
#if defined(KOKKOS_ENABLE_CUDA)
KSPECTER_EXTRACT_PSF_INSTANTIATE(Kokkos::Cuda)
#endif

}  // namespace kspecter::extract
