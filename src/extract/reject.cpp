// Outlier rejection against the model (extract/reject.hpp; docs/algorithm.md §9).
#include <kspecter/core/error.hpp>
#include <kspecter/extract/mask_bits.hpp>
#include <kspecter/extract/reject.hpp>

#include <algorithm>
#include <cmath>
#include <unordered_set>
#include <utility>

namespace kspecter::extract {

TraceRows::TraceRows(psf::GaussHermitePsf const& psf, int specmin, int nspec,
                     std::vector<double> const& wave)
    : traces_(std::size_t(std::max(0, nspec))), reach_(psf.hsizex) {
  std::size_t const nw = wave.size();
  if (nw < 2) return;
  std::vector<double> ys(nw), xs(nw);
  for (int s = 0; s < nspec; ++s) {
    for (std::size_t j = 0; j < nw; ++j) {
      ys[j] = psf.ytrace.value(specmin + s, wave[j]);
      xs[j] = psf.xtrace.value(specmin + s, wave[j]);
    }
    if (ys.front() > ys.back()) {  // rows along the trace in increasing order
      std::reverse(ys.begin(), ys.end());
      std::reverse(xs.begin(), xs.end());
    }
    // Rows a spot's half height inside the grid's ends: their light is all in the model.
    int const r0 = std::max(0, int(std::ceil(ys.front() + psf.hsizey)));
    int const r1 = std::min(psf.npix_y - 1, int(std::floor(ys.back() - psf.hsizey)));
    Trace& t = traces_[std::size_t(s)];
    t.row0 = r0;
    std::size_t j = 0;
    for (int r = r0; r <= r1; ++r) {
      while (j + 2 < nw && ys[j + 1] < r) ++j;
      double const span = ys[j + 1] - ys[j];
      double const a = span > 0 ? (r - ys[j]) / span : 0.0;
      t.x.push_back(xs[j] + a * (xs[j + 1] - xs[j]));
    }
  }
  // The box: every trace's rows, and its columns to reach_ either side (spectrum_at's test).
  bool first = true;
  for (Trace const& t : traces_) {
    if (t.x.empty()) continue;
    auto const [lo, hi] = std::minmax_element(t.x.begin(), t.x.end());
    int const r0 = t.row0, r1 = t.row0 + int(t.x.size());
    int const c0 = int(std::floor(*lo - reach_)), c1 = int(std::ceil(*hi + reach_)) + 1;
    row0_ = first ? r0 : std::min(row0_, r0);
    row1_ = first ? r1 : std::max(row1_, r1);
    col0_ = first ? c0 : std::min(col0_, c0);
    col1_ = first ? c1 : std::max(col1_, c1);
    first = false;
  }
}

int TraceRows::spectrum_at(int y, int x) const {
  int best = -1;
  double nearest = reach_;
  for (std::size_t s = 0; s < traces_.size(); ++s) {
    Trace const& t = traces_[s];
    if (y < t.row0 || y >= t.row0 + int(t.x.size())) continue;
    double const d = std::fabs(x - t.x[std::size_t(y - t.row0)]);
    if (d <= nearest) {
      nearest = d;
      best = int(s);
    }
  }
  return best;
}

namespace {

// A pixel's excess over the model in units of its total error (chi2pix's variance); 0 for a
// pixel without weight. Only an excess counts: a hit adds charge, and the bins it biased make
// the model too high around it, which must not reject their good pixels.
struct Excess {
  std::vector<double> const &image, &weight, &model;
  double psferr;
  double operator()(std::size_t i) const {
    double const w = weight[i];
    if (!(w > 0)) return 0;
    double const m = model[i];
    double const e = psferr * m + 1e-32;
    double const r = (image[i] - m) * std::sqrt(w / (1.0 + w * e * e));
    return std::isfinite(r) ? r : 0.0;
  }
};

}  // namespace

Outliers find_outliers(std::vector<double> const& image, std::vector<double> const& weight,
                       std::vector<double> const& model, int ny, int nx, double psferr,
                       double sigma, TraceRows const& traces) {
  std::size_t const npix = std::size_t(ny) * std::size_t(nx);
  if (image.size() != npix || weight.size() != npix || model.size() != npix)
    throw Error("reject: the image, weights and model must all be " + std::to_string(ny) + " x " +
                std::to_string(nx));
  Excess const excess{image, weight, model, psferr};
  double const seed_cut = sigma, grow_cut = 0.5 * sigma;
  std::unordered_set<std::size_t> taken;
  std::vector<std::size_t> todo;
  auto on_trace = [&](std::size_t i) {
    return traces.spectrum_at(int(i / std::size_t(nx)), int(i % std::size_t(nx))) >= 0;
  };
  // A seed stands above its 8 neighbours' median by the cut, too: a hit is sharper than the
  // PSF, while the model's own misfit (the ringing of a biased bin, a bright line's PSF
  // error) is as smooth as a spot and lifts the neighbours alike.
  auto sharp = [&](std::size_t i, double r) {
    int const y = int(i / std::size_t(nx)), x = int(i % std::size_t(nx));
    double around[8];
    int n = 0;
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        int const yy = y + dy, xx = x + dx;
        if ((dy != 0 || dx != 0) && yy >= 0 && yy < ny && xx >= 0 && xx < nx)
          around[n++] = excess(std::size_t(yy) * std::size_t(nx) + std::size_t(xx));
      }
    std::nth_element(around, around + n / 2, around + n);
    return r - around[n / 2] > seed_cut;
  };
  // Seeds are on a trace: only the traces' box is searched.
  int const y0 = std::max(0, traces.row_begin()), y1 = std::min(ny, traces.row_end());
  int const x0 = std::max(0, traces.col_begin()), x1 = std::min(nx, traces.col_end());
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      std::size_t const i = std::size_t(y) * std::size_t(nx) + std::size_t(x);
      double const r = excess(i);
      if (r > seed_cut && sharp(i, r) && on_trace(i) && taken.insert(i).second) todo.push_back(i);
    }
  // The track's wings: neighbours above half the cut, grown from the seeds until none is left.
  while (!todo.empty()) {
    std::size_t const i = todo.back();
    todo.pop_back();
    int const y = int(i / std::size_t(nx)), x = int(i % std::size_t(nx));
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        int const yy = y + dy, xx = x + dx;
        if ((dy == 0 && dx == 0) || yy < 0 || yy >= ny || xx < 0 || xx >= nx) continue;
        std::size_t const q = std::size_t(yy) * std::size_t(nx) + std::size_t(xx);
        if (!taken.count(q) && excess(q) > grow_cut && on_trace(q)) {
          taken.insert(q);
          todo.push_back(q);
        }
      }
  }
  Outliers out;
  out.pixels.assign(taken.begin(), taken.end());
  std::sort(out.pixels.begin(), out.pixels.end());
  out.per_spectrum.assign(std::size_t(traces.nspec()), 0);
  for (std::size_t i : out.pixels)
    ++out.per_spectrum[std::size_t(
        traces.spectrum_at(int(i / std::size_t(nx)), int(i % std::size_t(nx))))];
  return out;
}

