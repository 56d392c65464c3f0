#include <kspecter/extract/truth_pulls.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kspecter::extract {

std::vector<double> convolve_truth(FrameResult const& fr, int i, std::vector<double> const& tw,
                                   std::vector<double> const& tf) {
  int const nw = fr.nwave, nd = fr.ndiag, nk = 2 * nd + 1;
  // Truth on the frame grid (linear interpolation; NaN outside the truth's range).
  std::vector<double> t(nw, std::numeric_limits<double>::quiet_NaN());
  for (int j = 0; j < nw; ++j) {
    double const w = fr.wavelength[j];
    auto it = std::lower_bound(tw.begin(), tw.end(), w);
    if (it == tw.end()) continue;
    std::size_t const hi = static_cast<std::size_t>(it - tw.begin());
    if (*it == w) {
      t[j] = tf[hi];
    } else if (hi > 0) {
      double const a = (w - tw[hi - 1]) / (tw[hi] - tw[hi - 1]);
      t[j] = (1 - a) * tf[hi - 1] + a * tf[hi];
    }
  }
  std::vector<double> out(nw, std::numeric_limits<double>::quiet_NaN());
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
  return out;
}

PullStats truth_pulls(FrameResult const& fr, std::vector<double> const& tw,
                      std::vector<double> const& tf, int tspecmin, int tnspec) {
  std::vector<double> pulls;
  std::size_t const ntw = tw.size();
  for (int i = 0; i < fr.nspec; ++i) {
    int const spec = fr.specmin + i;
    if (spec < tspecmin || spec >= tspecmin + tnspec) continue;
    std::vector<double> const truth(tf.begin() + std::size_t(spec - tspecmin) * ntw,
                                    tf.begin() + std::size_t(spec - tspecmin + 1) * ntw);
    auto const rt = convolve_truth(fr, i, tw, truth);
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
