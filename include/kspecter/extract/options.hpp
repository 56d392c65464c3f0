// Settings of one frame extraction, with the meanings and defaults of gpu_specter's `spex`
// (docs/algorithm.md §3-6), and apart from them the hooks of a caller that watches it.
#pragma once

#include <kspecter/core/wavelength_grid.hpp>
#include <kspecter/extract/kept_buffers.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace kspecter::extract {

struct FrameOutputs;  // frame.hpp

/// What an extraction computes: every number of the frame follows from these and the inputs.
/// A default-constructed ExtractOptions holds the defaults of `kspecter extract` (but for the
/// grid, which the CLI takes from the PSF unless given).
struct ExtractOptions {
  // ---- what to extract
  int specmin = 0;  // first spectrum (row of the PSF, 0-based)
  int nspec = -1;   // number of spectra; -1: every fiber of the PSF from specmin on (other
                    // negative values are refused)
  double wmin = 0;  // wavelength grid arange(wmin, wmax + dw/2, dw), Angstrom (the CLI's
  double wmax = 0;  //   default: the PSF's range, parallel/frame_setup.cpp)
  double dw = 0.8;
  /// How far (Angstrom) the grid may reach beyond the PSF's range, where its Legendre series
  /// are extrapolated as desispec does: half a step for the PSF's own WAVEMIN..WAVEMAX at
  /// 0.8 A (numpy.arange), plus the shift of a barycentric correction (up to ~1e-4 x wmax).
  double range_margin = 0;

  // ---- patches (§3)
  int bundlesize = 25;  // fibers per bundle; bundles start at PSF fiber 0
  int nsubbundles = 5;  // a bundle is cut into nsubbundles groups of bundlesize/nsubbundles
  int nwavestep = 50;   // core wavelength bins per patch
  int wavepad = 10;     // wavelength padding; effective pad = wavepad + int(wavepad * wavepad_frac)
  double wavepad_frac = 0.2;
  double pixpad_frac = 0.8;  // fraction of the extra pixel rows of the wavelength padding kept

  // ---- solve (§4-5)
  double regularize = 0;        // alpha of the bins with enough light (gpu_specter --regularize)
  double psferr = -1;           // model error for chi2pix; -1: the PSF's PSFERR (0.01 when absent);
                                // other negative values are refused
  double eig_rel_clip = 1e-14;  // eigenvalue floor of the block inverse square roots, relative
  /// Factorise iCov as a band matrix in wavelength-major order and make only the core fibers'
  /// covariance blocks (solve/band.hpp; the same numbers to ~1e-14); false: the dense
  /// Cholesky and all fiber blocks of solve/batched.hpp. A batch whose band is wider than a
  /// fiber block takes the dense path either way.
  bool band_solve = true;

  // ---- outputs
  bool model = false;                 // also return the model image A f of the whole CCD
  double bad2dfit_chi2 = 0;           // BAD2DFIT where chi2pix > this (desispec's old rule;
                                      // its current one: extract/bad2dfit.hpp); <= 0: off
  double bad2dfit_median_factor = 0;  // also BAD2DFIT where chi2pix > factor x the medians of
                                      // its fiber and of its wavelength bin (0: off)

  // ---- outlier rejection (extract/reject.hpp; docs/algorithm.md §9)
  /// Pixels whose residual from the model exceeds this many sigma (with their neighbours
  /// above half as many) get weight 0, and the frame is extracted again; <= 0: off.
  double reject_sigma = 0;
  int reject_iter = 3;  // extractions again at most (each finds the outliers of the last)

  // ---- resources
  /// Device memory the batch buffers may use (bytes). Bundles are grouped into batches that
  /// fit; a bundle too big alone is cut into runs of its patches that fit, and a budget below
  /// one patch (with its bundle's spots) is a ParameterError. When an allocation fails all
  /// the same (a device shared with others), extract_frame retries with smaller batches.
  std::size_t memory_budget = std::size_t(4) << 30;
  /// Bundles per batch at most: -1, the backend's choice (one on a host backend, whose
  /// buffers then stay small and touched from bundle to bundle; as many as the budget holds
  /// on a GPU, for more blocks in flight); 0, as many as the budget holds; else that many.
  /// Batching changes no number.
  int bundles_per_batch = -1;

