// The host-side steps of extract_frame around the device work, compiled once for every
// backend: checking the inputs, the frame's sizes, the result's header, and the finishing
// touches once the spectra are on the host (units, float32 limits, mask bits).
#pragma once

#include <kspecter/extract/frame.hpp>
#include <kspecter/extract/options.hpp>
#include <kspecter/extract/patch_plan.hpp>

#include <cstddef>

namespace kspecter::extract::detail {

/// The sizes of a frame's extraction that every stage reads.
struct FrameShape {
  int nspec = 0, nwave = 0;  // output spectra and bins
  int n = 0, m = 0;          // unknowns per patch matrix, bins per fiber block
  int nslots = 0, ncs = 0;   // fiber slots and core-fiber slots per patch
  int ndiag = 0;             // resolution half width (HSIZEY)
  int sny = 0, snx = 0;      // spot rows, columns
  int npy = 0, npx = 0;      // CCD rows, columns
  int nfull = 0;             // bins of the padded grid
  int pmax = 0;              // patches of the largest batch
};

inline bool operator==(FrameShape const& a, FrameShape const& b) {
  return a.nspec == b.nspec && a.nwave == b.nwave && a.n == b.n && a.m == b.m &&
         a.nslots == b.nslots && a.ncs == b.ncs && a.ndiag == b.ndiag && a.sny == b.sny &&
         a.snx == b.snx && a.npy == b.npy && a.npx == b.npx && a.nfull == b.nfull &&
         a.pmax == b.pmax;
}

/// Throws ParameterError unless the image is the CCD the PSF describes and the inverse
/// variance has the image's shape (extents are rows, columns).
void check_image_shapes(SpotGeometry const& geometry, std::size_t image_ny, std::size_t image_nx,
                        std::size_t ivar_ny, std::size_t ivar_nx);

/// The sizes of the plan's extraction.
FrameShape frame_shape(PatchPlan const& plan, SpotGeometry const& geometry);

/// A result with the plan's spectra, grid and counts, and no data yet.
FrameResult start_result(PatchPlan const& plan, FrameShape const& shape);

/// Finishes a frame whose spectra are finished (units, float32, mask bits:
/// finish_spectra.hpp): the model image within float32, and BAD2DFIT's median rule.
void finalize_frame(FrameResult& res, ExtractOptions const& opt);

}  // namespace kspecter::extract::detail
