// Extraction of one frame (docs/algorithm.md §3-6): a preprocessed CCD image and its inverse
// variance on the device in, spectra with their inverse variance, resolution data and quality
// arrays out. No file I/O: io/ reads the inputs and writes the FrameResult.
#pragma once

#include <kspecter/core/profiling.hpp>
#include <kspecter/extract/options.hpp>
#include <kspecter/extract/patch_plan.hpp>
#include <kspecter/psf/gauss_hermite_psf.hpp>
#include <kspecter/psf/spots.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

namespace kspecter::extract {

/// CCD image or inverse variance, [ny][nx] (rows, columns), in the execution space's memory.
template <class MemorySpace>
using ImageView = Kokkos::View<const double**, Kokkos::LayoutRight, MemorySpace>;

/// Work done, for flop counts and checks (every number is exact, counted by the kernels).
struct ExtractStats {
  int npatch = 0;               // patches solved
  int nbatch = 0;               // device batches
  int nbatch_band = 0;          // of those, solved on the band path (ExtractOptions::band_solve)
  int nfailed = 0;              // patches whose Cholesky failed (all their bins got ivar = 0)
  int n = 0;                    // unknowns per patch matrix (fiber slots x padded bins)
  int block = 0;                // bins per fiber block (padded bins)
  long long nspots = 0;         // spots evaluated
  long long assembly_macs = 0;  // pixel products summed into iCov, y and fluxweight
  long long quality_macs = 0;   // pixel products of model, chi2pix and pixmask_fraction
  std::size_t peak_device_bytes = 0;  // largest device memory held by extract_frame at once
  bool reused_factor = false;  // the last frame's factor and Q served (ExtractHooks::reuse_factor)
  int nreworked = 0;           // of those, patches assembled and factorised again: their
                               //   weights differed from the last frame's
};

/// Every intermediate of one patch (ExtractHooks::debug_patch), for tests.
struct PatchDebug {
  Patch patch;                         // its plan entry
  int x0 = 0, x1 = 0, y0 = 0, y1 = 0;  // pixel window: columns [x0, x1), rows [y0, y1)
  int n = 0, nslots = 0, m = 0;        // unknowns, fiber slots, bins per fiber
  std::vector<double> icov;            // [n][n] A^T W A + prior (what the Cholesky factorises)
  std::vector<double> y;               // [n] A^T W p
  std::vector<double> fluxweight;      // [n] A^T W 1
  std::vector<double> deconvolved;     // [n] iCov^-1 y
  std::vector<double> q;               // [ncore_slots][m][m] Q of the core fibers
  int info = 0;                        // Cholesky status
};

/// The extracted frame, on the host. Spectra are the requested PSF rows
/// [specmin, specmin + nspec); bins follow `wavelength`.
struct FrameResult {
  int specmin = 0, nspec = 0, nwave = 0;
  int ndiag = 0;                         // resolution diagonals: 2 ndiag + 1 (ndiag = HSIZEY)
  std::vector<double> wavelength;        // [nwave], Angstrom
  std::vector<double> flux;              // [nspec][nwave], electron / Angstrom (R f / dw)
  std::vector<double> ivar;              // [nspec][nwave], (electron / Angstrom)^-2 (s^2 dw^2)
  std::vector<double> resolution;        // [nspec][2 ndiag + 1][nwave], dia_matrix data:
                                         //   resolution[i][k][j] = R_ii[j - ndiag + k][j]
  std::vector<double> chi2pix;           // [nspec][nwave]
  std::vector<double> pixmask_fraction;  // [nspec][nwave]
  std::vector<std::uint32_t> mask;       // [nspec][nwave], specmask bits (mask_bits.hpp):
                                         //   ivar == 0: SOMEBADPIX; pixmask_fraction > 0.5:
                                         //   SOMEBADPIX; pixmask_fraction == 1: ALLBADPIX;
                                         //   chi2pix over threshold, failed patch or numbers
                                         //   beyond float32: BAD2DFIT; a pixel rejected
                                         //   in the bin's footprint (reject.hpp): COSMIC
  std::vector<double> deconvolved_flux;  // [nspec][nwave], f / dw: the unconvolved solution
  int model_nx = 0, model_ny = 0;
  std::vector<double> model;  // [ny][nx], electrons: sum over kept bins with ivar > 0
                              //   of spot x f (empty unless ExtractOptions::model)
  // The model is zero outside columns [model_x0, model_x1) (extract_frame narrows them on a
  // host backend; by default: anywhere).
  int model_x0 = 0, model_x1 = std::numeric_limits<int>::max();
  std::vector<int> rejected;  // [nspec] pixels rejected against the model (reject.hpp) on
                              //   each spectrum's trace; empty unless reject_sigma > 0
  int reject_passes = 0;      // extractions after the first (outlier rejection)
  ExtractStats stats;
  std::vector<PatchDebug> debug;  // the debug patches asked for, in plan order
};

/// A frame's arrays in memory the caller owns, in the backend's memory space (on a GPU its
/// device memory: cupy arrays), written instead of FrameResult's vectors
/// (ExtractHooks::outputs). Each is row-major, with the size and meaning of FrameResult's
/// array of the same name; a null one is not written.
struct FrameOutputs {
  double* flux = nullptr;
  double* ivar = nullptr;
  double* resolution = nullptr;
  double* chi2pix = nullptr;
  double* pixmask_fraction = nullptr;
  std::uint32_t* mask = nullptr;
  double* deconvolved_flux = nullptr;
  double* model = nullptr;  // read only when ExtractOptions::model is on
};

/// Fills `out` with the spots of PSF rows [fiber_begin, fiber_begin + nfiber) at the given
/// wavelengths (psf::compute_spots, or a test's own spots). The padded grid reaches beyond
/// the requested range, so a provider must extrapolate there rather than throw.
template <class MemorySpace>
using SpotProvider = std::function<void(int fiber_begin, int nfiber,
                                        Kokkos::View<const double*, MemorySpace> wavelengths,
                                        psf::Spots<MemorySpace>& out)>;

/// The spots of a GaussHermite PSF whose tables are on the device (psf::to_device). The padded
/// grid reaches beyond the requested range, so the Legendre series are extrapolated there.
/// `space`, `psf` and `dpsf` must outlive the provider.
template <class ExecSpace>
SpotProvider<typename ExecSpace::memory_space> psf_spot_provider(
    ExecSpace const& space, psf::GaussHermitePsf const& psf,
    psf::DevicePsf<typename ExecSpace::memory_space> const& dpsf) {
  using mem = typename ExecSpace::memory_space;
  return [&space, &psf, &dpsf](int fiber_begin, int nfiber, Kokkos::View<const double*, mem> wave,
                               psf::Spots<mem>& out) {
    psf::compute_spots(space, psf, dpsf, fiber_begin, nfiber, wave, out, true);
  };
}

/// What extract_frame needs to know of the PSF besides its spots.
struct SpotGeometry {
  int nfiber = 0;                   // PSF rows
  int npix_x = 0, npix_y = 0;       // CCD columns, rows the PSF describes
  int hsizex = 0, hsizey = 0;       // spot half sizes
  double wavemin = 0, wavemax = 0;  // range where the PSF is valid (the output grid must fit)
  double psferr = 0.01;             // default model error (ExtractOptions::psferr < 0)
};

/// Extracts a frame from spots given by `spots`. `image` and `ivar` are [ny][nx] with
/// ny = geometry.npix_y and nx = geometry.npix_x; pixels whose ivar is <= 0 or not finite, or
/// whose image value is not finite, are ignored (weight 0). Stage times are added to `times`
/// under kspecter::extract::{setup, spots, windows, assembly, factorisation, covariance,
/// decorrelation, finish, quality, stitch, release} (each a fenced profiling region; windows
/// includes the pixel weights; the PSF form adds psf, its tables' upload). `hooks` report
/// progress, keep debug patches and keep device buffers for the next frame (options.hpp);
/// they change no number.
/// Throws ParameterError for invalid options, a size mismatch, a wavelength range outside
/// the PSF or a memory budget below one patch. When an allocation fails (a std::bad_alloc:
/// kspecter::OutOfMemory from core/allocate.hpp, or operator new), it starts again with
/// batches half as big, which
/// changes no number, and throws Error saying what did not fit once one patch per batch
/// fails too. Bins whose numbers do not fit a float32 frame (pixels near the float limit)
/// come out like those of a failed patch: ivar = 0, BAD2DFIT, identity resolution.
template <class ExecSpace>
FrameResult extract_frame(ExecSpace const& space,
                          SpotProvider<typename ExecSpace::memory_space> const& spots,
                          SpotGeometry const& geometry,
                          ImageView<typename ExecSpace::memory_space> image,
                          ImageView<typename ExecSpace::memory_space> ivar,
                          ExtractOptions const& opt, StageTimes* times = nullptr,
                          ExtractHooks const& hooks = {});

/// Extracts a frame with the spots of a GaussHermite PSF (psf::compute_spots).
template <class ExecSpace>
FrameResult extract_frame(ExecSpace const& space, psf::GaussHermitePsf const& psf,
                          ImageView<typename ExecSpace::memory_space> image,
                          ImageView<typename ExecSpace::memory_space> ivar,
                          ExtractOptions const& opt, StageTimes* times = nullptr,
                          ExtractHooks const& hooks = {});

/// The geometry of a GaussHermite PSF.
SpotGeometry spot_geometry(psf::GaussHermitePsf const& psf);

}  // namespace kspecter::extract
