// Outlier rejection against the model (docs/algorithm.md §9): cosmic-ray hits and other pixels
// that the preproc mask missed are found by their residual from the extracted frame's model,
// given weight 0, and the frame is extracted again. Off unless ExtractOptions::reject_sigma > 0.
#pragma once

#include <kspecter/extract/backend.hpp>
#include <kspecter/extract/frame.hpp>
#include <kspecter/extract/options.hpp>
#include <kspecter/psf/gauss_hermite_psf.hpp>

#include <cstddef>
#include <functional>
#include <vector>

namespace kspecter::extract {

/// Where a frame's spectra lie on the CCD: for each spectrum, its trace's column at every CCD
/// row whose pixels its bins model fully (a spot's half height inside the grid's ends).
class TraceRows {
 public:
  /// Spectra [specmin, specmin + nspec) of `psf` on the grid `wave`.
  TraceRows(psf::GaussHermitePsf const& psf, int specmin, int nspec,
            std::vector<double> const& wave);
  /// The spectrum (0-based in the frame) whose trace is nearest to pixel (y, x) and at most
  /// hsizex columns from it on a row it models fully; -1 when there is none.
  int spectrum_at(int y, int x) const;
  /// Spectra it holds.
  int nspec() const { return int(traces_.size()); }
  /// A box that holds every pixel spectrum_at finds: rows [row_begin, row_end), columns
  /// [col_begin, col_end) (unclipped; empty when there is no trace).
  int row_begin() const { return row0_; }
  int row_end() const { return row1_; }
  int col_begin() const { return col0_; }
  int col_end() const { return col1_; }

 private:
  struct Trace {
    int row0 = 0;           // first row modelled fully
    std::vector<double> x;  // the trace's column on rows row0, row0 + 1, ...
  };
  std::vector<Trace> traces_;
  double reach_ = 0;  // hsizex: columns from the trace that a spot covers
  int row0_ = 0, row1_ = 0, col0_ = 0, col1_ = 0;
};

/// The pixels one pass rejects.
struct Outliers {
  std::vector<std::size_t> pixels;  // y * nx + x, each once
  std::vector<int> per_spectrum;    // [nspec]: how many lie on each spectrum's trace
};

/// The pixels of weight > 0 on a spectrum's trace (TraceRows) that lie above the model by
/// more than `sigma` times their error, r = (image - model) sqrt(w / (1 + w (psferr model)^2))
/// > sigma (chi2pix's variance), and above the median r of their 8 neighbours by sigma too
/// (a hit is sharper than the PSF; the model's own misfit is as smooth as a spot); and, grown
/// from them, their 8-neighbours with r > sigma / 2: the wings of a cosmic-ray track. Only an
/// excess counts: a hit adds charge, and the bins it biased make the model too high around it.
/// Arrays are [ny][nx]; `weight` is 0 where a pixel is unused.
Outliers find_outliers(std::vector<double> const& image, std::vector<double> const& weight,
                       std::vector<double> const& model, int ny, int nx, double psferr,
                       double sigma, TraceRows const& traces);

/// One extraction of the frame with the pixel weights `weights` and options `opt` (the
/// caller's backend, PSF, image, kept buffers and hooks).
using ExtractWith =
    std::function<FrameResult(ImageArray const& weights, ExtractOptions const& opt)>;

/// The frame extracted by `extract` with `ivar`; when opt.reject_sigma > 0, extracted again
/// with the outliers of the last extraction's model (find_outliers over all of `ivar`'s
/// pixels) at weight 0, until the outliers of a model are those its extraction left out, or
/// opt.reject_iter extractions again have run. Each pass judges every pixel afresh: the bins
/// a hit biased ring around it, and the first model puts good pixels above it too. The result
/// is the last extraction's, with `rejected` (the pixels it left out, per spectrum),
/// `reject_passes`, and COSMIC on every bin whose footprint lost a pixel (its
/// pixmask_fraction grew); its model only when opt.model. `image` and `ivar` are the caller's
/// arrays (backend.hpp).
FrameResult extract_rejecting(ExtractWith const& extract, psf::GaussHermitePsf const& psf,
                              ImageArray const& image, ImageArray const& ivar,
                              ExtractOptions const& opt);

}  // namespace kspecter::extract
