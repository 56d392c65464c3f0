// A frame extraction kept warm for many calls with one PSF, grid and set of options: the
// PSF's tables and the device buffers stay on the backend from one call to the next, and
// only the image and its weights change (docs/architecture.md, "The warm extractor").
#pragma once

#include <kspecter/core/profiling.hpp>
#include <kspecter/extract/backend.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/extract/options.hpp>
#include <kspecter/psf/gauss_hermite_psf.hpp>

#include <memory>
#include <string>
#include <vector>

namespace kspecter::extract {

/// Sets `opt`'s grid to the PSF's own WAVEMIN..WAVEMAX at 0.8 A, with desispec's margin past
/// the PSF's range (the CLI's default -w; parallel/frame_setup.cpp applies the same rule).
void use_psf_grid(ExtractOptions& opt, psf::GaussHermitePsf const& psf);

/// Repeated extractions of frames that share a PSF, grid and options (an iterative correction
/// of one exposure, noise realisations, outlier rejection). Each call gives, bit for bit, the
/// frame of the extraction job (the CLI's and Python's extract_frame): extract_frame(backend,
/// *psf, image, ivar, opt) of backend.hpp, with outlier rejection (reject.hpp) and desispec's
/// BAD2DFIT (bad2dfit.hpp); its model image goes to model(). When a call's weights equal the
/// last call's, a frame of one device batch reuses the last factor, Q and resolution
/// (ExtractHooks::reuse_factor); the bits are the same. On a GPU the memory budget is raised
/// to hold the frame in one batch when that takes at most half the device's memory (then
/// options() says so); device memory is that batch's, plus the kept weight strip. Not
/// thread-safe; one per thread that extracts.
class Extractor {
 public:
  /// Throws ParameterError for a backend this build lacks or options that do not fit the PSF
  /// (their grid must be set: use_psf_grid for the PSF's own).
  Extractor(std::string backend, std::shared_ptr<psf::GaussHermitePsf const> psf,
            ExtractOptions opt);
  ~Extractor();
  Extractor(Extractor&&) noexcept;
  Extractor& operator=(Extractor&&) noexcept;

  /// Extracts a frame from `image` and `ivar` (the arrays of backend.hpp, [npix_y][npix_x] of
  /// the PSF). Its model is not in the result but in model(). Stage times go to `times`.
  FrameResult extract(ImageArray const& image, ImageArray const& ivar, StageTimes* times = nullptr);

  /// The same frame, bit for bit, into `out` (frame.hpp), caller-owned memory of the backend:
  /// on a GPU the frame stays there, and BAD2DFIT's medians and the model's float32 limits are
  /// taken there. The result holds the grid, sizes, stats and rejection counts, its arrays
  /// empty; out.model gets the model image, and model() is null after it. `out` needs every
  /// array but deconvolved_flux.
  FrameResult extract(ImageArray const& image, ImageArray const& ivar, FrameOutputs const& out,
                      StageTimes* times = nullptr);

  /// The model image of the last extraction, [model_ny()][model_nx()] electrons (null before
  /// the first). Shared: the next extraction makes a new one and leaves this one as it is.
  std::shared_ptr<std::vector<double> const> model() const;
  int model_nx() const;
  int model_ny() const;

  /// The sizes of its frames: spectra, bins and resolution half width (FrameResult's), and
  /// the CCD's rows and columns (the model image's).
  struct Sizes {
    int nspec = 0, nwave = 0, ndiag = 0, ny = 0, nx = 0;
  };
  Sizes sizes() const;

  /// Frees the device memory it keeps; the next call allocates it again.
  void release();

  /// The backend it runs on, by the backend list's name ("auto" resolved).
  std::string const& backend() const;
  ExtractOptions const& options() const;
  psf::GaussHermitePsf const& psf() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kspecter::extract