namespace {

// The caller's inverse variance as the extraction weighs pixels: 0 where it is <= 0 or not
// finite, or where the image is not finite.
std::vector<double> usable_weights(std::vector<double> const& image, ImageArray const& ivar) {
  std::vector<double> w = host_copy(ivar);
  for (std::size_t i = 0; i < w.size(); ++i)
    if (!(w[i] > 0 && std::isfinite(w[i]) && std::isfinite(image[i]))) w[i] = 0;
  return w;
}

}  // namespace

FrameResult extract_rejecting(ExtractWith const& extract, psf::GaussHermitePsf const& psf,
                              ImageArray const& image, ImageArray const& ivar,
                              ExtractOptions const& opt) {
  if (!(opt.reject_sigma > 0)) return extract(ivar, opt);
  ExtractOptions o = opt;
  o.model = true;  // the residuals need it
  FrameResult res = extract(ivar, o);
  std::vector<double> const pixmask0 = res.pixmask_fraction;
  std::vector<double> const img = host_copy(image);
  std::vector<double> const weight0 = usable_weights(img, ivar);
  TraceRows const traces(psf, res.specmin, res.nspec, res.wavelength);
  double const psferr = opt.psferr >= 0 ? opt.psferr : psf.psferr;
  // Each pass judges every pixel afresh against the last model: a hit biases its bins, and
  // the solution rings around them, so the first model also puts good pixels above it; the
  // next, made without the hit, takes them back (docs/algorithm.md §9).
  Outliers kept;  // the outliers the last extraction left out
  kept.per_spectrum.assign(std::size_t(res.nspec), 0);
  int passes = 0;
  std::vector<double> weight;  // one buffer for every pass: its pages are touched once
  while (passes < opt.reject_iter) {
    Outliers out = find_outliers(img, weight0, res.model, image.ny, image.nx, psferr,
                                 opt.reject_sigma, traces);
    if (out.pixels == kept.pixels) break;  // the last model's outliers are those it left out
    weight.assign(weight0.begin(), weight0.end());
    for (std::size_t i : out.pixels) weight[i] = 0;
    res = extract(ImageArray::host(weight.data(), image.ny, image.nx), o);
    kept = std::move(out);
    ++passes;
  }
  for (std::size_t k = 0; k < res.mask.size(); ++k)
    if (res.pixmask_fraction[k] > pixmask0[k]) res.mask[k] |= specmask::COSMIC;
  res.rejected = std::move(kept.per_spectrum);
  res.reject_passes = passes;
  if (!opt.model) {
    res.model = {};
    res.model_nx = res.model_ny = 0;
  }
  return res;
}

}  // namespace kspecter::extract