  /// Largest wavelength grid, padding and patch step accepted, in bins (a full DESI camera
  /// has ~2600): beyond it a grid is a typo, and its sizes would overflow.
  static constexpr int max_bins = max_wavelength_bins;

  /// Effective wavelength padding in bins: wavepad + int(wavepad * wavepad_frac).
  int effective_wavepad() const { return wavepad + static_cast<int>(wavepad * wavepad_frac); }
  /// The output wavelength grid, wavelength_grid(wmin, wmax, dw) (core/wavelength_grid.hpp);
  /// empty when that is no grid (validate() says why).
  std::vector<double> wavelengths() const;
  /// Throws ParameterError naming the first invalid setting; `nfiber` is the PSF's fiber count.
  void validate(int nfiber) const;
  /// Throws ParameterError when the output grid leaves [wavemin, wavemax], where the PSF is
  /// valid (to range_margin + 1e-6 dw).
  void validate_range(double wavemin, double wavemax) const;
  /// nspec resolved against the PSF's fiber count.
  int resolved_nspec(int nfiber) const { return nspec < 0 ? nfiber - specmin : nspec; }
};

/// What a caller of extract_frame watches or keeps besides the frame: progress and, for
/// tests, the intermediates of some patches. No hook changes a number of the frame.
struct ExtractHooks {
  static constexpr int no_patch = -1;     // debug_patch: keep none
  static constexpr int every_patch = -2;  // debug_patch: keep all (small frames only: n x n
                                          //   doubles per patch go to the host)
  /// Keep every intermediate of this patch (FrameResult::debug): an index into the frame's
  /// patch plan (patch_plan.hpp), no_patch or every_patch.
  int debug_patch = no_patch;
  /// Progress: called on the calling thread after each device batch with the bundles done so
  /// far and the bundles of the frame (logging, ETAs). Empty: nobody listens.
  std::function<void(int bundles_done, int bundles_total)> on_batch_done;
  /// Device buffers taken from the frame before and left for the next (kept_buffers.hpp);
  /// null: allocated and freed by this frame.
  KeptBuffers* buffers = nullptr;
  /// The PSF's tables on the device, kept for the next frame of the same PSF object (the
  /// extract_frame form that takes a GaussHermitePsf; Extractor); null: uploaded each frame.
  KeptBuffers* psf_tables = nullptr;
  /// The caller vouches that this frame has the PSF, options and backend of the last frame
  /// extracted with `buffers` (Extractor). Then, when the frame is one device batch, solved
  /// on a backend that forms Q whole (a host backend), and its pixel weights equal the last
  /// frame's bit for bit (compared on the device), the last frame's spots, factor, Q and
  /// resolution are used again: only y = A^T W p, the solves with the kept factor, the
  /// products with Q and the quality stage run (ExtractStats::reused_factor). Changes no
  /// number.
  bool reuse_factor = false;
  /// The frame's arrays go there (frame.hpp), in the backend's memory, and FrameResult's
  /// vectors stay empty (its grid, sizes and stats are set): a GPU's frame stays on the GPU.
  /// BAD2DFIT's median rule (ExtractOptions::bad2dfit_median_factor) and the model's float32
  /// limits then run on the backend too. Null: FrameResult's vectors. Changes no number.
  FrameOutputs const* outputs = nullptr;
  /// On a host backend, zeros of the model image's size ([ny][nx]) that the frame's model is
  /// made in (taken: moved into FrameResult::model), instead of a new vector whose zeros cost
  /// a repeat of one bundle a quarter of its time (an Extractor's last model, recycled).
  /// Ignored when it is not that size. Changes no number.
  std::vector<double>* model_buffer = nullptr;
};

}  // namespace kspecter::extract
