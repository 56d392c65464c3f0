#include <kspecter/extract/truth_pulls.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace kspecter::extract {

namespace {

// Where each wavelength of the frame falls on the truth's grid, the same for every spectrum
// of a frame (so found once, not once a spectrum: a binary search per bin and spectrum was
// most of a full frame's report): the truth's index `hi` at or above it, and how to
// interpolate.
struct TruthGrid {
  enum Kind : unsigned char { outside, exact, between };
  std::vector<std::size_t> hi;
  std::vector<double> a;  // weight of hi (between)
  std::vector<Kind> kind;
};

TruthGrid truth_grid(std::vector<double> const& frame_wave, std::vector<double> const& tw) {
  std::size_t const nw = frame_wave.size();
  TruthGrid g{std::vector<std::size_t>(nw, 0), std::vector<double>(nw, 0.0),
              std::vector<TruthGrid::Kind>(nw, TruthGrid::outside)};
  for (std::size_t j = 0; j < nw; ++j) {
    double const w = frame_wave[j];
    auto it = std::lower_bound(tw.begin(), tw.end(), w);
    if (it == tw.end()) continue;
    std::size_t const hi = static_cast<std::size_t>(it - tw.begin());
    g.hi[j] = hi;
    if (*it == w) {
      g.kind[j] = TruthGrid::exact;
    } else if (hi > 0) {
      g.kind[j] = TruthGrid::between;
      g.a[j] = (w - tw[hi - 1]) / (tw[hi] - tw[hi - 1]);
    }
  }
  return g;
}

// R·truth of spectrum i into `out` (NaN where R's row leaves the grid); `t` is scratch.
void convolve(FrameResult const& fr, int i, TruthGrid const& g, double const* tf,
              std::vector<double>& t, std::vector<double>& out) {
  int const nw = fr.nwave, nd = fr.ndiag, nk = 2 * nd + 1;
  // Truth on the frame grid (linear interpolation; NaN outside the truth's range).
  t.assign(std::size_t(nw), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t j = 0; j < std::size_t(nw); ++j) {
    std::size_t const hi = g.hi[j];
    if (g.kind[j] == TruthGrid::exact) {
      t[j] = tf[hi];
    } else if (g.kind[j] == TruthGrid::between) {
      double const a = g.a[j];
      t[j] = (1 - a) * tf[hi - 1] + a * tf[hi];
    }
  }
  out.assign(std::size_t(nw), std::numeric_limits<double>::quiet_NaN());
  double const* res = fr.resolution.data() + std::size_t(i) * nk * nw;
  for (int r = 0; r < nw; ++r) {
    // R[r][j] = res[k][j] with j = r + nd - k; a row is complete when every j is on the grid.
    if (r - nd < 0 || r + nd >= nw) continue;
    double s = 0;
    for (int k = 0; k < nk; ++k) {
      int const j = r + nd - k;
      s += res[std::size_t(k) * nw + j] * t[j];
    }
    out[r] = s;
  }
}

}  // namespace

std::vector<double> convolve_truth(FrameResult const& fr, int i, std::vector<double> const& tw,
                                   std::vector<double> const& tf) {
  std::vector<double> t, out;
  convolve(fr, i, truth_grid(fr.wavelength, tw), tf.data(), t, out);
  return out;
}

PullStats truth_pulls(FrameResult const& fr, std::vector<double> const& tw,
                      std::vector<double> const& tf, int tspecmin, int tnspec) {
  std::vector<double> pulls, t, rt;
  std::size_t const ntw = tw.size();
  TruthGrid const grid = truth_grid(fr.wavelength, tw);
  for (int i = 0; i < fr.nspec; ++i) {
    int const spec = fr.specmin + i;
    if (spec < tspecmin || spec >= tspecmin + tnspec) continue;
    convolve(fr, i, grid, tf.data() + std::size_t(spec - tspecmin) * ntw, t, rt);
    for (int j = 0; j < fr.nwave; ++j) {
      double const iv = fr.ivar[std::size_t(i) * fr.nwave + j];
      if (!(iv > 0) || !std::isfinite(rt[j])) continue;
      pulls.push_back((fr.flux[std::size_t(i) * fr.nwave + j] - rt[j]) * std::sqrt(iv));
    }
  }
  PullStats s;
  s.n = static_cast<long long>(pulls.size());
  if (pulls.empty()) return s;
  double sum = 0, sum2 = 0;
  for (double p : pulls) {
    sum += p;
    sum2 += p * p;
    s.max_abs = std::max(s.max_abs, std::abs(p));
  }
  s.mean = sum / s.n;
  s.std = std::sqrt(std::max(0.0, sum2 / s.n - s.mean * s.mean));
  auto median = [](std::vector<double> v) {
    auto mid = v.begin() + v.size() / 2;
    std::nth_element(v.begin(), mid, v.end());
    return *mid;
  };
  s.median = median(pulls);
  for (double& p : pulls) p = std::abs(p - s.median);
  s.robust_std = 1.4826 * median(pulls);
  return s;
}

}  // namespace kspecter::extract
