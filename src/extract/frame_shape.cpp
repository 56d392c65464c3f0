#include "host_steps.hpp"

#include <kspecter/core/error.hpp>

#include <algorithm>
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

}  // namespace kspecter::extract

namespace kspecter::extract::detail {

void check_image_shapes(SpotGeometry const& geom, std::size_t image_ny, std::size_t image_nx,
                        std::size_t ivar_ny, std::size_t ivar_nx) {
  if (static_cast<int>(image_ny) != geom.npix_y || static_cast<int>(image_nx) != geom.npix_x)
    throw ParameterError("extract: the image is " + std::to_string(image_nx) + " x " +
                         std::to_string(image_ny) + " (columns x rows) but the PSF describes " +
                         std::to_string(geom.npix_x) + " x " + std::to_string(geom.npix_y));
  if (ivar_ny != image_ny || ivar_nx != image_nx)
    throw ParameterError("extract: the inverse variance is " + std::to_string(ivar_nx) + " x " +
                         std::to_string(ivar_ny) + ", the image " + std::to_string(image_nx) +
                         " x " + std::to_string(image_ny));
}

FrameShape frame_shape(PatchPlan const& plan, SpotGeometry const& geom) {
  FrameShape s;
  s.nspec = plan.nspec;
  s.nwave = plan.nwave;
  s.n = plan.n;
  s.m = plan.nwave_pad;
  s.nslots = plan.nfiber_slots;
  s.ncs = plan.ncore_slots;
  s.ndiag = geom.hsizey;
  s.sny = 2 * geom.hsizey + 1;
  s.snx = 2 * geom.hsizex + 1;
  s.npy = geom.npix_y;
  s.npx = geom.npix_x;
  s.nfull = static_cast<int>(plan.full_wave.size());
  for (auto const& b : plan.batches) s.pmax = std::max(s.pmax, b.patch_end - b.patch_begin);
  return s;
}

FrameResult start_result(PatchPlan const& plan, FrameShape const& shape) {
  FrameResult res;
  res.specmin = plan.specmin;
  res.nspec = shape.nspec;
  res.nwave = shape.nwave;
  res.ndiag = shape.ndiag;
  res.wavelength = plan.wave;
  res.stats.n = shape.n;
  res.stats.block = shape.m;
  res.stats.npatch = static_cast<int>(plan.patches.size());
  res.stats.nbatch = static_cast<int>(plan.batches.size());
  return res;
}

}  // namespace kspecter::extract::detail
